/*
 * claim.c: reading what a claim got and binding its lease, for both ways
 * of claiming (pop.c); and a Galera node's share of the jobs.
 *
 * On a Galera cluster, row locks are each node's own: consumers on two
 * nodes take the same head of the queue, and one of them fails
 * certification at commit. So there, a claim first takes from its
 * node's share of the jobs: with k = id DIV auto_increment_increment
 * (the ids one node gives out step by that), (k MOD nodes + CRC32(k DIV
 * nodes)) MOD nodes = the node's index. Each aligned block of nodes
 * consecutive k has one job in each share, so jobs pushed together are
 * shared out evenly, and the rotation of each block is drawn by a hash,
 * so that a queue's ids, which step by more when a producer pushes to
 * several queues in turn, do not all fall into one share (with k MOD
 * nodes alone, three queues pushed in turn on a 3-node cluster had one
 * share each). Within the share, claims go in the claim's order, and
 * only jobs of the head's priority, among the first entries of the
 * queue (a window 8 times as long as the share should need); what the
 * share cannot give there, the rest of the queue gives (queue by queue,
 * in the order of a preference list). A share that is behind (its
 * node has no consumers, or too few; an arbitrator's share; jobs too few
 * to fill a busy node's window) is late, never stranded: another share's
 * jobs at the head that have waited a second longer than the node's own
 * first one are taken first, and a window with nothing of the node's
 * share sends the claim to the head; when that window holds all the
 * head has (a drain's end), to its last entries instead, which the
 * other nodes, each taking its share from the front, reach last: they
 * meet on one job, not on every one. (A claim in 64 once took the head
 * at random instead: each such claim took jobs the other nodes'
 * consumers were taking, a certification conflict per job, and still
 * left a share behind for up to 64 claims.) The share's jobs are picked
 * by a read without locks, then locked by primary key (the ones it
 * needs, in one statement; the next ones if others here took those): a
 * locking read of the claim index would lock, if only for an instant,
 * the other shares' rows it passes, and another node's claim of one of
 * them, applied here, would then abort this one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"

/* A connection's memory of queues, by name: whether queue is in it. */
int
mq__seen_in(char (*seen)[MQ_QUEUE_MAX + 1], const char *queue)
{
	size_t i;

	for (i = 0; i < MQ_QUEUES_MAX; i++)
		if (strcmp(seen[i], queue) == 0)
			return 1;
	return 0;
}

/* Puts queue in it (a free place, else the first one, taken for it) or
 * takes it out. */
void
mq__note_in(char (*seen)[MQ_QUEUE_MAX + 1], const char *queue, int in)
{
	size_t i, spot = 0;

	for (i = 0; i < MQ_QUEUES_MAX; i++) {
		if (strcmp(seen[i], queue) == 0) {
			if (!in)
				seen[i][0] = '\0';
			return;
		}
		if (seen[i][0] == '\0' && spot == 0)
			spot = i + 1;
	}
	if (in)
		snprintf(seen[spot ? spot - 1 : 0], sizeof seen[0], "%s",
		    queue);
}

/* Whether a job is in the node's share (Galera): binds step, nodes,
 * step * nodes, nodes, index (k MOD nodes first: k + CRC32 could pass
 * 2^64 with a step of 1). */
#define IN_SHARE "((id DIV ?) MOD ? + CRC32(id DIV ?)) MOD ? = ?"

/* The head of the queue: its due jobs of the head's priority, in claim
 * order, read without a lock, each with whether it is in the node's
 * share. Of the head's priority only: a more urgent job in another
 * share is taken by the whole queue's claim, not left behind this
 * share's less urgent ones (the head: a constant subquery, evaluated
 * once). A window of the head (LIMIT), not the share's jobs wherever
 * they are: a share with nothing due would make that read walk every
 * due job of the queue, on every claim (a node whose consumers took
 * their share first, all consumers on one node). */
const char mq__sql_claim_share[] =
    "SELECT id, " IN_SHARE ","
    " TIMESTAMPDIFF(MICROSECOND, '1000-01-01', available_at)"
    " FROM `{{TABLE}}` FORCE INDEX (claim)"
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?")
    " AND " MQ_SQL_ANY_DUE("{{TABLE}}", "?")
    " AND priority <= (SELECT priority FROM `{{TABLE}}` FORCE INDEX (claim)"
    "  WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?")
    "  ORDER BY priority, available_at, id LIMIT 1)"
    " ORDER BY priority, available_at, id LIMIT ?";

/* The same window after a short one of the queue on this connection
 * (fewer entries than it asked for): the claim index's read, after the
 * due rows of the head's priority, walks every row of that priority due
 * later (jobs scheduled for later, dependents waiting for their parents)
 * before it ends. This one reads the due index (binds the share's five,
 * the queue twice and the window): every due job, of any priority, in
 * due order, as far as the window, each with its priority. Fewer than
 * the window are all of them, and those of the most urgent priority
 * among them, in that order, are the head's window, the read above's
 * answer. As many as the window may not be: the read above then. */
const char mq__sql_claim_share_due[] =
    "SELECT id, " IN_SHARE ","
    " TIMESTAMPDIFF(MICROSECOND, '1000-01-01', available_at), priority"
    " FROM `{{TABLE}}` FORCE INDEX (due)"
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?")
    " ORDER BY available_at, id LIMIT ?";

/* The window: 8 times the head entries in which, the shares evenly
 * spread, the share has the candidates a claim wants (a node whose
 * consumers are ahead of the others' still finds its own jobs there),
 * at most WINDOW_MAX entries, and never fewer than the candidates. A
 * node whose share is empty reads that many entries per claim. */
#define WINDOW_SPREAD 8
#define WINDOW_MAX 4096

/* Another share's jobs at the head that have waited this much longer
 * than the node's own first one are taken first: that share is behind
 * (its node has no consumers, or too few, or its jobs are few: then
 * they would never fill the windows of busy nodes). Jobs pushed
 * together are never that far apart, so evenly served shares are left
 * to their nodes. */
#define SHARE_LAG_US 1000000

/* Some of them, locked together by primary key (each that is still due
 * and that nobody here holds), in claim order. No LIMIT: every row it
 * returns is one it needs, so it keeps no lock it does not need. */
const char mq__sql_claim_ids[] =
    "SELECT id, queue, priority, attempts, payload FROM `{{TABLE}}`"
    " FORCE INDEX (PRIMARY)"
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?") " AND id IN (";
const char mq__sql_claim_ids_tail[] =
    ") ORDER BY priority, available_at, id FOR UPDATE SKIP LOCKED";

/* Spare candidates: the ones other consumers of this node take first. */
#define SHARE_SPARE 8

/* The candidates to size the window for, for a claim of limit jobs. */
static uint32_t
candidates_for(uint32_t limit)
{
	return limit < UINT32_MAX - SHARE_SPARE ? limit + SHARE_SPARE :
	    UINT32_MAX;
}

/* The candidates a claim keeps from its window: this many times those.
 * The other consumers of the node read the same window at the same
 * moment and lock its first candidates; a claim that finds them taken
 * goes on to the next ones of its share, not to the head of the queue,
 * where the other nodes' consumers are taking theirs (each job taken
 * there is a certification conflict). */
#define SHARE_KEEP 4

/* The window's length for a claim that wants want candidates. */
static uint32_t
window_for(const struct mq_conn *c, uint32_t want)
{
	uint64_t spread = (uint64_t)want * (c->shares ? c->shares : 1) *
	    WINDOW_SPREAD;
	uint32_t window = spread < WINDOW_MAX ? (uint32_t)spread : WINDOW_MAX;

	return window < want ? want : window;
}

/* The candidates kept: never more than the window holds. */
static size_t
kept_for(const struct mq_conn *c, uint32_t want)
{
	uint64_t keep = (uint64_t)want * SHARE_KEEP;
	uint32_t window = window_for(c, want);

	return keep < window ? (size_t)keep : window;
}

/* The same, by an UPDATE claim (autocommitted: a deadlock rolls it back
 * whole, and mq__exec_ids runs it again). */
const char mq__sql_claim_update_ids[] =
    "UPDATE `{{TABLE}}` FORCE INDEX (PRIMARY)" CLAIM_SET
    " WHERE " MQ_SQL_CLAIMABLE("{{TABLE}}", "?") " AND id IN (";

/* Binds the share's five parameters at b. */
static void
bind_share(struct mq_conn *c, struct claim *cl, MYSQL_BIND *b)
{
	uint64_t nodes = c->shares ? c->shares : 1;
	uint64_t step = c->autoinc_step ? c->autoinc_step : 1;
	int i;

	cl->share_bind[0] = step;
	cl->share_bind[1] = nodes;
	cl->share_bind[2] = step * nodes;	/* step <= 65,535: no wrap */
	cl->share_bind[3] = nodes;
	cl->share_bind[4] = c->share % nodes;
	for (i = 0; i < 5; i++)
		mq__bind_u64(&b[i], &cl->share_bind[i]);
}

/* Reads the rows of an executed claim SELECT, after those in cl->jobs. */
enum mq_status
mq__claim_fetch(struct mq_conn *c, MYSQL_STMT *st, struct claim *cl)
{
	MYSQL_BIND out[5];
	unsigned long qlen, plen;
	uint64_t id;
	int32_t prio;
	uint32_t attempts;
	char queue[MQ_QUEUE_MAX + 1];
	int r;

	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	out[1].buffer_type = MYSQL_TYPE_STRING;
	out[1].buffer = queue;
	out[1].buffer_length = MQ_QUEUE_MAX;
	out[1].length = &qlen;
	mq__bind_i32(&out[2], &prio);
	mq__bind_u32(&out[3], &attempts);
	out[4].buffer_type = MYSQL_TYPE_BLOB;
	out[4].length = &plen;	/* fetched below, once its size is known */
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot claim");
	if (cl->jobs == NULL &&
	    (cl->jobs = calloc(cl->o->count, sizeof *cl->jobs)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		struct mq_job *j = &cl->jobs[cl->n];
		MYSQL_BIND col;

		if (cl->n == cl->o->count)
			break;
		j->payload = malloc(plen ? plen : 1);
		if (j->payload == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		if (plen) {
			memset(&col, 0, sizeof col);
			col.buffer_type = MYSQL_TYPE_BLOB;
			col.buffer = j->payload;
			col.buffer_length = plen;
			if (mysql_stmt_fetch_column(st, &col, 4, 0) != 0) {
				free(j->payload);	/* not a job to hand out */
				j->payload = NULL;
				return mq__dberr(c, st, "cannot read payload");
			}
		}
		cl->n++;
		j->len = plen;
		j->id = id;
		j->receipt.id = id;
		memcpy(j->receipt.token, cl->token, sizeof cl->token);
		memcpy(j->queue, queue, qlen < MQ_QUEUE_MAX ? qlen : MQ_QUEUE_MAX);
		j->priority = prio;
		j->attempt = attempts;
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot claim");
	return MQ_OK;
}

/* Binds token, lease length and host:pid: the SET part of a claim. */
void
mq__claim_bind_lease(struct mq_conn *c, struct claim *cl, MYSQL_BIND *b,
    unsigned long *len, int64_t *lease)
{
	*lease = cl->o->lease_us;
	mq__bind_str(&b[0], cl->token, &len[0]);
	mq__bind_i64(&b[1], lease);
	mq__bind_str(&b[2], c->leased_by, &len[1]);
}

/* One entry of the head's window. */
struct head_entry {
	uint64_t id;
	int64_t at;		/* due since (µs from 1000-01-01) */
	int32_t priority;	/* read by the due index's window only */
	unsigned char known;	/* at is (a foreign row's may be NULL) */
	unsigned char mine;	/* in the node's share */
};

/* Reads the window's entries into h (*n of them, at most max); with
 * their priority if the statement has it (prio). */
static enum mq_status
fetch_head(struct mq_conn *c, MYSQL_STMT *st, struct head_entry *h,
    size_t max, int prio, size_t *n)
{
	MYSQL_BIND out[4];
	uint64_t id;
	int32_t mine = 0, priority = 0;
	int64_t at = 0;
	mq__bool at_null = 0;
	int r;

	*n = 0;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &id);
	mq__bind_i32(&out[1], &mine);
	mq__bind_i64(&out[2], &at);
	out[2].is_null = &at_null;
	mq__bind_i32(&out[3], &priority);
	if (mysql_stmt_bind_result(st, out) != 0)
		return mq__dberr(c, st, "cannot claim");
	while ((r = mysql_stmt_fetch(st)) == 0 || r == MYSQL_DATA_TRUNCATED) {
		if (*n == max)
			continue;	/* drain; the LIMIT makes this rare */
		h[*n].id = id;
		h[*n].mine = mine != 0;
		h[*n].at = at;
		h[*n].known = !at_null;
		h[*n].priority = prio ? priority : 0;
		(*n)++;
	}
	if (r == 1)
		return mq__dberr(c, st, "cannot claim");
	return MQ_OK;
}

/* One read of the head's window of queue (stmt binds the share's five,
 * the queue k times, then the window) into head, *n entries. */
static enum mq_status
read_window(struct mq_conn *c, struct claim *cl, const char *stmt,
    const char *queue, size_t k, uint32_t *window, struct head_entry *head,
    size_t *n)
{
	MYSQL_BIND in[11];
	unsigned long qlen;
	MYSQL_STMT *st;
	enum mq_status rc;
	size_t i;

	*n = 0;
	if ((st = mq__prepare(c, stmt)) == NULL)
		return c->err.status;
	bind_share(c, cl, &in[0]);
	for (i = 5; i < 5 + k; i++)
		mq__bind_str(&in[i], queue, &qlen);
	mq__bind_u32(&in[5 + k], window);
	rc = mq__execute(c, st, in, "cannot claim");
	if (rc == MQ_OK)
		rc = fetch_head(c, st, head, *window,
		    stmt == mq__sql_claim_share_due, n);
	if (rc == MQ_OK)
		mysql_stmt_free_result(st);
	mq__release(c, st);
	return rc;
}

/* The head's window of queue into head (*n entries): after a short one,
 * by the due index, keeping the entries of its most urgent priority, if
 * that read was short too; else by the claim index. A read by the due
 * index that came back full (a queue whose less urgent due jobs fill
 * it) sends the queue's next ones to the claim index until the queue
 * has nothing due (else each claim would make both reads). */
static enum mq_status
head_window(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t window, struct head_entry *head, size_t *n)
{
	enum mq_status rc;
	size_t i, k;
	int32_t top;

	if (mq__seen_in(c->short_window_seen, queue) &&
	    !mq__seen_in(c->full_window_seen, queue)) {
		rc = read_window(c, cl, mq__sql_claim_share_due, queue, 2,
		    &window, head, n);
		if (rc != MQ_OK || *n < window) {
			for (i = 0, top = INT32_MAX; rc == MQ_OK && i < *n; i++)
				if (head[i].priority < top)
					top = head[i].priority;
			for (i = k = 0; rc == MQ_OK && i < *n; i++)
				if (head[i].priority == top)
					head[k++] = head[i];
			if (rc == MQ_OK)
				*n = k;
			return rc;
		}
		mq__note_in(c->full_window_seen, queue, 1);
	}
	rc = read_window(c, cl, mq__sql_claim_share, queue, 5, &window, head,
	    n);
	if (rc == MQ_OK)
		mq__note_in(c->short_window_seen, queue, *n < window);
	if (rc == MQ_OK && *n == 0)
		mq__note_in(c->full_window_seen, queue, 0);
	return rc;
}

/* The ids of up to kept_for(want) due jobs of queue, in claim order,
 * into ids (*got of them), from the window of the head sized for want:
 * the jobs of other shares that are behind (SHARE_LAG_US), then the
 * node's own. When the window holds nothing of the node's share: its
 * entries from the last one back if it is not full, else none (the
 * claim then takes the whole queue's head). */
static enum mq_status
share_candidates(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t want, uint64_t *ids, size_t *got)
{
	size_t keep = kept_for(c, want);
	uint32_t window = window_for(c, want);
	struct head_entry *head;
	size_t n = 0, i, first;
	enum mq_status rc;

	*got = 0;
	if ((head = calloc(window, sizeof *head)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = head_window(c, cl, queue, window, head, &n);
	for (first = 0; first < n && !head[first].mine; first++)
		;
	if (rc != MQ_OK || first == n) {
		/* Nothing of the share here. A window that is not full holds
		 * the queue's whole head (the end of a drain; a short queue):
		 * its last entries, which the other shares' nodes, each taking
		 * its own from the front, reach last (taken from the front,
		 * each was a certification conflict, every drain's last
		 * second). A full one: the other shares are far behind (their
		 * nodes have no consumers, or too few): the whole queue's
		 * head. */
		if (rc == MQ_OK && n < window)
			for (i = n; i > 0 && *got < keep; i--)
				ids[(*got)++] = head[i - 1].id;
		free(head);
		return rc;
	}
	/* the window's order is the claim's: those behind come first */
	for (i = 0; i < first && *got < keep; i++)
		if (head[i].known && head[first].known &&
		    head[i].at <= head[first].at - SHARE_LAG_US)
			ids[(*got)++] = head[i].id;
	for (i = first; i < n && *got < keep; i++)
		if (head[i].mine)
			ids[(*got)++] = head[i].id;
	free(head);
	return rc;
}

static enum mq_status
fetch_claimed(struct mq_conn *c, MYSQL_STMT *st, void *cl)
{
	return mq__claim_fetch(c, st, cl);
}

/* Galera, SKIP LOCKED: up to limit jobs of the node's share of queue,
 * appended to cl->jobs: the first candidates, as many as are wanted, in
 * one statement; the next ones for those another consumer here took. */
enum mq_status
mq__claim_share_locked(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t limit)
{
	MYSQL_BIND pre[2];
	unsigned long qlen;
	uint32_t want = candidates_for(limit);
	uint64_t *ids;
	size_t got, i, k, goal = cl->n + limit;
	enum mq_status rc;

	if ((ids = calloc(kept_for(c, want), sizeof *ids)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = share_candidates(c, cl, queue, want, ids, &got);
	mq__bind_str(&pre[0], queue, &qlen);
	mq__bind_str(&pre[1], queue, &qlen);
	for (i = 0; rc == MQ_OK && i < got && cl->n < goal; i += k) {
		k = goal - cl->n < got - i ? goal - cl->n : got - i;
		rc = mq__query_ids(c, "cannot claim", mq__sql_claim_ids,
		    mq__sql_claim_ids_tail, pre, 2, ids + i, k, fetch_claimed, cl);
	}
	free(ids);
	return rc;
}

/* Galera, UPDATE claims: the share's first candidates, as many as are
 * wanted, in one statement; the next ones for those another consumer
 * here took; *got of them leased. */
enum mq_status
mq__claim_share_update(struct mq_conn *c, struct claim *cl, const char *queue,
    uint32_t limit, uint64_t *got)
{
	MYSQL_BIND pre[5];
	unsigned long len[2], qlen;
	uint32_t want = candidates_for(limit);
	uint64_t *ids, affected;
	int64_t lease;
	size_t n, i, k;
	enum mq_status rc;

	*got = 0;
	if ((ids = calloc(kept_for(c, want), sizeof *ids)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	rc = share_candidates(c, cl, queue, want, ids, &n);
	mq__claim_bind_lease(c, cl, pre, len, &lease);
	mq__bind_str(&pre[3], queue, &qlen);
	mq__bind_str(&pre[4], queue, &qlen);
	for (i = 0; rc == MQ_OK && i < n && *got < limit; i += k) {
		k = limit - *got < n - i ? limit - *got : n - i;
		rc = mq__exec_ids(c, mq__sql_claim_update_ids, pre, 5, ids + i,
		    k, &affected);
		if (rc == MQ_OK)
			*got += affected;
		if (*got > 0)	/* committed: jobs in hand; the rest of this
				 * claim, here and in pop.c, is tried once */
			c->one_try = 1;
	}
	free(ids);
	return rc;
}
