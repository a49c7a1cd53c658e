/*
 * schedule.h: calendar schedules (issue 33; the design is
 * doc/schedules.md). A schedule is a row of <table>_schedules: a cron
 * expression in a zone (cron.h) and the job each run pushes. Firing a
 * due schedule pushes its runs as ordinary jobs and records each
 * instant in the ledger <table>_fired, keyed by (schedule, instant), so
 * that no instant runs twice whatever archive and purge do to the jobs.
 *
 * Schedules are declared in a file (mq-schedule(5)), parsed here
 * without a server (schedfile.c), and applied to the table all or
 * nothing (schedule.c).
 */
#ifndef MQ_SCHEDULE_H
#define MQ_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "cron.h"
#include "mq.h"

/** Longest schedule name (validated like a queue name). */
#define MQ_SCHEDULE_NAME_MAX 64
/** Longest schedule file accepted, in bytes. */
#define MQ_SCHEDFILE_MAX (16u << 20)

/** What firing does with instants it finds late (missed runs). */
enum mq_missed {
	MQ_MISSED_SKIP = 0,	/* none runs: recorded skipped */
	MQ_MISSED_ONCE,		/* the latest runs, the older are skipped */
	MQ_MISSED_ALL		/* each runs, at most missed_max of them */
};
#define MQ_MISSED_DEFAULT MQ_MISSED_ONCE
#define MQ_MISSED_MAX_DEFAULT 10
#define MQ_MISSED_MAX_LIMIT 1000

/**
 * One schedule as declared: plain data (payload is malloc'd; free a
 * parsed array with mq_schedules_free). Strings are NUL-terminated and
 * valid: name and queue by mq_valid_queue, zone by mq_tz_valid_name and
 * loadable, key (if has_key) by mq_valid_key; expr is the canonical
 * form (mq_cron_format) of a valid expression.
 */
struct mq_schedule {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	char expr[MQ_CRON_FORMAT_SIZE];
	char zone[MQ_TZ_NAME_MAX + 1];
	char queue[MQ_QUEUE_MAX + 1];
	unsigned char *payload;		/* never NULL once parsed */
	size_t payload_len;
	int priority;			/* MQ_PRIORITY_MIN..MAX, default 0 */
	unsigned max_attempts;		/* default MQ_DEFAULT_MAX_ATTEMPTS */
	int has_key;
	char key[MQ_KEY_MAX + 1];
	enum mq_missed missed;
	unsigned missed_max;		/* 1..MQ_MISSED_MAX_LIMIT */
	unsigned line;			/* line of its [name] header, 0 if
					 * not from a file */
};

/** Sets a schedule's defaults: queue "default", zone "UTC", empty
 * payload (not allocated: payload stays NULL until set), priority 0,
 * MQ_DEFAULT_MAX_ATTEMPTS, no key, MQ_MISSED_DEFAULT,
 * MQ_MISSED_MAX_DEFAULT, line 0; name and expr empty. */
void mq_schedule_defaults(struct mq_schedule *s);

/**
 * Parses a schedule file (mq-schedule(5)) of len bytes. MQ_OK with
 * *out a malloc'd array of *n schedules in file order (*n may be 0);
 * or MQ_EINVAL and err->msg naming the line and what is wrong
 * ("line 12: [nightly]: cron: column 3: hour: 24 is out of range
 * 0-23"), *out NULL: a file with any error yields nothing. MQ_ENOMEM.
 * payload-file entries are read relative to dir (NULL: the current
 * directory) and count against MQ_SCHEDFILE_MAX too.
 */
enum mq_status mq_schedfile_parse(const char *text, size_t len,
    const char *dir, struct mq_schedule **out, size_t *n,
    struct mq_error *err);

/** Frees an array from mq_schedfile_parse (NULL is fine). */
void mq_schedules_free(struct mq_schedule *s, size_t n);

/** Name of a missed policy ("skip", "once", "all"), and the reverse
 * (-1 if none). */
const char *mq_missed_name(enum mq_missed m);
int mq_missed_parse(const char *s);

#endif
