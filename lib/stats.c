/*
 * stats.c: queue health from index ranges and a few count rows. The
 * claim index (queue, state, priority, available_at, id) gives the queues
 * (one entry each, skipping from queue to queue) and, per queue, the
 * range of its leased jobs; the due index (queue, state, available_at)
 * the ranges of its due, scheduled and waiting jobs, and the oldest due
 * job.
 * Done, dead and archived jobs are not read at all: <table>_counts holds
 * their counts (counts.c). The lease index
 * finds the stale leases, the recurring index the recurring jobs, the
 * queues table the paused queues and the limits; the index held, in a
 * limited queue, the live leases and the due jobs of full keys, and
 * the ticks' indexes the rates' windows (held.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* the server reads one entry per queue ("Using index for group-by") */
const char mq__sql_stats_queues[] =
    "SELECT queue, '', 0, 0, 0 FROM `{{TABLE}}` FORCE INDEX (claim)"
    " GROUP BY queue";

/* A queue's ready jobs, due and scheduled, and its leased jobs: ranges
 * of the due index on either side of now (one statement, so one now),
 * and of the claim index; its waiting jobs (dependents whose parents
 * are not all done: due at the end of time, MQ_SQL_WAITING), one more
 * range of the due index, an equality, which the scheduled range stops
 * short of. Only a range's ends are compared with the
 * clock: a test of each entry, as in SUM(available_at <= now), costs
 * more than reading it (29 ms against 20 for 100,000 scheduled jobs).
 * An aggregate without GROUP BY gives its row even for no jobs, with no
 * queue: the rows are the bound queue's (binds it four times). */
const char mq__sql_stats_live[] =
    "SELECT '', 'ready', COUNT(*) + (SELECT COUNT(*) FROM `{{TABLE}}`"
    "  FORCE INDEX (due) WHERE queue = ? AND " MQ_SQL_SCHEDULED "),"
    " COUNT(*), COALESCE(-" MQ_SQL_AGE_FROM_NOW("MIN(available_at)") ", 0)"
    " FROM `{{TABLE}}` FORCE INDEX (due) WHERE " MQ_SQL_DUE_ROW("?")
    " UNION ALL SELECT '', 'leased', COUNT(*), 0, 0"
    " FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND state = 'leased'"
    " UNION ALL SELECT '', 'waiting', COUNT(*), 0, 0"
    " FROM `{{TABLE}}` FORCE INDEX (due)"
    " WHERE queue = ? AND " MQ_SQL_WAITING_ROW;

/* a lease without a deadline (a row written by another program) is
 * stale: requeue-stale takes it back */
static const char sql_stale[] =
    "SELECT queue, '', COUNT(*), 0, 0 FROM `{{TABLE}}` FORCE INDEX (lease)"
    " WHERE " MQ_SQL_STALE
    " AND " MQ_SQL_QUEUE_OR_ALL " GROUP BY queue";

static const char sql_recurring[] =
    "SELECT queue, '', COUNT(*), 0, 0 FROM `{{TABLE}}` FORCE INDEX (recurring)"
    " WHERE every_us IS NOT NULL AND state IN ('ready', 'leased')"
    " AND " MQ_SQL_QUEUE_OR_ALL " GROUP BY queue";

/* a queue's settings: paused, and its limits (mq-limit(1); NULL:
 * none) */
static const char sql_settings[] =
    "SELECT queue, paused, COALESCE(concurrency, 0), COALESCE(per_key, 0),"
    " COALESCE(rate, 0), COALESCE(rate_us, 0), COALESCE(key_rate, 0),"
    " COALESCE(key_rate_us, 0) FROM `{{TABLE}}_queues`"
    " WHERE " MQ_SQL_QUEUE_OR_ALL;

/* a count below 0 can only come from rows changed by hand: shown as 0;
 * the counter rides in the column of the due jobs */
static const char sql_counts[] =
    "SELECT queue, CAST(state AS CHAR), CAST(GREATEST(SUM(n), 0) AS UNSIGNED),"
    " CAST(SUM(total) AS UNSIGNED), 0 FROM `{{TABLE}}_counts`"
    " GROUP BY queue, state";

/* The figures come from several statements; the derived counter (pushed:
 * what is live plus what left) must come from one snapshot, or an ack
 * committed between two of them would count its job twice and a later
 * read would see the counter go down. A read-only transaction at
 * REPEATABLE READ reads them all from the snapshot it starts with. */
static const char sql_snapshot[] =
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";
static const char sql_snapshot_start[] =
    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY";

struct acc {
	struct mq_queue_stats *qs;
	size_t n, cap;
	size_t *slot;	/* hash of the names: index + 1 into qs, 0: free */
	size_t nslot;	/* a power of 2, at least twice n */
};

/* A name's length without its trailing blanks: the server's comparison
 * (PAD SPACE) does not count them, nor does mq__padeq. */
static size_t
unpadded(const char *s, size_t len)
{
	while (len && s[len - 1] == ' ')
		len--;
	return len;
}

/* FNV-1a of the name without its trailing blanks: names mq__padeq takes
 * for one hash alike. */
static size_t
hash_name(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	len = unpadded(s, len);
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 32));
}

/* The hash, rebuilt for nslot slots from the entries (0 when out of
 * memory). */
static int
rehash(struct acc *a, size_t nslot)
{
	size_t *slot = calloc(nslot, sizeof *slot), i, k;

	if (slot == NULL)
		return 0;
	for (i = 0; i < a->n; i++) {
		k = hash_name(a->qs[i].queue, a->qs[i].queue_len) & (nslot - 1);
		while (slot[k])
			k = (k + 1) & (nslot - 1);
		slot[k] = i + 1;
	}
	free(a->slot);
	a->slot = slot;
	a->nslot = nslot;
	return 1;
}

static void
acc_free(struct acc *a)
{
	free(a->qs);
	free(a->slot);
	a->qs = NULL;
	a->slot = NULL;
}

/* The entry of queue[0..len), added (zeroed) if new. Names are compared
 * with their lengths: a name another program wrote may hold NUL, and
 * "a<NUL>b" is not queue "a"; and as the server compares them (trailing
 * blanks do not count): a settings row "a " is queue a's, which the
 * claims obey. The name is kept without them: rows "a" and "a " (one
 * another program wrote) are one queue, shown as the name mq takes,
 * whichever the index gives first (the first seen, shown, moved a
 * queue's Prometheus series to queue="a " and dropped it from mq
 * check's perfdata and from completion).
 * Found by a hash of the name without its trailing blanks: a lookup
 * costs the same for 10 queues or 100,000 (a scan of the entries made
 * mq stats quadratic in the queues: 11.6 s for 40,000). */
static struct mq_queue_stats *
entry(struct acc *a, const char *queue, size_t len)
{
	struct mq_queue_stats *q;
	size_t k;

	if (a->nslot < 2 * (a->n + 1) && !rehash(a, a->nslot ?
	    2 * a->nslot : 64))
		return NULL;
	for (k = hash_name(queue, len) & (a->nslot - 1); a->slot[k];
	    k = (k + 1) & (a->nslot - 1)) {
		q = &a->qs[a->slot[k] - 1];
		if (mq__padeq(q->queue, q->queue_len, queue, len))
			return q;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		if ((q = realloc(a->qs, cap * sizeof *q)) == NULL)
			return NULL;
		a->qs = q;
		a->cap = cap;
	}
	q = &a->qs[a->n++];
	memset(q, 0, sizeof *q);
	len = unpadded(queue, len);
	memcpy(q->queue, queue, len);
	q->queue_len = len;
	a->slot[k] = a->n;
	return q;
}

enum part { QUEUES, LIVE, STALE, RECURRING, COUNTS };

/* A row of the counts: the gauge n of done and dead, and each counter. */
static void
count_into(struct mq_queue_stats *e, const char *state, uint64_t n,
    uint64_t total)
{
	struct mq_counters *t = &e->total;

	if (strcmp(state, "done") == 0) {
		e->done = n;
		t->done = total;
	} else if (strcmp(state, "dead") == 0) {
		e->dead = n;
		t->dead = total;
	} else if (strcmp(state, "archived") == 0) {
		t->archived = total;
	} else if (strcmp(state, "failed") == 0) {
		t->failed = total;
	} else if (strcmp(state, "requeued") == 0) {
		t->requeued = total;
	} else if (strcmp(state, "retried") == 0) {
		t->retried = total;
	} else if (strcmp(state, "purged") == 0) {
		t->purged = total;
	}
}

/* Jobs come in by push (or from another program's INSERT) and by mq
 * retry, and leave done, dead or purged; the archive takes finished ones
 * only. So what was pushed is what is live now plus what left, less what
 * came back. Never below what is live: a row deleted by hand would make
 * the identity short. */
static void
derive_pushed(struct mq_queue_stats *e)
{
	const struct mq_counters *t = &e->total;
	uint64_t live = e->ready + e->scheduled + e->waiting + e->leased;
	uint64_t in = live + t->done + t->dead + t->purged;

	e->total.pushed = in > t->retried && in - t->retried > live ?
	    in - t->retried : live;
}

/* Runs one of the queries above (rows: queue, state, n, due, age_us),
 * with queue bound to its nq parameters. A queue that has only a count
 * of 0 is left out; with want (--queue), only that queue is kept, except
 * for the archive's count, which is the table's. */
static enum mq_status
gather(struct mq_conn *c, const char *tmpl, enum part part,
    const struct mq_queue_stats *queue, unsigned nq, const char *want,
    struct acc *a, uint64_t *archived)
{
	MYSQL_BIND in[4], out[5];
	unsigned long qlen, len[2];
	char q[MQ_QUEUE_MAX + 1], state[16];
	uint64_t n, due;
	int64_t age;
	MYSQL_STMT *st;
	struct mq_queue_stats *e;
	enum mq_status rc;
	unsigned i;
	int r;

	if ((st = mq__prepare(c, tmpl)) == NULL)
		return c->err.status;
	qlen = queue ? (unsigned long)queue->queue_len : 0;
	for (i = 0; i < nq; i++)
		if (queue) {	/* its bytes, as read: see mq__bind_name */
			qlen = queue->queue_len;
			mq__bind_name(&in[i], queue->queue, &qlen);
		} else {
			mq__bind_null(&in[i]);
		}
	rc = mq__execute(c, st, nq ? in : NULL, "cannot read statistics");
	memset(out, 0, sizeof out);
	out[0].buffer_type = MYSQL_TYPE_STRING;
	out[0].buffer = q;
	out[0].buffer_length = sizeof q - 1;
	out[0].length = &len[0];
	out[1].buffer_type = MYSQL_TYPE_STRING;
	out[1].buffer = state;
	out[1].buffer_length = sizeof state - 1;
	out[1].length = &len[1];
	mq__bind_u64(&out[2], &n);
	mq__bind_u64(&out[3], &due);
	mq__bind_i64(&out[4], &age);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read statistics");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		if (part == LIVE) {	/* the bound queue's rows */
			len[0] = queue->queue_len < sizeof q - 1 ?
			    queue->queue_len : sizeof q - 1;
			memcpy(q, queue->queue, len[0]);
		}
		if (len[0] > sizeof q - 1)
			len[0] = sizeof q - 1;
		q[len[0]] = '\0';
		state[len[1] < sizeof state - 1 ? len[1] : sizeof state - 1] =
		    '\0';
		if (part == COUNTS && strcmp(state, "archived") == 0)
			*archived += n;
		/* a queue whose counts are all 0 and whose counters are too
		 * is left out; its counters are kept otherwise */
		if ((part == COUNTS && n == 0 && due == 0) || (want &&
		    !mq__padeq(q, len[0], want, strlen(want))))
			continue;
		if ((e = entry(a, q, len[0])) == NULL) {
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
			break;
		}
		if (part == STALE) {
			e->stale = n;
		} else if (part == RECURRING) {
			e->recurring = n;
		} else if (strcmp(state, "ready") == 0) {
			e->ready = due;
			e->scheduled = n - due;
			e->oldest_ready_s = (double)age / 1e6;
		} else if (strcmp(state, "leased") == 0) {
			e->leased = n;
		} else if (strcmp(state, "waiting") == 0) {
			e->waiting = n;
		} else if (part == COUNTS) {
			count_into(e, state, n, due);
		}
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot read statistics");
	mq__release(c, st);
	return rc;
}

/* A limit's column (INT UNSIGNED) as read. */
static uint32_t
limit32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The settings of the queues (of want's only, if not NULL): paused,
 * the limits. A rate without its window, or a window without its rate
 * (a row the CHECK did not see), is no limit, as claims take it
 * (MQ_SQL_LIMITED). */
static enum mq_status
settings(struct mq_conn *c, const struct mq_queue_stats *want,
    struct acc *a)
{
	MYSQL_BIND in[2], out[8];
	unsigned long qlen[2], len;
	char q[MQ_QUEUE_MAX + 1];
	uint64_t v[7];
	MYSQL_STMT *st;
	struct mq_queue_stats *e;
	enum mq_status rc;
	int i, r;

	if ((st = mq__prepare(c, sql_settings)) == NULL)
		return c->err.status;
	for (i = 0; i < 2; i++)
		if (want) {	/* its bytes, as read: see mq__bind_name */
			qlen[i] = (unsigned long)want->queue_len;
			mq__bind_name(&in[i], want->queue, &qlen[i]);
		} else {
			mq__bind_null(&in[i]);
		}
	rc = mq__execute(c, st, in, "cannot read statistics");
	memset(out, 0, sizeof out);
	out[0].buffer_type = MYSQL_TYPE_STRING;
	out[0].buffer = q;
	out[0].buffer_length = sizeof q - 1;
	out[0].length = &len;
	for (i = 0; i < 7; i++)
		mq__bind_u64(&out[i + 1], &v[i]);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read statistics");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		if (len > sizeof q - 1)
			len = sizeof q - 1;
		q[len] = '\0';
		if ((e = entry(a, q, len)) == NULL) {
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
			break;
		}
		e->paused = v[0] != 0;
		e->concurrency = limit32(v[1]);
		e->per_key = limit32(v[2]);
		if (v[3] && v[4]) {
			e->rate = limit32(v[3]);
			e->rate_us = mq__window_us(v[4]);
		}
		if (v[5] && v[6]) {
			e->key_rate = limit32(v[5]);
			e->key_rate_us = mq__window_us(v[6]);
		}
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot read statistics");
	mq__release(c, st);
	return rc;
}

static int
by_name(const void *x, const void *y)
{
	const struct mq_queue_stats *a = x, *b = y;
	size_t n = a->queue_len < b->queue_len ? a->queue_len : b->queue_len;
	int r = memcmp(a->queue, b->queue, n);

	if (r)
		return r;
	return a->queue_len < b->queue_len ? -1 : a->queue_len > b->queue_len;
}

enum mq_status
mq_queue_names(struct mq_conn *c, struct mq_queue_stats **qs, size_t *n)
{
	struct acc a = { NULL, 0, 0, NULL, 0 };
	uint64_t archived = 0;
	enum mq_status rc;

	*qs = NULL;
	*n = 0;
	/* the queues mq_stats shows: those with jobs, those with settings
	 * (paused, limited) and those with counts (all archived) */
	rc = gather(c, mq__sql_stats_queues, QUEUES, NULL, 0, NULL, &a,
	    &archived);
	if (rc == MQ_OK)
		rc = settings(c, NULL, &a);
	if (rc == MQ_OK)
		rc = gather(c, sql_counts, COUNTS, NULL, 0, NULL, &a,
		    &archived);
	if (rc != MQ_OK) {
		acc_free(&a);
		return rc;
	}
	free(a.slot);
	if (a.n > 1)
		qsort(a.qs, a.n, sizeof *a.qs, by_name);
	*qs = a.qs;
	*n = a.n;
	return MQ_OK;
}

enum mq_status
mq_stats(struct mq_conn *c, const char *queue, struct mq_queue_stats **qs,
    size_t *n, uint64_t *archived)
{
	struct acc a = { NULL, 0, 0, NULL, 0 };
	struct mq_queue_stats cur, one, *want = NULL;
	enum mq_status rc = MQ_OK;
	size_t i, nq;

	*qs = NULL;
	*n = 0;
	*archived = 0;
	if (queue && !mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if (queue) {
		memset(&one, 0, sizeof one);
		one.queue_len = strlen(queue);
		memcpy(one.queue, queue, one.queue_len);
		want = &one;
	}
	if (mysql_real_query(c->db, sql_snapshot, sizeof sql_snapshot - 1) ||
	    mysql_real_query(c->db, sql_snapshot_start,
	    sizeof sql_snapshot_start - 1))
		return mq__dberr(c, NULL, "cannot read statistics");
	if (queue && entry(&a, queue, one.queue_len) == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	else if (!queue)
		rc = gather(c, mq__sql_stats_queues, QUEUES, NULL, 0, NULL, &a,
		    archived);
	/* the queues known so far: every queue with a job in the table */
	for (i = 0, nq = a.n; rc == MQ_OK && i < nq; i++) {
		cur = a.qs[i];	/* a.qs may move */
		rc = gather(c, mq__sql_stats_live, LIVE, &cur, 4, NULL, &a,
		    archived);
	}
	if (rc == MQ_OK)
		rc = gather(c, sql_stale, STALE, want, 2, NULL, &a, archived);
	if (rc == MQ_OK)
		rc = gather(c, sql_recurring, RECURRING, want, 2, NULL, &a,
		    archived);
	if (rc == MQ_OK)
		rc = settings(c, want, &a);
	if (rc == MQ_OK)
		rc = gather(c, sql_counts, COUNTS, NULL, 0, queue, &a,
		    archived);
	/* the due jobs a limit holds back, in the same snapshot */
	for (i = 0; rc == MQ_OK && i < a.n; i++)
		if (a.qs[i].concurrency || a.qs[i].per_key ||
		    a.qs[i].rate || a.qs[i].key_rate)
			rc = mq__held_back(c, &a.qs[i]);
	/* read only: ending it cannot lose anything */
	if (rc == MQ_OK && mysql_commit(c->db) != 0)
		rc = mq__dberr(c, NULL, "cannot read statistics");
	else if (rc != MQ_OK)
		(void)mysql_rollback(c->db);
	if (rc != MQ_OK) {
		acc_free(&a);
		return rc;
	}
	free(a.slot);
	for (i = 0; i < a.n; i++)
		derive_pushed(&a.qs[i]);
	if (a.n > 1)	/* qsort's array must not be NULL, even for 0 */
		qsort(a.qs, a.n, sizeof *a.qs, by_name);
	*qs = a.qs;
	*n = a.n;
	return MQ_OK;
}
