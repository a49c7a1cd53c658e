/*
 * work/heartbeat.c: part of mq work: keeping the leases of held jobs,
 * waiting or running. The heartbeat thread has a connection of its own
 * and does not wait for row locks (mq_try_extend), so that a claim or an
 * ack that waits never holds up an extension; a lease found lost stops
 * its job (lose()).
 */
#include <string.h>

#include "work.h"

/* ---- the heartbeat thread's task ---- */

static void
beat_run(void *ctx)
{
	struct beat_task *t = ctx;
	struct worker *w = t->w;
	enum mq_status st;
	size_t i;

	t->st = MQ_OK;
	t->no_conn = 0;
	if (w->cb == NULL && (w->cb = connect_table(&w->g->conn,
	    w->g->table, &t->err)) == NULL) {
		t->no_conn = 1;
		t->st = t->err.status;
		for (i = 0; i < t->n; i++)
			t->item[i].st = t->st;
		return;
	}
	for (i = 0; i < t->n; i++) {
		t->item[i].sent_at = mq_now_us();
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

/* ---- the loop's side ---- */

/* Gives the heartbeat thread the leases due for extension. */
void
beat_post(struct worker *w)
{
	struct beat_task *t = &w->bt;
	int64_t now = mq_now_us();
	int i;

	t->n = 0;
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slot[i];
		if ((s->state != QUEUED && s->state != RUNNING) ||
		    s->stopping || s->in_op || s->beat_by_op ||
		    now < s->next_beat)
			continue;
		t->item[t->n].slot = i;
		t->item[t->n++].r = s->job.receipt;
	}
	if (t->n == 0)
		return;
	t->w = w;
	dbt_post(&w->beat, beat_run, t);
}

/* The heartbeat thread is done: each lease's outcome. */
void
beat_apply(struct worker *w)
{
	struct beat_task *t = &w->bt;
	int64_t now = mq_now_us();
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
				lose(s, mq_strerror(MQ_ELEASE));
			break;
		case MQ_ERETRY:		/* another session holds the row */
			s->next_beat = now + BUSY_RETRY_US;
			break;
		default:
			s->next_beat = now + BEAT_RETRY_US;
			/* no connection of its own could be made
			 * (max_connections reached, say): the work thread's,
			 * made already, extends it (work/claim.c), and this
			 * one is tried again after. A statement that failed
			 * is tried again here, reconnecting, as before. */
			if (t->no_conn)
				s->beat_by_op = 1;
		}
	}
	/* said once while it fails; a refusal for the server's limit on
	 * connections, once with the work thread's (work/result.c) */
	if (t->st != MQ_OK && !w->beat_failing &&
	    !(mq_conn_limit(&t->err) && (w->limit_said & LIMIT_SAID)))
		report(&work_command, "heartbeat", &t->err);
	if (t->st != MQ_OK && mq_conn_limit(&t->err))
		w->limit_said |= LIMIT_SAID;
	w->beat_failing = t->st != MQ_OK;
}
