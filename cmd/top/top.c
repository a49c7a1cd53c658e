/*
 * top.c: mq top: a live view of the queues on a terminal, like top(1):
 * depth, rates in and out from the monotonic counters, ETA, the oldest
 * ready job, the workers holding leases, a sparkline. Plain ANSI: the
 * alternate screen while it runs, and the terminal as it was after, on
 * every way out. Not on a terminal, or --once: plain snapshots, no
 * escape sequence. The terminal: top/term.c; the rates: top/rate.c;
 * the frame: top/view.c.
 */
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top.h"

enum { OPT_INTERVAL = OPT_CMD, OPT_ONCE };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: every queue)",
	    COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_INTERVAL, "interval", 0, "D", "refresh every D, 100ms..1d "
	    "(default 2s; with\n--once, the time between its two samples: "
	    "1s)", COMPLETE_DURATION, NULL, NULL, 0, 0 },
	{ OPT_ONCE, "once", 0, NULL, "print one snapshot, without escape "
	    "sequences,\nand exit", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command top_command = {
	"top", "live view of the queues: depth, rates, workers", opts,
	{ "", NULL }, CMD_READS_ONLY, cmd_top, NULL
};

struct top_args {
	int64_t interval_us;	/* 0: not given */
	int once, one;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct top_args *a = ctx;

	if (id == OPT_QUEUE)
		a->one = 1;
	else if (id == OPT_ONCE)
		a->once = 1;
	else if (id == OPT_INTERVAL) {
		a->interval_us = duration_arg(&top_command, "--interval", arg);
		if (a->interval_us < 100000 || a->interval_us > 86400000000LL)
			usage_error(&top_command, "--interval must be 100ms to 1d, "
			    "not '%s'", shown(arg));
	}
}

/* One sample of every queue (or g->queue) into *qs; exits on an error,
 * with the terminal restored first so that the message stays on it. */
static void
sample(struct mq_conn *c, const char *queue, struct top_queue **qs,
    size_t *nq)
{
	struct mq_queue_stats *s = NULL;
	struct mq_queue_workers *w = NULL;
	struct mq_error e;
	enum mq_status st;
	uint64_t archived;
	size_t n = 0, nw = 0;

	st = mq_stats(c, queue, &s, &n, &archived);
	if (st == MQ_OK)
		st = mq_workers(c, queue, &w, &nw);
	if (st != MQ_OK) {
		e = *mq_conn_error(c);
		mq_close(c);
		restore();
		die(&top_command, &e);
	}
	if (top_update(qs, nq, s, n, w, nw, mq_now_us()) != 0) {
		restore();
		exit(no_memory(&top_command));
	}
	free(s);
	free(w);
}

/* The live view on a terminal; returns the exit status. */
static int
live(struct mq_conn *c, const char *queue, struct top_frame *fr)
{
	struct top_queue *qs = NULL;
	size_t nq = 0;
	int64_t next;
	int keys = 1, r = W_TIME;

	enter_screen();
	for (;;) {
		if (r == W_TIME) {
			sample(c, queue, &qs, &nq);
			next = mq_now_us() + fr->interval_us;
		}
		measure(fr);
		fputs("\033[H", stdout);
		top_draw(stdout, fr, qs, nq);
		fputs("\033[J", stdout);
		fflush(stdout);
		if ((r = wait_until(next, &keys)) == W_QUIT || r == SIGINT)
			break;
		if (r == W_SUSPEND)
			suspend();	/* then drawn again */
		if (r > 0) {
			restore();
			free(qs);
			return 128 + r;
		}
	}
	restore();
	free(qs);
	return 0;
}

/* Snapshots, plain lines: one with --once (its rates from two samples),
 * else one every interval until a signal. Returns the exit status. */
static int
plain(struct mq_conn *c, const char *queue, struct top_frame *fr, int once)
{
	struct top_queue *qs = NULL;
	size_t nq = 0;
	int keys = 0, r, first = 1;

	sample(c, queue, &qs, &nq);
	for (;;) {
		if (!once) {
			if (!first)
				putchar('\n');
			top_draw(stdout, fr, qs, nq);
			/* a reader gone, or an error: main.c says */
			if (flush_stdout() != 0)
				break;
		}
		first = 0;
		if ((r = wait_until(mq_now_us() + fr->interval_us, &keys)) > 0) {
			free(qs);
			return 128 + r;
		}
		sample(c, queue, &qs, &nq);
		if (once) {
			top_draw(stdout, fr, qs, nq);
			break;
		}
	}
	free(qs);
	return 0;
}

/* Whether the locale's characters are UTF-8: the sparkline's blocks. */
static int
utf8_locale(void)
{
	int r = 0;

	if (setlocale(LC_CTYPE, "") != NULL)
		r = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	setlocale(LC_CTYPE, "C");
	return r;
}

int
cmd_top(int argc, char **argv, struct mq_global *g)
{
	struct top_args a = { 0, 0, 0 };
	struct top_frame fr;
	struct mq_conn *c;
	int n, tty, rc;

	n = parse_options(&top_command, argc, argv, g, option, &a);
	settle(&top_command, g, 0);
	no_operands(&top_command, n, argv);
	tty = !a.once && isatty(STDOUT_FILENO);
	memset(&fr, 0, sizeof fr);
	fr.table = g->table;
	fr.interval_us = a.interval_us ? a.interval_us :
	    a.once ? 1000000 : 2000000;
	fr.utf8 = utf8_locale();
	fr.tty = tty;
	catch_signals(tty);
	c = open_queue_table(&top_command, g);
	rc = tty ? live(c, a.one ? g->queue : NULL, &fr) :
	    plain(c, a.one ? g->queue : NULL, &fr, a.once);
	mq_close(c);
	return rc;
}
