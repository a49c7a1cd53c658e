/*
 * work.c: mq work -- CMD: a consumer loop for shell users. Claims jobs,
 * runs CMD once per job (work_jobs.c), acks on exit 0 and fails
 * otherwise; extends leases while jobs wait or run; waits for pushes on a
 * non-blocking connection parked in a marked SLEEP. One poll() loop owns
 * the children's stderr, the signals (through a self-pipe), the timers
 * and the waiting connection, and never waits for the server itself: two
 * threads do (work_db.c), each on a connection of its own, the work
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
 * one struct worker (work.h): work_loop.c (the poll() loop and its
 * start), work_slots.c (the held jobs: started, reaped, timed out),
 * work_jobs.c (the child processes), work_claim.c (the work thread's
 * task: acks, fails, give-backs and a claim), work_result.c (its outcome,
 * and the backoff after a failure), work_heartbeat.c (lease extensions),
 * work_wait.c (waiting for pushes), work_stop.c (signals, stopping) and
 * work_db.c (the two server threads).
 */
#include <string.h>

#include "work.h"

static const char usage[] =
    "usage: mq work [--queue Q[,Q...]] [--concurrency N] [--lease D] [--timeout D]"
    " [--max-jobs N] [--exit-when-empty | --wait D] [--table T]"
    " [CONNECTION-OPTIONS] -- CMD [ARG...]";

static const char options[] =
    "\noptions:\n"
    "  --queue Q[,Q...]    queue to work on, or queues in order of\n"
    "                      preference (default: default; MQ_QUEUE)\n"
    "  --concurrency N     run up to N jobs at once, 1..128 (default 1)\n"
    "  --lease D           lease per job, extended while held (default 1m)\n"
    "  --timeout D         kill and fail a job running longer than D\n"
    "  --max-jobs N        claim N jobs, finish them, exit\n"
    "  --exit-when-empty   exit when no job is due and none runs\n"
    "  --wait D            exit when no job came for D (default: wait on)\n";

int
cmd_work(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_CONC = OPT_CMD, OPT_LEASE, OPT_TIMEOUT, OPT_MAX_JOBS,
	    OPT_EXIT_EMPTY, OPT_WAIT };
	static const struct option longopts[] = {
		{"concurrency", required_argument, NULL, OPT_CONC},
		{"lease", required_argument, NULL, OPT_LEASE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"max-jobs", required_argument, NULL, OPT_MAX_JOBS},
		{"exit-when-empty", no_argument, NULL, OPT_EXIT_EMPTY},
		{"wait", required_argument, NULL, OPT_WAIT},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	static struct worker w;
	int opt;

	memset(&w, 0, sizeof w);
	w.concurrency = 1;
	w.lease_us = 60000000;
	w.wait_us = -1;
	g->queue_list = 1;
	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option("work", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_CONC:
			w.concurrency = (int)int_arg("work", "--concurrency",
			    optarg, 1, MAX_CONCURRENCY);
			break;
		case OPT_LEASE:
			w.lease_us = duration_arg("work", "--lease", optarg);
			if (w.lease_us < 3000000)
				usage_error("work", "--lease must be at least 3s");
			break;
		case OPT_TIMEOUT:
			w.timeout_us = duration_arg("work", "--timeout", optarg);
			if (w.timeout_us == 0)
				usage_error("work", "--timeout must be above 0");
			break;
		case OPT_MAX_JOBS:
			w.max_jobs = int_arg("work", "--max-jobs", optarg, 1,
			    1000000000000LL);
			break;
		case OPT_EXIT_EMPTY:	w.exit_when_empty = 1; break;
		case OPT_WAIT:
			w.wait_us = duration_arg("work", "--wait", optarg);
			break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("work", opt, argv);
		}
	}
	settle("work", g, 1);
	if (w.exit_when_empty && w.wait_us >= 0)
		usage_error("work", "--exit-when-empty and --wait exclude each "
		    "other");
	if (optind >= argc)
		usage_error("work", "no command given (mq work [options] -- CMD)");
	return work_run(&w, g, argv + optind);
}
