/*
 * pause.c: mq pause and mq resume: stop and restart claims from one
 * queue, without touching its jobs; pushes still land.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"

static const char usage_pause[] =
    "usage: mq pause [--table T] [CONNECTION-OPTIONS] QUEUE";
static const char usage_resume[] =
    "usage: mq resume [--table T] [CONNECTION-OPTIONS] QUEUE";

static int
pause_or_resume(const char *cmd, int pause, int argc, char **argv,
    struct mq_global *g)
{
	static const struct option longopts[] = {
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	const char *queue;
	int opt, changed;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option(cmd, opt, optarg, g))
			continue;
		if (opt == 'h')
			help_exit(pause ? usage_pause : usage_resume,
			    "\noptions:\n");
		bad_option(cmd, opt, argv);
	}
	settle(cmd, g, 0);
	if (argc - optind != 1)
		usage_error(cmd, "one QUEUE expected");
	queue = argv[optind];
	if (!mq_valid_queue(queue))
		usage_error(cmd, "invalid queue name '%s': use 1 to %d of "
		    "A-Z a-z 0-9 _ . -", shown(queue), MQ_QUEUE_MAX);

	c = open_queue_table(cmd, g);
	st = mq_set_paused(c, queue, pause, &changed);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(cmd, &e);
	if (changed)
		printf("queue '%s' %s\n", queue, pause ? "paused" : "resumed");
	else
		printf("queue '%s' was %s\n", queue, pause ? "already paused" :
		    "not paused");
	return 0;
}

int
cmd_pause(int argc, char **argv, struct mq_global *g)
{
	return pause_or_resume("pause", 1, argc, argv, g);
}

int
cmd_resume(int argc, char **argv, struct mq_global *g)
{
	return pause_or_resume("resume", 0, argc, argv, g);
}
