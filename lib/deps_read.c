/*
 * deps_read.c: a job's dependencies as the operators' readers show them
 * (mq why, mq show): how many parents it has and how many are not done
 * yet, the first of them by id, and its dependents (the writers:
 * deps.c). One statement, bounded: each list reads at most
 * MQ_DEPS_LISTED entries past those it skips; the counts read the job's
 * own range of <table>_deps (index child, or the primary key for its
 * dependents) and its shards in <table>_waits. Read only, no locks.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

#define LISTED_S "10"

/* The state of job x as an operator reads it (mq_state_name's names):
 * in the job table, else archived, else deleted (purged, or deleted by
 * mq archive --purge). The subquery's unqualified columns are its own
 * table's. */
#define STATE_OF(x) \
    "COALESCE((SELECT " MQ_SQL_SHOWN_STATE " FROM `{{TABLE}}` p" \
    " WHERE p.id = " x "), (SELECT 'archived' FROM `{{TABLE}}_archive` a" \
    " WHERE a.id = " x "), 'deleted')"

/* rows: kind, n (a count or an id), met, state. 0: parents; 1: parents
 * not met (the sum of the shards); 2: dependents; 3: the first parents;
 * 4: the first parents not met; 5: the first dependents */
const char mq__sql_job_deps[] =
    "SELECT 0, COUNT(*), NULL, NULL FROM `{{TABLE}}_deps` FORCE INDEX (child)"
    " WHERE child = ?"
    " UNION ALL SELECT 1, COALESCE(SUM(parents), 0), NULL, NULL"
    " FROM `{{TABLE}}_waits` WHERE child = ?"
    " UNION ALL SELECT 2, COUNT(*), NULL, NULL"
    " FROM `{{TABLE}}_deps` FORCE INDEX (PRIMARY) WHERE parent = ?"
    " UNION ALL (SELECT 3, d.parent, d.met, " STATE_OF("d.parent")
    " FROM `{{TABLE}}_deps` d FORCE INDEX (child) WHERE d.child = ?"
    " ORDER BY d.parent LIMIT " LISTED_S ")"
    " UNION ALL (SELECT 4, d.parent, d.met, NULL"
    " FROM `{{TABLE}}_deps` d FORCE INDEX (child) WHERE d.child = ?"
    " AND d.met = 0 ORDER BY d.parent LIMIT " LISTED_S ")"
    " UNION ALL (SELECT 5, d.child, d.met, " STATE_OF("d.child")
    " FROM `{{TABLE}}_deps` d FORCE INDEX (PRIMARY) WHERE d.parent = ?"
    " ORDER BY d.child LIMIT " LISTED_S ")";

enum mq_status
mq_job_deps(struct mq_conn *c, uint64_t id, struct mq_job_deps *d)
{
	MYSQL_BIND in[6], out[4];
	mq__bool null[4];
	unsigned long len = 0;
	int32_t kind = 0, met = 0;
	uint64_t n = 0;
	char state[16];
	MYSQL_STMT *st;
	enum mq_status rc;
	struct mq_dep *e;
	int i, f = 0;

	memset(d, 0, sizeof *d);
	if ((st = mq__prepare(c, mq__sql_job_deps)) == NULL)
		return c->err.status;
	for (i = 0; i < 6; i++)
		mq__bind_u64(&in[i], &id);
	memset(out, 0, sizeof out);
	memset(null, 0, sizeof null);
	mq__bind_i32(&out[0], &kind);
	mq__bind_u64(&out[1], &n);
	out[1].is_null = &null[1];
	mq__bind_i32(&out[2], &met);
	out[2].is_null = &null[2];
	mq__bind_text_out(&out[3], state, sizeof state - 1, &len, &null[3]);
	rc = mq__execute(c, st, in, "cannot read dependencies");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read dependencies");
	while (rc == MQ_OK && ((f = mysql_stmt_fetch(st)) == 0 ||
	    f == MYSQL_DATA_TRUNCATED)) {
		if (null[1])
			n = 0;
		e = NULL;
		switch (kind) {
		case 0:	d->parents = n; break;
		case 1:	d->not_done = n; break;
		case 2:	d->children = n; break;
		case 3:
			if (d->nparent < MQ_DEPS_LISTED)
				e = &d->parent[d->nparent++];
			break;
		case 4:
			if (d->nwaiting < MQ_DEPS_LISTED)
				d->waiting[d->nwaiting++] = n;
			break;
		case 5:
			if (d->nchild < MQ_DEPS_LISTED)
				e = &d->child[d->nchild++];
			break;
		}
		if (e) {
			e->id = n;
			e->met = !null[2] && met != 0;
			len = null[3] ? 0 : len < sizeof e->state - 1 ? len :
			    sizeof e->state - 1;
			memcpy(e->state, state, len);
			e->state[len] = '\0';
		}
	}
	if (rc == MQ_OK && f == 1)
		rc = mq__dberr(c, st, "cannot read dependencies");
	mq__release(c, st);
	/* a row changed by hand could count fewer than it lists */
	if (d->not_done < d->nwaiting)
		d->not_done = d->nwaiting;
	if (d->parents < d->not_done)
		d->parents = d->not_done;
	return rc;
}
