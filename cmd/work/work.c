/*
 * work.c: mq work -- CMD: a consumer loop for shell users. Claims jobs,
 * runs CMD once per job (work/jobs.c), acks on exit 0 and fails
 * otherwise; extends leases while jobs wait or run; waits for pushes on a
 * non-blocking connection parked in a marked SLEEP. One poll() loop owns
 * the children's stderr, the signals (through a self-pipe), the timers
 * and the waiting connection, and never waits for the server itself: two
 * threads do (work/db.c), each on a connection of its own, the work
 * thread for claims, acks, fails and give-backs, the heartbeat thread for
 * extensions. A statement that waits (a row lock another session holds,
 * a server that hangs) therefore holds up neither the timeouts, nor the
 * signals, nor the other jobs' heartbeats (which do not wait for locks
 * either: mq_try_extend); and a job whose lease could not be extended in
 * time is stopped as lost, not left running unnoticed.
 *
 * Throughput: a claim takes more jobs than --concurrency (the extra ones
 * wait, leased, in a local buffer): as many again, and up to 16 times as
 * many when jobs are short (PREFETCH_US of work by their recent average),
 * and the acks of jobs that ended ride in the next claim's transaction
 * (after at most ACK_DELAY_US), so short jobs cost a fraction of a
 * transaction each while long ones are not held from other workers.
 *
 * This file reads the options; the rest is in files by purpose, sharing
 * one struct worker (work.h): work/loop.c (the poll() loop and its
 * start), work/slots.c (the held jobs: started, reaped, timed out),
 * work/jobs.c (the child processes), work/claim.c (the work thread's
 * task: acks, fails, give-backs and a claim), work/result.c (its outcome,
 * and the backoff after a failure), work/heartbeat.c (lease extensions),
 * work/wait.c (waiting for pushes), work/stop.c (signals, stopping) and
 * work/db.c (the two server threads).
 */
#include <string.h>

#include "work.h"

enum { OPT_CONC = OPT_CMD, OPT_LEASE, OPT_TIMEOUT, OPT_MAX_JOBS,
    OPT_EXIT_EMPTY, OPT_WAIT, OPT_CLAIM };

/* The first operand ends the options: the command and its arguments
 * stay as they are, options or not. */
static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q[,Q...]",
	    "queue to work on, or queues in order of\npreference (default: "
	    "default; MQ_QUEUE)", COMPLETE_QUEUES, NULL, NULL, 0, 0 },
	{ OPT_CONC, "concurrency", 0, "N",
	    "run up to N jobs at once, 1..128 (default 1)", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ OPT_LEASE, "lease", 0, "D",
	    "lease per job, extended while held (default 1m)",
	    COMPLETE_DURATION, NULL, NULL, 0, 0 },
	{ OPT_TIMEOUT, "timeout", 0, "D",
	    "kill and fail a job running longer than D", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_MAX_JOBS, "max-jobs", 0, "N", "claim N jobs, finish them, exit",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_EXIT_EMPTY, "exit-when-empty", 0, NULL,
	    "exit when no job is due and none runs", COMPLETE_NONE, NULL,
	    "[--exit-when-empty | --wait D]", 0, 0 },
	{ OPT_WAIT, "wait", 0, "D",
	    "exit when no job came for D (default: wait on)",
	    COMPLETE_DURATION, NULL, "", 0, 0 },
	{ OPT_CLAIM, "claim", 0, "skip-locked|update", "how jobs are claimed "
	    "(default: by server)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command work_command = {
	"work", "run a command for each job: a consumer loop", opts,
	{ "-- CMD [ARG...]", NULL },
	CMD_POSIX | CMD_QUEUE_LIST, cmd_work, NULL
};

static void
work_option(void *ctx, int id, const char *arg)
{
	struct worker *w = ctx;

	switch (id) {
	case OPT_CONC:
		w->concurrency = (int)int_arg(&work_command, "--concurrency", arg, 1,
		    MAX_CONCURRENCY);
		break;
	case OPT_LEASE:
		w->lease_us = duration_arg(&work_command, "--lease", arg);
		if (w->lease_us < 3000000)
			usage_error(&work_command, "--lease must be at least 3s");
		break;
	case OPT_TIMEOUT:
		w->timeout_us = duration_arg(&work_command, "--timeout", arg);
		if (w->timeout_us == 0)
			usage_error(&work_command, "--timeout must be above 0");
		break;
	case OPT_MAX_JOBS:
		w->max_jobs = int_arg(&work_command, "--max-jobs", arg, 1,
		    1000000000000LL);
		break;
	case OPT_EXIT_EMPTY:	w->exit_when_empty = 1; break;
	case OPT_WAIT:
		w->wait_us = duration_arg(&work_command, "--wait", arg);
		break;
	case OPT_CLAIM:
		if (strcmp(arg, "skip-locked") == 0)
			w->pop.claim = MQ_CLAIM_SKIP_LOCKED;
		else if (strcmp(arg, "update") == 0)
			w->pop.claim = MQ_CLAIM_UPDATE;
		else
			usage_error(&work_command, "--claim takes skip-locked or "
			    "update, not '%s'", shown(arg));
		break;
	}
}

int
cmd_work(int argc, char **argv, struct mq_global *g)
{
	static struct worker w;
	int n;

	memset(&w, 0, sizeof w);
	w.concurrency = 1;
	w.lease_us = 60000000;
	w.wait_us = -1;
	n = parse_options(&work_command, argc, argv, g, work_option, &w);
	settle(&work_command, g, 1);
	if (w.exit_when_empty && w.wait_us >= 0)
		usage_error(&work_command, "--exit-when-empty and --wait exclude each "
		    "other");
	if (n == 0)
		usage_error(&work_command, "no command given (mq work [options] -- CMD)");
	return work_run(&w, g, argv + 1);
}
