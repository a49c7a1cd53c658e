/*
 * options.h: the option tables. Each command declares its options once,
 * in one table; the parsing, the -h text, the usage line that t070 holds
 * equal to the man page's SYNOPSIS, and the shell completions all come
 * from it (the idea of git's parse-options).
 */
#ifndef MQ_OPTIONS_H
#define MQ_OPTIONS_H

#include <stdio.h>

struct mq_global;

/* What completes an option's value, or a command's operands. */
enum complete {
	COMPLETE_NONE,		/* nothing to offer (a number, a text) */
	COMPLETE_DURATION,	/* 30s, 5m, 1h30m */
	COMPLETE_QUEUE,		/* one queue name, from the server */
	COMPLETE_QUEUES,	/* a comma-separated list of queue names */
	COMPLETE_FILE,
	COMPLETE_DIR,
	COMPLETE_WORDS,		/* one of a fixed list of words: an option's
				 * value is one when its placeholder is "a|b|c"
				 * (the words are the placeholder's; no table
				 * names them twice) */
	COMPLETE_PROGRAM,	/* a command to run, then its arguments */
	COMPLETE_COMMAND,	/* an mq command name */
	COMPLETE_WORD_LIST,	/* a comma-separated list of fixed words */
	COMPLETE_SCHEDULE	/* a calendar schedule's name, from the server */
};

/* One row of a table. The rows of a command end with a row whose name
 * is NULL. */
struct opt {
	int id;			/* handed to the command's callback */
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: none */
	const char *arg;	/* placeholder of its value; NULL: a flag */
	const char *help;	/* -h text; a '\n' starts an indented line */
	enum complete complete;	/* what completes the value */
	const char *words;	/* COMPLETE_WORD_LIST: the words, space-separated */
	/* in the usage line: NULL for the plain "[--name ARG]"; "" when
	 * another row shows it (an exclusive group) or it is not shown */
	const char *usage;
	unsigned forms;		/* the usage forms it is in (bits); 0: all */
	unsigned flags;
};

#define OPT_HIDDEN 1u	/* not in -h, the man page, nor completions */

#define FORM(n) (1u << (n))
/* The most usage forms a command has (schedule: apply, ls, run | rm,
 * fire: each with the options that go with it). */
#define FORMS_MAX 4

/* A command: its name, its table and its operands. */
struct command {
	const char *name;
	const char *summary;	/* its line in mq -h */
	const struct opt *opts;
	/* the operands in each usage form, up to FORMS_MAX, the first NULL
	 * ending them (operands[1] NULL: one form).
	 * Their grammar is also what completion offers and how many it
	 * offers (cmd/completion/): "QUEUE" one, "[X]" at most one, "X..."
	 * any number, "a|b" and a lowercase word fixed words, " | " between
	 * alternatives (schedule's "ls | run NAME"), "--" passed over */
	const char *operands[FORMS_MAX];
	unsigned flags;
	int (*fn)(int argc, char **argv, struct mq_global *g);
	/* if not NULL: called with the message of a usage error before
	 * mq exits 64 (mq check says it its own way and exits 3) */
	void (*usage_hook)(const char *msg);
};

#define CMD_POSIX 1u		/* the first operand ends the options */
#define CMD_QUEUE_LIST 2u	/* --queue takes a preference list */
#define CMD_OWN_HELP 4u		/* -h goes to the callback (mq itself) */
#define CMD_MAIN 8u		/* mq itself, before the command name */
/* changes nothing: a reader that goes away (mq ls | head -1) ends it
 * quietly, by SIGPIPE, as coreutils end */
#define CMD_READS_ONLY 16u
/* takes none of shared_opts (its own table holds its -h): mq help */
#define CMD_NO_SHARED 32u
/* one change, said on stdout: a stop signal (SIGTERM, SIGINT, SIGHUP)
 * waits until the change is made or not and said, then ends mq with
 * 128+N (main.c); its lock waits' retries end at once. Killed while its
 * statement ran, the change could be made after mq had gone, its
 * caller told 143 and nothing else (mq limit) */
#define CMD_HOLDS_STOPS 64u

/* The rows every command takes: --table, the connection options and -h
 * (ids below OPT_CMD, applied to the global settings by the parser). */
extern const struct opt shared_opts[];

/* The commands, in mq -h order (NULL after the last), and mq itself:
 * main.c's table, which calls every command, registered by main()
 * before anything is parsed, so that the layers under main.c (the
 * parser, completion) reach the commands without naming main.c. */
extern const struct command *const *commands;
extern const struct command *mq_main;
void register_commands(const struct command *mq,
    const struct command *const *list);

/* mq help, the table's last command (main.c): its summary in mq -h */
#define HELP_SUMMARY "this help, or a command's (mq help COMMAND)"

/* The option tables cmd takes: its own, then shared_opts unless
 * CMD_NO_SHARED (NULL in tables[1] then); returns how many. */
int option_tables(const struct command *cmd, const struct opt *tables[2]);

/* The command named name, or NULL. */
const struct command *find_command_spec(const char *name);

/* Called for each option of the command's own (and for --queue, after
 * the parser applied it): id is the row's, arg its value or NULL. */
typedef void option_fn(void *ctx, int id, const char *arg);

/*
 * Parses argv[1..argc) by cmd's table, in GNU order: options may follow
 * operands, "--" ends the options (with CMD_POSIX, so does the first
 * operand). Shared options go to g, -h prints the help and exits 0, the
 * command's own options go to fn. A bad option is one line naming it as
 * typed, and exit 64. The operands, in order, are moved to argv[1..n]
 * (argv[n + 1] is NULL); returns n.
 */
int parse_options(const struct command *cmd, int argc, char **argv,
    struct mq_global *g, option_fn *fn, void *ctx);

/* While mq's own options (before the command name) are parsed, the
 * command named after them, if any: a usage error among them is that
 * command's (its usage_hook; mq --port 0 check is UNKNOWN, 3). */
extern const struct command *command_after_options;

/* The usage line(s) of cmd, each ending in a newline. */
void put_usage(FILE *f, const struct command *cmd);

/* The option list of -h: cmd's rows, then the shared ones. */
void put_option_help(FILE *f, const struct command *cmd);

/* Whether standard output is a pipe nobody reads any more: the write
 * failed with err EPIPE, or poll says so (main.c). */
int reader_gone(int err);

/* Exits 0 once stdout is written out, else 74 with the error line. */
void exit_written(const struct command *cmd)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Prints the usage and the option list on stdout and exits 0 (74 if
 * they could not be written). */
void help_exit(const struct command *cmd)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

#endif
