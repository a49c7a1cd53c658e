/*
 * work/wait.c: part of mq work: waiting for pushes when idle, on a
 * non-blocking connection parked in a marked SLEEP that the loop polls
 * with the rest, so that a push wakes the worker without the loop ever
 * blocking on the server; on a Galera cluster the same connection
 * deletes its rows in the waiters table once the worker is busy.
 */
#include "work.h"

/* Parks the waiting connection, if idle and not parked yet. */
void
park(struct worker *w)
{
	int64_t us, left;

	if (w->waiting || w->wait_broken || w->cw == NULL)
		return;
	/* the schedules' look is due (their next instant, the recheck, or
	 * a wakeup that brought no job): a claim fires first
	 * (work/claim.c), instead of a park */
	if (!w->op.busy && !w->stopping && !w->fire.off &&
	    (w->fire_woken || mq_fire_wait_us(&w->fire) == 0)) {
		w->next_claim = 0;
		return;
	}
	us = mq_wait_backoff_us(w->idle_waits++);
	if (!w->op.busy && !w->fire.off && us > mq_fire_wait_us(&w->fire))
		us = mq_fire_wait_us(&w->fire);
	/* a rate lets a claim through then: not later */
	if (w->limit_retry_at > 0) {
		left = w->limit_retry_at - mq_now_us();
		if (left < 1000)
			left = 1000;
		if (us > left)
			us = left;
	}
	if (mq_wait_begin(w->cw, w->pop.queue, us, &w->wait) != MQ_OK) {
		w->wait_broken = 1;	/* no non-blocking waits: poll */
		return;
	}
	w->waiting = !w->wait.done;
	if (w->wait.done)
		w->next_claim = 0;
}

/* Not idle: the waiting connection's rows in the waiters table (on a
 * Galera cluster, what pushers on other nodes wake it by) go, without
 * blocking, so that pushes wake the workers that wait. Nothing to do
 * elsewhere. */
void
unpark(struct worker *w)
{
	if (w->waiting || w->wait_broken || w->cw == NULL)
		return;
	if (mq_wait_leave_begin(w->cw, &w->wait) != MQ_OK) {
		mq_close(w->cw);		/* made again when next idle */
		w->cw = NULL;
		return;
	}
	w->waiting = !w->wait.done;
}

/* After poll(): the waiting connection's answer, if any. */
void
step_wait(struct worker *w, short revents, int timed_out)
{
	enum mq_status st = mq_wait_step(w->cw, &w->wait, revents, timed_out);

	if (!w->wait.done)
		return;
	w->waiting = 0;
	/* due now, or woken; or held back by limits, whose slots may have
	 * ended without a wakeup (an expiry; an ack by a consumer that
	 * connected before anyone waited; other consumers that took the
	 * jobs): it looks again at the end of each park (mq-limit(1): at
	 * its next look, within a second) */
	w->woke = st == MQ_OK;
	if (st == MQ_OK || (st == MQ_EMPTY && w->limit_held))
		w->next_claim = 0;
	else if (st != MQ_EMPTY) {
		mq_close(w->cw);		/* made again when next idle */
		w->cw = NULL;
		w->next_claim = 0;
	}
}
