/*
 * requeue-stale.c: mq requeue-stale: jobs whose lease expired (their
 * consumer died or hung) go back to ready, or to dead once their attempts
 * are used up. For cron; safe to run from several hosts at once.
 */
#include <stdio.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq requeue-stale [--queue Q | --all-queues] [--limit N]"
    " [--batch N] [--dry-run] [--quiet] [--table T] [CONNECTION-OPTIONS]";

static const char options[] =
    "\noptions:\n"
    "  --queue Q           only this queue (default: all queues)\n"
    "  --all-queues        every queue, even with MQ_QUEUE set\n"
    "  --limit N           move at most N jobs\n"
    "  --batch N           jobs per transaction (default 100)\n"
    "  --dry-run           count what would move; change nothing\n"
    "  --quiet             no counts on standard output, no progress\n";

int
cmd_requeue_stale(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_ALL = OPT_CMD, OPT_LIMIT, OPT_BATCH, OPT_DRY_RUN,
	    OPT_QUIET };
	static const struct option longopts[] = {
		{"all-queues", no_argument, NULL, OPT_ALL},
		{"limit", required_argument, NULL, OPT_LIMIT},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"quiet", no_argument, NULL, OPT_QUIET},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_requeue_opts o = { .batch = 100 };
	struct mq_requeue_report rep;
	int opt, all = 0, one = 0, quiet = 0;
	struct progress p;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (opt == OPT_QUEUE)
			one = 1;
		if (common_option("requeue-stale", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_ALL:	all = 1; break;
		case OPT_LIMIT:
			o.limit = (uint64_t)int_arg("requeue-stale", "--limit",
			    optarg, 1, 1000000000000LL);
			break;
		case OPT_BATCH:
			o.batch = (unsigned)int_arg("requeue-stale", "--batch",
			    optarg, 1, 10000);
			break;
		case OPT_DRY_RUN: o.dry_run = 1; break;
		case OPT_QUIET:	quiet = 1; break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("requeue-stale", opt, argv);
		}
	}
	/* a cron job reaps every queue unless told one: MQ_QUEUE is not
	 * enough to narrow it */
	settle("requeue-stale", g, 0);
	if (all && one)
		usage_error("requeue-stale", "--queue and --all-queues exclude "
		    "each other");
	if (optind < argc)
		usage_error("requeue-stale", "unexpected argument '%s'",
		    shown(argv[optind]));
	o.queue = one ? g->queue : NULL;

	c = open_queue_table("requeue-stale", g);
	progress_start(&p, "requeue-stale", "reaped", quiet);
	o.progress = progress_jobs;
	o.progress_arg = &p;
	st = mq_requeue_stale(c, &o, &rep);
	progress_clear(&p);
	e = *mq_conn_error(c);
	mq_close(c);
	/* a dry run's counts are its point; a failed run's say what moved */
	if (!quiet || o.dry_run || st != MQ_OK)
		printf("requeued %llu%s\ndead %llu%s\n",
		    (unsigned long long)rep.requeued,
		    o.dry_run ? " (dry run)" : "",
		    (unsigned long long)rep.dead,
		    o.dry_run ? " (dry run)" : "");
	if (st != MQ_OK)
		die("requeue-stale", &e);
	return 0;
}
