/*
 * top/rate.c: part of mq top (mq-top(1)): the rates from the monotonic
 * counters (in: pushed; out: done + dead) over the last refresh and the
 * last minute, the ETA, and each queue's history from refresh to
 * refresh, matched by name. No database, no output: a unit test links
 * it alone.
 */
#include <stddef.h>
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

/* A name, as the queues and the workers hold theirs: bytes and length
 * (a name another program wrote may hold NUL), without its trailing
 * blanks: the server compares names so (PAD SPACE), and its groups of
 * one queue may come as 'a' from one read and 'a ' from another. */
struct name {
	const char *p;
	size_t len;
	size_t i;	/* its index in its array */
};

static size_t
unpadded(const char *p, size_t len)
{
	while (len && p[len - 1] == ' ')
		len--;
	return len;
}

static int
by_name(const void *x, const void *y)
{
	const struct name *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(a->p, b->p, n);

	if (r)
		return r;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* The names of an array, sorted, to be found by bsearch: each refresh
 * costs n log n, not n times the queues before (a scan of the previous
 * refresh's queues and of the workers for each queue made mq top
 * quadratic in the queues). */
static struct name *
sorted_names(const void *base, size_t n, size_t size, size_t name_off,
    size_t len_off)
{
	struct name *v = malloc((n ? n : 1) * sizeof *v);
	const char *e;
	size_t i;

	if (v == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		e = (const char *)base + i * size;
		v[i].p = e + name_off;
		memcpy(&v[i].len, e + len_off, sizeof v[i].len);
		v[i].len = unpadded(v[i].p, v[i].len);
		v[i].i = i;
	}
	if (n > 1)
		qsort(v, n, sizeof *v, by_name);
	return v;
}

/* The index of name[0..len) in the sorted names v[0..n), or -1. */
static long
find(const struct name *v, size_t n, const char *name, size_t len)
{
	struct name key = { name, unpadded(name, len), 0 }, *hit;

	if (n == 0)
		return -1;
	hit = bsearch(&key, v, n, sizeof *v, by_name);
	return hit ? (long)hit->i : -1;
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
	struct name *olds, *ws;
	struct top_sample cur;
	size_t i;
	long k;

	olds = sorted_names(*qs, *nq, sizeof **qs,
	    offsetof(struct top_queue, s.queue),
	    offsetof(struct top_queue, s.queue_len));
	ws = sorted_names(w, nw, sizeof *w,
	    offsetof(struct mq_queue_workers, queue),
	    offsetof(struct mq_queue_workers, queue_len));
	if (q == NULL || olds == NULL || ws == NULL) {
		free(q);
		free(olds);
		free(ws);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if ((k = find(olds, *nq, stats[i].queue,
		    stats[i].queue_len)) >= 0)
			q[i] = (*qs)[k];
		q[i].s = stats[i];
		q[i].workers = 0;
		if ((k = find(ws, nw, stats[i].queue, stats[i].queue_len)) >= 0)
			q[i].workers = w[k].workers;
		cur.t = t;
		cur.in = stats[i].total.pushed;
		cur.out = stats[i].total.done + stats[i].total.dead;
		advance(&q[i], &cur);
	}
	free(olds);
	free(ws);
	free(*qs);
	*qs = q;
	*nq = n;
	return 0;
}
