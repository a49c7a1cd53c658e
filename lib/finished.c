/*
 * finished.c: which of the jobs someone waits for (mq wait) have
 * finished. A look is one statement for up to MQ_LOOK_RUNS runs of
 * ids (consecutive, or evenly spaced by at most 16, as a Galera node's
 * auto_increment_increment spaces them), however many ids they hold: the rows of those
 * runs that are finished (done, dead) or recurring, and, in the same
 * result, how many rows of the runs are in the table. Only when fewer
 * are there than ids were asked (a job moved to the archive, or
 * purged) does one more statement say which: the runs' rows in the
 * table and in the archive (each finished, whatever its state), in one
 * result, in the order they finished; the rest are gone. So the jobs a
 * batch finds finished come in the order they finished, in the table or
 * in the archive alike. Reads only, by primary key ranges; nothing is
 * locked or written.
 */
#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The error text of a dead job, read up to this many bytes (mq writes
 * 4096 at most; a cancel prefixes "cancelled; last error: "; another
 * program may write up to the BLOB's 65535). */
#define ERROR_MAX 65535

/* A run of the ids: ids lo, lo + step, ..., hi (consecutive ones, or
 * those a Galera node's auto_increment_increment spaces out), or'ed.
 * Each is a range of the primary key: the rows it scans are the run's
 * ids and the STEP_MAX - 1 at most between two of them. Bound: lo, hi,
 * step, lo % step. */
static const char sql_run[] = "(id BETWEEN ? AND ? AND id % ? = ?)";
#define RUN_PARAMS 4
/* A look interrupted by a finisher's KILL QUERY (meant for mq wait's
 * park: waiters.c) runs again; on a Galera node every finisher that
 * read the armed row KILLs before one disarms it. */
#define LOOK_TRIES 16
#define STEP_MAX 16

/* The look. The count row first (finished_at NULL sorts first, and its
 * id 0 before every job's), then the finished rows in the order they
 * finished. */
static const char sql_look_head[] =
    "SELECT id, CAST(state AS CHAR), IF(state = 'dead', last_error, NULL),"
    " every_us IS NOT NULL, 0, finished_at FROM `{{TABLE}}` WHERE (";
static const char sql_look_mid[] =
    ") AND (state IN ('done', 'dead') OR every_us IS NOT NULL)"
    " UNION ALL SELECT 0, '', NULL, 0, COUNT(*), NULL FROM `{{TABLE}}`"
    " WHERE (";
static const char sql_look_tail[] = ") ORDER BY 6, 1";

/* A job left the table: the runs' rows in the table (1: each there,
 * finished or not) and in the archive (0), in one result and one
 * snapshot, in the order they finished (those not finished first).
 * The look's finished rows are read again here rather than reported:
 * reported first, they came before an archived job that finished
 * earlier (one result, its order holds for both tables). */
static const char sql_left_head[] =
    "SELECT id, CAST(state AS CHAR), IF(state = 'dead', last_error, NULL),"
    " every_us IS NOT NULL, 1, finished_at FROM `{{TABLE}}` WHERE (";
static const char sql_left_mid[] =
    ") UNION ALL SELECT id, CAST(state AS CHAR),"
    " IF(state = 'dead', last_error, NULL), 0, 0, finished_at"
    " FROM `{{TABLE}}_archive` WHERE (";
static const char sql_left_tail[] = ") ORDER BY 6, 1";

struct look {
	const uint64_t *ids;		/* this batch's ids */
	size_t n;
	uint64_t *runs;			/* lo, hi, step, lo % step */
	size_t nruns;
	mq_fin_fn fn;
	void *ctx;
	unsigned char *error;		/* ERROR_MAX bytes */
	unsigned char *seen;		/* n flags: reported, or present */
	uint64_t present;
	int stopped;
};

/* The statement head (run OR run ...) mid ... tail, the runs bound
 * times times. */
static MYSQL_STMT *
prepare_runs(struct mq_conn *c, struct look *l, const char *head,
    const char *mid, const char *tail, int times, MYSQL_BIND **b)
{
	size_t hl = strlen(head), ml = mid ? strlen(mid) : 0, i, k;
	size_t rl = sizeof sql_run - 1 + 4;	/* a run and " OR " */
	MYSQL_STMT *st;
	char *sql, *p;

	*b = calloc(RUN_PARAMS * l->nruns * (size_t)times, sizeof **b);
	sql = malloc(hl + ml * (size_t)times + strlen(tail) +
	    (size_t)times * l->nruns * rl + 1);
	if (sql == NULL || *b == NULL) {
		free(sql);
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	p = sql;
	memcpy(p, head, hl);
	p += hl;
	for (k = 0; k < (size_t)times; k++) {
		if (k) {
			memcpy(p, mid, ml);
			p += ml;
		}
		for (i = 0; i < l->nruns; i++) {
			if (i) {
				memcpy(p, " OR ", 4);
				p += 4;
			}
			memcpy(p, sql_run, sizeof sql_run - 1);
			p += sizeof sql_run - 1;
		}
	}
	strcpy(p, tail);
	for (k = 0; k < (size_t)times; k++)
		for (i = 0; i < RUN_PARAMS * l->nruns; i++)
			mq__bind_u64(&(*b)[k * RUN_PARAMS * l->nruns + i],
			    &l->runs[i]);
	st = mq__prepare_once(c, sql);
	free(sql);
	return st;
}

static int
cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* This batch's id, or n if it is none of them. */
static size_t
find(const struct look *l, uint64_t id)
{
	const uint64_t *p = bsearch(&id, l->ids, l->n, sizeof id, cmp_id);

	return p ? (size_t)(p - l->ids) : l->n;
}

static int
report(struct look *l, size_t k, enum mq_fin how, int archived,
    const unsigned char *error, size_t error_len, const char *state)
{
	struct mq_fin_job j;

	l->seen[k] = 1;
	j.id = l->ids[k];
	j.how = how;
	j.archived = archived;
	j.error = error;
	j.error_len = error_len;
	j.state = state;
	if (!l->stopped && l->fn(&j, l->ctx) != 0)
		l->stopped = 1;
	return l->stopped;
}

/* The rows of the look (left 0) or of the read after a job left the
 * table (left 1). */
static enum mq_status
read_rows(struct mq_conn *c, MYSQL_STMT *st, struct look *l, int left)
{
	MYSQL_BIND out[6];
	uint64_t id, present;
	int archived;
	int32_t recurring;
	char state[8];
	unsigned long slen, elen, flen;
	mq__bool enull, fnull;
	char fin[32];
	int r;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_text_out(&out[1], state, sizeof state - 1, &slen, NULL);
	mq__bind_text_out(&out[2], l->error, ERROR_MAX, &elen, &enull);
	out[2].buffer_type = MYSQL_TYPE_BLOB;
	mq__bind_i32(&out[3], &recurring);
	mq__bind_u64(&out[4], &present);
	mq__bind_text_out(&out[5], fin, sizeof fin, &flen, &fnull);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot read jobs");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		size_t k;

		if (id == 0 && !left) {		/* the count row */
			l->present = present;
			continue;
		}
		/* a job left the table: the read that follows reports */
		if (!left && l->present < l->n)
			continue;
		if ((k = find(l, id)) == l->n || l->seen[k])
			continue;
		state[slen < sizeof state - 1 ? slen : sizeof state - 1] =
		    '\0';
		archived = left && present == 0;
		if (strcmp(state, "done") == 0)
			report(l, k, MQ_FIN_DONE, archived, NULL, 0, NULL);
		else if (strcmp(state, "dead") == 0)
			report(l, k, MQ_FIN_DEAD, archived,
			    enull ? NULL : l->error,
			    enull ? 0 : elen < ERROR_MAX ? elen : ERROR_MAX,
			    NULL);
		else if (archived)	/* finished, whatever its state says */
			report(l, k, MQ_FIN_ARCHIVED, 1, NULL, 0, state);
		else if (recurring)
			report(l, k, MQ_FIN_RECURRING, 0, NULL, 0, NULL);
		else
			l->seen[k] = 1;	/* in the table, not finished */
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot read jobs");
	return MQ_OK;
}

static enum mq_status
run(struct mq_conn *c, struct look *l, const char *head, const char *mid,
    const char *tail, int left)
{
	MYSQL_BIND *b = NULL;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = prepare_runs(c, l, head, mid, tail, 2, &b)) == NULL) {
		free(b);
		return c->err.status;
	}
	rc = mq__execute(c, st, b, "cannot read jobs");
	if (rc == MQ_OK)
		rc = read_rows(c, st, l, left);
	mq__release(c, st);
	free(b);
	return rc;
}

/* One batch: ids[0..n), in nruns runs. */
static enum mq_status
look_batch(struct mq_conn *c, struct look *l)
{
	enum mq_status rc;
	size_t k;

	memset(l->seen, 0, l->n);
	l->present = 0;
	rc = run(c, l, sql_look_head, sql_look_mid, sql_look_tail, 0);
	if (rc != MQ_OK || l->stopped || l->present >= l->n)
		return rc;
	/* some left the table: the finished ones of both tables in the
	 * order they finished (those still there marked seen too), then
	 * the rest are gone */
	if ((rc = run(c, l, sql_left_head, sql_left_mid, sql_left_tail,
	    1)) != MQ_OK)
		return rc;
	for (k = 0; k < l->n && !l->stopped; k++)
		if (!l->seen[k])
			report(l, k, MQ_FIN_GONE, 0, NULL, 0, NULL);
	return MQ_OK;
}

enum mq_status
mq_look_finished(struct mq_conn *c, const uint64_t *ids, size_t n,
    mq_fin_fn fn, void *ctx)
{
	struct look l;
	enum mq_status rc = MQ_OK;
	size_t i = 0;
	int tries;

	if (n == 0)
		return MQ_OK;
	for (tries = 0; (rc = mq__see_cluster(c)) == MQ_ERETRY &&
	    c->err.db_errno == ER_QUERY_INTERRUPTED && tries < LOOK_TRIES;
	    tries++)
		;
	if (rc != MQ_OK)
		return rc;
	memset(&l, 0, sizeof l);
	l.fn = fn;
	l.ctx = ctx;
	l.runs = malloc(RUN_PARAMS * MQ_LOOK_RUNS * sizeof *l.runs);
	l.error = malloc(ERROR_MAX);
	l.seen = malloc(n);
	if (l.runs == NULL || l.error == NULL || l.seen == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	while (i < n && rc == MQ_OK && !l.stopped) {
		size_t start = i;

		l.nruns = 0;
		while (i < n && l.nruns < MQ_LOOK_RUNS) {
			uint64_t *r = &l.runs[RUN_PARAMS * l.nruns];
			uint64_t step = i + 1 < n && ids[i + 1] - ids[i] <=
			    STEP_MAX ? ids[i + 1] - ids[i] : 1;

			r[0] = ids[i];
			while (i + 1 < n && ids[i + 1] - ids[i] == step)
				i++;
			r[1] = ids[i];
			r[2] = step;
			r[3] = r[0] % step;
			l.nruns++;
			i++;
		}
		l.ids = ids + start;
		l.n = i - start;
		/* a finisher's KILL of an armed waiter (waiters.c) that
		 * came while it looked: once an arming, look again */
		for (tries = 0; (rc = look_batch(c, &l)) == MQ_ERETRY &&
		    c->err.db_errno == ER_QUERY_INTERRUPTED &&
		    tries < LOOK_TRIES; tries++)
			;
	}
	if (rc == MQ_OK && l.stopped)
		rc = mq__fail(c, MQ_EIO, "stopped by the caller");
out:
	free(l.runs);
	free(l.error);
	free(l.seen);
	return rc;
}
