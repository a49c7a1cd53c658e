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
	MYSQL_BIND out[2];
	uint64_t id;
	int32_t flag = 0;
	enum mq_status rc;
	int r;

	*n = 0;
	if ((rc = mq__execute(c, st, params, "cannot select jobs")) != MQ_OK)
		return rc;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_i32(&out[1], &flag);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot select jobs");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		if (*n == max)
			continue;	/* drain; the LIMIT makes this rare */
		ids[*n] = id;
		if (flags)
			flags[*n] = flag != 0;
		(*n)++;
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot select jobs");
	return MQ_OK;
}

enum mq_status
mq__exec_ids(struct mq_conn *c, const char *head, const MYSQL_BIND *pre,
    size_t npre, const uint64_t *ids, size_t n, uint64_t *affected)
{
	size_t hl = strlen(head), i;
	char *sql = malloc(hl + 2 * n + 2), *p;
	MYSQL_BIND *b = calloc(npre + n, sizeof *b);
	uint64_t *copy = malloc(n * sizeof *copy);
	MYSQL_STMT *st = NULL;
	enum mq_status rc;

	*affected = 0;
	if (sql == NULL || b == NULL || copy == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(sql, head, hl);
	for (p = sql + hl, i = 0; i < n; i++) {
		*p++ = i ? ',' : '?';
		if (i)
			*p++ = '?';
	}
	strcpy(p, ")");
	if (npre)
		memcpy(b, pre, npre * sizeof *b);
	for (i = 0; i < n; i++) {
		copy[i] = ids[i];
		mq__bind_u64(&b[npre + i], &copy[i]);
	}
	/* short lists (claims, acks) recur: keep them; long ones (archive
	 * batches) would only crowd the cache */
	st = n <= 16 ? mq__prepare_keyed(c, head, n, sql) :
	    mq__prepare_once(c, sql);
	if (st == NULL) {
		rc = c->err.status;
		goto out;
	}
	rc = mq__execute(c, st, b, "cannot update jobs");
	if (rc == MQ_OK)
		*affected = mysql_stmt_affected_rows(st);
out:
	if (st)
		mq__release(c, st);
	free(copy);
	free(b);
	free(sql);
	return rc;
}
