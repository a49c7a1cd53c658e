/*
 * lease.c: the writes a consumer makes while it holds a lease: fail
 * (give the job back, or bury it) and extend (heartbeat). Each is fenced
 * by the lease token: the row is locked only if it is still this
 * delivery, so a consumer whose lease was lost changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "parse.h"
#include "sql_terms.h"

static const char sql_lock_lease[] =
    "SELECT attempts, max_attempts FROM `{{TABLE}}`"
    " WHERE " MQ_SQL_HELD " FOR UPDATE";

/* The heartbeat's: NOWAIT where the server has it (the servers that
 * have SKIP LOCKED), so that a row another session holds costs that job
 * a beat, not a lock wait that would hold up the other jobs' beats. */
static const char sql_lock_lease_nowait[] =
    "SELECT attempts, max_attempts FROM `{{TABLE}}`"
    " WHERE " MQ_SQL_HELD " FOR UPDATE NOWAIT";

/* MySQL's error for a NOWAIT read that met a lock (MariaDB says 1205) */
#define ER_LOCK_NOWAIT_MYSQL 3572

/* retry and bury: the row is locked by lock_lease, still this delivery */
static const char sql_retry[] =
    "UPDATE `{{TABLE}}` SET " MQ_SQL_SET_READY(MQ_SQL_NOW_PLUS_US) ","
    " last_error = COALESCE(?, last_error)"
    " WHERE id = ?";

static const char sql_bury[] =
    "UPDATE `{{TABLE}}` SET " MQ_SQL_SET_DEAD("COALESCE(?, last_error)")
    " WHERE id = ?";

/* the delivery was cut short by the worker, not failed by the job: it
 * does not count as an attempt */
static const char sql_release[] =
    "UPDATE `{{TABLE}}` SET " MQ_SQL_SET_READY(MQ_SQL_NOW) ","
    " attempts = IF(attempts > 0, attempts - 1, 0)"
    " WHERE " MQ_SQL_HELD;

/* A lease that expired is not extended in a limited queue: its slot
 * may be another job's by now (limits.c counts live leases), and the
 * two would run at once. Elsewhere it is, as long as nobody claimed the
 * job again (the lock above). */
static const char sql_extend[] =
    "UPDATE `{{TABLE}}` SET leased_until = " MQ_SQL_NOW_PLUS_US
    " WHERE id = ? AND (leased_until >= " MQ_SQL_NOW " OR NOT EXISTS"
    " (SELECT 1 FROM `{{TABLE}}_queues` AS l"
    "  WHERE l.queue = `{{TABLE}}`.queue AND " MQ_SQL_LIMITED "))";

/* Bytes of error text kept: enough for a stack trace's head, and far
 * below what a BLOB holds, so the write cannot fail on length. */
#define ERROR_MAX 4096

int64_t
mq__backoff_us(unsigned attempts, double u)
{
	/* 10 s doubling per attempt, at most 1 h, times [0.75, 1.25) */
	int64_t base = 10000000;
	unsigned n = attempts > 1 ? attempts - 1 : 0;

	base = n >= 9 ? 3600000000LL : base << n;
	if (base > 3600000000LL)
		base = 3600000000LL;
	if (u < 0 || u >= 1)
		u = 0.5;
	return (int64_t)((double)base * (0.75 + 0.5 * u));
}

/* Locks the row of r if r is still its delivery; MQ_ELEASE if not.
 * With nowait (and a server that has it), MQ_ERETRY at once if another
 * session holds the row. */
static enum mq_status
lock_lease(struct mq_conn *c, const struct mq_receipt *r, uint32_t *attempts,
    uint32_t *max_attempts, int nowait)
{
	MYSQL_BIND in[2], out[2];
	unsigned long tlen;
	uint64_t id = r->id;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	if ((st = mq__prepare(c, nowait && c->skip_locked ?
	    sql_lock_lease_nowait : sql_lock_lease)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &id);
	mq__bind_str(&in[1], r->token, &tlen);
	rc = mq__execute(c, st, in, "cannot lock job");
	if (rc == MQ_EDB && c->err.db_errno == ER_LOCK_NOWAIT_MYSQL)
		rc = c->err.status = MQ_ERETRY;
	memset(out, 0, sizeof out);
	mq__bind_u32(&out[0], attempts);
	mq__bind_u32(&out[1], max_attempts);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot lock job");
	if (rc == MQ_OK) {
		f = mysql_stmt_fetch(st);
		if (f == MYSQL_NO_DATA)
			rc = mq__fail(c, MQ_ELEASE, "job %llu: %s",
			    (unsigned long long)r->id,
			    mq_strerror(MQ_ELEASE));
		else if (f == 1)
			rc = mq__dberr(c, st, "cannot lock job");
	}
	mq__release(c, st);
	return rc;
}

struct fail {
	const struct mq_receipt *r;
	const struct mq_fail_opts *o;
	struct mq_fail_result *res;
};

static enum mq_status
fail_tx(struct mq_conn *c, void *ctx)
{
	struct fail *f = ctx;
	MYSQL_BIND in[3];
	unsigned long elen;
	uint32_t attempts, max_attempts;
	uint64_t id = f->r->id;
	int64_t delay;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((rc = lock_lease(c, f->r, &attempts, &max_attempts, 0)) != MQ_OK)
		return rc;
	elen = (unsigned long)(f->o->error_len < ERROR_MAX ?
	    f->o->error_len : ERROR_MAX);
	f->res->attempts = attempts;
	f->res->dead = f->o->no_retry || attempts >= max_attempts;
	if (f->res->dead) {
		if ((st = mq__prepare(c, sql_bury)) == NULL)
			return c->err.status;
		mq__bind_blob(&in[0], f->o->error ? f->o->error : "", &elen);
		mq__bind_u64(&in[1], &id);
	} else {
		delay = f->o->retry_in_us >= 0 ? f->o->retry_in_us :
		    mq__backoff_us(attempts, (double)rand() / RAND_MAX);
		f->res->retry_in_us = delay;
		if ((st = mq__prepare(c, sql_retry)) == NULL)
			return c->err.status;
		mq__bind_i64(&in[0], &f->res->retry_in_us);
		mq__bind_blob(&in[1], f->o->error ? f->o->error : "", &elen);
		mq__bind_u64(&in[2], &id);
	}
	if (!f->o->error)
		mq__bind_null(&in[f->res->dead ? 0 : 1]);
	rc = mq__execute(c, st, in, "cannot fail job");
	mq__release(c, st);
	if (rc == MQ_OK)
		rc = mq__history_add(c, "failed", f->o->error, elen, &id, 1);
	if (rc == MQ_OK)
		rc = f->res->dead ? mq__finished(c, &id, 1) :
		    mq__count_event(c, "failed", NULL, &id, 1);
	return rc;
}

enum mq_status
mq_fail(struct mq_conn *c, const struct mq_receipt *r,
    const struct mq_fail_opts *o, struct mq_fail_result *res)
{
	struct fail f = { r, o, res };
	enum mq_status rc;

	memset(res, 0, sizeof *res);
	rc = mq__in_tx(c, fail_tx, &f);
	if (rc == MQ_ELEASE && c->galera)	/* galera.c */
		rc = mq__in_tx_caught_up(c, fail_tx, &f, rc);
	if (rc == MQ_OK)	/* its slot ended */
		mq__wake_freed(c, &r->id, 1);
	if (rc == MQ_OK)	/* its dependents that run anyway */
		mq__wake_after_commit(c);
	return rc;
}

struct extend {
	const struct mq_receipt *r;
	int64_t lease_us;
	int nowait;
};

static enum mq_status
extend_tx(struct mq_conn *c, void *ctx)
{
	struct extend *e = ctx;
	MYSQL_BIND in[2];
	uint32_t attempts, max_attempts;
	uint64_t id = e->r->id;
	MYSQL_STMT *st;
	enum mq_status rc;

	/* the gates first, as a claim writes them before it locks jobs */
	rc = mq__gate_job(c, id);
	if (rc == MQ_OK)
		rc = lock_lease(c, e->r, &attempts, &max_attempts, e->nowait);
	if (rc != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, sql_extend)) == NULL)
		return c->err.status;
	mq__bind_i64(&in[0], &e->lease_us);
	mq__bind_u64(&in[1], &id);
	rc = mq__execute(c, st, in, "cannot extend lease");
	if (rc == MQ_OK && mysql_stmt_affected_rows(st) == 0)
		rc = mq__fail(c, MQ_ELEASE, "job %llu: lease expired, and its "
		    "queue has limits: its slot may be another job's",
		    (unsigned long long)id);
	mq__release(c, st);
	return rc;
}

enum mq_status
mq_extend(struct mq_conn *c, const struct mq_receipt *r, int64_t lease_us)
{
	struct extend e = { r, lease_us, 0 };
	enum mq_status rc;

	if (lease_us <= 0)
		return mq__fail(c, MQ_EINVAL, "lease must be positive");
	rc = mq__in_tx(c, extend_tx, &e);
	if (rc == MQ_ELEASE && c->galera)	/* galera.c */
		rc = mq__in_tx_caught_up(c, extend_tx, &e, rc);
	return rc;
}

enum mq_status
mq_try_extend(struct mq_conn *c, const struct mq_receipt *r, int64_t lease_us)
{
	struct extend e = { r, lease_us, 1 };
	enum mq_status rc;

	if (lease_us <= 0)
		return mq__fail(c, MQ_EINVAL, "lease must be positive");
	/* one attempt, not mq__in_tx's retries: the caller's next beat is
	 * the retry, and the other jobs' beats do not wait for it */
	if (mysql_real_query(c->db, "START TRANSACTION", 17) != 0)
		return mq__dberr(c, NULL, "cannot start transaction");
	/* as mq__in_tx: lost before the COMMIT is rolled back; lost in it,
	 * unknown */
	mq__tx_begun(c);
	rc = extend_tx(c, &e);
	if (rc == MQ_OK)
		rc = mq__tx_open(c);
	c->in_tx = 0;
	if (rc == MQ_OK) {
		c->may_commit = 1;
		if (mysql_commit(c->db) != 0)
			rc = mq__dberr(c, NULL, "cannot commit");
		c->may_commit = 0;
	}
	if (rc != MQ_OK)
		(void)mysql_rollback(c->db);
	/* Galera: a node behind the one that claimed (mq work's heartbeat
	 * connection on another node of a list, or after a failover) has
	 * not applied the claim yet: once more after it caught up, before
	 * the lease is taken for lost and its job stopped (galera.c) */
	if (rc == MQ_ELEASE && c->galera)
		rc = mq__in_tx_caught_up(c, extend_tx, &e, rc);
	return rc;
}

/* The jobs of a queue leased with a token, some of them: by the claim
 * index (queue, state), among that queue's leased jobs. */
static const char sql_token_ids[] =
    "SELECT id, 0 FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND state = 'leased' AND lease_token = ? LIMIT 256";

size_t
mq_take_orphans(struct mq_conn *c, struct mq_orphan *out, size_t max)
{
	size_t n = c->norphans < max ? c->norphans : max;

	memcpy(out, c->orphans, n * sizeof *out);
	memmove(c->orphans, c->orphans + n,
	    (c->norphans - n) * sizeof *c->orphans);
	c->norphans -= n;
	return n;
}

/* Text queries: no input but the server's own numbers. The server and
 * this session; the server's uptime (seconds); whether a session is
 * still there (a killed one is, until it has rolled back). */
static const char sql_who[] =
    "SELECT CONCAT(@@hostname, ':', @@port), CONNECTION_ID()";
static const char sql_uptime[] = "SHOW GLOBAL STATUS LIKE 'Uptime'";
#define SQL_KILL "KILL CONNECTION %lu"
#define SQL_ALIVE \
    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lu"

/* the server's errors for KILL of a session that is not there */
#define ER_NO_SUCH_THREAD 1094

/* How long the session of a lost claim may take to end once killed
 * (a rollback of its claim: milliseconds), and how often it is looked
 * for meanwhile. */
#define SESSION_END_US 10000000
#define SESSION_POLL_US 20000

/* The first two cells of the first row of text query sql, into a and
 * b (b may be NULL). */
static enum mq_status
query_cells(struct mq_conn *c, const char *sql, char *a, size_t alen,
    char *b, size_t blen)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot end the session of a lost "
		    "claim");
	a[0] = '\0';
	if (b)
		b[0] = '\0';
	if ((row = mysql_fetch_row(res)) != NULL) {
		snprintf(a, alen, "%s", row[0] ? row[0] : "");
		if (b && mysql_num_fields(res) > 1)
			snprintf(b, blen, "%s", row[1] ? row[1] : "");
	}
	mysql_free_result(res);
	return MQ_OK;
}

/* Ends the session that sent o's claim, and waits until the server has
 * let it go: a statement of it still running (an UPDATE claim waiting on
 * a row lock another session holds, a COMMIT in flight) would else
 * lease the jobs after the search by token found none, to nobody.
 * MQ_OK once it is gone (or was: the server restarted since it was
 * made, or it is this session); a failure, o to be kept, when it cannot
 * be ended from here. */
static enum mq_status
end_claim_session(struct mq_conn *c, const struct mq_orphan *o)
{
	char server[sizeof o->server], id[32], name[32], up[32], sql[128];
	struct timespec poll = { 0, SESSION_POLL_US * 1000 };
	int64_t before, deadline;
	enum mq_status rc;

	if (o->thread == 0)
		return MQ_OK;		/* no claim sent */
	if ((rc = query_cells(c, sql_who, server, sizeof server, id,
	    sizeof id)) != MQ_OK)
		return rc;
	/* thread ids are each server's (each Galera node's) own */
	if (strcmp(server, o->server) != 0) {
		c->orphan_elsewhere = 1;
		return mq__fail(c, MQ_ERETRY, "the session of the lost "
		    "claim was on server %s, this connection is to %s: it "
		    "cannot be ended from here", o->server, server);
	}
	if (strtoul(id, NULL, 10) == o->thread)
		return MQ_OK;		/* this one: nothing in flight */
	before = mq_now_us();
	if ((rc = query_cells(c, sql_uptime, name, sizeof name, up,
	    sizeof up)) != MQ_OK)
		return rc;
	/* started (at the earliest) after the session was made: a restart,
	 * which ended it; its id may be another session's now */
	if (up[0] && before - (int64_t)(strtoull(up, NULL, 10) + 1) *
	    1000000 > o->connected_us)
		return MQ_OK;
	snprintf(sql, sizeof sql, SQL_KILL, o->thread);
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 &&
	    mysql_errno(c->db) != ER_NO_SUCH_THREAD)
		return mq__dberr(c, NULL, "cannot end the session of a lost "
		    "claim");
	snprintf(sql, sizeof sql, SQL_ALIVE, o->thread);
	for (deadline = mq_now_us() + SESSION_END_US;;) {
		if ((rc = query_cells(c, sql, up, sizeof up, NULL, 0)) !=
		    MQ_OK)
			return rc;
		if (strcmp(up, "0") == 0)
			return MQ_OK;
		if (mq_now_us() >= deadline ||
		    (c->stop_pending && c->stop_pending()))
			return mq__fail(c, MQ_ERETRY, "the session of the "
			    "lost claim (thread %lu) has not ended",
			    o->thread);
		nanosleep(&poll, NULL);
	}
}

enum mq_status
mq_release_orphan(struct mq_conn *c, const struct mq_orphan *o, size_t *n)
{
	struct mq_error ended;
	enum mq_status rc, back;

	*n = 0;
	c->orphan_elsewhere = 0;
	if ((rc = end_claim_session(c, o)) == MQ_OK)
		return mq__release_token(c, o->queue, o->token, n);
	if (!c->orphan_elsewhere)
		return rc;
	/* Its session is another server's (another Galera node's, dead,
	 * say): what the claim committed is the cluster's, read here once
	 * this node has applied it (a causal read), and given back now,
	 * not at its lease's end; a claim committed later (its node alive,
	 * its COMMIT still in flight) is not: the error stays, for the
	 * caller to try again (mq_orphan_elsewhere). A committed claim is
	 * safe to give back whatever its session does. */
	ended = c->err;
	/* caught up for this read only: the connection is mq work's claim
	 * connection, whose claims must not wait for the cluster */
	if ((back = c->galera ? mq__catch_up(c) : MQ_OK) == MQ_OK) {
		back = mq__release_token(c, o->queue, o->token, n);
		if (c->galera)
			mq__caught_up(c);
	}
	if (back != MQ_OK)
		return back;
	c->err = ended;
	return rc;
}

int
mq_orphan_elsewhere(const struct mq_conn *c)
{
	return c->orphan_elsewhere;
}

enum mq_status
mq__release_token(struct mq_conn *c, const char *queues, const char *token,
    size_t *n)
{
	char names[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	struct mq_receipt r;
	uint64_t ids[256];
	MYSQL_BIND in[2];
	unsigned long qlen, tlen;
	size_t nq = mq__queue_list(queues, names), q, got, i;
	MYSQL_STMT *st;
	enum mq_status rc = MQ_OK;

	*n = 0;
	if (token[0] == '\0')
		return MQ_OK;		/* no claim made */
	if (nq == 0 || strlen(token) != MQ_TOKEN_LEN)
		return mq__fail(c, MQ_EINVAL, "invalid queue list or token");
	memcpy(r.token, token, sizeof r.token);
	for (q = 0; q < nq && rc == MQ_OK; q++) {
		do {	/* the jobs given back no longer match */
			if ((st = mq__prepare(c, sql_token_ids)) == NULL)
				return c->err.status;
			mq__bind_str(&in[0], names[q], &qlen);
			mq__bind_str(&in[1], token, &tlen);
			rc = mq__execute_retry(c, st, in, "cannot select jobs");
			if (rc == MQ_OK)
				rc = mq__fetch_ids(c, st, ids, NULL, 256, &got);
			mq__release(c, st);
			for (i = 0; rc == MQ_OK && i < got; i++) {
				r.id = ids[i];
				if ((rc = mq_release(c, &r)) == MQ_OK)
					(*n)++;
				else if (rc == MQ_ELEASE)	/* taken since */
					rc = MQ_OK;
			}
		} while (rc == MQ_OK && got == 256);
	}
	return rc;
}

enum mq_status
mq_release(struct mq_conn *c, const struct mq_receipt *r)
{
	MYSQL_BIND in[2];
	unsigned long tlen;
	uint64_t id = r->id;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_release)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &id);
	mq__bind_str(&in[1], r->token, &tlen);
	rc = mq__execute_retry(c, st, in, "cannot give the job back");
	if (rc == MQ_OK && mysql_stmt_affected_rows(st) != 1)
		rc = mq__fail(c, MQ_ELEASE, "job %llu: %s",
		    (unsigned long long)r->id, mq_strerror(MQ_ELEASE));
	mq__release(c, st);
	if (rc == MQ_OK)	/* its slot ended */
		mq__wake_freed(c, &r->id, 1);
	return rc;
}
