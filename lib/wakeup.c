/*
 * wakeup.c: waiting for jobs without polling hard (seed 002). MySQL has
 * no LISTEN/NOTIFY, so a waiter parks in a marked SELECT ... SLEEP(n), and
 * a pusher, after its commit, finds waiters of that table and queue in
 * the process list and KILL QUERYs them: no more than the jobs it pushed.
 *
 * The waiter's statement checks for a due job and sleeps in one go:
 * IF(EXISTS(due job), 2, SLEEP(n)). It shows in the process list from
 * its start, before its read, so a push either commits before that read
 * (the statement sees the job and returns at once) or after it (the
 * pusher, scanning after its commit, sees the sleeper and wakes it): no
 * push is missed. n is at most a second, so jobs that become due by
 * themselves (scheduled, requeued) or pushes by a user who may not see
 * or kill the waiter are still found within a second. It backs off:
 * 100 ms after the last claim, doubling up to the second, so that this
 * polling fallback is quick during bursts and about one query per second
 * when idle.
 */
#include <mysqld_error.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "sql_terms.h"

/* Table and queue are validated names ([A-Za-z0-9_.-]): they can break
 * neither the comment nor the quotes. The marker is what pushers match:
 * a waiter on a preference list carries one per queue, and checks each
 * queue with its own probe of the due index (queue, state, available_at):
 * one index dive, however many jobs are scheduled for later. */
static const char sql_wait_marker[] = "/* mq-wait `%s` %s */ ";
static const char sql_wait_due[] =
    "(" MQ_SQL_DUE_NOT_PAUSED("%s", "'%s'") ")";

/* A text query (one round trip, after every push): the pattern is made
 * of the validated table and queue names, '%' and '!'; the limit is a
 * number. */
static const char sql_waiters[] =
    "SELECT ID FROM information_schema.PROCESSLIST"
    " WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
    " AND INFO LIKE '%s' ESCAPE '!' ORDER BY TIME DESC, ID LIMIT %llu";

/* Longest park in one statement, and the first one after a claim. */
#define WAIT_MAX_US 1000000
#define WAIT_FIRST_US 100000

int64_t
mq_wait_backoff_us(unsigned idle_waits)
{
	return idle_waits >= 4 ? WAIT_MAX_US : WAIT_FIRST_US << idle_waits;
}

/* The wait statement for a queue or preference list; NULL if the list is
 * not valid or memory ran out (c->err says which). */
static char *
wait_sql(struct mq_conn *c, const char *list, int64_t us)
{
	char queues[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	size_t nq = mq__queue_list(list, queues), per, n, q;
	char *sql, *p;

	if (nq == 0) {
		mq__fail(c, MQ_EINVAL, "invalid queue name");
		return NULL;
	}
	per = sizeof sql_wait_marker + sizeof sql_wait_due + 6 +
	    3 * (MQ_TABLE_MAX + MQ_QUEUE_MAX);
	n = 64 + nq * per;
	if ((sql = p = malloc(n)) == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	if (us > WAIT_MAX_US)
		us = WAIT_MAX_US;
	p += sprintf(p, "SELECT ");
	for (q = 0; q < nq; q++)
		p += sprintf(p, sql_wait_marker, c->table, queues[q]);
	p += sprintf(p, "IF(");
	for (q = 0; q < nq; q++) {
		p += sprintf(p, "%s", q ? " OR " : "");
		p += sprintf(p, sql_wait_due, c->table, queues[q], c->table,
		    queues[q]);
	}
	sprintf(p, ", 2, SLEEP(%.3f))", (double)(us < 0 ? 0 : us) / 1e6);
	return sql;
}

/* Ends a wait statement: 2 (a job is due) or a KILL QUERY (1317: a
 * pusher's wakeup, not an error) say claim now: MQ_OK; SLEEP's 0 says
 * nothing came: MQ_EMPTY. */
static enum mq_status
wait_result(struct mq_conn *c, MYSQL_RES *res, int failed)
{
	MYSQL_ROW row;
	enum mq_status rc = MQ_EMPTY;

	if (failed) {
		if (mysql_errno(c->db) == ER_QUERY_INTERRUPTED)
			return MQ_OK;
		return mq__dberr(c, NULL, "cannot wait for jobs");
	}
	if (res && (row = mysql_fetch_row(res)) != NULL && row[0] &&
	    strcmp(row[0], "2") == 0)
		rc = MQ_OK;
	mysql_free_result(res);
	return rc;
}

enum mq_status
mq_wait(struct mq_conn *c, const char *queue, int64_t max_us)
{
	char *sql;
	MYSQL_RES *res;
	int failed;

	if ((sql = wait_sql(c, queue, max_us)) == NULL)
		return c->err.status;
	failed = mysql_real_query(c->db, sql, strlen(sql)) != 0;
	free(sql);
	res = NULL;
	if (!failed) {
		res = mysql_store_result(c->db);
		failed = res == NULL && mysql_errno(c->db) != 0;
	}
	return wait_result(c, res, failed);
}

/* LIKE pattern for the marker of queue: '!' escapes the wildcards. */
static void
marker_pattern(const struct mq_conn *c, const char *queue, char *buf,
    size_t size)
{
	char marker[2 * (MQ_TABLE_MAX + MQ_QUEUE_MAX) + 32], *o = buf;
	const char *p;

	snprintf(marker, sizeof marker, "/* mq-wait `%s` %s */", c->table,
	    queue);
	*o++ = '%';
	for (p = marker; *p && o < buf + size - 3; p++) {
		if (*p == '_' || *p == '%' || *p == '!')
			*o++ = '!';
		*o++ = *p;
	}
	*o++ = '%';
	*o = '\0';
}

enum mq_status
mq_wake(struct mq_conn *c, const char *queue, uint64_t n, uint64_t *woken)
{
	char pattern[4 * (MQ_TABLE_MAX + MQ_QUEUE_MAX) + 64], kill[48];
	char sql[sizeof sql_waiters + sizeof pattern + 24];
	uint64_t ids[64];
	unsigned long long limit = n < 64 ? n : 64;
	MYSQL_RES *res;
	MYSQL_ROW row;
	enum mq_status rc = MQ_OK;
	size_t got = 0, i;

	*woken = 0;
	if (n == 0 || !mq_valid_queue(queue))
		return MQ_OK;
	marker_pattern(c, queue, pattern, sizeof pattern);
	snprintf(sql, sizeof sql, sql_waiters, pattern, limit);
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot look for waiting consumers");
	while (got < limit && (row = mysql_fetch_row(res)) != NULL)
		if (row[0])
			ids[got++] = strtoull(row[0], NULL, 10);
	mysql_free_result(res);
	for (i = 0; rc == MQ_OK && i < got; i++) {
		/* the id is the server's number, not anybody's input */
		snprintf(kill, sizeof kill, "KILL QUERY %llu",
		    (unsigned long long)ids[i]);
		if (mysql_real_query(c->db, kill, strlen(kill)) == 0)
			(*woken)++;
		else if (mysql_errno(c->db) != ER_NO_SUCH_THREAD)
			rc = mq__dberr(c, NULL, "cannot wake a waiting consumer");
	}
	return rc;
}

/* ---- the same wait, without blocking (for mq work) ---- */

#if defined(MARIADB_PACKAGE_VERSION)
static short
to_poll(int status)
{
	return (short)(((status & MYSQL_WAIT_READ) ? POLLIN : 0) |
	    ((status & MYSQL_WAIT_WRITE) ? POLLOUT : 0) |
	    ((status & MYSQL_WAIT_EXCEPT) ? POLLPRI : 0));
}

static int
from_poll(short revents, int timed_out)
{
	int status = 0;

	if (revents & (POLLIN | POLLHUP | POLLERR))
		status |= MYSQL_WAIT_READ;
	if (revents & POLLOUT)
		status |= MYSQL_WAIT_WRITE;
	if (revents & POLLPRI)
		status |= MYSQL_WAIT_EXCEPT;
	if (timed_out)
		status |= MYSQL_WAIT_TIMEOUT;
	return status;
}

/* After each step: finished, or what to poll for. */
static enum mq_status
async_state(struct mq_conn *c, int status, struct mq_async *a)
{
	a->fd = mysql_get_socket(c->db);
	a->events = to_poll(status);
	a->timeout_ms = (status & MYSQL_WAIT_TIMEOUT) ?
	    (int)mysql_get_timeout_value_ms(c->db) : -1;
	return MQ_OK;
}

enum mq_status
mq_wait_begin(struct mq_conn *c, const char *queue, int64_t max_us,
    struct mq_async *a)
{
	char *sql;
	int status;

	memset(a, 0, sizeof *a);
	if ((sql = wait_sql(c, queue, max_us)) == NULL)
		return c->err.status;
	/* the statement is sent before _start returns: the text can go */
	status = mysql_real_query_start(&a->err, c->db, sql, strlen(sql));
	free(sql);
	a->stage = 1;
	if (status)
		return async_state(c, status, a);
	a->stage = 2;	/* answered at once */
	return mq_wait_step(c, a, 0, 0);
}

enum mq_status
mq_wait_step(struct mq_conn *c, struct mq_async *a, short revents,
    int timed_out)
{
	MYSQL_RES *res = NULL;
	int status;

	if (a->stage == 1) {
		status = mysql_real_query_cont(&a->err, c->db,
		    from_poll(revents, timed_out));
		if (status)
			return async_state(c, status, a);
		a->stage = 2;
	}
	if (a->stage == 2) {
		if (a->err) {
			a->done = 1;
			return wait_result(c, NULL, 1);
		}
		a->stage = 3;
		status = mysql_store_result_start(&res, c->db);
	} else {
		status = mysql_store_result_cont(&res, c->db,
		    from_poll(revents, timed_out));
	}
	if (status)
		return async_state(c, status, a);
	a->done = 1;
	return wait_result(c, res, res == NULL && mysql_errno(c->db) != 0);
}
#else
enum mq_status
mq_wait_begin(struct mq_conn *c, const char *queue, int64_t max_us,
    struct mq_async *a)
{
	(void)queue;
	(void)max_us;
	memset(a, 0, sizeof *a);
	return mq__fail(c, MQ_EINVAL, "non-blocking waits need libmariadb");
}

enum mq_status
mq_wait_step(struct mq_conn *c, struct mq_async *a, short revents,
    int timed_out)
{
	(void)revents;
	(void)timed_out;
	a->done = 1;
	return mq__fail(c, MQ_EINVAL, "non-blocking waits need libmariadb");
}
#endif
