/*
 * fail.c: mq fail: give a claimed job back, to be retried later or, once
 * its attempts are used up (or with --no-retry), to stay dead.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "units.h"

static const char usage[] =
    "usage: mq fail [--error TEXT] [--retry-in D | --no-retry] [--table T]"
    " [CONNECTION-OPTIONS] RECEIPT";

static const char options[] =
    "\noptions:\n"
    "  --error TEXT        what went wrong (kept, up to 4096 bytes)\n"
    "  --retry-in D        due again after D (default: backoff)\n"
    "  --no-retry          the job is dead now\n";

int
cmd_fail(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_ERROR = OPT_CMD, OPT_RETRY_IN, OPT_NO_RETRY };
	static const struct option longopts[] = {
		{"error", required_argument, NULL, OPT_ERROR},
		{"retry-in", required_argument, NULL, OPT_RETRY_IN},
		{"no-retry", no_argument, NULL, OPT_NO_RETRY},
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_fail_opts o = { .retry_in_us = -1 };
	struct mq_fail_result res;
	struct mq_receipt r;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	char due[DURATION_MAX];
	int opt;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option("fail", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_ERROR:
			o.error = optarg;
			o.error_len = strlen(optarg);
			break;
		case OPT_RETRY_IN:
			o.retry_in_us = duration_arg("fail", "--retry-in",
			    optarg);
			break;
		case OPT_NO_RETRY:
			o.no_retry = 1;
			break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("fail", opt, argv);
		}
	}
	settle("fail", g, 0);
	if (o.no_retry && o.retry_in_us >= 0)
		usage_error("fail", "--retry-in and --no-retry exclude each "
		    "other");
	if (argc - optind != 1)
		usage_error("fail", "one RECEIPT expected");
	if (mq_parse_receipt(argv[optind], &r) != MQ_OK)
		receipt_error("fail", argv[optind]);

	c = open_queue_table("fail", g);
	st = mq_fail(c, &r, &o, &res);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die("fail", &e);
	if (res.dead)
		printf("job %llu: dead after %u attempt%s\n",
		    (unsigned long long)r.id, res.attempts,
		    PLURAL(res.attempts));
	else
		printf("job %llu: due again in %s (after attempt %u)\n",
		    (unsigned long long)r.id, fmt_duration(due, sizeof due,
		    res.retry_in_us), res.attempts);
	return 0;
}
