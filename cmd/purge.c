/*
 * purge.c: mq purge: delete a queue's waiting jobs. Guarded: it needs
 * the queue named on the command line and --yes; leased jobs only with
 * --leased as well.
 */
#include <stdio.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq purge --queue Q --yes [--leased] [--table T]"
    " [CONNECTION-OPTIONS]";

static const char options[] =
    "\noptions:\n"
    "  --queue Q           the queue (required; MQ_QUEUE is not enough)\n"
    "  --yes               confirm: delete its waiting jobs\n"
    "  --leased            its leased jobs too\n";

int
cmd_purge(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_YES = OPT_CMD, OPT_LEASED };
	static const struct option longopts[] = {
		{"yes", no_argument, NULL, OPT_YES},
		{"leased", no_argument, NULL, OPT_LEASED},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	int opt, yes = 0, leased = 0, named = 0;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	uint64_t deleted;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (opt == OPT_QUEUE)
			named = 1;
		if (common_option("purge", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_YES:		yes = 1; break;
		case OPT_LEASED:	leased = 1; break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("purge", opt, argv);
		}
	}
	settle("purge", g, 0);
	if (optind < argc)
		usage_error("purge", "unexpected argument '%s'",
		    shown(argv[optind]));
	if (!named)
		usage_error("purge", "name the queue with --queue Q");
	if (!yes)
		usage_error("purge", "this deletes the waiting jobs of queue "
		    "'%s': add --yes to confirm", g->queue);

	c = open_queue_table("purge", g);
	st = mq_purge(c, g->queue, leased, &deleted);
	e = *mq_conn_error(c);
	mq_close(c);
	printf("purged %llu job%s from queue '%s'\n",
	    (unsigned long long)deleted, PLURAL(deleted), g->queue);
	if (st != MQ_OK)
		die("purge", &e);
	return 0;
}
