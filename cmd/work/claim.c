/*
 * work/claim.c: part of mq work: the work thread's task. The loop
 * gathers what is to be said to the server (acks, fails, give-backs) and
 * how many jobs a claim may take (op_post); the thread says it in one go
 * (op_run), on a connection of its own, so that acks ride in the next
 * claim's transaction and a claim takes enough jobs to keep short ones
 * from costing a transaction each (see the top of work.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

/* ---- the work thread's task (runs in that thread: no output) ---- */

static void
op_run(void *ctx)
{
	struct op_task *t = ctx;
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
	t->given_back = 0;
	t->forgotten = 0;
	t->cw = NULL;
	t->unconfirmed[0] = '\0';
	if (w->c == NULL) {
		if ((w->c = connect_table(&w->g->conn, w->g->table,
		    &t->err)) == NULL) {
			t->st = t->err.status;
			return;
		}
		w->hosts = mq_conn_hosts(w->c);
	}
	/* a claim whose COMMIT got no answer may have leased jobs that
	 * nobody holds: back at once, not at their lease's end (up to a
	 * whole prefetch, each with an attempt spent), once the session
	 * that sent it is over (mq_release_orphan ends it); each is
	 * forgotten only once given back, and nothing is claimed before.
	 * One whose session was another Galera node's (this connection
	 * moved to another, its node died, say) cannot be ended from here:
	 * what it committed went back all the same, and the claims go on,
	 * the orphan tried again at each until its lease is over (a claim
	 * committed later), then it is as any lost consumer's. (Claims
	 * waited for its lease to end: a failover that met a claim's
	 * COMMIT took the whole lease, 40 s in CI.) */
	for (i = 0; i < w->norphans;) {
		size_t back = 0;
		int later;

		st = mq_release_orphan(w->c, &w->orphans[i], &back);
		t->given_back += back;
		later = mq_now_us() < w->orphans[i].lease_end_us;
		if (st != MQ_OK && later && mq_orphan_elsewhere(w->c)) {
			i++;	/* kept */
			continue;
		}
		if (st != MQ_OK && (st == MQ_EUNAVAIL || st == MQ_EUNKNOWN ||
		    later))
			goto failed;
		if (st != MQ_OK)
			t->forgotten++;
		memmove(w->orphans + i, w->orphans + i + 1,
		    (--w->norphans - i) * sizeof *w->orphans);
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
		} else if (it->kind == OP_EXTEND) {
			it->sent_at = mq_now_us();
			st = mq_try_extend(w->c, &it->r, w->lease_us);
		} else {
			fo.error = it->text;
			fo.error_len = it->text_len;
			st = mq_fail(w->c, &it->r, &fo, &it->res);
		}
		/* an extend that met a row lock is tried again soon */
		if (st != MQ_OK && st != MQ_ELEASE &&
		    !(it->kind == OP_EXTEND && st == MQ_ERETRY))
			goto failed;
		it->st = st;
		it->tried = 1;
	}
	/* the due schedules of its queues push their runs, which the
	 * claim takes (lib/fire_due.c: what fails there is kept in
	 * w->fire, said by the loop; a lost connection fails the task) */
	if (t->fire && (st = mq_fire_due(w->c, w->pop.queue, &w->fire,
	    t->fire_woken, &t->runs)) != MQ_OK)
		goto failed;
	/* orphans kept (above) leave a claim's own places, or it waits */
	if (t->room && w->norphans > MQ_ORPHANS_MAX - MQ_QUEUES_MAX)
		t->room = 0;
	if (t->room) {
		w->pop.count = t->room;
		w->pop.need = t->need;
		st = t->claim_st = mq_ack_pop(w->c, r, nr, lost, &t->acked,
		    &w->pop, &t->jobs, &t->njobs);
		t->retry_us = mq_claim_retry_us(w->c);
		t->held = mq_claim_held(w->c);
		if (st == MQ_OK && mq_claim_unconfirmed(w->c))
			snprintf(t->unconfirmed, sizeof t->unconfirmed, "%s",
			    mq_claim_unconfirmed(w->c));
		/* whatever it returned: one queue of a list (a statement on
		 * Galera) may have lost its answer while others gave jobs */
		w->norphans += mq_take_orphans(w->c, w->orphans + w->norphans,
		    MQ_ORPHANS_MAX - w->norphans);
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

/* ---- the loop's side: no statement is sent from here ---- */

/* Jobs to hold waiting per process slot: one, more for short jobs. */
static long long
prefetch(const struct worker *w)
{
	long long k = w->avg_run_us ? PREFETCH_US / w->avg_run_us : 1;

	return k < 1 ? 1 : k > PREFETCH_MAX ? PREFETCH_MAX : k;
}

/* How many jobs a claim may take now, nacks slots being acked with it
 * (see the top of work.c); 0: no claim now. */
long long
claim_room(const struct worker *w, long long nacks)
{
	long long room = (long long)w->concurrency * (1 + prefetch(w)) -
	    (w->nslots - count_slots(w, FREE) - nacks);

	if (room > count_slots(w, FREE) + nacks)
		room = count_slots(w, FREE) + nacks;
	if (w->max_jobs && room > w->max_jobs - w->claimed)
		room = w->max_jobs - w->claimed;
	if (w->stopping || count_slots(w, QUEUED) != 0 ||
	    count_slots(w, RUNNING) >= w->concurrency ||
	    mq_now_us() < w->next_claim)
		return 0;
	return room < 0 ? 0 : room;
}

/* Whether the loop wants the waiting connection made. */
static int
want_wait_conn(const struct worker *w)
{
	return !w->stopping && w->idle_since && w->cw == NULL &&
	    !w->wait_broken && mq_now_us() >= w->cw_retry_at;
}

/* Gives the work thread what is to do: the jobs that ended (fail, give
 * back, or ack: in the claim's transaction, or alone when no claim comes
 * within ACK_DELAY_US), prefetched jobs to give back after a signal, a
 * claim when there is room. */
void
op_post(struct worker *w)
{
	struct op_task *t = &w->ot;
	int64_t now = mq_now_us(), oldest = INT64_MAX;
	long long nacks = 0, nfails = 0, room;
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
			if (!s->beat_by_op || s->stopping || now < s->next_beat)
				continue;
			it->kind = OP_EXTEND;	/* work/heartbeat.c */
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
			nfails++;
		}
		it->slot = j;
		it->r = s->job.receipt;
		it->tried = 0;
		it->lost = 0;
		t->n++;
	}
	/* a job that finishes (done, or dead) may make others due (its
	 * dependents: mq push --after): an idle worker claims again, with
	 * the acks in their transaction, which sees them due */
	if ((nacks || nfails) && w->idle_since && w->next_claim > now)
		w->next_claim = now;
	room = claim_room(w, nacks);
	if (room == 0 && nacks && !(w->stopping ||
	    w->next_claim == INT64_MAX || count_slots(w, QUEUED) == 0 ||
	    now - oldest >= ACK_DELAY_US)) {
		for (i = k = 0; i < t->n; i++)	/* the acks wait a little */
			if (t->item[i].kind != OP_ACK)
				t->item[k++] = t->item[i];
		t->n = k;
	}
	t->room = (unsigned)room;
	/* with a claim (park() asks for one when they are due) */
	t->runs = 0;
	t->fire_woken = w->fire_woken;
	t->fire = room > 0 && !w->stopping && !w->fire.off &&
	    (mq_fire_wait_us(&w->fire) == 0 || w->fire_woken);
	/* the jobs for the process slots free now; the others are a
	 * prefetch (a limited queue's claim reads no further for them
	 * than the head of the queue: lib/candidates.c) */
	t->need = (unsigned)(w->concurrency - count_slots(w, RUNNING));
	if (t->need > t->room)
		t->need = t->room;
	t->want_cw = want_wait_conn(w);
	/* jobs of a claim whose outcome was unknown: given back even when
	 * nothing else is to do (stopping, say) */
	if (t->n == 0 && t->room == 0 && !t->want_cw && !w->norphans)
		return;
	/* an extend leaves its job watched (tend(): its lease's end) */
	for (i = 0; i < t->n; i++)
		if (t->item[i].kind != OP_EXTEND)
			w->slot[t->item[i].slot].in_op = 1;
	t->w = w;
	t->posted_at = now;
	dbt_post(&w->op, op_run, t);
}
