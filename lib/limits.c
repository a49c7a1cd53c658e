/*
 * limits.c: the claim of a limited queue (mq-limit(1)): at most
 * concurrency jobs of the queue, per_key jobs of one key, hold a live
 * lease at once, whatever the consumers, hosts, ways of claiming and
 * Galera nodes.
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
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "internal.h"
#include "sql_terms.h"

/* The queue's settings (no row: not paused, no limits). */
static const char sql_settings[] =
    "SELECT paused, concurrency, per_key FROM `{{TABLE}}_queues`"
    " WHERE queue = ?";

/* The gate of a queue ('') or of a key: written, so that the claims of
 * one gate are in one order (see above). */
static const char sql_gate[] =
    "INSERT INTO `{{TABLE}}_gates` (queue, gate_key, claims)"
    " VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1";

/* Live leases of the queue; of one key of it (the index held). */
static const char sql_live_queue[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND " MQ_SQL_LEASE_LIVE;
static const char sql_live_key[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` FORCE INDEX (held)"
    " WHERE queue = ? AND job_key = ? AND " MQ_SQL_LEASE_LIVE;

/* The candidates: due jobs in claim order, less those of keys whose
 * live leases reach per_key (the parameter; NULL: no per-key limit),
 * read without locks. The keys that are full: one read of the live
 * leases of the queue, evaluated once. */
static const char sql_candidates[] =
    "SELECT id, job_key FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE " MQ_SQL_DUE_ROW("?")
    " AND (job_key IS NULL OR ? IS NULL OR job_key NOT IN"
    " (SELECT job_key FROM `{{TABLE}}` FORCE INDEX (held)"
    "  WHERE queue = ? AND " MQ_SQL_LEASE_LIVE " AND job_key IS NOT NULL"
    "  GROUP BY job_key HAVING COUNT(*) >= ?))"
    " ORDER BY priority, available_at, id LIMIT ?";

/* One candidate, locked by primary key if it is still due and its queue
 * not paused (another consumer's: skipped; where the server has no SKIP
 * LOCKED, waited for, then found leased). */
#define LOCK_ONE \
    "SELECT id, queue, priority, attempts, payload FROM `{{TABLE}}`" \
    " FORCE INDEX (PRIMARY) WHERE id = ? AND " \
    MQ_SQL_CLAIMABLE_LIMITED("{{TABLE}}", "?") " FOR UPDATE"
static const char sql_lock_one[] = LOCK_ONE " SKIP LOCKED";
static const char sql_lock_one_wait[] = LOCK_ONE;

/* Candidates read per job wanted: the first of a key that is full in
 * this claim are passed over. */
#define CANDIDATES_PER_JOB 4
/* the job_key column's size */
#define KEY_MAX 255
#define CANDIDATES_SPARE 16

struct limits {
	int paused, limited;
	uint32_t concurrency, per_key;	/* 0: none */
};

struct candidate {
	uint64_t id;
	char key[KEY_MAX + 1];
	unsigned long key_len;
	int has_key;
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

static enum mq_status
read_settings(struct mq_conn *c, const char *queue, struct limits *l)
{
	MYSQL_BIND in[1], out[3];
	unsigned long qlen;
	int32_t paused = 0;
	uint32_t conc = 0, per = 0;
	mq__bool conc_null = 1, per_null = 1;
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
			mysql_stmt_free_result(st);
		}
	}
	mq__release(c, st);
	l->limited = l->concurrency || l->per_key;
	return rc;
}

/* Writes the gate of queue (key NULL: the queue's own), then counts the
 * live leases it stands for into *live. */
static enum mq_status
gate_and_count(struct mq_conn *c, const char *queue, const char *key,
    unsigned long key_len, uint64_t *live)
{
	MYSQL_BIND in[2];
	unsigned long qlen, klen = key ? key_len : 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_gate)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_blob(&in[1], key ? key : "", &klen);
	rc = mq__execute(c, st, in, "cannot claim (limit's gate)");
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, key ? sql_live_key : sql_live_queue)) == NULL)
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

static enum mq_status
read_candidates(struct mq_conn *c, const char *queue, const struct limits *l,
    uint32_t max, struct candidate *cand, size_t *n)
{
	MYSQL_BIND in[5], out[2];
	unsigned long qlen;
	uint32_t per = l->per_key, limit = max;
	uint64_t id;
	char key[KEY_MAX + 1];
	unsigned long klen;
	mq__bool knull;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r;

	*n = 0;
	if ((st = mq__prepare(c, sql_candidates)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	if (per)
		mq__bind_u32(&in[1], &per);
	else
		mq__bind_null(&in[1]);
	mq__bind_str(&in[2], queue, &qlen);
	mq__bind_u32(&in[3], &per);
	mq__bind_u32(&in[4], &limit);
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_text_out(&out[1], key, sizeof key, &klen, &knull);
	rc = mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot claim");
	while (rc == MQ_OK && (r = mysql_stmt_fetch(st)) != MYSQL_NO_DATA) {
		if (r == 1) {
			rc = mq__dberr(c, st, "cannot claim");
			break;
		}
		if (*n == max)
			continue;
		cand[*n].id = id;
		cand[*n].has_key = !knull;
		cand[*n].key_len = knull ? 0 :
		    klen < KEY_MAX ? klen : KEY_MAX;
		memcpy(cand[*n].key, key, cand[*n].key_len);
		cand[*n].key[cand[*n].key_len] = '\0';
		(*n)++;
	}
	mq__release(c, st);
	return rc;
}

/* Locks candidate id for the claim (appended to cl->jobs); *got 1 if it
 * was still there to take. */
static enum mq_status
lock_one(struct mq_conn *c, struct claim *cl, const char *queue,
    uint64_t id, int skip_locked, int *got)
{
	MYSQL_BIND in[3];
	unsigned long qlen;
	size_t before = cl->n;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, skip_locked ? sql_lock_one :
	    sql_lock_one_wait)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &id);
	mq__bind_str(&in[1], queue, &qlen);
	mq__bind_str(&in[2], queue, &qlen);
	rc = mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK)
		rc = mq__claim_fetch(c, st, cl);
	mq__release(c, st);
	*got = cl->n > before;
	return rc;
}

/* How many candidates before k, of k's key, are marked in mark. */
static uint64_t
same_key(const struct candidate *cand, const unsigned char *mark, size_t k)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < k; i++)
		if (mark[i] && cand[i].has_key &&
		    cand[i].key_len == cand[k].key_len &&
		    memcmp(cand[i].key, cand[k].key, cand[k].key_len) == 0)
			n++;
	return n;
}

enum mq_status
mq__claim_limited(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t want, int skip_locked, int *limited)
{
	struct limits l;
	struct candidate *cand = NULL;
	unsigned char *full = NULL, *taken = NULL;
	uint64_t live, room = want;
	uint32_t max;
	size_t n = 0, k;
	enum mq_status rc;
	int got = 0;

	*limited = 0;
	if ((rc = read_settings(c, queue, &l)) != MQ_OK)
		return rc;
	*limited = l.limited ? 1 : 0;
	if (l.paused || !l.limited || want == 0)
		return MQ_OK;
	if (l.concurrency) {
		if ((rc = gate_and_count(c, queue, NULL, 0, &live)) != MQ_OK)
			return rc;
		room = live >= l.concurrency ? 0 : l.concurrency - live;
		if (room > want)
			room = want;
		if (room == 0)
			return MQ_OK;
	}
	max = room < (UINT32_MAX - CANDIDATES_SPARE) / CANDIDATES_PER_JOB ?
	    (uint32_t)room * CANDIDATES_PER_JOB + CANDIDATES_SPARE : 4096;
	cand = calloc(max, sizeof *cand);
	full = calloc(max, 1);
	taken = calloc(max, 1);
	if (cand == NULL || full == NULL || taken == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = read_candidates(c, queue, &l, max, cand, &n)) != MQ_OK)
		goto out;
	for (k = 0; k < n && room > 0; k++) {
		if (cand[k].has_key && l.per_key) {
			if (same_key(cand, full, k))
				continue;
			if ((rc = gate_and_count(c, queue, cand[k].key,
			    cand[k].key_len, &live)) != MQ_OK)
				goto out;
			/* this claim's own jobs of the key are locked, not
			 * leased yet: counted here */
			live += same_key(cand, taken, k);
			if (live >= l.per_key) {
				full[k] = 1;
				continue;
			}
		}
		if ((rc = lock_one(c, cl, queue, cand[k].id, skip_locked,
		    &got)) != MQ_OK)
			goto out;
		if (got) {
			room--;
			taken[k] = 1;
		}
	}
out:
	free(cand);
	free(full);
	free(taken);
	return rc;
}
