/*
 * inspect_row.c: a job's row as the operators' readers fetch it, from the
 * job table or its archive (inspect.h), and the names of its states.
 */
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

static const char *const state_names[MQ_ST_COUNT] = { "ready", "scheduled",
    "waiting", "leased", "stale", "done", "dead", "invalid", "archived" };

/* the condition of each state but archived, in the job table */
const char *const mq__state_sql[MQ_ST_ARCHIVED] = { MQ_SQL_READY_NOW,
    MQ_SQL_SCHEDULED, MQ_SQL_WAITING_ROW, MQ_SQL_LEASE_LIVE, MQ_SQL_STALE, "state = 'done'",
    "state = 'dead'", "state = ''" };

const char *
mq_state_name(enum mq_state s)
{
	return (unsigned)s < MQ_ST_COUNT ? state_names[s] : NULL;
}

int
mq_state_parse(const char *s, size_t len)
{
	int i;

	for (i = 0; i < MQ_ST_COUNT; i++)
		if (strlen(state_names[i]) == len &&
		    memcmp(state_names[i], s, len) == 0)
			return i;
	return -1;
}

void
mq_job_info_free(struct mq_job_info *j)
{
	free(j->error);
	free(j->payload);
	j->error = NULL;
	j->payload = NULL;
}



void
mq__inspect_bind_row(struct row *r)
{
	/* the text columns and their places; iso[k] at iso_col[k] */
	static const int iso_col[5] = { 8, 10, 12, 15, 19 };
	static const int diff_col[4] = { 9, 11, 13, 16 };
	MYSQL_BIND *o = r->out;
	int k;

	memset(r, 0, sizeof *r);
	mq__bind_i32(&o[0], &r->archived);
	mq__bind_u64(&o[1], &r->j.id);
	mq__bind_text_out(&o[2], r->j.queue, MQ_QUEUE_MAX, &r->len[2], &r->null[2]);
	mq__bind_text_out(&o[3], r->shown, sizeof r->shown - 1, &r->len[3],
	    &r->null[3]);
	mq__bind_text_out(&o[4], r->stored, sizeof r->stored - 1, &r->len[4],
	    &r->null[4]);
	mq__bind_i32(&o[5], &r->j.priority);
	mq__bind_u32(&o[6], &r->j.attempts);
	mq__bind_u32(&o[7], &r->j.max_attempts);
	for (k = 0; k < 5; k++)
		mq__bind_text_out(&o[iso_col[k]], r->iso[k], sizeof r->iso[k] - 1,
		    &r->len[iso_col[k]], &r->null[iso_col[k]]);
	for (k = 0; k < 4; k++) {
		mq__bind_i64(&o[diff_col[k]], &r->diff[k]);
		o[diff_col[k]].is_null = &r->null[diff_col[k]];
	}
	mq__bind_text_out(&o[14], r->j.leased_by, sizeof r->j.leased_by - 1,
	    &r->len[14], &r->null[14]);
	/* the error and the payload: fetched once their size is known */
	o[17].buffer_type = MYSQL_TYPE_BLOB;
	o[17].length = &r->len[17];
	o[17].is_null = &r->null[17];
	mq__bind_i64(&o[18], &r->every);
	o[18].is_null = &r->null[18];
	mq__bind_i32(&o[20], &r->paused);
	mq__bind_text_out(&o[21], r->j.dedup_key, sizeof r->j.dedup_key, &r->len[21],
	    &r->null[21]);
	o[22].buffer_type = MYSQL_TYPE_BLOB;
	o[22].length = &r->len[22];
	o[22].is_null = &r->null[22];
	mq__bind_i64(&o[23], &r->j.available_epoch_us);
	mq__bind_i32(&o[24], &r->token);
	mq__bind_text_out(&o[25], r->anchor, sizeof r->anchor - 1, &r->len[25],
	    &r->null[25]);
	mq__bind_text_out(&o[26], r->j.key, sizeof r->j.key, &r->len[26],
	    &r->null[26]);
	mq__bind_text_out(&o[27], r->policy, sizeof r->policy - 1,
	    &r->len[27], &r->null[27]);
	mq__bind_i32(&o[28], &r->related);
}

/* Column col, of len bytes, into a new buffer *p (NULL if null). */
static enum mq_status
fetch_bytes(struct mq_conn *c, MYSQL_STMT *st, int col, unsigned long len,
    int null, unsigned char **p, size_t *n)
{
	MYSQL_BIND b;

	*p = NULL;
	*n = 0;
	if (null)
		return MQ_OK;
	if ((*p = malloc(len ? len : 1)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	*n = len;
	if (len == 0)
		return MQ_OK;
	memset(&b, 0, sizeof b);
	b.buffer_type = MYSQL_TYPE_BLOB;
	b.buffer = *p;
	b.buffer_length = len;
	if (mysql_stmt_fetch_column(st, &b, (unsigned)col, 0) != 0)
		return mq__dberr(c, st, "cannot read job");
	return MQ_OK;
}

static size_t
cut(unsigned long len, size_t max)
{
	return len < max ? len : max;
}

/* The fetched row r->... into r->j, with its error and payload. */
enum mq_status
mq__inspect_finish_row(struct mq_conn *c, MYSQL_STMT *st, struct row *r)
{
	char (*iso[5])[MQ_ISO_SIZE] = { &r->j.created_at,
	    &r->j.available_at, &r->j.leased_until, &r->j.finished_at,
	    &r->j.archived_at };
	static const int iso_col[5] = { 8, 10, 12, 15, 19 };
	struct mq_job_info *j = &r->j;
	enum mq_status rc;
	int k, s;

	j->archived = r->archived != 0;
	j->queue_len = cut(r->len[2], MQ_QUEUE_MAX);
	j->queue[j->queue_len] = '\0';
	r->shown[cut(r->len[3], sizeof r->shown - 1)] = '\0';
	r->stored[cut(r->len[4], sizeof r->stored - 1)] = '\0';
	s = mq_state_parse(r->shown, strlen(r->shown));
	j->state = s < 0 ? MQ_ST_INVALID : (enum mq_state)s;
	memcpy(j->stored_state, r->stored, sizeof j->stored_state - 1);
	j->stored_state[sizeof j->stored_state - 1] = '\0';
	for (k = 0; k < 5; k++) {
		if (r->null[iso_col[k]])
			r->len[iso_col[k]] = 0;
		memcpy(*iso[k], r->iso[k], MQ_ISO_SIZE - 1);
		(*iso[k])[cut(r->len[iso_col[k]], MQ_ISO_SIZE - 1)] = '\0';
	}
	/* a date another program wrote that is no date (a zero month or
	 * day) gives NULL: 0, not the previous row's figure */
	j->age_us = r->null[9] ? 0 : -r->diff[0];
	j->due_in_us = r->null[11] ? 0 : r->diff[1];
	j->has_lease = !r->null[13];
	j->lease_left_us = j->has_lease ? r->diff[2] : 0;
	j->has_finished = !r->null[16];
	j->finished_ago_us = j->has_finished ? -r->diff[3] : 0;
	j->leased_by_len = r->null[14] ? 0 :
	    cut(r->len[14], sizeof j->leased_by - 1);
	j->leased_by[j->leased_by_len] = '\0';
	j->every_us = r->null[18] ? 0 : r->every;
	j->paused = r->paused != 0;
	j->has_token = r->token != 0;
	k = r->null[25] ? 0 : (int)cut(r->len[25], MQ_ISO_SIZE - 1);
	memcpy(j->every_anchor, r->anchor, (size_t)k);
	j->every_anchor[k] = '\0';
	j->has_dedup = !r->null[21];
	j->dedup_len = j->has_dedup ? cut(r->len[21], sizeof j->dedup_key) :
	    0;
	j->has_key = !r->null[26];
	j->key_len = j->has_key ? cut(r->len[26], sizeof j->key) : 0;
	k = r->null[27] ? 0 : (int)cut(r->len[27], sizeof j->if_parent_dies - 1);
	memcpy(j->if_parent_dies, r->policy, (size_t)k);
	j->if_parent_dies[k] = '\0';
	j->may_have_deps = r->related != 0;
	rc = fetch_bytes(c, st, 17, r->len[17], r->null[17], &j->error,
	    &j->error_len);
	if (rc == MQ_OK)
		rc = fetch_bytes(c, st, 22, r->len[22], r->null[22],
		    &j->payload, &j->payload_len);
	if (rc != MQ_OK)
		mq_job_info_free(j);
	return rc;
}
