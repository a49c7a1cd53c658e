/*
 * purge.c: mq purge: delete a queue's waiting jobs. Guarded: it needs
 * the queue named on the command line and --yes; leased jobs only with
 * --leased as well.
 */
#include <stdio.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_YES = OPT_CMD, OPT_LEASED };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q",
	    "the queue (required; MQ_QUEUE is not enough)", COMPLETE_QUEUE,
	    NULL, "--queue Q", 0, 0 },
	{ OPT_YES, "yes", 0, NULL, "confirm: delete its waiting jobs",
	    COMPLETE_NONE, NULL, "--yes", 0, 0 },
	{ OPT_LEASED, "leased", 0, NULL, "its leased jobs too", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command purge_command = {
	"purge", "delete a queue's waiting jobs", opts, { "", NULL },
	0, cmd_purge, NULL
};

struct purge_args {
	int yes, leased, named;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct purge_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:		a->named = 1; break;
	case OPT_YES:		a->yes = 1; break;
	case OPT_LEASED:	a->leased = 1; break;
	}
}

int
cmd_purge(int argc, char **argv, struct mq_global *g)
{
	struct purge_args a = { 0, 0, 0 };
	int n;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	uint64_t deleted;

	n = parse_options(&purge_command, argc, argv, g, option, &a);
	settle(&purge_command, g, 0);
	no_operands(&purge_command, n, argv);
	if (!a.named)
		usage_error(&purge_command, "name the queue with --queue Q");
	if (!a.yes)
		usage_error(&purge_command, "this deletes the waiting jobs of queue "
		    "'%s': add --yes to confirm", g->queue);

	c = open_queue_table(&purge_command, g);
	st = mq_purge(c, g->queue, a.leased, &deleted);
	e = *mq_conn_error(c);
	mq_close(c);
	printf("purged %llu job%s from queue '%s'\n",
	    (unsigned long long)deleted, PLURAL(deleted), g->queue);
	if (st != MQ_OK)
		die(&purge_command, &e);
	return 0;
}
