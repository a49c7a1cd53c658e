/*
 * archive.c: mq archive: move finished jobs older than D out of the job
 * table into <table>_archive, or delete them, in short transactions.
 */
#include <stdio.h>

#include "commands.h"
#include "output/output.h"
#include "schedule.h"

enum { OPT_OLDER = OPT_CMD, OPT_BATCH, OPT_DEAD, OPT_PURGE, OPT_QUIET };

static const struct opt opts[] = {
	{ OPT_OLDER, "older-than", 0, "D",
	    "finished longer ago than D (default 7d)", COMPLETE_DURATION, NULL,
	    NULL, 0, 0 },
	{ OPT_BATCH, "batch", 0, "N", "jobs per transaction (default 500)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_DEAD, "dead", 0, NULL, "dead jobs too, not only done ones",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_PURGE, "purge", 0, NULL, "delete them instead of moving them",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_QUIET, "quiet", 0, NULL, "no count on standard output, no "
	    "progress", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command archive_command = {
	"archive", "move finished jobs to the archive table", opts,
	{ "", NULL }, 0, cmd_archive, NULL
};

struct archive_args {
	struct mq_archive_opts o;
	int quiet;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct archive_args *a = ctx;
	struct mq_archive_opts *o = &a->o;

	switch (id) {
	case OPT_OLDER:
		o->older_than_us = duration_arg(&archive_command, "--older-than",
		    arg);
		break;
	case OPT_BATCH:
		o->batch = (unsigned)int_arg(&archive_command, "--batch", arg, 1,
		    10000);
		break;
	case OPT_DEAD:	o->dead = 1; break;
	case OPT_PURGE:	o->purge = 1; break;
	case OPT_QUIET:	a->quiet = 1; break;
	}
}

int
cmd_archive(int argc, char **argv, struct mq_global *g)
{
	struct archive_args a = { { .older_than_us = 7 * 86400000000LL,
	    .batch = 500 }, 0 };
	struct mq_archive_opts *o = &a.o;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	struct progress p;
	enum mq_status ledger_st = MQ_OK;
	uint64_t moved, pruned = 0;
	int n;

	n = parse_options(&archive_command, argc, argv, g, option, &a);
	settle(&archive_command, g, 0);
	no_operands(&archive_command, n, argv);

	c = open_queue_table(&archive_command, g);
	progress_start(&p, &archive_command, o->purge ? "purged" : "archived",
	    a.quiet);
	o->progress = progress_jobs;
	o->ctx = &p;
	st = mq_archive(c, o, &moved);
	progress_clear(&p);
	/* then the calendar schedules' ledger, as old (mq-schedule(1)) */
	if (st == MQ_OK)
		ledger_st = mq_schedule_prune_ledger(c, o->older_than_us,
		    o->batch, &pruned);
	e = *mq_conn_error(c);
	mq_close(c);
	/* what was moved stays moved, also when a later batch failed: said
	 * then even if quiet */
	if (!a.quiet || st != MQ_OK || ledger_st != MQ_OK)
		printf("%s %llu job%s\n", o->purge ? "purged" : "archived",
		    (unsigned long long)moved, PLURAL(moved));
	if (pruned && (!a.quiet || ledger_st != MQ_OK))
		printf("pruned %llu ledger row%s of calendar schedules\n",
		    (unsigned long long)pruned, PLURAL(pruned));
	if (st != MQ_OK || ledger_st != MQ_OK)
		die(&archive_command, &e);
	return 0;
}
