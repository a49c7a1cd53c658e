/*
 * inspect.c: reading jobs for operators (mq why, mq ls): one job by id
 * from the job table or its archive, and how many jobs are ahead of it
 * (lists: inspect_list.c). Read only, no locks: what an operator reads
 * may change the next moment.
 */
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* by primary key in each table: two index lookups, one round trip */
const char mq__sql_job_get[] =
    LIVE_COLS("payload") FROM_LIVE " WHERE id = ?"
    " UNION ALL " ARCHIVE_COLS("payload") FROM_ARCHIVE " WHERE id = ?";

/* the due jobs a claim takes before this one: a range of the claim
 * index (queue, state, priority, available_at, id), bounded */
const char mq__sql_job_ahead[] =
    "SELECT COUNT(*) FROM (SELECT 1 FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND " MQ_SQL_READY_NOW " AND (priority < ?"
    " OR (priority = ? AND (available_at < " MQ_SQL_FROM_EPOCH_US
    " OR (available_at = " MQ_SQL_FROM_EPOCH_US " AND id < ?))))"
    " LIMIT ?) a";

enum mq_status
mq_job_get(struct mq_conn *c, uint64_t id, struct mq_job_info *j)
{
	MYSQL_BIND in[2];
	struct row *r;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f, found = 0;

	memset(j, 0, sizeof *j);
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((r = malloc(sizeof *r)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if ((st = mq__prepare(c, mq__sql_job_get)) == NULL) {
		free(r);
		return c->err.status;
	}
	mq__bind_u64(&in[0], &id);
	mq__bind_u64(&in[1], &id);
	mq__inspect_bind_row(r);
	rc = mq__execute(c, st, in, "cannot read job");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, r->out) != 0)
		rc = mq__dberr(c, st, "cannot read job");
	/* the job table's row first; an id in both (rows copied by hand)
	 * is the live job */
	while (rc == MQ_OK && !found && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		if ((rc = mq__inspect_finish_row(c, st, r)) != MQ_OK)
			break;
		if (!r->archived || !found) {
			mq_job_info_free(j);
			*j = r->j;
			found = 1;
		}
	}
	if (rc == MQ_OK && !found && f == 1)
		rc = mq__dberr(c, st, "cannot read job");
	mq__release(c, st);
	free(r);
	if (rc == MQ_OK && !found)
		return mq__fail(c, MQ_EMPTY, "no job %llu",
		    (unsigned long long)id);
	return rc;
}

enum mq_status
mq_job_ahead(struct mq_conn *c, const struct mq_job_info *j, uint64_t max,
    uint64_t *n)
{
	MYSQL_BIND in[7], out[1];
	unsigned long qlen = j->queue_len;
	int64_t at = j->available_epoch_us;
	int32_t prio = j->priority;
	uint64_t id = j->id;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	*n = 0;
	if ((st = mq__prepare(c, mq__sql_job_ahead)) == NULL)
		return c->err.status;
	qlen = j->queue_len;
	mq__bind_name(&in[0], j->queue, &qlen);
	mq__bind_i32(&in[1], &prio);
	mq__bind_i32(&in[2], &prio);
	mq__bind_i64(&in[3], &at);
	mq__bind_i64(&in[4], &at);
	mq__bind_u64(&in[5], &id);
	mq__bind_u64(&in[6], &max);
	rc = mq__execute(c, st, in, "cannot count jobs");
	mq__bind_u64(&out[0], n);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot count jobs");
	if (rc == MQ_OK && (f = mysql_stmt_fetch(st)) != 0 &&
	    f != MYSQL_DATA_TRUNCATED)
		rc = mq__dberr(c, st, "cannot count jobs");
	mq__release(c, st);
	return rc;
}
