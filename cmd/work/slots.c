/*
 * work/slots.c: part of mq work: the jobs the worker holds, as the loop
 * sees them (a slot each): started when there is room, reaped when they
 * end, stopped when the clock or a lost lease says so. Nothing here
 * talks to the server: the slots only say what the threads are to do.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

void
warn_job(const struct slot *s, const char *what)
{
	say(&work_command, "job %llu: %s",
	    (unsigned long long)s->job.id, what);
}

int
count_slots(const struct worker *w, enum slot_state st)
{
	int i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slot[i].state == st;
	return n;
}

void
free_slot(struct slot *s)
{
	free(s->job.payload);
	s->job.payload = NULL;
	s->state = FREE;
	s->in_op = 0;
	s->beat_by_op = 0;
	s->lease_end = 0;
}

/* Stops a running job whose lease is not ours any more, or drops a
 * prefetched one. */
void
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
	s->kill_at = mq_now_us() + GRACE_US;
}

/* A job that failed while the reader of the standard output it shares
 * with mq work had gone (mq work ... | head): most likely killed by
 * SIGPIPE for writing there, not its own fault, and every job after it
 * would be. It is given back (due now, the attempt not counted), and
 * the worker stops claiming and ends with status 74 once the running
 * jobs are done (those that fail so are given back too). */
static void
output_gone(struct worker *w, struct slot *s)
{
	char how[HOW_MAX];

	s->end = ABANDONED;
	say(&work_command, "job %llu: %s with standard output closed (its "
	    "reader has gone): given back%s", (unsigned long long)s->job.id,
	    WIFSIGNALED(s->status) ? how_it_ended(s, how) : "failed",
	    w->stdout_gone ? "" : "; claiming no more");
	w->stdout_gone = 1;
	w->stopping = 1;
}

void
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
			s->ended_at = mq_now_us();
			if (!s->stopping)
				s->end = EXITED;
			if (!s->stopping && !succeeded(s) && stdout_gone())
				output_gone(w, s);
			w->avg_run_us = w->avg_run_us ? (7 * w->avg_run_us +
			    (s->ended_at - s->started_at)) / 8 :
			    s->ended_at - s->started_at + 1;
			/* what is written now is read; a background process
			 * that still holds the pipe is not waited for */
			drain(s, 1);
			if (s->err_fd >= 0) {
				close(s->err_fd);
				s->err_fd = -1;
			}
		}
}

/* Starts waiting jobs while there is room, oldest claim first. */
void
start_queued(struct worker *w)
{
	int i, running = count_slots(w, RUNNING), e;

	for (i = 0; i < w->nslots && running < w->concurrency; i++) {
		struct slot *s = &w->slot[i];
		if (s->state != QUEUED || s->in_op || w->stopping)
			continue;
		if ((e = spawn_job(s, w->path, w->cmd)) != 0) {
			say(&work_command, "cannot run '%s' for job "
			    "%llu: %s", shown(w->cmd[0]),
			    (unsigned long long)s->job.id, strerror(e));
			/* give it back rather than hold it for a lease */
			s->state = ENDED;
			s->end = ABANDONED;
			s->ended_at = mq_now_us();
			if (e == ENOENT || e == EACCES || e == ENOEXEC ||
			    e == ENOTDIR) {
				w->cannot_run = w->stopping = 1;
			} else {
				/* out of something (files, memory, /tmp):
				 * claim again in a second */
				w->next_claim = mq_now_us() + 1000000;
			}
			continue;
		}
		s->state = RUNNING;
		s->stopping = 0;
		s->kill_at = 0;
		s->started_at = mq_now_us();
		s->deadline = w->timeout_us ? s->started_at + w->timeout_us : 0;
		running++;
	}
}

/* Timeouts, kills, leases that ran out: what the clock asks of held
 * jobs, whatever the threads are waiting for. */
void
tend(struct worker *w)
{
	int64_t now = mq_now_us();
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
	if (w->stopping && count_slots(w, RUNNING) == 0) {
		if (!w->stop_idle_since)
			w->stop_idle_since = now;
	} else {
		w->stop_idle_since = 0;
	}
}
