/*
 * purge.c: mq purge: deleting a queue's waiting jobs (and leased ones,
 * asked), by primary key, in batches. A job deleted is not finished:
 * its dependents cannot wait for it any more (deps.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char sql_pick[] =
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND state = ? LIMIT ? {{LOCK}}";

static const char sql_delete[] =
    "DELETE FROM `{{TABLE}}` WHERE state = ? AND id IN (";

#define PURGE_BATCH 500

struct purge {
	const char *queue, *state;
	uint32_t want;
	uint64_t ids[PURGE_BATCH];
	uint64_t parents[PURGE_BATCH];	/* those of ids with dependents */
	size_t got, nparents;
	uint64_t deleted;
};

static enum mq_status
purge_tx(struct mq_conn *c, void *ctx)
{
	struct purge *p = ctx;
	MYSQL_BIND in[3];
	unsigned long qlen, slen;
	MYSQL_STMT *st;
	enum mq_status rc;

	p->deleted = 0;
	if ((st = mq__prepare(c, sql_pick)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], p->queue, &qlen);
	mq__bind_str(&in[1], p->state, &slen);
	mq__bind_u32(&in[2], &p->want);
	rc = mq__select_ids(c, st, in, p->ids, NULL, p->want, &p->got);
	mq__release(c, st);
	if (rc != MQ_OK || p->got == 0)
		return rc;
	mq__note_finished(c, p->ids, p->got);	/* mq wait sees them gone */
	/* counted while they are there to be grouped: the rows picked are
	 * locked (and so still in their state) */
	if ((rc = mq__count_event(c, "purged", NULL, p->ids,
	    p->got)) != MQ_OK ||
	    (rc = mq__history_delete(c, p->ids, p->got, NULL)) != MQ_OK ||
	    (rc = mq__deps_purging(c, p->ids, p->got, p->parents,
	    &p->nparents)) != MQ_OK)
		return rc;
	/* the state again: a job claimed meanwhile is no longer waiting */
	mq__bind_str(&in[0], p->state, &slen);
	rc = mq__exec_ids(c, sql_delete, in, 1, p->ids, p->got, &p->deleted);
	/* the rows picked are locked, so the DELETE takes each of them;
	 * were one left, its dependents must not be cancelled below as if
	 * it were gone: the batch runs again */
	if (rc == MQ_OK && p->deleted != p->got)
		return mq__fail(c, MQ_ERETRY, "purge deleted %llu of %zu jobs",
		    (unsigned long long)p->deleted, p->got);
	/* after the DELETE: the dependents of the parents deleted are
	 * cancelled (or met) but those deleted with them, which are gone,
	 * whatever their queue; a dependent this batch did not delete
	 * (locked, or left to a batch that never runs) is never passed
	 * over */
	if (rc == MQ_OK)
		rc = mq__deps_purged(c, p->ids, p->got, p->parents,
		    p->nparents);
	return rc;
}

enum mq_status
mq_purge(struct mq_conn *c, const char *queue, int leased, uint64_t *deleted)
{
	static const char *const states[] = { "ready", "leased" };
	struct purge *p;
	enum mq_status rc = MQ_OK;
	size_t i;

	*deleted = 0;
	if (!mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	/* Galera: each batch sees what the cluster committed before it
	 * (galera.c): a job pushed, or a dependent made to wait again, on
	 * another node an instant ago is purged, or cancelled with its
	 * parent (deps.c) */
	if ((rc = mq__read_committed(c)) != MQ_OK ||
	    (rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((p = calloc(1, sizeof *p)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	p->queue = queue;
	p->want = PURGE_BATCH;
	for (i = 0; i < (leased ? 2u : 1u) && rc == MQ_OK; i++) {
		p->state = states[i];
		do {
			rc = mq__in_tx(c, purge_tx, p);
			if (rc == MQ_OK)
				*deleted += p->deleted;
			if (rc == MQ_OK)
				mq__wake_after_commit(c);
		} while (rc == MQ_OK && p->got == p->want);
	}
	free(p);
	return rc;
}
