/*
 * push.c: inserting jobs. One job is one INSERT; a stream of jobs is
 * cut into multi-row INSERTs, each its own short transaction, so memory
 * stays bounded whatever the input size. On a Galera node the wakeup of
 * the other nodes' waiters goes in the same transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "internal.h"
#include "sql_terms.h"

static const char sql_insert_head[] =
    "INSERT INTO `{{TABLE}}`"
    " (queue, priority, max_attempts, available_at, created_at, payload%s)"
    " VALUES ";
/* the due time: one parameter, in one of three forms */
static const char sql_due_delay[] = MQ_SQL_NOW_PLUS_US;
/* seconds since the epoch, as a UTC DATETIME whatever the session's zone */
static const char sql_due_epoch[] = MQ_SQL_FROM_EPOCH_S;
static const char sql_due_time[] = "CAST(? AS DATETIME(6))";
/* a live job with the same key: its id. A plain INSERT that fails on the
 * dedup index, then this read, needs only INSERT and SELECT (id, queue,
 * dedup_unique): ON DUPLICATE KEY UPDATE would need UPDATE on every column,
 * and so let a producer rewrite any job. */
static const char sql_live_key[] =
    "SELECT id, queue FROM `{{TABLE}}`"
    " WHERE dedup_unique = CONCAT(?, '/', ?)";
/* The same read as schema 7 made it, for a producer role granted before
 * schema 8 (SELECT on dedup_live, not on dedup_unique: error 1143): the
 * right id still, by the list index instead of the unique one. */
static const char sql_live_key_7[] =
    "SELECT id, queue FROM `{{TABLE}}` WHERE queue = ? AND dedup_live = ?";

/* Rows per multi-row INSERT, and bytes of payload per batch. */
#define BATCH_ROWS 1000
#define BATCH_BYTES (4UL << 20)
/* Parameters each row binds; one more with a key (the last). */
#define ROW_PARAMS 5
#define ROW_PARAMS_MAX (ROW_PARAMS + 1)

/* The values every row of one push shares, bound from here. */
struct shared {
	struct mq_push_opts o;
	char at[40];		/* o.at as the server's CAST reads it */
	unsigned long queue_len, due_len, key_len;
	int32_t priority;
	uint32_t max_attempts;
	int64_t due_num;
	const char *due_str;
};

struct mq_batch {
	struct mq_conn *c;
	struct shared v;
	mq_ids_fn on_ids;
	void *ctx;
	MYSQL_STMT *full;	/* prepared for BATCH_ROWS rows */
	MYSQL_STMT *st;		/* the INSERT being flushed */
	int wake_in_tx, tries;	/* as struct one's */
	struct mq__deps *deps;	/* --after: the parents of every job */
	int due;		/* and the batch due at once */
	/* pending rows: payloads back to back in buf */
	size_t rows, used, cap;
	unsigned char *buf;
	size_t off[BATCH_ROWS];
	unsigned long len[BATCH_ROWS];
	MYSQL_BIND bind[BATCH_ROWS * ROW_PARAMS_MAX];
};

/* The due-time expression for o and its parameter. */
static const char *
due_sql(const struct mq_push_opts *o, int64_t *num, const char **str)
{
	*str = NULL;
	if (o->at && o->at[0] == '@') {
		*num = strtoll(o->at + 1, NULL, 10);
		return sql_due_epoch;
	}
	if (o->at) {
		*str = o->at;
		return sql_due_time;
	}
	*num = o->delay_us;
	return sql_due_delay;
}

/* "INSERT ... VALUES (row), (row), ..." for n rows, malloc'ed; a single
 * push may add the dedup key and the recurrence, whose anchor is the
 * first due time: the same expression again (UTC_TIMESTAMP is the
 * statement's start, so both agree), not a reference to available_at,
 * which would need SELECT on it and a producer has none. A job key is
 * the last column, of every row; without one the statement is the same
 * as before keys were. */
static char *
insert_sql(const struct mq_push_opts *o, size_t n, int single)
{
	char head[sizeof sql_insert_head + 64], row[232], cols[64];
	const char *due_str, *due;
	int64_t due_num;
	int every = single && o->every_us > 0;
	size_t i, hl, rl;
	char *sql, *p;

	due = due_sql(o, &due_num, &due_str);
	snprintf(cols, sizeof cols, "%s%s", every ?
	    ", dedup_key, every_us, every_anchor" : single ? ", dedup_key" : "",
	    o->key ? ", job_key" : "");
	snprintf(head, sizeof head, sql_insert_head, cols);
	snprintf(row, sizeof row, "(?, ?, ?, %s, UTC_TIMESTAMP(6), ?%s%s%s%s)",
	    due, single ? ", ?" : "", every ? ", ?, " : "", every ? due : "",
	    o->key ? ", ?" : "");
	hl = strlen(head);
	rl = strlen(row);
	sql = malloc(hl + n * (rl + 2) + 1);
	if (sql == NULL)
		return NULL;
	memcpy(sql, head, hl);
	for (p = sql + hl, i = 0; i < n; i++) {
		if (i) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		memcpy(p, row, rl);
		p += rl;
	}
	*p = '\0';
	return sql;
}

static MYSQL_STMT *
prepare_insert(struct mq_conn *c, const struct mq_push_opts *o, size_t n,
    int single)
{
	char *sql = insert_sql(o, n, single);
	MYSQL_STMT *st;

	if (sql == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	st = mq__prepare_once(c, sql);
	free(sql);
	return st;
}

/* Binds the shared values of a row; the payload is bound by the caller. */
static void
bind_row(struct shared *v, MYSQL_BIND *r)
{
	mq__bind_str(&r[0], v->o.queue, &v->queue_len);
	mq__bind_i32(&r[1], &v->priority);
	mq__bind_u32(&r[2], &v->max_attempts);
	if (v->due_str)
		mq__bind_str(&r[3], v->due_str, &v->due_len);
	else
		mq__bind_i64(&r[3], &v->due_num);
}

/* Due later: no waiter could claim it now (a past --at is found by the
 * waiters' own check within a second). */
static int
scheduled(const struct mq_push_opts *o)
{
	return o->delay_us > 0 || o->at != NULL;
}

/* The jobs are committed: a failed wakeup must not fail the push (the
 * waiters find the jobs within a second anyway). nodes_woken: the
 * waiters on other Galera nodes were woken in the push's transaction. */
static void
wake_after_push(struct mq_conn *c, const char *queue, size_t n,
    int nodes_woken)
{
	struct mq_error saved = c->err;
	uint64_t woken;

	if ((nodes_woken ? mq__wake_local(c, queue, n, &woken) :
	    mq__wake(c, queue, n, &woken)) != MQ_OK)
		c->err = saved;
}

/* Galera: a push that may wake waiters on other nodes inserts and wakes
 * them in one transaction (waiters.c); elsewhere it is one statement. */
static int
wakes_in_tx(const struct mq_conn *c, const struct mq_push_opts *o)
{
	return mq__wakes_nodes(c) && !scheduled(o);
}

static enum mq_status
too_big(struct mq_conn *c, size_t len)
{
	return mq__fail(c, MQ_ETOOBIG, "payload of %zu bytes is larger than "
	    "the server's max_allowed_packet allows (%zu bytes)", len,
	    mq_max_payload(c));
}

static void
init_shared(struct shared *v, const struct mq_push_opts *o)
{
	size_t n;

	v->o = *o;
	if (o->at && o->at[0] != '@') {
		/* ISO 8601's 'T' and 'Z' are ours to accept, not CAST's */
		snprintf(v->at, sizeof v->at, "%s", o->at);
		n = strlen(v->at);
		if (n && v->at[n - 1] == 'Z')
			v->at[n - 1] = '\0';
		if (n > 10 && v->at[10] == 'T')
			v->at[10] = ' ';
		v->o.at = v->at;
	}
	v->priority = o->priority;
	v->max_attempts = o->max_attempts;
	v->key_len = o->key ? (unsigned long)strlen(o->key) : 0;
	due_sql(&v->o, &v->due_num, &v->due_str);
}

/* The id of the live job with o->dedup by the read sql: MQ_OK, or
 * MQ_EMPTY if none. The key's job must be of this queue: queue '/' key
 * is unique only over queue names without a '/', and a row another
 * program wrote with the table's checks off (a session may turn them
 * off) may hold "a/b" '/' "c" against queue "a" and key "b/c". */
static enum mq_status
live_key_by(struct mq_conn *c, const char *sql, const struct mq_push_opts *o,
    uint64_t *id)
{
	MYSQL_BIND in[2], out[2];
	unsigned long qlen, klen = (unsigned long)strlen(o->dedup), holder_len;
	char holder[MQ_QUEUE_MAX + 1];
	MYSQL_STMT *st;
	enum mq_status rc;
	int r;

	if ((st = mq__prepare(c, sql)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], o->queue, &qlen);
	mq__bind_blob(&in[1], o->dedup, &klen);
	rc = mq__execute(c, st, in, "cannot read the live job's id");
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], id);
	out[1].buffer_type = MYSQL_TYPE_STRING;
	out[1].buffer = holder;
	out[1].buffer_length = sizeof holder;
	out[1].length = &holder_len;
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the live job's id");
	if (rc == MQ_OK) {
		r = mysql_stmt_fetch(st);
		if (r == MYSQL_NO_DATA)
			rc = MQ_EMPTY;
		else if (r == 1)
			rc = mq__dberr(c, st, "cannot read the live job's id");
		else if (holder_len != strlen(o->queue) ||
		    memcmp(holder, o->queue, holder_len) != 0)
			rc = mq__fail(c, MQ_EDB, "the dedup key is held by job "
			    "%llu, which is not of queue '%s' (a row mq did not "
			    "write: its queue name has a '/')",
			    (unsigned long long)*id, o->queue);
	}
	mq__release(c, st);
	return rc;
}

static enum mq_status
live_key(struct mq_conn *c, const struct mq_push_opts *o, uint64_t *id)
{
	enum mq_status rc = live_key_by(c, sql_live_key, o, id);

	if (rc != MQ_OK && rc != MQ_EMPTY &&
	    c->err.db_errno == ER_COLUMNACCESS_DENIED_ERROR)
		rc = live_key_by(c, sql_live_key_7, o, id);
	return rc;
}

/* A push after other jobs (o->nafter > 0): no due time of its own (it
 * is due when its parents are done), a known policy; on Galera, the
 * session then sees what other nodes committed (parents pushed or
 * finished there). */
static enum mq_status
after_ok(struct mq_conn *c, const struct mq_push_opts *o)
{
	if (o->nafter == 0)
		return MQ_OK;
	if (o->delay_us > 0 || o->at != NULL ||
	    o->if_parent_dies < MQ_AFTER_CANCEL ||
	    o->if_parent_dies > MQ_AFTER_WAIT)
		return mq__fail(c, MQ_EINVAL, "a job pushed after others "
		    "has no due time of its own");
	return mq__see_cluster(c);
}

struct one {
	MYSQL_STMT *st;
	MYSQL_BIND *bind;
	const struct mq_push_opts *o;
	uint64_t *id;
	int *existed;
	int in_tx;		/* the wakeup is in the transaction */
	int tries;
	struct mq__deps *deps;	/* a dependent: its parents (deps.c) */
	int due;		/* and due at once */
};

/* The INSERT of one job; a duplicate key: the live job's id, unless it
 * finished in the meantime (then the key is free: insert again). */
static enum mq_status
insert_one(struct mq_conn *c, struct one *p)
{
	enum mq_status rc = MQ_OK;
	int tries;

	*p->existed = 0;
	for (tries = 0; tries < 3; tries++) {
		/* in a transaction, its retry is the transaction's */
		rc = c->in_tx ? mq__execute(c, p->st, p->bind, "cannot push") :
		    mq__execute_retry(c, p->st, p->bind, "cannot push");
		if (rc == MQ_OK) {
			*p->id = mysql_stmt_insert_id(p->st);
			break;
		}
		if (!p->o->dedup || c->err.db_errno != ER_DUP_ENTRY)
			break;
		if ((rc = live_key(c, p->o, p->id)) != MQ_EMPTY) {
			*p->existed = rc == MQ_OK;
			break;
		}
	}
	if (rc == MQ_EMPTY)	/* the key's job finished and came back, 3x */
		rc = mq__fail(c, MQ_ERETRY, "the dedup key is taken and freed "
		    "too fast: try again");
	return rc;
}

/* Galera: after rc, the INSERT of n jobs (n 0: none new), the wakeup in
 * the push's transaction, on its first try only: pushers on several
 * nodes that wake the same waiter conflict, and a push run again wakes
 * after its commit instead, where a conflict costs nothing (*in_tx then
 * 0: the waiters are still to wake). */
static enum mq_status
wake_in_first_try(struct mq_conn *c, enum mq_status rc, const char *queue,
    size_t n, int *in_tx, int *tries)
{
	if (rc == MQ_OK && n && *in_tx && (*tries)++ == 0)
		return mq__wake_nodes_in_tx(c, queue, n);
	*in_tx = 0;
	return rc;
}

static enum mq_status
push_one_tx(struct mq_conn *c, void *ctx)
{
	struct one *p = ctx;
	enum mq_status rc = MQ_OK;

	/* a dependent: its parents in the same transaction, read before
	 * it is inserted (a parent that cannot be one rolls it back) */
	if (p->deps)
		rc = mq__deps_check(c, p->deps, 1);
	if (rc == MQ_OK)
		rc = insert_one(c, p);
	if (rc == MQ_OK && !*p->existed && p->deps)
		rc = mq__deps_link(c, p->deps, *p->id, 1, 1, &p->due);

	return wake_in_first_try(c, rc, p->o->queue, *p->existed ? 0 : 1,
	    &p->in_tx, &p->tries);
}

enum mq_status
mq_push(struct mq_conn *c, const struct mq_push_opts *o, const void *payload,
    size_t len, uint64_t *id, int *existed)
{
	struct shared v;
	struct mq_push_opts own;
	MYSQL_BIND bind[ROW_PARAMS + 4];
	unsigned long plen = (unsigned long)len, klen = 0;
	int64_t every = o->every_us;
	struct one one;
	MYSQL_STMT *st;
	enum mq_status rc;
	int tx;

	*existed = 0;
	if (o->every_us < 0)
		return mq__fail(c, MQ_EINVAL, "negative recurrence");
	if (o->key && !mq_valid_key(o->key))
		return mq__fail(c, MQ_EINVAL, "invalid job key");
	if (len > mq_max_payload(c))
		return too_big(c, len);
	if (o->nafter > 0 && o->every_us > 0)
		return mq__fail(c, MQ_EINVAL, "a job pushed after others "
		    "has no recurrence");
	if ((rc = after_ok(c, o)) != MQ_OK)
		return rc;
	memset(&v, 0, sizeof v);
	/* a dependent waits at the end of time until its parents are met
	 * (deps.c) */
	own = *o;
	if (o->nafter > 0)
		own.at = "9999-12-31 23:59:59.999999";
	init_shared(&v, &own);
	/* the key and recurrence columns go together: a NULL key when
	 * recurring without one */
	st = prepare_insert(c, &v.o, 1, o->dedup != NULL || every > 0);
	if (st == NULL)
		return c->err.status;
	bind_row(&v, bind);
	mq__bind_blob(&bind[4], payload, &plen);
	if (o->dedup) {
		klen = (unsigned long)strlen(o->dedup);
		mq__bind_blob(&bind[5], o->dedup, &klen);
	} else {
		mq__bind_null(&bind[5]);
	}
	if (every > 0) {
		mq__bind_i64(&bind[6], &every);
		bind[7] = bind[3];	/* the anchor: the due time again */
	}
	/* the job key: the last parameter */
	if (o->key)
		mq__bind_blob(&bind[every > 0 ? 8 : o->dedup ? 6 : 5], o->key,
		    &v.key_len);
	one.st = st;
	one.bind = bind;
	one.o = o;
	one.id = id;
	one.existed = existed;
	one.tries = 0;
	one.due = 0;
	one.deps = NULL;
	if (o->nafter > 0 && (rc = mq__deps_new(c, o->after, o->nafter,
	    o->if_parent_dies, &one.deps)) != MQ_OK) {
		mq__release(c, st);
		return rc;
	}
	tx = (one.in_tx = wakes_in_tx(c, &v.o)) || one.deps;
	if (tx)
		rc = mq__in_tx(c, push_one_tx, &one);
	else
		rc = insert_one(c, &one);
	/* Galera: the live job its duplicate key named may have finished
	 * on another node an instant ago, its write set not yet applied on
	 * this one (after an ack on node 1 had returned, a push on node 2
	 * printed the done job's id and pushed nothing): the push runs once
	 * more after the node caught up with the cluster (galera.c; a wait
	 * at the START TRANSACTION, or before the read: Galera does not
	 * wait inside a transaction begun), and then inserts if the key is
	 * free. The first run inserted nothing. */
	if (rc == MQ_OK && *existed && c->galera && o->dedup) {
		if (tx)
			rc = mq__in_tx_caught_up(c, push_one_tx, &one, rc);
		else if (mq__catch_up(c) == MQ_OK) {
			rc = insert_one(c, &one);
			mq__caught_up(c);
		}
	}
	mq__deps_free(one.deps);
	mq__release(c, st);
	if (rc == MQ_OK && !*existed && (!scheduled(&v.o) ||
	    (o->nafter > 0 && one.due)))
		wake_after_push(c, o->queue, 1, one.in_tx);
	return rc;
}

/* One job in the caller's transaction (a schedule's run: schedule.c),
 * with the push's statement: a plain job (no dedup key, recurrence nor
 * parents), due as o says. Its waiters are the caller's to wake after
 * the commit (mq__wake_pushed). */
enum mq_status
mq__push_in_tx(struct mq_conn *c, const struct mq_push_opts *o,
    const void *payload, size_t len, uint64_t *id)
{
	struct shared v;
	MYSQL_BIND bind[ROW_PARAMS_MAX];
	unsigned long plen = (unsigned long)len;
	MYSQL_STMT *st;
	enum mq_status rc;

	if (o->dedup || o->every_us || o->nafter)
		return mq__fail(c, MQ_EINVAL, "a run is a plain job");
	if (o->key && !mq_valid_key(o->key))
		return mq__fail(c, MQ_EINVAL, "invalid job key");
	if (len > mq_max_payload(c))
		return too_big(c, len);
	memset(&v, 0, sizeof v);
	init_shared(&v, o);
	if ((st = prepare_insert(c, &v.o, 1, 0)) == NULL)
		return c->err.status;
	bind_row(&v, bind);
	mq__bind_blob(&bind[4], payload, &plen);
	if (o->key)
		mq__bind_blob(&bind[5], o->key, &v.key_len);
	rc = mq__execute(c, st, bind, "cannot push");
	if (rc == MQ_OK)
		*id = mysql_stmt_insert_id(st);
	mq__release(c, st);
	return rc;
}

void
mq__wake_pushed(struct mq_conn *c, const char *queue, size_t n)
{
	wake_after_push(c, queue, n, 0);
}

struct mq_batch *
mq_batch_new(struct mq_conn *c, const struct mq_push_opts *o,
    mq_ids_fn on_ids, void *ctx)
{
	struct mq_push_opts own;
	struct mq_batch *b;

	if (o->dedup || o->every_us) {
		mq__fail(c, MQ_EINVAL, "a dedup key or a recurrence is for "
		    "one job at a time");
		return NULL;
	}
	if (o->key && !mq_valid_key(o->key)) {
		mq__fail(c, MQ_EINVAL, "invalid job key");
		return NULL;
	}
	if (after_ok(c, o) != MQ_OK)
		return NULL;
	if ((b = calloc(1, sizeof *b)) == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	b->c = c;
	/* dependents wait at the end of time, as a single one */
	own = *o;
	if (o->nafter > 0)
		own.at = "9999-12-31 23:59:59.999999";
	init_shared(&b->v, &own);
	b->on_ids = on_ids;
	b->ctx = ctx;
	/* the parents read once, for every batch; and a first check, read
	 * only, so that parents that cannot be are refused before any
	 * input is read (each batch checks them again, in its transaction:
	 * they may change meanwhile) */
	if (o->nafter > 0 && (mq__deps_new(c, o->after, o->nafter,
	    o->if_parent_dies, &b->deps) != MQ_OK ||
	    mq__deps_check(c, b->deps, 0) != MQ_OK)) {
		mq_batch_free(b);
		return NULL;
	}
	return b;
}

/* As push_one_tx, for a batch: its dependents' parents written once
 * (children + the batch's rows) and checked, the INSERT, then the
 * edges and shards of every job it numbered. */
static enum mq_status
flush_tx(struct mq_conn *c, void *ctx)
{
	struct mq_batch *b = ctx;
	enum mq_status rc = MQ_OK;

	if (b->deps)
		rc = mq__deps_check(c, b->deps, b->rows);
	if (rc == MQ_OK)
		rc = mq__execute(c, b->st, b->bind, "cannot push");
	if (rc == MQ_OK && b->deps)
		rc = mq__deps_link(c, b->deps, mysql_stmt_insert_id(b->st),
		    c->autoinc_step, b->rows, &b->due);
	return wake_in_first_try(c, rc, b->v.o.queue, b->rows, &b->wake_in_tx,
	    &b->tries);
}

static enum mq_status
flush(struct mq_batch *b)
{
	struct mq_conn *c = b->c;
	MYSQL_STMT *st;
	enum mq_status rc;
	size_t i;

	if (b->rows == 0)
		return MQ_OK;
	if (b->rows == BATCH_ROWS) {
		if (b->full == NULL &&
		    (b->full = prepare_insert(c, &b->v.o, BATCH_ROWS, 0)) == NULL)
			return c->err.status;
		st = b->full;
	} else if ((st = prepare_insert(c, &b->v.o, b->rows, 0)) == NULL) {
		return c->err.status;
	}
	for (i = 0; i < b->rows; i++) {
		MYSQL_BIND *r = &b->bind[i * (b->v.o.key ? ROW_PARAMS_MAX :
		    ROW_PARAMS)];
		bind_row(&b->v, r);
		mq__bind_blob(&r[4], b->buf + b->off[i], &b->len[i]);
		if (b->v.o.key)
			mq__bind_blob(&r[5], b->v.o.key, &b->v.key_len);
	}
	/* one multi-row INSERT is one transaction: all of it or none (with
	 * the wakeup of other Galera nodes' waiters, if any) */
	b->st = st;
	b->tries = 0;
	b->due = 0;
	if ((b->wake_in_tx = wakes_in_tx(c, &b->v.o)) || b->deps)
		rc = mq__in_tx(c, flush_tx, b);
	else
		rc = mq__execute_retry(c, st, b->bind, "cannot push");
	if (rc == MQ_OK && b->on_ids &&
	    b->on_ids(mysql_stmt_insert_id(st), b->rows, c->autoinc_step,
	    b->ctx) != 0)
		rc = mq__fail(c, MQ_EIO, "cannot report pushed ids");
	if (st != b->full)
		mq__release(c, st);
	if (rc == MQ_OK && (!scheduled(&b->v.o) || (b->deps && b->due)))
		wake_after_push(c, b->v.o.queue, b->rows, b->wake_in_tx);
	b->rows = 0;
	b->used = 0;
	return rc;
}

enum mq_status
mq_batch_add(struct mq_batch *b, const void *payload, size_t len)
{
	size_t budget = mq_max_payload(b->c) / 2;
	enum mq_status rc;

	if (len > mq_max_payload(b->c)) {
		/* what came before is pushed; this one is refused */
		if ((rc = flush(b)) != MQ_OK)
			return rc;
		return too_big(b->c, len);
	}
	if (budget > BATCH_BYTES)
		budget = BATCH_BYTES;
	if (b->rows == BATCH_ROWS ||
	    (b->rows > 0 && b->used + len + 64 * (b->rows + 1) > budget))
		if ((rc = flush(b)) != MQ_OK)
			return rc;
	if (b->used + len > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		unsigned char *nb;
		while (cap < b->used + len)
			cap *= 2;
		if ((nb = realloc(b->buf, cap)) == NULL)
			return mq__fail(b->c, MQ_ENOMEM, "out of memory");
		b->buf = nb;
		b->cap = cap;
	}
	if (len)
		memcpy(b->buf + b->used, payload, len);
	b->off[b->rows] = b->used;
	b->len[b->rows] = (unsigned long)len;
	b->used += len;
	b->rows++;
	return MQ_OK;
}

enum mq_status
mq_batch_flush(struct mq_batch *b)
{
	return flush(b);
}

void
mq_batch_free(struct mq_batch *b)
{
	if (b == NULL)
		return;
	if (b->full)
		mq__release(b->c, b->full);
	mq__deps_free(b->deps);
	free(b->buf);
	free(b);
}
