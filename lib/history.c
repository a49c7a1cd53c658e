/*
 * history.c: the history of a job's attempts, <table>_history. The
 * writes that end an attempt without an ack (fail, requeue-stale) and
 * mq retry add a row per job in their own transaction, after their
 * writes to the jobs, so a row says what the job became; the writes
 * that delete jobs (purge, archive --purge) delete their rows.
 */
#include "internal.h"

/* Per job, as it is now (after the transaction's writes): the event,
 * where it left the job, its attempts and lease holder, and the error
 * (NULL: none). UTC_TIMESTAMP(6) is the statement's start: the same
 * time for every row of one write. */
static const char sql_add[] =
    "INSERT INTO `{{TABLE}}_history`"
    " (job_id, event, state, attempt, at, worker, error)"
    " SELECT id, ?, IF(state = 'dead', 'dead', 'ready'), attempts,"
    " UTC_TIMESTAMP(6), leased_by, ?"
    " FROM `{{TABLE}}` FORCE INDEX (PRIMARY) WHERE id IN (";
static const char sql_add_tail[] = ") ORDER BY id";

static const char sql_delete[] =
    "DELETE FROM `{{TABLE}}_history` WHERE job_id IN (";

enum mq_status
mq__history_add(struct mq_conn *c, const char *event, const void *error,
    size_t error_len, const uint64_t *ids, size_t n)
{
	MYSQL_BIND pre[2];
	unsigned long elen, len = (unsigned long)error_len;
	uint64_t added;

	if (n == 0)
		return MQ_OK;
	mq__bind_str(&pre[0], event, &elen);
	if (error)
		mq__bind_blob(&pre[1], error, &len);
	else
		mq__bind_null(&pre[1]);
	return mq__exec_ids_tail(c, sql_add, sql_add_tail, pre, 2, ids, n,
	    &added);
}

enum mq_status
mq__history_delete(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *rows)
{
	uint64_t deleted = 0;
	enum mq_status rc;

	if (n == 0)
		return MQ_OK;
	rc = mq__exec_ids(c, sql_delete, NULL, 0, ids, n, &deleted);
	if (rows)
		*rows += deleted;
	return rc;
}
