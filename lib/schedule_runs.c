/*
 * schedule_runs.c: a schedule's runs as operators read them (mq show,
 * mq why, mq ls of issue 33's "every run is visible"): which schedule
 * and instant a job runs (the ledger's job index), a schedule's next
 * instant, and its newest runs with their jobs' outcomes, from the job
 * table, its archive, or neither (purged). Read only, no locks.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "schedule.h"
#include "sql_terms.h"

/* a job's ledger row: one lookup of the job index (a job is one run) */
const char mq__sql_run_of[] =
    "SELECT schedule, manual, " MQ_SQL_EPOCH_US("instant")
    " FROM `{{TABLE}}_fired` WHERE job = ? LIMIT 1";
static const char sql_sched[] =
    "SELECT expr, zone, queue, " MQ_SQL_EPOCH_US("next_at") ", "
    MQ_SQL_EPOCH_US(MQ_SQL_NOW) " FROM `{{TABLE}}_schedules` WHERE name = ?";
/* the newest runs: the expression's and the manual ones, each a range of
 * the primary key read backwards, merged; each run's job in the job
 * table or else in the archive (its stored state), else purged */
#define RUNS_OF(manual) \
    "(SELECT " MQ_SQL_EPOCH_US("f.instant") ", f.manual, f.job," \
    " CAST(COALESCE(j.state, a.state) AS CHAR), j.id IS NULL AND" \
    " a.id IS NOT NULL FROM `{{TABLE}}_fired` f" \
    " LEFT JOIN `{{TABLE}}` j ON j.id = f.job" \
    " LEFT JOIN `{{TABLE}}_archive` a ON a.id = f.job" \
    " WHERE f.schedule = ? AND f.manual = " manual \
    " ORDER BY f.instant DESC LIMIT ?)"
const char mq__sql_schedule_runs[] =
    RUNS_OF("0") " UNION ALL " RUNS_OF("1")
    " ORDER BY 1 DESC, 2 DESC LIMIT ?";

/* s[0..len) ended within size bytes; the bytes it holds */
static size_t
end(char *s, size_t size, unsigned long len, mq__bool null)
{
	size_t n = null ? 0 : len < size - 1 ? len : size - 1;

	s[n] = '\0';
	return n;
}

/* Runs st with in bound, its one row (if any) into out; MQ_EMPTY when
 * there is none. */
static enum mq_status
one_row(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *in, MYSQL_BIND *out,
    const char *what)
{
	enum mq_status rc = mq__execute(c, st, in, what);
	int f = 0;

	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, what);
	if (rc == MQ_OK && (f = mysql_stmt_fetch(st)) == MYSQL_NO_DATA)
		rc = MQ_EMPTY;
	else if (rc == MQ_OK && f != 0 && f != MYSQL_DATA_TRUNCATED)
		rc = mq__dberr(c, st, what);
	mysql_stmt_free_result(st);
	return rc;
}

enum mq_status
mq_schedule_next(struct mq_conn *c, const char *name,
    struct mq_schedule *s, size_t lens[3], int64_t *next_at_us,
    int64_t *now_us)
{
	MYSQL_BIND in[1], out[5];
	unsigned long nlen = (unsigned long)strlen(name), len[3];
	mq__bool null[3];
	MYSQL_STMT *st;
	enum mq_status rc;

	mq_schedule_defaults(s);
	if (nlen > MQ_SCHEDULE_NAME_MAX)
		return MQ_EMPTY;
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, sql_sched)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], name, &nlen);
	mq__bind_text_out(&out[0], s->expr, sizeof s->expr - 1, &len[0],
	    &null[0]);
	mq__bind_text_out(&out[1], s->zone, sizeof s->zone - 1, &len[1],
	    &null[1]);
	mq__bind_text_out(&out[2], s->queue, sizeof s->queue - 1, &len[2],
	    &null[2]);
	mq__bind_i64(&out[3], next_at_us);
	mq__bind_i64(&out[4], now_us);
	rc = one_row(c, st, in, out, "cannot read the schedule");
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	memcpy(s->name, name, nlen + 1);
	lens[0] = end(s->expr, sizeof s->expr, len[0], null[0]);
	lens[1] = end(s->zone, sizeof s->zone, len[1], null[1]);
	lens[2] = end(s->queue, sizeof s->queue, len[2], null[2]);
	return MQ_OK;
}

enum mq_status
mq_schedule_runs(struct mq_conn *c, const char *name, size_t max,
    struct mq_schedule_run **runs, size_t *n)
{
	MYSQL_BIND in[5], out[5];
	unsigned long nlen = (unsigned long)strlen(name), slen;
	uint64_t lim = max;
	mq__bool null[5];
	struct mq_schedule_run one;
	MYSQL_STMT *st;
	enum mq_status rc;
	int32_t manual, archived;
	int f = 0;

	*runs = NULL;
	*n = 0;
	if (max == 0)
		return MQ_OK;
	if ((*runs = calloc(max, sizeof **runs)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if ((st = mq__prepare(c, mq__sql_schedule_runs)) == NULL) {
		free(*runs);
		*runs = NULL;
		return c->err.status;
	}
	mq__bind_str(&in[0], name, &nlen);
	mq__bind_u64(&in[1], &lim);
	mq__bind_str(&in[2], name, &nlen);
	mq__bind_u64(&in[3], &lim);
	mq__bind_u64(&in[4], &lim);
	memset(&one, 0, sizeof one);
	mq__bind_i64(&out[0], &one.instant_us);
	mq__bind_i32(&out[1], &manual);
	mq__bind_u64(&out[2], &one.job);
	mq__bind_text_out(&out[3], one.state, sizeof one.state - 1, &slen,
	    &null[3]);
	mq__bind_i32(&out[4], &archived);
	out[2].is_null = &null[2];
	out[4].is_null = &null[4];
	rc = mq__execute(c, st, in, "cannot read the schedule's runs");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the schedule's runs");
	while (rc == MQ_OK && *n < max && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		struct mq_schedule_run *r = &(*runs)[(*n)++];

		*r = one;
		r->manual = manual != 0;
		r->archived = !null[4] && archived != 0;
		if (null[2]) {
			r->job = 0;
			strcpy(r->state, "skipped");
		} else if (null[3]) {
			strcpy(r->state, "gone");
		} else {
			end(r->state, sizeof r->state, slen, 0);
		}
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot read the schedule's runs");
	mysql_stmt_free_result(st);
	mq__release(c, st);
	if (rc != MQ_OK) {
		free(*runs);
		*runs = NULL;
		*n = 0;
	}
	return rc;
}

enum mq_status
mq_run_of_job(struct mq_conn *c, uint64_t job, size_t last,
    struct mq_run_of *r)
{
	MYSQL_BIND in[1], out[3];
	unsigned long len;
	mq__bool null;
	int32_t manual;
	MYSQL_STMT *st;
	enum mq_status rc;

	memset(r, 0, sizeof *r);
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, mq__sql_run_of)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &job);
	mq__bind_text_out(&out[0], r->schedule, sizeof r->schedule - 1, &len,
	    &null);
	mq__bind_i32(&out[1], &manual);
	mq__bind_i64(&out[2], &r->run.instant_us);
	rc = one_row(c, st, in, out, "cannot read the ledger");
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	r->schedule_len = len < sizeof r->schedule - 1 ? len :
	    sizeof r->schedule - 1;
	r->schedule[r->schedule_len] = '\0';
	r->run.manual = manual != 0;
	r->run.job = job;
	/* a name another program wrote with a NUL names no schedule */
	if (strlen(r->schedule) == r->schedule_len) {
		rc = mq_schedule_next(c, r->schedule, &r->s, r->lens,
		    &r->next_at_us, &r->now_us);
		if (rc == MQ_OK)
			r->has_schedule = 1;
		else if (rc != MQ_EMPTY)
			return rc;
		rc = mq_schedule_runs(c, r->schedule, last, &r->last,
		    &r->nlast);
	}
	if (rc == MQ_OK || rc == MQ_EMPTY)
		return MQ_OK;
	mq_run_of_free(r);
	return rc;
}

void
mq_run_of_free(struct mq_run_of *r)
{
	free(r->last);
	r->last = NULL;
	r->nlast = 0;
}

static const char sql_names[] =
    "SELECT name FROM `{{TABLE}}_schedules` ORDER BY name";

enum mq_status
mq_schedule_names(struct mq_conn *c, struct mq_schedule_name **names,
    size_t *n)
{
	struct mq_schedule_name one, *w;
	MYSQL_BIND out[1];
	unsigned long len;
	mq__bool null;
	MYSQL_STMT *st;
	enum mq_status rc;
	size_t cap = 0;
	int f = 0;

	*names = NULL;
	*n = 0;
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, sql_names)) == NULL)
		return c->err.status;
	mq__bind_text_out(&out[0], one.name, sizeof one.name - 1, &len,
	    &null);
	rc = mq__execute(c, st, NULL, "cannot read the schedules");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the schedules");
	while (rc == MQ_OK && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			if ((w = realloc(*names, cap * sizeof *w)) == NULL) {
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
				break;
			}
			*names = w;
		}
		w = &(*names)[(*n)++];
		*w = one;
		w->len = len < sizeof w->name - 1 ? len : sizeof w->name - 1;
		w->name[w->len] = '\0';
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot read the schedules");
	mysql_stmt_free_result(st);
	mq__release(c, st);
	if (rc != MQ_OK) {
		free(*names);
		*names = NULL;
		*n = 0;
	}
	return rc;
}
