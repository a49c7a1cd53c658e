/*
 * limits.c: the claim of a limited queue (mq-limit(1)): at most
 * concurrency jobs of the queue, per_key jobs of one key, hold a live
 * lease at once, and at most rate claims of the queue, key_rate of a
 * key, start in any window of their length, whatever the consumers,
 * hosts, ways of claiming and Galera nodes.
 *
 * A slot is the lease itself: what a limit counts is the jobs whose
 * lease is live (the index held), so a slot ends with whatever ends the
 * lease (ack, fail, release, cancel, requeue, or its expiry: a consumer
 * killed -9 frees it then), only by the holder's token (the writes that
 * end a lease are fenced by it), and never twice. Nothing is written
 * when it ends: nothing can be left stuck.
 *
 * The count must not race with another claim of the same queue or key:
 * each claim first writes the gate of what it counts (<table>_gates:
 * one row per queue, gate_key '', and per key), then counts. On one
 * server the write makes the claims of one gate wait for each other
 * (its row lock), so each counts the leases of those that committed
 * before it. On a Galera cluster, where locks are each node's own, two
 * claims of one gate on two nodes write the same row: certification
 * lets one commit and aborts the other (error 1213, run again by
 * mq__in_tx), which then counts the first's lease. The admission is
 * that write, not the read before it. Claims of other keys write other
 * rows: no certification key is shared by unrelated jobs (the queue's
 * own gate only when the queue has a concurrency limit, which is what
 * such a limit means).
 *
 * A job over its key's limit is skipped, not waited for: the candidates
 * are the queue's due jobs in claim order, less those of keys that are
 * full (one read without locks); each is then locked by primary key,
 * after its gate and count, and leased with the claim's other jobs.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "claim.h"
#include "internal.h"
#include "sql_terms.h"

/* The queue's settings (no row: not paused, no limits). */
static const char sql_settings[] =
    "SELECT paused, concurrency, per_key, rate, rate_us, key_rate,"
    " key_rate_us FROM `{{TABLE}}_queues` WHERE queue = ?";

/* Live leases of the queue; of one key of it (the index held): the
 * slots held (binds the queue, then the key). */
const char mq__sql_live_queue[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND " MQ_SQL_LEASE_LIVE;
const char mq__sql_live_key[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND job_key = ? AND " MQ_SQL_LEASE_LIVE;

/* A rate (mq-limit(1)): at most rate claims through a gate in any
 * window of rate_us microseconds, a sliding window: a claim is let
 * through only while fewer than rate of the gate's ticks (the times of
 * its claims, <table>_ticks, at most rate of them kept) are younger than
 * the window, and it writes its own tick over the oldest (or as a new
 * one while there are fewer than rate). The gate's write before makes
 * this exact, as for the counts. Binds the window, queue, gate key. */
const char mq__sql_ticks[] =
    "SELECT COUNT(*), COALESCE(SUM(at > " MQ_SQL_NOW_MINUS_US "), 0),"
    " COALESCE(" MQ_SQL_US_FROM_NOW("MIN(IF(at > " MQ_SQL_NOW_MINUS_US ","
    " at, NULL)) + INTERVAL ? MICROSECOND") ", 0)"
    " FROM `{{TABLE}}_ticks` FORCE INDEX (PRIMARY)"
    " WHERE queue = ? AND gate_key = ?";
/* What a claim of up to m jobs needs of its gate's ticks, read as far
 * as m entries whatever the rate (a rate of 100,000 a minute read all
 * 100,000 ticks at each claim): how many there are (numbered from 0:
 * the last one's number plus one, a dive of the primary key), how many
 * of the m oldest (the index oldest) are out of the window, and in how
 * long the oldest in it leaves it. With at most rate ticks, m claims
 * may go through if rate - ticks + those out of it >= m. Binds queue,
 * gate key, the window three times, queue, gate key, m. */
static const char sql_ticks_oldest[] =
    "SELECT (SELECT COALESCE(MAX(n) + 1, 0) FROM `{{TABLE}}_ticks`"
    " FORCE INDEX (PRIMARY) WHERE queue = ? AND gate_key = ?),"
    " COALESCE(SUM(o.at <= " MQ_SQL_NOW_MINUS_US "), 0), COALESCE("
    MQ_SQL_US_FROM_NOW("MIN(IF(o.at > " MQ_SQL_NOW_MINUS_US ", o.at,"
    " NULL)) + INTERVAL ? MICROSECOND") ", 0)"
    " FROM (SELECT at FROM `{{TABLE}}_ticks` FORCE INDEX (oldest)"
    " WHERE queue = ? AND gate_key = ? ORDER BY at LIMIT ?) AS o";
/* More ticks than the rate (it was lowered since they were written):
 * once none of those numbered past it is in the window (they count for
 * nothing then), they all go at once, so that the numbers stay 0 to
 * rate - 1 with no hole (a hole would count as a tick for ever, the
 * gate below its rate: deleted one by one, then the rate raised again,
 * the gate let 8 of 10 through); then the gate is read as above again.
 * Until then every tick is read. The claims of the gate wait on its
 * gate row. A consumer account without DELETE on the ticks (the grants
 * before 2026-11-30) leaves them: its claims read them all. */
static const char sql_ticks_high[] =
    "SELECT COUNT(*) FROM `{{TABLE}}_ticks` FORCE INDEX (PRIMARY)"
    " WHERE queue = ? AND gate_key = ? AND n >= ? AND at > "
    MQ_SQL_NOW_MINUS_US;
static const char sql_ticks_prune[] =
    "DELETE FROM `{{TABLE}}_ticks` WHERE queue = ? AND gate_key = ?"
    " AND n >= ?";
static const char sql_ticks_new[] =
    "INSERT INTO `{{TABLE}}_ticks` (queue, gate_key, n, at) VALUES ";
static const char sql_tick_part[] = "(?, ?, ?, " MQ_SQL_NOW ")";
static const char sql_ticks_over[] =
    "UPDATE `{{TABLE}}_ticks` FORCE INDEX (oldest) SET at = " MQ_SQL_NOW
    " WHERE queue = ? AND gate_key = ? ORDER BY at LIMIT ?";
/* new ticks a statement at most (3 parameters each) */
#define TICKS_A_STATEMENT 256

struct limits {
	int paused, limited;
	uint32_t concurrency, per_key;	/* 0: none */
	uint32_t rate, key_rate;	/* 0: none */
	uint64_t rate_us, key_rate_us;
};

/* A gate's ticks: how many there are, how many in the window (or as
 * many as a claim of the jobs asked for needs to know), in how long the
 * oldest of those leaves it (µs), and the number a new one takes. */
struct ticks {
	uint64_t rows, used;
	int64_t frees_in;
	uint64_t next_n;
};

/* Reads a one-number answer of an executed statement into *n. */
static enum mq_status
fetch_count(struct mq_conn *c, MYSQL_STMT *st, uint64_t *n, const char *what)
{
	MYSQL_BIND out[1];

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], n);
	if (mysql_stmt_bind_result(st, out) != 0 || mysql_stmt_fetch(st) != 0)
		return mq__dberr(c, st, what);
	mysql_stmt_free_result(st);
	return MQ_OK;
}

/* Whether the queue has a due job (one probe of the due index); one of
 * a key its per-key limit holds full (the parameter; the candidates'
 * read passed over them). */
const char mq__sql_any_due[] = "SELECT " MQ_SQL_ANY_DUE("{{TABLE}}", "?");
static const char sql_full_due[] =
    "SELECT EXISTS (SELECT 1 FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND state = 'ready' AND job_key IN ("
    MQ_SQL_FULL_KEYS("{{TABLE}}", "?", "?") ") AND " MQ_SQL_IS_DUE ")";

/* A claim that got fewer jobs than it wanted of a limited queue: its
 * limits held due jobs back if it has any (a queue's concurrency or
 * rate full: any; else one of a full key) (mq_claim_held). */
static enum mq_status
note_held(struct mq_conn *c, const char *queue, const struct limits *l)
{
	MYSQL_BIND in[3];
	unsigned long qlen;
	uint32_t per = l ? l->per_key : 0;
	uint64_t due = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if (c->limit_held)
		return MQ_OK;
	if ((st = mq__prepare(c, l ? sql_full_due : mq__sql_any_due)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_str(&in[1], queue, &qlen);
	mq__bind_u32(&in[2], &per);
	rc = mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK)
		rc = fetch_count(c, st, &due, "cannot claim");
	mq__release(c, st);
	if (due)
		c->limit_held = 1;
	return rc;
}

static enum mq_status
read_settings(struct mq_conn *c, const char *queue, struct limits *l)
{
	MYSQL_BIND in[1], out[7];
	unsigned long qlen;
	int32_t paused = 0;
	uint32_t conc = 0, per = 0, rate = 0, krate = 0;
	uint64_t rate_us = 0, krate_us = 0;
	mq__bool conc_null = 1, per_null = 1, rate_null = 1, krate_null = 1,
	    rus_null = 1, krus_null = 1;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r;

	memset(l, 0, sizeof *l);
	if ((st = mq__prepare(c, sql_settings)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	memset(out, 0, sizeof out);
	mq__bind_i32(&out[0], &paused);
	mq__bind_u32(&out[1], &conc);
	out[1].is_null = &conc_null;
	mq__bind_u32(&out[2], &per);
	out[2].is_null = &per_null;
	mq__bind_u32(&out[3], &rate);
	out[3].is_null = &rate_null;
	mq__bind_u64(&out[4], &rate_us);
	out[4].is_null = &rus_null;
	mq__bind_u32(&out[5], &krate);
	out[5].is_null = &krate_null;
	mq__bind_u64(&out[6], &krate_us);
	out[6].is_null = &krus_null;
	rc = mq__execute(c, st, in, "cannot read queue settings");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read queue settings");
	if (rc == MQ_OK) {
		r = mysql_stmt_fetch(st);
		if (r == 1)
			rc = mq__dberr(c, st, "cannot read queue settings");
		else if (r != MYSQL_NO_DATA) {
			l->paused = paused != 0;
			l->concurrency = conc_null ? 0 : conc;
			l->per_key = per_null ? 0 : per;
			/* half a rate (a row the CHECK did not see): none */
			if (!rate_null && !rus_null && rate && rate_us) {
				l->rate = rate;
				l->rate_us = mq__window_us(rate_us);
			}
			if (!krate_null && !krus_null && krate && krate_us) {
				l->key_rate = krate;
				l->key_rate_us = mq__window_us(krate_us);
			}
			mysql_stmt_free_result(st);
		}
	}
	mq__release(c, st);
	l->limited = l->concurrency || l->per_key || l->rate || l->key_rate;
	return rc;
}

/* The connection's place for queue's settings (limit_cache), NULL if
 * none holds them. */
static struct mq_limit_cache *
cached(struct mq_conn *c, const char *queue)
{
	size_t i;

	for (i = 0; i < MQ_QUEUES_MAX; i++)
		if (c->limit_cache[i].queue[0] &&
		    strcmp(c->limit_cache[i].queue, queue) == 0)
			return &c->limit_cache[i];
	return NULL;
}

static void
uncache(struct mq_conn *c, const char *queue)
{
	struct mq_limit_cache *k = cached(c, queue);

	if (k)
		k->queue[0] = '\0';
}

/* Keeps the settings of a limited queue that is not paused (a free
 * place, else the first). */
static void
cache(struct mq_conn *c, const char *queue, const struct limits *l)
{
	struct mq_limit_cache *k = cached(c, queue);
	size_t i;

	if (!l->limited || l->paused) {
		uncache(c, queue);
		return;
	}
	for (i = 0; k == NULL && i < MQ_QUEUES_MAX; i++)
		if (c->limit_cache[i].queue[0] == '\0')
			k = &c->limit_cache[i];
	if (k == NULL)
		k = &c->limit_cache[0];
	snprintf(k->queue, sizeof k->queue, "%s", queue);
	k->concurrency = l->concurrency;
	k->per_key = l->per_key;
	k->rate = l->rate;
	k->rate_us = l->rate_us;
	k->key_rate = l->key_rate;
	k->key_rate_us = l->key_rate_us;
}

static void
from_cache(const struct mq_limit_cache *k, struct limits *l)
{
	memset(l, 0, sizeof *l);
	l->concurrency = k->concurrency;
	l->per_key = k->per_key;
	l->rate = k->rate;
	l->rate_us = k->rate_us;
	l->key_rate = k->key_rate;
	l->key_rate_us = k->key_rate_us;
	l->limited = 1;
}

/* Whether the settings the candidates' head carried (text: paused,
 * then the six numbers, as read_settings reads them) are l. */
static int
same_settings(const struct cand_settings *s, const struct limits *l)
{
	unsigned long long v[7];
	uint64_t rate = 0, rate_us = 0, krate = 0, krate_us = 0;

	if (s->none || sscanf(s->text, "%llu %llu %llu %llu %llu %llu %llu",
	    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
		return 0;
	if (v[3] && v[4]) {	/* half a rate: none (read_settings) */
		rate = v[3];
		rate_us = mq__window_us(v[4]);
	}
	if (v[5] && v[6]) {
		krate = v[5];
		krate_us = mq__window_us(v[6]);
	}
	return v[0] == 0 && v[1] == l->concurrency && v[2] == l->per_key &&
	    rate == l->rate && rate_us == l->rate_us &&
	    krate == l->key_rate && krate_us == l->key_rate_us;
}

/* The ticks of a gate holding more than rate (sql_ticks_prune), all of
 * those past it gone if none is in the window; t->rows less them. */
static enum mq_status
prune_ticks(struct mq_conn *c, const char *queue, const char *key,
    unsigned long klen, uint32_t rate, int64_t window, struct ticks *t)
{
	MYSQL_BIND in[4];
	unsigned long qlen;
	uint64_t cap = rate, high = 1, deleted;
	struct mq_error saved;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_ticks_high)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_blob(&in[1], key ? key : "", &klen);
	mq__bind_u64(&in[2], &cap);
	mq__bind_i64(&in[3], &window);
	rc = mq__execute(c, st, in, "cannot claim (rate's ticks)");
	if (rc == MQ_OK)
		rc = fetch_count(c, st, &high, "cannot claim (rate's ticks)");
	mq__release(c, st);
	if (rc != MQ_OK || high > 0)
		return rc;
	saved = c->err;
	if ((st = mq__prepare(c, sql_ticks_prune)) == NULL)
		return c->err.status;
	rc = mq__execute(c, st, in, "cannot claim (rate's ticks)");
	deleted = rc == MQ_OK ? (uint64_t)mysql_stmt_affected_rows(st) : 0;
	mq__release(c, st);
	/* no DELETE granted: the ticks stay, read whole (slower, exact) */
	if (rc != MQ_OK && (c->err.db_errno == ER_TABLEACCESS_DENIED_ERROR ||
	    c->err.db_errno == ER_COLUMNACCESS_DENIED_ERROR)) {
		c->err = saved;
		return MQ_OK;
	}
	if (rc == MQ_OK && deleted <= t->rows)
		t->rows -= deleted;
	return rc;
}

/* The one row of a read of a gate's ticks into out; st released. */
static enum mq_status
ticks_row(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *in, MYSQL_BIND *out)
{
	enum mq_status rc = mq__execute(c, st, in,
	    "cannot claim (rate's ticks)");

	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0))
		rc = mq__dberr(c, st, "cannot claim (rate's ticks)");
	if (rc == MQ_OK)
		mysql_stmt_free_result(st);
	mq__release(c, st);
	return rc;
}

/* The gate's ticks (key NULL: the queue's) in the window of window_us,
 * as a claim of up to want jobs at rate needs them (sql_ticks_oldest);
 * every tick read where there are more than rate (sql_ticks_prune). */
static enum mq_status
read_ticks(struct mq_conn *c, const char *queue, const char *key,
    unsigned long key_len, uint32_t rate, uint64_t window_us, uint64_t want,
    struct ticks *t)
{
	MYSQL_BIND in[8], out[3];
	unsigned long qlen, klen = key ? key_len : 0;
	int64_t window = window_us > INT64_MAX ? INT64_MAX : (int64_t)window_us;
	uint64_t out_of_window = 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_ticks_oldest)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_blob(&in[1], key ? key : "", &klen);
	mq__bind_i64(&in[2], &window);
	mq__bind_i64(&in[3], &window);
	mq__bind_i64(&in[4], &window);
	mq__bind_str(&in[5], queue, &qlen);
	mq__bind_blob(&in[6], key ? key : "", &klen);
	mq__bind_u64(&in[7], &want);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &t->rows);
	mq__bind_u64(&out[1], &out_of_window);
	mq__bind_i64(&out[2], &t->frees_in);
	if ((rc = ticks_row(c, st, in, out)) != MQ_OK)
		return rc;
	t->next_n = t->rows;
	if (t->rows <= rate) {
		t->used = t->rows - (out_of_window < t->rows ? out_of_window :
		    t->rows);
		return MQ_OK;
	}
	/* more than rate: all of them counted, then those past it that
	 * are out of the window gone */
	if ((st = mq__prepare(c, mq__sql_ticks)) == NULL)
		return c->err.status;
	mq__bind_i64(&in[0], &window);
	mq__bind_i64(&in[1], &window);
	mq__bind_i64(&in[2], &window);
	mq__bind_str(&in[3], queue, &qlen);
	mq__bind_blob(&in[4], key ? key : "", &klen);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &t->rows);
	mq__bind_u64(&out[1], &t->used);
	mq__bind_i64(&out[2], &t->frees_in);
	if ((rc = ticks_row(c, st, in, out)) != MQ_OK)
		return rc;
	return prune_ticks(c, queue, key, klen, rate, window, t);
}

/* A rate held the claim back: it may try again once the gate's oldest
 * tick in the window leaves it (the soonest of the gates it met). */
static void
retry_in(struct mq_conn *c, const struct ticks *t)
{
	int64_t us = t->frees_in > 0 ? t->frees_in : 1000;

	if (c->limit_retry_us == 0 || us < c->limit_retry_us)
		c->limit_retry_us = us;
	c->limit_held = 1;
}

/* m claims through the gate: their ticks, new ones while the gate has
 * fewer than rate (numbered on), the others written over its oldest
 * (out of the window: the caller's room kept used + m within rate, and
 * the gate's rows beyond used are older than the window). Two
 * statements whatever m (more new ones than TICKS_A_STATEMENT: more):
 * a claim of 200 jobs at a rate of 200 wrote 200 before. */
static enum mq_status
take_ticks(struct mq_conn *c, const char *queue, const char *key,
    unsigned long key_len, uint32_t rate, struct ticks *t, uint64_t m)
{
	MYSQL_BIND in[3], *b;
	unsigned long qlen, klen = key ? key_len : 0;
	uint64_t fresh = t->rows < rate ? rate - t->rows : 0, over, *nums;
	size_t i, part;
	MYSQL_STMT *st;
	enum mq_status rc = MQ_OK;
	char *sql;

	if (fresh > m)
		fresh = m;
	over = m - fresh;
	while (rc == MQ_OK && fresh > 0) {
		part = fresh < TICKS_A_STATEMENT ? (size_t)fresh :
		    TICKS_A_STATEMENT;
		sql = mq__sql_list(sql_ticks_new, sql_tick_part, part, "");
		b = calloc(3 * part, sizeof *b);
		nums = calloc(part, sizeof *nums);
		if (sql == NULL || b == NULL || nums == NULL)
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		for (i = 0; rc == MQ_OK && i < part; i++) {
			nums[i] = t->next_n + i;
			mq__bind_str(&b[3 * i], queue, &qlen);
			mq__bind_blob(&b[3 * i + 1], key ? key : "", &klen);
			mq__bind_u64(&b[3 * i + 2], &nums[i]);
		}
		if (rc == MQ_OK) {
			st = part <= 4 ? mq__prepare_keyed(c, sql_ticks_new,
			    part, sql) : mq__prepare_once(c, sql);
			if (st == NULL)
				rc = c->err.status;
			else {
				rc = mq__execute(c, st, b,
				    "cannot claim (rate's tick)");
				mq__release(c, st);
			}
		}
		free(sql);
		free(b);
		free(nums);
		if (rc == MQ_OK) {
			t->rows += part;
			t->next_n += part;
			t->used += part;
			fresh -= part;
		}
	}
	if (rc == MQ_OK && over > 0) {
		if ((st = mq__prepare(c, sql_ticks_over)) == NULL)
			return c->err.status;
		mq__bind_str(&in[0], queue, &qlen);
		mq__bind_blob(&in[1], key ? key : "", &klen);
		mq__bind_u64(&in[2], &over);
		rc = mq__execute(c, st, in, "cannot claim (rate's tick)");
		mq__release(c, st);
		if (rc == MQ_OK)
			t->used += over;
	}
	return rc;
}

/* Counts the live leases of queue (key NULL), or of one key, into *live. */
static enum mq_status
count_live(struct mq_conn *c, const char *queue, const char *key,
    unsigned long key_len, uint64_t *live)
{
	MYSQL_BIND in[2];
	unsigned long qlen, klen = key ? key_len : 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, key ? mq__sql_live_key : mq__sql_live_queue)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	if (key)
		mq__bind_blob(&in[1], key, &klen);
	rc = mq__execute(c, st, in, "cannot claim (limit's count)");
	if (rc == MQ_OK)
		rc = fetch_count(c, st, live, "cannot claim (limit's count)");
	mq__release(c, st);
	return rc;
}

/* Some chosen candidates, locked together by primary key if they are
 * still due and their queue not paused (another consumer's: skipped;
 * where the server has no SKIP LOCKED, waited for, then found leased),
 * appended to cl->jobs in claim order. */
#define LOCK_IDS \
    "SELECT id, queue, priority, attempts, payload FROM `{{TABLE}}`" \
    " FORCE INDEX (PRIMARY) WHERE " \
    MQ_SQL_CLAIMABLE_LIMITED("{{TABLE}}", "?") " AND id IN ("
static const char sql_lock_ids[] = LOCK_IDS;
static const char sql_lock_ids_wait[] = LOCK_IDS "";
static const char sql_lock_ids_tail[] =
    ") ORDER BY priority, available_at, id FOR UPDATE SKIP LOCKED";
static const char sql_lock_ids_wait_tail[] =
    ") ORDER BY priority, available_at, id FOR UPDATE";

static enum mq_status
fetch_locked(struct mq_conn *c, MYSQL_STMT *st, void *cl)
{
	return mq__claim_fetch(c, st, cl);
}

static enum mq_status
lock_ids(struct mq_conn *c, struct claim *cl, const char *queue,
    const uint64_t *ids, size_t n, int skip_locked)
{
	MYSQL_BIND pre[2];
	unsigned long qlen;

	mq__bind_str(&pre[0], queue, &qlen);
	mq__bind_str(&pre[1], queue, &qlen);
	return mq__query_ids(c, "cannot claim", skip_locked ? sql_lock_ids :
	    sql_lock_ids_wait, skip_locked ? sql_lock_ids_tail :
	    sql_lock_ids_wait_tail, pre, 2, ids, n, fetch_locked, cl);
}

/* The keys of a claim's candidates, each once, in byte order: the order
 * every claim writes their gates in, so that two claims that share keys
 * wait for each other instead of deadlocking. */
struct keyset {
	const struct candidate **key;	/* one candidate of each key */
	size_t n;
	uint64_t *live;			/* its live leases */
	struct ticks *ticks;		/* its rate's ticks */
	uint64_t *taken;		/* its jobs this claim holds */
	uint64_t *pending;		/* of those, chosen in this round
					 * and not locked yet (no tick yet) */
	uint64_t *took;			/* locked in this round (their ticks
					 * to take) */
};

static int
key_order(const void *a, const void *b)
{
	const struct candidate *x = *(const struct candidate *const *)a;
	const struct candidate *y = *(const struct candidate *const *)b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int r = memcmp(x->key, y->key, n);

	if (r)
		return r;
	return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

static size_t
key_index(const struct keyset *ks, const struct candidate *cand)
{
	size_t lo = 0, hi = ks->n, mid;
	int r;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		r = key_order(&cand, &ks->key[mid]);
		if (r == 0)
			return mid;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return ks->n;	/* not reached: every key is in the set */
}

/* A claim whose candidates other consumers all took begins again this
 * many times at most (mq__claim_limited). */
#define LOST_AGAIN 2

/* Statements over this many keys at most are kept prepared (each
 * count a statement of the connection's cache). */
#define KEPT_KEYS 4

/* A statement over the key set: head, then per key part (joined by
 * ","), then tail; binds pre, then each key; run, its rows read by
 * read (if not NULL). */
static enum mq_status
over_keys(struct mq_conn *c, const struct keyset *ks, const char *head,
    const char *part, const char *tail, const char *queue,
    const MYSQL_BIND *pre, size_t npre, size_t per, mq__read_fn read,
    void *ctx, const char *what)
{
	size_t i, j, nb;
	char *sql = mq__sql_list(head, part, ks->n, tail);
	MYSQL_BIND *b = calloc(npre + ks->n * per, sizeof *b);
	unsigned long *len = calloc(ks->n + 1, sizeof *len), qlen;
	MYSQL_STMT *st = NULL;
	enum mq_status rc;

	if (sql == NULL || b == NULL || len == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if (npre)
		memcpy(b, pre, npre * sizeof *b);
	for (nb = npre, i = 0; i < ks->n; i++) {
		len[i] = ks->key[i]->key_len;
		/* per 2: the queue, then the key (the gates' VALUES) */
		for (j = 0; j < per; j++, nb++)
			if (j + 1 < per)
				mq__bind_str(&b[nb], queue, &qlen);
			else
				mq__bind_blob(&b[nb], ks->key[i]->key, &len[i]);
	}
	/* a write of a few keys is kept prepared (the gates: a hot key's
	 * claims write one, a round trip each saved); reads never are */
	st = ks->n <= KEPT_KEYS ? mq__prepare_keyed(c, head, ks->n, sql) :
	    mq__prepare_once(c, sql);
	if (st == NULL) {
		rc = c->err.status;
		goto out;
	}
	rc = mq__execute(c, st, b, what);
	if (rc == MQ_OK && read)
		rc = read(c, st, ctx);
	mq__release(c, st);
out:
	free(sql);
	free(b);
	free(len);
	return rc;
}

static const char sql_gates_head[] =
    "INSERT INTO `{{TABLE}}_gates` (queue, gate_key, claims) VALUES ";
static const char sql_gates_part[] = "(?, ?, 1)";
static const char sql_gates_tail[] =
    " ON DUPLICATE KEY UPDATE claims = claims + 1";

/* One key's gate written and its live leases counted, in one statement
 * (MariaDB 10.5+: INSERT ... RETURNING): the count is a subquery of the
 * row written, correlated to it, so it reads after the gate's row lock
 * is had (a claim that held it has committed its leases: they are
 * counted), as the count statement after the write does; a round trip
 * less a claim of one key (a hot key's claims, one a job). One key
 * only: with several, the rows' counts would share one statement's
 * read. Binds the queue and the key. */
static const char sql_gate_live[] =
    "INSERT INTO `{{TABLE}}_gates` (queue, gate_key, claims)"
    " VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1"
    " RETURNING (SELECT COUNT(*) FROM `{{TABLE}}` AS l FORCE INDEX (held)"
    " WHERE l.queue = `{{TABLE}}_gates`.queue"
    " AND l.job_key = `{{TABLE}}_gates`.gate_key AND l.state = 'leased'"
    " AND l.leased_until >= " MQ_SQL_NOW ")";

static const char sql_live_keys_head[] =
    "SELECT job_key, COUNT(*) FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND " MQ_SQL_LEASE_LIVE " AND job_key IN (";
static const char sql_keys_part[] = "?";
static const char sql_live_keys_tail[] = ") GROUP BY job_key";

static const char sql_ticks_keys_head[] =
    "SELECT gate_key, COUNT(*), COALESCE(SUM(at > " MQ_SQL_NOW_MINUS_US
    "), 0), COALESCE(" MQ_SQL_US_FROM_NOW("MIN(IF(at > "
    MQ_SQL_NOW_MINUS_US ", at, NULL)) + INTERVAL ? MICROSECOND") ", 0)"
    " FROM `{{TABLE}}_ticks` FORCE INDEX (PRIMARY)"
    " WHERE queue = ? AND gate_key IN (";
static const char sql_ticks_keys_tail[] = ") GROUP BY gate_key";

/* Reads rows of (key, numbers...) into the key set's arrays. */
struct key_rows {
	struct keyset *ks;
	int ticks;	/* rows of ticks, else of live leases */
};

static enum mq_status
read_key_rows(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	struct key_rows *kr = ctx;
	struct candidate probe;
	const struct candidate *pp = &probe;
	MYSQL_BIND out[4];
	uint64_t a = 0, u = 0;
	int64_t f = 0;
	unsigned long klen;
	mq__bool knull;
	size_t i;
	int r;

	memset(out, 0, sizeof out);
	mq__bind_text_out(&out[0], probe.key, sizeof probe.key, &klen, &knull);
	mq__bind_u64(&out[1], &a);
	mq__bind_u64(&out[2], &u);
	mq__bind_i64(&out[3], &f);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot claim (limit's count)");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		if (knull)
			continue;
		probe.key_len = klen < MQ_KEY_MAX ? klen : MQ_KEY_MAX;
		probe.has_key = 1;
		i = key_index(kr->ks, pp);
		if (i == kr->ks->n)
			continue;
		if (kr->ticks) {
			kr->ks->ticks[i].rows = a;
			kr->ks->ticks[i].next_n = a;
			kr->ks->ticks[i].used = u;
			kr->ks->ticks[i].frees_in = f;
		} else {
			kr->ks->live[i] = a;
		}
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot claim (limit's count)");
	return MQ_OK;
}

/* The gate of one key written, and its live leases read (sql_gate_live)
 * into *live. */
static enum mq_status
gate_live_one(struct mq_conn *c, const char *queue,
    const struct candidate *key, uint64_t *live)
{
	MYSQL_BIND in[2];
	unsigned long qlen, klen = key->key_len;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_gate_live)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_blob(&in[1], key->key, &klen);
	rc = mq__execute(c, st, in, "cannot claim (limit's gate)");
	if (rc == MQ_OK)
		rc = fetch_count(c, st, live, "cannot claim (limit's count)");
	mq__release(c, st);
	return rc;
}

/* The key set of the candidates; their gates written (in key order),
 * then their live leases and ticks read, as the limits need. */
static enum mq_status
gate_keys(struct mq_conn *c, const char *queue, const struct limits *l,
    const struct candidate *cand, size_t n, struct keyset *ks)
{
	MYSQL_BIND pre[4];
	unsigned long qlen;
	int64_t window;
	struct key_rows kr = { ks, 0 };
	size_t i, k;
	enum mq_status rc;

	memset(ks, 0, sizeof *ks);
	ks->key = calloc(n ? n : 1, sizeof *ks->key);
	ks->live = calloc(n ? n : 1, sizeof *ks->live);
	ks->ticks = calloc(n ? n : 1, sizeof *ks->ticks);
	ks->taken = calloc(n ? n : 1, sizeof *ks->taken);
	ks->pending = calloc(n ? n : 1, sizeof *ks->pending);
	ks->took = calloc(n ? n : 1, sizeof *ks->took);
	if (!ks->key || !ks->live || !ks->ticks || !ks->taken ||
	    !ks->pending || !ks->took)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if (!l->per_key && !l->key_rate)
		return MQ_OK;	/* no key is counted */
	for (i = 0; i < n; i++)
		if (cand[i].has_key)
			ks->key[ks->n++] = &cand[i];
	qsort(ks->key, ks->n, sizeof *ks->key, key_order);
	for (i = k = 0; i < ks->n; i++)
		if (k == 0 || key_order(&ks->key[i], &ks->key[k - 1]) != 0)
			ks->key[k++] = ks->key[i];
	ks->n = k;
	if (ks->n == 0)
		return MQ_OK;
	if (ks->n == 1 && l->per_key && c->returning) {
		if ((rc = gate_live_one(c, queue, ks->key[0], &ks->live[0])) !=
		    MQ_OK)
			return rc;
	} else if ((rc = over_keys(c, ks, sql_gates_head, sql_gates_part,
	    sql_gates_tail, queue, NULL, 0, 2, NULL, NULL,
	    "cannot claim (limit's gate)")) != MQ_OK)
		return rc;
	mq__bind_str(&pre[0], queue, &qlen);
	if (l->per_key && !(ks->n == 1 && c->returning) &&
	    (rc = over_keys(c, ks, sql_live_keys_head,
	    sql_keys_part, sql_live_keys_tail, queue, pre, 1, 1,
	    read_key_rows, &kr, "cannot claim (limit's count)")) != MQ_OK)
		return rc;
	if (!l->key_rate)
		return MQ_OK;
	window = l->key_rate_us > INT64_MAX ? INT64_MAX :
	    (int64_t)l->key_rate_us;
	mq__bind_i64(&pre[0], &window);
	mq__bind_i64(&pre[1], &window);
	mq__bind_i64(&pre[2], &window);
	mq__bind_str(&pre[3], queue, &qlen);
	kr.ticks = 1;
	return over_keys(c, ks, sql_ticks_keys_head, sql_keys_part,
	    sql_ticks_keys_tail, queue, pre, 4, 1, read_key_rows, &kr,
	    "cannot claim (rate's ticks)");
}

static void
keyset_free(struct keyset *ks)
{
	free(ks->key);
	free(ks->live);
	free(ks->ticks);
	free(ks->taken);
	free(ks->pending);
	free(ks->took);
}

/* Whether the job of candidate k may run now, by its key's limits and
 * what this claim holds of the key. */
static int
key_allows(struct mq_conn *c, const struct limits *l, struct keyset *ks,
    const struct candidate *cand, size_t *ki)
{
	*ki = ks->n;
	if (!cand->has_key || (!l->per_key && !l->key_rate))
		return 1;
	*ki = key_index(ks, cand);
	if (l->per_key && ks->live[*ki] + ks->taken[*ki] >= l->per_key) {
		c->limit_held = 1;
		return 0;
	}
	if (l->key_rate &&
	    ks->ticks[*ki].used + ks->pending[*ki] >= l->key_rate) {
		retry_in(c, &ks->ticks[*ki]);
		return 0;
	}
	return 1;
}

enum mq_status
mq__claim_limited(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t want, int skip_locked, int *limited, int *paused)
{
	struct limits l;
	struct key_limits kl;
	struct candidate *cand = NULL;
	struct ticks qt = { 0, 0, 0, 0 };
	struct keyset ks;
	unsigned char *used = NULL;
	uint64_t live, room = want, need, *ids = NULL;
	size_t n = 0, k, j, nc, first, *kidx = NULL;
	enum mq_cand_held held = MQ_CAND_UNKNOWN;
	struct cand_settings seen;
	struct mq_limit_cache *kept;
	size_t lost = 0;
	uint64_t took = 0;
	enum mq_status rc;
	int known = 0;	/* l is what the settings read said now */

	*limited = 0;
	*paused = -1;
	memset(&ks, 0, sizeof ks);
again:
	/* (begun again: from nothing but the gates written) */
	room = want;
	memset(&qt, 0, sizeof qt);
	/* the settings this connection's last claim of the queue read, if
	 * it found the queue limited and not paused: the candidates' head
	 * says whether they still hold (a claim that stops before it reads
	 * them again) */
	if (!known && want > 0 && (kept = cached(c, queue)) != NULL) {
		from_cache(kept, &l);
	} else {
		if ((rc = read_settings(c, queue, &l)) != MQ_OK)
			return rc;
		known = 1;
		cache(c, queue, &l);
		*paused = l.paused;
	}
	*limited = l.limited ? 1 : 0;
	if (l.paused || !l.limited || want == 0)
		return MQ_OK;
	kl.per_key = l.per_key;
	kl.key_rate = l.key_rate;
	kl.key_rate_us = l.key_rate_us;
	if ((l.concurrency || l.rate) &&
	    (rc = mq__gate(c, queue, NULL, 0)) != MQ_OK)
		return rc;
	if (l.concurrency) {
		if ((rc = count_live(c, queue, NULL, 0, &live)) != MQ_OK)
			return rc;
		if (room > l.concurrency - (live < l.concurrency ? live :
		    l.concurrency))
			room = l.concurrency - (live < l.concurrency ? live :
			    l.concurrency);
	}
	if (l.rate && room > 0) {
		if ((rc = read_ticks(c, queue, NULL, 0, l.rate, l.rate_us,
		    room, &qt)) != MQ_OK)
			return rc;
		if (room > l.rate - (qt.used < l.rate ? qt.used : l.rate))
			room = l.rate - (qt.used < l.rate ? qt.used : l.rate);
		/* held back by the rate only if a job is due: else there is
		 * nothing to wait for (mq work --exit-when-empty exits) */
		if (room == 0 && !known) {
			known = 1;	/* held back by settings of before? */
			goto again;
		}
		if (room == 0 && (rc = mq__candidates(c, queue, &kl, 1, &cand,
		    &n, &held)) == MQ_OK && n > 0)
			retry_in(c, &qt);
		free(cand);
		cand = NULL;
		if (rc != MQ_OK)
			return rc;
	}
	if (room == 0 && !known) {
		known = 1;
		goto again;
	}
	if (room == 0)
		return note_held(c, queue, NULL);
	/* the jobs the caller needs (mq work: for its free process slots),
	 * less those it has from queues before: past the head only for
	 * those */
	need = cl->o->need && cl->o->need < cl->o->count ? cl->o->need :
	    cl->o->count;
	need = need > cl->n ? need - cl->n : 0;
	if ((rc = mq__candidates_settings(c, queue, &kl, room, need, &cand,
	    &n, &held, &seen)) != MQ_OK)
		goto out;
	/* settings of before, and the head says they changed (or it had
	 * no row to say it with: nothing is due, but a claim that ends
	 * here must have said whether the queue is paused): read again,
	 * and the claim begins again with them (the gates written so far
	 * stay written: a gate written twice is one more claim counted) */
	if (!known && (!seen.seen || !same_settings(&seen, &l))) {
		free(cand);
		cand = NULL;
		n = 0;
		held = MQ_CAND_UNKNOWN;
		known = 1;
		goto again;
	}
	*paused = 0;
	if (held == MQ_CAND_HELD)
		c->limit_held = 1;
	used = calloc(n ? n : 1, 1);
	ids = calloc(n ? n : 1, sizeof *ids);
	kidx = calloc(n ? n : 1, sizeof *kidx);
	if (used == NULL || ids == NULL || kidx == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = gate_keys(c, queue, &l, cand, n, &ks)) != MQ_OK)
		goto out;
	/* rounds: the candidates each limit allows, locked together; those
	 * other consumers took are passed over, and the next ones tried */
	for (;;) {
		for (k = nc = 0; k < n && nc < room; k++) {
			if (used[k] || !key_allows(c, &l, &ks, &cand[k],
			    &kidx[k]))
				continue;
			used[k] = 1;
			ids[nc++] = cand[k].id;
			if (kidx[k] < ks.n) {
				ks.taken[kidx[k]]++;
				ks.pending[kidx[k]]++;
			}
		}
		if (nc == 0)
			break;
		first = cl->n;
		if ((rc = lock_ids(c, cl, queue, ids, nc, skip_locked)) !=
		    MQ_OK)
			goto out;
		/* what was locked holds its key's slot; the rest not */
		for (k = 0; k < n; k++)
			if (used[k] == 1) {
				used[k] = 2;
				if (kidx[k] < ks.n)
					ks.pending[kidx[k]]--;
				for (j = first; j < cl->n; j++)
					if (cl->jobs[j].id == cand[k].id)
						break;
				if (j < cl->n) {
					mq__leased_key(c, cand[k].id, queue,
					    cand[k].has_key ? cand[k].key :
					    NULL, cand[k].key_len);
					room--;
					took++;
					if (kidx[k] < ks.n)
						ks.took[kidx[k]]++;
				} else {
					lost++;
					if (kidx[k] < ks.n)
						ks.taken[kidx[k]]--;
				}
			}
		/* the rates' ticks of the jobs locked: the queue's, each
		 * key's, a statement or two each */
		if (l.rate && took && (rc = take_ticks(c, queue, NULL, 0,
		    l.rate, &qt, took)) != MQ_OK)
			goto out;
		took = 0;
		for (j = 0; j < ks.n; j++) {
			if (ks.took[j] && l.key_rate && (rc = take_ticks(c,
			    queue, ks.key[j]->key, ks.key[j]->key_len,
			    l.key_rate, &ks.ticks[j], ks.took[j])) != MQ_OK)
				goto out;
			ks.took[j] = 0;
		}
		if (cl->n - first == nc || room == 0)
			break;
	}
out:
	keyset_free(&ks);
	free(cand);
	free(used);
	free(ids);
	free(kidx);
	/* the queue's window filled by this claim: the next claim may go
	 * through once its oldest tick leaves it (the whole window for a
	 * window that was empty), not at a waiter's next look (its backoff
	 * up to a second: 4 mq work at --rate 200/1s took 180 a window) */
	if (rc == MQ_OK && l.rate && qt.used >= l.rate) {
		int64_t us = qt.frees_in > 0 ? qt.frees_in :
		    l.rate_us > INT64_MAX ? INT64_MAX : (int64_t)l.rate_us;

		if (c->limit_retry_us == 0 || us < c->limit_retry_us)
			c->limit_retry_us = us;
	}
	/* nothing in hand, its candidates taken by other consumers while it
	 * waited for their gates, and more due jobs past them: the claim
	 * begins again (its transaction, twice at most: the gates go with
	 * it), else it says that jobs are there to take (mq work
	 * --exit-when-empty must not exit, a waiter looks again soon).
	 * Concurrent claims of one head all read the same candidates. */
	if (rc == MQ_OK && cl->n == 0 && lost > 0 &&
	    held != MQ_CAND_NONE_HELD) {
		if (c->limit_lost++ < LOST_AGAIN)
			return mq__fail(c, MQ_ERETRY, "cannot claim: other "
			    "consumers took the jobs it chose");
		c->limit_held = 1;
		return MQ_OK;
	}
	/* nothing taken, or fewer than wanted: held back, if a due job is
	 * left that a limit kept; the candidates' read knows, unless it
	 * did not read them all and others took what it offered */
	if (rc == MQ_OK && room > 0 && l.per_key && !c->limit_held &&
	    held == MQ_CAND_UNKNOWN)
		rc = note_held(c, queue, &l);
	return rc;
}

