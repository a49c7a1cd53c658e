/*
 * waiters.c: a push's wakeup of the consumers that wait, found in
 * <table>_waiters (their rows, written by wakeup.c's wait): on the
 * pusher's server or node, up to one per job pushed, by KILL QUERY of
 * their parked statement; on the other nodes of a Galera cluster, where
 * KILL QUERY cannot reach (it acts on the pusher's node only), by a
 * write. Each waiter there has rows in <table>_waiters
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

int
mq__uses_waiters(const struct mq_conn *c)
{
	return !c->waiters_off;
}

/* "KILL QUERY id;" for each of ids from first on, as one text query:
 * the ids are the server's numbers, not anybody's input. */
static char *
kill_sql(struct mq_conn *c, const uint64_t *ids, size_t first, size_t n)
{
	char *sql = malloc((n - first) * 36 + 1), *p;
	size_t i;

	if ((p = sql) == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	*p = '\0';
	for (i = first; i < n; i++)
		p += sprintf(p, "%sKILL QUERY %llu", i > first ? ";" : "",
		    (unsigned long long)ids[i]);
	return sql;
}

enum mq_status
mq__kill_queries(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *woken, unsigned char *fate)
{
	size_t i = 0;
	char *sql;
	int r;

	if (fate)
		memset(fate, MQ_KILLED, n);
	/* one round trip for them all; the server stops at a KILL that
	 * fails (a session that ended, or another account's), and the
	 * rest go again after it */
	while (i < n) {
		if ((sql = kill_sql(c, ids, i, n)) == NULL)
			return c->err.status;
		r = mysql_real_query(c->db, sql, strlen(sql)) != 0;
		free(sql);
		/* 0: KILL i done, and the next answered; -1: no more */
		for (; r == 0; r = mysql_next_result(c->db)) {
			(*woken)++;
			i++;
		}
		if (r < 0)
			return MQ_OK;
		/* KILL i failed */
		switch (mysql_errno(c->db)) {
		case ER_NO_SUCH_THREAD:
		case ER_KILL_DENIED_ERROR:
			if (fate)
				fate[i] = mysql_errno(c->db) ==
				    ER_NO_SUCH_THREAD ? MQ_KILL_GONE :
				    MQ_KILL_DENIED;
			i++;
			break;
		default:
			return mq__dberr(c, NULL, "cannot wake a waiting "
			    "consumer");
		}
	}
	return MQ_OK;
}

/* The longest waiting of the least woken first, by the index wake
 * (queue, node): one range, read no further than the LIMIT. Rows older
 * than the server are of sessions before its restart, whose ids now
 * name others: passed over (UPTIME counts whole seconds from a start
 * in whole seconds: a second more, or the rows of its first second
 * would be); on Galera the join of the node's next waiter deletes
 * them. With kill_own
 * (a KILL of another account's session was refused), its own account's
 * only. */
#define SQL_REGISTERED \
    "SELECT conn FROM `{{TABLE}}_waiters` FORCE INDEX (wake)" \
    " WHERE queue = ? AND node = " MQ_SQL_NODE \
    " AND conn <> CONNECTION_ID() AND since >= " MQ_SQL_NOW \
    " - INTERVAL (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS" \
    " WHERE VARIABLE_NAME = 'UPTIME') SECOND - INTERVAL 1 SECOND"
/* the holder of the wall (wakeup.c) last: it sleeps, and a KILL of a
 * SLEEP may take the server seconds; one that waits for the wall ends
 * at once */
#define SQL_REGISTERED_ORDER \
    " ORDER BY conn <=> IS_USED_LOCK(" MQ_SQL_WALL("{{TABLE}}") ")," \
    " wakes, since LIMIT ?"
static const char sql_registered[] =
    SQL_REGISTERED SQL_REGISTERED_ORDER;
static const char sql_registered_own[] =
    SQL_REGISTERED " AND login = " MQ_SQL_LOGIN SQL_REGISTERED_ORDER;

/* After the KILLs, as text queries (the ids are the server's numbers,
 * the names validated): the rows of the sessions woken count one wake
 * more, so that the next push (the next batch of this one, another
 * pusher's) wakes others first, not these again before they claim; the
 * rows of sessions that ended (a waiter killed -9) go. */
static const char sql_woken[] =
    "UPDATE `%s_waiters` SET wakes = wakes + 1 WHERE node = " MQ_SQL_NODE
    " AND queue = '%s' AND conn IN (";
static const char sql_forget_conn[] =
    "DELETE FROM `%s_waiters` WHERE node = " MQ_SQL_NODE " AND conn IN (";

/* The UPDATE of the woken (want MQ_KILLED: and of the gone, whose rows
 * then sink behind the live ones where they cannot be deleted), or the
 * DELETE of the gone, for those of ids whose fate is want; a failure
 * changes nothing that matters: a waiter woken twice, or a dead row
 * left. */
static void
for_ids(struct mq_conn *c, const char *queue, const uint64_t *ids,
    const unsigned char *fate, size_t n, int want)
{
	size_t size = sizeof sql_woken + MQ_TABLE_MAX + MQ_QUEUE_MAX +
	    22 * n + 2;
	char *sql = malloc(size), *p;
	size_t i, k = 0;

	if ((p = sql) == NULL)
		return;
	p += want == MQ_KILLED ? snprintf(p, size, sql_woken, c->table, queue) :
	    snprintf(p, size, sql_forget_conn, c->table);
	for (i = 0; i < n; i++)
		if (fate[i] == want || (want == MQ_KILLED &&
		    fate[i] == MQ_KILL_GONE))
			p += sprintf(p, "%s%llu", k++ ? "," : "",
			    (unsigned long long)ids[i]);
	strcpy(p, ")");
	if (k)
		(void)mysql_real_query(c->db, sql, strlen(sql));
	free(sql);
}

static enum mq_status
registered(struct mq_conn *c, const char *queue, uint64_t *ids, size_t max,
    size_t *got)
{
	MYSQL_BIND in[2], out[1];
	unsigned long qlen = (unsigned long)strlen(queue);
	uint64_t limit = max, id;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r;

	*got = 0;
	if ((st = mq__prepare(c, c->kill_own ? sql_registered_own :
	    sql_registered)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_u64(&in[1], &limit);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	rc = mq__execute(c, st, in, "cannot look for waiting consumers");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot look for waiting consumers");
	while (rc == MQ_OK && (r = mysql_stmt_fetch(st)) != MYSQL_NO_DATA) {
		if (r == 1)
			rc = mq__dberr(c, st, "cannot look for waiting "
			    "consumers");
		else if (*got < max)
			ids[(*got)++] = id;
	}
	mq__release(c, st);
	return rc;
}

enum mq_status
mq__wake_registered(struct mq_conn *c, const char *queue, size_t n,
    uint64_t *woken)
{
	uint64_t *ids = malloc(n * sizeof *ids);
	unsigned char *fate = malloc(n);
	size_t got = 0, i, tries;
	enum mq_status rc = MQ_OK;
	int again;

	*woken = 0;
	if (ids == NULL || fate == NULL) {
		free(ids);
		free(fate);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	/* twice more at most: rows of sessions gone, or of other accounts
	 * this one may not KILL, took the places of waiters to wake */
	for (tries = 0, again = 1; again && tries < 3 && *woken < n;
	    tries++) {
		rc = registered(c, queue, ids, n - (size_t)*woken, &got);
		if (rc != MQ_OK && no_waiters_table(c->err.db_errno)) {
			c->waiters_off = 1;
			c->wait_joined = 0;
			rc = MQ_OK;
			break;
		}
		if (rc != MQ_OK || got == 0)
			break;
		/* one server: the wakes counted before the KILLs, so that a
		 * waiter between two statements, which a KILL finds nothing
		 * to end, reads them in its next park and does not sleep
		 * (wakeup.c: a park after a claim that found nothing). On a
		 * Galera node a parked waiter holds its rows share-locked:
		 * counted after the KILL ended the park, or the count would
		 * wait for it */
		if (!mq__wakes_nodes(c)) {
			memset(fate, MQ_KILLED, got);
			for_ids(c, queue, ids, fate, got, MQ_KILLED);
		}
		if ((rc = mq__kill_queries(c, ids, got, woken, fate)) != MQ_OK)
			break;
		for (again = 0, i = 0; i < got; i++) {
			if (fate[i] == MQ_KILL_DENIED && !c->kill_own)
				again = c->kill_own = 1;
			if (fate[i] == MQ_KILL_GONE)
				again = 1;
		}
		if (mq__wakes_nodes(c))
			for_ids(c, queue, ids, fate, got, MQ_KILLED);
		for_ids(c, queue, ids, fate, got, MQ_KILL_GONE);
	}
	free(ids);
	free(fate);
	return rc;
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
	rc = wake_nodes(c, queue, n < MQ_WAKE_MAX ? n : MQ_WAKE_MAX);
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

/* ---- the waiters for jobs to finish (mq wait; wakeup.c) ----
 *
 * A finish (an ack, a fail with no attempt left, a cancel, a burial, a
 * purge) wakes them after its commit: their rows (MQ_SQL_FINISH_ROWS,
 * queue "*LO-HI") whose ids range holds a job it finished and that are
 * armed (wakes = 0) are disarmed (wakes + 1) and, on this server or
 * node, their park is KILLed. Disarm first, then KILL: a park that
 * began before the disarm is running when the KILL comes; one that
 * began after reads wakes > 0 and ends at once. Only the finisher whose
 * UPDATE disarmed a row KILLs its session: one KILL an arming, however
 * many jobs finish. On a Galera node a parked waiter holds its row
 * share-locked, so this node's rows are KILLed first and disarmed
 * after (the disarm would wait for the park); a park that began
 * between the two sleeps out its second (mq wait looks again within
 * three). The other nodes' rows are disarmed by a write that aborts
 * their park, as a push's does. A finisher that found no row reads
 * again only a second later: a waiter looks once more
 * MQ_FINISH_STALE_US after it first arms. The names and numbers in
 * these text queries are validated table names, the server's own node
 * name and numbers. */
/* The rows to wake: armed, their range holding a finished job (lo, hi,
 * the server's numbers), as many as there are (in the index wake: one
 * range); then, in the same result, how many such rows there are in
 * all, and whether one of this node's is old (30 s without arming:
 * perhaps a waiter that died). UPTIME is read only for the rows to
 * wake: one before the server's start is of a session before a restart
 * (its connection id names another session now), deleted, not KILLed.
 * UPTIME counts whole seconds: a row of the first second after the
 * start may be taken for one before it, and deleted: its waiter's park
 * then finds no row and ends, and it arms and looks again; never the
 * other way round, which would KILL another session. */
static const char sql_finish_rows[] =
    "(SELECT conn, node = " MQ_SQL_NODE ", since >= " MQ_SQL_NOW
    " - INTERVAL (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
    " WHERE VARIABLE_NAME = 'UPTIME') SECOND,"
    " CAST(node AS CHAR), CAST(queue AS CHAR)"
    " FROM `%s_waiters` FORCE INDEX (wake) WHERE " MQ_SQL_FINISH_ROWS
    " AND conn <> CONNECTION_ID() AND wakes = 0"
    " AND CAST(SUBSTRING_INDEX(SUBSTRING(queue, 2), '-', 1) AS UNSIGNED)"
    " <= %llu AND CAST(SUBSTRING_INDEX(queue, '-', -1) AS UNSIGNED) >= %llu"
    " LIMIT %d) UNION ALL (SELECT NULL, COUNT(*), IFNULL(MAX(node = "
    MQ_SQL_NODE " AND since < " MQ_SQL_NOW " - INTERVAL 30 SECOND), 0),"
    " NULL, NULL FROM `%s_waiters` FORCE INDEX (wake) WHERE "
    MQ_SQL_FINISH_ROWS ")";
/* On a Galera node the row of a parked waiter of this node is locked
 * by its park: not waited for (NOWAIT, error 1205). */
static const char sql_finish_disarm[] =
    "%sUPDATE `%s_waiters` SET wakes = wakes + 1 WHERE node = %s%s%s"
    " AND conn = %llu AND queue = '%s' AND wakes = 0";
static const char sql_finish_nowait[] =
    "SET STATEMENT innodb_lock_wait_timeout = 0 FOR ";
static const char sql_finish_gone[] =
    "DELETE FROM `%s_waiters` WHERE node = " MQ_SQL_NODE
    " AND conn = %llu AND " MQ_SQL_FINISH_ROWS;
/* The rows of this node's waiters whose session ended (a waiter killed
 * -9, a node restarted: older than the server), of users whose
 * connections this session can see (its own; all of them with PROCESS,
 * where other users' threads show), and written before this statement
 * began (a waiter that connected after its read of the process list
 * would be taken for dead: 100 waiters joining at once lost rows so,
 * and their pushes' wakeups). Picked by a plain read, then deleted by
 * primary key: a scan of this node's rows would wait for the live
 * ones, which their parks hold locked on Galera. %s: the rows' own
 * condition (sql_dead_join, sql_dead_finish). */
static const char sql_dead_waiters[] =
    "DELETE w FROM (SELECT conn, queue FROM `%s_waiters`"
    " WHERE node = " MQ_SQL_NODE " AND %s AND (conn NOT IN"
    " (SELECT ID FROM information_schema.PROCESSLIST)"
    " OR since < " MQ_SQL_NOW " - INTERVAL (SELECT VARIABLE_VALUE FROM"
    " information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'UPTIME')"
    " SECOND) AND (login = " MQ_SQL_LOGIN " OR EXISTS (SELECT 1 FROM"
    " information_schema.PROCESSLIST WHERE USER <> " MQ_SQL_LOGIN ")))"
    " AS d STRAIGHT_JOIN `%s_waiters` AS w FORCE INDEX (PRIMARY)"
    " ON w.node = " MQ_SQL_NODE
    " AND w.conn = d.conn AND w.queue = d.queue";
/* A Galera waiter, as it joins: the rows of every queue. */
static const char sql_dead_join[] = "since < " MQ_SQL_NOW;
/* A finisher, at most once in FINISH_CLEAN_US, when one of mq wait's
 * rows is 30 s old: those rows only. */
static const char sql_dead_finish[] = MQ_SQL_FINISH_ROWS
    " AND since < " MQ_SQL_NOW " - INTERVAL 30 SECOND";

size_t
mq__sql_dead_waiters(char *buf, size_t size, const char *table, int finish)
{
	int n = snprintf(buf, size, sql_dead_waiters, table,
	    finish ? sql_dead_finish : sql_dead_join, table);

	return n < 0 ? 0 : (size_t)n;
}

size_t
mq__sql_dead_waiters_max(void)
{
	return sizeof sql_dead_waiters + sizeof sql_dead_finish +
	    2 * MQ_TABLE_MAX;
}

#define FINISH_WAKE_MAX 1024
#define FINISH_RECHECK_US 1000000
#define FINISH_CLEAN_US 30000000

struct finish_waiter {
	uint64_t conn;
	int local, live;
	char node[256], queue[48];
};

/* 1: the UPDATE disarmed the row; -1: a park holds it (Galera). A node
 * name that could break the quotes is passed over (it is the server's
 * @@hostname:@@port). */
static int
disarm(struct mq_conn *c, const struct finish_waiter *w)
{
	char sql[sizeof sql_finish_disarm + sizeof sql_finish_nowait +
	    MQ_TABLE_MAX + 320];
	const char *p;

	for (p = w->node; !w->local && *p; p++)
		if (*p == '\'' || *p == '\\')
			return 0;
	snprintf(sql, sizeof sql, sql_finish_disarm,
	    c->galera && w->local ? sql_finish_nowait : "", c->table,
	    w->local ? "" : "'", w->local ? MQ_SQL_NODE : w->node,
	    w->local ? "" : "'", (unsigned long long)w->conn, w->queue);
	/* 1213 on Galera: another finisher's disarm, or the waiter's
	 * arming, certified first: woken, or looking */
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0)
		return mysql_errno(c->db) == ER_LOCK_WAIT_TIMEOUT ? -1 : 0;
	return mysql_affected_rows(c->db) == 1;
}

/* KILL QUERY of a waiter's park: 1 done, 0 refused (another account's
 * session, without CONNECTION ADMIN), -1 its session is gone (its row
 * is deleted). */
static int
kill_finish_waiter(struct mq_conn *c, uint64_t conn)
{
	char sql[sizeof sql_finish_gone + MQ_TABLE_MAX + 24];
	unsigned char fate = MQ_KILLED;
	uint64_t woken = 0;

	if (mq__kill_queries(c, &conn, 1, &woken, &fate) != MQ_OK)
		return 0;
	if (fate == MQ_KILL_GONE) {
		snprintf(sql, sizeof sql, sql_finish_gone, c->table,
		    (unsigned long long)conn);
		(void)mysql_real_query(c->db, sql, strlen(sql));
		return -1;
	}
	return fate == MQ_KILLED;
}

/* A row to wake, if the read's row is one. */
static int
finish_waiter(MYSQL_ROW row, struct finish_waiter *w)
{
	unsigned long long lo, hi;
	size_t i;

	for (i = 0; i < 5; i++)
		if (!row[i])
			return 0;
	if (strlen(row[3]) >= sizeof w->node ||
	    strlen(row[4]) >= sizeof w->queue ||
	    sscanf(row[4], "*%llu-%llu", &lo, &hi) != 2 ||
	    strspn(row[4] + 1, "0123456789-") != strlen(row[4] + 1))
		return 0;
	w->conn = strtoull(row[0], NULL, 10);
	w->local = strcmp(row[1], "1") == 0;
	w->live = strcmp(row[2], "1") == 0;
	snprintf(w->node, sizeof w->node, "%s", row[3]);
	snprintf(w->queue, sizeof w->queue, "%s", row[4]);
	return 1;
}

/* One row to wake (wake_finish_waiters). */
static void
wake_one(struct mq_conn *c, const struct finish_waiter *w)
{
	char sql[sizeof sql_finish_gone + MQ_TABLE_MAX + 24];

	if (!w->local) {
		(void)disarm(c, w);	/* the write aborts its park */
	} else if (!w->live) {
		/* a session before a restart: its id names another now */
		snprintf(sql, sizeof sql, sql_finish_gone, c->table,
		    (unsigned long long)w->conn);
		(void)mysql_real_query(c->db, sql, strlen(sql));
	} else if (!c->galera) {
		if (disarm(c, w) == 1)
			(void)kill_finish_waiter(c, w->conn);
	} else if (kill_finish_waiter(c, w->conn) == 1 &&
	    disarm(c, w) == -1) {
		/* a park that began after the KILL holds the row: ended
		 * too, it looks (a refused KILL: it looks within three
		 * seconds, and the row is not waited for) */
		(void)kill_finish_waiter(c, w->conn);
	}
}

void
mq__note_finished(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	size_t i;

	if (!c->finished_unwoken) {
		c->finished_lo = UINT64_MAX;
		c->finished_hi = 0;
	}
	for (i = 0; i < n; i++) {
		c->finished_unwoken = 1;
		if (ids[i] < c->finished_lo)
			c->finished_lo = ids[i];
		if (ids[i] > c->finished_hi)
			c->finished_hi = ids[i];
	}
}

void
mq__wake_finish_waiters(struct mq_conn *c)
{
	char sql[sizeof sql_finish_rows + sizeof sql_dead_waiters +
	    sizeof sql_dead_finish + 2 * MQ_TABLE_MAX + 64];
	struct mq_error saved = c->err;
	struct finish_waiter *w = NULL;
	int64_t now = mq_now_us();
	MYSQL_RES *res;
	MYSQL_ROW row;
	size_t n = 0, i;
	int stale = 0, found = 0;

	if (!c->finished_unwoken)
		return;
	c->finished_unwoken = 0;
	if (!mq__uses_waiters(c) || (!c->finish_waiters &&
	    now - c->finish_checked_us < FINISH_RECHECK_US))
		goto out;
	snprintf(sql, sizeof sql, sql_finish_rows, c->table,
	    (unsigned long long)c->finished_hi,
	    (unsigned long long)c->finished_lo, FINISH_WAKE_MAX, c->table);
	c->finish_checked_us = now;
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		goto out;	/* they look again within seconds */
	if (mysql_num_rows(res) > 1 &&
	    (w = malloc((size_t)(mysql_num_rows(res) - 1) * sizeof *w)) ==
	    NULL) {
		mysql_free_result(res);
		goto out;
	}
	while ((row = mysql_fetch_row(res)) != NULL) {
		if (row[0] == NULL) {	/* the count */
			found = row[1] && strcmp(row[1], "0") != 0;
			stale = row[2] && strcmp(row[2], "1") == 0;
		} else if (w && finish_waiter(row, &w[n])) {
			n++;
		}
	}
	mysql_free_result(res);
	c->finish_waiters = found;
	if (stale && now - c->finish_cleaned_us >= FINISH_CLEAN_US) {
		c->finish_cleaned_us = now;
		(void)mq__sql_dead_waiters(sql, sizeof sql, c->table, 1);
		(void)mysql_real_query(c->db, sql, strlen(sql));
	}
	for (i = 0; i < n; i++)
		wake_one(c, &w[i]);
	free(w);
out:
	c->finished_lo = UINT64_MAX;
	c->finished_hi = 0;
	c->err = saved;
}
