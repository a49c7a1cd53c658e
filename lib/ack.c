/*
 * ack.c: finishing jobs (or, for a recurring job, scheduling its next
 * run). Every write after a claim is fenced by the lease token: a
 * consumer whose lease was lost (expired and requeued, claimed again, or
 * already acked) cannot finish someone else's delivery. The jobs
 * finished are counted (counts.c) in the same transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* A recurring job is not done but due again: at the first slot
 * every_anchor + k * every_us after now. Slots count from the anchor, not
 * from the ack, so the schedule does not drift; a job that fell behind
 * by several periods runs once, at the next slot, not once per missed
 * one. Each run starts with fresh attempts. (MySQL assigns left to
 * right: every IF reads every_us and every_anchor, which no assignment
 * changes.)
 *
 * The next slot is after now and at most now + every_us, so it exists
 * when every_us is positive, the anchor a real date and now + every_us
 * before the end of DATETIME. A row written by another program that
 * fails this (every_us 0 or less, no anchor, a zero date: schema 6
 * refuses them, an older server does not; a zero month or day, which
 * it does not) is done, as a job without
 * every_us: not a division by zero, nor due at once for ever; its
 * every_us and every_anchor are cleared last (a done job keeps no
 * recurrence), so the row satisfies the CHECKs even where someone wrote
 * it with the checks turned off. */
#define RECURS \
    "(every_us > 0 AND " REAL_ANCHOR " AND every_us <=" \
    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59'))"
/* The anchor a date: not NULL, not before 1000-01-01 (schema 6's CHECK
 * refuses those), no zero month or day and no 31st of February (the
 * CHECK lets those through, and date arithmetic on them fails, error
 * 1292: the ack failed for ever, mq work's with it). Tested without
 * arithmetic, the zero parts first (AND stops at the first false: MySQL's
 * LAST_DAY warns of a zero month, an error in a strict UPDATE); LAST_DAY
 * of February 31 is February 28, with no error. */
#define REAL_ANCHOR \
    "every_anchor >= '1000-01-01' AND MONTH(every_anchor) > 0 AND" \
    " DAYOFMONTH(every_anchor) > 0 AND" \
    " DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))"
/* Integer division (DIV): exact on any server and at any
 * div_precision_increment ('/' gives a DECIMAL of that scale; MariaDB's
 * FLOOR() of it was seen exact, other servers need not be). */
#define SINCE_ANCHOR \
    "TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))"
#define ACK_UPDATE \
    "UPDATE `{{TABLE}}` SET" \
    " state = IF(" RECURS ", 'ready', 'done')," \
    " finished_at = IF(" RECURS ", NULL, UTC_TIMESTAMP(6))," \
    " available_at = IF(" RECURS "," \
    "   every_anchor + INTERVAL IF(" SINCE_ANCHOR " < 0, 0," \
    "   " SINCE_ANCHOR " DIV every_us + 1) * every_us" \
    "   MICROSECOND, available_at)," \
    " attempts = IF(" RECURS ", 0, attempts)," \
    " leased_until = NULL," \
    " every_us = IF(" RECURS ", every_us, NULL)," \
    " every_anchor = IF(every_us IS NULL, NULL, every_anchor)"

static const char sql_ack[] = ACK_UPDATE " WHERE " MQ_SQL_HELD;
/* The one receipt's ack first tried for a job without dependents (the
 * ack then knows without a read that it makes none due), then for one
 * with one dependent (deps.c meets its one edge in one statement when
 * that is the dependent's last parent: a chain's link), those two the
 * other way round after the connection's last such ack was of a parent
 * of one (a chain's next link, whose first try would miss: a round trip
 * a link); again as above when neither changed anything: lost, or a
 * parent of more. */
static const char sql_ack_childless[] = ACK_UPDATE " WHERE " MQ_SQL_HELD
    " AND children IS NULL";
static const char sql_ack_one_child[] = ACK_UPDATE " WHERE " MQ_SQL_HELD
    " AND children = 1";

/* Several receipts: one locking read by primary key says which of them
 * still hold their lease (MQ_SQL_HELD for a list: leased, and the id
 * and token of one of the receipts), and one UPDATE finishes those,
 * instead of a round trip per receipt (mq work acks up to 64 jobs in
 * each claim's transaction). The read is a range of the primary key
 * (the id list) filtered by the (id, token) pairs in the server, so that
 * under READ COMMITTED a row another consumer now holds is let go at
 * once, as the fenced UPDATE would. Lists are padded as mq__exec_ids
 * pads its own. */
const char mq__sql_ack_lock[] =
    "SELECT id, lease_token, children IS NOT NULL FROM `{{TABLE}}`"
    " FORCE INDEX (PRIMARY) WHERE state = 'leased' AND id IN (";
const char mq__sql_ack_lock_pairs[] = ") AND (id, lease_token) IN (";
const char mq__sql_ack_lock_tail[] = ") FOR UPDATE";
#define ACK_BATCH 64

static const char sql_ack_ids[] = ACK_UPDATE
    " WHERE state = 'leased' AND id IN (";

struct ack {
	const struct mq_receipt *r;
	size_t n;
	unsigned char *lost;
};

static enum mq_status
ack_tx(struct mq_conn *c, void *ctx)
{
	struct ack *a = ctx;

	return mq__ack_in_tx(c, a->r, a->n, a->lost);
}

/* The locking read for n receipts (n a power of two). */
static MYSQL_STMT *
lock_statement(struct mq_conn *c, size_t n)
{
	size_t hl = strlen(mq__sql_ack_lock), i;
	char *sql = malloc(hl + 8 * n + sizeof mq__sql_ack_lock_pairs +
	    sizeof mq__sql_ack_lock_tail), *p;
	MYSQL_STMT *st;

	if (sql == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	p = stpcpy(sql, mq__sql_ack_lock);
	for (i = 0; i < n; i++)
		p = stpcpy(p, i ? ",?" : "?");
	p = stpcpy(p, mq__sql_ack_lock_pairs);
	for (i = 0; i < n; i++)
		p = stpcpy(p, i ? ",(?,?)" : "(?,?)");
	strcpy(p, mq__sql_ack_lock_tail);
	st = mq__prepare_keyed(c, mq__sql_ack_lock, n, sql);
	free(sql);
	return st;
}

/* Acks r[0..n), 2 <= n <= ACK_BATCH: lost[i] for those that no longer
 * hold their lease (or repeat a receipt already in the batch); the ids
 * acked are appended to done[*ndone]. */
static enum mq_status
ack_batch(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost, uint64_t *done, size_t *ndone, uint64_t *kids,
    size_t *nkids)
{
	MYSQL_BIND in[3 * ACK_BATCH], out[3];
	uint64_t ids[ACK_BATCH], held[ACK_BATCH], id, affected;
	uint64_t parents[ACK_BATCH];
	int32_t parent = 0;
	size_t nparents = 0;
	char tok[MQ_TOKEN_LEN + 2];
	unsigned long tlen, toklen[ACK_BATCH];
	mq__bool tnull = 0;
	size_t np = mq__padded(n), nh = 0, i, k;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	for (i = 0; i < np; i++) {
		k = i < n ? i : n - 1;
		ids[i] = r[k].id;
		mq__bind_u64(&in[i], &ids[i]);
		mq__bind_u64(&in[np + 2 * i], &ids[i]);
		mq__bind_str(&in[np + 2 * i + 1], r[k].token, &toklen[i]);
	}
	if ((st = lock_statement(c, np)) == NULL)
		return c->err.status;
	rc = mq__execute(c, st, in, "cannot ack");
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	out[1].buffer_type = MYSQL_TYPE_STRING;
	out[1].buffer = tok;
	out[1].buffer_length = sizeof tok;
	out[1].length = &tlen;
	out[1].is_null = &tnull;
	mq__bind_i32(&out[2], &parent);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot ack");
	memset(lost, 1, n);
	while (rc == MQ_OK && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		/* the first receipt of this id with this token (the server
		 * matched the pair; receipts may repeat) */
		for (k = 0; f == 0 && !tnull && tlen == MQ_TOKEN_LEN && k < n;
		    k++)
			if (r[k].id == id && lost[k] &&
			    memcmp(r[k].token, tok, MQ_TOKEN_LEN) == 0) {
				lost[k] = 0;
				held[nh++] = id;
				if (parent)
					parents[nparents++] = id;
				break;
			}
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot ack");
	mq__release(c, st);
	if (rc != MQ_OK || nh == 0)
		return rc;
	/* the rows are locked and leased: the UPDATE finishes them all */
	rc = mq__exec_ids(c, sql_ack_ids, NULL, 0, held, nh, &affected);
	if (rc == MQ_OK && affected != nh)
		rc = mq__fail(c, MQ_EDB, "ack: %llu of %zu locked jobs "
		    "changed", (unsigned long long)affected, nh);
	if (rc == MQ_OK) {
		memcpy(done + *ndone, held, nh * sizeof *held);
		*ndone += nh;
		memcpy(kids + *nkids, parents, nparents * sizeof *parents);
		*nkids += nparents;
	}
	return rc;
}

/* Acks the one receipt r, as ack_batch does several; *one: it has one
 * dependent (or none). */
static enum mq_status
ack_one(struct mq_conn *c, const struct mq_receipt *r, unsigned char *lost,
    uint64_t *done, size_t *ndone, uint64_t *kids, size_t *nkids, int *one)
{
	/* without dependents, with one, with any: in that order, or the
	 * first two the other way round after an ack of a parent of one
	 * (a chain's links are acked one after another) */
	static const char *const tries[] = {
		sql_ack_childless, sql_ack_one_child, sql_ack
	};
	static const size_t order[2][3] = { { 0, 1, 2 }, { 1, 0, 2 } };
	const size_t *o = order[c->acked_one_child];
	MYSQL_BIND in[2];
	unsigned long tlen;
	uint64_t id = r->id;
	MYSQL_STMT *st;
	enum mq_status rc;
	size_t t;

	mq__bind_u64(&in[0], &id);
	mq__bind_str(&in[1], r->token, &tlen);
	for (t = 0; t < 3; t++) {
		if ((st = mq__prepare(c, tries[o[t]])) == NULL)
			return c->err.status;
		rc = mq__execute(c, st, in, "cannot ack");
		*lost = rc == MQ_OK && mysql_stmt_affected_rows(st) != 1;
		mq__release(c, st);
		if (rc != MQ_OK || !*lost)
			break;
	}
	if (rc == MQ_OK && !*lost) {
		done[(*ndone)++] = id;
		if (o[t] > 0)
			kids[(*nkids)++] = id;
		if (o[t] > 1)
			*one = 0;
		c->acked_one_child = o[t] == 1;
	}
	return rc;
}

/* Ids per count statement: the count rows of all the acks are taken at
 * the end, in key order (per statement), not batch by batch. */
#define COUNT_MAX 4096

enum mq_status
mq__ack_in_tx(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost)
{
	uint64_t two[2], *done = n > 1 ? malloc(2 * n * sizeof *done) : two;
	uint64_t *kids = done + n;
	enum mq_status rc = MQ_OK;
	size_t i, k, ndone = 0, nkids = 0;
	int one = 1;		/* every parent acked has one dependent */

	if (done == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	for (i = 0; i < n && rc == MQ_OK; i += k) {
		k = n - i < ACK_BATCH ? n - i : ACK_BATCH;
		if (k > 1)
			one = 0;
		rc = k > 1 ? ack_batch(c, r + i, k, lost + i, done, &ndone,
		    kids, &nkids) :
		    ack_one(c, r + i, lost + i, done, &ndone, kids, &nkids,
		    &one);
	}
	/* the dependents of the jobs done: with the counts of the last
	 * statement's (deps.c) */
	for (i = 0; i < ndone && rc == MQ_OK; i += k) {
		k = ndone - i < COUNT_MAX ? ndone - i : COUNT_MAX;
		rc = mq__acked(c, done + i, k, kids, i + k >= ndone ? nkids :
		    0, one);
	}
	if (done != two)
		free(done);
	return rc;
}

/* Galera: each receipt that looked lost, once more after this node has
 * caught up with the cluster (galera.c). */
enum mq_status
mq__ack_lost_again(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost)
{
	enum mq_status rc = MQ_OK, st;
	size_t i;

	/* the others are acked (committed): an error here is this
	 * receipt's, not acked, and the rest are still tried */
	for (i = 0; i < n; i++) {
		struct ack one = { r + i, 1, lost + i };

		if (!lost[i])
			continue;
		st = mq__in_tx_caught_up(c, ack_tx, &one, MQ_OK);
		if (st != MQ_OK) {
			lost[i] = 1;
			if (rc == MQ_OK)
				rc = st;
		}
	}
	return rc;
}

void
mq__wake_acked(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    const unsigned char *lost)
{
	uint64_t *ids;
	size_t i, k = 0;

	if (!c->has_limits || (ids = malloc(n * sizeof *ids)) == NULL)
		return;
	for (i = 0; i < n; i++)
		if (!lost[i])
			ids[k++] = r[i].id;
	mq__wake_freed(c, ids, k);
	free(ids);
}

enum mq_status
mq_ack(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost)
{
	struct ack a = { r, n, lost };
	enum mq_status rc;
	size_t i;

	memset(lost, 0, n);
	/* a transaction even for one receipt: the job and its count */
	rc = mq__in_tx(c, ack_tx, &a);
	if (rc != MQ_OK)
		return rc;
	for (i = 0; i < n && c->galera; i++)
		if (lost[i]) {
			rc = mq__ack_lost_again(c, r, n, lost);
			break;
		}
	/* the first transaction committed whatever the second did */
	mq__wake_acked(c, r, n, lost);
	mq__wake_after_commit(c);
	if (rc != MQ_OK)
		return rc;
	for (i = 0; i < n; i++)
		if (lost[i])
			return mq__fail(c, MQ_ELEASE, "lease lost");
	return MQ_OK;
}
