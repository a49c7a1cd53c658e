/*
 * push.h: what mq push's files share (cmd/push/).
 */
#ifndef MQ_PUSH_H
#define MQ_PUSH_H

#include "commands.h"
#include "output/output.h"

/* A stream of records on standard input (records.c). */
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

/* mq push's stream (stream.c): the jobs of stdin, one per record
 * ending in delim, their ids on stdout batch by batch; the exit status. */
struct progress;
int push_stream(struct mq_conn *c, const struct mq_push_opts *o, int delim,
    struct progress *p);

/* All of stdin, up to max bytes: exits 74 if it cannot be read, 65 if
 * it is larger (records.c). */
unsigned char *slurp(size_t max, size_t *len);

/* mq push --cron (cron.c): the schedule s (its settings from the
 * options, through cron_setting, which exits 64 on a bad value) with
 * this payload and name (NULL: derived from what it pushes) made or
 * changed; its name on stdout, what was done on stderr unless quiet.
 * The exit status. */
struct mq_schedule;
void cron_setting(struct mq_schedule *s, const char *opt, const char *name,
    const char *value);
int push_cron(struct mq_global *g, struct mq_schedule *s, const char *name,
    unsigned char *payload, size_t len, int quiet);

#endif
