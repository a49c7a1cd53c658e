/*
 * extend.c: mq extend: move a claimed job's lease deadline (a heartbeat
 * for long work).
 */
#include <stdio.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_LEASE = OPT_CMD };

static const struct opt opts[] = {
	{ OPT_LEASE, "lease", 0, "D", "the lease ends D from now",
	    COMPLETE_DURATION, NULL, "--lease D", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command extend_command = {
	"extend", "extend a claimed job's lease", opts, { "RECEIPT", NULL },
	0, cmd_extend, NULL
};

static void
option(void *ctx, int id, const char *arg)
{
	long long *lease = ctx;

	if (id != OPT_LEASE)
		return;
	*lease = duration_arg(&extend_command, "--lease", arg);
	if (*lease < 1000000)
		usage_error(&extend_command, "--lease must be at least 1s");
}

int
cmd_extend(int argc, char **argv, struct mq_global *g)
{
	long long lease = -1;
	struct mq_receipt r;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	int n;

	n = parse_options(&extend_command, argc, argv, g, option, &lease);
	settle(&extend_command, g, 0);
	if (lease < 0)
		usage_error(&extend_command, "--lease D is required");
	if (n != 1)
		usage_error(&extend_command, "one RECEIPT expected");
	if (mq_parse_receipt(argv[1], &r) != MQ_OK)
		receipt_error(&extend_command, argv[1]);

	c = open_queue_table(&extend_command, g);
	st = mq_extend(c, &r, lease);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&extend_command, &e);
	return 0;
}
