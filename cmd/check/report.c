/*
 * check/report.c: mq check's status line after "MQ STATE - ": what
 * crossed which threshold or the totals, the paused queues, and the
 * performance data, as the Monitoring Plugins' guidelines write them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Text of the status line, from the table or the server: shown as
 * put_text() shows it (one line, no control character), and '|', which
 * would start the performance data, as \x7c. */
void
check_put_text(const unsigned char *p, size_t n)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o;

	for (i = 0; i < n; ) {
		if (p[i] == '|') {
			fputs("\\x7c", stdout);
			i++;
			continue;
		}
		i += text_next(p + i, n - i, out, &o);
		fwrite(out, 1, o, stdout);
	}
}

/* A count as a value: a counts table edited by hand may sum above
 * LLONG_MAX, which must not wrap to a negative that passes every
 * threshold. */
static long long
count_value(uint64_t n)
{
	return n > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)n;
}

/* A queue's value of metric m: ages in microseconds. */
static long long
value(const struct mq_queue_stats *q, enum metric m)
{
	switch (m) {
	case M_AGE:	return (long long)(q->oldest_ready_s * 1e6);
	case M_DEAD:	return count_value(q->dead);
	case M_STALE:	return count_value(q->stale);
	case M_READY:	return count_value(q->ready);
	case M_HELD:	return count_value(q->held_back);
	default:	return 0;
	}
}

/* The state of metric m of queue q: the critical threshold wins. */
enum state
check_judge(const struct check_args *a, const struct mq_queue_stats *q,
    enum metric m)
{
	long long v = value(q, m);

	if (a->crit[m].set && v > a->crit[m].v)
		return ST_CRITICAL;
	if (a->warn[m].set && v > a->warn[m].v)
		return ST_WARNING;
	return ST_OK;
}

#define QNAME(q) (const unsigned char *)(q)->queue, (q)->queue_len

/* "12 dead > 10 (critical)": one threshold that tripped. */
static void
put_crossing(const struct check_args *a, const struct mq_queue_stats *q,
    enum metric m, enum state s)
{
	static const char *const what[] = { "", "dead", "stale", "ready",
	    "held back" };
	const struct limit *l = s == ST_CRITICAL ? &a->crit[m] : &a->warn[m];
	char d[DURATION_MAX], t[DURATION_MAX];

	if (m == M_AGE)
		printf("oldest ready %s > %s", fmt_duration(d, sizeof d,
		    value(q, m)), fmt_duration(t, sizeof t, l->v));
	else
		printf("%lld %s > %lld", value(q, m), what[m], l->v);
	printf(" (%s)", s == ST_CRITICAL ? "critical" : "warning");
}

/* The text after "MQ STATE - " when something tripped: what crossed
 * which threshold, per queue, the critical ones first. */
static void
put_problems(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	size_t i, groups = 0;
	int m, first;
	enum state level;

	for (level = ST_CRITICAL; level >= ST_WARNING; level--)
		for (i = 0; i < n; i++) {
			first = 1;
			for (m = 0; m < M_COUNT; m++) {
				if (check_judge(a, &q[i], m) != level)
					continue;
				if (first) {
					fputs(groups++ ? "; " : "", stdout);
					check_put_text(QNAME(&q[i]));
					fputs(": ", stdout);
				} else {
					fputs(", ", stdout);
				}
				first = 0;
				put_crossing(a, &q[i], m, level);
			}
		}
}

/* The text when nothing tripped: the totals. */
static void
put_summary(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	unsigned long long ready = 0, stale = 0, dead = 0, held = 0;
	double oldest = 0;
	char d[DURATION_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		ready += q[i].ready;
		stale += q[i].stale;
		dead += q[i].dead;
		held += q[i].held_back;
		if (q[i].ready && q[i].oldest_ready_s > oldest)
			oldest = q[i].oldest_ready_s;
	}
	if (a->one) {
		fputs("queue ", stdout);
		check_put_text(QNAME(&q[0]));
		fputs(": ", stdout);
	} else {
		printf("%zu queue%s: ", n, PLURAL(n));
	}
	printf("%llu ready, %llu stale, %llu dead", ready, stale, dead);
	if (held)
		printf(", %llu held back", held);
	if (ready)
		printf(", oldest ready %s", fmt_duration(d, sizeof d,
		    (int64_t)(oldest * 1e6)));
}

/* "; paused: a, b" */
static void
put_paused(const struct mq_queue_stats *q, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (!q[i].paused)
			continue;
		fputs(k++ ? ", " : "; paused: ", stdout);
		check_put_text(QNAME(&q[i]));
	}
}

/* A threshold in perfdata: empty if not set; an age in seconds. */
static void
put_limit(const struct limit *l, int age)
{
	if (!l->set)
		return;
	if (!age) {
		printf("%lld", l->v);
		return;
	}
	printf("%lld", l->v / 1000000);
	if (l->v % 1000000) {
		char frac[8];
		size_t k;

		snprintf(frac, sizeof frac, "%06lld", l->v % 1000000);
		for (k = strlen(frac); k > 0 && frac[k - 1] == '0'; k--)
			frac[k - 1] = '\0';
		printf(".%s", frac);
	}
}

/* One perfdata item: 'QUEUE.NAME'=VALUE[s];WARN;CRIT;0 */
static void
put_perf(const struct check_args *a, const struct mq_queue_stats *q,
    const char *name, int m, unsigned long long v)
{
	printf(" '%.*s.%s'=", (int)q->queue_len, q->queue, name);
	if (m == M_AGE)
		printf("%.3fs", q->oldest_ready_s);
	else
		printf("%llu", v);
	putchar(';');
	if (m >= 0)
		put_limit(&a->warn[m], m == M_AGE);
	putchar(';');
	if (m >= 0)
		put_limit(&a->crit[m], m == M_AGE);
	fputs(";0", stdout);
}

/* Performance data of the queues whose names mq could have written
 * (A-Z a-z 0-9 _ . -): such a name needs no quoting in a label, and no
 * graphing tool mangles it. Another name (a row written by another
 * program) has no perfdata: its thresholds still count, and the text
 * names it, escaped. */
static void
put_perfdata(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	size_t i;
	int any = 0;

	for (i = 0; i < n; i++) {
		if (strlen(q[i].queue) != q[i].queue_len ||
		    !mq_valid_queue(q[i].queue))
			continue;
		if (!any++)
			fputs(" |", stdout);
		put_perf(a, &q[i], "ready", M_READY, q[i].ready);
		put_perf(a, &q[i], "scheduled", -1, q[i].scheduled);
		put_perf(a, &q[i], "waiting", -1, q[i].waiting);
		put_perf(a, &q[i], "leased", -1, q[i].leased);
		put_perf(a, &q[i], "stale", M_STALE, q[i].stale);
		put_perf(a, &q[i], "dead", M_DEAD, q[i].dead);
		put_perf(a, &q[i], "oldest_ready", M_AGE, 0);
		put_perf(a, &q[i], "held_back", M_HELD, q[i].held_back);
	}
}

void
check_put_report(const struct check_args *a, enum state worst,
    const struct mq_queue_stats *q, size_t n)
{
	if (worst == ST_OK)
		put_summary(a, q, n);
	else
		put_problems(a, q, n);
	put_paused(q, n);
	put_perfdata(a, q, n);
}
