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
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* The least woken first, then the longest waiting. The index wake
 * (queue, node) reads the other nodes' rows in two ranges around this
 * node's: a scan that met this node's rows would wait for the locks
 * their parked waiters hold (an UPDATE with ORDER BY ... LIMIT does not
 * skip them the way READ COMMITTED otherwise does). */
static const char sql_wake_nodes[] =
    "UPDATE `{{TABLE}}_waiters` FORCE INDEX (wake)"
    " SET wakes = wakes + 1"
    " WHERE queue = ? AND node <> " MQ_SQL_NODE
    " ORDER BY wakes, since LIMIT ?";

enum mq_status
mq__wake_nodes(struct mq_conn *c, const char *queue, uint64_t n)
{
	MYSQL_BIND in[2];
	MYSQL_STMT *st;
	unsigned long qlen = (unsigned long)strlen(queue);
	unsigned err;
	enum mq_status rc;

	if (!c->galera || c->waiters_off || n == 0)
		return MQ_OK;
	if ((st = mq__prepare(c, sql_wake_nodes)) == NULL) {
		rc = c->err.status;
	} else {
		mq__bind_str(&in[0], queue, &qlen);
		mq__bind_u64(&in[1], &n);
		rc = mq__execute(c, st, in,
		    "cannot wake consumers on other nodes");
		mq__release(c, st);
	}
	err = rc == MQ_OK ? 0 : c->err.db_errno;
	/* 1213: another pusher's wakeup of the same waiter (or its own
	 * leaving) certified first: it is woken, or needs no waking. No
	 * grant, or no table yet: those waiters find the job within a
	 * second, as before. */
	if (err == ER_LOCK_DEADLOCK || err == ER_TABLEACCESS_DENIED_ERROR ||
	    err == ER_COLUMNACCESS_DENIED_ERROR || err == ER_NO_SUCH_TABLE)
		return MQ_OK;
	return rc;
}
