/*
 * workers.c: how many workers hold leases in each queue (mq top): the
 * distinct leased_by of the leased rows, read from the lease index
 * (state, leased_until), whose 'leased' range holds only the jobs
 * running now, however many finished rows pile up.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* a lease without a holder (a row written by another program) is no
 * worker: COUNT(DISTINCT) skips NULL */
const char mq__sql_workers[] =
    "SELECT queue, COUNT(DISTINCT leased_by) FROM `{{TABLE}}`"
    " FORCE INDEX (lease) WHERE state = 'leased'"
    " AND " MQ_SQL_QUEUE_OR_ALL " GROUP BY queue";

enum mq_status
mq_workers(struct mq_conn *c, const char *queue, struct mq_queue_workers **qw,
    size_t *n)
{
	MYSQL_BIND in[2], out[2];
	unsigned long qlen = queue ? strlen(queue) : 0, len = 0;
	char q[MQ_QUEUE_MAX + 1];
	uint64_t k = 0;
	struct mq_queue_workers *w, *all = NULL;
	size_t cap = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r = 0, i;

	*qw = NULL;
	*n = 0;
	if (queue && !mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if ((st = mq__prepare(c, mq__sql_workers)) == NULL)
		return c->err.status;
	for (i = 0; i < 2; i++)
		if (queue) {
			mq__bind_str(&in[i], queue, &qlen);
			in[i].buffer_length = qlen;
		} else {
			mq__bind_null(&in[i]);
		}
	rc = mq__execute(c, st, in, "cannot count workers");
	memset(out, 0, sizeof out);
	out[0].buffer_type = MYSQL_TYPE_STRING;
	out[0].buffer = q;
	out[0].buffer_length = sizeof q - 1;
	out[0].length = &len;
	mq__bind_u64(&out[1], &k);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot count workers");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			if ((w = realloc(all, cap * sizeof *w)) == NULL) {
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
				break;
			}
			all = w;
		}
		w = &all[(*n)++];
		memset(w, 0, sizeof *w);
		w->queue_len = len < sizeof q - 1 ? len : sizeof q - 1;
		memcpy(w->queue, q, w->queue_len);
		w->workers = k;
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot count workers");
	mq__release(c, st);
	if (rc != MQ_OK) {
		free(all);
		*n = 0;
		return rc;
	}
	*qw = all;
	return MQ_OK;
}
