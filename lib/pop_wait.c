/*
 * pop_wait.c: a claim that waits for jobs (mq pop --wait). It claims,
 * and while nothing is there parks in wakeup.c's wait statement until a
 * job is due, a pusher wakes it, or the time is up; then claims again.
 * It sits above both: pop.c claims and wakeup.c parks and wakes, and
 * neither calls the other (push.c wakes waiters without reaching the
 * claim code). Between claims it fires the due schedules of its queues
 * (fire_due.c).
 */
#include "internal.h"

static enum mq_status
pop_wait(struct mq_conn *c, const struct mq_pop_opts *o, int64_t wait_us,
    void (*park)(int parked, void *ctx), void *ctx, struct mq_job **jobs,
    size_t *n)
{
	int64_t deadline = mq_now_us() + (wait_us > 0 ? wait_us : 0), left, f;
	enum mq_status rc, why;
	unsigned idle = 0;
	int woken = 0, timer;
	uint64_t runs;

	/* claim again only when the wait says a job is due or a pusher
	 * woke us: an idle waiter sends one statement a second (three, one
	 * that a due job it cannot claim, held locked, keeps waking) */
	mq_wait_rearm(c);
	for (why = MQ_EMPTY;;) {
		rc = mq_pop(c, o, jobs, n);
		if (rc != MQ_EMPTY && rc != MQ_PAUSED)
			return rc;
		why = rc;
		/* nothing to claim: the due schedules of its queues push
		 * their runs (fire_due.c), claimed at once */
		if ((rc = mq_fire_due(c, o->queue, &c->fire, woken,
		    &runs)) != MQ_OK)
			return rc;
		if (runs > 0)
			continue;
		if (park)
			park(1, ctx);
		if (!c->wait_said_due)	/* else on with the backoff */
			idle = 0;
		timer = 0;
		do {
			if ((left = deadline - mq_now_us()) <= 0)
				return why;
			if (left > mq_wait_backoff_us(idle))
				left = mq_wait_backoff_us(idle);
			/* a rate lets a claim through then: not later */
			if (c->limit_retry_us > 0 && left > c->limit_retry_us)
				left = c->limit_retry_us;
			/* a schedule's instant comes (or the recheck): look */
			if ((f = mq_fire_wait_us(&c->fire)) == 0) {
				timer = 1;
				rc = MQ_OK;
				break;
			}
			if (left > f)
				left = f;
			idle++;
			rc = mq_wait(c, o->queue, left);
		} while (rc == MQ_EMPTY);
		if (park)
			park(0, ctx);
		if (rc != MQ_OK)
			return rc;
		/* woken by a pusher, not by a due job nor the timer: if the
		 * claim finds nothing, it may have been an apply's */
		woken = !timer && !c->wait_said_due;
	}
}

/* The waits over, their rows in the waiters table (Galera) go, so that
 * pushers wake those still waiting: a failure there is not the claim's
 * (the rows of a connection that is gone are deleted by the next
 * waiter). */
enum mq_status
mq_pop_wait(struct mq_conn *c, const struct mq_pop_opts *o, int64_t wait_us,
    void (*park)(int parked, void *ctx), void *ctx, struct mq_job **jobs,
    size_t *n)
{
	enum mq_status rc;
	struct mq_error saved;

	/* retries of a claim (lock waits) begin no later than D + 5 s, so
	 * that the call ends within D plus the client's 10 s (mq pop) */
	c->retry_until_us = mq_now_us() + (wait_us > 0 ? wait_us : 0) +
	    5000000;
	rc = pop_wait(c, o, wait_us, park, ctx, jobs, n);
	c->retry_until_us = 0;
	saved = c->err;

	if (mq__wait_leave(c) != MQ_OK)
		c->err = saved;
	return rc;
}

int
mq_pop_fire_failed(struct mq_conn *c, struct mq_error *e)
{
	if (!c->fire.failed || c->fire.off)
		return 0;
	*e = c->fire.err;
	return 1;
}
