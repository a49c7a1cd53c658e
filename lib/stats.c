/*
 * stats.c: queue health from indexes alone. The claim index (queue,
 * state, priority, available_at, id) covers the counts by state, the
 * ready/scheduled split and the oldest due job; the lease index finds
 * the stale leases; the recurring index the recurring jobs; the queues
 * table says which queues are paused.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char mq__sql_stats_by_state[] =
    "SELECT queue, CAST(state AS CHAR), COUNT(*),"
    " CAST(SUM(available_at <= UTC_TIMESTAMP(6)) AS UNSIGNED),"
    " COALESCE(TIMESTAMPDIFF(MICROSECOND,"
    "   MIN(IF(available_at <= UTC_TIMESTAMP(6), available_at, NULL)), UTC_TIMESTAMP(6)), 0)"
    " FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE (? IS NULL OR queue = ?) GROUP BY queue, state";

static const char sql_stale[] =
    "SELECT queue, '', COUNT(*), 0, 0 FROM `{{TABLE}}` FORCE INDEX (lease)"
    " WHERE state = 'leased' AND leased_until < UTC_TIMESTAMP(6)"
    " AND (? IS NULL OR queue = ?) GROUP BY queue";

static const char sql_recurring[] =
    "SELECT queue, '', COUNT(*), 0, 0 FROM `{{TABLE}}` FORCE INDEX (recurring)"
    " WHERE every_us IS NOT NULL AND state IN ('ready', 'leased')"
    " AND (? IS NULL OR queue = ?) GROUP BY queue";

static const char sql_paused[] =
    "SELECT queue, '', paused, 0, 0 FROM `{{TABLE}}_queues`"
    " WHERE (? IS NULL OR queue = ?)";

static const char sql_archived[] =
    "SELECT COUNT(*) FROM `{{TABLE}}_archive`";

struct acc {
	struct mq_queue_stats *qs;
	size_t n, cap;
};

/* The entry of queue, added (zeroed) if new. */
static struct mq_queue_stats *
entry(struct acc *a, const char *queue)
{
	struct mq_queue_stats *q;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (strcmp(a->qs[i].queue, queue) == 0)
			return &a->qs[i];
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		if ((q = realloc(a->qs, cap * sizeof *q)) == NULL)
			return NULL;
		a->qs = q;
		a->cap = cap;
	}
	q = &a->qs[a->n++];
	memset(q, 0, sizeof *q);
	memcpy(q->queue, queue, strlen(queue) + 1);
	return q;
}

enum part { BY_STATE, STALE, RECURRING, PAUSED };

/* Runs one of the queries above (rows: queue, state, n, due, age_us). */
static enum mq_status
gather(struct mq_conn *c, const char *tmpl, enum part part,
    const char *queue, struct acc *a)
{
	MYSQL_BIND in[2], out[5];
	unsigned long qlen, len[2];
	char q[MQ_QUEUE_MAX + 1], state[16];
	uint64_t n, due;
	int64_t age;
	MYSQL_STMT *st;
	struct mq_queue_stats *e;
	enum mq_status rc;
	int r;

	if ((st = mq__prepare(c, tmpl)) == NULL)
		return c->err.status;
	if (queue) {
		mq__bind_str(&in[0], queue, &qlen);
		mq__bind_str(&in[1], queue, &qlen);
	} else {
		mq__bind_null(&in[0]);
		mq__bind_null(&in[1]);
	}
	rc = mq__execute(c, st, in, "cannot read statistics");
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
		q[len[0] < sizeof q - 1 ? len[0] : sizeof q - 1] = '\0';
		state[len[1] < sizeof state - 1 ? len[1] : sizeof state - 1] =
		    '\0';
		if ((e = entry(a, q)) == NULL) {
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
			break;
		}
		if (part == STALE) {
			e->stale = n;
		} else if (part == RECURRING) {
			e->recurring = n;
		} else if (part == PAUSED) {
			e->paused = n != 0;
		} else if (strcmp(state, "ready") == 0) {
			e->ready = due;
			e->scheduled = n - due;
			e->oldest_ready_s = (double)age / 1e6;
		} else if (strcmp(state, "leased") == 0) {
			e->leased = n;
		} else if (strcmp(state, "done") == 0) {
			e->done = n;
		} else if (strcmp(state, "dead") == 0) {
			e->dead = n;
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
	return strcmp(((const struct mq_queue_stats *)x)->queue,
	    ((const struct mq_queue_stats *)y)->queue);
}

static enum mq_status
count_archive(struct mq_conn *c, uint64_t *archived)
{
	MYSQL_BIND out[1];
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_archived)) == NULL)
		return c->err.status;
	rc = mq__execute(c, st, NULL, "cannot count the archive");
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], archived);
	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0))
		rc = mq__dberr(c, st, "cannot count the archive");
	mq__release(c, st);
	return rc;
}

enum mq_status
mq_stats(struct mq_conn *c, const char *queue, struct mq_queue_stats **qs,
    size_t *n, uint64_t *archived)
{
	struct acc a = { NULL, 0, 0 };
	enum mq_status rc;

	*qs = NULL;
	*n = 0;
	*archived = 0;
	if (queue && !mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	rc = gather(c, mq__sql_stats_by_state, BY_STATE, queue, &a);
	if (rc == MQ_OK)
		rc = gather(c, sql_stale, STALE, queue, &a);
	if (rc == MQ_OK)
		rc = gather(c, sql_recurring, RECURRING, queue, &a);
	if (rc == MQ_OK)
		rc = gather(c, sql_paused, PAUSED, queue, &a);
	if (rc == MQ_OK)
		rc = count_archive(c, archived);
	if (rc == MQ_OK && queue && entry(&a, queue) == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	if (rc != MQ_OK) {
		free(a.qs);
		return rc;
	}
	if (a.n > 1)	/* qsort's array must not be NULL, even for 0 */
		qsort(a.qs, a.n, sizeof *a.qs, by_name);
	*qs = a.qs;
	*n = a.n;
	return MQ_OK;
}
