/*
 * work.c: mq work -- CMD: a consumer loop for shell users. Claims jobs,
 * runs CMD once per job (work_jobs.c), acks on exit 0 and fails
 * otherwise; extends leases while jobs wait or run; waits for pushes on a
 * second, non-blocking connection parked in a marked SLEEP. One process,
 * one poll() loop: children's stderr, signals (through a self-pipe) and
 * the waiting connection.
 *
 * Throughput: a claim takes more jobs than --concurrency (the extra ones
 * wait, leased, in a local buffer): as many again, and up to 16 times as
 * many when jobs are short (PREFETCH_US of work by their recent average),
 * and the acks of jobs that ended ride in the next claim's transaction
 * (after at most ACK_DELAY_US), so short jobs cost a fraction of a
 * transaction each while long ones are not held from other workers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

#define GRACE_US 5000000	/* from SIGTERM to SIGKILL */
#define ACK_DELAY_US 50000	/* longest an ack waits for a claim to join */
#define PREFETCH_US 100000	/* work to hold waiting, per process slot */
#define PREFETCH_MAX 15		/* waiting jobs per process slot, at most */

struct worker {
	struct mq_global *g;
	struct mq_pop_opts pop;
	int64_t lease_us, timeout_us, wait_us;
	long long max_jobs, claimed;
	int exit_when_empty, concurrency, nslots;
	int64_t avg_run_us;		/* of recent jobs; 0: none yet */
	char **cmd;
	char path[4096];		/* cmd[0], found in PATH once */
	struct slot slot[MAX_SLOTS];
	struct mq_conn *c, *cw;		/* work; waiting (non-blocking) */
	struct mq_async wait;
	int waiting, wait_broken;
	unsigned idle_waits;		/* waits in a row that found nothing */
	int64_t next_claim, idle_since, reconnect_at, backoff_us;
	int stopping;			/* claim no more */
	int signals;			/* stop signals received */
	int cannot_run;			/* CMD failed to start for good */
};

static int sigpipe_fd[2] = { -1, -1 };

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	(void)!write(sigpipe_fd[1], &b, 1);
	errno = saved;
}

static void
warn_job(const struct slot *s, const char *what)
{
	fprintf(stderr, "mq work: job %llu: %s\n",
	    (unsigned long long)s->job.id, what);
}

static int
count(const struct worker *w, enum slot_state st)
{
	int i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slot[i].state == st;
	return n;
}

static void
free_slot(struct slot *s)
{
	free(s->job.payload);
	s->job.payload = NULL;
	s->state = FREE;
}

/* An error no retry mends, mid-run: the running jobs are stopped rather
 * than left unsupervised (their leases expire; requeue-stale returns
 * them), then the worker exits with the error's status. */
static void
fatal(struct worker *w, const struct mq_error *e)
{
	int i;

	for (i = 0; i < w->nslots; i++)
		if (w->slot[i].state == RUNNING)
			kill_job(&w->slot[i], SIGTERM);
	die("work", e);
}

/* Drops the connections after a failure that may mean the server is
 * gone; they are made again, with backoff, before the next use. */
static void
lost_server(struct worker *w, const struct mq_error *e)
{
	report("work", NULL, e);
	mq_close(w->c);
	mq_close(w->cw);
	w->c = w->cw = NULL;
	w->waiting = 0;
	w->backoff_us = w->backoff_us ? w->backoff_us * 2 : 500000;
	if (w->backoff_us > 30000000)
		w->backoff_us = 30000000;
	w->reconnect_at = now_us() + w->backoff_us;
	fprintf(stderr, "mq work: reconnecting in %.1fs\n",
	    (double)w->backoff_us / 1e6);
}

/* The work connection, made again if needed; NULL while it cannot be. */
static struct mq_conn *
conn(struct worker *w)
{
	struct mq_error e;

	if (w->c || now_us() < w->reconnect_at)
		return w->c;
	if ((w->c = mq_connect(&w->g->conn, &e)) == NULL) {
		if (e.status != MQ_EUNAVAIL)
			fatal(w, &e);
		lost_server(w, &e);
		return NULL;
	}
	if (mq_use_table(w->c, w->g->table) != MQ_OK) {
		e = *mq_conn_error(w->c);
		mq_close(w->c);
		w->c = NULL;
		if (e.status != MQ_EUNAVAIL)
			fatal(w, &e);
		lost_server(w, &e);
		return NULL;
	}
	if (w->backoff_us)
		fprintf(stderr, "mq work: connected again\n");
	w->backoff_us = 0;
	return w->c;
}

/* A library failure on the work connection: losing the server is
 * survived (reconnect with backoff), a broken setup ends the worker. */
static void
db_failure(struct worker *w, enum mq_status st)
{
	struct mq_error e = *mq_conn_error(w->c);

	if (st == MQ_EACCESS || st == MQ_ESCHEMA || st == MQ_ECONFIG ||
	    st == MQ_EINVAL || st == MQ_ENOMEM)
		fatal(w, &e);
	lost_server(w, &e);
}

/* Reports a job that did not exit 0: fail it, or give it back. */
static void
report_job(struct worker *w, struct slot *s)
{
	char text[TAIL + 128];
	struct mq_fail_opts fo = { .retry_in_us = -1 };
	struct mq_fail_result res;
	enum mq_status st;

	if (s->end == LOST) {
		free_slot(s);	/* someone else has it now */
		return;
	}
	if (conn(w) == NULL)
		return;		/* again once the server is back */
	if (s->end == ABANDONED) {
		st = mq_release(w->c, &s->job.receipt);
	} else {
		fo.error = text;
		fo.error_len = error_text(s, w->timeout_us, text);
		st = mq_fail(w->c, &s->job.receipt, &fo, &res);
		if (st == MQ_OK && res.dead)
			fprintf(stderr, "mq work: job %llu: failed (%s); dead "
			    "after %u attempt%s\n",
			    (unsigned long long)s->job.id,
			    how_it_ended(s), res.attempts, PLURAL(res.attempts));
		else if (st == MQ_OK)
			fprintf(stderr, "mq work: job %llu: failed (%s); due "
			    "again in %.1fs\n", (unsigned long long)s->job.id,
			    how_it_ended(s), (double)res.retry_in_us / 1e6);
	}
	if (st == MQ_ELEASE)
		warn_job(s, MQ_LEASE_LOST);
	else if (st != MQ_OK) {
		db_failure(w, st);
		return;		/* kept: reported after reconnecting */
	}
	free_slot(s);
}

static void
reap(struct worker *w)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < w->nslots; i++) {
			struct slot *s = &w->slot[i];
			if (s->state != RUNNING || s->pid != pid)
				continue;
			s->state = ENDED;
			s->status = status;
			s->ended_at = now_us();
			if (!s->stopping)
				s->end = EXITED;
			w->avg_run_us = w->avg_run_us ? (7 * w->avg_run_us +
			    (s->ended_at - s->started_at)) / 8 :
			    s->ended_at - s->started_at + 1;
			/* what is written now is read; a background process
			 * that still holds the pipe is not waited for */
			drain(s);
			if (s->err_fd >= 0) {
				close(s->err_fd);
				s->err_fd = -1;
			}
		}
}

/* Starts waiting jobs while there is room, oldest claim first. */
static void
start_queued(struct worker *w)
{
	int i, running = count(w, RUNNING), e;

	for (i = 0; i < w->nslots && running < w->concurrency; i++) {
		struct slot *s = &w->slot[i];
		if (s->state != QUEUED)
			continue;
		if ((e = spawn_job(s, w->path, w->cmd)) != 0) {
			fprintf(stderr, "mq work: cannot run '%s' for job "
			    "%llu: %s\n", shown(w->cmd[0]),
			    (unsigned long long)s->job.id, strerror(e));
			/* give it back rather than hold it for a lease */
			if (conn(w))
				(void)mq_release(w->c, &s->job.receipt);
			free_slot(s);
			if (e == ENOENT || e == EACCES || e == ENOEXEC ||
			    e == ENOTDIR) {
				w->cannot_run = w->stopping = 1;
			} else {
				/* out of something (files, memory, /tmp):
				 * claim again in a second */
				w->next_claim = now_us() + 1000000;
			}
			continue;
		}
		s->state = RUNNING;
		s->stopping = 0;
		s->kill_at = 0;
		s->started_at = now_us();
		s->deadline = w->timeout_us ? s->started_at + w->timeout_us : 0;
		running++;
	}
}

/* Claims up to room jobs into free slots, acking r in the same
 * transaction. Returns whether the acks were committed (else they are
 * still to do). */
static int
claim(struct worker *w, const struct mq_receipt *r, unsigned char *lost,
    size_t nr, unsigned room)
{
	struct mq_job *jobs;
	enum mq_status st;
	size_t n, i;
	int k = 0, acked;

	w->pop.count = room;
	st = mq_ack_pop(w->c, r, nr, lost, &acked, &w->pop, &jobs, &n);
	if (st == MQ_EMPTY || st == MQ_PAUSED) {
		w->next_claim = INT64_MAX;	/* until the wait says so */
		if (!w->idle_since)
			w->idle_since = now_us();
		return 1;
	}
	if (st != MQ_OK) {
		db_failure(w, st);
		return acked;
	}
	w->idle_since = 0;
	w->idle_waits = 0;
	for (i = 0; i < n; i++) {
		while (w->slot[k].state != FREE)
			k++;
		w->slot[k].state = QUEUED;
		w->slot[k].job = jobs[i];
		jobs[i].payload = NULL;		/* the slot holds it now */
		w->slot[k].next_beat = now_us() + w->lease_us / 3;
		w->claimed++;
	}
	mq_jobs_free(jobs, n);
	return 1;
}

/* Jobs to hold waiting per process slot: one, more for short jobs. */
static long long
prefetch(const struct worker *w)
{
	long long k = w->avg_run_us ? PREFETCH_US / w->avg_run_us : 1;

	return k < 1 ? 1 : k > PREFETCH_MAX ? PREFETCH_MAX : k;
}

/* Reports the jobs that ended, and claims when it may: the acks of jobs
 * that exited 0 go in the claim's transaction, or alone when no claim
 * comes within ACK_DELAY_US. */
static void
finish(struct worker *w)
{
	struct mq_receipt r[MAX_SLOTS];
	unsigned char lost[MAX_SLOTS];
	struct slot *which[MAX_SLOTS];
	int64_t now = now_us(), oldest = INT64_MAX;
	size_t nr = 0, i;
	long long room;
	int k, may_claim, acked = 0;
	enum mq_status st;

	for (k = 0; k < w->nslots; k++) {
		struct slot *s = &w->slot[k];
		if (s->state == ENDED && !succeeded(s))
			report_job(w, s);
		else if (s->state == ENDED) {
			which[nr] = s;
			r[nr++] = s->job.receipt;
			if (s->ended_at < oldest)
				oldest = s->ended_at;
		}
	}
	/* room: what the prefetch allows (see the top), less the slots
	 * held by jobs not about to be acked */
	room = (long long)w->concurrency * (1 + prefetch(w)) -
	    (w->nslots - count(w, FREE) - (long long)nr);
	if (room > count(w, FREE) + (long long)nr)
		room = count(w, FREE) + (long long)nr;
	if (w->max_jobs && room > w->max_jobs - w->claimed)
		room = w->max_jobs - w->claimed;
	may_claim = !w->stopping && room > 0 && count(w, QUEUED) == 0 &&
	    count(w, RUNNING) < w->concurrency && now >= w->next_claim;
	if (may_claim && conn(w)) {
		for (i = 0; i < nr; i++)	/* their slots take new jobs */
			which[i]->state = FREE;
		acked = claim(w, r, lost, nr, (unsigned)room);
		for (i = 0; !acked && i < nr; i++)
			which[i]->state = ENDED;	/* still to ack */
	} else if (nr && (w->stopping || w->next_claim == INT64_MAX ||
	    count(w, QUEUED) == 0 || now - oldest >= ACK_DELAY_US) && conn(w)) {
		st = mq_ack(w->c, r, nr, lost);
		acked = st == MQ_OK || st == MQ_ELEASE;
		if (!acked)
			db_failure(w, st);
		for (i = 0; acked && i < nr; i++)
			free_slot(which[i]);
	}
	for (i = 0; acked && i < nr; i++)
		if (lost[i])
			fprintf(stderr, "mq work: job %llu: %s\n",
			    (unsigned long long)r[i].id, MQ_LEASE_LOST);
	start_queued(w);
}

/* Heartbeats, timeouts, kills: what the clock asks of held jobs. */
static void
tend(struct worker *w)
{
	int64_t now = now_us();
	enum mq_status st;
	int i;

	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slot[i];
		if (s->state != QUEUED && s->state != RUNNING)
			continue;
		if (s->state == RUNNING && s->kill_at && now >= s->kill_at) {
			kill_job(s, SIGKILL);
			s->kill_at = 0;
		}
		if (s->state == RUNNING && !s->stopping && s->deadline &&
		    now >= s->deadline) {
			s->end = TIMED_OUT;
			s->stopping = 1;
			kill_job(s, SIGTERM);
			s->kill_at = now + GRACE_US;
		}
		if (s->stopping || now < s->next_beat || conn(w) == NULL)
			continue;
		st = mq_extend(w->c, &s->job.receipt, w->lease_us);
		s->next_beat = now + w->lease_us / 3;
		if (st == MQ_ELEASE && s->state == QUEUED) {
			warn_job(s, MQ_LEASE_LOST "; dropped before it ran");
			free_slot(s);
		} else if (st == MQ_ELEASE) {
			warn_job(s, MQ_LEASE_LOST "; stopping it");
			s->end = LOST;
			s->stopping = 1;
			kill_job(s, SIGTERM);
			s->kill_at = now + GRACE_US;
		} else if (st != MQ_OK) {
			db_failure(w, st);
		}
	}
}

/* The first signal stops claiming (waiting jobs go back at once); the
 * second stops the running ones too and gives them back. */
static void
on_stop(struct worker *w)
{
	int i;

	w->stopping = 1;
	if (w->signals++)
		for (i = 0; i < w->nslots; i++)
			if (w->slot[i].state == RUNNING &&
			    !w->slot[i].stopping) {
				w->slot[i].end = ABANDONED;
				w->slot[i].stopping = 1;
				kill_job(&w->slot[i], SIGKILL);
			}
}

/* Gives back the claimed jobs that never ran (after a signal). */
static void
release_queued(struct worker *w)
{
	enum mq_status st;
	int i;

	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slot[i];
		if (s->state != QUEUED || conn(w) == NULL)
			continue;
		st = mq_release(w->c, &s->job.receipt);
		if (st != MQ_OK && st != MQ_ELEASE) {
			db_failure(w, st);
			return;
		}
		free_slot(s);
	}
}

/* Parks the waiting connection, if idle and not parked yet. */
static void
park(struct worker *w)
{
	struct mq_connopts o = w->g->conn;
	struct mq_error e;

	if (w->waiting || w->wait_broken)
		return;
	if (w->cw == NULL) {
		o.nonblock = 1;
		if ((w->cw = mq_connect(&o, &e)) == NULL ||
		    mq_use_table(w->cw, w->g->table) != MQ_OK) {
			mq_close(w->cw);
			w->cw = NULL;
			return;		/* claim each second instead */
		}
	}
	if (mq_wait_begin(w->cw, w->pop.queue,
	    mq_wait_backoff_us(w->idle_waits++), &w->wait) != MQ_OK) {
		w->wait_broken = 1;	/* no non-blocking waits: poll */
		return;
	}
	w->waiting = !w->wait.done;
	if (w->wait.done)
		w->next_claim = 0;
}

/* After poll(): the waiting connection's answer, if any. */
static void
step_wait(struct worker *w, short revents, int timed_out)
{
	enum mq_status st = mq_wait_step(w->cw, &w->wait, revents, timed_out);

	if (!w->wait.done)
		return;
	w->waiting = 0;
	if (st == MQ_OK)
		w->next_claim = 0;		/* due now, or woken */
	else if (st != MQ_EMPTY) {
		mq_close(w->cw);		/* made again when next idle */
		w->cw = NULL;
		w->next_claim = 0;
	}
}

static int
done(struct worker *w)
{
	if (count(w, FREE) != w->nslots)
		return 0;
	if (w->stopping)
		return 1;
	if (w->max_jobs && w->claimed >= w->max_jobs)
		return 1;
	if (w->idle_since && w->exit_when_empty)
		return 1;
	return w->idle_since && w->wait_us >= 0 &&
	    now_us() - w->idle_since >= w->wait_us;
}

/* How long poll() may sleep: until the next thing the clock asks for. */
static int
timeout_ms(struct worker *w)
{
	int64_t now = now_us(), next = now + 1000000;
	int i;

#define SOONER(t) do { if ((t) < next) next = (t); } while (0)
	if (!w->waiting)
		SOONER(w->next_claim);
	if (w->reconnect_at > now)
		SOONER(w->reconnect_at);
	if (w->idle_since && w->wait_us >= 0)
		SOONER(w->idle_since + w->wait_us);
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if (s->state == ENDED)
			SOONER(s->ended_at + ACK_DELAY_US);
		if (s->state != QUEUED && s->state != RUNNING)
			continue;
		if (!s->stopping)
			SOONER(s->next_beat);
		if (s->state == RUNNING && !s->stopping && s->deadline)
			SOONER(s->deadline);
		if (s->state == RUNNING && s->kill_at)
			SOONER(s->kill_at);
	}
	if (w->waiting && w->wait.timeout_ms >= 0)
		SOONER(now + (int64_t)w->wait.timeout_ms * 1000);
#undef SOONER
	return next <= now ? 0 : (int)((next - now + 999) / 1000);
}

static void
loop(struct worker *w)
{
	struct pollfd fds[MAX_SLOTS + 2];
	int map[MAX_SLOTS + 2], nfds, i, r, wait_idx;
	unsigned char sig;

	while (!done(w)) {
		reap(w);
		tend(w);
		finish(w);
		if (w->stopping)
			release_queued(w);
		if (done(w))
			break;
		if (!w->stopping && w->idle_since && conn(w)) {
			park(w);
			if (!w->waiting && w->next_claim == INT64_MAX)
				w->next_claim = now_us() + 1000000;
		}
		nfds = 0;
		fds[nfds].fd = sigpipe_fd[0];
		fds[nfds++].events = POLLIN;
		for (i = 0; i < w->nslots; i++)
			if (w->slot[i].state == RUNNING &&
			    w->slot[i].err_fd >= 0) {
				map[nfds] = i;
				fds[nfds].fd = w->slot[i].err_fd;
				fds[nfds++].events = POLLIN;
			}
		wait_idx = -1;
		if (w->waiting) {
			wait_idx = nfds;
			fds[nfds].fd = w->wait.fd;
			fds[nfds++].events = w->wait.events;
		}
		r = poll(fds, (nfds_t)nfds, timeout_ms(w));
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "mq work: poll: %s\n", strerror(errno));
			exit(EX_OSERR);
		}
		if (r > 0 && (fds[0].revents & POLLIN))
			while (read(sigpipe_fd[0], &sig, 1) == 1)
				if (sig == SIGTERM || sig == SIGINT ||
				    sig == SIGHUP)
					on_stop(w);
		for (i = 1; r > 0 && i < nfds; i++)
			if (i != wait_idx && fds[i].revents)
				drain(&w->slot[map[i]]);
		if (w->waiting && wait_idx >= 0 && fds[wait_idx].revents)
			step_wait(w, fds[wait_idx].revents, 0);
		else if (w->waiting && w->wait.timeout_ms >= 0 && r == 0)
			step_wait(w, 0, 1);
	}
}

static void
set_signals(void)
{
	struct sigaction sa;

	if (pipe(sigpipe_fd) != 0) {
		fprintf(stderr, "mq work: pipe: %s\n", strerror(errno));
		exit(EX_OSERR);
	}
	fcntl(sigpipe_fd[0], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fd[1], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(sigpipe_fd[1], F_SETFD, FD_CLOEXEC);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;	/* the client library's reads go on */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* a closed terminal: stop cleanly */
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

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
	w.g = g;
	w.cmd = argv + optind;
	w.nslots = (1 + PREFETCH_MAX) * w.concurrency < MAX_SLOTS ?
	    (1 + PREFETCH_MAX) * w.concurrency : MAX_SLOTS;
	w.pop.queue = g->queue;
	w.pop.lease_us = w.lease_us;
	if (find_command(w.cmd[0], w.path, sizeof w.path) != 0) {
		fprintf(stderr, "mq work: cannot run '%s': %s\n",
		    shown(w.cmd[0]), strchr(w.cmd[0], '/') ? strerror(errno) :
		    "not found in PATH");
		return 127;
	}

	/* fail early on what no retry can mend (table, grants, names) */
	w.c = open_queue_table("work", g);
	set_signals();
	loop(&w);
	mq_close(w.c);
	mq_close(w.cw);
	return w.cannot_run ? 127 : 0;
}
