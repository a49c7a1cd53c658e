/*
 * test-top-rate.c: unit tests of cmd/top/rate.c, mq top's arithmetic:
 * rates from two counter samples, the ETA, the minute's rates, the
 * sparkline's history, a counter that goes back, queues matched by name
 * (mq-top(1)). TAP on stdout; no server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top/top.h"

static int n, failed;

static void
near(double got, double want, const char *what)
{
	int good = got - want < 1e-9 && want - got < 1e-9;

	n++;
	failed += !good;
	printf("%sok %d - %s: %g (got %g)\n", good ? "" : "not ", n, what,
	    want, got);
}

/* One queue's stats, with these counters. */
static struct mq_queue_stats
qs(const char *name, uint64_t ready, uint64_t pushed, uint64_t done,
    uint64_t dead)
{
	struct mq_queue_stats s;

	memset(&s, 0, sizeof s);
	s.queue_len = strlen(name);
	memcpy(s.queue, name, s.queue_len);
	s.ready = ready;
	s.total.pushed = pushed;
	s.total.done = done;
	s.total.dead = dead;
	return s;
}

int
main(void)
{
	const int64_t s = 1000000;
	struct top_queue *q = NULL;
	struct mq_queue_stats st[2];
	struct mq_queue_workers w;
	size_t nq = 0;
	int i;

	near(top_rate(10, 30, 0, 2 * s), 10, "20 in 2 s: 10/s");
	near(top_rate(10, 10, 0, s), 0, "none: 0/s");
	near(top_rate(30, 10, 0, s), -1, "a counter that went back: unknown");
	near(top_rate(10, 30, s, s), -1, "no time between: unknown");
	near(top_eta(100, 5, 15), 10, "100 ready, draining 10/s: 10 s");
	near(top_eta(100, 15, 5), -1, "growing: no ETA");
	near(top_eta(100, 5, 5), -1, "steady: no ETA");
	near(top_eta(100, -1, 5), -1, "unknown in rate: no ETA");

	/* a queue sampled at 0, 2 s, 4 s: pushed 0, 10, 30; out 0, 4, 4 */
	memset(&w, 0, sizeof w);
	memcpy(w.queue, "a", 1);
	w.queue_len = 1;
	w.workers = 3;
	st[0] = qs("a", 5, 0, 0, 0);
	top_update(&q, &nq, st, 1, &w, 1, 0);
	near(q[0].in, -1, "first sample: no rate in");
	near(q[0].out_1m, -1, "first sample: no minute's rate");
	near((double)q[0].workers, 3, "the workers of a, by name");
	st[0] = qs("a", 5, 10, 3, 1);
	top_update(&q, &nq, st, 1, NULL, 0, 2 * s);
	near(q[0].in, 5, "second sample: in 10 over 2 s");
	near(q[0].out, 2, "second sample: out (done + dead) 4 over 2 s");
	near((double)q[0].workers, 0, "no lease now: no worker");
	/* queue b appears before a: a keeps its history, by name */
	st[0] = qs("b", 0, 7, 0, 0);
	st[1] = qs("a", 5, 30, 3, 1);
	top_update(&q, &nq, st, 2, NULL, 0, 4 * s);
	near(q[0].in, -1, "a new queue: no rate yet");
	near(q[1].in, 10, "a, third sample: in 20 over 2 s");
	near(q[1].out, 0, "a, third sample: out 0");
	near(q[1].in_1m, 7.5, "a, the minute's in: 30 over 4 s");
	near(q[1].out_1m, 1, "a, the minute's out: 4 over 4 s");
	near((double)q[1].spark_n, 2, "a's sparkline: two rates");
	near(q[1].spark[0], 2, "a's sparkline, oldest first");
	/* 70 s on, one sample a second: the minute's rate forgets the
	 * start */
	for (i = 5; i <= 74; i++) {
		st[0] = qs("a", 5, 30 + (uint64_t)(i - 4) * 2, 3, 1);
		top_update(&q, &nq, st, 1, NULL, 0, i * s);
	}
	near(q[0].in_1m, 2, "after 70 s at 2/s, the minute's in: 2/s");
	near((double)q[0].spark_n, TOP_SPARK, "the sparkline keeps 20 rates");
	/* the counters rewritten lower: unknown, then rates again */
	st[0] = qs("a", 5, 1, 0, 0);
	top_update(&q, &nq, st, 1, NULL, 0, 75 * s);
	near(q[0].in, -1, "a counter went back: unknown");
	near(q[0].in_1m, -1, "and the minute's rate too");
	st[0] = qs("a", 5, 4, 0, 0);
	top_update(&q, &nq, st, 1, NULL, 0, 76 * s);
	near(q[0].in, 3, "then rates again");
	/* the workers' read grouped the queue as 'a ' (PAD SPACE): the
	 * same queue, as the server compares names */
	memset(&w, 0, sizeof w);
	memcpy(w.queue, "a  ", 3);
	w.queue_len = 3;
	w.workers = 2;
	top_update(&q, &nq, st, 1, &w, 1, 77 * s);
	near((double)q[0].workers, 2, "workers of 'a  ' are a's");
	near(q[0].in, 0, "and a keeps its history");
	free(q);
	printf("1..%d\n", n);
	return failed != 0;
}
