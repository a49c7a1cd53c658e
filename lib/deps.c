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

/* A parent at push: written first (children + the dependents of the
 * push: 1, or a batch of a stream), so that its finish, which writes it
 * too, comes wholly before or after this push; then its state, as that
 * write left it. */
static const char sql_touch[] =
    "UPDATE `{{TABLE}}` SET children = IFNULL(children, 0) + ?"
    " WHERE id IN (";
/* flags: 0 live, 1 done, 2 dead, 3 recurring, 7 recurring and dead
 * (cancelled, or a run failed for good: dead as any other parent, but
 * retried it recurs again, never done) */
static const char sql_parents[] =
    "SELECT id, IF(state = 'dead', IF(every_us IS NOT NULL, 7, 2),"
    " IF(every_us IS NOT NULL, 3, IF(state = 'done', 1, 0)))"
    " FROM `{{TABLE}}` FORCE INDEX (PRIMARY) WHERE id IN (";
/* an archived parent: done (1), dead (5: it cannot be retried), or in
 * neither state (6: another program's row; it never finishes) */
static const char sql_parents_archived[] =
    "SELECT id, IF(state = 'done', 1, IF(state = 'dead', 5, 6))"
    " FROM `{{TABLE}}_archive`"
    " FORCE INDEX (PRIMARY) WHERE id IN (";
static const char sql_edge_head[] =
    "INSERT INTO `{{TABLE}}_deps` (parent, child, met, on_death) VALUES ";
/* the dependents' shards, then their rows: due now if none is left */
static const char sql_shards[] =
    "INSERT INTO `{{TABLE}}_waits` (child, shard, parents)"
    " SELECT child, parent % 1024, COUNT(*) FROM `{{TABLE}}_deps`"
    " FORCE INDEX (child) WHERE met = 0 AND child IN (";
static const char sql_shards_tail[] = ") GROUP BY child, parent % 1024";
static const char sql_child[] =
    "UPDATE `{{TABLE}}` j SET j.if_parent_dies = ?, j.parent_shards ="
    " (SELECT COUNT(*) FROM `{{TABLE}}_waits` w WHERE w.child = j.id),"
    " j.available_at = IF(j.parent_shards = 0, " MQ_SQL_NOW ","
    " j.available_at) WHERE j.parent_shards IS NULL AND j.id IN (";

/* At a finish: which of the jobs have dependents, and died. */
static const char sql_parents_of[] =
    "SELECT id, state = 'dead' FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE children IS NOT NULL AND id IN (";
/* The edges a finish meets: every one of a parent done (? 1), those of
 * dependents that run anyway of a parent dead (? 0). Their shards
 * lowered, then the dependents whose shards this emptied, then the
 * edges marked (the two before find them unmarked). Each joins the
 * parents' edges (a derived table) first, then the rows they name by
 * key (STRAIGHT_JOIN): planned the other way round, a parent of many
 * dependents made the job table, or all its ready jobs, the first
 * table read, every row of it locked until the commit (an ack of an
 * unrelated job waited for a cancel of 100,000 dependents to end).
 * The edges by the parents' ranges of the deps' key (FORCE INDEX): a
 * list of more than 200 parents is planned from the index's statistics,
 * and those of a table that just took 100,000 edges of one parent
 * (mq push --lines --after) made a scan of all the edges look cheaper,
 * at each wave of a cascade. */
#define MEETS "d.met = 0 AND (? OR d.on_death = 'run')"
static const char sql_lower_shards[] =
    "UPDATE (SELECT d.child, d.parent % 1024 AS shard, COUNT(*) AS n"
    " FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY) WHERE " MEETS
    " AND d.parent IN (";
static const char sql_lower_shards_tail[] =
    ") GROUP BY d.child, d.parent % 1024) e"
    " STRAIGHT_JOIN `{{TABLE}}_waits` w"
    " ON w.child = e.child AND w.shard = e.shard"
    " SET w.parents = w.parents - e.n";
static const char sql_lower_parents[] =
    "UPDATE (SELECT w.child, COUNT(*) AS n FROM (SELECT DISTINCT d.child,"
    " d.parent % 1024 AS shard FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " WHERE " MEETS " AND d.parent IN (";
static const char sql_lower_parents_tail[] =
    ")) e STRAIGHT_JOIN `{{TABLE}}_waits` w"
    " ON w.child = e.child AND w.shard = e.shard"
    " WHERE w.parents = 0 GROUP BY w.child) z"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = z.child"
    " SET j.parent_shards = j.parent_shards - z.n";
/* a statement of its own: a multiple-table UPDATE's assignments have no
 * order, and this one must read the count lowered */
static const char sql_release[] =
    "UPDATE (SELECT DISTINCT d.child"
    " FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " WHERE " MEETS " AND d.parent IN (";
static const char sql_release_tail[] =
    ")) e STRAIGHT_JOIN `{{TABLE}}` j ON j.id = e.child"
    " SET j.available_at = " MQ_SQL_NOW
    " WHERE j.parent_shards = 0 AND j.state = 'ready'"
    " AND j.available_at = " MQ_SQL_WAITING;
/* The queues of the dependents due now, to wake their waiters */
static const char sql_released[] =
    "SELECT j.queue, COUNT(*) FROM (SELECT DISTINCT d.child"
    " FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY) WHERE d.parent IN (";
static const char sql_released_tail[] =
    ")) e STRAIGHT_JOIN `{{TABLE}}` j ON j.id = e.child"
    " WHERE j.state = 'ready' AND j.parent_shards = 0"
    " AND j.available_at <= " MQ_SQL_NOW " GROUP BY j.queue";
static const char sql_mark_met[] =
    "UPDATE `{{TABLE}}_deps` d FORCE INDEX (PRIMARY) SET d.met = 1"
    " WHERE " MEETS " AND d.parent IN (";
/* A dependent's last parent met in one statement, where the four writes
 * above take four: the edge not met is its shard's only parent (1), and that
 * shard the dependent's only one not emptied (1), so the edge is its
 * last; the shard emptied, the dependent made due and the edge marked
 * at once. The WHERE reads the rows as they were and the SET writes
 * constants, so the order of a multiple-table UPDATE's assignments does
 * not matter. A chain's link, each dependent of a fan-out, a fan-in's
 * last parent; the rest (a dependent that waits for other parents too,
 * or that no longer waits: cancelled, running) the four meet as before,
 * and a program that runs only those (mq-sql(7)) leaves the same rows. */
static const char sql_last_parent[] =
    "UPDATE `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " STRAIGHT_JOIN `{{TABLE}}_waits` w"
    " ON w.child = d.child AND w.shard = d.parent % 1024"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = d.child"
    " SET d.met = 1, w.parents = 0, j.parent_shards = 0,"
    " j.available_at = " MQ_SQL_NOW
    " WHERE " MEETS " AND w.parents = 1 AND j.parent_shards = 1"
    " AND j.state = 'ready' AND j.available_at = " MQ_SQL_WAITING
    " AND d.parent IN (";
/* the six, head and tail, for test-explain */
const char *const mq__sql_meet[MQ_SQL_MEETS][2] = {
	{ sql_last_parent, ")" },
	{ sql_lower_shards, sql_lower_shards_tail },
	{ sql_lower_parents, sql_lower_parents_tail },
	{ sql_release, sql_release_tail },
	{ sql_released, sql_released_tail },
	{ sql_mark_met, ")" },
};

/* A parent dead (? 0): its dependents that are cancelled with it;
 * purged (? 1): those that do not run anyway, which nothing can release
 * any more. The purge runs it after its DELETE: the jobs it deleted are
 * not in the job table to be joined, and every other dependent is
 * cancelled (a rule by queue and state passed over dependents that the
 * purge then did not delete: locked, or in a batch never run).
 * Set-based: a round of them still waiting, read by the edges of a list
 * of such parents (ascending) in the deps' key order, after the round
 * before (its last edge read, parent and child), locked; each with its
 * parent and whether it has dependents of its own. Then cancelled,
 * each once: dead, a parent named (the first of its edges the rounds
 * read: the least of its parents in the list), by its edge. */
#define DOOMED "d.met = 0 AND (d.on_death = 'cancel'" \
    " OR (? AND d.on_death = 'wait')) AND j.state = 'ready'" \
    " AND j.parent_shards > 0"
const char mq__sql_doomed[] =
    "SELECT d.child, d.parent, j.children IS NOT NULL"
    " FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = d.child"
    " WHERE (d.parent > ? OR (d.parent = ? AND d.child > ?)) AND " DOOMED
    " AND d.parent IN (";
const char mq__sql_doomed_tail[] =
    ") ORDER BY d.parent, d.child LIMIT 1000 FOR UPDATE";
/* the edges (parent, child) given, one per dependent */
const char mq__sql_cancel_doomed[] =
    "UPDATE `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = d.child"
    " SET j.state = 'dead', j.finished_at = " MQ_SQL_NOW ","
    " j.available_at = " MQ_SQL_NOW ","
    " j.last_error = CONCAT('cancelled: parent ', d.parent,"
    " IF(?, ' was purged', ' is dead'))"
    " WHERE " DOOMED " AND (d.parent, d.child) IN (";
#define DOOMED_MAX 1000		/* mq__sql_doomed's LIMIT */

/* mq retry's report: the dependents of the jobs it retried that those
 * cancelled when they died (their error names them: each is counted by
 * one of its parents only, whatever list that parent is in), which stay
 * dead; and those of the jobs retried that wait again */
static const char sql_stay_dead[] =
    "SELECT COUNT(*) FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = d.child WHERE d.met = 0"
    " AND d.on_death = 'cancel' AND j.state = 'dead'"
    " AND j.last_error = CONCAT('cancelled: parent ', d.parent, ' is dead')"
    " AND d.parent IN (";
static const char sql_wait_again[] =
    "SELECT COUNT(*) FROM `{{TABLE}}` WHERE state = 'ready'"
    " AND parent_shards > 0 AND id IN (";

/* Dependents among the ids that mq retry cannot make wait again: an
 * ancestor not met (a parent not met, or one of those of a dead one,
 * and so on up through dead jobs) is not in the job table (purged, or
 * dead in the archive), so it can never finish: neither can the dead
 * jobs between, nor the dependent (one level only, a dependent made to
 * wait for a dead parent cancelled by a purged grandparent waited for
 * ever). The ancestors are written first (children + 1, as a push
 * after them adds), then read: an archive or a purge of one of them
 * (which deletes its row) comes wholly before the retry (the ancestor
 * is gone: the dependent stays dead) or after it (and sees the
 * dependent waiting: it keeps a dead parent so awaited). Read alone,
 * both decided on rows the other wrote: the dependent made to wait for
 * a parent archived at the same moment, for ever (on one server in the
 * instant between them; on a Galera cluster also after the retry's
 * commit, on a node that had not applied it yet, and a read there is
 * not certified). The walk stops at a job that is not dead: live, it
 * finishes, waiting, nothing strands it (deps.c, archive.c). */
#define ANCESTORS(cols, first) \
    "WITH RECURSIVE a (" cols ") AS (SELECT " first \
    " FROM `{{TABLE}}_deps` d FORCE INDEX (child)" \
    " WHERE d.met = 0 AND d.child IN ("
#define ANCESTORS_TAIL(next) \
    ") UNION SELECT " next " FROM a STRAIGHT_JOIN `{{TABLE}}` j" \
    " ON j.id = a.id STRAIGHT_JOIN `{{TABLE}}_deps` d FORCE INDEX (child)" \
    " ON d.child = a.id WHERE j.state = 'dead' AND d.met = 0)"
static const char sql_touch_unmet[] =
    "UPDATE `{{TABLE}}` p JOIN (" ANCESTORS("id", "d.parent");
static const char sql_touch_unmet_tail[] =
    ANCESTORS_TAIL("d.parent") " SELECT DISTINCT id FROM a) e"
    " ON p.id = e.id SET p.children = IFNULL(p.children, 0) + 1";
static const char sql_unretriable[] =
    "SELECT DISTINCT g.child FROM ("
    ANCESTORS("child, id", "d.child, d.parent");
static const char sql_unretriable_tail[] =
    ANCESTORS_TAIL("a.child, d.parent") " SELECT child, id FROM a) g"
    " LEFT JOIN `{{TABLE}}` p ON p.id = g.id WHERE p.id IS NULL"
    " ORDER BY g.child";

/* Dead dependents (with dependents of their own) of parents[] that did
 * not meet them: a parent that can never finish (purged, archived dead,
 * or final in turn) makes them final too, though they died before;
 * those that wait for them are then cancelled. */
static const char sql_dead_kids[] =
    "SELECT DISTINCT d.child FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY)"
    " STRAIGHT_JOIN `{{TABLE}}` j ON j.id = d.child"
    " WHERE d.met = 0 AND j.state = 'dead' AND j.children IS NOT NULL"
    " AND d.parent IN (";

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
				 * recurring, 4 not found, 5 dead and
				 * archived, 6 archived, neither done
				 * nor dead, 7 recurring and dead */
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

/* The states of the parents of one chunk, by its select (head); *found
 * how many it found. */
static enum mq_status
read_states(struct mq_conn *c, const char *head, struct parents *p,
    size_t from, size_t n, int missing_only, size_t *found)
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
	*found = ngot;
	free(want);
	free(flags);
	free(got);
	return rc;
}

/* The edges of a push's dependents, cap rows an INSERT (CHUNK, or
 * fewer where the server's max_allowed_packet takes no more): each
 * dependent's parents in order, dependent after dependent. */
struct edges {
	MYSQL_BIND b[4 * CHUNK];
	uint64_t parent[CHUNK], child[CHUNK];
	int32_t met[CHUNK];
	unsigned long plen;
	size_t n, cap;
	MYSQL_STMT *full;	/* prepared for cap rows */
};

/* Bytes an edge takes at most in the INSERT's packets: its text
 * "(?, ?, ?, ?), ", its values and their types (a policy's name) */
#define EDGE_BYTES 64

/* The rows of bytes each a statement may hold on this server, max at
 * most: a packet larger than max_allowed_packet is refused (1153; at
 * 16 KiB, 1,000 edges of a push were, and 1,000 pairs of a cancel) */
static size_t
rows_fit(const struct mq_conn *c, size_t bytes, size_t max)
{
	uint64_t fit = c->max_packet / 2 / bytes;

	return c->max_packet == 0 || fit >= max ? max : fit ? fit : 1;
}

static enum mq_status
flush_edges(struct mq_conn *c, struct edges *e, const char *policy)
{
	MYSQL_STMT *st = e->full;
	enum mq_status rc;
	size_t i;
	char *sql;

	if (e->n == 0)
		return MQ_OK;
	if (e->n < e->cap || st == NULL) {
		if ((sql = mq__sql_list(sql_edge_head, "(?, ?, ?, ?)", e->n,
		    "")) == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		st = mq__prepare_once(c, sql);
		free(sql);
		if (st == NULL)
			return c->err.status;
		if (e->n == e->cap)
			e->full = st;
	}
	for (i = 0; i < e->n; i++) {
		mq__bind_u64(&e->b[4 * i], &e->parent[i]);
		mq__bind_u64(&e->b[4 * i + 1], &e->child[i]);
		mq__bind_i32(&e->b[4 * i + 2], &e->met[i]);
		mq__bind_str(&e->b[4 * i + 3], policy, &e->plen);
	}
	rc = mq__execute(c, st, e->b, "cannot push");
	if (st != e->full)
		mq__release(c, st);
	e->n = 0;
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The parents of a push (mq__deps_new; then mq__deps_check and
 * mq__deps_link in each of its transactions). */
struct mq__deps {
	struct parents p;
	uint64_t *ids;
	int policy;
};

void
mq__deps_free(struct mq__deps *d)
{
	if (d == NULL)
		return;
	free(d->p.state);
	free(d->ids);
	free(d);
}

enum mq_status
mq__deps_new(struct mq_conn *c, const uint64_t *after, size_t nafter,
    int policy, struct mq__deps **out)
{
	struct mq__deps *d = calloc(1, sizeof *d);
	size_t i, n = 0;

	*out = NULL;
	if (d == NULL || (d->ids = malloc(nafter * sizeof *d->ids)) == NULL ||
	    (d->p.state = malloc(nafter)) == NULL) {
		mq__deps_free(d);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	d->policy = policy;
	memcpy(d->ids, after, nafter * sizeof *d->ids);
	qsort(d->ids, nafter, sizeof *d->ids, cmp_u64);
	for (i = 0; i < nafter; i++)
		if (n == 0 || d->ids[n - 1] != d->ids[i])
			d->ids[n++] = d->ids[i];
	d->p.ids = d->ids;
	d->p.n = n;
	*out = d;
	return MQ_OK;
}

/* Under wait, a dead parent in the job table that can never be retried
 * (one it waits for, or one above it through dead jobs, is purged or
 * dead in the archive: mq retry leaves it dead) would leave the new job
 * waiting for ever: refused, as one dead in the archive is. Its
 * ancestors are written first, as mq retry writes them, so that an
 * archive or a purge of one comes wholly before the push or after it
 * (and then cancels the new job with the others). */
static enum mq_status
refuse_final(struct mq_conn *c, const struct mq__deps *d)
{
	size_t n = d->p.n ? d->p.n : 1, nd = 0, got = 0, i, k;
	uint64_t *dead = malloc(n * sizeof *dead), *final = malloc(n *
	    sizeof *final), rows = 0;
	enum mq_status rc = MQ_OK;

	if (dead == NULL || final == NULL) {
		free(dead);
		free(final);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	for (i = 0; i < d->p.n; i++)
		if (d->p.state[i] == 2)
			dead[nd++] = d->ids[i];
	for (i = 0; rc == MQ_OK && got == 0 && i < nd; i += k) {
		k = nd - i < CHUNK ? nd - i : CHUNK;
		rc = mq__deps_unretriable(c, dead + i, k, final, &got, &rows);
	}
	if (rc == MQ_OK && got > 0)
		rc = mq__fail(c, MQ_EPARENT, "parent %llu is dead and can "
		    "never be retried: a job above it was purged or archived "
		    "dead (--if-parent-dies wait)", (unsigned long long)final[0]);
	free(dead);
	free(final);
	return rc;
}

enum mq_status
mq__deps_check(struct mq_conn *c, struct mq__deps *d, uint64_t children)
{
	uint64_t affected = 0, add = children;
	size_t found, i, k, n = d->p.n;
	MYSQL_BIND pre[1];
	enum mq_status rc = MQ_OK;
	int policy = d->policy;

	/* as nothing read yet: a transaction run again reads them again */
	memset(d->p.state, 4, n);
	mq__bind_u64(&pre[0], &add);
	/* in id order: two pushes after the same parents lock them in the
	 * same order; before the dependents are inserted, so that a parent
	 * is a job that existed when it was asked for (never a dependent,
	 * nor a job pushed after it: no cycle can be made) */
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		if (children > 0)
			rc = mq__exec_ids(c, sql_touch, pre, 1, d->ids + i, k,
			    &affected);
		if (rc == MQ_OK)
			rc = read_states(c, sql_parents, &d->p, i, k, 0, &found);
		/* a parent the write did not find, and the read did (a Galera
		 * node applied its push in between), was not written: its
		 * finish would not see these dependents. Run again. */
		if (rc == MQ_OK && children > 0 && found != affected)
			rc = mq__fail(c, MQ_ERETRY, "the parents changed while "
			    "the push read them");
		if (rc == MQ_OK && found < k)
			rc = read_states(c, sql_parents_archived, &d->p, i, k,
			    1, &found);
	}
	for (i = 0; rc == MQ_OK && i < n; i++) {
		unsigned s = d->p.state[i];

		if (s == 4)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu does not "
			    "exist", (unsigned long long)d->ids[i]);
		else if (s == 3)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is recurring: "
			    "it never finishes", (unsigned long long)d->ids[i]);
		else if ((s == 2 || s == 5 || s == 7) && policy == 0)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is dead "
			    "(--if-parent-dies cancel)",
			    (unsigned long long)d->ids[i]);
		else if (s == 7 && policy == 2)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is a recurring "
			    "job, dead: retried, it would recur, never done "
			    "(--if-parent-dies wait)",
			    (unsigned long long)d->ids[i]);
		else if (s == 5 && policy == 2)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is dead and "
			    "archived: it cannot be retried (--if-parent-dies "
			    "wait)", (unsigned long long)d->ids[i]);
		else if (s == 6 && policy != 1)
			rc = mq__fail(c, MQ_EPARENT, "parent %llu is archived "
			    "neither done nor dead (an invalid state): it never "
			    "finishes (--if-parent-dies %s)",
			    (unsigned long long)d->ids[i], policies[policy]);
	}
	if (rc == MQ_OK && policy == 2)
		rc = refuse_final(c, d);
	return rc;
}

enum mq_status
mq__deps_link(struct mq_conn *c, const struct mq__deps *d, uint64_t first,
    uint64_t step, size_t nchild, int *due)
{
	struct edges *e = calloc(1, sizeof *e);
	uint64_t *child = malloc((nchild ? nchild : 1) * sizeof *child);
	int32_t *met = malloc((d->p.n ? d->p.n : 1) * sizeof *met);
	const char *policy = policies[d->policy];
	unsigned long plen = (unsigned long)strlen(policy);
	uint64_t affected = 0;
	MYSQL_BIND pre[1];
	enum mq_status rc = MQ_OK;
	size_t i, j, n = d->p.n;

	*due = 1;
	if (e == NULL || child == NULL || met == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	else {
		e->plen = plen;
		e->cap = rows_fit(c, EDGE_BYTES, CHUNK);
	}
	for (i = 0; rc == MQ_OK && i < n; i++) {
		unsigned s = d->p.state[i];

		met[i] = s == 1 || ((s == 2 || s == 5 || s == 6 ||
		    s == 7) && d->policy == 1);
		/* a parent neither met nor refused: live, or dead under
		 * wait */
		if (!met[i])
			*due = 0;
	}
	for (j = 0; rc == MQ_OK && j < nchild; j++) {
		child[j] = first + j * step;
		for (i = 0; rc == MQ_OK && i < n; i++) {
			if (e->n == e->cap)
				rc = flush_edges(c, e, policy);
			e->parent[e->n] = d->ids[i];
			e->child[e->n] = child[j];
			e->met[e->n] = met[i];
			e->n++;
		}
	}
	if (rc == MQ_OK)
		rc = flush_edges(c, e, policy);
	/* the shards of the parents not met: none if all are */
	if (rc == MQ_OK && !*due && nchild > 0)
		rc = mq__exec_ids_tail(c, sql_shards, sql_shards_tail, NULL, 0,
		    child, nchild, &affected);
	if (rc == MQ_OK && nchild > 0) {
		mq__bind_str(&pre[0], policy, &plen);
		rc = mq__exec_ids(c, sql_child, pre, 1, child, nchild,
		    &affected);
	}
	/* every dependent the INSERT numbered so, found (the ids of a
	 * multi-row INSERT are consecutive by the step: the ids printed
	 * rely on it too) */
	if (rc == MQ_OK && affected != nchild)
		rc = mq__fail(c, MQ_EDB, "cannot push: %llu of the %zu jobs "
		    "inserted found by their ids", (unsigned long long)affected,
		    nchild);
	if (e && e->full)
		mq__release(c, e->full);
	free(met);
	free(child);
	free(e);
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


/* The edges of parents[0..n) met: done (all of them), or dead (those of
 * dependents that run anyway). one: each parent has one edge at most,
 * so that an edge met as a last parent's leaves none for the four (a
 * chain's link: that statement and the read of the queues it made due,
 * not six statements). */
static enum mq_status
meet(struct mq_conn *c, const uint64_t *parents, size_t n, int32_t *done,
    int one)
{
	MYSQL_BIND pre[1];
	uint64_t last = 0, lowered = 0, affected = 0, released = 0;
	enum mq_status rc;

	mq__bind_i32(&pre[0], done);
	rc = mq__exec_ids(c, sql_last_parent, pre, 1, parents, n, &last);
	if (rc == MQ_OK && !(one && n == 1 && last > 0))
		rc = mq__exec_ids_tail(c, sql_lower_shards,
		    sql_lower_shards_tail, pre, 1, parents, n, &lowered);
	/* no shard lowered: no edge left to meet (each edge not met is
	 * counted in its shard) */
	if (rc == MQ_OK && lowered > 0)
		rc = mq__exec_ids_tail(c, sql_lower_parents,
		    sql_lower_parents_tail, pre, 1, parents, n, &affected);
	if (rc == MQ_OK && lowered > 0 && affected > 0)
		rc = mq__exec_ids_tail(c, sql_release, sql_release_tail, pre,
		    1, parents, n, &released);
	if (rc == MQ_OK && (last > 0 || released > 0))
		rc = mq__query_ids(c, "cannot read jobs", sql_released,
		    sql_released_tail, NULL, 0, parents, n, note_released,
		    NULL);
	if (rc == MQ_OK && lowered > 0)
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

/* How a parent was lost: dead (on 0), or purged (on 1, the message);
 * final: it can never finish (purged, or dead and never retriable: a
 * parent it did not meet is gone), so that its dependents that wait
 * (--if-parent-dies wait) are cancelled too, and theirs in turn. */
struct lost {
	int32_t on, final;
};

/* A round of doomed dependents: the edges read (mq__sql_doomed's rows,
 * in key order), then each dependent once, by its first edge. */
struct doomed_edge {
	uint64_t child, parent;
	size_t row;		/* its place in the round */
	unsigned char kids;	/* it has dependents */
};
struct round {
	struct doomed_edge e[DOOMED_MAX];
	size_t n;
	uint64_t ids[DOOMED_MAX];	/* the dependents, ascending */
};

static enum mq_status
read_round(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	struct round *r = ctx;
	MYSQL_BIND out[3];
	uint64_t child = 0, parent = 0;
	int32_t kids = 0;
	int f;

	r->n = 0;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &child);
	mq__bind_u64(&out[1], &parent);
	mq__bind_i32(&out[2], &kids);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot select jobs");
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		if (r->n == DOOMED_MAX)
			continue;	/* the LIMIT: never */
		r->e[r->n].child = child;
		r->e[r->n].parent = parent;
		r->e[r->n].row = r->n;
		r->e[r->n].kids = kids != 0;
		r->n++;
	}
	return f == 1 ? mq__dberr(c, st, "cannot select jobs") : MQ_OK;
}

static int
cmp_edge(const void *a, const void *b)
{
	const struct doomed_edge *x = a, *y = b;

	if (x->child != y->child)
		return x->child < y->child ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The round's edges, one per dependent (its first read), in e[0..*k),
 * ascending by dependent. */
static void
one_each(struct round *r, size_t *k)
{
	size_t i;

	qsort(r->e, r->n, sizeof r->e[0], cmp_edge);
	for (*k = 0, i = 0; i < r->n; i++)
		if (*k == 0 || r->e[*k - 1].child != r->e[i].child)
			r->e[(*k)++] = r->e[i];
}

/* Bytes an edge (parent, child) takes at most in the cancel's packets:
 * its text "(?, ?), ", its two values and their types */
#define PAIR_BYTES 48

/* The dependents of the edges e[0..k) cancelled, each by its edge
 * (the parent it names): one statement. */
static enum mq_status
cancel_slice(struct mq_conn *c, const struct doomed_edge *e, size_t k,
    const struct lost *l)
{
	size_t np = k <= MQ_IDS_KEPT ? mq__padded(k) : k, i;
	int32_t gone = l->on, final = l->final;
	uint64_t *pairs = malloc(2 * np * sizeof *pairs), affected = 0;
	MYSQL_BIND *b = calloc(2 + 2 * np, sizeof *b);
	char *sql = mq__sql_list(mq__sql_cancel_doomed, "(?, ?)", np, ")");
	MYSQL_STMT *st = NULL;
	enum mq_status rc = MQ_OK;

	if (pairs == NULL || b == NULL || sql == NULL)
		rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	/* short lists padded (the last edge repeated) and kept, as
	 * mq__exec_ids keeps its own */
	if (rc == MQ_OK && (st = np <= MQ_IDS_KEPT ? mq__prepare_keyed(c,
	    mq__sql_cancel_doomed, np, sql) : mq__prepare_once(c, sql)) ==
	    NULL)
		rc = c->err.status;
	if (rc == MQ_OK) {
		/* the SET's flag (the message), then the WHERE's (wait) */
		mq__bind_i32(&b[0], &gone);
		mq__bind_i32(&b[1], &final);
		for (i = 0; i < np; i++) {
			pairs[2 * i] = e[i < k ? i : k - 1].parent;
			pairs[2 * i + 1] = e[i < k ? i : k - 1].child;
			mq__bind_u64(&b[2 + 2 * i], &pairs[2 * i]);
			mq__bind_u64(&b[3 + 2 * i], &pairs[2 * i + 1]);
		}
		rc = mq__execute(c, st, b, "cannot cancel jobs");
		if (rc == MQ_OK)
			affected = mysql_stmt_affected_rows(st);
		mq__release(c, st);
	}
	if (rc == MQ_OK && affected != k)
		rc = mq__fail(c, MQ_EDB, "cannot cancel the dependents of job "
		    "%llu: %llu of %zu changed", (unsigned long long)e[0].parent,
		    (unsigned long long)affected, k);
	free(sql);
	free(b);
	free(pairs);
	return rc;
}

/* The dependents of the edges e[0..k) cancelled: a statement for as
 * many as the server's packet takes (all of them at its default). */
static enum mq_status
cancel_edges(struct mq_conn *c, const struct doomed_edge *e, size_t k,
    const struct lost *l)
{
	size_t cap = rows_fit(c, PAIR_BYTES, DOOMED_MAX), i, m;
	enum mq_status rc = MQ_OK;

	for (i = 0; rc == MQ_OK && i < k; i += m) {
		m = k - i < cap ? k - i : cap;
		rc = cancel_slice(c, e + i, m, l);
	}
	return rc;
}

/* The dependents the dead (or purged) parents[0..n) (ascending) cancel,
 * a round at a time over all of them: each counted as finished, and
 * those with dependents of their own added to more (lost in turn). */
static enum mq_status
cancel_with(struct mq_conn *c, const uint64_t *parents, size_t n,
    const struct lost *l, struct ids *more)
{
	struct round *r = malloc(sizeof *r);
	uint64_t lastp = 0, lastc = 0;
	int32_t final = l->final;
	MYSQL_BIND pre[4];
	enum mq_status rc = MQ_OK;
	size_t from = 0, k, i, nk = 0;

	if (r == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	do {
		/* after the round before's last edge: from its parent on */
		while (from < n && parents[from] < lastp)
			from++;
		if (from == n)
			break;
		mq__bind_u64(&pre[0], &lastp);
		mq__bind_u64(&pre[1], &lastp);
		mq__bind_u64(&pre[2], &lastc);
		mq__bind_i32(&pre[3], &final);
		rc = mq__query_ids(c, "cannot select jobs", mq__sql_doomed,
		    mq__sql_doomed_tail, pre, 4, parents + from, n - from,
		    read_round, r);
		if (rc != MQ_OK || r->n == 0)
			break;
		lastp = r->e[r->n - 1].parent;
		lastc = r->e[r->n - 1].child;
		/* a dependent of several of the parents: one edge of each
		 * is read in the round (a later round finds it dead) */
		nk = r->n;
		one_each(r, &k);
		rc = cancel_edges(c, r->e, k, l);
		for (i = 0; i < k; i++)
			r->ids[i] = r->e[i].child;
		if (rc == MQ_OK)
			rc = mq__count_finished(c, r->ids, k);
		for (i = 0; rc == MQ_OK && i < k; i++)
			if (r->e[i].kids && add_ids(more, &r->e[i].child, 1) != 0)
				rc = mq__fail(c, MQ_ENOMEM, "out of memory");
	} while (rc == MQ_OK && nk == DOOMED_MAX);
	free(r);
	return rc;
}

/* Parents dead or purged (ascending): the edges of dependents that run
 * anyway met, the others' dependents cancelled. */
static enum mq_status
lost_parents(struct mq_conn *c, const uint64_t *parents, size_t n,
    const struct lost *l, struct ids *more)
{
	int32_t no = 0;
	enum mq_status rc = meet(c, parents, n, &no, 0);

	if (rc == MQ_OK)
		rc = cancel_with(c, parents, n, l, more);
	return rc;
}

/* The jobs among ids[0..n) that have dependents: done ones met, dead
 * ones lost (their cancelled dependents with dependents added to
 * more). */
static enum mq_status
finish_some(struct mq_conn *c, const uint64_t *ids, size_t n,
    struct ids *more)
{
	uint64_t parents[CHUNK], dead[CHUNK];
	unsigned char flags[CHUNK];
	size_t got = 0, nd = 0, nx = 0, i;
	static const struct lost died = { 0, 0 };
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
		rc = meet(c, parents, nd, &yes, 0);
	if (rc == MQ_OK && nx > 0) {
		qsort(dead, nx, sizeof dead[0], cmp_u64);
		rc = lost_parents(c, dead, nx, &died, more);
	}
	return rc;
}

/* A row's id (a one-column read) added to the list ctx. */
static enum mq_status
add_rows(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	MYSQL_BIND out[1];
	uint64_t id = 0;
	int f;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot read jobs");
	while ((f = mysql_stmt_fetch(st)) == 0)
		if (add_ids(ctx, &id, 1) != 0)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
	return f == 1 ? mq__dberr(c, st, "cannot read jobs") : MQ_OK;
}

/* The dead dependents of parents[0..n) that can never finish
 * (sql_dead_kids) added to more. */
static enum mq_status
dead_kids(struct mq_conn *c, const uint64_t *parents, size_t n,
    struct ids *more)
{
	return mq__query_ids(c, "cannot read jobs", sql_dead_kids, ")", NULL,
	    0, parents, n, add_rows, more);
}

/* The dependents cancelled so far that have dependents (more), lost in
 * turn, CHUNK at a time, and theirs: a list, not a recursion (a chain
 * of 100,000 cancelled at once). final: below a job that can never
 * finish (purged, archived dead), every job lost is final too: those
 * that wait are cancelled as well, and the dead ones with dependents
 * (dead before, with edges not met) are walked through. */
static enum mq_status
cascade(struct mq_conn *c, struct ids *more, int final)
{
	static const struct lost died = { 0, 0 }, doomed = { 0, 1 };
	uint64_t wave[CHUNK];
	enum mq_status rc = MQ_OK;
	size_t k, done = 0;

	while (rc == MQ_OK && done < more->n) {
		k = more->n - done < CHUNK ? more->n - done : CHUNK;
		/* each is in the list once: cancelled once (a dead one
		 * reached by two paths is walked twice, which cancels
		 * nothing more) */
		memcpy(wave, more->v + done, k * sizeof wave[0]);
		qsort(wave, k, sizeof wave[0], cmp_u64);
		/* before the wave cancels any: those dead already */
		if (final)
			rc = dead_kids(c, wave, k, more);
		if (rc == MQ_OK)
			rc = lost_parents(c, wave, k, final ? &doomed : &died,
			    more);
		done += k;
	}
	free(more->v);
	more->v = NULL;
	return rc;
}

/* The one number an executed COUNT(*) returns, added to ctx. */
static enum mq_status
add_count(struct mq_conn *c, MYSQL_STMT *st, void *ctx)
{
	MYSQL_BIND out[1];
	uint64_t n = 0;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &n);
	if (mysql_stmt_bind_result(st, out) != 0 ||
	    mysql_stmt_fetch(st) != 0)
		return mq__dberr(c, st, "cannot read jobs");
	*(uint64_t *)ctx += n;
	return MQ_OK;
}

enum mq_status
mq__deps_retried(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *parents, size_t *nparents, uint64_t *wait_again)
{
	unsigned char *flags = malloc(n ? n : 1);
	enum mq_status rc;

	*nparents = 0;
	if (flags == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = mq__select_flagged_in(c, sql_parents_of, ")", NULL, 0, ids, n,
	    parents, flags, n, nparents);
	free(flags);
	if (rc == MQ_OK)
		rc = mq__query_ids(c, "cannot read jobs", sql_wait_again, ")",
		    NULL, 0, ids, n, add_count, wait_again);
	return rc;
}

enum mq_status
mq__deps_stay_dead(struct mq_conn *c, const uint64_t *parents, size_t n,
    uint64_t *stay_dead)
{
	enum mq_status rc = MQ_OK;
	size_t i, k;

	*stay_dead = 0;
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = mq__query_ids(c, "cannot read jobs", sql_stay_dead, ")",
		    NULL, 0, parents + i, k, add_count, stay_dead);
	}
	return rc;
}

enum mq_status
mq__deps_unretriable(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *out, size_t *got, uint64_t *rows)
{
	uint64_t touched = 0;
	enum mq_status rc;

	*got = 0;
	rc = mq__exec_ids_tail(c, sql_touch_unmet, sql_touch_unmet_tail, NULL,
	    0, ids, n, &touched);
	*rows += touched;
	if (rc == MQ_OK)
		rc = mq__deps_unretriable_read(c, ids, n, out, got);
	return rc;
}

enum mq_status
mq__deps_unretriable_read(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *out, size_t *got)
{
	return mq__select_ids_in(c, sql_unretriable, sql_unretriable_tail,
	    NULL, 0, ids, n, out, n, got);
}

enum mq_status
mq__deps_forget(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *rows)
{
	uint64_t edges = 0, shards = 0;
	enum mq_status rc;

	rc = mq__exec_ids(c, sql_forget_edges, NULL, 0, ids, n, &edges);
	if (rc == MQ_OK)
		rc = mq__exec_ids(c, sql_forget_shards, NULL, 0, ids, n,
		    &shards);
	if (rows)
		*rows += edges + shards;
	return rc;
}

enum mq_status
mq__deps_purging(struct mq_conn *c, const uint64_t *ids, size_t n,
    uint64_t *parents, size_t *np)
{
	unsigned char *flags = malloc(n ? n : 1);
	enum mq_status rc = MQ_OK;
	size_t i, k, got;

	*np = 0;
	if (flags == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = mq__select_flagged_in(c, sql_parents_of, ")", NULL, 0,
		    ids + i, k, parents + *np, flags, n - *np, &got);
		if (rc == MQ_OK)
			*np += got;
	}
	free(flags);
	if (rc == MQ_OK)
		qsort(parents, *np, sizeof *parents, cmp_u64);
	return rc;
}

enum mq_status
mq__deps_purged(struct mq_conn *c, const uint64_t *ids, size_t n,
    const uint64_t *parents, size_t np)
{
	static const struct lost purged = { 1, 1 };
	struct ids more = { NULL, 0, 0 };
	enum mq_status rc = MQ_OK;
	size_t i, k;

	/* first: the edges of the deleted dependents are not met below */
	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = mq__deps_forget(c, ids + i, k, NULL);
	}
	/* the dead dependents first (those lost_parents cancels are
	 * added by it) */
	for (i = 0; rc == MQ_OK && i < np; i += k) {
		k = np - i < CHUNK ? np - i : CHUNK;
		rc = dead_kids(c, parents + i, k, &more);
		if (rc == MQ_OK)
			rc = lost_parents(c, parents + i, k, &purged, &more);
	}
	if (rc == MQ_OK)
		return cascade(c, &more, 1);
	free(more.v);
	return rc;
}

enum mq_status
mq__deps_archived(struct mq_conn *c, const uint64_t *ids, size_t n)
{
	struct ids more = { NULL, 0, 0 };
	enum mq_status rc = MQ_OK;
	size_t i, k;

	for (i = 0; rc == MQ_OK && i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		rc = dead_kids(c, ids + i, k, &more);
	}
	if (rc == MQ_OK)
		return cascade(c, &more, 1);
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
		return cascade(c, &more, 0);
	free(more.v);
	return rc;
}

enum mq_status
mq__acked(struct mq_conn *c, const uint64_t *ids, size_t n,
    const uint64_t *parents, size_t np, int one)
{
	int32_t yes = 1;
	enum mq_status rc = mq__count_finished(c, ids, n);
	size_t i, k;

	for (i = 0; rc == MQ_OK && i < np; i += k) {
		k = np - i < CHUNK ? np - i : CHUNK;
		rc = meet(c, parents + i, k, &yes, one);
	}
	return rc;
}
