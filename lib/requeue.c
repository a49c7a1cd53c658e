/*
 * requeue.c: reaping expired leases. A job whose consumer died comes
 * back to ready (due now, behind the jobs already waiting at its
 * priority), or becomes dead once its attempts are used up. The lease
 * index (state, leased_until) finds them: the cost grows with the stale
 * rows, not with the table.
 *
 * Rows written by another program on a server without schema 6's CHECKs
 * are reaped too: a lease without a deadline is expired (it is never
 * renewed: nobody could ack it in time), and a row whose state is not one
 * of mq's ('', stored by a non-strict session) is buried with a note.
 * Both sit at the head of the lease index: no more rows are read.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

const char mq__sql_requeue_pick[] =
    "SELECT id, attempts >= max_attempts FROM `{{TABLE}}` FORCE INDEX (lease)"
    " WHERE " MQ_SQL_STALE
    " AND " MQ_SQL_QUEUE_OR_ALL
    " ORDER BY leased_until, id LIMIT ? {{LOCK}}";

static const char sql_count[] =
    "SELECT CAST(COALESCE(SUM(attempts < max_attempts), 0) AS UNSIGNED),"
    " CAST(COALESCE(SUM(attempts >= max_attempts), 0) AS UNSIGNED) FROM"
    " (SELECT attempts, max_attempts FROM `{{TABLE}}` FORCE INDEX (lease)"
    "  WHERE " MQ_SQL_STALE
    "  AND " MQ_SQL_QUEUE_OR_ALL
    "  ORDER BY leased_until, id LIMIT ?) s";

/* rows in no state of mq's, for --dry-run */
static const char sql_count_invalid[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` FORCE INDEX (lease)"
    " WHERE state = '' AND " MQ_SQL_QUEUE_OR_ALL;

/* the conditions again: a row is moved once, whoever read it first */
static const char sql_requeue[] =
    "UPDATE `{{TABLE}}` SET " MQ_SQL_SET_READY(MQ_SQL_NOW)
    " WHERE " MQ_SQL_STALE " AND id IN (";

static const char sql_bury[] =
    "UPDATE `{{TABLE}}` SET "
    MQ_SQL_SET_DEAD("'lease expired; attempts used up'")
    " WHERE " MQ_SQL_STALE " AND id IN (";

static const char sql_invalid_pick[] =
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (lease)"
    " WHERE state = '' AND " MQ_SQL_QUEUE_OR_ALL
    " ORDER BY leased_until, id LIMIT ? {{LOCK}}";

static const char sql_bury_invalid[] =
    "UPDATE `{{TABLE}}` SET "
    MQ_SQL_SET_DEAD("'invalid state; buried by requeue-stale'")
    " WHERE state = '' AND id IN (";

struct reap {
	const struct mq_requeue_opts *o;
	uint32_t want;		/* rows this batch */
	uint64_t *ids, *split;
	unsigned char *dead;
	uint64_t requeued, buried;	/* this batch */
	size_t got;
	int invalid;		/* burying rows in no state of mq's */
};

static void
bind_queue(MYSQL_BIND *in, const char *queue, unsigned long *qlen)
{
	if (queue) {
		mq__bind_str(&in[0], queue, qlen);
		mq__bind_str(&in[1], queue, qlen);
	} else {
		mq__bind_null(&in[0]);
		mq__bind_null(&in[1]);
	}
}

static enum mq_status
reap_tx(struct mq_conn *c, void *ctx)
{
	struct reap *r = ctx;
	MYSQL_BIND in[3];
	unsigned long qlen;
	MYSQL_STMT *st;
	enum mq_status rc;
	size_t i, nr = 0, nd = 0;

	r->requeued = r->buried = 0;
	if ((st = mq__prepare(c, r->invalid ? sql_invalid_pick :
	    mq__sql_requeue_pick)) == NULL)
		return c->err.status;
	bind_queue(in, r->o->queue, &qlen);
	mq__bind_u32(&in[2], &r->want);
	rc = mq__select_ids(c, st, in, r->ids, r->invalid ? NULL : r->dead,
	    r->want, &r->got);
	mq__release(c, st);
	if (rc != MQ_OK || r->got == 0)
		return rc;
	if (r->invalid) {
		rc = mq__exec_ids(c, sql_bury_invalid, NULL, 0, r->ids, r->got,
		    &r->buried);
		if (rc == MQ_OK && r->buried)
			rc = mq__finished(c, r->ids, r->got);
		return rc;
	}
	/* ready ones first in split, dead ones from the end */
	for (i = 0; i < r->got; i++) {
		if (r->dead[i])
			r->split[r->got - 1 - nd++] = r->ids[i];
		else
			r->split[nr++] = r->ids[i];
	}
	if (nr)
		rc = mq__exec_ids(c, sql_requeue, NULL, 0, r->split, nr,
		    &r->requeued);
	if (rc == MQ_OK && nd)
		rc = mq__exec_ids(c, sql_bury, NULL, 0, r->split + nr, nd,
		    &r->buried);
	/* every picked row was locked and stale: each was moved */
	if (rc == MQ_OK)
		rc = mq__history_add(c, "expired", NULL, 0, r->split, r->got);
	if (rc == MQ_OK && r->requeued)
		rc = mq__count_event(c, "requeued", NULL, r->split, nr);
	if (rc == MQ_OK && r->buried)
		rc = mq__finished(c, r->split + nr, nd);
	return rc;
}

static enum mq_status
dry_run(struct mq_conn *c, const struct mq_requeue_opts *o,
    struct mq_requeue_report *rep)
{
	MYSQL_BIND in[3], out[2];
	unsigned long qlen;
	uint64_t limit = o->limit ? o->limit : UINT64_MAX / 2, invalid = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_count)) == NULL)
		return c->err.status;
	bind_queue(in, o->queue, &qlen);
	mq__bind_u64(&in[2], &limit);
	rc = mq__execute(c, st, in, "cannot count stale jobs");
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &rep->requeued);
	mq__bind_u64(&out[1], &rep->dead);
	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0))
		rc = mq__dberr(c, st, "cannot count stale jobs");
	mq__release(c, st);
	if (rc != MQ_OK || (st = mq__prepare(c, sql_count_invalid)) == NULL)
		return rc != MQ_OK ? rc : c->err.status;
	rc = mq__execute(c, st, in, "cannot count stale jobs");
	mq__bind_u64(&out[0], &invalid);
	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0))
		rc = mq__dberr(c, st, "cannot count stale jobs");
	mq__release(c, st);
	if (o->limit && invalid > o->limit - rep->requeued - rep->dead)
		invalid = o->limit - rep->requeued - rep->dead;
	rep->dead += invalid;
	return rc;
}

enum mq_status
mq_requeue_stale(struct mq_conn *c, const struct mq_requeue_opts *o,
    struct mq_requeue_report *rep)
{
	struct reap r;
	enum mq_status rc = MQ_OK;
	unsigned batch = o->batch ? o->batch : 100;

	memset(rep, 0, sizeof *rep);
	if (o->queue && !mq_valid_queue(o->queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if (o->dry_run)
		return dry_run(c, o, rep);
	if ((rc = mq__read_committed(c)) != MQ_OK)
		return rc;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.ids = calloc(batch, sizeof *r.ids);
	r.split = calloc(batch, sizeof *r.split);
	r.dead = calloc(batch, 1);
	if (r.ids == NULL || r.split == NULL || r.dead == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	/* first the rows in no state of mq's, then the expired leases */
	for (r.invalid = 1; r.invalid >= 0; r.invalid--) {
		for (;;) {
			uint64_t left = o->limit ? o->limit - rep->requeued -
			    rep->dead : batch;
			if (left == 0)
				break;
			r.want = (uint32_t)(left < batch ? left : batch);
			if ((rc = mq__in_tx(c, reap_tx, &r)) != MQ_OK)
				goto out;
			rep->requeued += r.requeued;
			rep->dead += r.buried;
			mq__wake_after_commit(c);
			if (o->progress && r.requeued + r.buried)
				o->progress(r.requeued + r.buried,
				    o->ctx);
			if (r.got < r.want)
				break;	/* nothing more (or all is locked) */
		}
	}
out:
	free(r.ids);
	free(r.split);
	free(r.dead);
	return rc;
}
