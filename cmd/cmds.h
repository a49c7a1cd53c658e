/*
 * cmds.h: what the command files share: the global settings, the common
 * options every command takes, exit statuses, and the reporting helpers.
 */
#ifndef MQ_CMDS_H
#define MQ_CMDS_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sysexits.h>

#include "mq.h"
#include "options.h"

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

/* A stream of records on standard input (push_records.c). */
struct records {
	char *buf;
	size_t start, len, cap;
	int eof;
	size_t max;	/* the longest record read (the server's limit) */
};

/* The next record of stdin, up to delim (not included), in *rec and *n
 * (valid until the next call): 1; 0 at the end of the input; -2 once
 * *stop is set (the caller's stop signals are blocked but while waiting,
 * when the mask is waiting); -3 once the record is longer than r->max,
 * read no further (memory stays bounded: /dev/zero has no newline); -1
 * if reading failed (errno; ENOMEM included). */
int records_next(struct records *r, int delim, const sigset_t *waiting,
    volatile sig_atomic_t *stop, char **rec, size_t *n);
void records_free(struct records *r);

/* mq push's stream (push_stream.c): the jobs of stdin, one per record
 * ending in delim, their ids on stdout batch by batch; the exit status. */
struct progress;
int push_stream(struct mq_conn *c, const struct mq_push_opts *o, int delim,
    struct progress *p);

/* All of stdin, up to max bytes: exits 74 if it cannot be read, 65 if
 * it is larger (push_records.c). */
unsigned char *slurp(size_t max, size_t *len);

/* sigaction(sig, sa) unless mq was started with sig ignored (SIGTERM,
 * SIGINT, SIGHUP: nohup, a shell's background job), which then stays
 * ignored, as for any Unix command (main.c). */
void catch_signal(int sig, const struct sigaction *sa);
/* The signals that stop a command: SIGTERM, SIGINT, SIGHUP (main.c). */
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

/* mq pop's forms (pop_output.c): the shell form (MQ_*_idx variables when
 * many), JSON, and the raw payload to path or stdout with the receipt
 * apart (on failure, why says what failed; returns the exit status). */
void pop_print_shell(const struct mq_job *j, size_t idx, int many);
void pop_print_json(const struct mq_job *j);
int pop_print_raw(const struct mq_job *j, const char *path,
    const char *receipt_path, char *why, size_t size);

/* Settings from the global options and the environment. Values from
 * the environment are checked by settle(), after the options: a bad
 * MQ_TABLE must not stop -h. */
struct mq_global {
	struct mq_connopts conn;
	const char *table, *table_env;	/* table_env: MQ_TABLE, unchecked */
	const char *queue, *queue_env;	/* queue_env: MQ_QUEUE, unchecked */
	const char *port_env;		/* MQ_PORT, unchecked */
	int queue_list;		/* --queue may be a preference list */
};

/* The ids of the shared options (options.c); a command's own start at
 * OPT_CMD. */
enum {
	OPT_COMMON = 256,
	OPT_DEFAULTS_FILE = OPT_COMMON, OPT_HOST, OPT_PORT, OPT_SOCKET,
	OPT_USER, OPT_DATABASE, OPT_TABLE, OPT_QUEUE,
	OPT_SSL_CA, OPT_SSL_CAPATH, OPT_SSL_CERT, OPT_SSL_KEY, OPT_SSL_CIPHER,
	OPT_SSL_VERIFY_SERVER_CERT,
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

/* s made safe to echo in a one-line message: shown as put_text() shows
 * it, long text cut after 80 columns with "...". Returns a static
 * buffer. */
const char *shown(const char *s);

/* Prints "mq CMD: <msg>" and the usage hint to stderr, exits 64 (or
 * as the command's usage_hook says: options.h). */
void usage_error(const struct command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

/* Prints "mq CMD: <msg>" as one line on stderr (one write: lines of
 * processes sharing a log stay whole). */
void say(const struct command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

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

/* Parses a duration option; exits 64 naming the option if invalid. */
long long duration_arg(const struct command *cmd, const char *opt, const char *arg);

/* Parses an integer option in [lo, hi]; exits 64 if not. */
long long int_arg(const struct command *cmd, const char *opt, const char *arg,
    long long lo, long long hi);

/* "s" unless n is 1: "1 job", "2 jobs". */
#define PLURAL(n) ((n) == 1 ? "" : "s")

/* Output encodings (output.c); mq(1) OUTPUT OF TABLE DATA says the
 * rules. Every byte that came from the table or the server goes out
 * through one of them. */
int utf8_valid(const unsigned char *p, size_t n);

/* Longest shown form text_next() writes. */
#define TEXT_NEXT_MAX 16

/* Terminal text: the shown form of the character at p[0..n) into out
 * (*outlen bytes, at most TEXT_NEXT_MAX); returns the bytes of p it
 * took. A backslash is shown as \\; a control character (C0, DEL, C1,
 * line separators, bidirectional overrides) as \xHH per byte; a byte
 * that does not start well-formed UTF-8 as \xHH; the rest as is. */
size_t text_next(const unsigned char *p, size_t n, char *out,
    size_t *outlen);

/* p[0..n) as terminal text on f; returns the columns it took. */
size_t put_text(FILE *f, const unsigned char *p, size_t n);

/* The columns put_text() would take. */
size_t text_width(const unsigned char *p, size_t n);

/* A JSON string for any bytes: control characters as \u00XX, a byte
 * that is not UTF-8 as \ufffd (exact for valid UTF-8). */
void put_json_string(const unsigned char *p, size_t n);

/* The inside of a Prometheus label value: \\, \" and \n as the format
 * says, other control characters and bytes not UTF-8 as the text \xHH
 * (written \\xHH), as put_text shows them. */
void put_prom_label(const unsigned char *p, size_t n);
void put_base64(const unsigned char *p, size_t n);
void put_shell_quoted(const unsigned char *p, size_t n);

/* p as one shell word: as is if made of A-Z a-z 0-9 _ . - only (a name
 * as mq writes one), else put_shell_quoted. */
void put_shell_word(const unsigned char *p, size_t n);

/* A job's fields as JSON members, without braces (util/job_json.c). */
void put_job_json(const struct mq_job_info *j);

/* Reports a malformed receipt and exits 65. */
void receipt_error(const struct command *cmd, const char *arg)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* A human table (util/table.c): row by row, column 0 a name from the table
 * (shown as put_text() shows it, left-aligned), the others short cells
 * mq wrote (numbers, units), right-aligned; each column as wide as its
 * widest cell or header. */
#define TABLE_COLS_MAX 12
#define TABLE_CELL 24
struct table_row {
	const unsigned char *name;
	size_t name_len;
	char cell[TABLE_COLS_MAX][TABLE_CELL];	/* cell[0] unused */
};
void table_print(const char *const *head, size_t cols,
    const struct table_row *r, size_t n);

/* Progress of long work on stderr (util/progress.c): a line rewritten in place
 * when stderr is a terminal, then a summary unless quiet:
 * "mq CMD: DONE N jobs in 3s (400/s)". */
struct progress {
	const char *cmd, *done;	/* "push", "pushed" */
	int64_t start, shown_at;
	uint64_t n;
	size_t shown;		/* length of the line on the terminal */
	int tty, quiet;
};
void progress_start(struct progress *p, const struct command *cmd,
    const char *done, int quiet);
/* n more jobs done */
void progress_add(struct progress *p, uint64_t n);
/* progress_add() as the library's per-batch callback (ctx: the progress) */
void progress_jobs(uint64_t jobs, void *ctx);
/* Erases the progress line, if one is shown, and shows it no more. */
void progress_clear(struct progress *p);
/* progress_clear(), then the summary line unless quiet. */
void progress_summary(struct progress *p);

/* The commands. */
int cmd_ack(int argc, char **argv, struct mq_global *g);
int cmd_archive(int argc, char **argv, struct mq_global *g);
int cmd_extend(int argc, char **argv, struct mq_global *g);
int cmd_fail(int argc, char **argv, struct mq_global *g);
int cmd_init(int argc, char **argv, struct mq_global *g);
int cmd_pause(int argc, char **argv, struct mq_global *g);
int cmd_pop(int argc, char **argv, struct mq_global *g);
int cmd_purge(int argc, char **argv, struct mq_global *g);
int cmd_push(int argc, char **argv, struct mq_global *g);
int cmd_requeue_stale(int argc, char **argv, struct mq_global *g);
int cmd_cancel(int argc, char **argv, struct mq_global *g);
int cmd_check(int argc, char **argv, struct mq_global *g);
int cmd_resume(int argc, char **argv, struct mq_global *g);
int cmd_stats(int argc, char **argv, struct mq_global *g);
int cmd_work(int argc, char **argv, struct mq_global *g);
int cmd_completion(int argc, char **argv, struct mq_global *g);
int cmd_why(int argc, char **argv, struct mq_global *g);
int cmd_ls(int argc, char **argv, struct mq_global *g);
int cmd_retry(int argc, char **argv, struct mq_global *g);
int cmd_show(int argc, char **argv, struct mq_global *g);
int cmd_top(int argc, char **argv, struct mq_global *g);

/* Their tables (options.h). */
extern const struct command ack_command, archive_command, cancel_command,
    check_command,
    completion_command, extend_command, fail_command, init_command,
    pause_command, pop_command, purge_command, push_command,
    requeue_stale_command, resume_command, stats_command, work_command;
extern const struct command why_command, ls_command;
extern const struct command retry_command;
extern const struct command show_command;
extern const struct command top_command;

#endif
