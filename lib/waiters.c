/*
 * waiters.c: a push's wakeup of the consumers waiting on the other nodes
 * of a Galera cluster, where KILL QUERY cannot reach (it acts on the
 * pusher's node only). Each waiter there has rows in <table>_waiters
 * (written by wakeup.c's wait) that its parked statement holds
 * share-locked: an UPDATE of one, replicated to the waiter's node,
 * needs that lock, and Galera aborts the local statement that holds it
 * (a brute-force abort: error 1213 at once, even inside SLEEP), which
 * the waiter takes as a wakeup. No waiter row: no write, and one local
 * round trip. Foreign producers may run the same UPDATE (mq-queue(7),
 * WAITERS).
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* The least woken first, then the longest waiting. The other nodes'
 * rows are picked by a read without locks (the index wake (queue, node),
 * in two ranges around this node's), then updated by primary key: a
 * locking scan that met this node's rows would wait for the locks their
 * parked waiters hold, up to the second their park lasts (an UPDATE
 * with ORDER BY ... LIMIT does not skip them the way READ COMMITTED
 * otherwise does, nor does a join that scans the table whole, as the
 * optimizer would on a small one). */
static const char sql_wake_nodes[] =
    "UPDATE (SELECT node, conn, queue FROM `{{TABLE}}_waiters`"
    "  FORCE INDEX (wake) WHERE queue = ? AND node <> " MQ_SQL_NODE
    "  ORDER BY wakes, since LIMIT ?) AS d"
    " STRAIGHT_JOIN `{{TABLE}}_waiters` AS w FORCE INDEX (PRIMARY)"
    " ON w.node = d.node AND w.conn = d.conn AND w.queue = d.queue"
    " SET w.wakes = w.wakes + 1";

static enum mq_status
wake_nodes(struct mq_conn *c, const char *queue, uint64_t n)
{
	MYSQL_BIND in[2];
	MYSQL_STMT *st;
	unsigned long qlen = (unsigned long)strlen(queue);
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_wake_nodes)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_u64(&in[1], &n);
	rc = mq__execute(c, st, in, "cannot wake consumers on other nodes");
	mq__release(c, st);
	return rc;
}

/* No grant, or no table yet: those waiters find the job within a
 * second, as before. */
static int
no_waiters_table(unsigned err)
{
	return err == ER_TABLEACCESS_DENIED_ERROR ||
	    err == ER_COLUMNACCESS_DENIED_ERROR || err == ER_NO_SUCH_TABLE;
}

int
mq__wakes_nodes(const struct mq_conn *c)
{
	return c->galera && !c->waiters_off;
}

enum mq_status
mq__wake_nodes(struct mq_conn *c, const char *queue, uint64_t n)
{
	enum mq_status rc;
	unsigned err;

	if (!mq__wakes_nodes(c) || n == 0)
		return MQ_OK;
	rc = wake_nodes(c, queue, n);
	err = rc == MQ_OK ? 0 : c->err.db_errno;
	/* 1213: another pusher's wakeup of the same waiter (or its own
	 * leaving) certified first: it is woken, or needs no waking */
	if (err == ER_LOCK_DEADLOCK || no_waiters_table(err))
		return MQ_OK;
	return rc;
}

/* In the push's own transaction: one Galera commit for the jobs and the
 * wakeup instead of two, so the waiters on other nodes are woken when
 * the jobs are applied there, not one replication later. A 1213 here
 * (a pusher elsewhere woke the same waiter first) aborted the whole
 * transaction: the push runs again (MQ_ERETRY), it must not commit an
 * empty transaction as if pushed. */
enum mq_status
mq__wake_nodes_in_tx(struct mq_conn *c, const char *queue, uint64_t n)
{
	enum mq_status rc;

	if (!mq__wakes_nodes(c) || n == 0)
		return MQ_OK;
	rc = wake_nodes(c, queue, n < 64 ? n : 64);
	if (rc == MQ_OK || no_waiters_table(c->err.db_errno))
		return MQ_OK;
	/* any other failure (a statement limit, a read-only moment) must
	 * not fail the push: it runs again, and wakes after its commit,
	 * where a failed wakeup changes nothing; a lost connection stays
	 * what it is */
	if (rc == MQ_EDB)
		c->err.status = rc = MQ_ERETRY;
	return rc;
}

/* A waiter's leaving: its rows go (a text query: the table's name is
 * validated). */
static const char sql_leave[] =
    "DELETE FROM `%s_waiters` WHERE " MQ_SQL_OWN_WAITER;

char *
mq__leave_sql(struct mq_conn *c)
{
	size_t n = sizeof sql_leave + MQ_TABLE_MAX;
	char *sql = malloc(n);

	if (sql == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(sql, n, sql_leave, c->table);
	return sql;
}

/* In the claim's transaction, when it got jobs: the rows go with the
 * claim's commit, one Galera commit instead of two before the jobs are
 * handed over (*left: they did). No grant to delete them is not the
 * claim's failure: mq__wait_leave tries again after it, and says so. */
enum mq_status
mq__leave_in_tx(struct mq_conn *c, int *left)
{
	char *sql;
	enum mq_status rc = MQ_OK;

	*left = 0;
	if (!c->wait_joined)
		return MQ_OK;
	if ((sql = mq__leave_sql(c)) == NULL)
		return c->err.status;
	if (mysql_real_query(c->db, sql, strlen(sql)) == 0)
		*left = 1;
	else if (!no_waiters_table(mysql_errno(c->db)))
		rc = mq__dberr(c, NULL, "cannot stop waiting");
	free(sql);
	return rc;
}
