/*
 * retry.c: dead jobs back to ready (mq retry), by id or by a filter over
 * one queue's dead jobs. One short transaction per batch, as archive.c
 * does: a locking read picks the batch by an index range (the claim
 * index's dead jobs of the queue, or the primary key), the jobs whose
 * dedup key is live again are set aside, the rest come off the dead
 * count, are put back by primary key, and are counted and written to
 * the history as retried, all before the commit. Killed anywhere, a
 * batch is all retried or not at all.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "sql_terms.h"

/* After the cursor in the claim index's order (priority, available_at,
 * id): the jobs a batch left dead, or that the filter passed over, are
 * not read again. A range of the index, each branch a prefix of it. */
#define AFTER_CURSOR \
    "(priority > ? OR (priority = ? AND (available_at > " \
    MQ_SQL_FROM_EPOCH_US " OR (available_at = " MQ_SQL_FROM_EPOCH_US \
    " AND id > ?))))"

/* The filter's dead jobs, in the claim index's order. The optional
 * conditions are NULL when not asked for: one statement for all. Only
 * jobs dead before the run started: one retried that dies again while
 * it runs is not retried again (a run with consumers failing them went
 * on for ever, retrying the same jobs, each time counted). Such a job
 * died at the server's time, now or earlier: a finished_at after the
 * statement's now is another program's, on a job dead since before the
 * run, and is taken (it was skipped: retry --all left it dead). */
#define RETRY_PICK(lock) \
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (claim)" \
    " WHERE queue = ? AND state = 'dead' AND " AFTER_CURSOR \
    " AND (? IS NULL OR " MQ_SQL_ERROR_LIKE ")" \
    " AND (? IS NULL OR " MQ_SQL_JOB_TIME " >= " MQ_SQL_NOW_MINUS_US ")" \
    " AND (? IS NULL OR " MQ_SQL_JOB_TIME " < " MQ_SQL_NOW_MINUS_US ")" \
    " AND (finished_at IS NULL OR finished_at <= " MQ_SQL_NOW_MINUS_US \
    " OR finished_at > " MQ_SQL_NOW ")" \
    " ORDER BY priority, available_at, id LIMIT ?" lock
const char mq__sql_retry_pick[] = RETRY_PICK(" {{LOCK}}");
/* a dry run's: it locks nothing */
static const char sql_dry_pick[] = RETRY_PICK("");

/* Where the cursor goes: the last picked job's place in that order. */
static const char sql_cursor[] =
    "SELECT priority, " MQ_SQL_EPOCH_US("available_at")
    " FROM `{{TABLE}}` WHERE id = ?";

/* Given ids that are dead. Waits for a job another retry holds (then
 * finds it retried) rather than skipping it: a given id is answered. */
static const char sql_pick_ids[] =
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE state = 'dead' AND id IN (";
static const char sql_pick_ids_tail[] = ") ORDER BY id FOR UPDATE";
/* the same, for a dry run (another head: statements are kept by it) */
static const char sql_dry_ids[] =
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE state = 'dead' AND id IN (";
static const char sql_dry_ids_tail[] = ") ORDER BY id";

/* The picked jobs that cannot become live: their dedup key is live in
 * the queue they go to (the unique key over dedup_unique: queue '/' key
 * while live), or an earlier job of the batch takes it there. Binds the
 * target queue (NULL: their own) three times. */
static const char sql_conflicts[] =
    "SELECT id FROM (SELECT j.id, ROW_NUMBER() OVER"
    " (PARTITION BY COALESCE(?, j.queue), j.dedup_key ORDER BY j.id) AS r,"
    " EXISTS (SELECT 1 FROM `{{TABLE}}` l FORCE INDEX (dedup)"
    "  WHERE l.dedup_unique = CONCAT(COALESCE(?, j.queue), '/', j.dedup_key))"
    " AS live FROM `{{TABLE}}` j FORCE INDEX (PRIMARY)"
    " WHERE j.dedup_key IS NOT NULL AND j.id IN (";
static const char sql_conflicts_tail[] =
    ")) x WHERE r > 1 OR live ORDER BY id";

/* Back to ready, due now, its attempts anew; the last error stays (the
 * history has every one). The state again: a job is moved once. IGNORE:
 * a dedup key made live since the check (a push) leaves the job as it
 * was instead of failing the statement; the batch then runs again. */
/* A dependent whose parents are not all met (one died and cancelled
 * it) waits for them again, as at its push (deps.c): a single-table
 * UPDATE assigns left to right, so this available_at is the last. */
static const char sql_retry[] =
    "UPDATE IGNORE `{{TABLE}}` SET " MQ_SQL_SET_READY(MQ_SQL_NOW) ","
    " attempts = 0, finished_at = NULL, queue = COALESCE(?, queue),"
    " available_at = IF(parent_shards > 0, " MQ_SQL_WAITING ", available_at)"
    " WHERE state = 'dead' AND id IN (";

/* The queue of a retried job, to wake its waiters. */
static const char sql_queue[] = "SELECT queue FROM `{{TABLE}}` WHERE id = ?";

struct batch {
	const struct mq_retry_opts *o;
	uint32_t want;
	const uint64_t *given;	/* by id: this batch's ids */
	size_t ngiven;
	int64_t prio, at_us;	/* the filter's cursor */
	uint64_t after;
	int64_t started_us;	/* the run's start (mq_now_us) */
	uint64_t *ids, *conflicts, *list, *orphans;
	size_t got, nconflicts, n, norphans;
	uint64_t retried;
	uint64_t wait_again;	/* deps.c: mq__deps_retried */
	uint64_t touched;	/* parents the batch wrote (mq__deps_unretriable) */
	uint64_t *kids;		/* the jobs retried that have dependents */
	size_t nkids;
};

static void
bind_target(MYSQL_BIND *b, const char *to_queue, unsigned long *len)
{
	if (to_queue)
		mq__bind_str(b, to_queue, len);
	else
		mq__bind_null(b);
}

/* The filter's pick, from the cursor on. */
static enum mq_status
pick_filter(struct mq_conn *c, const char *tmpl, struct batch *b,
    const char *pat, unsigned long plen)
{
	const struct mq_retry_opts *o = b->o;
	MYSQL_BIND in[14];
	unsigned long qlen, pl = plen, pl2 = plen;
	int32_t prio = (int32_t)b->prio;
	int64_t since = o->since_us, before = o->before_us;
	int64_t ago = mq_now_us() - b->started_us;	/* the run's start */
	MYSQL_STMT *st;
	enum mq_status rc;
	int i;

	if ((st = mq__prepare(c, tmpl)) == NULL)
		return c->err.status;
	memset(in, 0, sizeof in);
	mq__bind_str(&in[0], o->queue, &qlen);
	mq__bind_i32(&in[1], &prio);
	mq__bind_i32(&in[2], &prio);
	mq__bind_i64(&in[3], &b->at_us);
	mq__bind_i64(&in[4], &b->at_us);
	mq__bind_u64(&in[5], &b->after);
	for (i = 6; i < 12; i++)
		mq__bind_null(&in[i]);
	if (pat) {
		mq__bind_blob(&in[6], pat, &pl);
		mq__bind_blob(&in[7], pat, &pl2);
	}
	if (since >= 0) {
		mq__bind_i64(&in[8], &since);
		mq__bind_i64(&in[9], &since);
	}
	if (before >= 0) {
		mq__bind_i64(&in[10], &before);
		mq__bind_i64(&in[11], &before);
	}
	mq__bind_i64(&in[12], &ago);
	mq__bind_u32(&in[13], &b->want);
	rc = mq__select_ids(c, st, in, b->ids, NULL, b->want, &b->got);
	mq__release(c, st);
	return rc;
}

/* The cursor to the place of job id (picked: locked, still there). */
static enum mq_status
move_cursor(struct mq_conn *c, struct batch *b, uint64_t id)
{
	MYSQL_BIND in[1], out[2];
	int32_t prio = 0;
	int64_t at = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int r = 0;

	if ((st = mq__prepare(c, sql_cursor)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &id);
	rc = mq__execute(c, st, in, "cannot read a job");
	memset(out, 0, sizeof out);
	mq__bind_i32(&out[0], &prio);
	mq__bind_i64(&out[1], &at);
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read a job");
	if (rc == MQ_OK && (r = mysql_stmt_fetch(st)) == MYSQL_NO_DATA)
		rc = MQ_EMPTY;	/* gone (a dry run locks nothing) */
	else if (rc == MQ_OK && r != 0)
		rc = mq__dberr(c, st, "cannot read a job");
	mq__release(c, st);
	if (rc != MQ_OK)
		return rc;
	b->prio = prio;
	b->at_us = at;
	b->after = id;
	return rc;
}

/* b->list less the jobs left dead for their parents (b->orphans) */
static void
drop_orphans(struct batch *b)
{
	size_t i, j, k;

	for (i = k = 0; i < b->n; i++) {
		for (j = 0; j < b->norphans; j++)
			if (b->orphans[j] == b->list[i])
				break;
		if (j == b->norphans)
			b->list[k++] = b->list[i];
	}
	b->n = k;
}

/* A dry run's batch as a real run would take it, as far as reads alone
 * tell: the jobs picked (b->ids, in the pick's order) less the
 * dependents a parent of which can never finish, which a real run
 * leaves dead (the dedup keys a real run checks in its transaction:
 * those jobs stay listed) */
static enum mq_status
dry_batch(struct mq_conn *c, struct batch *b)
{
	enum mq_status rc = MQ_OK;

	memcpy(b->list, b->ids, b->got * sizeof *b->list);
	b->n = b->got;
	b->norphans = 0;
	if (b->n > 0)
		rc = mq__deps_unretriable_read(c, b->list, b->n, b->orphans,
		    &b->norphans);
	if (rc == MQ_OK)
		drop_orphans(b);
	return rc;
}

struct tx {
	struct batch *b;
	const char *pat;
	unsigned long plen;
	int64_t prio, at_us;	/* the cursor before the batch */
	uint64_t after;
};

static enum mq_status
batch_tx(struct mq_conn *c, void *ctx)
{
	struct tx *t = ctx;
	struct batch *b = t->b;
	const struct mq_retry_opts *o = b->o;
	MYSQL_BIND pre[2];
	unsigned long tlen;
	uint64_t changed = 0;
	enum mq_status rc;
	size_t i, k;

	/* a batch run again (a deadlock) starts where it first did */
	b->prio = t->prio;
	b->at_us = t->at_us;
	b->after = t->after;
	b->retried = 0;
	b->n = b->nconflicts = b->norphans = b->nkids = 0;
	b->touched = 0;
	if (o->ids)
		rc = mq__select_ids_in(c, sql_pick_ids, sql_pick_ids_tail,
		    NULL, 0, b->given, b->ngiven, b->ids, b->want, &b->got);
	else
		rc = pick_filter(c, mq__sql_retry_pick, b, t->pat, t->plen);
	if (rc != MQ_OK || b->got == 0)
		return rc;
	if (!o->ids && (rc = move_cursor(c, b, b->ids[b->got - 1])) != MQ_OK)
		return rc;
	for (i = 0; i < 2; i++)
		bind_target(&pre[i], o->to_queue, &tlen);
	rc = mq__select_ids_in(c, sql_conflicts, sql_conflicts_tail, pre, 2,
	    b->ids, b->got, b->conflicts, b->want, &b->nconflicts);
	if (rc != MQ_OK)
		return rc;
	/* both lists ascend by id (the filter's pick need not) */
	for (i = 0; i < b->got; i++) {
		for (k = 0; k < b->nconflicts; k++)
			if (b->conflicts[k] == b->ids[i])
				break;
		if (k == b->nconflicts)
			b->list[b->n++] = b->ids[i];
	}
	/* dependents a parent of which can never finish stay dead: made
	 * to wait again, they would wait for ever (deps.c) */
	if (b->n > 0)
		rc = mq__deps_unretriable(c, b->list, b->n, b->orphans,
		    &b->norphans, &b->touched);
	if (rc != MQ_OK)
		return rc;
	drop_orphans(b);
	if (b->n == 0)
		return MQ_OK;
	/* off the dead count while they are still dead; and counted as
	 * retried in the queue they came back to, before --to-queue moves
	 * them: a job moved to another queue came into that one, which
	 * its pushed counter counts (derived: live + done + dead + purged -
	 * retried), so only the jobs already there are retried there */
	rc = mq__count_removed(c, 0, b->list, b->n, NULL);
	if (rc == MQ_OK)
		rc = mq__count_event(c, "retried", o->to_queue, b->list,
		    b->n);
	if (rc == MQ_OK)
		rc = mq__exec_ids(c, sql_retry, pre, 1, b->list, b->n,
		    &changed);
	/* the rows are locked and dead: only a dedup key made live since
	 * the check leaves one as it was; then the batch runs again */
	if (rc == MQ_OK && changed != b->n)
		return mq__fail(c, MQ_ERETRY, "retry changed %llu of %zu jobs",
		    (unsigned long long)changed, b->n);
	if (rc == MQ_OK)
		rc = mq__history_add(c, "retried", NULL, 0, b->list, b->n);
	b->wait_again = 0;
	if (rc == MQ_OK)
		rc = mq__deps_retried(c, b->list, b->n, b->kids, &b->nkids,
		    &b->wait_again);
	if (rc == MQ_OK)
		b->retried = changed;
	return rc;
}

/* Wakes the waiters of the queues the batch's jobs are in now. The jobs
 * are committed: a failed wakeup is a delay of a second at most. */
static void
wake(struct mq_conn *c, const struct batch *b)
{
	const char *one = b->o->to_queue ? b->o->to_queue : b->o->queue;
	struct mq_error saved = c->err;
	char q[MQ_QUEUE_MAX + 1], last[MQ_QUEUE_MAX + 1] = "";
	unsigned long qlen = 0;
	MYSQL_BIND in[1], out[1];
	MYSQL_STMT *st;
	uint64_t woken, id;
	size_t i;

	if (one) {
		(void)mq__wake(c, one, b->retried, &woken);
		c->err = saved;
		return;
	}
	/* by id: each job's own queue (by id, ids given are few) */
	for (i = 0; i < b->n; i++) {
		if ((st = mq__prepare(c, sql_queue)) == NULL)
			break;
		id = b->list[i];
		mq__bind_u64(&in[0], &id);
		memset(out, 0, sizeof out);
		out[0].buffer_type = MYSQL_TYPE_STRING;
		out[0].buffer = q;
		out[0].buffer_length = sizeof q - 1;
		out[0].length = &qlen;
		q[0] = '\0';
		if (mq__execute(c, st, in, "cannot read a job") == MQ_OK &&
		    mysql_stmt_bind_result(st, out) == 0 &&
		    mysql_stmt_fetch(st) == 0)
			q[qlen < sizeof q ? qlen : sizeof q - 1] = '\0';
		mq__release(c, st);
		if (mq_valid_queue(q) && strcmp(q, last) != 0) {
			(void)mq__wake(c, q, b->retried, &woken);
			strcpy(last, q);
		}
	}
	c->err = saved;
}

static int
sleep_us(int64_t us, void *ctx)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	(void)ctx;
	if (us > 0)
		nanosleep(&ts, NULL);
	return 0;
}

static int
cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The given ids, sorted, each once (malloc'ed); *n gets how many. */
static uint64_t *
given_ids(const struct mq_retry_opts *o, size_t *n)
{
	uint64_t *v = malloc((o->n_ids ? o->n_ids : 1) * sizeof *v);
	size_t i, k = 0;

	if (v == NULL)
		return NULL;
	memcpy(v, o->ids, o->n_ids * sizeof *v);
	qsort(v, o->n_ids, sizeof *v, cmp_id);
	for (i = 0; i < o->n_ids; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	*n = k;
	return v;
}

/* The given ids of this batch that were not picked: not dead. */
static void
report_not_dead(const struct batch *b, struct mq_retry_report *rep)
{
	size_t i, k = 0;

	for (i = 0; i < b->ngiven; i++) {
		while (k < b->got && b->ids[k] < b->given[i])
			k++;
		if (k < b->got && b->ids[k] == b->given[i])
			continue;
		rep->not_dead++;
		if (b->o->skipped)
			b->o->skipped(b->given[i], MQ_RETRY_NOT_DEAD,
			    b->o->ctx);
	}
}

/* Appends add[0..n) to the list *v (*len of *cap); -1 out of memory. */
static int
add_kids(uint64_t **v, size_t *len, size_t *cap, const uint64_t *add,
    size_t n)
{
	if (*len + n > *cap) {
		size_t c = *cap ? *cap : 256;
		uint64_t *p;

		while (c < *len + n)
			c *= 2;
		if ((p = realloc(*v, c * sizeof *p)) == NULL)
			return -1;
		*v = p;
		*cap = c;
	}
	memcpy(*v + *len, add, n * sizeof *add);
	*len += n;
	return 0;
}

enum mq_status
mq_retry(struct mq_conn *c, const struct mq_retry_opts *o,
    struct mq_retry_report *rep)
{
	unsigned batch = o->batch ? o->batch : 100;
	int (*between)(int64_t, void *) = o->between ? o->between : sleep_us;
	struct batch b;
	struct tx t;
	uint64_t *given = NULL, *kids = NULL;
	size_t ngiven = 0, next = 0, i, k, nkids = 0, capkids = 0;
	int64_t start, t0, wait, pause;
	struct mq__yield y;
	enum mq_status rc = MQ_OK;

	memset(rep, 0, sizeof *rep);
	memset(&b, 0, sizeof b);
	memset(&t, 0, sizeof t);
	if ((o->ids == NULL && (o->queue == NULL ||
	    !mq_valid_queue(o->queue))) || (o->to_queue &&
	    !mq_valid_queue(o->to_queue)) || o->rate < 0)
		return mq__fail(c, MQ_EINVAL, "invalid retry selection");
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	/* a trickle moves small batches, about ten a second */
	if (o->rate > 0 && o->rate / 10 < batch)
		batch = o->rate / 10 >= 1 ? (unsigned)(o->rate / 10) : 1;
	if ((rc = mq__read_committed(c)) != MQ_OK)
		return rc;
	b.o = o;
	b.want = batch;
	b.prio = -32769;	/* before every SMALLINT */
	b.ids = calloc(batch, sizeof *b.ids);
	b.conflicts = calloc(batch, sizeof *b.conflicts);
	b.list = calloc(batch, sizeof *b.list);
	b.orphans = calloc(batch, sizeof *b.orphans);
	b.kids = calloc(batch, sizeof *b.kids);
	if (o->ids)
		given = given_ids(o, &ngiven);
	if (o->error)
		t.pat = mq__like_substring(o->error, o->error_len, &t.plen);
	if (b.ids == NULL || b.conflicts == NULL || b.list == NULL ||
	    b.orphans == NULL || b.kids == NULL ||
	    (o->ids && given == NULL) || (o->error && t.pat == NULL)) {
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		goto out;
	}
	t.b = &b;
	start = mq_now_us();
	b.started_us = start;
	mq__yield_start(c, &y);
	for (;;) {
		t0 = mq_now_us();
		if (o->ids) {
			if (next == ngiven)
				break;
			b.given = given + next;
			b.ngiven = ngiven - next < batch ? ngiven - next :
			    batch;
			next += b.ngiven;
		}
		if (o->dry_run && o->ids)
			rc = mq__select_ids_in(c, sql_dry_ids, sql_dry_ids_tail,
			    NULL, 0, b.given, b.ngiven, b.ids, b.want, &b.got);
		else if (o->dry_run)
			rc = pick_filter(c, sql_dry_pick, &b, t.pat, t.plen);
		else {
			t.prio = b.prio;
			t.at_us = b.at_us;
			t.after = b.after;
			rc = mq__in_tx(c, batch_tx, &t);
		}
		/* a dry run's last jobs may be gone since (archived,
		 * purged): the cursor goes to the last one still there;
		 * those after it match no more */
		for (k = b.got; rc == MQ_OK && o->dry_run && !o->ids &&
		    k > 0; k--)
			if ((rc = move_cursor(c, &b, b.ids[k - 1])) !=
			    MQ_EMPTY)
				break;
		if (rc == MQ_EMPTY)
			rc = MQ_OK;	/* all gone: the cursor stays */
		if (rc == MQ_OK && o->dry_run)
			rc = dry_batch(c, &b);
		if (rc != MQ_OK)
			break;
		rep->parents += b.norphans;
		for (i = 0; o->skipped && i < b.norphans; i++)
			o->skipped(b.orphans[i], MQ_RETRY_PARENTS, o->ctx);
		if (o->dry_run) {
			rep->retried += b.n;
			for (i = 0; o->fn && i < b.n; i++)
				o->fn(b.list[i], o->ctx);
		} else {
			rep->retried += b.retried;
			rep->dedup += b.nconflicts;
			rep->wait_again += b.wait_again;
			if (b.nkids > 0 && add_kids(&kids, &nkids, &capkids,
			    b.kids, b.nkids) != 0) {
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
				break;
			}
			for (i = 0; o->skipped && i < b.nconflicts; i++)
				o->skipped(b.conflicts[i], MQ_RETRY_DEDUP,
				    o->ctx);
			if (b.retried)
				wake(c, &b);
			if (b.retried && o->progress)
				o->progress(b.retried, o->ctx);
		}
		if (o->ids)
			report_not_dead(&b, rep);
		if (o->ids ? next == ngiven : b.got < b.want)
			break;
		/* the rate: not ahead of start + retried / rate; and at any
		 * rate, give way to consumers writing meanwhile (yield.c;
		 * the batch's own rows: each job updated, its history row,
		 * its dependents' parents written, and a few count rows: a
		 * batch of dependents took its parents' rows for others'
		 * writes, and paused on an idle server) */
		wait = o->rate > 0 && !o->dry_run ? start +
		    (int64_t)((double)rep->retried * 1e6 / o->rate) -
		    mq_now_us() : 0;
		pause = o->dry_run ? 0 : mq__yield_pause(c, &y, t0,
		    2 * (uint64_t)b.retried + b.touched + 8);
		if (between(wait > pause ? wait : pause, o->ctx)) {
			rep->stopped = 1;
			break;
		}
	}
	/* the dependents the jobs retried had cancelled that are dead now,
	 * after the whole run: each once (a batch's count had those that a
	 * later batch retried, and a dependent of several retried jobs
	 * once per list). Not the run's failure if it fails: what was
	 * retried is retried. */
	if (nkids > 0) {
		struct mq_error saved = c->err;

		qsort(kids, nkids, sizeof *kids, cmp_id);
		for (i = k = 0; i < nkids; i++)
			if (k == 0 || kids[k - 1] != kids[i])
				kids[k++] = kids[i];
		nkids = k;
		if (mq__deps_stay_dead(c, kids, nkids, &rep->stay_dead) != MQ_OK)
			rep->stay_dead = 0;
		c->err = saved;
	}
out:
	free(kids);
	free(given);
	free((char *)t.pat);
	free(b.ids);
	free(b.conflicts);
	free(b.list);
	free(b.orphans);
	free(b.kids);
	return rc;
}
