/*
 * pop.c: claiming jobs, two ways. Where the server has SKIP LOCKED, one
 * short transaction selects the head of the queue, skipping rows other
 * consumers hold, and leases them by primary key. Elsewhere (seed 002)
 * one UPDATE ... ORDER BY ... LIMIT writes a fresh token on the head of
 * the queue, and a SELECT by that token reads what it got.
 *
 * A preference list ("high,default,low", seed 003) is claimed queue by
 * queue, in its order, each with its own index range read: a queue with
 * nothing due costs a probe of the due index.
 *
 * The claim index orders by priority before due time, so the entries of
 * jobs scheduled for later sit among the due ones, and a read that finds
 * nothing due would walk (and lock) them all. Each claim therefore first
 * asks the due index (queue, state, available_at) whether anything is due:
 * a constant subquery, evaluated once, which ends the claim at one probe
 * when nothing is (a statement of its own before an UPDATE claim). A
 * claim that finds fewer due jobs than it has room for would walk every
 * row due later after the last due one: the next claim of that queue
 * asks the due index which priorities have due jobs, and reads only
 * those (mq__sql_due_priorities). Scheduled jobs of a more urgent
 * priority than every due one are still walked over by a claim that
 * fills its room; see mq-queue(7).
 *
 * On a Galera node a claim takes from the node's share of the jobs first
 * (claim.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "internal.h"
#include "sql_terms.h"

/* The index's tail is exactly this ORDER BY: no filesort, and the
 * locking read touches only the rows it returns or skips. The guard
 * (MQ_SQL_ANY_DUE) ends the claim at one probe when nothing is due. */
const char mq__sql_claim_select[] =
    "SELECT id, queue, priority, attempts, payload"
    " FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?")
    " AND " MQ_SQL_ANY_DUE("{{TABLE}}", "?")
    " ORDER BY priority, available_at, id LIMIT ?"
    " FOR UPDATE SKIP LOCKED";

/* After a short claim of a queue on this connection (it had room for
 * more jobs than were due), the next one asks first which priorities
 * have due jobs. The claim index orders by priority, then due time, so
 * a read of it for more jobs than are due walks, after the due rows of
 * the queue's last priority, every row due later: jobs scheduled for
 * later, dependents waiting for their parents (with 100,000 of them, 58
 * ms a claim; a consumer keeping up with its queue makes short claims
 * only). The due index (queue, state, available_at) ends at the first
 * row due later: a read of it without locks, as far as one row more
 * than the claim wants (binds the queue and that), gives the due jobs'
 * priorities when it returns no more than the claim wants (with the
 * claim's guard: none for a queue paused or limited). Then the
 * claim reads the claim index with those priorities listed: one range
 * a priority, from its first due row to now, in the claim's order, and
 * locks what it reads there as every other claim does (a locking read
 * of the due index kept its lock on the due entries of rows it skipped,
 * held by claims of the claim index, whose leases then waited for it,
 * and deadlocked). More rows than the claim wants: the claim index is
 * read as usual. (A job of another priority that becomes due between
 * the two reads waits for the next claim.) */
const char mq__sql_due_priorities[] =
    "SELECT priority FROM `{{TABLE}}` FORCE INDEX (due)"
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?") " LIMIT ?";
/* The claim of those priorities (binds the queue twice, the priorities,
 * the limit), for both ways of claiming (the UPDATE binds the lease
 * first). */
#define BY_PRIORITIES \
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?") " AND priority IN ("
const char mq__sql_claim_priorities[] =
    "SELECT id, queue, priority, attempts, payload"
    " FROM `{{TABLE}}` FORCE INDEX (claim)" BY_PRIORITIES;
const char mq__sql_claim_priorities_tail[] =
    ") ORDER BY priority, available_at, id LIMIT ? FOR UPDATE SKIP LOCKED";
const char mq__sql_claim_update_priorities[] =
    "UPDATE `{{TABLE}}` FORCE INDEX (claim)" CLAIM_SET BY_PRIORITIES;
const char mq__sql_claim_update_priorities_tail[] =
    ") ORDER BY priority, available_at, id LIMIT ?";
/* Priorities listed at most: more, the claim index is read as usual. */
#define PRIORITIES_MAX 64

static const char sql_lease_ids[] =
    "UPDATE `{{TABLE}}`" CLAIM_SET " WHERE id IN (";

static const char sql_claim_update[] =
    "UPDATE `{{TABLE}}` FORCE INDEX (claim)" CLAIM_SET
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?")
    " ORDER BY priority, available_at, id LIMIT ?";

static const char sql_paused[] =
    "SELECT COUNT(*) FROM `{{TABLE}}_queues` WHERE " MQ_SQL_PAUSED("?");

static const char sql_select_token[] =
    "SELECT id, queue, priority, attempts, payload"
    " FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND state = 'leased' AND lease_token = ?"
    " ORDER BY priority, available_at, id";

void
mq_jobs_free(struct mq_job *jobs, size_t n)
{
	size_t i;

	if (jobs == NULL)
		return;
	for (i = 0; i < n; i++)
		free(jobs[i].payload);
	free(jobs);
}

/* Remembers that the jobs of queue leased with token may be leased to
 * nobody (mq_take_orphans); mq_ack_pop made room for them. */
static void
orphaned_token(struct mq_conn *c, const char *queue, const char *token,
    int64_t lease_us)
{
	struct mq_orphan *o;
	size_t i;

	for (i = 0; i < c->norphans; i++)
		if (strcmp(c->orphans[i].queue, queue) == 0 &&
		    strcmp(c->orphans[i].token, token) == 0)
			return;		/* remembered already */
	if (c->norphans == MQ_ORPHANS_MAX)
		return;		/* not reached: see mq_ack_pop */
	o = &c->orphans[c->norphans++];
	memset(o, 0, sizeof *o);
	snprintf(o->queue, sizeof o->queue, "%s", queue);
	snprintf(o->token, sizeof o->token, "%s", token);
	/* the session that may still be running the claim: ended before
	 * the give-back (lease.c) */
	o->thread = mysql_thread_id(c->db);
	memcpy(o->server, c->server, sizeof o->server);
	o->connected_us = c->connected_us;
	o->lease_end_us = mq_now_us() + lease_us;
}

static void
orphaned(struct mq_conn *c, const struct claim *cl, const char *queue)
{
	orphaned_token(c, queue, cl->token, cl->o->lease_us);
}

/* A write that commits by itself, after another of the same claim,
 * leases with a token of its own: an orphan is given back by queue and
 * token (lease.c), and must match none of the jobs an earlier write of
 * the claim leased and handed out (with one token for the claim, a lost
 * COMMIT of the second gave back the first's jobs, printed or running:
 * run twice). */
static enum mq_status
own_token(struct mq_conn *c, struct claim *cl)
{
	return mq__token(c, cl->token);
}

/* Drops the jobs of cl->jobs from first on (not handed out). */
static void
drop_jobs(struct claim *cl, size_t first)
{
	while (cl->n > first)
		free(cl->jobs[--cl->n].payload);
}

/* Whether the last claim of queue on this connection found it limited:
 * then the plain claim, which passes over a limited queue's jobs, would
 * find none (limits are seldom set and cleared, claims are many). */
static int
seen_limited(struct mq_conn *c, const char *queue)
{
	return mq__seen_in(c->limited_seen, queue);
}

/* What a limited claim found: queue limited or not. */
static void
note_limited(struct mq_conn *c, const char *queue, int limited)
{
	mq__note_in(c->limited_seen, queue, limited);
}

/* Leases the jobs of cl->jobs from *leased on (locked by the claim's
 * transaction), and moves *leased to the end. */
static enum mq_status
lease_locked(struct mq_conn *c, struct claim *cl, size_t *leased)
{
	MYSQL_BIND in[3];
	unsigned long len[2];
	uint64_t *ids, affected;
	int64_t lease;
	size_t i, n = cl->n - *leased;
	enum mq_status rc;

	if (n == 0)
		return MQ_OK;
	if ((ids = malloc(n * sizeof *ids)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		ids[i] = cl->jobs[*leased + i].id;
		if (cl->jobs[*leased + i].attempt < UINT32_MAX)
			cl->jobs[*leased + i].attempt++;
	}
	mq__claim_bind_lease(c, cl, in, len, &lease);
	rc = mq__exec_ids(c, sql_lease_ids, in, 3, ids, n, &affected);
	free(ids);
	if (rc == MQ_OK && affected != n)
		rc = mq__fail(c, MQ_EDB, "claim leased %llu of %zu rows",
		    (unsigned long long)affected, n);
	*leased = cl->n;
	return rc;
}

/* The priorities of queue's claimable due jobs, sorted, in p (at most
 * PRIORITIES_MAX), if they are no more than limit (a short claim's):
 * *np of them (0: the claim index is read as usual); MQ_EMPTY when none
 * is (nothing due, or the queue paused or limited). In a transaction
 * (in_tx) an error is the transaction's, not retried here. */
static enum mq_status
due_priorities(struct mq_conn *c, const char *queue, uint32_t limit,
    int in_tx, int32_t *p, size_t *np)
{
	MYSQL_BIND in[3], out[1];
	unsigned long qlen;
	uint32_t rows = limit < UINT32_MAX ? limit + 1 : limit;
	int32_t prio = 0;
	size_t due = 0, i, k;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r = 0, over = 0;

	*np = 0;
	if ((st = mq__prepare(c, mq__sql_due_priorities)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_str(&in[1], queue, &qlen);
	mq__bind_u32(&in[2], &rows);
	memset(out, 0, sizeof out);
	mq__bind_i32(&out[0], &prio);
	rc = in_tx ? mq__execute(c, st, in, "cannot claim") :
	    mq__execute_retry(c, st, in, "cannot claim");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot claim");
	while (rc == MQ_OK && (r = mysql_stmt_fetch(st)) == 0) {
		due++;
		for (i = 0; i < *np && p[i] < prio; i++)
			;
		if (i < *np && p[i] == prio)
			continue;
		if (*np == PRIORITIES_MAX) {
			over = 1;	/* the claim index, below */
			continue;
		}
		for (k = *np; k > i; k--)
			p[k] = p[k - 1];
		p[i] = prio;
		(*np)++;
	}
	if (rc == MQ_OK && r != MYSQL_NO_DATA)
		rc = mq__dberr(c, st, "cannot claim");
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	if (due > limit || over)
		*np = 0;
	return due == 0 ? MQ_EMPTY : MQ_OK;
}

/* The statement head ?,?... tail for n priorities (a read: prepared
 * with its execution, not kept; stmt.c). */
static MYSQL_STMT *
priorities_statement(struct mq_conn *c, const char *head, const char *tail,
    size_t n)
{
	char *sql = mq__sql_list(head, "?", n, tail);
	MYSQL_STMT *st;

	if (sql == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	st = mq__prepare_once(c, sql);
	free(sql);
	return st;
}

/* The claim of up to *limit due jobs of queue of the priorities p[0..np)
 * by the claim index: the SELECT (update 0: its rows appended to
 * cl->jobs, locked), or the UPDATE (*got leased). */
static enum mq_status
claim_priorities(struct mq_conn *c, struct claim *cl, const char *queue,
    int32_t *p, size_t np, uint32_t *limit, int update, uint64_t *got)
{
	MYSQL_BIND in[6 + PRIORITIES_MAX];
	unsigned long qlen, len[2];
	int64_t lease;
	size_t i, k = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	st = update ? priorities_statement(c, mq__sql_claim_update_priorities,
	    mq__sql_claim_update_priorities_tail, np) :
	    priorities_statement(c, mq__sql_claim_priorities,
	    mq__sql_claim_priorities_tail, np);
	if (st == NULL)
		return c->err.status;
	if (update) {
		mq__claim_bind_lease(c, cl, in, len, &lease);
		k = 3;
	}
	mq__bind_str(&in[k++], queue, &qlen);
	mq__bind_str(&in[k++], queue, &qlen);
	for (i = 0; i < np; i++)
		mq__bind_i32(&in[k++], &p[i]);
	mq__bind_u32(&in[k], limit);
	rc = update ? mq__execute_retry(c, st, in, "cannot claim") :
	    mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK && update)
		*got = mysql_stmt_affected_rows(st);
	else if (rc == MQ_OK)
		rc = mq__claim_fetch(c, st, cl);
	mq__release(c, st);
	return rc;
}

/* The plain claim of up to limit jobs of queue (not limited, not paused:
 * its guard), appended to cl->jobs, locked. */
static enum mq_status
claim_plain(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t limit)
{
	MYSQL_BIND in[4];
	unsigned long qlen;
	int32_t p[PRIORITIES_MAX];
	size_t first = cl->n, np = 0;
	MYSQL_STMT *sel;
	enum mq_status rc;

	if (mq__seen_in(c->short_seen, queue)) {
		rc = due_priorities(c, queue, limit, 1, p, &np);
		if (rc == MQ_EMPTY)
			return MQ_OK;
		if (rc == MQ_OK && np > 0)
			rc = claim_priorities(c, cl, queue, p, np, &limit, 0,
			    NULL);
		if (rc != MQ_OK || np > 0)
			return rc;
	}
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_str(&in[1], queue, &qlen);
	mq__bind_str(&in[2], queue, &qlen);
	mq__bind_u32(&in[3], &limit);
	/* a read: prepared for each queue, its text sent with its
	 * execution (stmt.c, is_read: a second execution of one handle
	 * would be prepared again, a round trip more) */
	if ((sel = mq__prepare(c, mq__sql_claim_select)) == NULL)
		return c->err.status;
	rc = mq__execute(c, sel, in, "cannot claim");
	if (rc == MQ_OK)
		rc = mq__claim_fetch(c, sel, cl);
	mq__release(c, sel);
	if (rc == MQ_OK)
		mq__note_in(c->short_seen, queue, cl->n - first < limit);
	return rc;
}

static enum mq_status
claim_skip_locked_tx(struct mq_conn *c, void *ctx)
{
	struct claim *cl = ctx;
	uint32_t limit;
	enum mq_status rc = MQ_OK;
	size_t q, leased = 0, got;
	int plain, tried;

	/* a retried transaction starts from nothing */
	mq_jobs_free(cl->jobs, cl->n);
	cl->jobs = NULL;
	cl->n = 0;
	cl->gated = 0;
	memset(cl->deferred, 0, sizeof cl->deferred);
	memset(cl->limited, 0, sizeof cl->limited);
	for (q = 0; q < MQ_QUEUES_MAX; q++)
		cl->paused[q] = -1;
	if (cl->nacks && (rc = mq__ack_in_tx(c, cl->acks, cl->nacks,
	    cl->lost)) != MQ_OK)
		return rc;
	for (q = 0; q < cl->nqueues && cl->n < cl->o->count && rc == MQ_OK;
	    q++) {
		limit = cl->o->count - (uint32_t)cl->n;
		if (cl->share) {
			/* leased at once: the whole queue's read below, in
			 * this transaction, would find them ready again */
			if ((rc = mq__claim_share_locked(c, cl, cl->queues[q],
			    limit)) != MQ_OK ||
			    (rc = lease_locked(c, cl, &leased)) != MQ_OK)
				break;
			if ((limit = cl->o->count - (uint32_t)cl->n) == 0)
				break;
		}
		/* a queue limited at its last claim: the limited claim
		 * first; the plain one if it is no longer. (Another limited
		 * queue's gates taken: the plain claim, then deferred as
		 * below, in case its limits are gone.) */
		plain = cl->gated || !seen_limited(c, cl->queues[q]);
		tried = !plain;
		if (tried) {
			rc = mq__claim_limited(c, cl, cl->queues[q], limit, 1,
			    &cl->limited[q], &cl->paused[q]);
			cl->gated = cl->limited[q];
			note_limited(c, cl->queues[q], cl->limited[q]);
			plain = rc == MQ_OK && !cl->limited[q];
		}
		got = cl->n;
		if (plain)
			rc = claim_plain(c, cl, cl->queues[q], limit);
		/* short: the queue may be limited (the plain claim passes
		 * over such a queue's jobs), or paused, or empty. One
		 * limited queue's gates a transaction: two claims that wrote
		 * the gates of two queues in opposite orders (preference
		 * lists a,b and b,a) deadlocked; the next is claimed after
		 * the commit, in a transaction of its own */
		if (rc != MQ_OK || cl->n >= cl->o->count || tried)
			continue;
		/* not if the plain claim took a job: its guard (the queue
		 * neither paused nor limited, MQ_SQL_CLAIMABLE) held, and
		 * the limited claim would read the settings to find that
		 * (a round trip a claim, where a consumer has more room
		 * than due jobs: each link of a chain) */
		if (cl->n > got) {
			cl->paused[q] = 0;
			continue;
		}
		if (cl->gated) {
			cl->deferred[q] = 1;
		} else {
			rc = mq__claim_limited(c, cl, cl->queues[q],
			    cl->o->count - (uint32_t)cl->n, 1, &cl->limited[q],
			    &cl->paused[q]);
			cl->gated = cl->limited[q];
			note_limited(c, cl->queues[q], cl->limited[q]);
		}
	}
	if (rc != MQ_OK)
		return rc;
	if (cl->n == 0)
		return MQ_EMPTY;
	/* a waiter's rows (Galera) go with the claim's commit */
	if ((rc = lease_locked(c, cl, &leased)) == MQ_OK)
		rc = mq__leave_in_tx(c, &cl->left);
	return rc;
}

/* Reads the jobs of queue leased with cl->token (the claim committed:
 * they are ours until the lease ends). */
static enum mq_status
read_claimed(struct mq_conn *c, struct claim *cl, const char *queue)
{
	MYSQL_BIND in[2];
	unsigned long qlen, tlen;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_select_token)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_str(&in[1], cl->token, &tlen);
	/* a read, and the claim is committed: retried if a late wakeup's
	 * KILL QUERY (or a deadlock victim's rollback) hits it */
	rc = mq__execute_retry(c, st, in, "cannot read claimed jobs");
	if (rc == MQ_OK)
		rc = mq__claim_fetch(c, st, cl);
	mq__release(c, st);
	return rc;
}

/* The claim of a limited queue by UPDATEs (the server may have no SKIP
 * LOCKED): in a transaction of its own, which locks its jobs and leases
 * them (limits.c). */
struct limited_claim {
	struct claim *cl;
	const char *queue;
	uint32_t want;
	size_t first;		/* the claim's jobs before this queue's */
	int limited;
	int skip_locked;	/* the server has SKIP LOCKED */
	int paused;
};

static enum mq_status
limited_tx(struct mq_conn *c, void *ctx)
{
	struct limited_claim *lc = ctx;
	size_t leased = lc->first;
	enum mq_status rc;

	drop_jobs(lc->cl, lc->first);	/* a retried transaction */
	rc = mq__claim_limited(c, lc->cl, lc->queue, lc->want,
	    lc->skip_locked, &lc->limited, &lc->paused);
	return rc == MQ_OK ? lease_locked(c, lc->cl, &leased) : rc;
}

/* The limited queues a SKIP LOCKED claim deferred (one limited queue's
 * gates a transaction), each in a transaction of its own, in the list's
 * order, while the claim wants more; rc is the first transaction's
 * outcome. Jobs in hand stay the answer whatever fails later. */
static enum mq_status
claim_deferred(struct mq_conn *c, struct claim *cl, enum mq_status rc)
{
	enum mq_status r2;
	size_t q;

	for (q = 0; q < cl->nqueues && cl->n < cl->o->count; q++) {
		struct limited_claim lc = { cl, cl->queues[q],
		    cl->o->count - (uint32_t)cl->n, cl->n, 0, 1, -1 };

		if (!cl->deferred[q])
			continue;
		if ((r2 = own_token(c, cl)) != MQ_OK)
			return cl->n > 0 ? MQ_OK : r2;
		c->one_try = cl->n > 0;
		r2 = mq__in_tx(c, limited_tx, &lc);
		c->one_try = 0;
		cl->limited[q] = lc.limited;
		cl->paused[q] = lc.paused;
		if (r2 == MQ_OK)
			note_limited(c, cl->queues[q], lc.limited);
		if (r2 != MQ_OK)
			drop_jobs(cl, lc.first);
		if (r2 == MQ_EUNKNOWN)
			orphaned(c, cl, cl->queues[q]);
		if (r2 != MQ_OK)
			return cl->n > 0 ? MQ_OK : r2;
		if (cl->n > 0)
			rc = MQ_OK;
	}
	return rc;
}


/* MQ_OK if queue has a due job (paused or not), else MQ_EMPTY. */
static enum mq_status
any_due(struct mq_conn *c, const char *queue)
{
	MYSQL_BIND in[1], out[1];
	unsigned long qlen;
	uint64_t due = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, mq__sql_any_due)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &due);
	rc = mq__execute_retry(c, st, in, "cannot claim");
	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0))
		rc = mq__dberr(c, st, "cannot claim");
	mq__release(c, st);
	return rc == MQ_OK && !due ? MQ_EMPTY : rc;
}

/* The UPDATE claim of up to limit jobs of queue's head (of the
 * priorities p[0..np) when np > 0: mq__sql_due_priorities); *got
 * leased. */
static enum mq_status
update_head(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t limit, int32_t *p, size_t np, uint64_t *got)
{
	MYSQL_BIND in[6];
	unsigned long len[2], qlen;
	int64_t lease;
	MYSQL_STMT *st;
	enum mq_status rc;

	*got = 0;
	if (np > 0)
		return claim_priorities(c, cl, queue, p, np, &limit, 1, got);
	if ((st = mq__prepare(c, sql_claim_update)) == NULL)
		return c->err.status;
	mq__claim_bind_lease(c, cl, in, len, &lease);
	mq__bind_str(&in[3], queue, &qlen);
	mq__bind_str(&in[4], queue, &qlen);
	mq__bind_u32(&in[5], &limit);
	rc = mq__execute_retry(c, st, in, "cannot claim");
	*got = rc == MQ_OK ? mysql_stmt_affected_rows(st) : 0;
	mq__release(c, st);
	if (rc == MQ_OK)
		mq__note_in(c->short_seen, queue, *got < limit);
	return rc;
}

/* Each queue of the list: its node's share (Galera), then its head,
 * each an UPDATE that commits by itself, then a read of what they
 * leased. Jobs leased and read are the caller's even when a later
 * statement fails (another queue's lock wait, a lost connection): left
 * out of the answer, they would wait out their lease, held by nobody.
 * Once some are in hand, a later statement is tried once, not retried
 * for minutes while their lease runs. A queue whose UPDATE got no
 * answer (outcome unknown), or whose jobs leased could not all be read,
 * is an orphan (mq_take_orphans): its jobs read so far are left out of
 * the answer too, so that the caller, giving back every job of that
 * queue with the claim's token, gives back none it holds. */
static enum mq_status
claim_update(struct mq_conn *c, struct claim *cl)
{
	uint64_t got = 0, k, mine;
	uint32_t limit;
	int32_t p[PRIORITIES_MAX];
	enum mq_status rc = MQ_OK, read;
	struct mq_error before = c->err;
	size_t q, first, np;
	int limited_first;

	for (q = 0; q < cl->nqueues && got < cl->o->count && rc == MQ_OK;
	    q++) {
		c->one_try = cl->n > 0;
		limit = cl->o->count - (uint32_t)got;
		/* after a short claim of the queue, the priorities of its
		 * claimable due jobs; whether any is due, paused or not,
		 * where they are none (or it was found limited: the limited
		 * claim first, below) */
		np = 0;
		limited_first = seen_limited(c, cl->queues[q]);
		rc = MQ_EMPTY;
		if (!limited_first && mq__seen_in(c->short_seen, cl->queues[q]))
			rc = due_priorities(c, cl->queues[q], limit, 0, p, &np);
		if (rc == MQ_EMPTY)
			rc = any_due(c, cl->queues[q]);
		if (rc == MQ_EMPTY) {
			rc = MQ_OK;
			continue;
		}
		if (rc != MQ_OK || (q > 0 && (rc = own_token(c, cl)) != MQ_OK))
			break;
		k = mine = 0;
		first = cl->n;
		read = MQ_OK;
		if (cl->share)	/* sets one_try once it leased some */
			rc = mq__claim_share_update(c, cl, cl->queues[q],
			    limit, &mine);
		/* a queue limited at its last claim: the limited claim
		 * first (the UPDATE, which passes over a limited queue's
		 * jobs, still reads them: 280 ms a claim past 100,000 held
		 * back), the UPDATE below if it is no longer limited (the
		 * priorities listed still hold all that is due when the
		 * node's share took some) */
		if (rc == MQ_OK && (limit -= (uint32_t)mine) > 0 &&
		    !limited_first)
			rc = update_head(c, cl, cl->queues[q], limit, p, np,
			    &k);
		if (k + mine > 0) {	/* committed: read, whatever failed */
			got += k + mine;
			read = read_claimed(c, cl, cl->queues[q]);
			if (rc == MQ_OK)
				rc = read;
		}
		if (rc == MQ_EUNKNOWN || read != MQ_OK) {
			drop_jobs(cl, first);
			orphaned(c, cl, cl->queues[q]);
		} else if (rc == MQ_OK && k < limit) {
			/* short: the queue may be limited (the UPDATE passes
			 * over such a queue's jobs) */
			struct limited_claim lc = { cl, cl->queues[q],
			    limit - (uint32_t)k, cl->n, 0, 0, -1 };
			size_t again;

			/* jobs in hand (the head's): tried once, not retried
			 * for minutes while their lease runs */
			c->one_try = cl->n > 0;
			if ((rc = own_token(c, cl)) == MQ_OK)
				rc = mq__in_tx(c, limited_tx, &lc);
			cl->limited[q] = lc.limited;
			cl->paused[q] = lc.paused;
			if (rc == MQ_OK) {
				got += cl->n - lc.first;
				note_limited(c, cl->queues[q], lc.limited);
			} else {
				drop_jobs(cl, lc.first);
			}
			if (rc == MQ_EUNKNOWN)
				orphaned(c, cl, cl->queues[q]);
			if (rc == MQ_OK && limited_first && !lc.limited) {
				k = 0;
				again = cl->n;
				c->one_try = cl->n > 0;
				if ((rc = own_token(c, cl)) == MQ_OK)
					rc = update_head(c, cl, cl->queues[q],
					    limit, p, 0, &k);
				read = k > 0 ? read_claimed(c, cl, cl->queues[q]) :
				    MQ_OK;
				got += k;
				if (rc == MQ_OK)
					rc = read;
				if (rc == MQ_EUNKNOWN || read != MQ_OK) {
					drop_jobs(cl, again);
					orphaned(c, cl, cl->queues[q]);
				}
			}
		}
	}
	c->one_try = 0;
	if (cl->n > 0) {
		c->err = before;	/* the jobs are the answer */
		return MQ_OK;
	}
	if (rc == MQ_OK && got == 0)
		rc = MQ_EMPTY;
	return rc;
}

/* MQ_PAUSED if every queue of the claim is paused, else MQ_EMPTY (asked
 * only when a claim found nothing: the claim itself skips paused
 * queues). */
static enum mq_status
why_empty(struct mq_conn *c, const struct claim *cl)
{
	MYSQL_BIND in[1], out[1];
	unsigned long qlen;
	uint64_t paused = 1;
	MYSQL_STMT *st;
	enum mq_status rc = MQ_OK;
	size_t q;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &paused);
	for (q = 0; q < cl->nqueues && paused && rc == MQ_OK; q++) {
		if (cl->paused[q] >= 0) {	/* read by the claim */
			paused = (uint64_t)cl->paused[q];
			continue;
		}
		/* a read: prepared for each queue (as the claim's) */
		if ((st = mq__prepare(c, sql_paused)) == NULL)
			return c->err.status;
		mq__bind_str(&in[0], cl->queues[q], &qlen);
		rc = mq__execute(c, st, in, "cannot read queue settings");
		if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
		    mysql_stmt_fetch(st) != 0))
			rc = mq__dberr(c, st, "cannot read queue settings");
		mq__release(c, st);
	}
	if (rc != MQ_OK)
		return rc;
	return paused ? MQ_PAUSED : MQ_EMPTY;
}

/* The jobs of a claim that cannot be handed out, given back at once
 * rather than at their lease's end (what fails is the claim's
 * failure's to say, and the lease's end gives them back then). */
static void
give_back(struct mq_conn *c, const struct mq_job *jobs, size_t n,
    int64_t lease_us)
{
	struct mq_error saved = c->err;
	enum mq_status st;
	size_t i;

	/* one that cannot be (the connection lost too): an orphan, given
	 * back by the caller on another (mq_take_orphans) */
	for (i = 0; i < n; i++)
		if ((st = mq_release(c, &jobs[i].receipt)) != MQ_OK &&
		    st != MQ_ELEASE)
			orphaned_token(c, jobs[i].queue,
			    jobs[i].receipt.token, lease_us);
	c->err = saved;
}

/* After a claim another node did not show: the acks sent with it that
 * committed here, acked again on that node (c->confirm), where a lost
 * write set left their jobs leased with their tokens; elsewhere the
 * token refuses them, as it does a stale ack (nothing changes). */
static void
ack_again_there(struct mq_conn *c, const struct mq_receipt *r, size_t nr,
    const unsigned char *lost)
{
	unsigned char gone;
	size_t i;

	for (i = 0; i < nr; i++)
		if (!lost || !lost[i])
			(void)mq_ack(c->confirm, &r[i], 1, &gone);
}

/* Acks alone, in their own transaction (before an UPDATE claim, which
 * commits by itself). */
static enum mq_status
acks_tx(struct mq_conn *c, void *ctx)
{
	struct claim *cl = ctx;

	return mq__ack_in_tx(c, cl->acks, cl->nacks, cl->lost);
}

enum mq_status
mq_ack_pop(struct mq_conn *c, const struct mq_receipt *r, size_t nr,
    unsigned char *lost, int *acked, const struct mq_pop_opts *o,
    struct mq_job **jobs, size_t *n)
{
	struct claim cl;
	enum mq_claim how = o->claim;
	enum mq_status rc;
	size_t q;
	int acks_in = 0;

	*jobs = NULL;
	*n = 0;
	if (acked)
		*acked = 0;
	if (nr)
		memset(lost, 0, nr);
	memset(&cl, 0, sizeof cl);
	for (q = 0; q < MQ_QUEUES_MAX; q++)
		cl.paused[q] = -1;
	cl.nqueues = mq__queue_list(o->queue, cl.queues);
	if (cl.nqueues == 0 || o->count == 0 || o->lease_us <= 0)
		return mq__fail(c, MQ_EINVAL, "invalid claim options");
	/* room for this claim's orphans: none is overwritten */
	if (c->norphans > MQ_ORPHANS_MAX - MQ_QUEUES_MAX)
		return mq__fail(c, MQ_EINVAL, "claims whose outcome was "
		    "unknown are not given back (mq_take_orphans)");
	c->limit_retry_us = 0;
	c->limit_held = 0;
	c->limit_lost = 0;
	c->unconfirmed[0] = '\0';
	cl.o = o;
	cl.acks = r;
	cl.nacks = nr;
	cl.lost = lost;
	if ((rc = mq__token(c, cl.token)) != MQ_OK ||
	    (rc = mq__read_committed(c)) != MQ_OK)
		return rc;
	if (how == MQ_CLAIM_AUTO)
		how = mq__server_claim(c);
	if (how == MQ_CLAIM_UPDATE) {
		if (nr && (rc = mq__in_tx(c, acks_tx, &cl)) != MQ_OK)
			return rc;
		if (acked)
			*acked = 1;
		acks_in = nr > 0;
		cl.nacks = 0;
	}
	/* Galera: each queue's share of this node first, then the rest of
	 * the queue (claim.c) */
	cl.share = c->shares > 1;
	if (how == MQ_CLAIM_SKIP_LOCKED) {
		/* an empty claim commits too: the acks are kept */
		rc = mq__in_tx(c, claim_skip_locked_tx, &cl);
		if (acked && (rc == MQ_OK || rc == MQ_EMPTY))
			*acked = 1;
		acks_in = nr > 0 && (rc == MQ_OK || rc == MQ_EMPTY);
		/* its COMMIT got no answer: each queue's jobs it may have
		 * leased, all with its token */
		for (q = 0; rc == MQ_EUNKNOWN && q < cl.nqueues; q++)
			orphaned(c, &cl, cl.queues[q]);
		if (rc == MQ_OK && cl.left)
			c->wait_joined = 0;
		if (rc == MQ_OK || rc == MQ_EMPTY)
			rc = claim_deferred(c, &cl, rc);
	} else {
		rc = claim_update(c, &cl);
	}
	/* Galera: an ack carried in the claim that looked lost, once more
	 * after this node caught up (ack.c): the node may not have applied
	 * the job's claim yet (mq work's connection moved to another node) */
	if (acks_in && c->galera)
		(void)mq__ack_lost_again(c, r, nr, lost);
	/* the waiters of what the acks ended (committed: a failure of the
	 * claim after them changes nothing), less what its jobs took */
	if (acks_in)
		mq__wake_after_claim(c, r, nr, lost, rc == MQ_OK ? cl.jobs :
		    NULL, rc == MQ_OK ? cl.n : 0);
	/* Galera: handed out once another node shows the claim (confirm.c);
	 * one it does not show may have taken the acks sent before it or
	 * with it along (one node's lost write sets): made again there */
	if (rc == MQ_OK) {
		rc = mq__confirm_claim(c, cl.jobs, &cl.n);
		if (rc != MQ_OK && rc != MQ_EUNKNOWN)
			give_back(c, cl.jobs, cl.n, o->lease_us);
		if (c->unconfirmed[0] && nr && c->confirm)
			ack_again_there(c, r, nr, lost);
	}
	if (rc != MQ_OK) {
		mq_jobs_free(cl.jobs, cl.n);
		return rc == MQ_EMPTY ? why_empty(c, &cl) : rc;
	}
	*jobs = cl.jobs;
	*n = cl.n;
	return MQ_OK;
}

int64_t
mq_claim_retry_us(const struct mq_conn *c)
{
	return c->limit_retry_us;
}

int
mq_claim_held(const struct mq_conn *c)
{
	return c->limit_held;
}

const char *
mq_claim_unconfirmed(const struct mq_conn *c)
{
	return c->unconfirmed[0] ? c->unconfirmed : NULL;
}

enum mq_status
mq_pop(struct mq_conn *c, const struct mq_pop_opts *o, struct mq_job **jobs,
    size_t *n)
{
	return mq_ack_pop(c, NULL, 0, NULL, NULL, o, jobs, n);
}
