/*
 * extend.c: mq extend: move a claimed job's lease deadline (a heartbeat
 * for long work).
 */
#include <stdio.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq extend --lease D [--table T] [CONNECTION-OPTIONS] RECEIPT";

static const char options[] =
    "\noptions:\n"
    "  --lease D           the lease ends D from now\n";

int
cmd_extend(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_LEASE = OPT_CMD };
	static const struct option longopts[] = {
		{"lease", required_argument, NULL, OPT_LEASE},
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	long long lease = -1;
	struct mq_receipt r;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	int opt;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option("extend", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_LEASE:
			lease = duration_arg("extend", "--lease", optarg);
			if (lease < 1000000)
				usage_error("extend", "--lease must be at "
				    "least 1s");
			break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("extend", opt, argv);
		}
	}
	settle("extend", g, 0);
	if (lease < 0)
		usage_error("extend", "--lease D is required");
	if (argc - optind != 1)
		usage_error("extend", "one RECEIPT expected");
	if (mq_parse_receipt(argv[optind], &r) != MQ_OK)
		receipt_error("extend", argv[optind]);

	c = open_queue_table("extend", g);
	st = mq_extend(c, &r, lease);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die("extend", &e);
	return 0;
}
