/*
 * work/result.c: part of mq work: what the work thread's answer means,
 * job by job (acked, failed and due again, dead, lease lost), the jobs
 * a claim brought into free slots, and a failed task: said, then tried
 * again after a backoff, or the end of the worker if no retry mends it.
 * Also how a job's end is put into words for the user and the server.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "work.h"

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
	orphans_left(w);
	die(&work_command, e);
}

static int
mends_nothing(enum mq_status st)
{
	return st == MQ_EACCESS || st == MQ_ESCHEMA || st == MQ_ECONFIG ||
	    st == MQ_EINVAL || st == MQ_ENOMEM;
}

/* A work task failed: said, and tried again after a pause (capped
 * exponential, with jitter), on a new connection. A worker that is to
 * exit when idle and holds nothing gives up after GIVE_UP_FAILURES. */
static void
op_failed(struct worker *w, const struct mq_error *e)
{
	int64_t backoff, max;
	unsigned n;
	int limit = mq_conn_limit(e);

	/* said once, by die() */
	if (mends_nothing(e->status))
		fatal(w, e);
	/* the server's limit on connections: said once, not at every
	 * refused reconnection, until connected again */
	if (!limit || !(w->limit_said & LIMIT_SAID))
		report(&work_command, NULL, e);
	if (limit)
		w->limit_said |= LIMIT_SAID;
	if (w->cw) {
		mq_close(w->cw);
		w->cw = NULL;
		w->waiting = 0;
	}
	w->failures++;
	if ((w->exit_when_empty || w->wait_us >= 0) &&
	    count_slots(w, FREE) == w->nslots &&
	    w->failures >= GIVE_UP_FAILURES) {
		say(&work_command, "giving up after %u failures in a "
		    "row", w->failures);
		orphans_left(w);
		/* jobs of a lost claim may stay leased to nobody: status 3,
		 * as mq pop's (mq-work(1), EXIT STATUS) */
		exit(exit_status(w->norphans ? MQ_EUNKNOWN : e->status));
	}
	/* a list of hosts: another node may be up and ready while this
	 * one is down or re-forming (Galera: up within its suspect
	 * timeout), so tried again soon, not after a pause grown for one
	 * server; but a server with no connection free is waited for */
	max = w->hosts > 1 && !limit ? BACKOFF_LIST_MAX_US : BACKOFF_MAX_US;
	n = w->failures - 1;
	backoff = n >= 6 ? max : (int64_t)BACKOFF_FIRST_US << n;
	if (backoff > max)
		backoff = max;
	backoff = (int64_t)((double)backoff *
	    (0.75 + 0.5 * ((double)rand() / ((double)RAND_MAX + 1))));
	w->reconnect_at = mq_now_us() + backoff;
	if (!limit)
		say(&work_command, "reconnecting in %.1fs",
		    (double)backoff / 1e6);
	else if (!(w->limit_said & LIMIT_BACKOFF_SAID))
		say(&work_command, "backing off: reconnecting in %.1fs, then "
		    "less and less often until the server has a connection "
		    "free; the jobs it holds run on", (double)backoff / 1e6);
	if (limit)
		w->limit_said |= LIMIT_BACKOFF_SAID;
}

/* An extend the work thread made for the heartbeat (its connection
 * could not be made): as the heartbeat's own (work/heartbeat.c), for a
 * job still held; the heartbeat's connection is tried again next. */
static void
extended(struct worker *w, struct slot *s, const struct op_item *it,
    int64_t now)
{
	if (!it->tried || (s->state != QUEUED && s->state != RUNNING) ||
	    s->job.id != it->r.id ||
	    strcmp(s->job.receipt.token, it->r.token) != 0)
		return;		/* not answered, or ended meanwhile */
	s->beat_by_op = 0;
	if (it->st == MQ_OK) {
		s->lease_end = it->sent_at + w->lease_us;
		s->next_beat = now + w->lease_us / 3;
	} else if (it->st == MQ_ERETRY) {	/* another session's lock */
		s->next_beat = now + BUSY_RETRY_US;
	} else if (it->st == MQ_ELEASE && !s->in_op && !s->stopping) {
		lose(s, mq_strerror(MQ_ELEASE));
	}
}

/* After a task that fired the schedules: their runs are claimed (by
 * this claim, or the next at once); a failure is said once while it
 * lasts. */
static void
fired(struct worker *w, const struct op_task *t)
{
	w->fire_woken = 0;
	if (t->runs > 0 && !w->stopping)
		w->next_claim = 0;
	if (w->fire.failed && !w->fire_said) {
		report(&work_command, w->fire.off ? "cannot fire the "
		    "schedules (this worker stops trying)" :
		    "cannot fire the schedules", &w->fire.err);
		w->fire_said = 1;
	} else if (!w->fire.failed) {
		w->fire_said = 0;
	}
}

/* The work thread is done: the outcome, job by job. */
void
op_apply(struct worker *w)
{
	struct op_task *t = &w->ot;
	char due[DURATION_MAX], how[HOW_MAX];
	int64_t now = mq_now_us();
	size_t i;
	int k = 0;

	for (i = 0; i < t->n; i++) {
		struct op_item *it = &t->item[i];
		struct slot *s = &w->slot[it->slot];
		if (it->kind == OP_EXTEND) {
			extended(w, s, it, now);
			continue;
		}
		s->in_op = 0;
		if (it->kind == OP_ACK ? !t->acked : !it->tried)
			continue;	/* again, once the server answers */
		if (it->kind == OP_ACK ? it->lost : it->st == MQ_ELEASE)
			warn_job(s, mq_strerror(MQ_ELEASE));
		else if (it->kind == OP_FAIL && it->res.dead)
			say(&work_command, "job %llu: failed (%s); dead "
			    "after %u attempt%s",
			    (unsigned long long)s->job.id, how_it_ended(s, how),
			    it->res.attempts, PLURAL(it->res.attempts));
		else if (it->kind == OP_FAIL)
			say(&work_command, "job %llu: failed (%s); due "
			    "again in %s", (unsigned long long)s->job.id,
			    how_it_ended(s, how), fmt_duration(due, sizeof due,
			    it->res.retry_in_us));
		free_slot(s);
	}
	if (t->cw) {
		w->cw = t->cw;
	} else if (t->want_cw) {
		w->cw_retry_at = now + WAIT_CONN_RETRY_US;
		w->next_claim = now + 1000000;	/* claim each second */
	}
	if (t->given_back)
		say(&work_command, "gave back %zu job%s of the claim "
		    "whose outcome was unknown", t->given_back,
		    PLURAL(t->given_back));
	if (t->forgotten)
		say(&work_command, "%zu claim%s whose outcome was unknown "
		    "not given back, %s lease over: %s jobs are left to "
		    "requeue-stale", t->forgotten, PLURAL(t->forgotten),
		    t->forgotten == 1 ? "its" : "their",
		    t->forgotten == 1 ? "its" : "their");
	if (t->st != MQ_OK) {
		op_failed(w, &t->err);
		return;
	}
	if (w->failures && (t->n || t->room))
		say(&work_command, "connected again");
	if (t->n || t->room)
		w->failures = 0;
	w->limit_said = 0;	/* connected: a refusal now is said again */
	if (t->fire)
		fired(w, t);
	if (!t->room)
		return;
	if (t->unconfirmed[0])
		say(&work_command, "%s", t->unconfirmed);
	/* from the claim, not from the park, which may come much later
	 * (after the jobs it took have run): a time, not a length */
	w->limit_retry_at = t->retry_us > 0 ? t->posted_at + t->retry_us : 0;
	w->limit_held = t->held;
	if (t->claim_st == MQ_EMPTY || t->claim_st == MQ_PAUSED) {
		/* a wakeup that brought nothing may be an apply's: the
		 * schedules are read again (work/heartbeat.c) */
		if (w->woke)
			w->fire_woken = 1;
		w->woke = 0;
		w->next_claim = INT64_MAX;	/* until the wait says so */
		if (!w->idle_since)
			w->idle_since = now;
		return;
	}
	w->idle_since = 0;
	w->idle_waits = 0;
	w->woke = 0;
	if (w->cw)
		mq_wait_rearm(w->cw);	/* jobs came: the next wait looks */
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
	/* fewer jobs than free process slots, none held back by limits:
	 * no more were due. The slots left free wait as after an empty
	 * claim (park: a push wakes them, the park's first look sees a
	 * job due meanwhile; an ack claims with it), not for another
	 * claim at once, which found nothing and held the acks of jobs
	 * that ended meanwhile behind its transaction (a chain of
	 * dependents under --concurrency: one more transaction a link) */
	if (t->njobs < t->need && !t->held) {
		w->next_claim = INT64_MAX;
		w->idle_since = now;
	}
	mq_jobs_free(t->jobs, t->njobs);
	t->jobs = NULL;
}

/* The usual name of a signal a job may die of, "" for another one
 * (sigabbrev_np is glibc's only, since 2.32) */
static const char *
signal_name(int sig)
{
	switch (sig) {
	case SIGHUP:	return "SIGHUP";
	case SIGINT:	return "SIGINT";
	case SIGQUIT:	return "SIGQUIT";
	case SIGILL:	return "SIGILL";
	case SIGTRAP:	return "SIGTRAP";
	case SIGABRT:	return "SIGABRT";
	case SIGBUS:	return "SIGBUS";
	case SIGFPE:	return "SIGFPE";
	case SIGKILL:	return "SIGKILL";
	case SIGUSR1:	return "SIGUSR1";
	case SIGSEGV:	return "SIGSEGV";
	case SIGUSR2:	return "SIGUSR2";
	case SIGPIPE:	return "SIGPIPE";
	case SIGALRM:	return "SIGALRM";
	case SIGTERM:	return "SIGTERM";
	case SIGXCPU:	return "SIGXCPU";
	case SIGXFSZ:	return "SIGXFSZ";
	case SIGSYS:	return "SIGSYS";
	default:	return "";
	}
}

/* "killed by signal N (NAME)", or without the name for one it lacks */
static int
put_killed(char *buf, size_t size, int sig)
{
	const char *name = signal_name(sig);

	return snprintf(buf, size, *name ? "killed by signal %d (%s)" :
	    "killed by signal %d%s", sig, name);
}

const char *
how_it_ended(const struct slot *s, char *buf)
{
	if (s->end == TIMED_OUT)
		return "timed out";
	if (WIFSIGNALED(s->status)) {
		put_killed(buf, HOW_MAX, WTERMSIG(s->status));
		return buf;
	}
	return "non-zero exit";
}

size_t
error_text(const struct slot *s, int64_t timeout_us, char *buf)
{
	size_t keep = s->tail_len, start, i;
	int n;

	if (s->end == TIMED_OUT)
		n = snprintf(buf, 128, "timed out after %.1fs",
		    (double)timeout_us / 1e6);
	else if (WIFSIGNALED(s->status))
		n = put_killed(buf, 128, WTERMSIG(s->status));
	else
		n = snprintf(buf, 128, "exit status %d",
		    WEXITSTATUS(s->status));
	if (keep == 0)
		return (size_t)n;
	/* the store keeps TAIL bytes: drop the oldest output, not the end */
	n += snprintf(buf + n, 8, "; ");
	if (keep > TAIL - (size_t)n)
		keep = TAIL - (size_t)n;
	start = (s->tail_pos + TAIL - keep) % TAIL;
	for (i = 0; i < keep; i++)
		buf[(size_t)n + i] = s->tail[(start + i) % TAIL];
	/* the line break that ends the last line is not part of the error
	 * (it would show as \x0a in mq ls and mq show) */
	while (keep > 0 && (buf[(size_t)n + keep - 1] == '\n' ||
	    buf[(size_t)n + keep - 1] == '\r'))
		keep--;
	return keep ? (size_t)n + keep : (size_t)n - 2;
}

int
succeeded(const struct slot *s)
{
	return s->state == ENDED && s->end == EXITED &&
	    WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0;
}
