/*
 * inspect.c: reading jobs for operators (mq why, mq ls): one job by id
 * from the job table or its archive, and lists of jobs by filter. Read
 * only, no locks: what an operator reads may change the next moment.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* The columns both tables give, in the order fetch_row binds them; the
 * archive has no recurrence and gives when it was archived. Unqualified
 * columns are the read table's (alias j). */
#define JOB_COLS(archived, shown, every, archived_at, payload) \
    "SELECT " archived ", id, queue, " shown ", CAST(state AS CHAR)," \
    " priority, attempts, max_attempts, " \
    MQ_SQL_ISO("created_at") ", " MQ_SQL_US_FROM_NOW("created_at") ", " \
    MQ_SQL_ISO("available_at") ", " MQ_SQL_US_FROM_NOW("available_at") \
    ", " MQ_SQL_ISO("leased_until") ", " \
    MQ_SQL_US_FROM_NOW("leased_until") ", leased_by, " \
    MQ_SQL_ISO("finished_at") ", " MQ_SQL_US_FROM_NOW("finished_at") \
    ", last_error, " every ", " archived_at ", " \
    "NOT (" MQ_SQL_NOT_PAUSED("{{TABLE}}", "j.queue") "), dedup_key, " \
    payload ", " MQ_SQL_EPOCH_US("available_at")

#define LIVE_COLS(payload) \
    JOB_COLS("0", MQ_SQL_SHOWN_STATE, "every_us", "NULL", payload)
#define ARCHIVE_COLS(payload) \
    JOB_COLS("1", "'archived'", "NULL", MQ_SQL_ISO("archived_at"), payload)
#define FROM_LIVE " FROM `{{TABLE}}` j"
#define FROM_ARCHIVE " FROM `{{TABLE}}_archive` j"

/* by primary key in each table: two index lookups, one round trip */
const char mq__sql_job_get[] =
    LIVE_COLS("payload") FROM_LIVE " WHERE id = ?"
    " UNION ALL " ARCHIVE_COLS("payload") FROM_ARCHIVE " WHERE id = ?";

/* the due jobs a claim takes before this one: a range of the claim
 * index (queue, state, priority, available_at, id), bounded */
const char mq__sql_job_ahead[] =
    "SELECT COUNT(*) FROM (SELECT 1 FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE queue = ? AND " MQ_SQL_READY_NOW " AND (priority < ?"
    " OR (priority = ? AND (available_at < " MQ_SQL_FROM_EPOCH_US
    " OR (available_at = " MQ_SQL_FROM_EPOCH_US " AND id < ?))))"
    " LIMIT ?) a";

static const char *const state_names[MQ_ST_COUNT] = { "ready", "scheduled",
    "leased", "stale", "done", "dead", "archived" };

/* the condition of each state but archived, in the job table */
static const char *const state_sql[MQ_ST_ARCHIVED] = { MQ_SQL_READY_NOW,
    MQ_SQL_SCHEDULED, MQ_SQL_LEASE_LIVE, MQ_SQL_STALE, "state = 'done'",
    "state = 'dead'" };

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

#define NCOLS 24

/* What fetch_row binds the columns to. */
struct row {
	MYSQL_BIND out[NCOLS];
	mq__bool null[NCOLS];
	unsigned long len[NCOLS];
	int32_t archived, paused;
	char shown[16], stored[16];
	char iso[5][MQ_ISO_SIZE + 8];
	int64_t diff[4], every;
	struct mq_job_info j;
};

static void
bind_text(MYSQL_BIND *b, void *buf, size_t size, unsigned long *len,
    mq__bool *null)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = buf;
	b->buffer_length = size;
	b->length = len;
	b->is_null = null;
}

static void
bind_row(struct row *r)
{
	/* the text columns and their places; iso[k] at iso_col[k] */
	static const int iso_col[5] = { 8, 10, 12, 15, 19 };
	static const int diff_col[4] = { 9, 11, 13, 16 };
	MYSQL_BIND *o = r->out;
	int k;

	memset(r, 0, sizeof *r);
	mq__bind_i32(&o[0], &r->archived);
	mq__bind_u64(&o[1], &r->j.id);
	bind_text(&o[2], r->j.queue, MQ_QUEUE_MAX, &r->len[2], &r->null[2]);
	bind_text(&o[3], r->shown, sizeof r->shown - 1, &r->len[3],
	    &r->null[3]);
	bind_text(&o[4], r->stored, sizeof r->stored - 1, &r->len[4],
	    &r->null[4]);
	mq__bind_i32(&o[5], &r->j.priority);
	mq__bind_u32(&o[6], &r->j.attempts);
	mq__bind_u32(&o[7], &r->j.max_attempts);
	for (k = 0; k < 5; k++)
		bind_text(&o[iso_col[k]], r->iso[k], sizeof r->iso[k] - 1,
		    &r->len[iso_col[k]], &r->null[iso_col[k]]);
	for (k = 0; k < 4; k++) {
		mq__bind_i64(&o[diff_col[k]], &r->diff[k]);
		o[diff_col[k]].is_null = &r->null[diff_col[k]];
	}
	bind_text(&o[14], r->j.leased_by, sizeof r->j.leased_by - 1,
	    &r->len[14], &r->null[14]);
	/* the error and the payload: fetched once their size is known */
	o[17].buffer_type = MYSQL_TYPE_BLOB;
	o[17].length = &r->len[17];
	o[17].is_null = &r->null[17];
	mq__bind_i64(&o[18], &r->every);
	o[18].is_null = &r->null[18];
	mq__bind_i32(&o[20], &r->paused);
	bind_text(&o[21], r->j.dedup_key, sizeof r->j.dedup_key, &r->len[21],
	    &r->null[21]);
	o[22].buffer_type = MYSQL_TYPE_BLOB;
	o[22].length = &r->len[22];
	o[22].is_null = &r->null[22];
	mq__bind_i64(&o[23], &r->j.available_epoch_us);
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
static enum mq_status
finish_row(struct mq_conn *c, MYSQL_STMT *st, struct row *r)
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
	j->state = s < 0 ? MQ_ST_DEAD : (enum mq_state)s;
	memcpy(j->stored_state, r->stored, sizeof j->stored_state - 1);
	j->stored_state[sizeof j->stored_state - 1] = '\0';
	for (k = 0; k < 5; k++) {
		if (r->null[iso_col[k]])
			r->len[iso_col[k]] = 0;
		memcpy(*iso[k], r->iso[k], MQ_ISO_SIZE - 1);
		(*iso[k])[cut(r->len[iso_col[k]], MQ_ISO_SIZE - 1)] = '\0';
	}
	j->age_us = -r->diff[0];
	j->due_in_us = r->diff[1];
	j->has_lease = !r->null[13];
	j->lease_left_us = j->has_lease ? r->diff[2] : 0;
	j->has_finished = !r->null[16];
	j->finished_ago_us = j->has_finished ? -r->diff[3] : 0;
	j->leased_by_len = r->null[14] ? 0 :
	    cut(r->len[14], sizeof j->leased_by - 1);
	j->leased_by[j->leased_by_len] = '\0';
	j->every_us = r->null[18] ? 0 : r->every;
	j->paused = r->paused != 0;
	j->has_dedup = !r->null[21];
	j->dedup_len = j->has_dedup ? cut(r->len[21], sizeof j->dedup_key) :
	    0;
	rc = fetch_bytes(c, st, 17, r->len[17], r->null[17], &j->error,
	    &j->error_len);
	if (rc == MQ_OK)
		rc = fetch_bytes(c, st, 22, r->len[22], r->null[22],
		    &j->payload, &j->payload_len);
	if (rc != MQ_OK)
		mq_job_info_free(j);
	return rc;
}

enum mq_status
mq_job_get(struct mq_conn *c, uint64_t id, struct mq_job_info *j)
{
	MYSQL_BIND in[2];
	struct row *r;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f, found = 0;

	memset(j, 0, sizeof *j);
	if ((r = malloc(sizeof *r)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if ((st = mq__prepare(c, mq__sql_job_get)) == NULL) {
		free(r);
		return c->err.status;
	}
	mq__bind_u64(&in[0], &id);
	mq__bind_u64(&in[1], &id);
	bind_row(r);
	rc = mq__execute(c, st, in, "cannot read job");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, r->out) != 0)
		rc = mq__dberr(c, st, "cannot read job");
	/* the job table's row first; an id in both (rows copied by hand)
	 * is the live job */
	while (rc == MQ_OK && !found && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		if ((rc = finish_row(c, st, r)) != MQ_OK)
			break;
		if (!r->archived || !found) {
			mq_job_info_free(j);
			*j = r->j;
			found = 1;
		}
	}
	if (rc == MQ_OK && !found && f == 1)
		rc = mq__dberr(c, st, "cannot read job");
	mq__release(c, st);
	free(r);
	if (rc == MQ_OK && !found)
		return mq__fail(c, MQ_EMPTY, "no job %llu",
		    (unsigned long long)id);
	return rc;
}

enum mq_status
mq_job_ahead(struct mq_conn *c, const struct mq_job_info *j, uint64_t max,
    uint64_t *n)
{
	MYSQL_BIND in[7], out[1];
	unsigned long qlen = j->queue_len;
	int64_t at = j->available_epoch_us;
	int32_t prio = j->priority;
	uint64_t id = j->id;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f;

	*n = 0;
	if ((st = mq__prepare(c, mq__sql_job_ahead)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], j->queue, &qlen);
	in[0].buffer_length = qlen = j->queue_len;
	mq__bind_i32(&in[1], &prio);
	mq__bind_i32(&in[2], &prio);
	mq__bind_i64(&in[3], &at);
	mq__bind_i64(&in[4], &at);
	mq__bind_u64(&in[5], &id);
	mq__bind_u64(&in[6], &max);
	rc = mq__execute(c, st, in, "cannot count jobs");
	mq__bind_u64(&out[0], n);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot count jobs");
	if (rc == MQ_OK && (f = mysql_stmt_fetch(st)) != 0 &&
	    f != MYSQL_DATA_TRUNCATED)
		rc = mq__dberr(c, st, "cannot count jobs");
	mq__release(c, st);
	return rc;
}

/* The time a job is listed by: when it finished, else when it was made. */
#define JOB_TIME "COALESCE(finished_at, created_at)"

/* Appends s to the statement b (of cap bytes); 0 when out of room. */
static int
add(char *b, size_t cap, const char *s)
{
	size_t n = strlen(b), k = strlen(s);

	if (n + k + 1 > cap)
		return 0;
	memcpy(b + n, s, k + 1);
	return 1;
}

/* The index a read of the job table for these states uses: with a
 * state filter, a range of the queue's states in the claim or due index
 * (the due one for due jobs), or of the states in the lease or finished
 * index, sorted by id afterwards: its cost grows with the jobs in those
 * states, not with the table. Without one, the optimizer's choice (the
 * primary key in id order, up to the limit, as a rule). */
static const char *
live_index(unsigned live, const struct mq_list_filter *f)
{
	if (live == (1u << MQ_ST_ARCHIVED) - 1)
		return "";
	if (f->queue)
		return " FORCE INDEX (claim, due)";
	return " FORCE INDEX (lease, finished)";
}

/* One table's read: cols, then f's conditions ("id > ?" always), in
 * mq__list_sql's parameter order; live 0 reads the archive. */
static int
add_read(char *b, size_t cap, const char *cols, unsigned live,
    const struct mq_list_filter *f)
{
	int i, first = 1, ok = add(b, cap, cols) &&
	    add(b, cap, live ? FROM_LIVE : FROM_ARCHIVE) &&
	    add(b, cap, live ? live_index(live, f) : "") &&
	    add(b, cap, " WHERE id > ?");

	if (f->queue)
		ok = ok && add(b, cap, " AND queue = ?");
	if (live && live != (1u << MQ_ST_ARCHIVED) - 1) {
		ok = ok && add(b, cap, " AND (");
		for (i = 0; i < MQ_ST_ARCHIVED; i++)
			if (live & 1u << i) {
				ok = ok && add(b, cap, first ? "(" : " OR (") &&
				    add(b, cap, state_sql[i]) &&
				    add(b, cap, ")");
				first = 0;
			}
		ok = ok && add(b, cap, ")");
	}
	if (f->error)
		ok = ok && add(b, cap, " AND last_error LIKE ? ESCAPE '!'");
	if (f->since_us >= 0)
		ok = ok && add(b, cap, " AND " JOB_TIME " >= "
		    MQ_SQL_NOW_MINUS_US);
	if (f->before_us >= 0)
		ok = ok && add(b, cap, " AND " JOB_TIME " < "
		    MQ_SQL_NOW_MINUS_US);
	return ok && add(b, cap, " ORDER BY id LIMIT ?");
}

/* The job table's states f asks for (bits of enum mq_state). */
static unsigned
live_states(const struct mq_list_filter *f)
{
	if (f->states == 0)
		return (1u << MQ_ST_ARCHIVED) - 1;
	return f->states & ((1u << MQ_ST_ARCHIVED) - 1);
}

char *
mq__list_sql(const struct mq_list_filter *f)
{
	static const char live_cols[] = LIVE_COLS("NULL");
	static const char archive_cols[] = ARCHIVE_COLS("NULL");
	unsigned live = live_states(f);
	int archive = (f->states & 1u << MQ_ST_ARCHIVED) != 0, ok = 1;
	size_t cap = 2 * (sizeof live_cols + sizeof archive_cols) + 4096;
	char *b = malloc(cap);

	if (b == NULL)
		return NULL;
	*b = '\0';
	/* each read in id order, then the two merged: a sort of at most
	 * twice the limit's rows */
	if (live && archive)
		ok = add(b, cap, "(");
	if (live)
		ok = ok && add_read(b, cap, live_cols, live, f);
	if (live && archive)
		ok = ok && add(b, cap, ") UNION ALL (");
	if (archive)
		ok = ok && add_read(b, cap, archive_cols, 0, f);
	if (live && archive)
		ok = ok && add(b, cap, ") ORDER BY 2 LIMIT ?");
	if (!ok) {
		free(b);
		return NULL;
	}
	return b;
}

/* f->error as a LIKE pattern that matches it as a substring: % and _
 * (and the escape, !) are plain characters. */
static char *
like_pattern(const struct mq_list_filter *f, unsigned long *len)
{
	char *p = malloc(2 * f->error_len + 3), *o = p;
	size_t i;

	if (p == NULL)
		return NULL;
	*o++ = '%';
	for (i = 0; i < f->error_len; i++) {
		if (f->error[i] == '%' || f->error[i] == '_' ||
		    f->error[i] == '!')
			*o++ = '!';
		*o++ = f->error[i];
	}
	*o++ = '%';
	*len = (unsigned long)(o - p);
	return p;
}

/* Binds one read's parameters from in[*k] on. */
static void
bind_read(MYSQL_BIND *in, size_t *k, const struct mq_list_filter *f,
    uint64_t *after, unsigned long *qlen, char *pat, unsigned long *plen,
    int64_t *since, int64_t *before, uint64_t *limit)
{
	mq__bind_u64(&in[(*k)++], after);
	if (f->queue)
		mq__bind_str(&in[(*k)++], f->queue, qlen);
	if (f->error) {
		unsigned long n = *plen;

		mq__bind_blob(&in[(*k)++], pat, plen);
		*plen = n;
	}
	if (f->since_us >= 0)
		mq__bind_i64(&in[(*k)++], since);
	if (f->before_us >= 0)
		mq__bind_i64(&in[(*k)++], before);
	mq__bind_u64(&in[(*k)++], limit);
}

enum mq_status
mq_job_list(struct mq_conn *c, const struct mq_list_filter *f,
    mq_job_fn fn, void *ctx, int *more)
{
	MYSQL_BIND in[16];
	unsigned long qlen = 0, plen = 0;
	uint64_t after = f->after, limit = (uint64_t)f->limit + 1, seen = 0;
	int64_t since = f->since_us, before = f->before_us;
	char *sql, *pat = NULL;
	struct row *r = NULL;
	MYSQL_STMT *st = NULL;
	enum mq_status rc = MQ_OK;
	size_t k = 0;
	int x, stop = 0;

	*more = 0;
	if (f->limit < 1 || f->limit > MQ_LIST_MAX || (f->queue &&
	    !mq_valid_queue(f->queue)))
		return mq__fail(c, MQ_EINVAL, "invalid list filter");
	if ((sql = mq__list_sql(f)) == NULL ||
	    (f->error && (pat = like_pattern(f, &plen)) == NULL) ||
	    (r = malloc(sizeof *r)) == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if ((st = mq__prepare_once(c, sql)) == NULL) {
		rc = c->err.status;
		goto out;
	}
	if (live_states(f))
		bind_read(in, &k, f, &after, &qlen, pat, &plen, &since,
		    &before, &limit);
	if (f->states & 1u << MQ_ST_ARCHIVED)
		bind_read(in, &k, f, &after, &qlen, pat, &plen, &since,
		    &before, &limit);
	if (live_states(f) && (f->states & 1u << MQ_ST_ARCHIVED))
		mq__bind_u64(&in[k++], &limit);
	bind_row(r);
	rc = mq__execute(c, st, in, "cannot list jobs");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, r->out) != 0)
		rc = mq__dberr(c, st, "cannot list jobs");
	while (rc == MQ_OK && !stop && ((x = mysql_stmt_fetch(st)) == 0 ||
	    x == MYSQL_DATA_TRUNCATED)) {
		if (seen++ == f->limit) {
			*more = 1;
			break;
		}
		if ((rc = finish_row(c, st, r)) != MQ_OK)
			break;
		stop = fn(&r->j, ctx);
		mq_job_info_free(&r->j);
	}
	if (rc == MQ_OK && !stop && !*more && x == 1)
		rc = mq__dberr(c, st, "cannot list jobs");
out:
	if (st)
		mq__release(c, st);
	free(r);
	free(pat);
	free(sql);
	return rc;
}
