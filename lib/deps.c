/*
 * deps.c: jobs that run after other jobs (mq push --after). A dependent
 * is pushed ready but due at the end of time, which no claim reaches;
 * each parent has a row in <table>_deps, and the parents not yet met are
 * counted per shard in <table>_waits. The transaction that finishes a
 * parent (ack, fail, cancel, requeue-stale's burials: the callers of
 * mq__count_finished) meets its edges: it lowers their shards, and a
 * shard it empties lowers the dependent's parent_shards, whose last one
 * makes it due, there and then: exactly once, whoever finishes the
 * parents and however many at once (schema.sql says why).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* Parents per statement at push, and dependents cancelled per round. */
#define CHUNK 1000

/* A parent at push: written first (children + 1), so that its finish,
 * which writes it too, comes wholly before or after this push; then its
 * state, as that write left it. */
static const char sql_touch[] =
    "UPDATE `{{TABLE}}` SET children = IFNULL(children, 0) + 1"
    " WHERE id IN (";
/* flags: 0 live, 1 done, 2 dead, 3 recurring */
static const char sql_parents[] =
    "SELECT id, IF(every_us IS NOT NULL, 3, IF(state = 'done', 1,"
    " IF(state = 'dead', 2, 0))) FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE id IN (";
static const char sql_parents_archived[] =
    "SELECT id, IF(state = 'done', 1, 2) FROM `{{TABLE}}_archive`"
    " FORCE INDEX (PRIMARY) WHERE id IN (";
static const char sql_edge_head[] =
    "INSERT INTO `{{TABLE}}_deps` (parent, child, met, on_death) VALUES ";
/* the dependent's shards, then its row: due now if none is left */
static const char sql_shards[] =
    "INSERT INTO `{{TABLE}}_waits` (child, shard, parents)"
    " SELECT child, parent % 1024, COUNT(*) FROM `{{TABLE}}_deps`"
    " FORCE INDEX (child) WHERE child = ? AND met = 0"
    " GROUP BY parent % 1024";
static const char sql_child[] =
    "UPDATE `{{TABLE}}` SET if_parent_dies = ?, parent_shards ="
    " (SELECT COUNT(*) FROM `{{TABLE}}_waits` WHERE child = ?),"
    " available_at = IF(parent_shards = 0, " MQ_SQL_NOW ", available_at)"
    " WHERE id = ?";

/* At a finish: which of the jobs have dependents, and died. */
static const char sql_parents_of[] =
    "SELECT id, state = 'dead' FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE children IS NOT NULL AND id IN (";
/* The edges a finish meets: every one of a parent done (? 1), those of
 * dependents that run anyway of a parent dead (? 0). Their shards
 * lowered, then the dependents whose shards this emptied, then the
 * edges marked (the two before find them unmarked). */
#define MEETS "d.met = 0 AND (? OR d.on_death = 'run')"
static const char sql_lower_shards[] =
    "UPDATE `{{TABLE}}_waits` w JOIN (SELECT d.child, d.parent % 1024"
    " AS shard, COUNT(*) AS n FROM `{{TABLE}}_deps` d WHERE " MEETS
    " AND d.parent IN (";
static const char sql_lower_shards_tail[] =
    ") GROUP BY d.child, d.parent % 1024) e"
    " ON w.child = e.child AND w.shard = e.shard"
    " SET w.parents = w.parents - e.n";
static const char sql_lower_parents[] =
    "UPDATE `{{TABLE}}` j JOIN (SELECT w.child, COUNT(*) AS n"
    " FROM `{{TABLE}}_waits` w JOIN (SELECT DISTINCT d.child,"
    " d.parent % 1024 AS shard FROM `{{TABLE}}_deps` d WHERE " MEETS
    " AND d.parent IN (";
static const char sql_lower_parents_tail[] =
    ")) e ON w.child = e.child AND w.shard = e.shard"
    " WHERE w.parents = 0 GROUP BY w.child) z ON j.id = z.child"
    " SET j.parent_shards = j.parent_shards - z.n";
/* a statement of its own: a multiple-table UPDATE's assignments have no
 * order, and this one must read the count lowered */
static const char sql_release[] =
    "UPDATE `{{TABLE}}` j JOIN (SELECT DISTINCT d.child"
    " FROM `{{TABLE}}_deps` d WHERE " MEETS " AND d.parent IN (";
static const char sql_release_tail[] =
    ")) e ON j.id = e.child SET j.available_at = " MQ_SQL_NOW
    " WHERE j.parent_shards = 0 AND j.state = 'ready'"
    " AND j.available_at = " MQ_SQL_WAITING;
/* The queues of the dependents due now, to wake their waiters */
static const char sql_released[] =
    "SELECT j.queue, COUNT(*) FROM `{{TABLE}}` j JOIN (SELECT DISTINCT"
    " d.child FROM `{{TABLE}}_deps` d WHERE " MEETS " AND d.parent IN (";
static const char sql_released_tail[] =
    ")) e ON j.id = e.child WHERE j.state = 'ready' AND j.parent_shards = 0"
    " AND j.available_at <= " MQ_SQL_NOW " GROUP BY j.queue";
static const char sql_mark_met[] =
    "UPDATE `{{TABLE}}_deps` d SET d.met = 1 WHERE " MEETS
    " AND d.parent IN (";

/* A parent dead (? 0): its dependents that are cancelled with it;
 * purged (? 1): those that do not run anyway, which nothing can release
 * any more. A round of them still waiting, then cancelled: dead, the
 * parent named. */
#define DOOMED "d.parent = ? AND d.met = 0 AND (d.on_death = 'cancel'" \
    " OR (? AND d.on_death = 'wait')) AND j.state = 'ready'" \
    " AND j.parent_shards > 0"
static const char sql_doomed[] =
    "SELECT j.id FROM `{{TABLE}}_deps` d JOIN `{{TABLE}}` j"
    " ON j.id = d.child WHERE " DOOMED " ORDER BY j.id LIMIT 1000"
    " FOR UPDATE";
static const char sql_cancel[] =
    "UPDATE `{{TABLE}}` j JOIN `{{TABLE}}_deps` d ON d.child = j.id"
    " SET j.state = 'dead', j.finished_at = " MQ_SQL_NOW ","
    " j.last_error = CONCAT('cancelled: parent ', d.parent,"
    " IF(?, ' was purged', ' is dead'))"
    " WHERE " DOOMED " AND j.id IN (";

/* Dependents that leave (archive, purge): their edges and shards. */
static const char sql_forget_edges[] =
    "DELETE FROM `{{TABLE}}_deps` WHERE child IN (";
static const char sql_forget_shards[] =
    "DELETE FROM `{{TABLE}}_waits` WHERE child IN (";

static const char *const policies[] = { "cancel", "run", "wait" };

/* ---------------------------------------------------------------- push */

struct parents {
	const uint64_t *ids;	/* sorted, no repeats */
	size_t n;
	unsigned char *state;	/* per id: 0 live, 1 done, 2 dead, 3
				 * recurring, 4 not found */
};

static size_t
find(const struct parents *p, uint64_t id)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The states of the parents of one chunk, by its select (head). */
static enum mq_status
read_states(struct mq_conn *c, const char *head, struct parents *p,
    size_t from, size_t n, int missing_only)
{
	uint64_t *got = malloc(n * sizeof *got), *want = NULL;
	unsigned char *flags = malloc(n);
	size_t ngot = 0, nwant = 0, i, k;
	enum mq_status rc = MQ_OK;
	const uint64_t *ids = p->ids + from;

	if (got == NULL || flags == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	if (rc == MQ_OK && missing_only) {
		if ((want = malloc(n * sizeof *want)) == NULL)
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
		for (i = 0; rc == MQ_OK && i < n; i++)
			if (p->state[from + i] == 4)
				want[nwant++] = ids[i];
		ids = want;
		n = nwant;
	}
	if (rc == MQ_OK && n > 0)
		rc = mq__select_flagged_in(c, head, ")", NULL, 0, ids, n, got,
		    flags, n, &ngot);
	for (i = 0; rc == MQ_OK && i < ngot; i++)
		if ((k = find(p, got[i])) < p->n && p->ids[k] == got[i])
			p->state[k] = flags[i];
	free(want);
	free(flags);
	free(got);
	return rc;
}

/* One INSERT of the edges of ids[from..from+n) to child. */
static enum mq_status
insert_edges(struct mq_conn *c, const struct parents *p, size_t from,
    size_t n, uint64_t child, int policy)
{
	MYSQL_BIND *b = calloc(4 * n, sizeof *b);
	int32_t *met = malloc(n * sizeof *met);
	unsigned long plen = (unsigned long)strlen(policies[policy]);
	char *sql = mq__sql_list(sql_edge_head, "(?, ?, ?, ?)", n, "");
	MYSQL_STMT *st = NULL;
	enum mq_status rc = MQ_OK;
	size_t i;

	if (b == NULL || met == NULL || sql == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	for (i = 0; rc == MQ_OK && i < n; i++) {
		unsigned s = p->state[from + i];

		met[i] = s == 1 || (s == 2 && policy == 1);
		mq__bind_u64(&b[4 * i], (uint64_t *)&p->ids[from + i]);
		mq__bind_u64(&b[4 * i + 1], &child);
		mq__bind_i32(&b[4 * i + 2], &met[i]);
		mq__bind_str(&b[4 * i + 3], policies[policy], &plen);
	}
	if (rc == MQ_OK && (st = mq__prepare_once(c, sql)) == NULL)
		rc = c->err.status;
	if (rc == MQ_OK)
		rc = mq__execute(c, st, b, "cannot push");
	if (st)
		mq__release(c, st);
	free(sql);
	free(met);
	free(b);
	return rc;
}

/* One execution of a statement of one id (or a few values). */
static enum mq_status
exec_once(struct mq_conn *c, const char *tmpl, MYSQL_BIND *in)
{
	MYSQL_STMT *st = mq__prepare(c, tmpl);
	enum mq_status rc;

	if (st == NULL)
		return c->err.status;
	rc = mq__execute(c, st, in, "cannot push");
	mq__release(c, st);
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum mq_status
mq__deps_add(struct mq_conn *c, uint64_t child, const uint64_t *after,
    size_t nafter, int policy, int *due)
{
	struct parents p;
	uint64_t *ids = malloc(nafter * sizeof *ids), affected, cid = child;
	unsigned long plen;
	MYSQL_BIND in[3];
	enum mq_status rc = MQ_OK;
	size_t i, n = 0, k;

	p.state = malloc(nafter);
	if (ids == NULL || p.state == NULL) {
		free(ids);
		free(p.state);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	memcpy(ids, after, nafter * sizeof *ids);
	qsort(ids, nafter, sizeof *ids, cmp_u64);
	for (i = 0; i < nafter; i++)
		if (n == 0 || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	p.ids = ids;
	p.n = n;
	memset(p.state, 4, n);
	/* in id order: two pushes after the same parents lock them in the
	 * same order */
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = mq__exec_ids(c, sql_touch, NULL, 0, ids + i, k, &affected);
		if (rc == MQ_OK)
			rc = read_states(c, sql_parents, &p, i, k, 0);
		if (rc == MQ_OK && affected < k)
			rc = read_states(c, sql_parents_archived, &p, i, k, 1);
	}
	for (i = 0; rc == MQ_OK && i < n; i++) {
		if (p.state[i] == 4)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu does not "
			    "exist", (unsigned long long)ids[i]);
		else if (p.state[i] == 3)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is recurring: "
			    "it never finishes", (unsigned long long)ids[i]);
		else if (p.state[i] == 2 && policy == 0)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is dead "
			    "(--if-parent-dies cancel)",
			    (unsigned long long)ids[i]);
	}
	*due = 1;
	for (i = 0; i < n; i++)
		if (p.state[i] == 0 || (p.state[i] == 2 && policy == 2))
			*due = 0;
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = insert_edges(c, &p, i, k, child, policy);
	}
	if (rc == MQ_OK) {
		mq__bind_u64(&in[0], &cid);
		rc = exec_once(c, sql_shards, in);
	}
	if (rc == MQ_OK) {
		mq__bind_str(&in[0], policies[policy], &plen);
		mq__bind_u64(&in[1], &cid);
		mq__bind_u64(&in[2], &cid);
		rc = exec_once(c, sql_child, in);
	}
	free(p.state);
	free(ids);
	return rc;
}

/* -------------------------------------------------------------- finish */

/* The queues of the dependents made due (sql_released's rows). */
static enum mq_status
note_released(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	char queue[MQ_QUEUE_MAX + 2];
	unsigned long qlen = 0;
	uint64_t n = 0;
	MYSQL_BIND out[2];
	size_t i;
	int f;

	(void)ctx;
	memset(out, 0, sizeof out);
	out[0].buffer_type = MYSQL_TYPE_STRING;
	out[0].buffer = queue;
	out[0].buffer_length = sizeof queue;
	out[0].length = &qlen;
	mq__bind_u64(&out[1], &n);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot read jobs");
	while ((f = mysql_stmt_fetch(st)) == 0) {
		if (qlen > MQ_QUEUE_MAX)
			continue;
		queue[qlen] = '\0';
		for (i = 0; i < c->nreleased; i++)
			if (strcmp(c->released[i], queue) == 0)
				break;
		if (i == MQ_RELEASED_MAX)
			continue;	/* found within a second anyway */
		if (i == c->nreleased) {
			memcpy(c->released[i], queue, qlen + 1);
			c->released_n[i] = 0;
			c->nreleased++;
		}
		if (n > c->released_n[i])
			c->released_n[i] = n;
	}
	return f == 1 ? mq__dberr(c, st, "cannot read jobs") : MQ_OK;
}

void
mq__wake_released(struct mq_conn *c)
{
	struct mq_error saved = c->err;
	uint64_t woken;
	size_t i;

	for (i = 0; i < c->nreleased; i++)
		if (mq_valid_queue(c->released[i]))
			(void)mq__wake(c, c->released[i], c->released_n[i],
			    &woken);
	c->nreleased = 0;
	c->err = saved;
}

/* The edges of parents[0..n) met: done (all of them), or dead (those of
 * dependents that run anyway). */
static enum mq_status
meet(struct mq_conn *c, const uint64_t *parents, size_t n, int32_t *done)
{
	MYSQL_BIND pre[1];
	uint64_t affected;
	enum mq_status rc;

	mq__bind_i32(&pre[0], done);
	rc = mq__exec_ids_tail(c, sql_lower_shards, sql_lower_shards_tail,
	    pre, 1, parents, n, &affected);
	if (rc == MQ_OK)
		rc = mq__exec_ids_tail(c, sql_lower_parents,
		    sql_lower_parents_tail, pre, 1, parents, n, &affected);
	if (rc == MQ_OK && affected > 0)
		rc = mq__exec_ids_tail(c, sql_release, sql_release_tail, pre,
		    1, parents, n, &affected);
	if (rc == MQ_OK && affected > 0)
		rc = mq__query_ids(c, "cannot read jobs", sql_released,
		    sql_released_tail, pre, 1, parents, n, note_released, NULL);
	if (rc == MQ_OK)
		rc = mq__exec_ids(c, sql_mark_met, pre, 1, parents, n,
		    &affected);
	return rc;
}

/* A list of ids that grows. */
struct ids {
	uint64_t *v;
	size_t n, cap;
};

static int
add_ids(struct ids *l, const uint64_t *ids, size_t n)
{
	if (l->n + n > l->cap) {
		size_t cap = l->cap ? l->cap : 256;
		uint64_t *v;

		while (cap < l->n + n)
			cap *= 2;
		if ((v = realloc(l->v, cap * sizeof *v)) == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	memcpy(l->v + l->n, ids, n * sizeof *ids);
	l->n += n;
	return 0;
}

/* The dependents the dead (or purged: gone) parent cancels, counted
 * as finished, added to more (finished in turn: they may have
 * dependents of their own). */
static enum mq_status
cancel_with(struct mq_conn *c, uint64_t parent, int32_t gone,
    struct ids *more)
{
	uint64_t doomed[CHUNK], affected, pid = parent;
	MYSQL_BIND pre[3];
	MYSQL_STMT *st;
	size_t got;
	enum mq_status rc;

	mq__bind_u64(&pre[0], &pid);
	mq__bind_i32(&pre[1], &gone);
	do {
		if ((st = mq__prepare(c, sql_doomed)) == NULL)
			return c->err.status;
		rc = mq__select_ids(c, st, pre, doomed, NULL, CHUNK, &got);
		mq__release(c, st);
		if (rc != MQ_OK || got == 0)
			return rc;
		/* the SET's flag, then the WHERE's */
		mq__bind_i32(&pre[0], &gone);
		mq__bind_u64(&pre[1], &pid);
		mq__bind_i32(&pre[2], &gone);
		rc = mq__exec_ids(c, sql_cancel, pre, 3, doomed, got,
		    &affected);
		mq__bind_u64(&pre[0], &pid);
		mq__bind_i32(&pre[1], &gone);
		if (rc == MQ_OK && affected != got)
			rc = mq__fail(c, MQ_EDB, "cannot cancel the dependents "
			    "of job %llu: %llu of %zu changed",
			    (unsigned long long)parent,
			    (unsigned long long)affected, got);
		if (rc == MQ_OK)
			rc = mq__count_finished(c, doomed, got);
		if (rc == MQ_OK && add_ids(more, doomed, got) != 0)
			rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	} while (rc == MQ_OK && got == CHUNK);
	return rc;
}

/* Parents dead or gone: the edges of dependents that run anyway met,
 * the others' dependents cancelled. */
static enum mq_status
lost_parents(struct mq_conn *c, const uint64_t *parents, size_t n,
    int32_t gone, struct ids *more)
{
	int32_t no = 0;
	enum mq_status rc = meet(c, parents, n, &no);
	size_t i;

	for (i = 0; rc == MQ_OK && i < n; i++)
		rc = cancel_with(c, parents[i], gone, more);
	return rc;
}

/* The jobs among ids[0..n) that have dependents: done ones met, dead
 * ones lost (their cancelled dependents added to more). */
static enum mq_status
finish_some(struct mq_conn *c, const uint64_t *ids, size_t n,
    struct ids *more)
{
	uint64_t parents[CHUNK], dead[CHUNK];
	unsigned char flags[CHUNK];
	size_t got = 0, nd = 0, nx = 0, i;
	int32_t yes = 1;
	enum mq_status rc;

	rc = mq__select_flagged_in(c, sql_parents_of, ")", NULL, 0, ids, n,
	    parents, flags, CHUNK, &got);
	for (i = 0; rc == MQ_OK && i < got; i++)
		if (flags[i])
			dead[nx++] = parents[i];
		else
			parents[nd++] = parents[i];
	if (rc == MQ_OK && nd > 0)
		rc = meet(c, parents, nd, &yes);
	if (rc == MQ_OK && nx > 0)
		rc = lost_parents(c, dead, nx, 0, more);
	return rc;
}

/* The dependents cancelled so far (more), finished in turn, and theirs:
 * a list, not a recursion (a chain of 100,000 cancelled at once). */
static enum mq_status
cascade(struct mq_conn *c, struct ids *more)
{
	enum mq_status rc = MQ_OK;
	size_t k, done = 0;

	while (rc == MQ_OK && done < more->n) {
		k = more->n - done < CHUNK ? more->n - done : CHUNK;
		rc = finish_some(c, more->v + done, k, more);
		done += k;
	}
	free(more->v);
	more->v = NULL;
	return rc;
}

enum mq_status
mq__deps_forget(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	uint64_t forgot;
	enum mq_status rc;

	rc = mq__exec_ids(c, sql_forget_edges, NULL, 0, ids, n, &forgot);
	if (rc == MQ_OK)
		rc = mq__exec_ids(c, sql_forget_shards, NULL, 0, ids, n,
		    &forgot);
	return rc;
}

enum mq_status
mq__deps_purged(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	struct ids more = { NULL, 0, 0 };
	uint64_t parents[CHUNK];
	unsigned char flags[CHUNK];
	enum mq_status rc = MQ_OK;
	size_t i, k, got;

	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = mq__select_flagged_in(c, sql_parents_of, ")", NULL, 0,
		    ids + i, k, parents, flags, CHUNK, &got);
		if (rc == MQ_OK && got > 0)
			rc = lost_parents(c, parents, got, 1, &more);
		if (rc == MQ_OK)
			rc = mq__deps_forget(c, ids + i, k);
	}
	if (rc == MQ_OK)
		return cascade(c, &more);
	free(more.v);
	return rc;
}

enum mq_status
mq__finished(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	struct ids more = { NULL, 0, 0 };
	enum mq_status rc = mq__count_finished(c, ids, n);
	size_t i, k;

	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = finish_some(c, ids + i, k, &more);
	}
	if (rc == MQ_OK)
		return cascade(c, &more);
	free(more.v);
	return rc;
}

enum mq_status
mq__acked(struct mq_conn *c, const uint64_t *ids, size_t n,
    const uint64_t *parents, size_t np)
{
	int32_t yes = 1;
	enum mq_status rc = mq__count_finished(c, ids, n);
	size_t i, k;

	for (i = 0; rc == MQ_OK && i < np; i += k) {
		k = np - i < CHUNK ? np - i : CHUNK;
		rc = meet(c, parents + i, k, &yes);
	}
	return rc;
}
