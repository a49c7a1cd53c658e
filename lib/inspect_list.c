/*
 * inspect_list.c: lists of jobs for mq ls, by queue, key, state, error
 * text, time and recurrence (--every, a calendar schedule's runs), paged
 * by id, from the job table and its archive (inspect.h).
 */
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

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

/* Whether the states (bits of enum mq_state) are all kept as one value
 * of the state column: ready, scheduled and waiting are 'ready', leased
 * and stale 'leased'. */
static int
one_stored_state(unsigned live)
{
	const unsigned ready = 1u << MQ_ST_READY | 1u << MQ_ST_SCHEDULED |
	    1u << MQ_ST_WAITING,
	    leased = 1u << MQ_ST_LEASED | 1u << MQ_ST_STALE;

	return (live & ~ready) == 0 || (live & ~leased) == 0 ||
	    live == 1u << MQ_ST_DONE || live == 1u << MQ_ST_DEAD ||
	    live == 1u << MQ_ST_INVALID;
}

/* The index a read of the job table for these states uses. A queue's
 * jobs of one stored state: the list index, (queue, state, id), read in
 * id order from the page's first id, so a page costs its own rows
 * (ready jobs that are not due, or scheduled ones that are, are read and
 * passed over). Several states of a queue: a range of each in the claim
 * or due index; no queue: of the states in the lease or finished index;
 * sorted by id afterwards: the cost grows with the jobs in those states,
 * not with the table. Without a state filter, the optimizer's choice
 * (the primary key in id order, up to the limit, as a rule). */
static const char *
live_index(unsigned live, const struct mq_list_filter *f)
{
	/* a schedule's runs: found from its ledger rows (their primary
	 * key), each job by id */
	if (live == (1u << MQ_ST_ARCHIVED) - 1 || f->schedule)
		return "";
	if (f->queue && one_stored_state(live))
		return " FORCE INDEX (list)";
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
	if (f->key)
		ok = ok && add(b, cap, " AND job_key = ?");
	/* runs of schedules are known by the ledger, which archive and
	 * purge leave (the archive keeps no --every) */
	if (f->schedule)
		ok = ok && add(b, cap, " AND id IN (SELECT job FROM"
		    " `{{TABLE}}_fired` WHERE schedule = ?)");
	if (f->recurring)
		ok = ok && add(b, cap, live ? " AND (every_us IS NOT NULL OR"
		    " id IN (SELECT job FROM `{{TABLE}}_fired` WHERE job IS NOT"
		    " NULL))" : " AND id IN (SELECT job FROM `{{TABLE}}_fired`"
		    " WHERE job IS NOT NULL)");
	if (live && live != (1u << MQ_ST_ARCHIVED) - 1) {
		ok = ok && add(b, cap, " AND (");
		for (i = 0; i < MQ_ST_ARCHIVED; i++)
			if (live & 1u << i) {
				ok = ok && add(b, cap, first ? "(" : " OR (") &&
				    add(b, cap, mq__state_sql[i]) &&
				    add(b, cap, ")");
				first = 0;
			}
		ok = ok && add(b, cap, ")");
	}
	if (f->error)
		ok = ok && add(b, cap, " AND " MQ_SQL_ERROR_LIKE);
	if (f->since_us >= 0)
		ok = ok && add(b, cap, " AND " MQ_SQL_JOB_TIME " >= "
		    MQ_SQL_NOW_MINUS_US);
	if (f->before_us >= 0)
		ok = ok && add(b, cap, " AND " MQ_SQL_JOB_TIME " < "
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

/* Binds one read's parameters from in[*k] on. */
static void
bind_read(MYSQL_BIND *in, size_t *k, const struct mq_list_filter *f,
    uint64_t *after, unsigned long *qlen, unsigned long *klen,
    unsigned long *slen, char *pat, unsigned long *plen, int64_t *since,
    int64_t *before, uint64_t *limit)
{
	mq__bind_u64(&in[(*k)++], after);
	if (f->queue)
		mq__bind_str(&in[(*k)++], f->queue, qlen);
	if (f->key) {
		*klen = (unsigned long)strlen(f->key);
		mq__bind_blob(&in[(*k)++], f->key, klen);
	}
	if (f->schedule) {
		*slen = (unsigned long)strlen(f->schedule);
		mq__bind_str(&in[(*k)++], f->schedule, slen);
	}
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
	MYSQL_BIND in[20];
	unsigned long qlen = 0, klen = 0, slen = 0, plen = 0;
	uint64_t after = f->after, limit = (uint64_t)f->limit + 1, seen = 0;
	int64_t since = f->since_us, before = f->before_us;
	char *sql, *pat = NULL;
	struct row *r = NULL;
	MYSQL_STMT *st = NULL;
	enum mq_status rc = MQ_OK;
	size_t k = 0;
	int x, stop = 0;

	*more = 0;
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if (f->limit < 1 || f->limit > MQ_LIST_MAX || (f->queue &&
	    !mq_valid_queue(f->queue)) || (f->key && !mq_valid_key(f->key)) ||
	    (f->schedule && !mq_valid_queue(f->schedule)))
		return mq__fail(c, MQ_EINVAL, "invalid list filter");
	if ((sql = mq__list_sql(f)) == NULL ||
	    (f->error && (pat = mq__like_substring(f->error,
	    f->error_len, &plen)) == NULL) ||
	    (r = malloc(sizeof *r)) == NULL) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	if ((st = mq__prepare_once(c, sql)) == NULL) {
		rc = c->err.status;
		goto out;
	}
	if (live_states(f))
		bind_read(in, &k, f, &after, &qlen, &klen, &slen, pat, &plen,
		    &since, &before, &limit);
	if (f->states & 1u << MQ_ST_ARCHIVED)
		bind_read(in, &k, f, &after, &qlen, &klen, &slen, pat, &plen,
		    &since, &before, &limit);
	if (live_states(f) && (f->states & 1u << MQ_ST_ARCHIVED))
		mq__bind_u64(&in[k++], &limit);
	mq__inspect_bind_row(r);
	rc = mq__execute(c, st, in, "cannot list jobs");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, r->out) != 0)
		rc = mq__dberr(c, st, "cannot list jobs");
	while (rc == MQ_OK && !stop && ((x = mysql_stmt_fetch(st)) == 0 ||
	    x == MYSQL_DATA_TRUNCATED)) {
		if (seen++ == f->limit) {
			*more = 1;
			break;
		}
		if ((rc = mq__inspect_finish_row(c, st, r)) != MQ_OK)
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
