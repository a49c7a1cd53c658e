/*
 * wakeup.c: waiting for jobs without polling hard (seed 002). MySQL has
 * no LISTEN/NOTIFY, so a waiter parks in a marked SELECT that waits, and
 * a pusher, after its commit, finds waiters of that table and queue in
 * the waiters table and KILL QUERYs them: no more than the jobs it
 * pushed.
 *
 * The waiter's statement checks for a due job and sleeps in one go:
 * IF(EXISTS(due job), 2, SLEEP(n)). In front of its first park, in the
 * same round trip, it writes its rows in <table>_waiters (one per queue,
 * each statement committed before the next), so a push either commits
 * before the park's read (the statement sees the job and returns at
 * once) or after the rows (the pusher, reading them after its commit,
 * finds the sleeper and wakes it): no push is missed. A pusher reads
 * no more rows than it pushed jobs, by an index (queue, node): what a
 * wakeup costs grows with the waiters it wakes, not with the sessions
 * connected, and it sends their KILL QUERYs in one round trip. Where
 * the table cannot be used (no grant), pushers scan the process list
 * for the statement's marker instead. On one server the SLEEP is a wait
 * for a user lock but in one waiter (sql_park_wall). n is at most a
 * second, so jobs that become due by themselves (scheduled, requeued)
 * or pushes by a user who may not see
 * or kill the waiter are still found within a second. It backs off:
 * 100 ms after the last claim, doubling up to the second, so that this
 * polling fallback is quick during bursts and about one query per second
 * when idle.
 *
 * On a Galera cluster KILL QUERY reaches the pusher's node only. There a
 * waiter's park also reads and share-locks its rows (Galera commits the
 * rows in one order on every node) before it checks for a due job: a
 * pusher on another node updates one (waiters.c), the
 * update's replication needs the lock, and Galera aborts the park with
 * error 1213, a wakeup like 1317. A push that commits before the rows
 * are written is seen by the check (the node applied it first); one
 * after finds them. The rows go when the wait ends (mq__wait_leave), or
 * with the claim that ends it.
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

/* A waiter's rows in the waiters table. First, on a Galera node, those
 * of dead connections of this node go (mq__sql_dead_waiters). Then one
 * row per queue, as a text query: the names are validated, the other
 * values the server's own. */
static const char sql_join_insert[] =
    "INSERT INTO `%s_waiters` (node, conn, queue, login) VALUES ";
static const char sql_join_row[] =
    "%s(" MQ_SQL_NODE ", CONNECTION_ID(), '%s', " MQ_SQL_LOGIN ")";
static const char sql_join_again[] =
    " ON DUPLICATE KEY UPDATE since = " MQ_SQL_NOW ", wakes = 0;";
/* The park reads its rows first (an aggregate: the condition is
 * computed once they are read and locked), then checks for a job. */
static const char sql_park_locked[] =
    " FROM `%s_waiters` WHERE " MQ_SQL_OWN_WAITER " LOCK IN SHARE MODE";
/* One server: the park waits for a user lock, the wall, that one waiter
 * of the table holds (the first to take it; it keeps it until its
 * connection ends), and that one sleeps. A KILL QUERY ends a wait for a
 * user lock at once, where one of SLEEP's waits (they share one mutex
 * in the server) took up to 2 s now and then when KILLs came one after
 * another (doc/performance-history.md, 2026-11-28). 11: the wall came
 * free (its holder left) and is this waiter's now: claim, then sleep. */
static const char sql_park_wall[] =
    "IF(IS_USED_LOCK(" MQ_SQL_WALL("%s") ") <=> CONNECTION_ID()"
    " OR GET_LOCK(" MQ_SQL_WALL("%s") ", 0), SLEEP(%.3f),"
    " 10 + GET_LOCK(" MQ_SQL_WALL("%s") ", %.3f)))";

/* What the waiter's rows have had of wakes (each wake adds one to the
 * rows it woke, waiters.c): a park reads it, and the next park, after a
 * claim that found nothing, ends at once if it has changed. A wake that
 * came between the two (a slot freed while the waiter claimed: its KILL
 * QUERY found no statement to end) is not missed. A sum: a wake of any
 * of its queues changes it. */
static const char sql_wakes_seen[] =
    "(SELECT IFNULL(SUM(wakes), 0) FROM `%s_waiters` WHERE "
    MQ_SQL_OWN_WAITER ")";
static const char sql_wakes_seen_locked[] = "IFNULL(SUM(wakes), 0)";

/* Where the waiters table cannot be used: the waiters found by their
 * statement's marker in the process list (a scan of every session). A
 * text query: the pattern is made of the validated table and queue
 * names, '%' and '!'; the limit is a number. Compared byte for byte:
 * queue names are (ascii_bin), and INFO's own collation would wake a
 * waiter on "jobs" for a push to "JOBS". */
static const char sql_waiters[] =
    "SELECT ID FROM information_schema.PROCESSLIST"
    " WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
    " AND CAST(INFO AS BINARY) LIKE '%s' ESCAPE '!'"
    " ORDER BY TIME DESC, ID LIMIT %llu";

/* Longest park in one statement, and the first one after a claim. */
#define WAIT_MAX_US 1000000
#define WAIT_FIRST_US 100000

int64_t
mq_wait_backoff_us(unsigned idle_waits)
{
	return idle_waits >= 4 ? WAIT_MAX_US : WAIT_FIRST_US << idle_waits;
}

/* The wait statement for a queue or preference list; NULL if the list is
 * not valid or memory ran out (c->err says which). On Galera it joins
 * the waiters table first if it has not (*pre: the statements sent
 * before the park, each answered on its own). */
static char *
wait_sql(struct mq_conn *c, const char *list, int64_t us, int *pre)
{
	char queues[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	size_t nq = mq__queue_list(list, queues), per, n, q;
	int galera = mq__wakes_nodes(c);
	int join = mq__uses_waiters(c) && !c->wait_joined;
	int wakes = mq__uses_waiters(c);
	double secs;
	char *sql, *p;

	*pre = 0;
	if (nq == 0) {
		mq__fail(c, MQ_EINVAL, "invalid queue name");
		return NULL;
	}
	per = sizeof sql_wait_marker + sizeof sql_wait_due + 6 +
	    3 * (MQ_TABLE_MAX + MQ_QUEUE_MAX);
	if (join)
		per += sizeof sql_join_row + MQ_QUEUE_MAX;
	n = 96 + nq * per + (join ? mq__sql_dead_waiters_max() + 2 + sizeof
	    sql_join_insert + sizeof sql_join_again + 3 * MQ_TABLE_MAX : 0) +
	    (galera ? sizeof sql_park_locked + MQ_TABLE_MAX :
	    sizeof sql_park_wall + 3 * MQ_TABLE_MAX + 32) +
	    2 * (sizeof sql_wakes_seen + MQ_TABLE_MAX + 24);
	if ((sql = p = malloc(n)) == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	if (us > WAIT_MAX_US)
		us = WAIT_MAX_US;
	if (join) {
		/* one server: no clean (a scan of the rows at each join, 500
		 * waiters joining at once waited out their lock waits): the
		 * rows of a waiter that ended go with the push whose KILL
		 * finds it gone, those before a restart are passed over
		 * (waiters.c) */
		if (galera) {
			p += mq__sql_dead_waiters(p, mq__sql_dead_waiters_max(),
			    c->table, 0);
			p += sprintf(p, ";");
		}
		p += sprintf(p, sql_join_insert, c->table);
		for (q = 0; q < nq; q++)
			p += sprintf(p, sql_join_row, q ? ", " : "",
			    queues[q]);
		p += sprintf(p, "%s", sql_join_again);
		*pre = galera ? 2 : 1;
	}
	p += sprintf(p, "SELECT ");
	for (q = 0; q < nq; q++)
		p += sprintf(p, sql_wait_marker, c->table, queues[q]);
	p += sprintf(p, galera ? "IF(COUNT(*) >= 0 AND (" : "IF(");
	/* the last wait said a job is due, and here we wait again: the
	 * claim found nothing (another session holds that job's row
	 * locked, or took it; a limit held it back): this park does not
	 * look for a due job, or every wait would end at once and the
	 * waiter claim in a loop; it ends at once only if it was woken
	 * since that wait (a slot freed) */
	if (c->wait_said_due && wakes && c->wait_wakes_known) {
		if (galera)
			p += sprintf(p, "%s", sql_wakes_seen_locked);
		else
			p += sprintf(p, sql_wakes_seen, c->table);
		p += sprintf(p, " <> %llu",
		    (unsigned long long)c->wait_wakes);
	} else if (c->wait_said_due) {
		p += sprintf(p, "FALSE");
	}
	for (q = 0; q < nq && !c->wait_said_due; q++) {
		p += sprintf(p, "%s", q ? " OR " : "");
		p += sprintf(p, sql_wait_due, c->table, queues[q], c->table,
		    queues[q]);
	}
	secs = (double)(us < 0 ? 0 : us) / 1e6;
	if (galera) {
		p += sprintf(p, "), 2, SLEEP(%.3f))", secs);
		if (wakes)
			p += sprintf(p, ", %s", sql_wakes_seen_locked);
		sprintf(p, sql_park_locked, c->table);
	} else {
		p += sprintf(p, ", 2, ");
		p += sprintf(p, sql_park_wall, c->table, c->table, secs,
		    c->table, secs);
		/* read at the statement's start (its snapshot): before the
		 * next claim, which is all it needs to be */
		if (wakes) {
			p += sprintf(p, ", ");
			sprintf(p, sql_wakes_seen, c->table);
		}
	}
	return sql;
}

/* Ends a wait statement: 2 (a job is due), a KILL QUERY (1317: a
 * pusher's wakeup, not an error) or, on Galera, a brute-force abort
 * (1213: a pusher's on another node) say claim now: MQ_OK; SLEEP's 0
 * says nothing came: MQ_EMPTY. failed_pre: the statements before the
 * park did not all succeed (the rows may not be there): they are sent
 * again next time; no grant on the waiters table, or no such table:
 * waits go on without it (a pusher on another node is then found
 * within a second). */
static enum mq_status
wait_result(struct mq_conn *c, MYSQL_RES *res, int failed, int failed_pre)
{
	MYSQL_ROW row;
	enum mq_status rc = MQ_EMPTY;
	unsigned err = failed ? mysql_errno(c->db) : 0;

	if (failed_pre)
		c->wait_joined = 0;
	if (failed && mq__uses_waiters(c) && (err == ER_TABLEACCESS_DENIED_ERROR ||
	    err == ER_COLUMNACCESS_DENIED_ERROR || err == ER_NO_SUCH_TABLE)) {
		c->waiters_off = 1;
		c->wait_joined = 0;
		return MQ_OK;
	}
	c->wait_said_due = 0;
	c->wait_wakes_known = 0;
	if (failed) {
		if (err == ER_QUERY_INTERRUPTED || err == ER_LOCK_DEADLOCK)
			return MQ_OK;
		return mq__dberr(c, NULL, "cannot wait for jobs");
	}
	if (res && (row = mysql_fetch_row(res)) != NULL) {
		c->wait_said_due = row[0] && strcmp(row[0], "2") == 0;
		if (mysql_num_fields(res) >= 2 && row[1]) {
			c->wait_wakes = strtoull(row[1], NULL, 10);
			c->wait_wakes_known = 1;
		}
		/* 11: the wall is this waiter's; NULL: its wait for the
		 * wall was killed, which ends GET_LOCK, not the statement
		 * (sql_park_wall) */
		if (c->wait_said_due || !row[0] || strcmp(row[0], "11") == 0)
			rc = MQ_OK;
	}
	mysql_free_result(res);
	return rc;
}

void
mq_wait_rearm(struct mq_conn *c)
{
	c->wait_said_due = 0;
}

enum mq_status
mq_wait(struct mq_conn *c, const char *queue, int64_t max_us)
{
	char *sql;
	MYSQL_RES *res = NULL;
	int failed, failed_pre, pre, more;

	if ((sql = wait_sql(c, queue, max_us, &pre)) == NULL)
		return c->err.status;
	if (pre)
		c->wait_joined = 1;
	failed = mysql_real_query(c->db, sql, strlen(sql)) != 0;
	free(sql);
	failed_pre = failed && pre > 0;
	/* the statements before the park answer without a result; the
	 * last next_result is the park's own answer: its failure (a
	 * KILL QUERY, a wakeup) leaves the rows joined, to go with the
	 * claim it calls for (taken for the join's, the rows stayed
	 * behind a waiter that claimed and left: t152) */
	for (; !failed && pre > 0; pre--) {
		if ((more = mysql_next_result(c->db)) != 0) {
			failed = 1;
			failed_pre = pre > 1;
			if (more < 0)	/* cannot be: the park follows */
				return mq__fail(c, MQ_EDB, "cannot wait for "
				    "jobs: the server skipped the wait");
		}
	}
	if (!failed) {
		res = mysql_store_result(c->db);
		failed = res == NULL && mysql_errno(c->db) != 0;
	}
	return wait_result(c, res, failed, failed_pre);
}

enum mq_status
mq__wait_leave(struct mq_conn *c)
{
	char *sql;
	unsigned attempt;
	enum mq_status rc = MQ_OK;

	if (!c->wait_joined)
		return MQ_OK;
	if ((sql = mq__leave_sql(c)) == NULL)
		return c->err.status;
	c->wait_joined = 0;
	/* 1213: a pusher's wakeup of these rows certified first */
	for (attempt = 0; mysql_real_query(c->db, sql, strlen(sql)) != 0;
	    attempt++) {
		if ((mysql_errno(c->db) != ER_LOCK_DEADLOCK &&
		    mysql_errno(c->db) != ER_QUERY_INTERRUPTED) ||
		    attempt + 1 >= MQ_RETRIES) {
			rc = mq__dberr(c, NULL, "cannot stop waiting");
			break;
		}
		mq__backoff(attempt);
	}
	free(sql);
	return rc;
}

/* ---- waiting for jobs to finish (mq wait) ----
 *
 * The waiter's row in the waiters table, its queue "*LO-HI" (the ids
 * it waits for; MQ_SQL_FINISH_ROWS), armed (wakes = 0): a finish of one
 * of those wakes it after its commit (waiters.c,
 * mq__wake_finish_waiters). The waiter arms, then
 * looks at its jobs, then parks: the park ends at once if its row was
 * disarmed since (a finish came between the look and the park), or
 * when a finisher's KILL QUERY (this server or node) or write (another
 * Galera node, as a push's) ends it. Parks on one server wait on a
 * wall of their own, as those for jobs do. */
static const char sql_finish_arm[] =
    "INSERT INTO `%s_waiters` (node, conn, queue, login) VALUES ("
    MQ_SQL_NODE ", CONNECTION_ID(), '*%llu-%llu', " MQ_SQL_LOGIN ")"
    " ON DUPLICATE KEY UPDATE since = " MQ_SQL_NOW ", wakes = 0";
static const char sql_finish_park[] =
    "SELECT /* mq-wait-finish `%s` */ IF(IFNULL((SELECT MAX(wakes) FROM"
    " `%s_waiters` WHERE " MQ_SQL_OWN_WAITER " AND " MQ_SQL_FINISH_ROWS
    "), 1) <> 0, 2, ";
static const char sql_finish_park_galera[] =
    "SELECT /* mq-wait-finish `%s` */ IF(COUNT(*) >= 0 AND"
    " IFNULL(MAX(wakes), 1) <> 0, 2, SLEEP(%.3f)) FROM `%s_waiters`"
    " WHERE " MQ_SQL_OWN_WAITER " AND " MQ_SQL_FINISH_ROWS
    " LOCK IN SHARE MODE";

enum mq_status
mq_finish_arm(struct mq_conn *c, uint64_t lo, uint64_t hi)
{
	char sql[sizeof sql_finish_arm + MQ_TABLE_MAX + 48];
	unsigned attempt, err;

	if (!mq__uses_waiters(c))
		return MQ_EMPTY;
	snprintf(sql, sizeof sql, sql_finish_arm, c->table,
	    (unsigned long long)lo, (unsigned long long)hi);
	for (attempt = 0; mysql_real_query(c->db, sql, strlen(sql)) != 0;
	    attempt++) {
		err = mysql_errno(c->db);
		if (mq__classify(err) == MQ_EUNAVAIL)
			return mq__dberr(c, NULL, "cannot wait for jobs");
		/* 1213: a finisher's disarm certified first; 1317: a
		 * finisher's KILL that came after the park it was meant for
		 * ended (it saw the row disarmed). Else (no grant, no table,
		 * a read-only server or replica, any refusal but a lost
		 * connection) it looks instead. */
		if ((err != ER_LOCK_DEADLOCK && err != ER_QUERY_INTERRUPTED) ||
		    attempt + 1 >= MQ_RETRIES) {
			c->waiters_off = 1;
			return MQ_EMPTY;
		}
		mq__backoff(attempt);
	}
	c->wait_joined = 1;
	return MQ_OK;
}

enum mq_status
mq_finish_park(struct mq_conn *c, int64_t max_us)
{
	char wall[MQ_TABLE_MAX + 16];
	char sql[sizeof sql_finish_park + sizeof sql_park_wall +
	    sizeof sql_finish_park_galera + 8 * MQ_TABLE_MAX + 64];
	double secs = (double)(max_us < 0 ? 0 : max_us) / 1e6;
	MYSQL_RES *res;
	MYSQL_ROW row;
	enum mq_status rc = MQ_OK;
	size_t k;
	unsigned err;

	if (c->galera) {
		snprintf(sql, sizeof sql, sql_finish_park_galera, c->table,
		    secs, c->table);
	} else {
		snprintf(wall, sizeof wall, "%s*finished", c->table);
		k = (size_t)snprintf(sql, sizeof sql, sql_finish_park,
		    c->table, c->table);
		snprintf(sql + k, sizeof sql - k, sql_park_wall, wall, wall,
		    secs, wall, secs);
	}
	/* a finisher's KILL, or its write on another node, ends the
	 * statement, or its result once the columns are sent */
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL) {
		err = mysql_errno(c->db);
		if (err == ER_QUERY_INTERRUPTED || err == ER_LOCK_DEADLOCK)
			return MQ_OK;
		return mq__dberr(c, NULL, "cannot wait for jobs");
	}
	/* 0: slept; 10: waited for the wall; 11: took the wall (parks
	 * again); 2, 1 (a SLEEP killed) or NULL (a wait for the wall
	 * killed): woken */
	if ((row = mysql_fetch_row(res)) != NULL && row[0] &&
	    (strcmp(row[0], "0") == 0 || strcmp(row[0], "10") == 0 ||
	    strcmp(row[0], "11") == 0))
		rc = MQ_EMPTY;
	mysql_free_result(res);
	return rc;
}

enum mq_status
mq_finish_leave(struct mq_conn *c)
{
	return mq__wait_leave(c);
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

/* The ids of up to max sessions waiting on queue, from the process
 * list (*got of them). */
static enum mq_status
scan_waiters(struct mq_conn *c, const char *queue, uint64_t *ids,
    size_t max, size_t *got)
{
	char pattern[4 * (MQ_TABLE_MAX + MQ_QUEUE_MAX) + 64];
	char sql[sizeof sql_waiters + sizeof pattern + 24];
	MYSQL_RES *res;
	MYSQL_ROW row;

	*got = 0;
	marker_pattern(c, queue, pattern, sizeof pattern);
	snprintf(sql, sizeof sql, sql_waiters, pattern,
	    (unsigned long long)max);
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot look for waiting consumers");
	while (*got < max && (row = mysql_fetch_row(res)) != NULL)
		if (row[0])
			ids[(*got)++] = strtoull(row[0], NULL, 10);
	mysql_free_result(res);
	return MQ_OK;
}

enum mq_status
mq__wake_local(struct mq_conn *c, const char *queue, uint64_t n,
    uint64_t *woken)
{
	uint64_t *ids;
	size_t max = n < MQ_WAKE_MAX ? (size_t)n : MQ_WAKE_MAX, got = 0;
	enum mq_status rc;

	*woken = 0;
	if (n == 0 || !mq_valid_queue(queue))
		return MQ_OK;
	/* (no table to read, no grant: the process list, from now on) */
	if (mq__uses_waiters(c) && ((rc = mq__wake_registered(c, queue, max,
	    woken)) != MQ_OK || mq__uses_waiters(c)))
		return rc;
	if ((ids = malloc(max * sizeof *ids)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = scan_waiters(c, queue, ids, max, &got);
	if (rc == MQ_OK)
		rc = mq__kill_queries(c, ids, got, woken, NULL);
	free(ids);
	return rc;
}

enum mq_status
mq__wake(struct mq_conn *c, const char *queue, uint64_t n, uint64_t *woken)
{
	enum mq_status rc = mq__wake_local(c, queue, n, woken);

	/* Galera: those on the other nodes (nothing on one server) */
	if (rc == MQ_OK && mq_valid_queue(queue))
		rc = mq__wake_nodes(c, queue, n < MQ_WAKE_MAX ? n : MQ_WAKE_MAX);
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
	a->deadline_us = a->timeout_ms >= 0 ?
	    mq_now_us() + (int64_t)a->timeout_ms * 1000 : 0;
	return MQ_OK;
}

/* The statements are answered: the wait's outcome, or the leaving's
 * (1213: a pusher's wakeup of the rows certified first: they are left
 * again next time). */
static enum mq_status
async_done(struct mq_conn *c, struct mq_async *a, MYSQL_RES *res,
    int failed)
{
	a->done = 1;
	if (!c->async.leave)
		return wait_result(c, res, failed, failed && c->async.pre > 0);
	if (failed && mysql_errno(c->db) == ER_LOCK_DEADLOCK) {
		c->wait_joined = 1;
		return MQ_EMPTY;
	}
	return failed ? mq__dberr(c, NULL, "cannot stop waiting") : MQ_EMPTY;
}

/* Sends sql (the text can go once this returns) and goes on as far as
 * it can without blocking. */
static enum mq_status
async_start(struct mq_conn *c, char *sql, struct mq_async *a)
{
	int status = mysql_real_query_start(&c->async.err, c->db, sql, strlen(sql));

	free(sql);
	c->async.stage = 1;
	if (status)
		return async_state(c, status, a);
	c->async.stage = 2;	/* answered at once */
	return mq_wait_step(c, a, 0, 0);
}

enum mq_status
mq_wait_begin(struct mq_conn *c, const char *queue, int64_t max_us,
    struct mq_async *a)
{
	char *sql;

	memset(a, 0, sizeof *a);
	memset(&c->async, 0, sizeof c->async);
	if ((sql = wait_sql(c, queue, max_us, &c->async.pre)) == NULL)
		return c->err.status;
	if (c->async.pre)
		c->wait_joined = 1;
	return async_start(c, sql, a);
}

enum mq_status
mq_wait_end(struct mq_conn *c, struct mq_async *a)
{
	int64_t until = mq_now_us() + 2 * WAIT_MAX_US, left;
	struct pollfd p;
	int r, ms;

	if (!c->wait_joined)
		return MQ_OK;
	/* the park holds the rows locked: it ends first (within its
	 * second), blocking; past that the rows stay, for the next waiter
	 * of the node to delete */
	while (a && !a->done) {
		if ((left = (until - mq_now_us()) / 1000) <= 0)
			return MQ_OK;
		ms = a->timeout_ms >= 0 && a->timeout_ms < left ?
		    a->timeout_ms : (int)left;
		p.fd = a->fd;
		p.events = a->events;
		p.revents = 0;
		if ((r = poll(&p, 1, ms)) < 0)
			continue;	/* a signal: the loop's clock says */
		(void)mq_wait_step(c, a, p.revents, r == 0);
	}
	return mq__wait_leave(c);
}

enum mq_status
mq_wait_leave_begin(struct mq_conn *c, struct mq_async *a)
{
	char *sql;

	memset(a, 0, sizeof *a);
	memset(&c->async, 0, sizeof c->async);
	if (!c->wait_joined) {
		a->done = 1;
		return MQ_OK;
	}
	if ((sql = mq__leave_sql(c)) == NULL)
		return c->err.status;
	c->wait_joined = 0;
	c->async.leave = 1;
	return async_start(c, sql, a);
}

/* Stages: 1 a statement sent (4: the next one of several asked for), 2
 * its answer in, 3 its rows being read. */
enum mq_status
mq_wait_step(struct mq_conn *c, struct mq_async *a, short revents,
    int timed_out)
{
	MYSQL_RES *res = NULL;
	int status;

	/* a poll that timed out for its caller, not for the client: told
	 * to the client, it would end the statement as if the server were
	 * gone (mq work dropped its waiting connection so, and left its
	 * rows in the waiters table, every few idle seconds) */
	if (timed_out && !(revents & (POLLIN | POLLOUT | POLLPRI | POLLHUP |
	    POLLERR)) && (a->deadline_us == 0 || mq_now_us() < a->deadline_us))
		return MQ_OK;
	for (;;) {
		switch (c->async.stage) {
		case 1:
		case 4:
			status = c->async.stage == 1 ?
			    mysql_real_query_cont(&c->async.err, c->db,
			    from_poll(revents, timed_out)) :
			    mysql_next_result_cont(&c->async.err, c->db,
			    from_poll(revents, timed_out));
			if (status)
				return async_state(c, status, a);
			/* next_result: -1 is "no more", which cannot be
			 * (the park follows) */
			if (c->async.stage == 4 && c->async.err < 0)
				c->async.err = 0;
			c->async.stage = 2;
			break;
		case 2:
			if (c->async.err)
				return async_done(c, a, NULL, 1);
			if (mysql_field_count(c->db) == 0 && c->async.pre == 0)
				return async_done(c, a, NULL, 0);
			if (mysql_field_count(c->db) == 0) {
				/* a statement before the park: on to the
				 * next */
				c->async.pre--;
				c->async.stage = 4;
				status = mysql_next_result_start(&c->async.err,
				    c->db);
				if (status)
					return async_state(c, status, a);
				if (c->async.err < 0)
					c->async.err = 0;
				c->async.stage = 2;
				break;
			}
			c->async.stage = 3;
			status = mysql_store_result_start(&res, c->db);
			if (status)
				return async_state(c, status, a);
			return async_done(c, a, res,
			    res == NULL && mysql_errno(c->db) != 0);
		default:
			status = mysql_store_result_cont(&res, c->db,
			    from_poll(revents, timed_out));
			if (status)
				return async_state(c, status, a);
			return async_done(c, a, res,
			    res == NULL && mysql_errno(c->db) != 0);
		}
	}
}
#else
enum mq_status
mq_wait_end(struct mq_conn *c, struct mq_async *a)
{
	(void)a;
	return mq__wait_leave(c);
}

enum mq_status
mq_wait_begin(struct mq_conn *c, const char *queue, int64_t max_us,
    struct mq_async *a)
{
	(void)queue;
	(void)max_us;
	memset(a, 0, sizeof *a);
	memset(&c->async, 0, sizeof c->async);
	return mq__fail(c, MQ_EINVAL, "non-blocking waits need libmariadb");
}

enum mq_status
mq_wait_leave_begin(struct mq_conn *c, struct mq_async *a)
{
	(void)c;
	memset(a, 0, sizeof *a);
	memset(&c->async, 0, sizeof c->async);
	a->done = 1;
	return MQ_OK;
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

/* The limited queues of some jobs, and how many of those jobs each has
 * (the ids, a list of the server's numbers, are text). */
static const char sql_freed[] =
    "SELECT j.queue, COUNT(*) FROM `%s` AS j FORCE INDEX (PRIMARY)"
    " JOIN `%s_queues` AS l ON l.queue = j.queue AND "
    MQ_SQL_LIMITED " WHERE j.id IN (";

void
mq__wake_freed(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	struct mq_error saved = c->err;
	size_t size = sizeof sql_freed + 2 * MQ_TABLE_MAX + 22 * n + 32, i;
	char *sql, *p;
	MYSQL_RES *res;
	MYSQL_ROW row;
	uint64_t woken;

	if (!c->has_limits || n == 0 || (sql = malloc(size)) == NULL)
		return;
	p = sql + snprintf(sql, size, sql_freed, c->table, c->table);
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%llu", i ? "," : "",
		    (unsigned long long)ids[i]);
	strcpy(p, ") GROUP BY j.queue");
	if (mysql_real_query(c->db, sql, strlen(sql)) == 0 &&
	    (res = mysql_store_result(c->db)) != NULL) {
		while ((row = mysql_fetch_row(res)) != NULL)
			if (row[0] && row[1] && mq_valid_queue(row[0]) &&
			    mq__wake(c, row[0], strtoull(row[1], NULL, 10),
			    &woken) != MQ_OK)
				break;
		mysql_free_result(res);
	}
	free(sql);
	c->err = saved;
}

void
mq__leased_key(struct mq_conn *c, uint64_t id, const char *queue,
    const void *key, size_t key_len)
{
	struct mq_leased_key *k = &c->leased_keys[c->leased_next++ %
	    MQ_LEASED_KEYS];

	if (key_len > sizeof k->key)
		key_len = sizeof k->key;
	k->id = id;
	snprintf(k->queue, sizeof k->queue, "%s", queue);
	k->has_key = key != NULL;
	k->key_len = key ? (unsigned short)key_len : 0;
	if (key)
		memcpy(k->key, key, key_len);
}

static const struct mq_leased_key *
leased_key(const struct mq_conn *c, uint64_t id)
{
	size_t i;

	for (i = 0; id && i < MQ_LEASED_KEYS; i++)
		if (c->leased_keys[i].id == id)
			return &c->leased_keys[i];
	return NULL;
}

/* The acked jobs' slots, less those a job taken again of the same
 * queue and key takes (each taken job stands for one acked job): their
 * waiters would find the key full again. */
static void
wake_freed_but(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    const unsigned char *lost, const struct mq_job *jobs, size_t njobs)
{
	const struct mq_leased_key *a, *b;
	unsigned char *again;
	uint64_t *ids;
	size_t i, j, k = 0;

	if (!c->has_limits || n == 0)
		return;
	ids = malloc(n * sizeof *ids);
	again = calloc(njobs ? njobs : 1, 1);
	if (ids == NULL || again == NULL) {	/* as mq__wake_acked */
		free(ids);
		free(again);
		return;
	}
	for (i = 0; i < n; i++) {
		if (lost[i])
			continue;
		a = leased_key(c, r[i].id);
		for (j = 0; a && j < njobs; j++)
			if (!again[j] && (b = leased_key(c, jobs[j].id)) &&
			    strcmp(a->queue, b->queue) == 0 &&
			    a->has_key == b->has_key &&
			    a->key_len == b->key_len &&
			    memcmp(a->key, b->key, a->key_len) == 0)
				break;
		if (a && j < njobs)
			again[j] = 1;
		else
			ids[k++] = r[i].id;
	}
	mq__wake_freed(c, ids, k);
	free(ids);
	free(again);
}

void
mq__wake_after_commit(struct mq_conn *c)
{
	struct mq_error saved = c->err;
	uint64_t woken;
	size_t i;

	for (i = 0; i < c->nreleased; i++)
		if (c->released_n[i] > 0 && mq_valid_queue(c->released[i]))
			(void)mq__wake(c, c->released[i], c->released_n[i],
			    &woken);
	c->nreleased = 0;
	c->err = saved;
	mq__wake_finish_waiters(c);
}

void
mq__wake_after_claim(struct mq_conn *c, const struct mq_receipt *r,
    size_t n, const unsigned char *lost, const struct mq_job *jobs,
    size_t njobs)
{
	size_t i, k;

	wake_freed_but(c, r, n, lost, jobs, njobs);
	/* the dependents the acks made due, less those the claim took
	 * itself, in their transaction (a chain's next link) */
	for (i = 0; i < njobs; i++)
		for (k = 0; k < c->nreleased; k++)
			if (strcmp(c->released[k], jobs[i].queue) == 0 &&
			    c->released_n[k] > 0) {
				c->released_n[k]--;
				break;
			}
	mq__wake_after_commit(c);
}
