/*
 * fail.c: mq fail: give a claimed job back, to be retried later or, once
 * its attempts are used up (or with --no-retry), to stay dead.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_ERROR = OPT_CMD, OPT_RETRY_IN, OPT_NO_RETRY };

static const struct opt opts[] = {
	{ OPT_ERROR, "error", 0, "TEXT",
	    "what went wrong (kept, up to 4096 bytes)", COMPLETE_NONE, NULL,
	    NULL, 0, 0 },
	{ OPT_RETRY_IN, "retry-in", 0, "D",
	    "due again after D (default: backoff)", COMPLETE_DURATION, NULL,
	    "[--retry-in D | --no-retry]", 0, 0 },
	{ OPT_NO_RETRY, "no-retry", 0, NULL, "the job is dead now",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command fail_command = {
	"fail", "give a claimed job back, to retry or bury", opts,
	{ "RECEIPT", NULL }, 0, cmd_fail, NULL
};

static void
option(void *ctx, int id, const char *arg)
{
	struct mq_fail_opts *o = ctx;

	switch (id) {
	case OPT_ERROR:
		o->error = arg;
		o->error_len = strlen(arg);
		break;
	case OPT_RETRY_IN:
		o->retry_in_us = duration_arg(&fail_command, "--retry-in", arg);
		break;
	case OPT_NO_RETRY:
		o->no_retry = 1;
		break;
	}
}

int
cmd_fail(int argc, char **argv, struct mq_global *g)
{
	struct mq_fail_opts o = { .retry_in_us = -1 };
	struct mq_fail_result res;
	struct mq_receipt r;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	char due[DURATION_MAX];
	int n;

	n = parse_options(&fail_command, argc, argv, g, option, &o);
	settle(&fail_command, g, 0);
	if (o.no_retry && o.retry_in_us >= 0)
		usage_error(&fail_command, "--retry-in and --no-retry exclude each "
		    "other");
	if (n != 1)
		usage_error(&fail_command, "one RECEIPT expected");
	if (mq_parse_receipt(argv[1], &r) != MQ_OK)
		receipt_error(&fail_command, argv[1]);

	c = open_queue_table(&fail_command, g);
	st = mq_fail(c, &r, &o, &res);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&fail_command, &e);
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
