/*
 * retry.c: mq retry: dead jobs back to ready, by id or by a filter over
 * one queue's dead jobs, in short batches, at a rate if asked (the SQS
 * redrive); --dry-run lists them instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_ERROR = OPT_CMD, OPT_SINCE, OPT_BEFORE, OPT_ALL, OPT_TO_QUEUE,
	OPT_RATE, OPT_BATCH, OPT_DRY_RUN, OPT_QUIET };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "the dead jobs of queue Q (with a filter "
	    "or --all)", COMPLETE_QUEUE, NULL, "--queue Q", FORM(1), 0 },
	{ OPT_ERROR, "error", 0, "PATTERN",
	    "only jobs whose last error contains PATTERN\n(plain text: % and _ "
	    "are not wildcards)", COMPLETE_NONE, NULL, NULL, FORM(1), 0 },
	{ OPT_SINCE, "since", 0, "D", "only jobs that died within D",
	    COMPLETE_DURATION, NULL, NULL, FORM(1), 0 },
	{ OPT_BEFORE, "before", 0, "D", "only jobs that died over D ago",
	    COMPLETE_DURATION, NULL, NULL, FORM(1), 0 },
	{ OPT_ALL, "all", 0, NULL, "every dead job of the queue (no filter)",
	    COMPLETE_NONE, NULL, NULL, FORM(1), 0 },
	{ OPT_TO_QUEUE, "to-queue", 0, "Q2", "into queue Q2 (default: their "
	    "own)", COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_RATE, "rate", 0, "N/D", "at most N jobs in any D (10/s, "
	    "600/5m; N alone: a second)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_BATCH, "batch", 0, "N", "jobs per transaction (default 100)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_DRY_RUN, "dry-run", 0, NULL, "list their ids; change nothing",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_QUIET, "quiet", 0, NULL, "no count on standard output, no "
	    "progress", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command retry_command = {
	"retry", "put dead jobs back to ready", opts, { "ID...", "" },
	0, cmd_retry, NULL
};

/* Ids shown in a message at most; the count says how many more. */
#define SHOWN_IDS 20

struct id_note {
	uint64_t ids[SHOWN_IDS];
	uint64_t n;
};

struct retry_args {
	struct mq_retry_opts o;
	int queue_given, filter, all, quiet;
	struct progress p;
	struct id_note not_dead, dedup, parents;
	sigset_t held;
};

/* --rate: N/D as mq limit --rate reads it (cli's rate_arg()), N from 1
 * to 10^6: jobs a second */
static double
parse_rate(const char *arg)
{
	uint64_t n;
	int64_t us;

	rate_arg(&retry_command, "--rate", arg, 1000000, &n, &us);
	return (double)n * 1e6 / (double)us;
}

static void
option(void *ctx, int id, const char *arg)
{
	struct retry_args *a = ctx;
	struct mq_retry_opts *o = &a->o;

	switch (id) {
	case OPT_QUEUE:	a->queue_given = 1; break;
	case OPT_ERROR:
		o->error = arg;
		o->error_len = strlen(arg);
		a->filter = 1;
		break;
	case OPT_SINCE:
		o->since_us = duration_arg(&retry_command, "--since", arg);
		a->filter = 1;
		break;
	case OPT_BEFORE:
		o->before_us = duration_arg(&retry_command, "--before", arg);
		a->filter = 1;
		break;
	case OPT_ALL:	a->all = 1; break;
	case OPT_TO_QUEUE:
		if (!mq_valid_queue(arg))
			usage_error(&retry_command, "invalid queue name '%s' in "
			    "--to-queue: use 1 to %d of A-Z a-z 0-9 _ . -",
			    shown(arg), MQ_QUEUE_MAX);
		o->to_queue = arg;
		break;
	case OPT_RATE:	o->rate = parse_rate(arg); break;
	case OPT_BATCH:
		o->batch = (unsigned)int_arg(&retry_command, "--batch", arg, 1,
		    10000);
		break;
	case OPT_DRY_RUN: o->dry_run = 1; break;
	case OPT_QUIET:	a->quiet = 1; break;
	}
}

static void
note(struct id_note *n, uint64_t id)
{
	if (n->n < SHOWN_IDS)
		n->ids[n->n] = id;
	n->n++;
}

/* "mq retry: N jobs WHAT: ID ID ... (and M more)" */
static void
put_note(const struct id_note *n, const char *what)
{
	struct err_line l;
	uint64_t i;
	FILE *f;

	if (n->n == 0)
		return;
	f = err_line_begin(&l);
	fprintf(f, "mq retry: %llu job%s %s:",
	    (unsigned long long)n->n, PLURAL(n->n), what);
	for (i = 0; i < n->n && i < SHOWN_IDS; i++)
		fprintf(f, " %llu", (unsigned long long)n->ids[i]);
	if (n->n > SHOWN_IDS)
		fprintf(f, " (and %llu more)",
		    (unsigned long long)(n->n - SHOWN_IDS));
	fputc('\n', f);
	err_line_end(&l);
}

static void
each(uint64_t id, void *ctx)
{
	(void)ctx;
	printf("%llu\n", (unsigned long long)id);
}

static void
skipped(uint64_t id, enum mq_retry_skip why, void *ctx)
{
	struct retry_args *a = ctx;

	note(why == MQ_RETRY_DEDUP ? &a->dedup : why == MQ_RETRY_PARENTS ?
	    &a->parents : &a->not_dead, id);
}

static void
progress(uint64_t jobs, void *ctx)
{
	progress_add(&((struct retry_args *)ctx)->p, jobs);
}

/* Between batches: the stop signals may arrive (they are held during a
 * batch, so that the one in flight commits whole), and the rate's pause
 * passes unless one does. */
static int
between(int64_t us, void *ctx)
{
	struct retry_args *a = ctx;
	struct timespec ts;

	if (!stop_signal_pending(&a->held) && us > 0) {
		ts.tv_sec = us / 1000000;
		ts.tv_nsec = (long)(us % 1000000) * 1000;
		nanosleep(&ts, NULL);	/* a signal ends it early */
	}
	sigprocmask(SIG_BLOCK, &a->held, NULL);
	return stop_signal != 0;
}

/* The operands as ids; exits 64 naming one that is not. */
static uint64_t *
parse_ids(int n, char **argv)
{
	uint64_t *ids = calloc((size_t)n, sizeof *ids);
	int i;

	if (ids == NULL) {
		exit(no_memory(&retry_command));
	}
	for (i = 0; i < n; i++)
		if (parse_id(argv[1 + i], &ids[i]) != 0)
			usage_error(&retry_command, "invalid job id '%s': a positive "
			    "number, as push prints it", shown(argv[1 + i]));
	return ids;
}

/* The selection: ids, or --queue with a filter or --all. */
static void
check_selection(const struct retry_args *a, int n)
{
	if (n > 0 && (a->queue_given || a->filter || a->all))
		usage_error(&retry_command, "job ids and --queue, --error, --since, "
		    "--before or --all exclude each other");
	if (n > 0)
		return;
	if (!a->queue_given)
		usage_error(&retry_command, "no job id given, nor --queue Q");
	if (!a->filter && !a->all)
		usage_error(&retry_command, "--queue alone retries every dead job of "
		    "the queue: add --all to mean it, or a filter");
}

int
cmd_retry(int argc, char **argv, struct mq_global *g)
{
	struct retry_args a;
	struct mq_retry_opts *o = &a.o;
	struct mq_retry_report rep;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	uint64_t *ids = NULL;
	int n;

	memset(&a, 0, sizeof a);
	o->since_us = o->before_us = -1;
	o->batch = 100;
	n = parse_options(&retry_command, argc, argv, g, option, &a);
	/* MQ_QUEUE does not select: a redrive names its queue */
	settle(&retry_command, g, 0);
	check_selection(&a, n);
	if (n > 0) {
		ids = parse_ids(n, argv);
		o->ids = ids;
		o->n_ids = (size_t)n;
	} else {
		o->queue = g->queue;
	}

	c = open_queue_table(&retry_command, g);
	catch_stop(&a.held);
	sigprocmask(SIG_BLOCK, &a.held, NULL);
	progress_start(&a.p, &retry_command, "retried", a.quiet || o->dry_run);
	o->fn = each;
	o->skipped = skipped;
	o->progress = progress;
	o->between = between;
	o->ctx = &a;
	st = mq_retry(c, o, &rep);
	progress_clear(&a.p);
	e = *mq_conn_error(c);
	mq_close(c);
	free(ids);
	/* what was retried stays retried, also when a later batch failed:
	 * said then even if quiet */
	if (o->dry_run && !a.quiet)
		say(&retry_command, "%llu job%s would be retried (dry "
		    "run)", (unsigned long long)rep.retried,
		    PLURAL(rep.retried));
	else if (!o->dry_run && (!a.quiet || st != MQ_OK || rep.stopped))
		printf("retried %llu job%s\n", (unsigned long long)rep.retried,
		    PLURAL(rep.retried));
	put_note(&a.not_dead, "not dead (or no such job)");
	put_note(&a.dedup, "left dead: their dedup key is live again in "
	    "the queue");
	put_note(&a.parents, "left dead: a parent of theirs can never "
	    "finish (purged, dead in the archive, or dead below one)");
	/* dependents (mq push --after): what the retry did to them */
	if (!o->dry_run && rep.wait_again)
		say(&retry_command, "%llu of the jobs retried wait again for "
		    "their parents (mq push --after): they run once those are "
		    "done", (unsigned long long)rep.wait_again);
	if (!o->dry_run && rep.stay_dead)
		say(&retry_command, "%llu dependent%s cancelled when the jobs "
		    "retried died %s dead: mq retry %s too, and %s again for "
		    "%s parents", (unsigned long long)rep.stay_dead,
		    PLURAL(rep.stay_dead), rep.stay_dead == 1 ? "stays" :
		    "stay", rep.stay_dead == 1 ? "it" : "them",
		    rep.stay_dead == 1 ? "it waits" : "they wait",
		    rep.stay_dead == 1 ? "its" : "their");
	if (st != MQ_OK)
		die(&retry_command, &e);
	if (rep.stopped) {
		say(&retry_command, "stopped by signal %d after the "
		    "batch in flight", (int)stop_signal);
		return 128 + stop_signal;
	}
	/* a dry run only reads: its reader gone, it ends by SIGPIPE
	 * (mq(1) OUTPUT) */
	if (o->dry_run && flush_read_only() != 0)
		return EX_IOERR;
	return rep.not_dead || rep.dedup || rep.parents ? 1 : 0;
}
