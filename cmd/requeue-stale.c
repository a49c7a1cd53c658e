/*
 * requeue-stale.c: mq requeue-stale: jobs whose lease expired (their
 * consumer died or hung) go back to ready, or to dead once their attempts
 * are used up. For cron; safe to run from several hosts at once.
 */
#include <stdio.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_ALL = OPT_CMD, OPT_LIMIT, OPT_BATCH, OPT_DRY_RUN, OPT_QUIET };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: all queues)",
	    COMPLETE_QUEUE, NULL, "[--queue Q | --all-queues]", 0, 0 },
	{ OPT_ALL, "all-queues", 0, NULL,
	    "every queue (the default, said: MQ_QUEUE is not\nread here)",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_LIMIT, "limit", 0, "N", "move at most N jobs", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ OPT_BATCH, "batch", 0, "N", "jobs per transaction (default 100)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_DRY_RUN, "dry-run", 0, NULL,
	    "count what would move; change nothing", COMPLETE_NONE, NULL,
	    NULL, 0, 0 },
	{ OPT_QUIET, "quiet", 0, NULL, "no counts on standard output, no "
	    "progress", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command requeue_stale_command = {
	"requeue-stale", "put jobs of expired leases back", opts, { "", NULL },
	0, cmd_requeue_stale, NULL
};

struct requeue_args {
	struct mq_requeue_opts o;
	int all, one, quiet;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct requeue_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:	a->one = 1; break;
	case OPT_ALL:	a->all = 1; break;
	case OPT_LIMIT:
		a->o.limit = (uint64_t)int_arg(&requeue_stale_command, "--limit", arg,
		    1, 1000000000000LL);
		break;
	case OPT_BATCH:
		a->o.batch = (unsigned)int_arg(&requeue_stale_command, "--batch", arg,
		    1, 10000);
		break;
	case OPT_DRY_RUN: a->o.dry_run = 1; break;
	case OPT_QUIET:	a->quiet = 1; break;
	}
}

int
cmd_requeue_stale(int argc, char **argv, struct mq_global *g)
{
	struct requeue_args a = { { .batch = 100 }, 0, 0, 0 };
	struct mq_requeue_opts *o = &a.o;
	struct mq_requeue_report rep;
	struct progress p;
	int n;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;

	n = parse_options(&requeue_stale_command, argc, argv, g, option, &a);
	/* a cron job reaps every queue unless told one: MQ_QUEUE is not
	 * enough to narrow it */
	settle(&requeue_stale_command, g, 0);
	if (a.all && a.one)
		usage_error(&requeue_stale_command, "--queue and --all-queues exclude "
		    "each other");
	no_operands(&requeue_stale_command, n, argv);
	o->queue = a.one ? g->queue : NULL;

	c = open_queue_table(&requeue_stale_command, g);
	progress_start(&p, &requeue_stale_command, "reaped", a.quiet);
	o->progress = progress_jobs;
	o->ctx = &p;
	st = mq_requeue_stale(c, o, &rep);
	progress_clear(&p);
	e = *mq_conn_error(c);
	mq_close(c);
	/* a dry run's counts are its point; a failed run's say what moved */
	if (!a.quiet || o->dry_run || st != MQ_OK)
		printf("requeued %llu%s\ndead %llu%s\n",
		    (unsigned long long)rep.requeued,
		    o->dry_run ? " (dry run)" : "",
		    (unsigned long long)rep.dead,
		    o->dry_run ? " (dry run)" : "");
	if (st != MQ_OK)
		die(&requeue_stale_command, &e);
	/* a dry run only reads: its reader gone, it ends by SIGPIPE
	 * (mq(1) OUTPUT) */
	if (o->dry_run && flush_read_only() != 0)
		return EX_IOERR;
	return 0;
}
