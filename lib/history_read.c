/*
 * history_read.c: a job's history as mq show reads it, <table>_history
 * by its primary key (job_id, seq): the job's rows only, in the order
 * they were written, with no sort (the writers: history.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* one range of the primary key, already in seq order */
const char mq__sql_history_get[] =
    "SELECT seq, CAST(event AS CHAR), CAST(state AS CHAR), attempt, "
    MQ_SQL_ISO("at") ", " MQ_SQL_AGE_FROM_NOW("at") ", worker, error"
    " FROM `{{TABLE}}_history` FORCE INDEX (PRIMARY)"
    " WHERE job_id = ? ORDER BY job_id, seq";

/* error is a BLOB: 65535 bytes at most */
#define ERROR_MAX 65535

/* What a row is fetched into. */
struct hrow {
	MYSQL_BIND out[8];
	mq__bool null[8];
	unsigned long len[8];
	char iso[MQ_ISO_SIZE + 8];
	int64_t from_now;
	unsigned char error[ERROR_MAX];
	struct mq_history_entry h;
};

static size_t
cut(unsigned long len, size_t max)
{
	return len < max ? len : max;
}

static void
bind_hrow(struct hrow *r)
{
	MYSQL_BIND *o = r->out;

	memset(o, 0, sizeof r->out);
	mq__bind_u64(&o[0], &r->h.seq);
	mq__bind_text_out(&o[1], r->h.event, sizeof r->h.event - 1, &r->len[1],
	    &r->null[1]);
	mq__bind_text_out(&o[2], r->h.state, sizeof r->h.state - 1, &r->len[2],
	    &r->null[2]);
	mq__bind_u32(&o[3], &r->h.attempt);
	mq__bind_text_out(&o[4], r->iso, sizeof r->iso - 1, &r->len[4], &r->null[4]);
	mq__bind_i64(&o[5], &r->from_now);
	o[5].is_null = &r->null[5];
	mq__bind_text_out(&o[6], r->h.worker, sizeof r->h.worker - 1, &r->len[6],
	    &r->null[6]);
	o[7].buffer_type = MYSQL_TYPE_BLOB;
	o[7].buffer = r->error;
	o[7].buffer_length = ERROR_MAX;
	o[7].length = &r->len[7];
	o[7].is_null = &r->null[7];
}

/* The fetched row r->... into r->h. */
static void
finish_hrow(struct hrow *r)
{
	struct mq_history_entry *h = &r->h;
	size_t k;

	h->event[cut(r->len[1], sizeof h->event - 1)] = '\0';
	h->state[cut(r->len[2], sizeof h->state - 1)] = '\0';
	k = r->null[4] ? 0 : cut(r->len[4], MQ_ISO_SIZE - 1);
	memcpy(h->at, r->iso, k);
	h->at[k] = '\0';
	h->ago_us = r->null[5] ? 0 : -r->from_now;
	h->worker_len = r->null[6] ? 0 : cut(r->len[6], sizeof h->worker - 1);
	h->worker[h->worker_len] = '\0';
	h->error = r->null[7] ? NULL : r->error;
	h->error_len = r->null[7] ? 0 : cut(r->len[7], ERROR_MAX);
}

enum mq_status
mq_job_history(struct mq_conn *c, uint64_t id, mq_history_fn fn, void *ctx)
{
	MYSQL_BIND in[1];
	struct hrow *r;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f = 0;

	if ((r = malloc(sizeof *r)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	memset(r, 0, sizeof *r);
	if ((st = mq__prepare(c, mq__sql_history_get)) == NULL) {
		free(r);
		return c->err.status;
	}
	mq__bind_u64(&in[0], &id);
	bind_hrow(r);
	rc = mq__execute(c, st, in, "cannot read history");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, r->out) != 0)
		rc = mq__dberr(c, st, "cannot read history");
	while (rc == MQ_OK && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		finish_hrow(r);
		if (fn(&r->h, ctx) != 0) {
			f = MYSQL_NO_DATA;
			break;
		}
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot read history");
	mq__release(c, st);
	free(r);
	return rc;
}
