/*
 * output.h: the output layer (cmd/output/): every byte that came from
 * the table or the server goes out through one of its encoders
 * (terminal text, JSON, Prometheus labels, shell words); human tables,
 * durations, progress lines. Included by the commands and cmd/cli/;
 * it uses nothing of either (progress reads only a command's name).
 */
#ifndef MQ_OUTPUT_H
#define MQ_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mq.h"
#include "output/units.h"

struct command;

/* s made safe to echo in a one-line message: shown as put_text() shows
 * it, long text cut after 80 columns with "...". Returns a static
 * buffer. */
const char *shown(const char *s);
/* The same for the bytes p[0..n), a NUL among them shown as \x00 (input
 * read from a file or a pipe: a message must not cut it at a NUL). */
const char *shown_bytes(const void *p, size_t n);

/* "s" unless n is 1: "1 job", "2 jobs". */
#define PLURAL(n) ((n) == 1 ? "" : "s")

/* Output encodings (output/output.c); mq(1) OUTPUT OF TABLE DATA says the
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

/* Lines of a job's facts on a terminal (stdout): "label: " then p[0..n)
 * as terminal text; a time us from now as "T (in D)" or, negative,
 * "T (D ago)"; that time as a "label: " line. */
void put_text_line(const char *label, const void *p, size_t n);
void put_when(const char *iso, int64_t us);
void put_when_line(const char *label, const char *iso, int64_t us);

/* The columns put_text() would take. */
size_t text_width(const unsigned char *p, size_t n);

/* Text as put_text() writes it (UTF-8, escapes in ASCII), s[0..n): the
 * columns a terminal gives it (display width: 2 for a wide character, 0
 * for a combining one; an escape its printed length); and the bytes of
 * its longest start that fits in max columns (0: all), its columns in
 * *width (if not NULL), never half a character. */
size_t shown_width(const char *s, size_t n);
size_t shown_fit(const char *s, size_t n, size_t max, size_t *width);

/* A JSON string for any bytes: control characters as \u00XX, a byte
 * that is not UTF-8 as \ufffd (exact for valid UTF-8). */
void put_json_string(const unsigned char *p, size_t n);

/* The inside of a Prometheus label value: the text as put_text shows
 * it (a backslash as \\, a control character or a byte not UTF-8 as
 * \xHH), then \ and " escaped as the format says (\\\\, \\xHH, \"):
 * the value decodes to the shown text, which maps back to the bytes, so
 * two names never share a label value. */
void put_prom_label(const unsigned char *p, size_t n);
void put_base64(const unsigned char *p, size_t n);

/* A payload as a JSON member, in its exact form (mq(1) OUTPUT OF TABLE
 * DATA): "payload":"..." when it is UTF-8, else "payload_base64":"...". */
void put_json_payload(const unsigned char *p, size_t n);
void put_shell_quoted(const unsigned char *p, size_t n);

/* p as one shell word: as is if made of A-Z a-z 0-9 _ . - only (a name
 * as mq writes one), else put_shell_quoted. */
void put_shell_word(const unsigned char *p, size_t n);

/* A job's fields as JSON members, without braces (output/job_json.c). */
void put_job_json(const struct mq_job_info *j);

/* Whether j is held now (leased, or stale: expired but not taken back),
 * so that its lease columns are its holder's; in any other state they
 * are what the last claim left (output/job_json.c). */
int job_held(const struct mq_job_info *j);
/* Whether the job is finished: done, dead or archived. */
int job_finished(const struct mq_job_info *j);
/* The state an archived job was stored in, for "archived (...)": the
 * column's text ("done", "ready"), or "state ''" for an empty one (a
 * row another program wrote), never an empty pair of parentheses. */
const char *archived_state(const char *stored);
/* When it finished: "ISO (3s ago)", or, for a row another program wrote
 * without finished_at, "an unknown time"; and a "finished: " line, for a
 * finished job or one that has the time ("unknown (the row has no
 * finished_at)"). */
void put_finished(const struct mq_job_info *j);
void put_finished_line(const struct mq_job_info *j);

/* An instant of a calendar schedule (output/instant.c), seconds since
 * the epoch, as "2026-11-30 01:30:00 UTC" into utc and in zone tz as
 * "2026-11-30 02:30:00 CET" into local (tz NULL: the UTC text), each
 * INSTANT_MAX bytes. instant_s: µs since the epoch to its second. */
#define INSTANT_MAX 64
struct mq_tz;
void fmt_instant(int64_t t, const struct mq_tz *tz, char *utc, char *local);
int64_t instant_s(int64_t us);
/* On stdout: "LOCAL (UTC)", or the UTC text alone if tz is NULL. */
void put_instant(int64_t t, const struct mq_tz *tz);

/* ,"schedule":{...} of a job that is a calendar schedule's run (r; NULL:
 * ,"schedule":null), its times in zone tz (job_json.c, mq-show(1)); with
 * runs, the schedule's last runs too. */
struct mq_run_of;
void put_run_json(const struct mq_run_of *r, const struct mq_tz *tz,
    int runs);

/* A human table (output/table.c): row by row, column 0 a name from the table
 * (shown as put_text() shows it, left-aligned), the others short cells
 * mq wrote (numbers, units), right-aligned; each column as wide as its
 * widest cell or header. */
#define TABLE_COLS_MAX 16
#define TABLE_CELL 48	/* LIMIT_RATE_MAX: the longest rate */
struct table_row {
	const unsigned char *name;
	size_t name_len;
	char cell[TABLE_COLS_MAX][TABLE_CELL];	/* cell[0] unused */
};
void table_print(const char *const *head, size_t cols,
    const struct table_row *r, size_t n);

/* Progress of long work on stderr (output/progress.c): a line rewritten in place
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

#endif
