/*
 * work/loop.c: part of mq work: its one poll() loop, and what starts it.
 * The loop owns the children's stderr, the signals' self-pipe, the
 * timers and the waiting connection, and sends no statement itself: it
 * posts tasks to the two server threads and reads their outcome when
 * their pipe says they are done.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "work.h"

/* Whether the worker is to exit: nothing held, and stopping, or the
 * jobs it was to take taken, or idle as long as it was to wait. */
static int
done(struct worker *w)
{
	if (w->stopping && w->stop_idle_since &&
	    mq_now_us() - w->stop_idle_since >= STOP_WAIT_US &&
	    (w->op.busy || count_slots(w, FREE) != w->nslots ||
	    w->norphans))
		give_up(w);
	/* jobs a claim whose outcome was unknown may have leased are given
	 * back first (work/claim.c) */
	if (count_slots(w, FREE) != w->nslots || w->op.busy || w->norphans)
		return 0;
	if (w->stopping)
		return 1;
	if (w->max_jobs && w->claimed >= w->max_jobs)
		return 1;
	/* due jobs limits hold back are not nothing to do: they are
	 * claimed when a slot ends or the window has room */
	if (w->idle_since && w->exit_when_empty && !w->limit_held)
		return 1;
	return w->idle_since && w->wait_us >= 0 &&
	    mq_now_us() - w->idle_since >= w->wait_us;
}

/* How long poll() may sleep: until the next thing the clock asks for.
 * What a busy thread is to do waits for it (its pipe wakes the loop). */
static int
timeout_ms(struct worker *w)
{
	int64_t now = mq_now_us(), next = now + 1000000;
	int i, op_free = !w->op.busy && now >= w->reconnect_at;

#define SOONER(t) do { if ((t) < next) next = (t); } while (0)
	if (op_free && !w->waiting && claim_room(w, 0) > 0)
		SOONER(w->next_claim);
	if (!w->op.busy && w->reconnect_at > now)
		SOONER(w->reconnect_at);
	/* (idle with jobs held, as free process slots are, it does not
	 * end: done() waits for them, their ends wake the loop) */
	if (w->idle_since && w->wait_us >= 0 &&
	    count_slots(w, FREE) == w->nslots)
		SOONER(w->idle_since + w->wait_us);
	if (w->waiting && w->wait.deadline_us > 0)
		SOONER(w->wait.deadline_us);
	if (w->stop_idle_since)
		SOONER(w->stop_idle_since + STOP_WAIT_US);

	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if (s->state == ENDED && op_free && !s->in_op)
			SOONER(s->ended_at + ACK_DELAY_US);
		if (s->state != QUEUED && s->state != RUNNING)
			continue;
		if (!s->stopping && !s->in_op &&
		    (s->beat_by_op ? op_free : !w->beat.busy))
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
	struct pollfd fds[MAX_SLOTS + 5];
	int map[MAX_SLOTS + 5], nfds, i, r, wait_idx, err_idx;
	unsigned char sig;

	while (!done(w)) {
		reap(w);
		tend(w);
		if (!w->op.busy && mq_now_us() >= w->reconnect_at)
			op_post(w);
		if (!w->beat.busy)
			beat_post(w);
		start_queued(w);
		if (done(w))
			break;
		if (!w->stopping && w->idle_since) {
			park(w);
			if (!w->waiting && w->next_claim == INT64_MAX)
				w->next_claim = mq_now_us() + 1000000;
		} else {
			unpark(w);
		}
		nfds = 0;
		fds[nfds].fd = w->sig_fd;
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = w->op.fd[0];
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = w->beat.fd[0];
		fds[nfds++].events = POLLIN;
		/* while stderr takes no write, the jobs' output waits in
		 * their pipes, and the loop for stderr (drain) */
		for (i = 0; i < w->nslots && !w->err_stalled; i++)
			if (w->slot[i].state == RUNNING &&
			    w->slot[i].err_fd >= 0) {
				map[nfds] = i;
				fds[nfds].fd = w->slot[i].err_fd;
				fds[nfds++].events = POLLIN;
			}
		err_idx = -1;
		if (w->err_stalled) {
			err_idx = nfds;
			fds[nfds].fd = 2;
			fds[nfds++].events = POLLOUT;
		}
		wait_idx = -1;
		if (w->waiting) {
			wait_idx = nfds;
			fds[nfds].fd = w->wait.fd;
			fds[nfds++].events = w->wait.events;
		}
		r = poll(fds, (nfds_t)nfds, timeout_ms(w));
		if (r < 0 && errno != EINTR) {
			say(&work_command, "poll: %s", strerror(errno));
			exit(EX_OSERR);
		}
		if (r > 0 && (fds[0].revents & POLLIN))
			while (read(w->sig_fd, &sig, 1) == 1)
				if (sig == SIGTERM || sig == SIGINT ||
				    sig == SIGHUP)
					on_stop(w);
		if (r > 0 && fds[1].revents && dbt_collect(&w->op))
			op_apply(w);
		if (r > 0 && fds[2].revents && dbt_collect(&w->beat))
			beat_apply(w);
		if (err_idx >= 0 && fds[err_idx].revents)
			w->err_stalled = 0;
		for (i = 3; r > 0 && i < nfds; i++)
			if (i != wait_idx && i != err_idx && fds[i].revents &&
			    drain(&w->slot[map[i]], 0))
				w->err_stalled = 1;
		if (w->waiting && wait_idx >= 0 && fds[wait_idx].revents)
			step_wait(w, fds[wait_idx].revents, 0);
		else if (w->waiting && w->wait.timeout_ms >= 0 && r == 0)
			step_wait(w, 0, 1);
	}
}

/* The worker whose threads end with the process (end_threads). */
static struct worker *ending;
static pthread_t main_thread;

/* At exit, from the loop's thread: its idle server threads end and are
 * joined (valgrind counts a thread alive at exit as a leak); one that
 * waits for the server is left. */
static void
end_threads(void)
{
	if (ending && pthread_equal(pthread_self(), main_thread)) {
		dbt_end(&ending->op);
		dbt_end(&ending->beat);
	}
}

int
work_run(struct worker *w, struct mq_global *g, char **cmd)
{
	int e;

	w->g = g;
	w->cmd = cmd;
	w->nslots = (1 + PREFETCH_MAX) * w->concurrency < MAX_SLOTS ?
	    (1 + PREFETCH_MAX) * w->concurrency : MAX_SLOTS;
	w->pop.queue = g->queue;
	w->pop.lease_us = w->lease_us;
	if (find_command(w->cmd[0], w->path, sizeof w->path) != 0) {
		say(&work_command, "cannot run '%s': %s",
		    shown(w->cmd[0]), strchr(w->cmd[0], '/') ?
		    strerror(errno) : "not found in PATH");
		return 127;
	}

	/* fail early on what no retry can mend (table, grants, names) */
	w->c = open_queue_table(&work_command, g);
	w->hosts = mq_conn_hosts(w->c);
	w->sig_fd = work_signals();
	main_thread = pthread_self();
	ending = w;
	atexit(end_threads);
	if ((e = dbt_start(&w->op)) != 0 || (e = dbt_start(&w->beat)) != 0) {
		say(&work_command, "cannot start a thread: %s",
		    strerror(e));
		exit(EX_OSERR);
	}
	loop(w);
	end_threads();
	/* a thread still in a statement keeps its connection: the exit
	 * closes it */
	if (!w->op.busy)
		mq_close(w->c);
	if (!w->beat.busy)
		mq_close(w->cb);
	/* on a Galera cluster the waiting connection's rows go, once its
	 * park ends (within a second) */
	if (w->cw)
		(void)mq_wait_end(w->cw, w->waiting ? &w->wait : NULL);
	mq_close(w->cw);
	return w->cannot_run ? 127 : w->stdout_gone ? EX_IOERR : 0;
}
