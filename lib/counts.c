/*
 * counts.c: the counts of finished jobs in <table>_counts. Counting done
 * and dead jobs from the claim index costs a read of every finished
 * job's entry; instead each transaction that finishes, buries, archives
 * or removes jobs adds what it did to a count row, and mq stats sums a
 * few rows. Each session adds to its own slot of a count (its connection
 * id modulo 16), so that concurrent consumers seldom wait for one row's
 * lock; a count is the sum of its slots. On a Galera cluster each node
 * has slots of its own (16 times its index, plus that): two nodes'
 * sessions never write one row, and so never fail certification
 * against each other (a lock wait on one node is no failure).
 */
#include <string.h>

#include "internal.h"

/* The jobs of the id list, grouped by queue and state, as they are now
 * (after the transaction's own writes): a recurring job that an ack made
 * due again is not done, and is not counted. ORDER BY: a statement
 * locks its count rows in key order, whichever writer runs it. */
static const char sql_count[] =
    "INSERT INTO `{{TABLE}}_counts` (queue, state, slot, n, total)"
    " SELECT queue, COALESCE(?, CAST(state AS CHAR)), CONNECTION_ID() % 16 + ?,"
    " ? * COUNT(*), IF(? > 0, COUNT(*), 0)"
    " FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE state IN ('done', 'dead') AND id IN (";
/* A count's total is what was ever added to it: the counter. */
#define COUNT_TAIL " ON DUPLICATE KEY UPDATE n = n + VALUES(n)," \
    " total = total + VALUES(total)"
static const char sql_count_tail[] =
    ") GROUP BY queue, state ORDER BY queue, state" COUNT_TAIL;

/* An event (a state of the counts that only counts: failed, requeued,
 * retried, purged) for each of the jobs, whatever their state, by the
 * queue they are in now; only those in the queue given, if one is. */
static const char sql_count_event[] =
    "INSERT INTO `{{TABLE}}_counts` (queue, state, slot, n, total)"
    " SELECT queue, ?, CONNECTION_ID() % 16 + ?, COUNT(*), COUNT(*)"
    " FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE (? IS NULL OR queue = ?) AND id IN (";
static const char sql_count_event_tail[] =
    ") GROUP BY queue ORDER BY queue" COUNT_TAIL;

/* Adds sign times the jobs among ids[0..n) that are now done or dead to
 * the counts of their queues (as "done" and "dead", or all as "archived"
 * if archived); *written (if not NULL) gets the count rows' changes. */
static enum mq_status
count(struct mq_conn *c, int archived, int64_t sign, const uint64_t *ids,
    size_t n, uint64_t *written)
{
	MYSQL_BIND pre[4];
	unsigned long alen;
	uint64_t affected;
	enum mq_status rc;

	if (n == 0)
		return MQ_OK;
	if (archived)
		mq__bind_str(&pre[0], "archived", &alen);
	else
		mq__bind_null(&pre[0]);
	mq__bind_i64(&pre[1], &c->count_slot_base);
	mq__bind_i64(&pre[2], &sign);
	mq__bind_i64(&pre[3], &sign);
	rc = mq__exec_ids_tail(c, sql_count, sql_count_tail, pre, 4, ids, n,
	    &affected);
	/* affected: 1 per row inserted, 2 per row updated (a write tried,
	 * then an update), as the handler counters go */
	if (written)
		*written += affected;
	return rc;
}

enum mq_status
mq__count_finished(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	mq__note_finished(c, ids, n);	/* mq wait: woken after the commit */
	return count(c, 0, 1, ids, n, NULL);
}

enum mq_status
mq__count_removed(struct mq_conn *c, int archived, const uint64_t *ids,
    size_t n, uint64_t *written)
{
	enum mq_status rc;

	rc = count(c, 0, -1, ids, n, written);
	if (rc == MQ_OK && archived)
		rc = count(c, 1, 1, ids, n, written);
	return rc;
}

enum mq_status
mq__count_event(struct mq_conn *c, const char *event, const char *only,
    const uint64_t *ids, size_t n)
{
	MYSQL_BIND pre[4];
	unsigned long elen, qlen;
	uint64_t written;
	int i;

	if (n == 0)
		return MQ_OK;
	mq__bind_str(&pre[0], event, &elen);
	mq__bind_i64(&pre[1], &c->count_slot_base);
	for (i = 2; i < 4; i++)
		if (only)
			mq__bind_str(&pre[i], only, &qlen);
		else
			mq__bind_null(&pre[i]);
	return mq__exec_ids_tail(c, sql_count_event, sql_count_event_tail,
	    pre, 4, ids, n, &written);
}

/* A recount adds to slot 0 the difference between the tables and the
 * counts. Both are read by one statement, so under READ COMMITTED from
 * one snapshot: a transaction that commits later adds its own part
 * afterwards, one not yet committed is in neither, and writers need not
 * stop. The job table's finished jobs are read from the claim index
 * (all of it: this is the scan the counts spare mq stats); the
 * archive's rows from the archive itself. What a recount adds to a
 * count it adds to its counter too (jobs someone buried by hand were
 * buried); what it takes away, not. */
#define RECOUNT_FINISHED \
    "SELECT q, s, 0, SUM(k), GREATEST(SUM(k), 0) FROM (" \
    "  SELECT queue AS q, CAST(state AS CHAR) AS s, COUNT(*) AS k" \
    "  FROM `{{TABLE}}` FORCE INDEX (claim)" \
    "  WHERE state IN ('done', 'dead') GROUP BY queue, state" \
    "  UNION ALL" \
    "  SELECT queue, CAST(state AS CHAR), -SUM(n) FROM `{{TABLE}}_counts`" \
    "  WHERE state IN ('done', 'dead') GROUP BY queue, state" \
    " ) d GROUP BY q, s HAVING SUM(k) <> 0"
#define RECOUNT_ARCHIVED \
    "SELECT q, 'archived', 0, SUM(k), GREATEST(SUM(k), 0) FROM (" \
    "  SELECT queue AS q, COUNT(*) AS k FROM `{{TABLE}}_archive`" \
    "  GROUP BY queue" \
    "  UNION ALL" \
    "  SELECT queue, -SUM(n) FROM `{{TABLE}}_counts`" \
    "  WHERE state = 'archived' GROUP BY queue" \
    " ) d GROUP BY q HAVING SUM(k) <> 0"
static const char sql_recount_finished[] =
    "INSERT INTO `{{TABLE}}_counts` (queue, state, slot, n, total) "
    RECOUNT_FINISHED " ORDER BY q, s" COUNT_TAIL;
static const char sql_recount_archived[] =
    "INSERT INTO `{{TABLE}}_counts` (queue, state, slot, n, total) "
    RECOUNT_ARCHIVED " ORDER BY q" COUNT_TAIL;

/* Two recounts at once would both add the same difference: one waits
 * for the other (and then finds nothing to add). A name of the table's,
 * hashed to stay within the 64 characters a lock name may have. */
static const char sql_lock[] =
    "SELECT GET_LOCK(CONCAT('mq-recount-', MD5(CONCAT(DATABASE(), '.', ?))),"
    " 600)";
static const char sql_unlock[] =
    "SELECT RELEASE_LOCK(CONCAT('mq-recount-', MD5(CONCAT(DATABASE(), '.',"
    " ?))))";

/* Runs tmpl (its one parameter: the table's name, if table), and reads
 * the one number it returns into *got (-1 if NULL) unless got is NULL. */
static enum mq_status
run_once(struct mq_conn *c, const char *tmpl, int table, int64_t *got)
{
	MYSQL_BIND in[1], out[1];
	unsigned long tlen;
	mq__bool isnull = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	if ((st = mq__prepare_once(c, tmpl)) == NULL)
		return c->err.status;
	if (table)
		mq__bind_str(&in[0], c->table, &tlen);
	/* in a transaction, its retry is the transaction's (mq__in_tx) */
	rc = c->in_tx ? mq__execute(c, st, table ? in : NULL, "cannot recount") :
	    mq__execute_retry(c, st, table ? in : NULL, "cannot recount");
	if (rc == MQ_OK && got) {
		memset(out, 0, sizeof out);
		mq__bind_i64(&out[0], got);
		out[0].is_null = &isnull;
		if (mysql_stmt_bind_result(st, out) != 0 ||
		    ((f = mysql_stmt_fetch(st)) != 0 && f != MYSQL_DATA_TRUNCATED))
			rc = mq__dberr(c, st, "cannot recount");
		else if (isnull)
			*got = -1;
	}
	mq__release(c, st);
	return rc;
}

/* Galera: GET_LOCK holds on one node only, and another node's recount
 * can be applied here in the middle of this one: its new count row
 * inserted after this one's read and before its write (READ COMMITTED
 * keeps no gap locked; the write then waits for the row and adds its
 * difference to the other's: twice). Certification cannot see that
 * (it compares writes, not reads). So the node first catches up with
 * the cluster (mq__catch_up), and the recount, in its transaction,
 * reads the differences once more after its writes: any left means
 * another recount's write came in between, and the transaction is
 * rolled back and run again. After that read, another node's recount
 * needs rows this one holds and aborts it (Galera), or certifies
 * against it: nothing is added twice. No lock beyond the count rows it
 * writes: consumers and pushers go on. */
static const char sql_recount_left[] =
    "SELECT (SELECT COUNT(*) FROM (" RECOUNT_FINISHED ") f)"
    " + (SELECT COUNT(*) FROM (" RECOUNT_ARCHIVED ") a)";

static enum mq_status
recount_tx(struct mq_conn *c, void *ctx)
{
	enum mq_status rc;
	int64_t left = 0;

	(void)ctx;
	if ((rc = run_once(c, sql_recount_finished, 0, NULL)) == MQ_OK &&
	    (rc = run_once(c, sql_recount_archived, 0, NULL)) == MQ_OK &&
	    (rc = run_once(c, sql_recount_left, 0, &left)) == MQ_OK &&
	    left != 0)
		rc = mq__fail(c, MQ_ERETRY, "cannot recount: the counts kept "
		    "changing under it (recounts on other nodes at once)");
	return rc;
}

static enum mq_status
recount_galera(struct mq_conn *c)
{
	enum mq_status rc;

	if ((rc = mq__catch_up(c)) != MQ_OK)
		return rc;
	rc = mq__in_tx(c, recount_tx, NULL);
	mq__caught_up(c);
	return rc;
}

enum mq_status
mq_recount(struct mq_conn *c)
{
	struct mq_error saved;
	enum mq_status rc;
	int64_t locked = 0;

	if ((rc = mq__read_committed(c)) != MQ_OK)
		return rc;
	if ((rc = run_once(c, sql_lock, 1, &locked)) != MQ_OK)
		return rc;
	if (locked != 1)
		return mq__fail(c, MQ_ERETRY, "cannot recount: another recount "
		    "of this table has run for 10 minutes");
	if (c->galera)
		rc = recount_galera(c);
	else if ((rc = run_once(c, sql_recount_finished, 0, NULL)) == MQ_OK)
		rc = run_once(c, sql_recount_archived, 0, NULL);
	/* the lock goes with the session anyway: a failed release only
	 * keeps it until the command ends */
	saved = c->err;
	if (run_once(c, sql_unlock, 1, NULL) != MQ_OK || rc != MQ_OK)
		c->err = saved;
	return rc;
}
