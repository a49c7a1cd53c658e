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

enum { OPT_CONC = OPT_CMD, OPT_LEASE, OPT_TIMEOUT, OPT_MAX_JOBS,
    OPT_EXIT_EMPTY, OPT_WAIT };

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
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command work_command = {
	"work", "run a command for each job: a consumer loop", opts,
	{ "-- CMD [ARG...]", NULL }, COMPLETE_PROGRAM, NULL,
	CMD_POSIX | CMD_QUEUE_LIST, cmd_work
};

#define GRACE_US 5000000	/* from SIGTERM to SIGKILL */
#define ACK_DELAY_US 50000	/* longest an ack waits for a claim to join */
#define PREFETCH_US 100000	/* work to hold waiting, per process slot */
#define PREFETCH_MAX 15		/* waiting jobs per process slot, at most */
#define BUSY_RETRY_US 500000	/* a beat that met another's row lock */
#define BEAT_RETRY_US 1000000	/* a beat that failed */
#define BACKOFF_FIRST_US 500000	/* after a failure, doubling... */
#define BACKOFF_MAX_US 30000000	/* ...up to this, times [0.75, 1.25) */
#define GIVE_UP_FAILURES 5	/* --exit-when-empty, --wait: tries in a row */
#define STOP_WAIT_US 10000000	/* stopping: longest wait for the server */
#define WAIT_CONN_RETRY_US 10000000	/* a waiting connection that failed */

enum op_kind { OP_ACK, OP_FAIL, OP_RELEASE };

/* One job's part of a task of the work thread. */
struct op_item {
	int slot;
	enum op_kind kind;
	struct mq_receipt r;
	int tried;			/* fail, release: sent and answered */
	enum mq_status st;		/* their outcome */
	unsigned char lost;		/* ack: the lease was lost */
	struct mq_fail_result res;
	size_t text_len;
	char text[TAIL + 128];		/* fail: the error text */
};

struct worker;

/* What the work thread does in one go: fails and give-backs, then the
 * acks with a claim of up to room jobs (or alone), then the waiting
 * connection if asked for. The loop reads the outcome once it is done. */
struct op_task {
	struct worker *w;
	size_t n;
	unsigned room;
	int want_cw;
	int64_t posted_at;
	enum mq_status st;		/* MQ_OK, or the failure */
	struct mq_error err;
	enum mq_status claim_st;
	struct mq_job *jobs;
	size_t njobs;
	int acked;
	struct mq_conn *cw;
	struct op_item item[MAX_SLOTS];
};

/* Leases to extend, each once, on the heartbeat thread's connection. */
struct beat_task {
	struct worker *w;
	size_t n;
	enum mq_status st;
	struct mq_error err;
	struct {
		int slot;
		struct mq_receipt r;
		int64_t sent_at;
		enum mq_status st;
	} item[MAX_SLOTS];
};

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
	/* the work thread's, the heartbeat thread's, the loop's (waiting,
	 * non-blocking): each touched by its owner only */
	struct mq_conn *c, *cb, *cw;
	struct dbt op, beat;
	struct op_task ot;
	struct beat_task bt;
	struct mq_async wait;
	int waiting, wait_broken;
	unsigned idle_waits;		/* waits in a row that found nothing */
	int64_t next_claim, idle_since, reconnect_at, cw_retry_at;
	unsigned failures;		/* work tasks failed in a row */
	int beat_failing;		/* the last heartbeat task failed */
	int64_t stop_idle_since;	/* stopping, no job running: since */
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
	s->in_op = 0;
	s->lease_end = 0;
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

static int
mends_nothing(enum mq_status st)
{
	return st == MQ_EACCESS || st == MQ_ESCHEMA || st == MQ_ECONFIG ||
	    st == MQ_EINVAL || st == MQ_ENOMEM;
}

/* A connection with the table selected; NULL with e filled in. */
static struct mq_conn *
connect_table(const struct mq_connopts *o, const char *table,
    struct mq_error *e)
{
	struct mq_conn *c = mq_connect(o, e);

	if (c && mq_use_table(c, table) != MQ_OK) {
		*e = *mq_conn_error(c);
		mq_close(c);
		c = NULL;
	}
	return c;
}

/* ---- the work thread's task (runs in that thread: no output) ---- */

static void
op_run(void *arg)
{
	struct op_task *t = arg;
	struct worker *w = t->w;
	struct mq_receipt r[MAX_SLOTS];
	unsigned char lost[MAX_SLOTS];
	size_t which[MAX_SLOTS], nr = 0, i;
	struct mq_fail_opts fo = { .retry_in_us = -1 };
	struct mq_connopts o;
	struct mq_error e;
	enum mq_status st = MQ_OK;

	t->st = t->claim_st = MQ_OK;
	t->jobs = NULL;
	t->njobs = 0;
	t->acked = 0;
	t->cw = NULL;
	if (w->c == NULL && (w->c = connect_table(&w->g->conn,
	    w->g->table, &t->err)) == NULL) {
		t->st = t->err.status;
		return;
	}
	for (i = 0; i < t->n; i++) {
		struct op_item *it = &t->item[i];
		if (it->kind == OP_ACK) {
			which[nr] = i;
			r[nr++] = it->r;
			continue;
		}
		if (it->kind == OP_RELEASE) {
			st = mq_release(w->c, &it->r);
		} else {
			fo.error = it->text;
			fo.error_len = it->text_len;
			st = mq_fail(w->c, &it->r, &fo, &it->res);
		}
		if (st != MQ_OK && st != MQ_ELEASE)
			goto failed;
		it->st = st;
		it->tried = 1;
	}
	if (t->room) {
		w->pop.count = t->room;
		st = t->claim_st = mq_ack_pop(w->c, r, nr, lost, &t->acked,
		    &w->pop, &t->jobs, &t->njobs);
		if (st != MQ_OK && st != MQ_EMPTY && st != MQ_PAUSED)
			goto failed;
	} else if (nr) {
		st = mq_ack(w->c, r, nr, lost);
		t->acked = st == MQ_OK || st == MQ_ELEASE;
		if (!t->acked)
			goto failed;
	}
	for (i = 0; t->acked && i < nr; i++)
		t->item[which[i]].lost = lost[i];
	if (t->want_cw) {
		o = w->g->conn;
		o.nonblock = 1;
		t->cw = connect_table(&o, w->g->table, &e);
	}
	return;
failed:
	for (i = 0; t->acked && i < nr; i++)
		t->item[which[i]].lost = lost[i];
	t->st = st;
	t->err = *mq_conn_error(w->c);
	mq_close(w->c);		/* made again, after a pause, by the next */
	w->c = NULL;
}

/* ---- the heartbeat thread's task ---- */

static void
beat_run(void *arg)
{
	struct beat_task *t = arg;
	struct worker *w = t->w;
	enum mq_status st;
	size_t i;

	t->st = MQ_OK;
	if (w->cb == NULL && (w->cb = connect_table(&w->g->conn,
	    w->g->table, &t->err)) == NULL) {
		t->st = t->err.status;
		for (i = 0; i < t->n; i++)
			t->item[i].st = t->st;
		return;
	}
	for (i = 0; i < t->n; i++) {
		t->item[i].sent_at = now_us();
		st = t->item[i].st = mq_try_extend(w->cb, &t->item[i].r,
		    w->lease_us);
		if (st == MQ_OK || st == MQ_ELEASE || st == MQ_ERETRY)
			continue;
		t->st = st;
		t->err = *mq_conn_error(w->cb);
		mq_close(w->cb);
		w->cb = NULL;
		for (i++; i < t->n; i++)
			t->item[i].st = st;
	}
}

/* ---- the loop's side: no statement is sent from here ---- */

/* Jobs to hold waiting per process slot: one, more for short jobs. */
static long long
prefetch(const struct worker *w)
{
	long long k = w->avg_run_us ? PREFETCH_US / w->avg_run_us : 1;

	return k < 1 ? 1 : k > PREFETCH_MAX ? PREFETCH_MAX : k;
}

/* How many jobs a claim may take now, nacks slots being acked with it
 * (see the top); 0: no claim now. */
static long long
claim_room(const struct worker *w, long long nacks)
{
	long long room = (long long)w->concurrency * (1 + prefetch(w)) -
	    (w->nslots - count(w, FREE) - nacks);

	if (room > count(w, FREE) + nacks)
		room = count(w, FREE) + nacks;
	if (w->max_jobs && room > w->max_jobs - w->claimed)
		room = w->max_jobs - w->claimed;
	if (w->stopping || count(w, QUEUED) != 0 ||
	    count(w, RUNNING) >= w->concurrency || now_us() < w->next_claim)
		return 0;
	return room < 0 ? 0 : room;
}

/* Whether the loop wants the waiting connection made. */
static int
want_wait_conn(const struct worker *w)
{
	return !w->stopping && w->idle_since && w->cw == NULL &&
	    !w->wait_broken && now_us() >= w->cw_retry_at;
}

/* Gives the work thread what is to do: the jobs that ended (fail, give
 * back, or ack: in the claim's transaction, or alone when no claim comes
 * within ACK_DELAY_US), prefetched jobs to give back after a signal, a
 * claim when there is room. */
static void
op_post(struct worker *w)
{
	struct op_task *t = &w->ot;
	int64_t now = now_us(), oldest = INT64_MAX;
	long long nacks = 0, room;
	size_t i, k;
	int j;

	t->n = 0;
	for (j = 0; j < w->nslots; j++) {
		struct slot *s = &w->slot[j];
		struct op_item *it = &t->item[t->n];
		if (s->in_op)
			continue;
		if (s->state == ENDED && s->end == LOST) {
			free_slot(s);	/* someone else has it now */
			continue;
		}
		if (s->state == QUEUED && w->stopping) {
			it->kind = OP_RELEASE;
		} else if (s->state != ENDED) {
			continue;
		} else if (succeeded(s)) {
			it->kind = OP_ACK;
			nacks++;
			if (s->ended_at < oldest)
				oldest = s->ended_at;
		} else if (s->end == ABANDONED) {
			it->kind = OP_RELEASE;
		} else {
			it->kind = OP_FAIL;
			it->text_len = error_text(s, w->timeout_us, it->text);
		}
		it->slot = j;
		it->r = s->job.receipt;
		it->tried = 0;
		it->lost = 0;
		t->n++;
	}
	room = claim_room(w, nacks);
	if (room == 0 && nacks && !(w->stopping ||
	    w->next_claim == INT64_MAX || count(w, QUEUED) == 0 ||
	    now - oldest >= ACK_DELAY_US)) {
		for (i = k = 0; i < t->n; i++)	/* the acks wait a little */
			if (t->item[i].kind != OP_ACK)
				t->item[k++] = t->item[i];
		t->n = k;
	}
	t->room = (unsigned)room;
	t->want_cw = want_wait_conn(w);
	if (t->n == 0 && t->room == 0 && !t->want_cw)
		return;
	for (i = 0; i < t->n; i++)
		w->slot[t->item[i].slot].in_op = 1;
	t->w = w;
	t->posted_at = now;
	dbt_post(&w->op, op_run, t);
}

/* A work task failed: said, and tried again after a pause (capped
 * exponential, with jitter), on a new connection. A worker that is to
 * exit when idle and holds nothing gives up after GIVE_UP_FAILURES. */
static void
op_failed(struct worker *w, const struct mq_error *e)
{
	int64_t backoff;
	unsigned n;

	report("work", NULL, e);
	if (mends_nothing(e->status))
		fatal(w, e);
	if (w->cw) {
		mq_close(w->cw);
		w->cw = NULL;
		w->waiting = 0;
	}
	w->failures++;
	if ((w->exit_when_empty || w->wait_us >= 0) &&
	    count(w, FREE) == w->nslots && w->failures >= GIVE_UP_FAILURES) {
		fprintf(stderr, "mq work: giving up after %u failures in a "
		    "row\n", w->failures);
		exit(exit_status(e->status));
	}
	n = w->failures - 1;
	backoff = n >= 6 ? BACKOFF_MAX_US : (int64_t)BACKOFF_FIRST_US << n;
	if (backoff > BACKOFF_MAX_US)
		backoff = BACKOFF_MAX_US;
	backoff = (int64_t)((double)backoff *
	    (0.75 + 0.5 * ((double)rand() / ((double)RAND_MAX + 1))));
	w->reconnect_at = now_us() + backoff;
	fprintf(stderr, "mq work: reconnecting in %.1fs\n",
	    (double)backoff / 1e6);
}

/* The work thread is done: the outcome, job by job. */
static void
op_apply(struct worker *w)
{
	struct op_task *t = &w->ot;
	int64_t now = now_us();
	size_t i;
	int k = 0;

	for (i = 0; i < t->n; i++) {
		struct op_item *it = &t->item[i];
		struct slot *s = &w->slot[it->slot];
		s->in_op = 0;
		if (it->kind == OP_ACK ? !t->acked : !it->tried)
			continue;	/* again, once the server answers */
		if (it->kind == OP_ACK ? it->lost : it->st == MQ_ELEASE)
			warn_job(s, MQ_LEASE_LOST);
		else if (it->kind == OP_FAIL && it->res.dead)
			fprintf(stderr, "mq work: job %llu: failed (%s); dead "
			    "after %u attempt%s\n",
			    (unsigned long long)s->job.id, how_it_ended(s),
			    it->res.attempts, PLURAL(it->res.attempts));
		else if (it->kind == OP_FAIL)
			fprintf(stderr, "mq work: job %llu: failed (%s); due "
			    "again in %.1fs\n", (unsigned long long)s->job.id,
			    how_it_ended(s), (double)it->res.retry_in_us / 1e6);
		free_slot(s);
	}
	if (t->cw) {
		w->cw = t->cw;
	} else if (t->want_cw) {
		w->cw_retry_at = now + WAIT_CONN_RETRY_US;
		w->next_claim = now + 1000000;	/* claim each second */
	}
	if (t->st != MQ_OK) {
		op_failed(w, &t->err);
		return;
	}
	if (w->failures && (t->n || t->room))
		fprintf(stderr, "mq work: connected again\n");
	if (t->n || t->room)
		w->failures = 0;
	if (!t->room)
		return;
	if (t->claim_st == MQ_EMPTY || t->claim_st == MQ_PAUSED) {
		w->next_claim = INT64_MAX;	/* until the wait says so */
		if (!w->idle_since)
			w->idle_since = now;
		return;
	}
	w->idle_since = 0;
	w->idle_waits = 0;
	for (i = 0; i < t->njobs; i++) {
		while (k < w->nslots && w->slot[k].state != FREE)
			k++;
		if (k == w->nslots)
			break;		/* cannot be: room was counted */
		w->slot[k].state = QUEUED;
		w->slot[k].job = t->jobs[i];
		t->jobs[i].payload = NULL;	/* the slot holds it now */
		w->slot[k].next_beat = now + w->lease_us / 3;
		w->slot[k].lease_end = t->posted_at + w->lease_us;
		w->claimed++;
	}
	mq_jobs_free(t->jobs, t->njobs);
	t->jobs = NULL;
}

/* Gives the heartbeat thread the leases due for extension. */
static void
beat_post(struct worker *w)
{
	struct beat_task *t = &w->bt;
	int64_t now = now_us();
	int i;

	t->n = 0;
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if ((s->state != QUEUED && s->state != RUNNING) ||
		    s->stopping || s->in_op || now < s->next_beat)
			continue;
		t->item[t->n].slot = i;
		t->item[t->n++].r = s->job.receipt;
	}
	if (t->n == 0)
		return;
	t->w = w;
	dbt_post(&w->beat, beat_run, t);
}

/* Stops a running job whose lease is not ours any more, or drops a
 * prefetched one. */
static void
lose(struct slot *s, const char *why)
{
	char msg[256];

	if (s->state == QUEUED) {
		snprintf(msg, sizeof msg, "%s; dropped before it ran", why);
		warn_job(s, msg);
		free_slot(s);
		return;
	}
	snprintf(msg, sizeof msg, "%s; stopping it", why);
	warn_job(s, msg);
	s->end = LOST;
	s->stopping = 1;
	kill_job(s, SIGTERM);
	s->kill_at = now_us() + GRACE_US;
}

/* The heartbeat thread is done: each lease's outcome. */
static void
beat_apply(struct worker *w)
{
	struct beat_task *t = &w->bt;
	int64_t now = now_us();
	size_t i;

	for (i = 0; i < t->n; i++) {
		struct slot *s = &w->slot[t->item[i].slot];
		if ((s->state != QUEUED && s->state != RUNNING) ||
		    s->job.id != t->item[i].r.id ||
		    strcmp(s->job.receipt.token, t->item[i].r.token) != 0)
			continue;	/* ended, or another job meanwhile */
		switch (t->item[i].st) {
		case MQ_OK:
			s->lease_end = t->item[i].sent_at + w->lease_us;
			s->next_beat = now + w->lease_us / 3;
			break;
		case MQ_ELEASE:
			if (!s->in_op && !s->stopping)
				lose(s, MQ_LEASE_LOST);
			break;
		case MQ_ERETRY:		/* another session holds the row */
			s->next_beat = now + BUSY_RETRY_US;
			break;
		default:
			s->next_beat = now + BEAT_RETRY_US;
		}
	}
	if (t->st != MQ_OK && !w->beat_failing)
		report("work", "heartbeat", &t->err);
	w->beat_failing = t->st != MQ_OK;
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
		if (s->state != QUEUED || s->in_op || w->stopping)
			continue;
		if ((e = spawn_job(s, w->path, w->cmd)) != 0) {
			fprintf(stderr, "mq work: cannot run '%s' for job "
			    "%llu: %s\n", shown(w->cmd[0]),
			    (unsigned long long)s->job.id, strerror(e));
			/* give it back rather than hold it for a lease */
			s->state = ENDED;
			s->end = ABANDONED;
			s->ended_at = now_us();
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

/* Timeouts, kills, leases that ran out: what the clock asks of held
 * jobs, whatever the threads are waiting for. */
static void
tend(struct worker *w)
{
	int64_t now = now_us();
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
		/* another consumer may claim it from now on */
		if (!s->stopping && !s->in_op && s->lease_end &&
		    now >= s->lease_end)
			lose(s, "lease ran out before it could be extended");
	}
	if (w->stopping && count(w, RUNNING) == 0) {
		if (!w->stop_idle_since)
			w->stop_idle_since = now;
	} else {
		w->stop_idle_since = 0;
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

/* Parks the waiting connection, if idle and not parked yet. */
static void
park(struct worker *w)
{
	if (w->waiting || w->wait_broken || w->cw == NULL)
		return;
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

/* Stopping, and the server has not taken what is left for STOP_WAIT_US
 * since the last job ended: says what stays undone, and exits. */
static void
give_up(struct worker *w)
{
	const char *what;
	int i;

	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if (s->state == FREE)
			continue;
		what = succeeded(s) ? "ack" : s->state == ENDED &&
		    s->end != ABANDONED && s->end != LOST ? "fail" :
		    "give-back";
		if (s->in_op)	/* sent: the server may yet do it */
			fprintf(stderr, "mq work: job %llu: %s sent but the "
			    "server did not answer in %ds: outcome unknown "
			    "(%s, or leased until its lease ends)\n",
			    (unsigned long long)s->job.id, what,
			    STOP_WAIT_US / 1000000, succeeded(s) ? "done" :
			    "given back");
		else
			fprintf(stderr, "mq work: job %llu: no %s: the server "
			    "did not answer in %ds; it stays leased until its "
			    "lease ends\n", (unsigned long long)s->job.id,
			    what, STOP_WAIT_US / 1000000);
	}
	if (w->op.busy && count(w, FREE) == w->nslots)
		fprintf(stderr, "mq work: a claim was under way: what it "
		    "took stays leased until its lease ends\n");
	exit(EX_UNAVAILABLE);
}

static int
done(struct worker *w)
{
	if (w->stopping && w->stop_idle_since &&
	    now_us() - w->stop_idle_since >= STOP_WAIT_US &&
	    (w->op.busy || count(w, FREE) != w->nslots))
		give_up(w);
	if (count(w, FREE) != w->nslots || w->op.busy)
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

/* How long poll() may sleep: until the next thing the clock asks for.
 * What a busy thread is to do waits for it (its pipe wakes the loop). */
static int
timeout_ms(struct worker *w)
{
	int64_t now = now_us(), next = now + 1000000;
	int i, op_free = !w->op.busy && now >= w->reconnect_at;

#define SOONER(t) do { if ((t) < next) next = (t); } while (0)
	if (op_free && !w->waiting && claim_room(w, 0) > 0)
		SOONER(w->next_claim);
	if (!w->op.busy && w->reconnect_at > now)
		SOONER(w->reconnect_at);
	if (w->idle_since && w->wait_us >= 0)
		SOONER(w->idle_since + w->wait_us);
	if (w->stop_idle_since)
		SOONER(w->stop_idle_since + STOP_WAIT_US);
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if (s->state == ENDED && op_free && !s->in_op)
			SOONER(s->ended_at + ACK_DELAY_US);
		if (s->state != QUEUED && s->state != RUNNING)
			continue;
		if (!s->stopping && !s->in_op && !w->beat.busy)
			SOONER(s->next_beat);
		if (!s->stopping && !s->in_op && s->lease_end)
			SOONER(s->lease_end);
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
	struct pollfd fds[MAX_SLOTS + 4];
	int map[MAX_SLOTS + 4], nfds, i, r, wait_idx;
	unsigned char sig;

	while (!done(w)) {
		reap(w);
		tend(w);
		if (!w->op.busy && now_us() >= w->reconnect_at)
			op_post(w);
		if (!w->beat.busy)
			beat_post(w);
		start_queued(w);
		if (done(w))
			break;
		if (!w->stopping && w->idle_since) {
			park(w);
			if (!w->waiting && w->next_claim == INT64_MAX)
				w->next_claim = now_us() + 1000000;
		}
		nfds = 0;
		fds[nfds].fd = sigpipe_fd[0];
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = w->op.fd[0];
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = w->beat.fd[0];
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
		if (r > 0 && fds[1].revents && dbt_collect(&w->op))
			op_apply(w);
		if (r > 0 && fds[2].revents && dbt_collect(&w->beat))
			beat_apply(w);
		for (i = 3; r > 0 && i < nfds; i++)
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

static void
work_option(void *ctx, int id, const char *arg)
{
	struct worker *w = ctx;

	switch (id) {
	case OPT_CONC:
		w->concurrency = (int)int_arg("work", "--concurrency", arg, 1,
		    MAX_CONCURRENCY);
		break;
	case OPT_LEASE:
		w->lease_us = duration_arg("work", "--lease", arg);
		if (w->lease_us < 3000000)
			usage_error("work", "--lease must be at least 3s");
		break;
	case OPT_TIMEOUT:
		w->timeout_us = duration_arg("work", "--timeout", arg);
		if (w->timeout_us == 0)
			usage_error("work", "--timeout must be above 0");
		break;
	case OPT_MAX_JOBS:
		w->max_jobs = int_arg("work", "--max-jobs", arg, 1,
		    1000000000000LL);
		break;
	case OPT_EXIT_EMPTY:	w->exit_when_empty = 1; break;
	case OPT_WAIT:
		w->wait_us = duration_arg("work", "--wait", arg);
		break;
	}
}

int
cmd_work(int argc, char **argv, struct mq_global *g)
{
	static struct worker w;
	int opt, n;

	memset(&w, 0, sizeof w);
	w.concurrency = 1;
	w.lease_us = 60000000;
	w.wait_us = -1;
	n = parse_options(&work_command, argc, argv, g, work_option, &w);
	settle("work", g, 1);
	if (w.exit_when_empty && w.wait_us >= 0)
		usage_error("work", "--exit-when-empty and --wait exclude each "
		    "other");
	if (n == 0)
		usage_error("work", "no command given (mq work [options] -- CMD)");
	w.g = g;
	w.cmd = argv + 1;
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
	if ((opt = dbt_start(&w.op)) != 0 ||
	    (opt = dbt_start(&w.beat)) != 0) {
		fprintf(stderr, "mq work: cannot start a thread: %s\n",
		    strerror(opt));
		exit(EX_OSERR);
	}
	loop(&w);
	/* a thread still in a statement keeps its connection: the exit
	 * closes it */
	if (!w.op.busy)
		mq_close(w.c);
	if (!w.beat.busy)
		mq_close(w.cb);
	mq_close(w.cw);
	return w.cannot_run ? 127 : 0;
}
