/*
 * check.h: what mq check's two files share (check.c: options and the
 * run; check/report.c: the status line and the performance data).
 */
#ifndef MQ_CHECK_H
#define MQ_CHECK_H

#include "commands.h"
#include "output/output.h"

/* The Monitoring Plugins' states, which are also the exit statuses. */
enum state { ST_OK, ST_WARNING, ST_CRITICAL, ST_UNKNOWN };

/* What a threshold watches; the order of the text. */
enum metric { M_AGE, M_DEAD, M_STALE, M_READY, M_HELD, M_COUNT };

/* A threshold: set, and its limit (microseconds for the age). The state
 * trips when the value is above the limit, as the Monitoring Plugins'
 * threshold "N" (the range 0 to N) does. */
struct limit {
	int set;
	long long v;
};

struct check_args {
	int one;
	int allow_unknown;	/* --allow-unknown */
	struct limit crit[M_COUNT], warn[M_COUNT];
};

/* Text of the status line (from the table or the server), escaped so it
 * stays one line with one '|'. */
void check_put_text(const unsigned char *p, size_t n);

/* The state of metric m of queue q: the critical threshold wins. */
enum state check_judge(const struct check_args *a,
    const struct mq_queue_stats *q, enum metric m);

/* The line after "MQ STATE - ": what tripped (or the totals), the paused
 * queues, then '|' and the performance data. */
void check_put_report(const struct check_args *a, enum state worst,
    const struct mq_queue_stats *q, size_t n);

#endif
