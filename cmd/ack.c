/*
 * ack.c: mq ack: mark claimed jobs done, all receipts in one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

static const struct opt opts[] = {
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command ack_command = {
	"ack", "mark claimed jobs done", opts, { "RECEIPT...", NULL },
	0, cmd_ack, NULL
};

int
cmd_ack(int argc, char **argv, struct mq_global *g)
{
	struct mq_receipt *r;
	unsigned char *lost;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	int i, j, k, n;

	n = parse_options(&ack_command, argc, argv, g, NULL, NULL);
	settle(&ack_command, g, 0);
	if (n == 0)
		usage_error(&ack_command, "no receipt given");
	r = calloc((size_t)n, sizeof *r);
	lost = calloc((size_t)n, 1);
	if (r == NULL || lost == NULL) {
		return no_memory(&ack_command);
	}
	/* all receipts are checked before any is acked; one given twice
	 * is acked once (its second ack would find the job done: "lease
	 * lost", status 2, for a job that was acked) */
	for (i = k = 0; i < n; i++) {
		if (mq_parse_receipt(argv[1 + i], &r[k]) != MQ_OK) {
			free(r);
			free(lost);
			receipt_error(&ack_command, argv[1 + i]);
		}
		for (j = 0; j < k; j++)
			if (r[j].id == r[k].id &&
			    strcmp(r[j].token, r[k].token) == 0)
				break;
		if (j == k)
			k++;
	}
	n = k;

	c = open_queue_table(&ack_command, g);
	st = mq_ack(c, r, (size_t)n, lost);
	if (st != MQ_OK && st != MQ_ELEASE) {
		e = *mq_conn_error(c);
		mq_close(c);
		die(&ack_command, &e);
	}
	mq_close(c);
	for (i = 0; i < n; i++)
		if (lost[i])
			say(&ack_command, "job %llu: %s",
			    (unsigned long long)r[i].id,
			    mq_strerror(MQ_ELEASE));
	free(r);
	free(lost);
	return exit_status(st);
}
