/*
 * cli.h: the command-line layer (cmd/cli/): option tables and their
 * parser, the settings from the environment and option files, how a
 * command fails (usage errors, the library's errors, exit statuses), and
 * the process helpers (closed descriptors, signals). Included by
 * main.c, the commands, and cmd/cli/ itself; it includes nothing of the
 * commands, and uses cmd/output/ (output.h) only to show what a user
 * typed.
 */
#ifndef MQ_CLI_H
#define MQ_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sysexits.h>

#include "mq.h"
#include "cli/options.h"

/* Exit statuses beyond <sysexits.h>; all are listed in mq(1). */
#define EXIT_EMPTY 1	/* nothing to claim */
#define EXIT_LEASE 2	/* lease lost or unknown receipt */
#define EXIT_UNKNOWN 3	/* connection lost: the write may have committed */

/* The standard descriptors closed when mq started (bit fd), now open on
 * /dev/null (main.c). */
extern unsigned std_closed;
#define STDIN_CLOSED 1u
#define STDOUT_CLOSED 2u
#define STDERR_CLOSED 4u

/* Exits 74 naming the descriptor if one of which (STDIN_CLOSED,
 * STDOUT_CLOSED, STDERR_CLOSED) was closed at start, or is open the wrong
 * way (stdout read-only): before anything is claimed or pushed. */
void need_stdio(const struct command *cmd, unsigned which);

/* Makes the process safe to run in (process.c), first thing in main():
 * closed standard descriptors opened on /dev/null (std_closed says
 * which), the signals mq uses unblocked, those ignored at start noted. */
void process_start(void);

/* Ends a read-only command whose reader has gone as coreutils end:
 * killed by SIGPIPE (process.c). */
void end_by_sigpipe(void)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* The end of the output of a form that only reads (mq limit QUEUE, mq
 * schedule ls; main() does it for the CMD_READS_ONLY commands):
 * standard output flushed, and its reader gone, ended by SIGPIPE as
 * end_by_sigpipe() does (mq(1) OUTPUT). 0, or -1 on another failure,
 * which main()'s flush then says (process.c). */
int flush_read_only(void);
/* What standard output still buffers, and what is written to it from
 * now on, goes to /dev/null, its error flag cleared: a command that said
 * its failure already (mq pop's give-back) ends without another. 0, or
 * -1 if /dev/null cannot be opened (process.c). */
int discard_stdout(void);

/* sigaction(sig, sa) unless mq was started with sig ignored (SIGTERM,
 * SIGINT, SIGHUP: nohup, a shell's background job), which then stays
 * ignored, as for any Unix command (process.c). */
void catch_signal(int sig, const struct sigaction *sa);
/* The signals that stop a command: SIGTERM, SIGINT, SIGHUP (process.c). */
#define NSTOP_SIGNALS 3
extern const int stop_signals[NSTOP_SIGNALS];
/* Whether sig (SIGTERM, SIGINT, SIGHUP) was ignored at start: it is
 * neither caught nor held blocked (held, it would stay pending, and a
 * check of the pending ones would take it for a stop). */
int ignored_at_start(int sig);

/* mq push's stop signals (SIGTERM, SIGINT, SIGHUP): caught, into
 * stop_signal, and their set in *held; stop_signal_pending() lets a held
 * one arrive and tells whether one did. */
extern volatile sig_atomic_t stop_signal;
void catch_stop(sigset_t *held);
int stop_signal_pending(const sigset_t *held);
/* Whether a stop signal came, or waits blocked (for mq_set_stop_check:
 * a statement's retries after lock waits end, instead of minutes later). */
int stop_held(void);
/* 128 + the stop signal a CMD_HOLDS_STOPS command holds (or took), 0 if
 * none or another command: its exit status once its error is said. */
int held_stop_status(const struct command *cmd);

/* Settings from the global options and the environment. Values from
 * the environment are checked by settle(), after the options: a bad
 * MQ_TABLE must not stop -h. */
struct mq_global {
	struct mq_connopts conn;
	const char *table, *table_env;	/* table_env: MQ_TABLE, unchecked */
	const char *queue, *queue_env;	/* queue_env: MQ_QUEUE, unchecked */
	const char *port_env;		/* MQ_PORT, unchecked */
	const char *host_order_env;	/* MQ_HOST_ORDER, unchecked */
	int queue_list;		/* --queue may be a preference list */
};

/* The ids of the shared options (options.c); a command's own start at
 * OPT_CMD. */
enum {
	OPT_COMMON = 256,
	OPT_DEFAULTS_FILE = OPT_COMMON, OPT_HOST, OPT_PORT, OPT_SOCKET,
	OPT_USER, OPT_DATABASE, OPT_TABLE, OPT_QUEUE,
	OPT_SSL_CA, OPT_SSL_CAPATH, OPT_SSL_CERT, OPT_SSL_KEY, OPT_SSL_CIPHER,
	OPT_SSL_VERIFY_SERVER_CERT, OPT_HOST_ORDER,
	OPT_CMD = 300	/* first value free for a command's own options */
};

/* Reads MQ_* variables into g (an empty one counts as unset). */
void global_from_env(struct mq_global *g);

/* Checks the settings taken from the environment that the options did not
 * override (the queue's only if uses_queue), and reads a piped option
 * file (--defaults-file <(...)) into memory, within PIPE_WAIT_MS; exits
 * 64 naming the bad setting, 78 if the option file cannot be read. */
void settle(const struct command *cmd, struct mq_global *g, int uses_queue);
#define PIPE_WAIT_MS 10000
/* settle() without exiting, the pipe waited for wait_ms: 0, or the status
 * settle() exits with (EX_USAGE, EX_CONFIG), its message in why (mq check
 * and mq completion say it their own way). */
int settle_checked(const struct command *cmd, struct mq_global *g, int uses_queue,
    int wait_ms, char *why, size_t len);

/* Checks a table or queue name (a list of queues with g->queue_list)
 * given by what (an option or a variable); exits 64 naming it. */
void check_table(const struct command *cmd, const char *what, const char *name);
void check_queue(const struct command *cmd, const struct mq_global *g,
    const char *what, const char *name);

/* arg as an integer in [lo, hi] into *v: 0, or -1 with the message in
 * why (args.c; settle_checked() reads MQ_PORT with it). */
int int_problem(const char *opt, const char *arg, long long lo,
    long long hi, long long *v, char *why, size_t len);

/* Prints "mq CMD: <msg>" and the usage hint to stderr, exits 64 (or
 * as the command's usage_hook says: options.h). */
void usage_error(const struct command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

/* For a command that takes no operands: n, what parse_options() left,
 * above 0 is the usage error "unexpected argument 'ARGV[1]'". */
void no_operands(const struct command *cmd, int n, char **argv);

/* A line for stderr made of pieces (escaped text, lists), composed
 * whole and written with one call by err_line_end: written piece by
 * piece, a write(2) a piece on unbuffered stderr, it was cut into by
 * other processes writing to the same log (cron's, xargs -P). */
struct err_line {
	char *buf;
	size_t len;
	FILE *f;
};
/* Where to write the pieces: l's buffer (stderr itself without memory). */
FILE *err_line_begin(struct err_line *l);
void err_line_end(struct err_line *l);

/* Prints "mq CMD: <msg>" as one line on stderr (one write: lines of
 * processes sharing a log stay whole). */
void say(const struct command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Says "mq CMD: write failure on standard output: CAUSE" ("mq: ..." for
 * mq's own -h and -V), once in the process: whoever asks again (main()'s
 * flush after a command that said it and returned) says nothing. The
 * cause is the errno of standard output's first failure that
 * flush_stdout() or stdout_error() met. Returns its status, 74
 * (EX_IOERR). */
int stdout_failure(const struct command *cmd);
/* fflush(stdout), and whether it or an earlier write failed (ferror): 0,
 * or -1 with errno the failure's (0 when only the error flag is left).
 * The cause is kept for stdout_failure(): a failed flush drops the
 * buffer, so the next one succeeds and its errno says nothing. */
int flush_stdout(void);
/* Keeps err, the errno of a write to standard output that failed
 * (fwrite, printf), for stdout_failure(), unless one is kept already. */
void stdout_error(int err);
/* ": " and the kept cause's text, or "" while none is kept. */
const char *stdout_cause(void);

/* Says "mq CMD: out of memory"; returns its status, 71 (EX_OSERR). */
int no_memory(const struct command *cmd);

/* The exit status for a library status. */
int exit_status(enum mq_status st);

/* Prints e as one line, "mq CMD: [WHERE: ]msg (error N, SQLSTATE S)". */
void report(const struct command *cmd, const char *where, const struct mq_error *e);

/* report() then exit with the mapped status. */
void die(const struct command *cmd, const struct mq_error *e)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Connects and selects g->table; exits with the status on failure. */
struct mq_conn *open_queue_table(const struct command *cmd, const struct mq_global *g);

/* A job id: decimal digits only, 1 to 2^64 - 1: 0, or -1 if s is not
 * one. */
int parse_id(const char *s, uint64_t *id);
/* The same of the len bytes at s (not NUL-ended: an item of a list). */
int parse_id_n(const char *s, size_t len, uint64_t *id);
/* The job ids of f, one a line (blank lines, and blanks at a line's end,
 * passed over), malloc'ed, *n of them (NULL for none); exits 64 naming
 * the line of what ("standard input") that is not one, 74 if f cannot be
 * read, 71 out of memory. */
uint64_t *read_id_lines(const struct command *cmd, FILE *f, const char *what,
    size_t *n);

/* Parses a duration option; exits 64 naming the option if invalid. */
long long duration_arg(const struct command *cmd, const char *opt, const char *arg);

/* Parses a rate option, N/D (mq limit --rate, --key-rate, mq retry
 * --rate): N from 1 to max in any window of the duration D, which is a
 * duration as duration_arg() reads it (10/5m, 10/1h30m) or a unit alone
 * for one of it (10/s, 10/h), "min" a spelling of "m" at its end
 * (10/min, 600/5min); N alone is N/s. Into *n and *us; a bad value
 * exits 64 naming the option and quoting the whole value. */
void rate_arg(const struct command *cmd, const char *opt, const char *arg,
    uint64_t max, uint64_t *n, int64_t *us);

/* Parses an integer option in [lo, hi]; exits 64 if not. */
long long int_arg(const struct command *cmd, const char *opt, const char *arg,
    long long lo, long long hi);

/* Reports a malformed receipt and exits 65. */
void receipt_error(const struct command *cmd, const char *arg)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

#endif
