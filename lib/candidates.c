/*
 * candidates.c: the due jobs a claim of a limited queue may try
 * (limits.c), in claim order, without walking the jobs its key limits
 * hold back.
 *
 * A key at its per-key limit, or whose rate window is full, holds its
 * due jobs back, and they may be many and first in claim order (100,000
 * jobs of one key pushed first). A read of the claim index that left
 * them out by a condition still walked each of them. Instead:
 *
 * The head: the first due jobs in claim order (the claim index, as far
 * as the LIMIT), each with its key's live leases and its key's claims
 * in the rate's window (an index dive a key, cached by the server for
 * the next row of the same key). A key's jobs beyond the room it has
 * are left out. This is enough whenever the head offers the claim what
 * it wants: the common case, one read.
 *
 * Past the head, only when it fell short and has more behind it: the
 * due jobs of the keys not used up, by the index held (queue, state,
 * job_key, ...), whose ready entries are in key order: the keys used up
 * are left out as ranges (job_key NOT IN (...)), never read, and the
 * rest sorted into claim order. What it costs is the jobs of the other
 * keys, not those held back. The head is a prefix of the due jobs in
 * claim order, so what is read past it comes after it: the candidates
 * stay in claim order (the jobs read twice are passed over by id).
 * Again while it falls short, each read leaving out the keys the last
 * used up, and asking for more rows than the last.
 *
 * No locks: the claim then writes the candidates' gates, counts their
 * live leases again (what admits it), and locks (limits.c). A key that
 * frees meanwhile waits for the next claim; one that fills is refused
 * there.
 */
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "sql_terms.h"

/* Binds per_key, key_rate and the rate's window. */
#define CAND_COLUMNS \
    "SELECT j.id, j.job_key," \
    " IF(? > 0 AND j.job_key IS NOT NULL, (SELECT COUNT(*)" \
    " FROM `{{TABLE}}` AS l FORCE INDEX (held) WHERE l.queue = j.queue" \
    " AND l.job_key = j.job_key AND " MQ_SQL_LEASE_LIVE "), 0)," \
    " IF(? > 0 AND j.job_key IS NOT NULL, (SELECT COUNT(*)" \
    " FROM `{{TABLE}}_ticks` AS k FORCE INDEX (oldest)" \
    " WHERE k.queue = j.queue AND k.gate_key = j.job_key" \
    " AND k.at > " MQ_SQL_NOW_MINUS_US "), 0)"
#define CAND_ORDER " ORDER BY priority, available_at, id LIMIT ?"

/* The head (binds the columns', then the queue twice and the limit),
 * each row with the queue's settings (a constant subquery, evaluated
 * once): a claim that used those its connection read before learns
 * here, without a statement of its own, whether they still hold
 * (limits.c). */
static const char sql_head[] =
    CAND_COLUMNS ", (SELECT CONCAT_WS(' ', paused, IFNULL(concurrency, 0),"
    " IFNULL(per_key, 0), IFNULL(rate, 0), IFNULL(rate_us, 0),"
    " IFNULL(key_rate, 0), IFNULL(key_rate_us, 0))"
    " FROM `{{TABLE}}_queues` WHERE queue = ?)"
    " FROM `{{TABLE}}` AS j FORCE INDEX (claim)"
    " WHERE " MQ_SQL_DUE_ROW("?") CAND_ORDER;

/* Past the head: the columns', the queue, each key left out, the
 * limit. */
static const char sql_past_head[] =
    CAND_COLUMNS " FROM `{{TABLE}}` AS j FORCE INDEX (held)"
    " WHERE " MQ_SQL_DUE_ROW("?") " AND (job_key IS NULL OR job_key"
    " NOT IN (";
static const char sql_past_tail[] = "))" CAND_ORDER;

/* Candidates per job wanted (some are refused when the claim counts
 * again, or taken by other consumers first). Each read past the head
 * asks for GROWTH times the last's rows: a read that a key used up
 * fills is not cheaper for a smaller LIMIT (the server reads and sorts
 * the keys' due jobs either way), so few reads pass many such keys. */
#define PER_JOB 4
#define SPARE 16
#define GROWTH 4
/* Keys left out by a read past the head, at most: a statement of tens
 * of thousands of parameters stalls (its prepare's answer and its
 * execution's parameters, sent together, fill both directions of the
 * socket) and 65,535 is the protocol's bound. Those not left out are
 * read again and passed over here: slower, never wrong. */
#define KEYS_OUT_MAX 1024
#define LIMIT_MAX (UINT32_MAX / (GROWTH + 1))

/* What a key may still give this claim, and what it gave. */
struct key_room {
	char key[MQ_KEY_MAX + 1];
	unsigned long len;
	uint64_t room, given;
};

struct reading {
	const struct key_limits *kl;
	struct candidate *cand;
	size_t n, cap;
	uint64_t *ids;		/* of cand, sorted (by sort_ids) */
	size_t nids;
	struct key_room *keys;	/* sorted by key */
	size_t nkeys, keys_cap;
	uint64_t offered;	/* jobs the candidates may give */
	int passed;		/* a due job was passed over for its key */
	uint64_t enough;	/* offered beyond which rows are not kept */
	size_t rows;		/* rows the last read returned */
	uint32_t limit;		/* and its limit */
	struct cand_settings *settings;	/* the head's, if asked */
};

static int
cmp_bytes(const char *a, unsigned long al, const char *b, unsigned long bl)
{
	int r = memcmp(a, b, al < bl ? al : bl);

	return r ? r : al < bl ? -1 : al > bl;
}

/* The key's entry, added (room from live and used) if new; NULL: out of
 * memory. */
static struct key_room *
key_room(struct reading *rd, const char *key, unsigned long len,
    uint64_t live, uint64_t used)
{
	const struct key_limits *kl = rd->kl;
	size_t lo = 0, hi = rd->nkeys, mid;
	struct key_room *k, *grown;
	uint64_t room = UINT64_MAX;
	int r;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		k = &rd->keys[mid];
		if ((r = cmp_bytes(key, len, k->key, k->len)) == 0)
			return k;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (rd->nkeys == rd->keys_cap) {
		rd->keys_cap = rd->keys_cap ? 2 * rd->keys_cap : 64;
		if ((grown = realloc(rd->keys, rd->keys_cap *
		    sizeof *grown)) == NULL)
			return NULL;
		rd->keys = grown;
	}
	memmove(&rd->keys[lo + 1], &rd->keys[lo],
	    (rd->nkeys - lo) * sizeof *rd->keys);
	rd->nkeys++;
	k = &rd->keys[lo];
	memcpy(k->key, key, len);
	k->len = len;
	if (kl->per_key)
		room = kl->per_key - (live < kl->per_key ? live : kl->per_key);
	if (kl->key_rate && room > kl->key_rate - (used < kl->key_rate ?
	    used : kl->key_rate))
		room = kl->key_rate - (used < kl->key_rate ? used :
		    kl->key_rate);
	k->room = room;
	k->given = 0;
	return k;
}

static int
seen(const struct reading *rd, uint64_t id)
{
	size_t lo = 0, hi = rd->nids, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (rd->ids[mid] == id)
			return 1;
		if (rd->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int
id_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ids of the candidates so far, sorted, for seen(). */
static int
sort_ids(struct reading *rd)
{
	uint64_t *ids = realloc(rd->ids, (rd->n ? rd->n : 1) * sizeof *ids);
	size_t i;

	if (ids == NULL)
		return -1;
	rd->ids = ids;
	for (i = 0; i < rd->n; i++)
		ids[i] = rd->cand[i].id;
	qsort(ids, rd->n, sizeof *ids, id_order);
	rd->nids = rd->n;
	return 0;
}

/* Adds a row: a job not seen yet, of no key or of a key with room. */
static enum mq_status
add_row(struct mq_conn *c, struct reading *rd, uint64_t id, const char *key,
    unsigned long klen, int has_key, uint64_t live, uint64_t used)
{
	struct key_room *k = NULL;
	struct candidate *grown;

	if (rd->offered >= rd->enough || seen(rd, id))
		return MQ_OK;
	if (has_key) {
		if ((k = key_room(rd, key, klen, live, used)) == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		if (k->given >= k->room) {
			rd->passed = 1;
			return MQ_OK;
		}
	}
	if (rd->n == rd->cap) {
		rd->cap = rd->cap ? 2 * rd->cap : 64;
		if ((grown = realloc(rd->cand, rd->cap * sizeof *grown)) ==
		    NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		rd->cand = grown;
	}
	grown = &rd->cand[rd->n++];
	grown->id = id;
	grown->has_key = has_key;
	grown->key_len = has_key ? klen : 0;
	memcpy(grown->key, key, grown->key_len);
	grown->key[grown->key_len] = '\0';
	if (k)
		k->given++;
	rd->offered++;
	return MQ_OK;
}

/* Reads the rows of a read of candidates (head: with the settings). */
static enum mq_status
read_rows(struct mq_conn *c, MYSQL_STMT *st, struct reading *rd, int head)
{
	MYSQL_BIND out[5];
	uint64_t id, live, used;
	char key[MQ_KEY_MAX + 1], set[MQ_CAND_SETTINGS];
	unsigned long klen, slen = 0;
	mq__bool knull, snull = 1;
	enum mq_status rc = MQ_OK;
	int r;

	rd->rows = 0;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_text_out(&out[1], key, sizeof key, &klen, &knull);
	mq__bind_u64(&out[2], &live);
	mq__bind_u64(&out[3], &used);
	mq__bind_text_out(&out[4], set, sizeof set - 1, &slen, &snull);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot claim");
	while ((r = mysql_stmt_fetch(st)) != MYSQL_NO_DATA) {
		if (r == 1)
			return mq__dberr(c, st, "cannot claim");
		if (head && rd->rows == 0 && rd->settings) {
			rd->settings->seen = 1;
			rd->settings->none = snull;
			if (slen >= sizeof set)
				slen = sizeof set - 1;
			memcpy(rd->settings->text, set, snull ? 0 : slen);
			rd->settings->text[snull ? 0 : slen] = '\0';
		}
		rd->rows++;
		if (rc == MQ_OK)
			rc = add_row(c, rd, id, key, knull ? 0 : klen <
			    MQ_KEY_MAX ? klen : MQ_KEY_MAX, !knull, live,
			    used);
	}
	return rc;
}

/* Binds the columns' parameters into b[0..2]. */
static void
bind_columns(const struct reading *rd, MYSQL_BIND *b, uint32_t *per,
    uint32_t *rate, int64_t *window)
{
	*per = rd->kl->per_key;
	*rate = rd->kl->key_rate;
	*window = rd->kl->key_rate_us > INT64_MAX ? INT64_MAX :
	    (int64_t)rd->kl->key_rate_us;
	mq__bind_u32(&b[0], per);
	mq__bind_u32(&b[1], rate);
	mq__bind_i64(&b[2], window);
}

static enum mq_status
read_head(struct mq_conn *c, const char *queue, struct reading *rd,
    uint32_t limit)
{
	MYSQL_BIND in[6];
	unsigned long qlen;
	uint32_t per, rate;
	int64_t window;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_head)) == NULL)
		return c->err.status;
	bind_columns(rd, in, &per, &rate, &window);
	mq__bind_str(&in[3], queue, &qlen);
	mq__bind_str(&in[4], queue, &qlen);
	mq__bind_u32(&in[5], &limit);
	rd->limit = limit;
	rc = mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK)
		rc = read_rows(c, st, rd, 1);
	mq__release(c, st);
	return rc;
}

/* The due jobs past the keys used up (out: how many), in claim order. */
static enum mq_status
read_past(struct mq_conn *c, const char *queue, struct reading *rd,
    size_t out, uint32_t limit)
{
	size_t i, j;
	char *sql = mq__sql_list(sql_past_head, "?", out, sql_past_tail);
	MYSQL_BIND *in = calloc(out + 5, sizeof *in);
	unsigned long qlen;
	uint32_t per, rate;
	int64_t window;
	MYSQL_STMT *st;
	enum mq_status rc;

	if (sql == NULL || in == NULL) {
		free(sql);
		free(in);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	bind_columns(rd, in, &per, &rate, &window);
	mq__bind_str(&in[3], queue, &qlen);
	for (i = j = 0; i < rd->nkeys && j < out; i++)
		if (rd->keys[i].given >= rd->keys[i].room)
			mq__bind_blob(&in[4 + j++], rd->keys[i].key,
			    &rd->keys[i].len);
	mq__bind_u32(&in[4 + j], &limit);
	rd->limit = limit;
	if ((st = mq__prepare_once(c, sql)) == NULL)
		rc = c->err.status;
	else {
		rc = mq__execute(c, st, in, "cannot claim");
		if (rc == MQ_OK)
			rc = read_rows(c, st, rd, 0);
		mq__release(c, st);
	}
	free(sql);
	free(in);
	return rc;
}

enum mq_status
mq__candidates(struct mq_conn *c, const char *queue,
    const struct key_limits *kl, uint64_t room, struct candidate **cand,
    size_t *n, enum mq_cand_held *held)
{
	return mq__candidates_settings(c, queue, kl, room, room, cand, n,
	    held, NULL);
}

enum mq_status
mq__candidates_settings(struct mq_conn *c, const char *queue,
    const struct key_limits *kl, uint64_t room, uint64_t need,
    struct candidate **cand, size_t *n, enum mq_cand_held *held,
    struct cand_settings *s)
{
	struct reading rd;
	uint32_t limit = room < (LIMIT_MAX - SPARE) / PER_JOB ?
	    (uint32_t)room * PER_JOB + SPARE : LIMIT_MAX;
	size_t out, last_out = 0, i;
	enum mq_status rc;

	memset(&rd, 0, sizeof rd);
	if (s)
		memset(s, 0, sizeof *s);
	rd.settings = s;
	rd.kl = kl;
	rd.enough = limit;
	rc = read_head(c, queue, &rd, limit);
	/* past the head: while the candidates fall short, and the last
	 * read was full (more behind it). Each read leaves out at least
	 * one key more: it had more new rows than the room it lacked, so
	 * it passed over some, of keys it used up. */
	if (need > room)
		need = room;
	while (rc == MQ_OK && rd.offered < need && rd.rows >= rd.limit) {
		for (out = i = 0; i < rd.nkeys; i++)
			out += rd.keys[i].given >= rd.keys[i].room;
		if (out == last_out)
			break;	/* (not reached: see above) */
		last_out = out;
		if (sort_ids(&rd) != 0) {
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
			break;
		}
		/* the jobs of the keys read before come again: room for
		 * them */
		limit = rd.limit < (LIMIT_MAX - rd.n) / GROWTH ?
		    rd.limit * GROWTH + (uint32_t)rd.n : LIMIT_MAX;
		rc = read_past(c, queue, &rd, out < KEYS_OUT_MAX ? out :
		    KEYS_OUT_MAX, limit);
		if (limit == LIMIT_MAX)
			break;
	}
	free(rd.ids);
	free(rd.keys);
	if (rc != MQ_OK) {
		free(rd.cand);
		rd.cand = NULL;
		rd.n = 0;
	}
	*cand = rd.cand;
	*n = rd.n;
	/* the last read was short: it saw every due job left */
	*held = rd.passed ? MQ_CAND_HELD : rd.rows < rd.limit ?
	    MQ_CAND_NONE_HELD : MQ_CAND_UNKNOWN;
	return rc;
}
