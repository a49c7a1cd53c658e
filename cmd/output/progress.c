/*
 * progress.c: part of mq push, mq archive and mq requeue-stale
 * (documented in mq(1) OUTPUT and their pages), not a command: progress
 * and summary of long work (push --lines and -0,
 * archive, requeue-stale). On a terminal, one line on stderr, rewritten
 * in place at most four times a second, so that an operator sees the work
 * move and how fast; elsewhere nothing until the summary, so that logs
 * and pipes get no carriage returns. Standard output is never touched:
 * ids and counts there are what scripts read.
 */
#include <stdio.h>
#include <unistd.h>

#include "cli/options.h"
#include "output/output.h"
#include "output/units.h"

#define PROGRESS_EVERY_US 250000

void
progress_start(struct progress *p, const struct command *cmd,
    const char *done, int quiet)
{
	p->cmd = cmd->name;
	p->done = done;
	p->quiet = quiet;
	p->tty = !quiet && isatty(2);
	p->start = p->shown_at = mq_now_us();
	p->shown = 0;
	p->n = 0;
}

/* n per second over us, 0 if no time passed */
static unsigned long long
rate(uint64_t n, int64_t us)
{
	return us > 0 ? (unsigned long long)((double)n * 1e6 / (double)us) : 0;
}

void
progress_add(struct progress *p, uint64_t n)
{
	char d[DURATION_MAX];
	int64_t now;
	int len;

	p->n += n;
	if (!p->tty || (now = mq_now_us()) - p->shown_at < PROGRESS_EVERY_US)
		return;
	p->shown_at = now;
	len = fprintf(stderr, "\rmq %s: %llu job%s %s in %s, %llu/s",
	    p->cmd, (unsigned long long)p->n, PLURAL(p->n), p->done,
	    fmt_duration(d, sizeof d, now - p->start),
	    rate(p->n, now - p->start));
	/* a shorter line than the last must cover it whole */
	if (len > 0 && (size_t)len < p->shown)
		fprintf(stderr, "%*s", (int)(p->shown - (size_t)len), "");
	if (len > 0 && (size_t)len > p->shown)
		p->shown = (size_t)len;
	fflush(stderr);
}

void
progress_clear(struct progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r%*s\r", (int)p->shown - 1, "");
	p->shown = 0;
	/* for good: what follows (a message, the summary) starts a line */
	p->tty = 0;
}

void
progress_summary(struct progress *p)
{
	char d[DURATION_MAX];
	int64_t us = mq_now_us() - p->start;

	progress_clear(p);
	if (p->quiet)
		return;
	fprintf(stderr, "mq %s: %s %llu job%s in %s (%llu/s)\n", p->cmd,
	    p->done, (unsigned long long)p->n, PLURAL(p->n),
	    fmt_duration(d, sizeof d, us), rate(p->n, us));
}

void
progress_jobs(uint64_t jobs, void *ctx)
{
	progress_add(ctx, jobs);
}
