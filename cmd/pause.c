/*
 * pause.c: mq pause and mq resume: stop and restart claims from one
 * queue, without touching its jobs; pushes still land.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

static const struct opt opts[] = {
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command pause_command = {
	"pause", "stop claims from a queue", opts, { "QUEUE", NULL },
	CMD_HOLDS_STOPS, cmd_pause, NULL
};

const struct command resume_command = {
	"resume", "restart claims from a queue", opts, { "QUEUE", NULL },
	CMD_HOLDS_STOPS, cmd_resume, NULL
};

static int
pause_or_resume(const struct command *cmd, int pause, int argc,
    char **argv, struct mq_global *g)
{
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	const char *queue;
	int changed, n;

	n = parse_options(cmd, argc, argv, g, NULL, NULL);
	settle(cmd, g, 0);
	if (n != 1)
		usage_error(cmd, "one QUEUE expected");
	queue = argv[1];
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
	return pause_or_resume(&pause_command, 1, argc, argv, g);
}

int
cmd_resume(int argc, char **argv, struct mq_global *g)
{
	return pause_or_resume(&resume_command, 0, argc, argv, g);
}
