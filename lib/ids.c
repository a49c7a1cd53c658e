/*
 * ids.c: the pattern every batch operation shares: a locking read picks
 * rows by an index, then writes touch them by primary key only (secondary
 * key writes beside SKIP LOCKED readers deadlock, as Solid Queue found).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum mq_status
mq__select_ids(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *params,
    uint64_t *ids, unsigned char *flags, size_t max, size_t *n)
{
	enum mq_status rc;

	*n = 0;
	if ((rc = mq__execute(c, st, params, "cannot select jobs")) != MQ_OK)
		return rc;
	return mq__fetch_ids(c, st, ids, flags, max, n);
}

enum mq_status
mq__fetch_ids(struct mq_conn *c, MYSQL_STMT *st, uint64_t *ids,
    unsigned char *flags, size_t max, size_t *n)
{
	MYSQL_BIND out[2];
	uint64_t id;
	int32_t flag = 0;
	int r;

	*n = 0;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_i32(&out[1], &flag);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot select jobs");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		if (*n == max)
			continue;	/* drain; the LIMIT makes this rare */
		ids[*n] = id;
		if (flags)	/* a small number: 0 or 1, or a kind */
			flags[*n] = flag < 0 || flag > 255 ? 1 :
			    (unsigned char)flag;
		(*n)++;
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot select jobs");
	return MQ_OK;
}

size_t
mq__padded(size_t n)
{
	size_t p = 2;

	while (p < n)
		p *= 2;
	return p;
}

enum mq_status
mq__exec_ids(struct mq_conn *c, const char *head, const MYSQL_BIND *pre,
    size_t npre, const uint64_t *ids, size_t n, uint64_t *affected)
{
	return mq__exec_ids_tail(c, head, ")", pre, npre, ids, n, affected);
}

char *
mq__sql_list(const char *head, const char *part, size_t n, const char *tail)
{
	size_t hl = strlen(head), pl = strlen(part), i;
	char *sql = malloc(hl + n * (pl + 1) + strlen(tail) + 1), *p;

	if (sql == NULL)
		return NULL;
	memcpy(sql, head, hl);
	for (p = sql + hl, i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		memcpy(p, part, pl);
		p += pl;
	}
	strcpy(p, tail);
	return sql;
}

/* The statement head "?,?,...?" tail for the n ids (padded, for short
 * lists), prepared, with pre then the ids bound into b[] (*b and *copy
 * malloc'ed: the caller frees them); NULL with c->err set. */
static MYSQL_STMT *
prepare_ids(struct mq_conn *c, const char *head, const char *tail,
    const MYSQL_BIND *pre, size_t npre, const uint64_t *ids, size_t n,
    MYSQL_BIND **b, uint64_t **copy)
{
	/* short lists (claims, acks) recur: padded to a power of two by
	 * repeating the last id (harmless in IN), a few statements kept
	 * serve them all; long ones (archive batches) would only crowd the
	 * cache */
	size_t np = n <= MQ_IDS_KEPT ? mq__padded(n) : n;
	size_t i;
	char *sql = mq__sql_list(head, "?", np, tail);
	MYSQL_STMT *st = NULL;

	*b = calloc(npre + np, sizeof **b);
	*copy = malloc(np * sizeof **copy);
	if (sql == NULL || *b == NULL || *copy == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if (npre)
		memcpy(*b, pre, npre * sizeof **b);
	for (i = 0; i < np; i++) {
		(*copy)[i] = ids[i < n ? i : n - 1];
		mq__bind_u64(&(*b)[npre + i], &(*copy)[i]);
	}
	st = np <= MQ_IDS_KEPT ? mq__prepare_keyed(c, head, np, sql) :
	    mq__prepare_once(c, sql);
out:
	free(sql);
	return st;
}

enum mq_status
mq__query_ids(struct mq_conn *c, const char *what, const char *head,
    const char *tail, const MYSQL_BIND *pre, size_t npre,
    const uint64_t *ids, size_t n, mq__read_fn read, void *ctx)
{
	MYSQL_BIND *b = NULL;
	uint64_t *copy = NULL;
	MYSQL_STMT *st;
	enum mq_status rc;

	st = prepare_ids(c, head, tail, pre, npre, ids, n, &b, &copy);
	if (st == NULL) {
		rc = c->err.status;
		goto out;
	}
	/* alone, a statement that a deadlock or a certification failure
	 * rolled back whole runs again; in a transaction, the transaction
	 * does (mq__in_tx) */
	rc = c->in_tx ? mq__execute(c, st, b, what) :
	    mq__execute_retry(c, st, b, what);
	if (rc == MQ_OK && read)
		rc = read(c, st, ctx);
	mq__release(c, st);
out:
	free(copy);
	free(b);
	return rc;
}

static enum mq_status
read_affected(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	(void)c;
	*(uint64_t *)ctx = mysql_stmt_affected_rows(st);
	return MQ_OK;
}

enum mq_status
mq__exec_ids_tail(struct mq_conn *c, const char *head, const char *tail,
    const MYSQL_BIND *pre, size_t npre, const uint64_t *ids, size_t n,
    uint64_t *affected)
{
	*affected = 0;
	return mq__query_ids(c, "cannot update jobs", head, tail, pre, npre,
	    ids, n, read_affected, affected);
}

struct id_list {
	uint64_t *out;
	unsigned char *flags;
	size_t max, *got;
};

static enum mq_status
read_id_list(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	struct id_list *l = ctx;

	return mq__fetch_ids(c, st, l->out, l->flags, l->max, l->got);
}

enum mq_status
mq__select_ids_in(struct mq_conn *c, const char *head, const char *tail,
    const MYSQL_BIND *pre, size_t npre, const uint64_t *ids, size_t n,
    uint64_t *out, size_t max, size_t *got)
{
	struct id_list l = { out, NULL, max, got };

	*got = 0;
	return mq__query_ids(c, "cannot select jobs", head, tail, pre, npre,
	    ids, n, read_id_list, &l);
}

enum mq_status
mq__select_flagged_in(struct mq_conn *c, const char *head, const char *tail,
    const MYSQL_BIND *pre, size_t npre, const uint64_t *ids, size_t n,
    uint64_t *out, unsigned char *flags, size_t max, size_t *got)
{
	struct id_list l = { out, flags, max, got };

	*got = 0;
	return mq__query_ids(c, "cannot select jobs", head, tail, pre, npre,
	    ids, n, read_id_list, &l);
}
