/*
 * schedule.c: calendar schedules in the table (doc/schedules.md):
 * applying a file's schedules to <table>_schedules, firing the due ones
 * into jobs and the ledger <table>_fired, a run by hand, removal, the
 * list. Times cross the wire as seconds or microseconds since the
 * epoch, turned into DATETIME and back by the server against a fixed
 * '1970-01-01' (never UNIX_TIMESTAMP, which reads the session's zone),
 * and "now" is always the server's UTC_TIMESTAMP(6).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "internal.h"
#include "schedule.h"
#include "sql_terms.h"

#define EPOCH "'1970-01-01 00:00:00'"
#define TO_US(x) MQ_SQL_EPOCH_US(x)
#define FROM_S MQ_SQL_FROM_EPOCH_S

/* A schedule's columns, as every read takes them. */
#define COLUMNS_OF(p) \
    p "name, " p "expr, " p "zone, " p "queue, " p "payload, " p "priority, " \
    p "max_attempts, " p "job_key, " p "missed, " p "missed_max, " \
    TO_US(p "next_at") ", " p "version, " TO_US(MQ_SQL_NOW)
#define COLUMNS COLUMNS_OF("")
#define NCOLUMNS 13
#define COL_PAYLOAD 4
/* a write's new version: never out of range (a row written by SQL may
 * hold the largest BIGINT UNSIGNED, where version + 1 fails, error
 * 1690): after it comes 1. A version is only compared for equality
 * with the one just read, so a wrap is as good as a step. */
#define BUMP_VERSION "version = version % 18446744073709551615 + 1"

/* the schedules a page at a time, by name: the first page, then the
 * page after the last name read (keyset: a binary name takes the
 * column's collation, so that > follows ORDER BY's order, a NUL byte
 * and trailing blanks included) */
static const char sql_page_first[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` ORDER BY name LIMIT ?";
static const char sql_page_after[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` WHERE name > ?"
    " ORDER BY name LIMIT ?";
/* or from a name on: an apply without --prune passes over the rows
 * between the file's names */
static const char sql_page_from[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` WHERE name >= ?"
    " ORDER BY name LIMIT ?";
static const char sql_now[] = "SELECT " TO_US(MQ_SQL_NOW);
/* the last instant fired by the expression (manual runs aside) */
static const char sql_last[] =
    "SELECT TIMESTAMPDIFF(SECOND, " EPOCH ", MAX(instant))"
    " FROM `{{TABLE}}_fired` WHERE schedule = ? AND manual = 0";
/* the same for a page of schedules from a name on (an apply that adds
 * or moves many, in name order): a loose scan of a range of the
 * primary key */
static const char sql_lasts[] =
    "SELECT schedule, TIMESTAMPDIFF(SECOND, " EPOCH ", MAX(instant))"
    " FROM `{{TABLE}}_fired` WHERE manual = 0 AND schedule >= ?"
    " GROUP BY schedule ORDER BY schedule LIMIT ?";
static const char sql_add[] =
    "INSERT INTO `{{TABLE}}_schedules` (name, expr, zone, queue, payload,"
    " priority, max_attempts, job_key, missed, missed_max, next_at,"
    " version, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " FROM_S
    ", 1, " MQ_SQL_NOW ")";
/* next_at NULL: kept */
static const char sql_change[] =
    "UPDATE `{{TABLE}}_schedules` SET expr = ?, zone = ?, queue = ?,"
    " payload = ?, priority = ?, max_attempts = ?, job_key = ?, missed = ?,"
    " missed_max = ?, next_at = COALESCE(" FROM_S ", next_at), "
    BUMP_VERSION ", changed_at = " MQ_SQL_NOW ", name = ?"
    " WHERE name = ? AND version = ?";
static const char sql_prune[] =
    "DELETE FROM `{{TABLE}}_schedules` WHERE name = ? AND version = ?";
static const char sql_rm[] =
    "DELETE FROM `{{TABLE}}_schedules` WHERE name = ?";
/* the due schedule that fires first, locked: one range of an index */
static const char sql_due_all[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` FORCE INDEX (due)"
    " WHERE next_at <= " MQ_SQL_NOW " ORDER BY next_at LIMIT ?, 1 {{LOCK}}";
static const char sql_due_queues[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` FORCE INDEX (queue_due)"
    " WHERE queue IN (%s) AND next_at <= " MQ_SQL_NOW " LIMIT ?, 1 {{LOCK}}";
/* the earliest instant and the server's now: one look, which is all
 * an idle consumer's firing costs while nothing is due (fire_due.c) */
static const char sql_next_all[] =
    "SELECT " TO_US("MIN(next_at)") ", " TO_US(MQ_SQL_NOW)
    " FROM `{{TABLE}}_schedules`";
/* of some queues: each queue's first entry of queue_due (one lookup
 * each), not a range over all their schedules */
static const char sql_next_head[] = "SELECT " TO_US("MIN(m)") ", "
    TO_US(MQ_SQL_NOW) " FROM (";
static const char sql_next_part[] =
    "SELECT MIN(next_at) AS m FROM `{{TABLE}}_schedules` WHERE queue = ?";
static const char sql_next_tail[] = ") AS mins";
static const char sql_fired[] =
    "INSERT INTO `{{TABLE}}_fired` (schedule, manual, instant, job,"
    " fired_at) VALUES (?, 0, " FROM_S ", ?, " MQ_SQL_NOW ")";
static const char sql_manual[] =
    "INSERT INTO `{{TABLE}}_fired` (schedule, manual, instant, job,"
    " fired_at) VALUES (?, 1, " MQ_SQL_NOW ", ?, " MQ_SQL_NOW ")";
static const char sql_move[] =
    "UPDATE `{{TABLE}}_schedules` SET next_at = " FROM_S ", "
    BUMP_VERSION " WHERE name = ? AND version = ?";
static const char sql_one[] =
    "SELECT " COLUMNS " FROM `{{TABLE}}_schedules` WHERE name = ? FOR UPDATE";
/* the list: each schedule and its newest run (or skipped instant), a
 * page at a time as sql_page_first and _after */
#define LIST_FROM \
    "SELECT " COLUMNS_OF("s.") ", " TO_US("f.instant") ", f.manual, f.job," \
    " COALESCE(j.state, a.state, IF(f.job IS NULL, NULL, 'gone'))" \
    " FROM `{{TABLE}}_schedules` s LEFT JOIN `{{TABLE}}_fired` f" \
    " ON f.schedule = s.name AND f.instant = (SELECT MAX(instant) FROM" \
    " `{{TABLE}}_fired` WHERE schedule = s.name) AND f.manual = (SELECT" \
    " MAX(manual) FROM `{{TABLE}}_fired` WHERE schedule = s.name AND" \
    " instant = f.instant)" \
    " LEFT JOIN `{{TABLE}}` j ON j.id = f.job" \
    " LEFT JOIN `{{TABLE}}_archive` a ON a.id = f.job"
static const char sql_list_first[] = LIST_FROM
    " ORDER BY s.name LIMIT ?";
static const char sql_list_after[] = LIST_FROM
    " WHERE s.name > ? ORDER BY s.name LIMIT ?";

static const char *const field_names[MQ_SCHED_FIELDS] = {
	"cron", "tz", "queue", "payload", "priority", "max-attempts", "key",
	"missed", "missed-max", "name"
};

const char *
mq_schedule_field_name(unsigned bit)
{
	unsigned i;

	for (i = 0; i < MQ_SCHED_FIELDS; i++)
		if (bit == 1u << i)
			return field_names[i];
	return NULL;
}

/* ---- reading rows ---- */

/* The output buffers of a schedule's row (COLUMNS, then extra). */
struct row_out {
	struct mq_schedule s;
	unsigned long len[NCOLUMNS + 4];
	mq__bool null[NCOLUMNS + 4];
	char missed[8];
	int32_t priority;
	uint32_t max_attempts, missed_max;
	int64_t next_at_us, now_us;
	uint64_t version;
	/* the list's: the newest ledger row */
	int64_t last_us;
	int32_t last_manual;
	uint64_t last_job;
	char last_state[16];
	MYSQL_BIND b[NCOLUMNS + 4];
};

static void
bind_row_out(struct row_out *o, int list)
{
	size_t i, n = NCOLUMNS + (list ? 4 : 0);

	memset(o, 0, sizeof *o);
	mq__bind_text_out(&o->b[0], o->s.name, sizeof o->s.name - 1,
	    &o->len[0], &o->null[0]);
	mq__bind_text_out(&o->b[1], o->s.expr, sizeof o->s.expr - 1,
	    &o->len[1], &o->null[1]);
	mq__bind_text_out(&o->b[2], o->s.zone, sizeof o->s.zone - 1,
	    &o->len[2], &o->null[2]);
	mq__bind_text_out(&o->b[3], o->s.queue, sizeof o->s.queue - 1,
	    &o->len[3], &o->null[3]);
	o->b[COL_PAYLOAD].buffer_type = MYSQL_TYPE_BLOB;	/* fetched after */
	mq__bind_i32(&o->b[5], &o->priority);
	mq__bind_u32(&o->b[6], &o->max_attempts);
	mq__bind_text_out(&o->b[7], o->s.key, sizeof o->s.key - 1,
	    &o->len[7], &o->null[7]);
	mq__bind_text_out(&o->b[8], o->missed, sizeof o->missed - 1,
	    &o->len[8], &o->null[8]);
	mq__bind_u32(&o->b[9], &o->missed_max);
	mq__bind_i64(&o->b[10], &o->next_at_us);
	mq__bind_u64(&o->b[11], &o->version);
	mq__bind_i64(&o->b[12], &o->now_us);
	if (list) {
		mq__bind_i64(&o->b[13], &o->last_us);
		mq__bind_i32(&o->b[14], &o->last_manual);
		mq__bind_u64(&o->b[15], &o->last_job);
		mq__bind_text_out(&o->b[16], o->last_state,
		    sizeof o->last_state - 1, &o->len[16], &o->null[16]);
	}
	for (i = 0; i < n; i++) {
		o->b[i].length = &o->len[i];
		o->b[i].is_null = &o->null[i];
	}
}

/* The row just fetched into o, completed (strings ended, the payload
 * read): into *s, its payload malloc'd. */
static enum mq_status
take_row(struct mq_conn *c, MYSQL_STMT *st, struct row_out *o,
    struct mq_schedule *s)
{
	unsigned long plen = o->len[COL_PAYLOAD];
	MYSQL_BIND col;
	size_t i;
	char *strs[] = { o->s.name, o->s.expr, o->s.zone, o->s.queue };
	size_t sizes[] = { sizeof o->s.name, sizeof o->s.expr,
	    sizeof o->s.zone, sizeof o->s.queue };

	for (i = 0; i < 4; i++)
		strs[i][o->len[i] < sizes[i] - 1 ? o->len[i] : sizes[i] - 1] =
		    '\0';
	o->s.has_key = !o->null[7];
	o->s.key[o->null[7] ? 0 : o->len[7] < MQ_KEY_MAX ? o->len[7] :
	    MQ_KEY_MAX] = '\0';
	o->missed[o->len[8] < sizeof o->missed - 1 ? o->len[8] :
	    sizeof o->missed - 1] = '\0';
	o->s.missed = mq_missed_parse(o->missed) < 0 ? MQ_MISSED_DEFAULT :
	    (enum mq_missed)mq_missed_parse(o->missed);
	o->s.priority = o->priority;
	o->s.max_attempts = o->max_attempts;
	o->s.missed_max = o->missed_max;
	o->s.line = 0;
	o->s.payload_len = plen;
	if ((o->s.payload = malloc(plen ? plen : 1)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if (plen) {
		memset(&col, 0, sizeof col);
		col.buffer_type = MYSQL_TYPE_BLOB;
		col.buffer = o->s.payload;
		col.buffer_length = plen;
		if (mysql_stmt_fetch_column(st, &col, COL_PAYLOAD, 0) != 0) {
			free(o->s.payload);
			o->s.payload = NULL;
			return mq__dberr(c, st, "cannot read a schedule");
		}
	}
	*s = o->s;
	return MQ_OK;
}

/* The row's true lengths (o's, as read) against its strings in w->s:
 * the fields that hold a NUL byte or more than w->s holds. */
static void
row_lengths(const struct row_out *o, struct mq_schedule_row *w)
{
	static const unsigned bit[] = { MQ_SCHED_NAME, MQ_SCHED_EXPR,
	    MQ_SCHED_ZONE, MQ_SCHED_QUEUE };
	const char *strs[] = { w->s.name, w->s.expr, w->s.zone, w->s.queue };
	size_t sizes[] = { sizeof w->s.name, sizeof w->s.expr,
	    sizeof w->s.zone, sizeof w->s.queue }, i, len;
	size_t *lens[] = { &w->name_len, &w->expr_len, &w->zone_len,
	    &w->queue_len };

	w->nul = w->toolong = 0;
	for (i = 0; i < 4; i++) {
		len = o->len[i] < sizes[i] - 1 ? o->len[i] : sizes[i] - 1;
		if (o->len[i] > sizes[i] - 1)
			w->toolong |= bit[i];
		if (strlen(strs[i]) != len)
			w->nul |= bit[i];
		*lens[i] = len;
	}
	w->key_len = 0;
	if (w->s.has_key) {
		w->key_len = o->len[7] < MQ_KEY_MAX ? o->len[7] : MQ_KEY_MAX;
		if (o->len[7] > MQ_KEY_MAX)
			w->toolong |= MQ_SCHED_KEY;
		if (strlen(w->s.key) != w->key_len)
			w->nul |= MQ_SCHED_KEY;
	}
}

/* Runs st (a read of COLUMNS, list: and the list's) and appends each
 * row to *rows (*n of them, *cap allocated). budget: when the payloads
 * read reach that many bytes, the rows after are left (*cut set; 0: no
 * bound). */
static enum mq_status
read_schedules(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *in, int list,
    size_t budget, struct mq_schedule_row **rows, size_t *n, size_t *cap,
    int *cut)
{
	struct row_out *o = malloc(sizeof *o);
	enum mq_status rc;
	size_t bytes = 0;
	int r = 0;

	if (cut)
		*cut = 0;
	if (o == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	bind_row_out(o, list);
	rc = mq__execute(c, st, in, "cannot read the schedules");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, o->b) != 0)
		rc = mq__dberr(c, st, "cannot read the schedules");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		struct mq_schedule_row *w;
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			if ((w = realloc(*rows, nc * sizeof *w)) == NULL) {
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
				break;
			}
			*rows = w;
			*cap = nc;
		}
		w = &(*rows)[*n];
		memset(w, 0, sizeof *w);
		if ((rc = take_row(c, st, o, &w->s)) != MQ_OK)
			break;
		(*n)++;
		row_lengths(o, w);
		w->next_at_us = o->next_at_us;
		w->version = o->version;
		w->now_us = o->now_us;
		if (list && !o->null[13]) {
			w->has_last = 1;
			w->last_us = o->last_us;
			w->last_manual = o->last_manual;
			w->last_job = o->null[15] ? 0 : o->last_job;
			o->last_state[o->null[16] ? 0 : o->len[16] <
			    sizeof o->last_state - 1 ? o->len[16] :
			    sizeof o->last_state - 1] = '\0';
			memcpy(w->last_state, o->last_state,
			    sizeof w->last_state);
		}
		bytes += w->s.payload_len;
		if (budget && bytes >= budget) {
			*cut = 1;
			break;
		}
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot read the schedules");
	mysql_stmt_free_result(st);
	free(o);
	return rc;
}

void
mq_schedule_rows_free(struct mq_schedule_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		free(rows[i].s.payload);
	free(rows);
}

/* ---- the schedules a page at a time ---- */

/* the payloads of a page, about (the row that passes it ends it) */
#define PAGE_BYTES (1u << 20)

/* A read of the schedules by name, a page at a time (sql_page_first and
 * _after, or the list's), so that its memory is a page's, not the
 * table's: rows[at..n) are the page's rows not taken yet. */
struct pager {
	const char *first, *after, *from;	/* the statements */
	int list;			/* the list's columns too */
	struct mq_schedule_row *rows;
	size_t n, cap, at;
	int started;			/* a page was read: last is its end */
	int done;			/* that page was the last */
	char last[MQ_SCHEDULE_NAME_MAX + 1];
	unsigned long last_len;		/* a NUL byte may be among them */
};

/* The page's rows go. */
static void
pager_drop(struct pager *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->rows[i].s.payload);
	p->n = p->at = 0;
}

/* Back to the first page (a transaction that starts again). */
static void
pager_reset(struct pager *p)
{
	pager_drop(p);
	p->started = p->done = 0;
	p->last_len = 0;
}

static void
pager_free(struct pager *p)
{
	pager_drop(p);
	free(p->rows);
	p->rows = NULL;
	p->cap = 0;
}

/* Reads the next page into p, in place of the one before: the page
 * after the last row read, or (from) the page from that name on. */
static enum mq_status
pager_read(struct mq_conn *c, struct pager *p, const char *from)
{
	uint32_t limit = MQ_SCHEDULE_PAGE;
	MYSQL_BIND in[2];
	MYSQL_STMT *st;
	enum mq_status rc;
	const struct mq_schedule_row *end;
	unsigned long flen;
	int cut = 0, k = 0;

	pager_drop(p);
	if ((st = mq__prepare(c, from ? p->from : p->started ? p->after :
	    p->first)) == NULL)
		return c->err.status;
	if (from) {
		flen = (unsigned long)strlen(from);
		mq__bind_name(&in[k++], from, &flen);
	} else if (p->started) {
		mq__bind_name(&in[k++], p->last, &p->last_len);
	}
	mq__bind_u32(&in[k], &limit);
	rc = read_schedules(c, st, in, p->list, PAGE_BYTES, &p->rows, &p->n,
	    &p->cap, &cut);
	mq__release(c, st);
	if (rc != MQ_OK) {
		pager_drop(p);
		return rc;
	}
	p->started = 1;
	p->done = !cut && p->n < limit;
	if (p->n > 0) {
		end = &p->rows[p->n - 1];
		memcpy(p->last, end->s.name, end->name_len);
		p->last_len = (unsigned long)end->name_len;
	}
	return MQ_OK;
}

/* The page's next row into *row (NULL: none is left), reading the next
 * page when this one is taken: the one after it, or (from) the one from
 * that name on (the rows before it are not wanted). Valid until the
 * next call. */
static enum mq_status
pager_row(struct mq_conn *c, struct pager *p, const char *from,
    struct mq_schedule_row **row)
{
	enum mq_status rc;

	while (p->at == p->n && (!p->started || !p->done))
		if ((rc = pager_read(c, p, from)) != MQ_OK)
			return rc;
	*row = p->at < p->n ? &p->rows[p->at] : NULL;
	return MQ_OK;
}

/* One BIGINT (NULL: *null set) from st, run with in. */
static enum mq_status
read_i64(struct mq_conn *c, const char *tmpl, MYSQL_BIND *in, int64_t *v,
    int *null)
{
	MYSQL_STMT *st = mq__prepare(c, tmpl);
	MYSQL_BIND out[1];
	mq__bool isnull = 0;
	enum mq_status rc;
	int r;

	if (st == NULL)
		return c->err.status;
	memset(out, 0, sizeof out);
	mq__bind_i64(&out[0], v);
	out[0].is_null = &isnull;
	rc = mq__execute(c, st, in, "cannot read the schedules");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the schedules");
	if (rc == MQ_OK) {
		r = mysql_stmt_fetch(st);
		if (r == 1)
			rc = mq__dberr(c, st, "cannot read the schedules");
		*null = r == MYSQL_NO_DATA || isnull;
		mysql_stmt_free_result(st);
	}
	mq__release(c, st);
	return rc;
}

/* The last instant name fired by its expression, 0 if none. */
static enum mq_status
last_fired(struct mq_conn *c, const char *name, int64_t *last)
{
	MYSQL_BIND in[1];
	unsigned long len;
	int null;
	enum mq_status rc;

	mq__bind_name(&in[0], name, &len);
	len = (unsigned long)strlen(name);
	rc = read_i64(c, sql_last, in, last, &null);
	if (rc == MQ_OK && null)
		*last = 0;
	return rc;
}

/* ---- instants ---- */

/* A schedule's expression and zone, ready to compute. */
struct engine {
	struct mq_cron cron;
	struct mq_tz *tz;
};

static enum mq_status
engine_load(const struct mq_schedule *s, struct engine *e,
    struct mq_error *err)
{
	enum mq_status rc;

	e->tz = NULL;
	if ((rc = mq_cron_parse(s->expr, &e->cron, err)) != MQ_OK)
		return rc;
	return mq_tz_load(s->zone, NULL, &e->tz, err);
}

int
mq_schedule_unusable(const struct mq_schedule_row *r, char *why)
{
	static const unsigned nul_fields[] = { MQ_SCHED_NAME, MQ_SCHED_EXPR,
	    MQ_SCHED_ZONE, MQ_SCHED_QUEUE, MQ_SCHED_KEY };
	const struct mq_schedule *s = &r->s;
	struct mq_cron cron;
	struct mq_error err;
	size_t i;

	for (i = 0; i < sizeof nul_fields / sizeof *nul_fields; i++)
		if (r->nul & nul_fields[i]) {
			snprintf(why, MQ_UNUSABLE_MAX, "its %s holds a NUL "
			    "byte", mq_schedule_field_name(nul_fields[i]));
			return 1;
		}
	for (i = 0; i < sizeof nul_fields / sizeof *nul_fields; i++)
		if (r->toolong & nul_fields[i]) {
			snprintf(why, MQ_UNUSABLE_MAX, "its %s is too long",
			    mq_schedule_field_name(nul_fields[i]));
			return 1;
		}
	if (!mq_valid_queue(s->name))
		snprintf(why, MQ_UNUSABLE_MAX, "invalid schedule name '%s'",
		    s->name);
	else if (!mq_valid_queue(s->queue))
		snprintf(why, MQ_UNUSABLE_MAX, "invalid queue name '%s'",
		    s->queue);
	else if (!mq_tz_valid_name(s->zone))
		snprintf(why, MQ_UNUSABLE_MAX, "invalid time zone name "
		    "'%.200s'", s->zone);
	else if (mq_cron_parse(s->expr, &cron, &err) != MQ_OK)
		snprintf(why, MQ_UNUSABLE_MAX, "cron: %.280s", err.msg);
	else if (s->has_key && !mq_valid_key(s->key))
		snprintf(why, MQ_UNUSABLE_MAX, "invalid job key '%.255s'",
		    s->key);
	else if (s->priority < MQ_PRIORITY_MIN || s->priority > MQ_PRIORITY_MAX)
		snprintf(why, MQ_UNUSABLE_MAX, "priority %d is out of range "
		    "%d to %d", s->priority, MQ_PRIORITY_MIN, MQ_PRIORITY_MAX);
	else if (s->max_attempts < 1)
		snprintf(why, MQ_UNUSABLE_MAX, "max-attempts 0 is below 1");
	else if (s->missed_max < 1 || s->missed_max > MQ_MISSED_MAX_LIMIT)
		snprintf(why, MQ_UNUSABLE_MAX, "missed-max %u is out of range "
		    "1 to %d", s->missed_max, MQ_MISSED_MAX_LIMIT);
	else if (s->missed < MQ_MISSED_SKIP || s->missed > MQ_MISSED_ALL)
		snprintf(why, MQ_UNUSABLE_MAX, "invalid missed policy");
	else
		return 0;
	return 1;
}

/* The first instant after t (MQ_SCHEDULE_NEVER if there is none). */
static int64_t
engine_next(const struct engine *e, int64_t t)
{
	int64_t next;

	if (mq_cron_next(&e->cron, e->tz, t, &next) != MQ_OK)
		return MQ_SCHEDULE_NEVER;
	return next;
}

enum mq_status
mq_schedule_instants(const struct mq_schedule *s, int64_t from_s,
    int64_t *out, size_t n, size_t *got, struct mq_error *err)
{
	struct engine e;
	enum mq_status rc;

	*got = 0;
	if ((rc = engine_load(s, &e, err)) != MQ_OK)
		return rc;
	rc = mq_cron_runs(&e.cron, e.tz, from_s - 1, MQ_CRON_TIME_MAX, out, n,
	    got);
	mq_tz_free(e.tz);
	if (rc != MQ_OK) {
		*got = 0;
		err->status = rc;
		snprintf(err->msg, sizeof err->msg, "no instant after %lld",
		    (long long)from_s);
	}
	return rc;
}

static int64_t
floor_s(int64_t us)
{
	return us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
}

/* ---- apply ---- */

/* What an apply did: the results of the set's schedules (in its order),
 * then the names of the rows removed (by name). */
struct mq_apply_results {
	const struct mq_schedset *set;	/* the names of the first n */
	size_t n;
	int64_t *next_at;
	uint16_t *how;			/* what << 12 | changed */
	char *names;			/* the removed: NUL-ended, at roff */
	size_t nused, ncap;
	size_t *roff;
	size_t nremoved, rcap;
};

#define HOW(what, changed) ((uint16_t)((unsigned)(what) << 12 | (changed)))

size_t
mq_apply_results_count(const struct mq_apply_results *a)
{
	return a ? a->n + a->nremoved : 0;
}

void
mq_apply_results_get(const struct mq_apply_results *a, size_t i,
    struct mq_apply_result *r)
{
	const char *name;

	memset(r, 0, sizeof *r);
	if (i < a->n) {
		name = mq_schedset_name(a->set, i);
		r->what = (enum mq_applied)(a->how[i] >> 12);
		r->changed = a->how[i] & 0xfff;
		r->next_at = a->next_at[i];
	} else {
		name = a->names + a->roff[i - a->n];
		r->what = MQ_APPLIED_REMOVED;
	}
	snprintf(r->name, sizeof r->name, "%s", name);
}

void
mq_apply_results_free(struct mq_apply_results *a)
{
	if (a == NULL)
		return;
	free(a->next_at);
	free(a->how);
	free(a->names);
	free(a->roff);
	free(a);
}

/* Adds a removed row's name (as a string: cut at a NUL byte). */
static enum mq_status
add_removed(struct mq_conn *c, struct mq_apply_results *a, const char *name)
{
	size_t len = strlen(name) + 1;

	if (a->nused + len > a->ncap) {
		size_t nc = a->ncap ? 2 * a->ncap : 4096;
		char *m = realloc(a->names, nc);

		if (m == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		a->names = m;
		a->ncap = nc;
	}
	if (a->nremoved == a->rcap) {
		size_t nc = a->rcap ? 2 * a->rcap : 256;
		size_t *m = realloc(a->roff, nc * sizeof *m);

		if (m == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		a->roff = m;
		a->rcap = nc;
	}
	memcpy(a->names + a->nused, name, len);
	a->roff[a->nremoved++] = a->nused;
	a->nused += len;
	return MQ_OK;
}

/* The fields of want that differ from the row have. */
static unsigned
differences(const struct mq_schedule *have, const struct mq_schedule *want)
{
	unsigned d = 0;

	if (strcmp(have->expr, want->expr) != 0)
		d |= MQ_SCHED_EXPR;
	if (strcmp(have->zone, want->zone) != 0)
		d |= MQ_SCHED_ZONE;
	if (strcmp(have->queue, want->queue) != 0)
		d |= MQ_SCHED_QUEUE;
	if (have->payload_len != want->payload_len || (want->payload_len &&
	    memcmp(have->payload, want->payload, want->payload_len) != 0))
		d |= MQ_SCHED_PAYLOAD;
	if (have->priority != want->priority)
		d |= MQ_SCHED_PRIORITY;
	if (have->max_attempts != want->max_attempts)
		d |= MQ_SCHED_MAX_ATTEMPTS;
	if (have->has_key != want->has_key ||
	    (want->has_key && strcmp(have->key, want->key) != 0))
		d |= MQ_SCHED_KEY;
	if (have->missed != want->missed)
		d |= MQ_SCHED_MISSED;
	if (have->missed_max != want->missed_max)
		d |= MQ_SCHED_MISSED_MAX;
	if (strcmp(have->name, want->name) != 0)
		d |= MQ_SCHED_NAME;
	return d;
}

/* A schedule's last instant fired (sql_lasts). */
struct last {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	int nul;		/* the name held a NUL byte: not a file's */
	int64_t at;
};

/* the ledger's heads read at a time */
#define LASTS_PAGE 1024

struct apply {
	const struct mq_schedset *set;
	uint32_t *sorted;	/* set's indexes by name */
	size_t n;
	int prune, dry_run;
	struct mq_apply_results *res;
	struct mq_schedule want;	/* the one of set in hand */
	struct pager rows;	/* the table's, a page at a time */
	/* a page of the ledger's last instants (names ascending), read
	 * when one is needed: the schedules that need one come in name
	 * order, so each page is read from the name that needs it on */
	struct last *lasts;
	size_t nlasts, lat;
	int lasts_read;		/* a page was read in this transaction */
	int lasts_end;		/* no head after the page */
};

/* The row's values bound for sql_add (from name) or sql_change (from
 * expr); next_s NULL: kept (change). */
struct write_binds {
	MYSQL_BIND b[14];
	unsigned long len[14];
	int32_t priority;
	uint32_t max_attempts, missed_max;
	int64_t next_s;
	uint64_t version;
	const char *missed;
};

static void
bind_schedule(struct write_binds *w, const struct mq_schedule *s,
    int with_name, const int64_t *next_s)
{
	MYSQL_BIND *b = w->b;
	size_t k = 0;

	memset(w, 0, sizeof *w);
	w->priority = s->priority;
	w->max_attempts = s->max_attempts;
	w->missed_max = s->missed_max;
	w->missed = mq_missed_name(s->missed);
	if (with_name) {
		mq__bind_str(&b[k], s->name, &w->len[k]);
		k++;
	}
	mq__bind_str(&b[k], s->expr, &w->len[k]);
	k++;
	mq__bind_str(&b[k], s->zone, &w->len[k]);
	k++;
	mq__bind_str(&b[k], s->queue, &w->len[k]);
	k++;
	w->len[k] = (unsigned long)s->payload_len;
	mq__bind_blob(&b[k], s->payload, &w->len[k]);
	k++;
	mq__bind_i32(&b[k++], &w->priority);
	mq__bind_u32(&b[k++], &w->max_attempts);
	if (s->has_key) {
		w->len[k] = (unsigned long)strlen(s->key);
		mq__bind_blob(&b[k], s->key, &w->len[k]);
	} else {
		mq__bind_null(&b[k]);
	}
	k++;
	mq__bind_str(&b[k], w->missed, &w->len[k]);
	k++;
	mq__bind_u32(&b[k++], &w->missed_max);
	if (next_s) {
		w->next_s = *next_s;
		mq__bind_i64(&b[k], &w->next_s);
	} else {
		mq__bind_null(&b[k]);
	}
}

/* A write that found its row changed or taken by someone else since the
 * read: the transaction starts again (as after a deadlock). */
static enum mq_status
raced(struct mq_conn *c, const char *name)
{
	return mq__fail(c, MQ_ERETRY, "schedule '%s' was changed meanwhile "
	    "by another process: try again", name);
}

static enum mq_status
exec_write(struct mq_conn *c, const char *tmpl, MYSQL_BIND *b,
    const char *name, const char *what)
{
	MYSQL_STMT *st = mq__prepare(c, tmpl);
	enum mq_status rc;

	if (st == NULL)
		return c->err.status;
	rc = mq__execute(c, st, b, what);
	if (rc != MQ_OK && c->err.db_errno == ER_DUP_ENTRY)
		rc = raced(c, name);
	else if (rc == MQ_OK && mysql_stmt_affected_rows(st) == 0)
		rc = raced(c, name);
	mq__release(c, st);
	return rc;
}

/* A head of the ledger against a file's name, as row_cmp. */
static int
last_cmp(const struct last *l, const char *name)
{
	int cmp = mq__padcmp(l->name, name);

	return cmp == 0 && l->nul ? -1 : cmp;
}

/* Reads the ledger's last instants of the schedules from name on, a
 * page of them, into a->lasts. */
static enum mq_status
read_lasts(struct mq_conn *c, struct apply *a, const char *from)
{
	MYSQL_STMT *st = mq__prepare(c, sql_lasts);
	MYSQL_BIND in[2], out[2];
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	unsigned long len = 0, flen;
	uint32_t limit = LASTS_PAGE;
	mq__bool null[2] = { 0, 0 };
	int64_t at = 0;
	enum mq_status rc;
	int r = 0;

	a->nlasts = a->lat = 0;
	if (st == NULL)
		return c->err.status;
	if (a->lasts == NULL &&
	    (a->lasts = malloc(LASTS_PAGE * sizeof *a->lasts)) == NULL) {
		mq__release(c, st);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	flen = (unsigned long)strlen(from);
	mq__bind_name(&in[0], from, &flen);
	mq__bind_u32(&in[1], &limit);
	memset(out, 0, sizeof out);
	mq__bind_text_out(&out[0], name, sizeof name - 1, &len, &null[0]);
	mq__bind_i64(&out[1], &at);
	out[1].is_null = &null[1];
	rc = mq__execute(c, st, in, "cannot read the ledger");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the ledger");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED) && a->nlasts < LASTS_PAGE) {
		struct last *l = &a->lasts[a->nlasts++];

		len = len < sizeof name - 1 ? len : sizeof name - 1;
		name[len] = '\0';
		memcpy(l->name, name, sizeof name);
		l->nul = strlen(name) != len;
		l->at = null[1] ? 0 : at;
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot read the ledger");
	mysql_stmt_free_result(st);
	mq__release(c, st);
	a->lasts_end = a->nlasts < LASTS_PAGE;
	a->lasts_read = 1;
	if (rc != MQ_OK)
		a->nlasts = 0;
	return rc;
}

/* The last instant schedule name fired (0: none): names come in
 * ascending order within a transaction. */
static enum mq_status
last_of(struct mq_conn *c, struct apply *a, const char *name, int64_t *last)
{
	enum mq_status rc;
	int read = 0;

	for (;;) {
		while (a->lat < a->nlasts && last_cmp(&a->lasts[a->lat],
		    name) < 0)
			a->lat++;
		/* the page holds it, or its place: or nothing follows */
		if (a->lat < a->nlasts || (a->lasts_read && a->lasts_end) ||
		    read)
			break;
		if ((rc = read_lasts(c, a, name)) != MQ_OK)
			return rc;
		read = 1;
	}
	*last = a->lat < a->nlasts && last_cmp(&a->lasts[a->lat], name) == 0 ?
	    a->lasts[a->lat].at : 0;
	return MQ_OK;
}

/* The instant a new or changed schedule is due at: its first after the
 * later of now_s and the last it fired (now_s: a second before the old
 * next instant of a changed schedule that was due and not fired yet, so
 * that an instant both expressions hold is not lost by the change). */
static enum mq_status
first_instant(struct mq_conn *c, struct apply *a, const struct mq_schedule *s,
    int64_t now_s, int64_t *next_s)
{
	struct engine e;
	struct mq_error err;
	int64_t last;
	enum mq_status rc;

	if ((rc = last_of(c, a, s->name, &last)) != MQ_OK)
		return rc;
	if (engine_load(s, &e, &err) != MQ_OK) {
		mq_tz_free(e.tz);
		return mq__fail(c, MQ_EINVAL, "schedule '%s': %s", s->name,
		    err.msg);
	}
	*next_s = engine_next(&e, last > now_s ? last : now_s);
	mq_tz_free(e.tz);
	return MQ_OK;
}

/* A row's name against a file's, as the server orders them: trailing
 * blanks do not count; a name another program wrote with a NUL byte
 * (its string ends there) sorts before the file's name it begins with
 * (0x00 is below the blank the column pads with), and is never it. */
static int
row_cmp(const struct mq_schedule_row *row, const struct mq_schedule *want)
{
	int cmp = mq__padcmp(row->s.name, want->name);

	return cmp == 0 && (row->nul & MQ_SCHED_NAME) ? -1 : cmp;
}

/* A row of the table that the file does not name (it sorts before the
 * file's next name, or after its last): removed with --prune. */
static enum mq_status
unnamed(struct mq_conn *c, struct apply *a, const struct mq_schedule_row *row)
{
	MYSQL_BIND b[2];
	unsigned long nlen;
	uint64_t version = row->version;
	enum mq_status rc;

	if (!a->prune)
		return MQ_OK;
	if ((rc = add_removed(c, a->res, row->s.name)) != MQ_OK || a->dry_run)
		return rc;
	nlen = (unsigned long)row->name_len;
	mq__bind_name(&b[0], row->s.name, &nlen);
	mq__bind_u64(&b[1], &version);
	return exec_write(c, sql_prune, b, row->s.name,
	    "cannot remove the schedule");
}

/* One schedule of the file (a->want, index k of the set) against its
 * row (NULL: the table has none). */
static enum mq_status
apply_one(struct mq_conn *c, struct apply *a, size_t k,
    const struct mq_schedule_row *row, int64_t *now_us, int *have_now)
{
	const struct mq_schedule *want = &a->want;
	enum mq_applied what;
	unsigned changed = 0;
	int64_t next_at = 0, next_s = 0;
	enum mq_status rc;
	int null, moved;
	char why[MQ_UNUSABLE_MAX];

	if (row) {
		/* a field holding a NUL byte, or cut, is not the file's,
		 * whatever its first bytes */
		changed = differences(&row->s, want) | row->nul | row->toolong;
		next_at = floor_s(row->next_at_us);
		if (row->next_at_us % 1000000)
			next_at++;
		what = changed ? MQ_APPLIED_CHANGED : MQ_APPLIED_UNCHANGED;
	} else {
		what = MQ_APPLIED_ADDED;
	}
	a->res->how[k] = HOW(what, changed);
	a->res->next_at[k] = next_at;
	if (what == MQ_APPLIED_UNCHANGED)
		return MQ_OK;
	if (!*have_now) {
		if ((rc = read_i64(c, sql_now, NULL, now_us, &null)) != MQ_OK)
			return rc;
		*have_now = 1;
	}
	/* a row set aside as unusable (next_at the end of time) that the
	 * file repairs is due again from its expression, as if that had
	 * changed */
	moved = what == MQ_APPLIED_ADDED || (changed & (MQ_SCHED_EXPR |
	    MQ_SCHED_ZONE)) || mq_schedule_unusable(row, why);
	if (moved) {
		int64_t base = floor_s(*now_us);

		if (what == MQ_APPLIED_CHANGED &&
		    floor_s(row->next_at_us) <= base)
			base = floor_s(row->next_at_us) - 1;
		if ((rc = first_instant(c, a, want, base, &next_s)) != MQ_OK)
			return rc;
		a->res->next_at[k] = next_s;
	}
	if (a->dry_run)
		return MQ_OK;
	if (what == MQ_APPLIED_ADDED) {
		struct write_binds w;

		bind_schedule(&w, want, 1, &next_s);
		return exec_write(c, sql_add, w.b, want->name,
		    "cannot add the schedule");
	} else {
		struct write_binds w;
		unsigned long nlen = (unsigned long)strlen(want->name);
		unsigned long rlen = (unsigned long)row->name_len;

		bind_schedule(&w, want, 0, moved ? &next_s : NULL);
		mq__bind_str(&w.b[10], want->name, &nlen);
		mq__bind_name(&w.b[11], row->s.name, &rlen);
		w.version = row->version;
		mq__bind_u64(&w.b[12], &w.version);
		return exec_write(c, sql_change, w.b, want->name,
		    "cannot change the schedule");
	}
}

/* The file's schedules by name against the table's rows by name (the
 * server's order), read a page at a time: its memory is a page, not the
 * table. A row is read again only in a transaction that starts again:
 * a page starts after the last name of the one before (--prune: every
 * row is the file's or removed), or from the file's next name on (the
 * rows between are left), and a row this one adds sorts before the row
 * in hand (or after the last one). */
static enum mq_status
apply_tx(struct mq_conn *c, void *ctx)
{
	struct apply *a = ctx;
	struct mq_schedule_row *row = NULL;
	enum mq_status rc = MQ_OK;
	int64_t now_us = 0;
	int have_now = 0, cmp;
	size_t i;

	/* all again in this transaction */
	a->res->nremoved = 0;
	a->res->nused = 0;
	a->nlasts = a->lat = 0;
	a->lasts_read = a->lasts_end = 0;
	pager_reset(&a->rows);
	for (i = 0; rc == MQ_OK && i < a->n; i++) {
		size_t k = a->sorted[i];

		mq_schedset_get(a->set, k, &a->want);
		/* the rows before it are none of the file's */
		for (;;) {
			cmp = 1;
			if ((rc = pager_row(c, &a->rows, a->prune ? NULL :
			    a->want.name, &row)) != MQ_OK || row == NULL ||
			    (cmp = row_cmp(row, &a->want)) >= 0)
				break;
			a->rows.at++;
			if ((rc = unnamed(c, a, row)) != MQ_OK)
				break;
		}
		if (rc != MQ_OK)
			break;
		if (row != NULL && cmp == 0) {
			a->rows.at++;
			rc = apply_one(c, a, k, row, &now_us, &have_now);
		} else {
			rc = apply_one(c, a, k, NULL, &now_us, &have_now);
		}
	}
	/* and those after its last (without --prune, left unread) */
	while (rc == MQ_OK && a->prune) {
		if ((rc = pager_row(c, &a->rows, NULL, &row)) != MQ_OK ||
		    row == NULL)
			break;
		a->rows.at++;
		rc = unnamed(c, a, row);
	}
	return rc;
}

/* A schedule as the table can hold it (the parser's checks, again:
 * a caller may build them by hand). */
static enum mq_status
check_schedule(struct mq_conn *c, const struct mq_schedule *s)
{
	struct mq_cron cron;
	struct mq_error err;

	if (!mq_valid_queue(s->name))
		return mq__fail(c, MQ_EINVAL, "invalid schedule name");
	if (!mq_valid_queue(s->queue))
		return mq__fail(c, MQ_EINVAL, "schedule '%s': invalid queue "
		    "name", s->name);
	if (!mq_tz_valid_name(s->zone))
		return mq__fail(c, MQ_EINVAL, "schedule '%s': invalid zone",
		    s->name);
	if (mq_cron_parse(s->expr, &cron, &err) != MQ_OK)
		return mq__fail(c, MQ_EINVAL, "schedule '%s': %s", s->name,
		    err.msg);
	if (s->has_key && !mq_valid_key(s->key))
		return mq__fail(c, MQ_EINVAL, "schedule '%s': invalid job key",
		    s->name);
	if (s->priority < MQ_PRIORITY_MIN || s->priority > MQ_PRIORITY_MAX ||
	    s->max_attempts < 1 || s->missed_max < 1 ||
	    s->missed_max > MQ_MISSED_MAX_LIMIT ||
	    s->missed < MQ_MISSED_SKIP || s->missed > MQ_MISSED_ALL)
		return mq__fail(c, MQ_EINVAL, "schedule '%s': a value out of "
		    "range", s->name);
	if (s->payload_len > mq_max_payload(c))
		return mq__fail(c, MQ_ETOOBIG, "schedule '%s': payload of %zu "
		    "bytes is larger than the server's max_allowed_packet "
		    "allows (%zu bytes)", s->name, s->payload_len,
		    mq_max_payload(c));
	return MQ_OK;
}

static void wake_changed(struct mq_conn *c,
    const struct mq_apply_results *res);

enum mq_status
mq_schedule_apply(struct mq_conn *c, const struct mq_schedset *set,
    int prune, int dry_run, struct mq_apply_results **out)
{
	struct apply *a;
	struct mq_apply_results *res;
	enum mq_status rc = MQ_OK;
	size_t i, n = mq_schedset_count(set);

	*out = NULL;
	if ((a = calloc(1, sizeof *a)) == NULL ||
	    (res = calloc(1, sizeof *res)) == NULL) {
		free(a);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	a->res = res;
	res->set = set;
	res->n = n;
	for (i = 0; i < n && rc == MQ_OK; i++) {
		mq_schedset_get(set, i, &a->want);
		rc = check_schedule(c, &a->want);
	}
	if (rc != MQ_OK)
		goto out;
	if ((a->sorted = mq_schedset_by_name(set)) == NULL ||
	    (res->next_at = calloc(n + 1, sizeof *res->next_at)) == NULL ||
	    (res->how = calloc(n + 1, sizeof *res->how)) == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 1; i < n; i++)
		if (strcmp(mq_schedset_name(set, a->sorted[i - 1]),
		    mq_schedset_name(set, a->sorted[i])) == 0) {
			rc = mq__fail(c, MQ_EINVAL, "schedule '%s' is given "
			    "twice", mq_schedset_name(set, a->sorted[i]));
			goto out;
		}
	a->set = set;
	a->n = n;
	a->prune = prune;
	a->dry_run = dry_run;
	a->rows.first = sql_page_first;
	a->rows.after = sql_page_after;
	a->rows.from = sql_page_from;
	if ((rc = mq__read_committed(c)) == MQ_OK)
		rc = mq__in_tx(c, apply_tx, a);
	if (rc == MQ_EMPTY)
		rc = MQ_OK;
	/* the pages go before the wakeups */
	pager_free(&a->rows);
	free(a->lasts);
	a->lasts = NULL;
	if (rc == MQ_OK && !dry_run)
		wake_changed(c, res);
out:
	pager_free(&a->rows);
	free(a->lasts);
	free(a->sorted);
	free(a);
	if (rc != MQ_OK) {
		mq_apply_results_free(res);
		return rc;
	}
	*out = res;
	return MQ_OK;
}

/* The consumers waiting on the queues of schedules added or changed
 * read the schedules again (fire_due.c: a wakeup that brings no job),
 * so that a first instant sooner than their next look is not late;
 * each queue once, the first WAKE_QUEUES of them (the others' consumers
 * look within MQ_FIRE_RECHECK_US). */
#define WAKE_QUEUES 64
static void
wake_changed(struct mq_conn *c, const struct mq_apply_results *res)
{
	const char *woken[WAKE_QUEUES], *queue;
	size_t nw = 0, i, k;

	for (i = 0; i < res->n && nw < WAKE_QUEUES; i++) {
		unsigned what = res->how[i] >> 12;

		if (what != MQ_APPLIED_ADDED && what != MQ_APPLIED_CHANGED)
			continue;
		queue = mq_schedset_queue(res->set, i);
		for (k = 0; k < nw && strcmp(woken[k], queue) != 0; k++)
			;
		if (k < nw)
			continue;
		woken[nw++] = queue;
		mq__wake_pushed(c, queue, 1);
	}
}

/* ---- fire ---- */

struct fire {
	const char *due_sql;	/* the due read, a template */
	/* the queues, then how many due schedules to pass over: those this
	 * host could not fire (below) */
	MYSQL_BIND qb[MQ_QUEUES_MAX + 1];
	uint64_t pass;
	int host_fault;		/* this transaction's schedule: this host's */
	int row_read;		/* this transaction read its schedule: name */
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	unsigned long qlen[MQ_QUEUES_MAX];
	char names[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	size_t nq;
	/* this transaction's */
	char queue[MQ_QUEUE_MAX + 1];
	uint64_t runs, skipped;
	int broken;
	int64_t *instants;	/* MQ_MISSED_MAX_LIMIT of them */
};

/* The instants of e in (t0, t1], the newest MQ_MISSED_MAX_LIMIT of them
 * in out[0..*n) (oldest first). */
static void
collect_all(const struct engine *e, int64_t t0, int64_t t1, int64_t *out,
    size_t *n)
{
	int64_t chunk[256];
	size_t got, k, keep = 0;

	for (;;) {
		if (mq_cron_runs(&e->cron, e->tz, t0, t1, chunk, 256, &got) !=
		    MQ_OK || got == 0)
			break;
		for (k = 0; k < got; k++) {
			if (keep == MQ_MISSED_MAX_LIMIT) {
				memmove(out, out + 1, (keep - 1) * sizeof *out);
				keep--;
			}
			out[keep++] = chunk[k];
		}
		if (got < 256)
			break;
		t0 = chunk[got - 1];
	}
	*n = keep;
}

/* The same, read back from t1 in windows that double (an hour, two,
 * four, ...) until one holds as many as are kept, or reaches t0: a
 * schedule of every minute whose next_at is decades old (a row another
 * program wrote, a restore) read each of its millions of instants
 * inside the firing's transaction (3.6 s for 56 years). */
static void
collect(const struct engine *e, int64_t t0, int64_t t1, int64_t *out,
    size_t *n)
{
	int64_t w = 3600, from;

	for (;;) {
		from = t1 - t0 > w ? t1 - w : t0;
		collect_all(e, from, t1, out, n);
		if (*n >= MQ_MISSED_MAX_LIMIT || from == t0)
			return;
		w = w > INT64_MAX / 2 ? INT64_MAX : 2 * w;
	}
}

static enum mq_status
ledger_add(struct mq_conn *c, const char *name, int64_t instant, uint64_t job)
{
	MYSQL_BIND b[3];
	unsigned long nlen;
	MYSQL_STMT *st = mq__prepare(c, sql_fired);
	enum mq_status rc;

	if (st == NULL)
		return c->err.status;
	mq__bind_str(&b[0], name, &nlen);
	mq__bind_i64(&b[1], &instant);
	if (job)
		mq__bind_u64(&b[2], &job);
	else
		mq__bind_null(&b[2]);
	rc = mq__execute(c, st, b, "cannot record the instant fired");
	/* another process (a Galera node) fired it: begin again, and find
	 * next_at moved */
	if (rc != MQ_OK && c->err.db_errno == ER_DUP_ENTRY)
		rc = raced(c, name);
	mq__release(c, st);
	return rc;
}

static enum mq_status
push_run(struct mq_conn *c, const struct mq_schedule *s, int64_t instant,
    uint64_t *id)
{
	struct mq_push_opts o;
	char at[32];

	memset(&o, 0, sizeof o);
	o.queue = s->queue;
	o.priority = s->priority;
	o.max_attempts = s->max_attempts;
	o.key = s->has_key ? s->key : NULL;
	if (instant >= 0) {
		snprintf(at, sizeof at, "@%lld", (long long)instant);
		o.at = at;
	}
	return mq__push_in_tx(c, &o, s->payload, s->payload_len, id);
}

/* (name: name_len bytes, a NUL among them in a row another program
 * wrote) */
static enum mq_status
move_next(struct mq_conn *c, const char *name, size_t name_len,
    uint64_t version, int64_t next_s)
{
	MYSQL_BIND b[3];
	unsigned long nlen = (unsigned long)name_len;

	mq__bind_i64(&b[0], &next_s);
	mq__bind_name(&b[1], name, &nlen);
	mq__bind_u64(&b[2], &version);
	return exec_write(c, sql_move, b, name, "cannot move the schedule");
}

/* Which of the instants in[0..n) (oldest first) run, by the policy:
 * run[i] set. An instant less than the grace late always runs. */
static void
policy(const struct mq_schedule *s, const int64_t *in, size_t n,
    int64_t now_s, unsigned char *run)
{
	size_t i, late = 0, allowed;

	for (i = 0; i < n; i++) {
		run[i] = now_s - in[i] < MQ_SCHEDULE_GRACE_S;
		if (!run[i])
			late++;
	}
	allowed = s->missed == MQ_MISSED_SKIP ? 0 :
	    s->missed == MQ_MISSED_ONCE ? 1 : s->missed_max;
	/* the late ones are the oldest: the newest of them run */
	for (i = late; i > 0 && allowed > 0; i--, allowed--)
		run[i - 1] = 1;
}

static enum mq_status
fire_tx(struct mq_conn *c, void *ctx)
{
	struct fire *f = ctx;
	struct mq_schedule_row *rows = NULL;
	size_t nrows = 0, cap = 0, n = 0, i;
	unsigned char run[MQ_MISSED_MAX_LIMIT];
	char why[MQ_UNUSABLE_MAX];
	struct mq_schedule *s;
	struct mq_error err;
	struct engine e;
	MYSQL_STMT *st;
	enum mq_status rc;
	int64_t now_s, from, last, next_s;
	uint64_t id;

	f->runs = f->skipped = 0;
	f->broken = 0;
	f->host_fault = 0;
	f->row_read = 0;
	if ((st = mq__prepare_once(c, f->due_sql)) == NULL)
		return c->err.status;
	mq__bind_u64(&f->qb[f->nq], &f->pass);
	rc = read_schedules(c, st, f->qb, 0, 0, &rows, &nrows, &cap, NULL);
	mq__release(c, st);
	if (rc != MQ_OK || nrows == 0) {
		mq_schedule_rows_free(rows, nrows);
		return rc == MQ_OK ? MQ_EMPTY : rc;
	}
	s = &rows[0].s;
	memcpy(f->queue, s->queue, sizeof f->queue);
	memcpy(f->name, s->name, sizeof f->name);
	f->row_read = 1;
	now_s = floor_s(rows[0].now_us);
	/* from next_at on (itself if an instant), but none fired already */
	from = floor_s(rows[0].next_at_us + 999999) - 1;
	if ((rc = last_fired(c, s->name, &last)) != MQ_OK)
		goto out;
	if (last > from)
		from = last;
	/* a row mq would not write (another program's: an expression,
	 * a zone name, a queue, a key or a number mq refuses) cannot fire
	 * anywhere, and must not stand first in the due index forever */
	if (mq_schedule_unusable(&rows[0], why)) {
		f->broken = 1;
		rc = move_next(c, s->name, rows[0].name_len, rows[0].version,
		    MQ_SCHEDULE_NEVER);
		goto out;
	}
	/* a zone this host cannot load (its zone database lacks it, or
	 * TZDIR points elsewhere) is this host's fault, not the row's:
	 * left due for the others, and said */
	if (engine_load(s, &e, &err) != MQ_OK) {
		mq_tz_free(e.tz);
		f->host_fault = err.status != MQ_ENOMEM;
		rc = mq__fail(c, err.status == MQ_ENOMEM ? MQ_ENOMEM :
		    MQ_ECONFIG, "schedule '%s': %s", s->name, err.msg);
		goto out;
	}
	if (from < now_s)
		collect(&e, from, now_s, f->instants, &n);
	policy(s, f->instants, n, now_s, run);
	for (i = 0; rc == MQ_OK && i < n; i++) {
		id = 0;
		if (run[i] && (rc = push_run(c, s, f->instants[i], &id)) !=
		    MQ_OK) {
			/* a payload over this server's max_allowed_packet
			 * (lowered since the apply; another node's may be
			 * larger): this host's, as a zone above */
			f->host_fault = rc == MQ_ETOOBIG;
			break;
		}
		if (run[i])
			f->runs++;
		else
			f->skipped++;
		rc = ledger_add(c, s->name, f->instants[i], id);
	}
	next_s = engine_next(&e, from > now_s ? from : now_s);
	mq_tz_free(e.tz);
	if (rc == MQ_OK)
		rc = move_next(c, s->name, rows[0].name_len, rows[0].version,
		    next_s);
out:
	mq_schedule_rows_free(rows, nrows);
	return rc;
}

/* Whether a firing failed for its schedule's values: a data error the
 * server found in them (SQLSTATE class 22: a value out of range, an
 * incorrect value, data too long; a CHECK constraint, a NULL where none
 * goes), or mq's own check of a value (MQ_EINVAL, no server error). The
 * row's fault, on every host: not the connection's, the grants', a
 * read-only server's, nor a deadlock's or a lock wait's. */
static int
row_fault(const struct mq_error *e)
{
	if (e->status == MQ_EINVAL && e->db_errno == 0)
		return 1;
	if (e->status != MQ_EDB)
		return 0;
	return strncmp(e->sqlstate, "22", 2) == 0 ||
	    e->db_errno == ER_CONSTRAINT_FAILED ||	/* 4025: a CHECK */
	    e->db_errno == 3819 ||			/* MySQL's CHECK */
	    e->db_errno == ER_BAD_NULL_ERROR ||		/* 1048 */
	    e->db_errno == ER_WARN_DATA_OUT_OF_RANGE ||	/* 1264 */
	    e->db_errno == WARN_DATA_TRUNCATED ||	/* 1265 */
	    e->db_errno == ER_TRUNCATED_WRONG_VALUE_FOR_FIELD || /* 1366 */
	    e->db_errno == ER_DATA_TOO_LONG ||		/* 1406 */
	    e->db_errno == ER_DATA_OUT_OF_RANGE;	/* 1690 */
}

/* e, said of schedule name (a pass-over's error: which one it was). */
static void
name_it(struct mq_error *e, const char *name)
{
	char prefix[MQ_SCHEDULE_NAME_MAX + 16];
	size_t p, m = strnlen(e->msg, sizeof e->msg - 1);

	snprintf(prefix, sizeof prefix, "schedule '%s': ", name);
	p = strlen(prefix);
	if (strncmp(e->msg, prefix, p) == 0)
		return;
	if (p + m >= sizeof e->msg)
		m = sizeof e->msg - 1 - p;
	memmove(e->msg + p, e->msg, m);
	memcpy(e->msg, prefix, p);
	e->msg[p + m] = '\0';
}

/* The queues' list bound for the due read and the earliest next_at;
 * the statements' text with the list's placeholders. */
static enum mq_status
fire_queues(struct mq_conn *c, struct fire *f, const char *queues,
    char **due, char **next)
{
	char marks[MQ_QUEUES_MAX * 3 + 1] = "";
	size_t i, k = 0;

	*due = *next = NULL;
	if (queues == NULL)
		return MQ_OK;
	if ((f->nq = mq__queue_list(queues, f->names)) == 0)
		return mq__fail(c, MQ_EINVAL, "invalid queue list");
	for (i = 0; i < f->nq; i++) {
		mq__bind_str(&f->qb[i], f->names[i], &f->qlen[i]);
		k += (size_t)snprintf(marks + k, sizeof marks - k, "%s?",
		    i ? ", " : "");
	}
	*due = malloc(sizeof sql_due_queues + sizeof marks);
	*next = malloc(sizeof sql_next_head + sizeof sql_next_tail +
	    f->nq * (sizeof sql_next_part + 11));
	if (*due == NULL || *next == NULL) {
		free(*due);
		free(*next);
		*due = *next = NULL;
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	snprintf(*due, sizeof sql_due_queues + sizeof marks, sql_due_queues,
	    marks);
	strcpy(*next, sql_next_head);
	for (i = 0; i < f->nq; i++) {
		if (i)
			strcat(*next, " UNION ALL ");
		strcat(*next, sql_next_part);
	}
	strcat(*next, sql_next_tail);
	return MQ_OK;
}

/* The earliest next_at of the schedules f names (0: none) and the
 * server's now, in r. */
static enum mq_status
look(struct mq_conn *c, struct fire *f, const char *sql,
    struct mq_fire_report *r)
{
	MYSQL_STMT *st = mq__prepare_once(c, sql);
	MYSQL_BIND out[2];
	mq__bool nextnull = 0, nownull = 0;
	int64_t next_us = 0;
	enum mq_status rc;

	if (st == NULL)
		return c->err.status;
	memset(out, 0, sizeof out);
	mq__bind_i64(&out[0], &next_us);
	out[0].is_null = &nextnull;
	mq__bind_i64(&out[1], &r->now_us);
	out[1].is_null = &nownull;
	rc = mq__execute(c, st, f->nq ? f->qb : NULL,
	    "cannot read the schedules");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out))
		rc = mq__dberr(c, st, "cannot read the schedules");
	if (rc == MQ_OK) {
		if (mysql_stmt_fetch(st) != 0)
			nextnull = 1;
		mysql_stmt_free_result(st);
	}
	mq__release(c, st);
	/* 0 says "none" (struct mq_fire_report): a next_at at the epoch
	 * itself (a row another program wrote) is a past instant like any
	 * other, a microsecond earlier, not the absence of schedules */
	if (rc == MQ_OK && !nextnull && next_us == 0)
		next_us = -1;
	r->next_us = rc == MQ_OK && !nextnull ? next_us : 0;
	return rc;
}

enum mq_status
mq_schedule_fire(struct mq_conn *c, const char *queues, size_t max,
    struct mq_fire_report *r)
{
	struct fire *f = calloc(1, sizeof *f);
	char *due = NULL, *next = NULL;
	struct mq_error first;
	enum mq_status rc;
	int held = 0;

	memset(r, 0, sizeof *r);
	if (f == NULL || (f->instants = malloc(MQ_MISSED_MAX_LIMIT *
	    sizeof *f->instants)) == NULL) {
		if (f)
			free(f);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	rc = fire_queues(c, f, queues, &due, &next);
	f->due_sql = due ? due : sql_due_all;
	/* nothing due (the common case): that one look */
	if (rc == MQ_OK)
		rc = look(c, f, next ? next : sql_next_all, r);
	if (rc == MQ_OK && (r->next_us == 0 || r->next_us > r->now_us))
		goto out;
	if (rc == MQ_OK)
		rc = mq__read_committed(c);
	while (rc == MQ_OK && (max == 0 || r->schedules + f->pass < max)) {
		rc = mq__in_tx(c, fire_tx, f);
		/* a schedule this host cannot fire stays due, for the hosts
		 * that can; one whose values the server refuses (a data
		 * error: out of range, too long, a CHECK) stays due until
		 * they are repaired. Neither may stand before the others:
		 * passed over (the due read's offset), the others fired, and
		 * its error, the first such, returned at the end, naming it */
		if (rc != MQ_OK && rc != MQ_EMPTY && (f->host_fault ||
		    (f->row_read && row_fault(&c->err)))) {
			if (!held) {
				held = 1;
				first = c->err;
				name_it(&first, f->name);
			}
			f->pass++;
			rc = MQ_OK;
			continue;
		}
		if (rc != MQ_OK)
			break;
		r->schedules++;
		r->runs += f->runs;
		r->skipped += f->skipped;
		r->broken += (uint64_t)f->broken;
		if (f->runs)
			mq__wake_pushed(c, f->queue, f->runs);
	}
	if (rc == MQ_EMPTY)
		rc = MQ_OK;
	if (rc == MQ_OK)
		rc = look(c, f, next ? next : sql_next_all, r);
	if (rc == MQ_OK && held) {
		c->err = first;
		rc = first.status;
	}
out:
	free(due);
	free(next);
	free(f->instants);
	free(f);
	return rc;
}

/* ---- run, rm, list ---- */

struct manual {
	const char *name;
	uint64_t id;
	char queue[MQ_QUEUE_MAX + 1];
};

static enum mq_status
run_tx(struct mq_conn *c, void *ctx)
{
	struct manual *m = ctx;
	struct mq_schedule_row *rows = NULL;
	size_t nrows = 0, cap = 0;
	MYSQL_BIND in[1], b[2];
	unsigned long nlen;
	MYSQL_STMT *st;
	enum mq_status rc;
	char why[MQ_UNUSABLE_MAX];

	if ((st = mq__prepare(c, sql_one)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], m->name, &nlen);
	rc = read_schedules(c, st, in, 0, 0, &rows, &nrows, &cap, NULL);
	mq__release(c, st);
	if (rc == MQ_OK && nrows == 0)
		rc = MQ_EMPTY;
	/* a row no mq writes runs nowhere, by hand neither (a key cut
	 * at a NUL byte would be another job's key) */
	if (rc == MQ_OK && mq_schedule_unusable(&rows[0], why))
		rc = mq__fail(c, MQ_EINVAL, "schedule '%s' is unusable: %s",
		    m->name, why);
	if (rc == MQ_OK)
		rc = push_run(c, &rows[0].s, -1, &m->id);
	if (rc == MQ_OK) {
		memcpy(m->queue, rows[0].s.queue, sizeof m->queue);
		if ((st = mq__prepare(c, sql_manual)) == NULL) {
			rc = c->err.status;
		} else {
			mq__bind_str(&b[0], m->name, &nlen);
			mq__bind_u64(&b[1], &m->id);
			rc = mq__execute(c, st, b, "cannot record the run");
			if (rc != MQ_OK && c->err.db_errno == ER_DUP_ENTRY)
				rc = raced(c, m->name);
			mq__release(c, st);
		}
	}
	mq_schedule_rows_free(rows, nrows);
	return rc;
}

enum mq_status
mq_schedule_run(struct mq_conn *c, const char *name, uint64_t *id)
{
	struct manual m;
	enum mq_status rc;

	*id = 0;
	if (!mq_valid_queue(name))
		return mq__fail(c, MQ_EINVAL, "invalid schedule name");
	memset(&m, 0, sizeof m);
	m.name = name;
	if ((rc = mq__read_committed(c)) == MQ_OK)
		rc = mq__in_tx(c, run_tx, &m);
	if (rc == MQ_EMPTY)
		return mq__fail(c, MQ_EMPTY, "no schedule '%s'", name);
	if (rc != MQ_OK)
		return rc;
	*id = m.id;
	mq__wake_pushed(c, m.queue, 1);
	return MQ_OK;
}

enum mq_status
mq_schedule_rm(struct mq_conn *c, const char *name)
{
	MYSQL_BIND in[1];
	unsigned long nlen;
	MYSQL_STMT *st;
	enum mq_status rc;

	if (!mq_valid_queue(name))
		return mq__fail(c, MQ_EINVAL, "invalid schedule name");
	if ((st = mq__prepare(c, sql_rm)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], name, &nlen);
	rc = mq__execute_retry(c, st, in, "cannot remove the schedule");
	if (rc == MQ_OK && mysql_stmt_affected_rows(st) == 0)
		rc = mq__fail(c, MQ_EMPTY, "no schedule '%s'", name);
	mq__release(c, st);
	return rc;
}

enum mq_status
mq_schedule_list(struct mq_conn *c,
    void (*each)(void *ctx, const struct mq_schedule_row *row), void *ctx)
{
	struct pager p;
	enum mq_status rc;
	size_t i;

	memset(&p, 0, sizeof p);
	p.first = sql_list_first;
	p.after = sql_list_after;
	p.list = 1;
	/* each page read whole (its statement done) before its rows are
	 * handed over: a slow reader holds no statement open */
	do {
		if ((rc = pager_read(c, &p, NULL)) != MQ_OK)
			break;
		for (i = 0; i < p.n; i++)
			each(ctx, &p.rows[i]);
	} while (!p.done);
	pager_free(&p);
	return rc;
}

/* ---- the ledger's old rows (mq archive) ---- */

/* each schedule's newest row, of its runs by the expression (manual 0)
 * or by hand (1): one loose scan of the primary key */
static const char sql_ledger_heads[] =
    "SELECT schedule, " TO_US("MAX(instant)") " FROM `{{TABLE}}_fired`"
    " WHERE manual = ? GROUP BY schedule";
/* a range of the primary key: older than the newest, fired long ago */
/* (a row whose run is still a job, or archived, stays: mq show lists a
 * schedule's last runs with their outcomes from it; it goes once the
 * run is purged) */
static const char sql_ledger_prune[] =
    "DELETE FROM `{{TABLE}}_fired` WHERE schedule = ? AND manual = ?"
    " AND instant < TIMESTAMPADD(MICROSECOND, ?, " EPOCH ")"
    " AND fired_at < " MQ_SQL_NOW " - INTERVAL ? MICROSECOND"
    " AND (job IS NULL OR (NOT EXISTS (SELECT 1 FROM `{{TABLE}}` AS j"
    " WHERE j.id = job) AND NOT EXISTS (SELECT 1 FROM `{{TABLE}}_archive`"
    " AS a WHERE a.id = job)))"
    " ORDER BY instant LIMIT ?";

struct head {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	int64_t newest_us;
};

static enum mq_status
ledger_heads(struct mq_conn *c, int32_t manual, struct head **heads,
    size_t *n)
{
	MYSQL_STMT *st = mq__prepare(c, sql_ledger_heads);
	MYSQL_BIND in[1], out[2];
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	unsigned long len = 0;
	mq__bool null[2] = { 0, 0 };
	int64_t us = 0;
	size_t cap = 0;
	enum mq_status rc;
	int r = 0;

	*heads = NULL;
	*n = 0;
	if (st == NULL)
		return c->err.status;
	mq__bind_i32(&in[0], &manual);
	memset(out, 0, sizeof out);
	mq__bind_text_out(&out[0], name, sizeof name - 1, &len, &null[0]);
	mq__bind_i64(&out[1], &us);
	out[1].is_null = &null[1];
	rc = mq__execute(c, st, in, "cannot read the ledger");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the ledger");
	while (rc == MQ_OK && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct head *m = realloc(*heads, nc * sizeof *m);
			if (m == NULL) {
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
				break;
			}
			*heads = m;
			cap = nc;
		}
		len = len < sizeof name - 1 ? len : sizeof name - 1;
		memcpy((*heads)[*n].name, name, len);
		(*heads)[*n].name[len] = '\0';
		(*heads)[(*n)++].newest_us = null[1] ? 0 : us;
	}
	if (rc == MQ_OK && r == 1)
		rc = mq__dberr(c, st, "cannot read the ledger");
	mysql_stmt_free_result(st);
	mq__release(c, st);
	return rc;
}

enum mq_status
mq_schedule_prune_ledger(struct mq_conn *c, int64_t older_than_us,
    unsigned batch, uint64_t *deleted)
{
	struct head *heads = NULL;
	MYSQL_BIND b[5];
	MYSQL_STMT *st;
	enum mq_status rc;
	unsigned long nlen;
	uint32_t limit = batch ? batch : 500;
	int64_t newest, age = older_than_us;
	int32_t manual;
	size_t n = 0, i;
	uint64_t got;

	*deleted = 0;
	if ((rc = mq__read_committed(c)) != MQ_OK)
		return rc;
	for (manual = 0; rc == MQ_OK && manual <= 1; manual++) {
		if ((rc = ledger_heads(c, manual, &heads, &n)) != MQ_OK)
			break;
		if ((st = mq__prepare(c, sql_ledger_prune)) == NULL)
			rc = c->err.status;
		for (i = 0; rc == MQ_OK && i < n; i++) {
			newest = heads[i].newest_us;
			mq__bind_str(&b[0], heads[i].name, &nlen);
			mq__bind_i32(&b[1], &manual);
			mq__bind_i64(&b[2], &newest);
			mq__bind_i64(&b[3], &age);
			mq__bind_u32(&b[4], &limit);
			do {
				rc = mq__execute_retry(c, st, b,
				    "cannot prune the ledger");
				got = rc == MQ_OK ?
				    mysql_stmt_affected_rows(st) : 0;
				*deleted += got;
			} while (rc == MQ_OK && got == limit);
		}
		if (st)
			mq__release(c, st);
		free(heads);
		heads = NULL;
	}
	/* an account not granted the ledger (an operator role from before
	 * schema 12) archives as it did: pruning is not its to do */
	if (rc != MQ_OK && c->err.db_errno == ER_TABLEACCESS_DENIED_ERROR)
		rc = MQ_OK;
	return rc;
}
