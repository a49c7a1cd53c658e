/*
 * top.h: what mq top's files share (top.c: options and the loop;
 * top/term.c: the terminal; top/rate.c: the rates; top/view.c: the
 * frame it draws).
 */
#ifndef MQ_TOP_H
#define MQ_TOP_H

#include <stdint.h>
#include <stdio.h>

#include "commands.h"
#include "output/output.h"

/* Out rates kept for the sparkline: one per refresh. */
#define TOP_SPARK 20
/* Counter samples kept for the rates over the last minute, one a second
 * at most: enough for 60 s. */
#define TOP_RING 64
#define TOP_MINUTE_US 60000000

/* A sample of a queue's counters: in = pushed, out = done + dead. */
struct top_sample {
	int64_t t;	/* mq_now_us() */
	uint64_t in, out;
};

/* A queue as mq top follows it from refresh to refresh. */
struct top_queue {
	struct mq_queue_stats s;	/* this refresh's */
	uint64_t workers;
	struct top_sample last;		/* the previous refresh's */
	int has_last;
	struct top_sample ring[TOP_RING];	/* one a second at most */
	unsigned ring_n, ring_head;
	double in, out, in_1m, out_1m;	/* per second; < 0: unknown */
	double spark[TOP_SPARK];	/* out rates, oldest first */
	unsigned spark_n;
};

/* The rate between two counter samples, per second; -1 (unknown) if the
 * time did not advance or a counter went back (counts rewritten by
 * hand, table recreated). */
double top_rate(uint64_t from, uint64_t to, int64_t t0, int64_t t1);

/* Seconds to drain ready jobs at these rates: ready / (out - in); -1
 * (never, or unknown) unless out - in > 0. */
double top_eta(uint64_t ready, double in, double out);

/* The queues of this refresh (stats: n of them, workers: nw), matched
 * by name with those of the last one (*qs, *nq), whose rates and
 * history they carry on; taken at time t. Returns -1 if out of memory. */
int top_update(struct top_queue **qs, size_t *nq,
    const struct mq_queue_stats *stats, size_t n,
    const struct mq_queue_workers *w, size_t nw, int64_t t);

/* The terminal (top/term.c). restore() leaves the alternate screen,
 * shows the cursor and gives the keys their settings back, once, however
 * mq top ends (enter_screen() makes exit() call it too). */
void enter_screen(void);
void restore(void);
/* Ctrl-Z (SIGTSTP): the terminal restored, stopped; on SIGCONT, the
 * screen entered again. */
void suspend(void);
/* SIGINT, SIGTERM, SIGHUP (and SIGWINCH, SIGTSTP on a terminal) into
 * the pipe wait_until() reads. */
void catch_signals(int tty);
/* What ends a wait: the time, a key that quits, a resize, Ctrl-Z; else
 * the number of a stopping signal. */
enum { W_TIME = 0, W_QUIT = -1, W_RESIZE = -2, W_SUSPEND = -3 };
/* Waits until deadline (mq_now_us()), for keys from stdin too if *keys (0
 * once stdin ends). */
int wait_until(int64_t deadline, int *keys);

/* What a frame is drawn with. */
struct top_frame {
	const char *table;
	int64_t interval_us;
	int utf8;		/* sparkline in block characters */
	size_t width, height;	/* 0: no limit (not a terminal) */
	int tty;		/* "\033[K" ends each line */
};

/* The window's size into fr (on a terminal; top/term.c). */
void measure(struct top_frame *fr);

/* The header line and the table into f, each line cut to the width. */
void top_draw(FILE *f, const struct top_frame *fr,
    const struct top_queue *q, size_t n);

#endif
