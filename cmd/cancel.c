/*
 * cancel.c: mq cancel: stop jobs that have not run yet (ready, scheduled
 * or recurring): each becomes dead with a "cancelled" note. A job being
 * run is left alone unless --force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_FORCE = OPT_CMD };

static const struct opt opts[] = {
	{ OPT_FORCE, "force", 0, NULL,
	    "cancel leased jobs too (their consumer's ack\nthen fails: lease "
	    "lost)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command cancel_command = {
	"cancel", "stop jobs that have not run (recurring too)", opts,
	{ "ID...", NULL }, CMD_HOLDS_STOPS, cmd_cancel, NULL
};

static void
option(void *ctx, int id, const char *arg)
{
	if (id == OPT_FORCE)
		*(int *)ctx = 1;
}

int
cmd_cancel(int argc, char **argv, struct mq_global *g)
{
	struct mq_cancel_result res;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	uint64_t *ids;
	int force = 0, i, n, rc = 0;

	n = parse_options(&cancel_command, argc, argv, g, option, &force);
	settle(&cancel_command, g, 0);
	if (n == 0)
		usage_error(&cancel_command, "no job id given");
	if ((ids = calloc((size_t)n, sizeof *ids)) == NULL) {
		return no_memory(&cancel_command);
	}
	/* all ids are checked before any job is touched */
	for (i = 0; i < n; i++)
		if (parse_id(argv[1 + i], &ids[i]) != 0) {
			free(ids);
			usage_error(&cancel_command, "invalid job id '%s': a "
			    "positive number, as push prints it",
			    shown(argv[1 + i]));
		}

	c = open_queue_table(&cancel_command, g);
	for (i = 0; i < n; i++) {
		int seen = 0, j;

		/* a stop signal ends the list here: the jobs before it are
		 * cancelled and said, those after it not touched (main()
		 * exits 128+N) */
		if (stop_held())
			break;

		for (j = 0; j < i && !seen; j++)	/* once per job */
			seen = ids[j] == ids[i];
		if (seen)
			continue;
		st = mq_cancel(c, ids[i], force, &res);
		if (st == MQ_ELEASE) {
			say(&cancel_command, "job %llu is leased (being "
			    "run): not cancelled; --force cancels it anyway",
			    (unsigned long long)ids[i]);
			rc = EXIT_LEASE;
		} else if (st == MQ_EMPTY) {
			if (res.state[0])
				say(&cancel_command, "job %llu is %s "
				    "already: nothing to cancel",
				    (unsigned long long)ids[i],
				    shown(res.state));
			else if (res.found)
				say(&cancel_command, "job %llu has a state "
				    "that is none of mq's (''): it is not run; "
				    "mq requeue-stale buries it",
				    (unsigned long long)ids[i]);
			else
				say(&cancel_command, "no job %llu in "
				    "table %s (archived, purged or never "
				    "pushed)", (unsigned long long)ids[i],
				    g->table);
			if (rc == 0)
				rc = EXIT_EMPTY;
		} else if (st != MQ_OK) {
			e = *mq_conn_error(c);
			mq_close(c);
			free(ids);
			die(&cancel_command, &e);
		} else if (strcmp(res.state, "leased") == 0) {
			printf("job %llu cancelled (it was leased: its "
			    "consumer's lease is lost)\n",
			    (unsigned long long)ids[i]);
		} else {
			printf("job %llu cancelled\n",
			    (unsigned long long)ids[i]);
		}
	}
	mq_close(c);
	free(ids);
	return rc;
}
