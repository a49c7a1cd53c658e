/*
 * held.c: what the limits of a queue (mq-limit(1)) hold back now, for
 * operators: mq why's answer for one ready job (whose slots are full,
 * and who holds them), mq stats' count of a queue's due jobs held
 * back. A slot is a live lease (limits.c): these read the leases by
 * the index held (queue, state, job_key, leased_until), never the
 * queue's waiting jobs, but those of the keys that are full; a rate's
 * window is its gate's ticks (<table>_ticks, by queue and gate key).
 * Read only, no locks: the next claim may see otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

#define LIVE_OF_QUEUE \
    " FROM `{{TABLE}}` FORCE INDEX (held) WHERE queue = ? AND " \
    MQ_SQL_LEASE_LIVE
#define OF_KEY " AND job_key = ?"
#define HOLDERS \
    "SELECT id, leased_by, " MQ_SQL_ISO("leased_until") ", " \
    MQ_SQL_AGE_FROM_NOW("leased_until")
#define FIRST_TO_END " ORDER BY leased_until, id LIMIT ?"

/* Their holders, the lease that ends first first. */
const char mq__sql_holders_queue[] = HOLDERS LIVE_OF_QUEUE FIRST_TO_END;
const char mq__sql_holders_key[] = HOLDERS LIVE_OF_QUEUE OF_KEY FIRST_TO_END;

/* The due jobs of a queue of a set of keys (a derived table f of
 * column col): the keys first, then each key's ready jobs, one range of
 * the index held per key; the due time is the row's. */
#define HELD_OF(keys, col) \
    "SELECT COUNT(*) FROM (" keys ") f" \
    " STRAIGHT_JOIN `{{TABLE}}` j FORCE INDEX (held)" \
    " ON j.queue = ? AND j.state = 'ready' AND j.job_key = f." col \
    " WHERE " MQ_SQL_IS_DUE

/* The due jobs of a queue whose key is full: by its per-key limit
 * (binds the queue, per_key, the queue), by its key rate (the queue,
 * the window, key_rate, the queue), by either (a UNION: a key full by
 * both counts once; the queue, per_key, the queue, the window,
 * key_rate, the queue). */
const char mq__sql_held_by_keys[] =
    HELD_OF(MQ_SQL_FULL_KEYS("{{TABLE}}", "?", "?"), "job_key");
const char mq__sql_held_by_key_rate[] =
    HELD_OF(MQ_SQL_RATE_FULL_KEYS("{{TABLE}}", "?", "?"), "gate_key");
const char mq__sql_held_by_keys_or_rate[] =
    HELD_OF(MQ_SQL_FULL_KEYS("{{TABLE}}", "?", "?") " UNION "
    MQ_SQL_RATE_FULL_KEYS("{{TABLE}}", "?", "?"), "job_key");

/* Executes st (a count) with in, its answer into *n; releases st. */
static enum mq_status
run_count(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *in, uint64_t *n)
{
	MYSQL_BIND out[1];
	enum mq_status rc = mq__execute(c, st, in, "cannot count slots");
	int f;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], n);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot count slots");
	if (rc == MQ_OK && (f = mysql_stmt_fetch(st)) != 0 &&
	    f != MYSQL_DATA_TRUNCATED)
		rc = mq__dberr(c, st, "cannot count slots");
	mq__release(c, st);
	return rc;
}

/* Runs tmpl, a count, for queue (and key, if not NULL) into *n. */
static enum mq_status
count(struct mq_conn *c, const char *tmpl, const char *queue, size_t qlen,
    const unsigned char *key, size_t klen, uint64_t *n)
{
	MYSQL_BIND in[2];
	unsigned long ql = (unsigned long)qlen, kl = klen;
	MYSQL_STMT *st;

	*n = 0;
	if ((st = mq__prepare(c, tmpl)) == NULL)
		return c->err.status;
	mq__bind_name(&in[0], queue, &ql);
	if (key)
		mq__bind_blob(&in[1], key, &kl);
	return run_count(c, st, in, n);
}

/* The holders of s's slots in queue (of key, if not NULL) into s. */
static enum mq_status
holders(struct mq_conn *c, const char *queue, size_t qlen,
    const unsigned char *key, size_t klen, struct mq_slots *s)
{
	MYSQL_BIND in[3], out[4];
	unsigned long ql = (unsigned long)qlen, kl = klen, blen, ilen;
	uint32_t max = MQ_HOLDERS_MAX;
	struct mq_slot_holder h;
	mq__bool bnull, inull, unull;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f, k = 0;

	s->n = 0;
	st = mq__prepare(c, key ? mq__sql_holders_key : mq__sql_holders_queue);
	if (st == NULL)
		return c->err.status;
	mq__bind_name(&in[k++], queue, &ql);
	if (key)
		mq__bind_blob(&in[k++], key, &kl);
	mq__bind_u32(&in[k], &max);
	rc = mq__execute(c, st, in, "cannot read slots");
	memset(out, 0, sizeof out);
	memset(&h, 0, sizeof h);
	mq__bind_u64(&out[0], &h.id);
	mq__bind_text_out(&out[1], h.leased_by, sizeof h.leased_by, &blen,
	    &bnull);
	mq__bind_text_out(&out[2], h.leased_until, sizeof h.leased_until - 1,
	    &ilen, &inull);
	mq__bind_i64(&out[3], &h.lease_left_us);
	out[3].is_null = &unull;
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read slots");
	while (rc == MQ_OK && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		if (s->n == MQ_HOLDERS_MAX)
			continue;
		h.leased_by_len = bnull ? 0 : blen < sizeof h.leased_by ?
		    blen : sizeof h.leased_by;
		ilen = inull ? 0 : ilen < MQ_ISO_SIZE - 1 ? ilen :
		    MQ_ISO_SIZE - 1;
		h.leased_until[ilen] = '\0';
		if (unull)
			h.lease_left_us = 0;
		s->holder[s->n++] = h;
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot read slots");
	mq__release(c, st);
	return rc;
}

/* Counts the slots of limit s (s->limit set) held in queue (of key, if
 * not NULL) and, if they are all held, lists their holders; *full. */
static enum mq_status
slots(struct mq_conn *c, const char *queue, size_t qlen,
    const unsigned char *key, size_t klen, struct mq_slots *s, int *full)
{
	enum mq_status rc;

	rc = count(c, key ? mq__sql_live_key : mq__sql_live_queue, queue,
	    qlen, key, klen, &s->held);
	*full = rc == MQ_OK && s->held >= s->limit;
	if (*full)
		rc = holders(c, queue, qlen, key, klen, s);
	return rc;
}

/* Whether mq's claims read limits for this queue: a name mq could have
 * written (a claim's queues are checked so). */
static int
limits_apply(const char *queue, size_t len)
{
	return strlen(queue) == len && mq_valid_queue(queue);
}

/* The window of rate w (w->rate set) of queue's gate key (key NULL:
 * the queue's own); *full if it has no room. */
static enum mq_status
window(struct mq_conn *c, const char *queue, size_t qlen,
    const unsigned char *key, size_t klen, struct mq_rate_window *w,
    int *full)
{
	MYSQL_BIND in[5], out[3];
	unsigned long ql = (unsigned long)qlen, kl = key ? klen : 0;
	int64_t us = w->window_us > INT64_MAX ? INT64_MAX :
	    (int64_t)w->window_us;
	uint64_t rows = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	*full = 0;
	if ((st = mq__prepare(c, mq__sql_ticks)) == NULL)
		return c->err.status;
	mq__bind_i64(&in[0], &us);
	mq__bind_i64(&in[1], &us);
	mq__bind_i64(&in[2], &us);
	mq__bind_name(&in[3], queue, &ql);
	mq__bind_blob(&in[4], key ? (const void *)key : "", &kl);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &rows);
	mq__bind_u64(&out[1], &w->used);
	mq__bind_i64(&out[2], &w->next_us);
	rc = mq__execute(c, st, in, "cannot read a rate's window");
	if (rc == MQ_OK && (mysql_stmt_bind_result(st, out) != 0 ||
	    ((f = mysql_stmt_fetch(st)) != 0 && f != MYSQL_DATA_TRUNCATED)))
		rc = mq__dberr(c, st, "cannot read a rate's window");
	mq__release(c, st);
	*full = rc == MQ_OK && w->used >= w->rate;
	return rc;
}

enum mq_status
mq_job_held(struct mq_conn *c, const struct mq_job_info *j,
    struct mq_job_hold *h)
{
	struct mq_limits l;
	enum mq_status rc;

	memset(h, 0, sizeof *h);
	if (!limits_apply(j->queue, j->queue_len))
		return MQ_OK;
	if ((rc = mq_limits_get(c, j->queue, &l)) != MQ_OK)
		return rc;
	h->queue.limit = l.concurrency;
	if (l.concurrency && (rc = slots(c, j->queue, j->queue_len, NULL, 0,
	    &h->queue, &h->by_queue)) != MQ_OK)
		return rc;
	if (j->has_key)
		h->key.limit = l.per_key;
	if (h->key.limit && (rc = slots(c, j->queue, j->queue_len, j->key,
	    j->key_len, &h->key, &h->by_key)) != MQ_OK)
		return rc;
	h->queue_rate.rate = l.rate;
	h->queue_rate.window_us = l.rate_us;
	if (l.rate && l.rate_us && (rc = window(c, j->queue, j->queue_len,
	    NULL, 0, &h->queue_rate, &h->by_queue_rate)) != MQ_OK)
		return rc;
	if (j->has_key) {
		h->key_rate.rate = l.key_rate;
		h->key_rate.window_us = l.key_rate_us;
	}
	if (h->key_rate.rate && h->key_rate.window_us && (rc = window(c,
	    j->queue, j->queue_len, j->key, j->key_len, &h->key_rate,
	    &h->by_key_rate)) != MQ_OK)
		return rc;
	return MQ_OK;
}

/* The due jobs of queue whose key is full, by a per-key limit of per
 * or a key rate of rate per window_us (0: none) into *n. */
static enum mq_status
held_by_keys(struct mq_conn *c, const char *queue, size_t qlen,
    uint32_t per, uint32_t rate, uint64_t window_us, uint64_t *n)
{
	MYSQL_BIND in[6];
	unsigned long ql[3];
	int64_t us = window_us > INT64_MAX ? INT64_MAX : (int64_t)window_us;
	MYSQL_STMT *st;
	int k = 0, nq = 0;

	*n = 0;
	st = mq__prepare(c, !rate ? mq__sql_held_by_keys : !per ?
	    mq__sql_held_by_key_rate : mq__sql_held_by_keys_or_rate);
	if (st == NULL)
		return c->err.status;
	if (per) {
		ql[nq] = (unsigned long)qlen;
		mq__bind_name(&in[k++], queue, &ql[nq++]);
		mq__bind_u32(&in[k++], &per);
	}
	if (rate) {
		ql[nq] = (unsigned long)qlen;
		mq__bind_name(&in[k++], queue, &ql[nq++]);
		mq__bind_i64(&in[k++], &us);
		mq__bind_u32(&in[k++], &rate);
	}
	ql[nq] = (unsigned long)qlen;
	mq__bind_name(&in[k], queue, &ql[nq]);
	return run_count(c, st, in, n);
}

enum mq_status
mq__held_back(struct mq_conn *c, struct mq_queue_stats *q)
{
	struct mq_rate_window w;
	uint32_t key_rate = q->key_rate_us ? q->key_rate : 0;
	uint64_t live = 0;
	enum mq_status rc;
	int full = 0;

	q->held_back = 0;
	if (!limits_apply(q->queue, q->queue_len) || q->ready == 0)
		return MQ_OK;
	if (q->concurrency) {
		rc = count(c, mq__sql_live_queue, q->queue, q->queue_len,
		    NULL, 0, &live);
		if (rc != MQ_OK)
			return rc;
		full = live >= q->concurrency;
	}
	if (!full && q->rate && q->rate_us) {
		memset(&w, 0, sizeof w);
		w.rate = q->rate;
		w.window_us = q->rate_us;
		if ((rc = window(c, q->queue, q->queue_len, NULL, 0, &w,
		    &full)) != MQ_OK)
			return rc;
	}
	if (full) {	/* every due job waits */
		q->held_back = q->ready;
		return MQ_OK;
	}
	/* a key rate applies with its window */
	if (!q->per_key && !key_rate)
		return MQ_OK;
	rc = held_by_keys(c, q->queue, q->queue_len, q->per_key, key_rate,
	    q->key_rate_us, &q->held_back);
	/* one snapshot, but two clocks: never more than the due jobs */
	if (q->held_back > q->ready)
		q->held_back = q->ready;
	return rc;
}
