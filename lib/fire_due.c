/*
 * fire_due.c: consumers fire the calendar schedules of their queues
 * (doc/schedules.md "Firing"), so that no leader and no extra process
 * is needed: mq work and mq pop --wait call mq_fire_due between
 * claims. It fires (schedule.c) when the earliest instant it last read
 * has come, when MQ_FIRE_RECHECK_US passed since it last read (a
 * schedule added or moved meanwhile by another process), or after a
 * wakeup that brought no job (mq schedule apply wakes the waiters of
 * the queues it changed), never more than once a second. A claim does
 * not fire: a busy consumer pays one firing read per recheck, an idle
 * one about one a second at most.
 *
 * Firing is a side duty of a consumer: what fails in it does not fail
 * the claim. The state says what failed, for the command to say once;
 * an account that may not write the schedules' tables stops trying.
 */
#include <mysqld_error.h>

#include "internal.h"
#include "schedule.h"

static int
refused(const struct mq_error *e)
{
	return e->status == MQ_EACCESS || e->db_errno == ER_NO_SUCH_TABLE ||
	    e->db_errno == ER_TABLEACCESS_DENIED_ERROR ||
	    e->db_errno == ER_COLUMNACCESS_DENIED_ERROR;
}

int64_t
mq_fire_wait_us(const struct mq_fire_state *s)
{
	int64_t left;

	if (s->off)
		return INT64_MAX;
	left = s->at_us - mq_now_us();
	return left > 0 ? left : 0;
}

enum mq_status
mq_fire_due(struct mq_conn *c, const char *queues, struct mq_fire_state *s,
    int woken, uint64_t *runs)
{
	struct mq_fire_report r;
	enum mq_status rc;
	int64_t now = mq_now_us(), next;

	*runs = 0;
	if (s->off)
		return MQ_OK;
	/* a wakeup that brought nothing may be an apply's: look, but not
	 * more than once a second */
	if (now < s->at_us && !(woken && now - s->last_us >= MQ_FIRE_MIN_US))
		return MQ_OK;
	if (now - s->last_us < MQ_FIRE_MIN_US && s->last_us != 0 &&
	    !s->more) {
		s->at_us = s->last_us + MQ_FIRE_MIN_US;
		return MQ_OK;
	}
	s->last_us = now;
	/* a few schedules at a time: the caller claims their runs (a
	 * midnight of thousands of schedules does not hold a pop --wait
	 * past its time), and comes back at once for the rest */
	rc = mq_schedule_fire(c, queues, MQ_FIRE_BATCH, &r);
	s->more = 0;
	*runs = r.runs;
	s->fired += r.runs;
	if (rc != MQ_OK) {
		s->failed = 1;
		s->err = *mq_conn_error(c);
		if (refused(&s->err))
			s->off = 1;
		s->at_us = now + MQ_FIRE_RECHECK_US;
		/* the connection is gone: the caller's next statement says
		 * so, as it would have without firing */
		return rc == MQ_EUNAVAIL || rc == MQ_EUNKNOWN ? rc : MQ_OK;
	}
	s->failed = 0;
	next = now + MQ_FIRE_RECHECK_US;
	/* the earliest instant, on this clock: the server's distance to it */
	if (r.next_us != 0 && r.next_us - r.now_us < MQ_FIRE_RECHECK_US)
		next = now + (r.next_us > r.now_us ? r.next_us - r.now_us : 0);
	if (next < now + MQ_FIRE_MIN_US)
		next = now + MQ_FIRE_MIN_US;
	/* more are due than the batch took: at once (fewer taken, the
	 * others' rows are locked by whoever fires them: as usual) */
	if (r.schedules >= MQ_FIRE_BATCH && r.next_us != 0 &&
	    r.next_us <= r.now_us) {
		next = now;
		s->more = 1;
	}
	s->at_us = next;
	return MQ_OK;
}
