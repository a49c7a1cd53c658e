/*
 * cancel.c: stopping a job that has not run (or a recurring one for
 * good). The job becomes dead with a "cancelled" note, so it shows in
 * stats and goes to the archive like any buried job. A leased job is
 * being run: cancelling it is refused unless forced; forced, the
 * consumer's ack, fail and heartbeat find their lease lost.
 */
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

static const char sql_job_state[] =
    "SELECT CAST(state AS CHAR) FROM `{{TABLE}}`"
    " WHERE id = ? FOR UPDATE";

static const char sql_cancel[] =
    "UPDATE `{{TABLE}}` SET " MQ_SQL_SET_DEAD("IF(last_error IS NULL,"
    "   'cancelled', CONCAT('cancelled; last error: ', last_error))")
    " WHERE id = ?";

struct cancel {
	uint64_t id;
	int force;
	struct mq_cancel_result *res;
};

static enum mq_status
cancel_tx(struct mq_conn *c, void *ctx)
{
	struct cancel *x = ctx;
	MYSQL_BIND in[1], out[1];
	unsigned long slen = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r;

	memset(x->res, 0, sizeof *x->res);
	if ((st = mq__prepare(c, sql_job_state)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &x->id);
	rc = mq__execute(c, st, in, "cannot read the job");
	memset(out, 0, sizeof out);
	out[0].buffer_type = MYSQL_TYPE_STRING;
	out[0].buffer = x->res->state;
	out[0].buffer_length = sizeof x->res->state;
	out[0].length = &slen;
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the job");
	if (rc == MQ_OK && (r = mysql_stmt_fetch(st)) != 0 &&
	    r != MYSQL_NO_DATA)
		rc = mq__dberr(c, st, "cannot read the job");
	x->res->found = rc == MQ_OK && r != MYSQL_NO_DATA;
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	x->res->state[slen < sizeof x->res->state ? slen :
	    sizeof x->res->state - 1] = '\0';
	if (strcmp(x->res->state, "leased") == 0 && !x->force)
		return MQ_ELEASE;
	if (strcmp(x->res->state, "ready") != 0 &&
	    strcmp(x->res->state, "leased") != 0)
		return MQ_EMPTY;	/* finished, or no such job */
	if ((st = mq__prepare(c, sql_cancel)) == NULL)
		return c->err.status;
	rc = mq__execute(c, st, in, "cannot cancel the job");
	mq__release(c, st);
	if (rc == MQ_OK)
		rc = mq__finished(c, &x->id, 1);
	return rc;
}

enum mq_status
mq_cancel(struct mq_conn *c, uint64_t id, int force,
    struct mq_cancel_result *res)
{
	struct cancel x = { id, force, res };
	enum mq_status rc;

	if ((rc = mq__read_committed(c)) != MQ_OK ||
	    (rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	rc = mq__in_tx(c, cancel_tx, &x);
	if (rc == MQ_OK)	/* its dependents that run anyway */
		mq__wake_after_commit(c);
	return rc;
}
