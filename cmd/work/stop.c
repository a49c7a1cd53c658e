/*
 * work/stop.c: part of mq work: stopping. The signals that ask for it
 * (and SIGCHLD) reach the loop through a self-pipe, so that the loop
 * acts on them between two poll()s, never inside a handler; and when the
 * server does not take what is left while stopping, the worker says what
 * stays undone and exits rather than wait on forever.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "work.h"

/* A global because a signal handler can reach nothing else: the
 * self-pipe, written by on_signal(), read by the loop (work_signals()
 * hands it the read end). */
static int sigpipe_fd[2] = { -1, -1 };

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	(void)!write(sigpipe_fd[1], &b, 1);
	errno = saved;
}

int
work_signals(void)
{
	struct sigaction sa;

	if (pipe(sigpipe_fd) != 0) {
		say(&work_command, "pipe: %s", strerror(errno));
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
	catch_signal(SIGTERM, &sa);
	catch_signal(SIGINT, &sa);
	catch_signal(SIGHUP, &sa);	/* a closed terminal: stop cleanly */
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return sigpipe_fd[0];
}

/* The first signal stops claiming (waiting jobs go back at once); the
 * second stops the running ones too and gives them back. */
void
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

/* Exiting with jobs of claims whose outcome was unknown not given back
 * (work/claim.c): says so, queue by queue. */
void
orphans_left(const struct worker *w)
{
	size_t i;

	for (i = 0; i < w->norphans; i++)
		say(&work_command, "the jobs of queue '%s' that a claim "
		    "whose outcome was unknown may have leased were not given "
		    "back: they stay leased until their lease ends",
		    w->orphans[i].queue);
}

/* Stopping, and the server has not taken what is left for STOP_WAIT_US
 * since the last job ended: says what stays undone, and exits. */
void
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
			say(&work_command, "job %llu: %s sent but the "
			    "server did not answer in %ds: outcome unknown "
			    "(%s, or leased until its lease ends)",
			    (unsigned long long)s->job.id, what,
			    STOP_WAIT_US / 1000000, succeeded(s) ? "done" :
			    "given back");
		else
			say(&work_command, "job %llu: no %s: the server "
			    "did not answer in %ds; it stays leased until its "
			    "lease ends", (unsigned long long)s->job.id,
			    what, STOP_WAIT_US / 1000000);
	}
	if (w->op.busy && count_slots(w, FREE) == w->nslots)
		say(&work_command, "a claim was under way: what it "
		    "took stays leased until its lease ends");
	orphans_left(w);
	/* jobs of a lost claim may stay leased to nobody: status 3, as mq
	 * pop's (mq-work(1), EXIT STATUS) */
	exit(w->norphans ? exit_status(MQ_EUNKNOWN) : EX_UNAVAILABLE);
}
