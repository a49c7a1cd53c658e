/*
 * archive.c: moving finished jobs out of the job table, so that it stays
 * small. One short transaction per batch: pick the oldest finished rows
 * by the finished index, copy them into <table>_archive, count them
 * (counts.c), delete them by primary key, commit. Killed anywhere, a
 * batch is all moved or not at all; a rerun carries on. Between batches
 * it pauses while other sessions write (the server's row counters tell),
 * and not when nobody does.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Finished (column f) more than the parameter's microseconds ago; a
 * finished job without a finish time (another program's row) is old
 * enough. */
#define FINISHED_BEFORE(f) \
    "(" f " IS NULL OR " f " < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)"

/* A job whose id the archive holds already (the job table's
 * AUTO_INCREMENT went back: a TRUNCATE, a restore) is left where it is:
 * copying it would fail the batch on every run, and replacing the
 * archived one would lose it. mq-archive(1) says how to mend it. */
/* A dead job that dependents wait for (--if-parent-dies wait, or one
 * it cancelled and mq retry made wait again) stays: in the archive it
 * could not be retried, and they would wait for ever (deps.c). */
#define AWAITED(j) \
    "NOT (" j ".children IS NOT NULL AND " j ".state = 'dead' AND EXISTS" \
    " (SELECT 1 FROM `{{TABLE}}_deps` d JOIN `{{TABLE}}` w ON w.id = d.child" \
    " WHERE d.parent = " j ".id AND d.met = 0" \
    " AND w.state = 'ready' AND w.parent_shards > 0))"
const char mq__sql_archive_pick[] =
    "SELECT j.id FROM `{{TABLE}}` j FORCE INDEX (finished)"
    " LEFT JOIN `{{TABLE}}_archive` a ON a.id = j.id"
    " WHERE j.state = ? AND " FINISHED_BEFORE("j.finished_at")
    " AND a.id IS NULL AND " AWAITED("j")
    " ORDER BY j.finished_at, j.id LIMIT ? {{LOCK}}";

/* The picked ids (locked by now) that dependents await, read again by a
 * statement of its own. The pick's test of AWAITED read the edges as
 * they were when its statement began (a consistent read), and a push
 * --after or a retry that made a dependent wait for one of them may
 * have committed between that and the pick's lock on its row: the
 * parent archived, the dependent waiting for ever (a race of the two,
 * 13 of 60 tries). Read now, with the rows locked (a push or retry
 * writes its parents first, so none can start waiting for them until
 * this batch commits), it sees every edge there is. */
const char mq__sql_archive_awaited[] =
    "SELECT j.id FROM `{{TABLE}}` j WHERE NOT " AWAITED("j")
    " AND j.id IN (";
const char mq__sql_archive_awaited_tail[] = ") ORDER BY j.id";

/* --purge copies nothing: every finished job goes */
static const char sql_purge_pick[] =
    "SELECT j.id FROM `{{TABLE}}` j FORCE INDEX (finished)"
    " WHERE j.state = ? AND " FINISHED_BEFORE("j.finished_at")
    " AND " AWAITED("j")
    " ORDER BY j.finished_at, j.id LIMIT ? {{LOCK}}";

static const char sql_copy[] =
    "INSERT INTO `{{TABLE}}_archive` (id, queue, state, priority, payload,"
    " attempts, max_attempts, available_at, leased_until, lease_token,"
    " leased_by, created_at, finished_at, last_error, dedup_key,"
    " archived_at, job_key)"
    " SELECT id, queue, state, priority, payload, attempts, max_attempts,"
    " available_at, leased_until, lease_token, leased_by, created_at,"
    " finished_at, last_error, dedup_key, UTC_TIMESTAMP(6), job_key"
    " FROM `{{TABLE}}` WHERE id IN (";

static const char sql_delete[] =
    "DELETE FROM `{{TABLE}}` WHERE id IN (";

struct batch {
	const struct mq_archive_opts *o;
	const char *state;
	uint32_t want;
	uint64_t *ids;
	size_t got, picked;	/* moved; picked, awaited ones too */
	uint64_t moved;
	uint64_t counted;	/* the count rows' changes */
};

/* Leaves out of the batch the dead jobs that dependents await now
 * (mq__sql_archive_awaited). */
static enum mq_status
drop_awaited(struct mq_conn *c, struct batch *b)
{
	uint64_t *awaited;
	size_t n = 0, i, k, keep = 0;
	enum mq_status rc;

	if ((awaited = malloc(b->got * sizeof *awaited)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = mq__select_ids_in(c, mq__sql_archive_awaited,
	    mq__sql_archive_awaited_tail, NULL, 0,
	    b->ids, b->got, awaited, b->got, &n);
	/* (few, if any: each id of the batch looked up among them) */
	for (i = 0; rc == MQ_OK && i < b->got; i++) {
		for (k = 0; k < n && awaited[k] != b->ids[i]; k++)
			;
		if (k == n)
			b->ids[keep++] = b->ids[i];
	}
	if (rc == MQ_OK)
		b->got = keep;
	free(awaited);
	return rc;
}

static enum mq_status
batch_tx(struct mq_conn *c, void *ctx)
{
	struct batch *b = ctx;
	MYSQL_BIND in[3];
	unsigned long slen;
	int64_t age = b->o->older_than_us;
	uint64_t copied = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	b->moved = b->counted = 0;
	if ((st = mq__prepare(c, b->o->purge ? sql_purge_pick :
	    mq__sql_archive_pick)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], b->state, &slen);
	mq__bind_i64(&in[1], &age);
	mq__bind_u32(&in[2], &b->want);
	rc = mq__select_ids(c, st, in, b->ids, NULL, b->want, &b->got);
	mq__release(c, st);
	b->picked = b->got;
	if (rc == MQ_OK && b->got && strcmp(b->state, "dead") == 0)
		rc = drop_awaited(c, b);
	if (rc != MQ_OK || b->got == 0)
		return rc;
	if (!b->o->purge) {
		rc = mq__exec_ids(c, sql_copy, NULL, 0, b->ids, b->got, &copied);
		if (rc == MQ_OK && copied != b->got)
			return mq__fail(c, MQ_EDB, "archive copied %llu of %zu "
			    "jobs", (unsigned long long)copied, b->got);
	}
	/* counted while the rows are still here to be grouped (they are
	 * locked: nobody else changes them) */
	if (rc == MQ_OK)
		rc = mq__count_removed(c, !b->o->purge, b->ids, b->got,
		    &b->counted);
	/* an archived job keeps its history; a deleted one does not. The
	 * rows these delete are the batch's own writes too, not others'
	 * (yield.c: a batch of cancelled dependents paused 5 times its
	 * time on an idle server, taking its own edges for others' work) */
	if (rc == MQ_OK && b->o->purge)
		rc = mq__history_delete(c, b->ids, b->got, &b->counted);
	if (rc == MQ_OK)
		rc = mq__deps_forget(c, b->ids, b->got, &b->counted);
	if (rc == MQ_OK)
		rc = mq__exec_ids(c, sql_delete, NULL, 0, b->ids, b->got,
		    &b->moved);
	if (rc == MQ_OK && b->moved != b->got)
		return mq__fail(c, MQ_EDB, "archive deleted %llu of %zu jobs",
		    (unsigned long long)b->moved, b->got);
	/* a dead job gone: the dead dependents it cancelled can never be
	 * retried now; those that wait for them would wait for ever */
	if (rc == MQ_OK && strcmp(b->state, "dead") == 0)
		rc = mq__deps_archived(c, b->ids, b->got);
	return rc;
}

static void
sleep_us(int64_t us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

enum mq_status
mq_archive(struct mq_conn *c, const struct mq_archive_opts *o,
    uint64_t *moved)
{
	static const char *const states[] = { "done", "dead" };
	unsigned batch = o->batch ? o->batch : 500;
	struct batch b;
	enum mq_status rc = MQ_OK;
	struct mq__yield y;
	size_t i;

	*moved = 0;
	if (o->older_than_us < 0)
		return mq__fail(c, MQ_EINVAL, "negative age");
	/* Galera: each batch sees what the cluster committed before it
	 * (galera.c): a dependent made to wait again on another node an
	 * instant ago keeps its dead parent here (AWAITED), instead of a
	 * batch that conflicts with that retry at commit (deps.c), again
	 * and again while this node catches up */
	if ((rc = mq__read_committed(c)) != MQ_OK ||
	    (rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	memset(&b, 0, sizeof b);
	b.o = o;
	b.want = batch;
	if ((b.ids = calloc(batch, sizeof *b.ids)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	mq__yield_start(c, &y);
	for (i = 0; i < (o->dead ? 2u : 1u) && rc == MQ_OK; i++) {
		b.state = states[i];
		do {
			int64_t t0 = mq_now_us();
			rc = mq__in_tx(c, batch_tx, &b);
			if (rc == MQ_OK)
				*moved += b.moved;
			/* dependents it cancelled (mq__deps_archived) */
			if (rc == MQ_OK)
				mq__wake_after_commit(c);
			if (rc == MQ_OK && b.moved && o->progress)
				o->progress(b.moved, o->ctx);
			if (rc != MQ_OK || b.picked != b.want)
				break;
			/* the batch's own rows: copied (unless purged) and
			 * deleted, and the counts (yield.c) */
			sleep_us(mq__yield_pause(c, &y, t0, (o->purge ? 1 : 2) *
			    (uint64_t)b.moved + b.counted));
		} while (rc == MQ_OK);
	}
	free(b.ids);
	return rc;
}
