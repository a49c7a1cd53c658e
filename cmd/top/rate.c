/*
 * top/rate.c: part of mq top (mq-top(1)): the rates from the monotonic
 * counters (in: pushed; out: done + dead) over the last refresh and the
 * last minute, the ETA, and each queue's history from refresh to
 * refresh, matched by name. No database, no output: a unit test links
 * it alone.
 */
#include <stdlib.h>
#include <string.h>

#include "top.h"

double
top_rate(uint64_t from, uint64_t to, int64_t t0, int64_t t1)
{
	if (t1 <= t0 || to < from)
		return -1;
	return (double)(to - from) * 1e6 / (double)(t1 - t0);
}

double
top_eta(uint64_t ready, double in, double out)
{
	if (in < 0 || out < 0 || out - in <= 0)
		return -1;
	return (double)ready / (out - in);
}

static const struct top_queue *
find_old(const struct top_queue *q, size_t n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (q[i].s.queue_len == len &&
		    memcmp(q[i].s.queue, name, len) == 0)
			return &q[i];
	return NULL;
}

/* The rates of q at sample cur, then cur into its history. */
static void
advance(struct top_queue *q, const struct top_sample *cur)
{
	const struct top_sample *old = NULL, *r;
	unsigned i;

	q->in = q->out = q->in_1m = q->out_1m = -1;
	if (q->has_last && (cur->in < q->last.in || cur->out < q->last.out))
		q->ring_n = 0;	/* counters went back: start again */
	if (q->has_last) {
		q->in = top_rate(q->last.in, cur->in, q->last.t, cur->t);
		q->out = top_rate(q->last.out, cur->out, q->last.t, cur->t);
		if (q->spark_n == TOP_SPARK)
			memmove(q->spark, q->spark + 1,
			    (TOP_SPARK - 1) * sizeof q->spark[0]);
		else
			q->spark_n++;
		q->spark[q->spark_n - 1] = q->out;
	}
	/* the minute's rates: from the oldest sample of the last minute
	 * (since the start, while mq top has run less) */
	for (i = 0; i < q->ring_n && old == NULL; i++) {
		r = &q->ring[(q->ring_head + TOP_RING - q->ring_n + i) %
		    TOP_RING];
		if (cur->t - r->t <= TOP_MINUTE_US)
			old = r;
	}
	if (old) {
		q->in_1m = top_rate(old->in, cur->in, old->t, cur->t);
		q->out_1m = top_rate(old->out, cur->out, old->t, cur->t);
	}
	r = q->ring_n ? &q->ring[(q->ring_head + TOP_RING - 1) % TOP_RING] :
	    NULL;
	if (r == NULL || cur->t - r->t >= 1000000) {
		q->ring[q->ring_head] = *cur;
		q->ring_head = (q->ring_head + 1) % TOP_RING;
		if (q->ring_n < TOP_RING)
			q->ring_n++;
	}
	q->last = *cur;
	q->has_last = 1;
}

int
top_update(struct top_queue **qs, size_t *nq,
    const struct mq_queue_stats *stats, size_t n,
    const struct mq_queue_workers *w, size_t nw, int64_t t)
{
	struct top_queue *q = calloc(n ? n : 1, sizeof *q);
	const struct top_queue *old;
	struct top_sample cur;
	size_t i, k;

	if (q == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		old = find_old(*qs, *nq, stats[i].queue, stats[i].queue_len);
		if (old)
			q[i] = *old;
		q[i].s = stats[i];
		q[i].workers = 0;
		for (k = 0; k < nw; k++)
			if (w[k].queue_len == stats[i].queue_len &&
			    memcmp(w[k].queue, stats[i].queue,
			    w[k].queue_len) == 0)
				q[i].workers = w[k].workers;
		cur.t = t;
		cur.in = stats[i].total.pushed;
		cur.out = stats[i].total.done + stats[i].total.dead;
		advance(&q[i], &cur);
	}
	free(*qs);
	*qs = q;
	*nq = n;
	return 0;
}
