/*
 * test-explain.c: the reads that must stay cheap as the table grows use
 * their index, in order, with no filesort: the claim (a locking read
 * locks what it scans; a filesort over a big table has exhausted lock
 * memory in the field), the requeue-stale and archive picks, the stats
 * reads, the locking read of an ack of several receipts, and the
 * reads of a limited queue's claim (limits.c). Runs the
 * statements lib really uses, on a table with rows of every state,
 * against the private server (MQ_SOCKET, MQ_DATABASE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* limits.c's statements, static there: its text compiled in here (its
 * functions too, so that the linker takes none of its object from the
 * library: each is defined once) */
#include "limits.c"
#include "candidates.c"
/* and schedule.c's (its firing reads) */
#include "schedule.c"

#include "db-test.h"

/* the library's connection: check_again runs the statements on it */
static struct mq_conn *conn;

/* EXPLAINs tmpl with the user variables of using as its parameters; the
 * plan's cells go to plan, '|'-separated. */
static int
explain(MYSQL *db, const char *tmpl, const char *using, char *plan,
    size_t size)
{
	char *sql = mq__expand(tmpl, "explain_jobs", "FOR UPDATE SKIP LOCKED");
	char *esc = malloc(2 * strlen(sql) + 1);
	char *stmt = malloc(2 * strlen(sql) + 64);
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	int rc = -1;
	unsigned i;

	mysql_real_escape_string(db, esc, sql, strlen(sql));
	sprintf(stmt, "PREPARE p FROM 'EXPLAIN %s'", esc);
	*plan = '\0';
	if (mysql_query(db, stmt) == 0) {
		sprintf(stmt, "EXECUTE p%s%s", *using ? " USING " : "", using);
		if (mysql_query(db, stmt) == 0 &&
		    (res = mysql_store_result(db)) != NULL)
			rc = 0;
	}
	while (res && (row = mysql_fetch_row(res)) != NULL)
		for (i = 0; i < mysql_num_fields(res); i++) {
			strncat(plan, row[i] ? row[i] : "NULL",
			    size - strlen(plan) - 2);
			strcat(plan, "|");
		}
	if (rc != 0)
		snprintf(plan, size, "%s", mysql_error(db));
	mysql_free_result(res);
	free(stmt);
	free(esc);
	free(sql);
	return rc;
}

static void check_again(struct mq_conn *c, const char *what,
    const char *tmpl, const char *using);

/* The plan of tmpl into plan, checked to run ("WHAT: EXPLAIN runs") and
 * shown as a comment. */
static void
explained(MYSQL *db, const char *what, const char *tmpl, const char *using,
    char *plan, size_t size)
{
	char label[256];

	snprintf(label, sizeof label, "%s: EXPLAIN runs", what);
	ok(explain(db, tmpl, using, plan, size) == 0, label, plan);
	printf("# %s plan: %s\n", what, plan);
}

static void
check(MYSQL *db, const char *what, const char *tmpl, const char *using,
    const char *index, const char *also)
{
	char plan[4096], label[256], want[80];

	explained(db, what, tmpl, using, plan, sizeof plan);
	snprintf(want, sizeof want, "|%s|", index);
	snprintf(label, sizeof label, "%s uses the %s index", what, index);
	ok(strstr(plan, want) != NULL, label, plan);
	snprintf(label, sizeof label, "%s has no filesort", what);
	ok(strstr(plan, "filesort") == NULL, label, plan);
	snprintf(label, sizeof label, "%s has no temporary table", what);
	ok(strstr(plan, "temporary") == NULL, label, plan);
	if (also) {
		snprintf(label, sizeof label, "%s plan says '%s'", what, also);
		ok(strstr(plan, also) != NULL, label, plan);
	}
	check_again(conn, what, tmpl, using);
}

/* The values of the user variables the checks' using lists name, as the
 * library binds them (typed: a string, an integer, NULL); set in SQL
 * too, below, for the EXPLAINs made by the server's PREPARE. */
static struct var {
	const char *name;
	const char *s;		/* a string, else an integer (or NULL) */
	long long i;
	int null;
} vars[] = {
	{ "@q", "a", 0, 0 }, { "@s", "s", 0, 0 }, { "@n", NULL, 5, 0 },
	{ "@null", NULL, 0, 1 }, { "@done", "done", 0, 0 },
	{ "@age", NULL, 1000000, 0 }, { "@id1", NULL, 3, 0 },
	{ "@id2", NULL, 5, 0 }, { "@zero", NULL, 0, 0 },
	{ "@three", NULL, 3, 0 }, { "@nine", NULL, 9, 0 },
	{ "@tok", "0123456789abcdef0123456789abcdef", 0, 0 },
	{ "@minp", NULL, -32769, 0 }, { "@pat", "%x%", 0, 0 },
	{ "@lq", "lim", 0, 0 }, { "@key", "hot", 0, 0 },
	{ "@one", NULL, 1, 0 }, { "@lid", NULL, 0, 0 },
	{ "@key2", "l2", 0, 0 }, { "@empty", "", 0, 0 },
};

/* Statements that read the table through other indexes than most
 * checks use: run between two executions of a statement, they are what
 * made MariaDB plan a prepared statement's later executions worse than
 * its first (stats' queue list read the whole claim index). */
static const char *const others[] = {
	"SELECT COUNT(*) FROM explain_jobs FORCE INDEX (recurring)"
	" WHERE every_us IS NOT NULL",
	"SELECT COUNT(*) FROM explain_jobs FORCE INDEX (lease)"
	" WHERE state = 'leased' AND leased_until < NOW()",
};

/* Binds using's variables to in (at most 16); their count, -1 if one is
 * unknown. */
static int
bind_using(const char *using, MYSQL_BIND *in, int64_t *iv,
    unsigned long *len)
{
	char name[32];
	const char *p = using;
	int np = 0, k;
	size_t i;

	while (*p && np < 16) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		for (k = 0; *p && *p != ',' && *p != ' ' && k < 31; k++)
			name[k] = *p++;
		name[k] = '\0';
		for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
			if (strcmp(vars[i].name, name) == 0)
				break;
		if (i == sizeof vars / sizeof vars[0])
			return -1;
		if (vars[i].null) {
			mq__bind_null(&in[np]);
		} else if (vars[i].s) {
			mq__bind_str(&in[np], vars[i].s, &len[np]);
		} else {
			iv[np] = vars[i].i;
			mq__bind_i64(&in[np], &iv[np]);
		}
		np++;
	}
	return np;
}

/* The plan of one execution of EXPLAIN tmpl on the library's own path
 * (mq__prepare, mq__execute with typed values, mq__release), cells
 * '|'-separated, the row estimates left out (they are estimates). With
 * *held, the same handle is kept for the next call (executed again
 * without being released). 0 on success. */
static int
lib_plan(struct mq_conn *c, const char *tmpl, const char *using,
    MYSQL_STMT **held, char *plan, size_t size)
{
	MYSQL_BIND in[16], out[10];
	int64_t iv[16];
	unsigned long len[16], olen[10];
	char cell[10][512];
	mq__bool isnull[10];
	MYSQL_STMT *st = held ? *held : NULL;
	int np, r, i;
	char *sql;

	*plan = '\0';
	if ((np = bind_using(using, in, iv, len)) < 0) {
		snprintf(plan, size, "unknown variable in '%s'", using);
		return -1;
	}
	if (st == NULL) {
		/* one text per statement, kept: the library's statement
		 * cache is keyed by its address, as by a template's */
		static char *texts[64];
		size_t k;

		for (k = 0; k < 64 && texts[k] &&
		    strcmp(texts[k] + 8, tmpl) != 0; k++)
			;
		if (k == 64)
			return -1;
		if (texts[k] == NULL) {
			if ((texts[k] = malloc(strlen(tmpl) + 9)) == NULL)
				return -1;
			sprintf(texts[k], "EXPLAIN %s", tmpl);
		}
		sql = texts[k];
		if ((st = mq__prepare_keyed(c, sql, 0, sql)) == NULL) {
			snprintf(plan, size, "%s", c->err.msg);
			return -1;
		}
	}
	if (held)
		*held = st;
	if (mq__execute(c, st, np ? in : NULL, "explain") != MQ_OK) {
		snprintf(plan, size, "%s", c->err.msg);
		if (!held)
			mq__release(c, st);
		return -1;
	}
	memset(out, 0, sizeof out);
	for (i = 0; i < 10; i++) {
		out[i].buffer_type = MYSQL_TYPE_STRING;
		out[i].buffer = cell[i];
		out[i].buffer_length = sizeof cell[i] - 1;
		out[i].length = &olen[i];
		out[i].is_null = &isnull[i];
	}
	r = mysql_stmt_field_count(st) == 10 &&
	    mysql_stmt_bind_result(st, out) == 0 ? 0 : 1;
	while (r == 0 && ((r = mysql_stmt_fetch(st)) == 0 ||
	    r == MYSQL_DATA_TRUNCATED)) {
		r = 0;
		for (i = 0; i < 10; i++) {
			cell[i][olen[i] < sizeof cell[i] - 1 ? olen[i] :
			    sizeof cell[i] - 1] = '\0';
			strncat(plan, i == 8 ? "-" : isnull[i] ? "NULL" :
			    cell[i], size - strlen(plan) - 2);
			strcat(plan, "|");
		}
	}
	if (held)
		mysql_stmt_free_result(st);
	else
		mq__release(c, st);
	return r == MYSQL_NO_DATA ? 0 : -1;
}

/* The plan lib gets for tmpl is the same on each execution of it on one
 * connection: its first, then after each statement of others[] (a
 * cached handle, planned worse by the server, failed this), and for one
 * handle executed again without being released (as a loop over queues
 * does). */
static void
check_again(struct mq_conn *c, const char *what, const char *tmpl,
    const char *using)
{
	char first[4096], again[4096], label[320];
	MYSQL_STMT *held = NULL;
	size_t i;
	int r;

	snprintf(label, sizeof label, "%s: lib's EXPLAIN runs", what);
	ok(lib_plan(c, tmpl, using, NULL, first, sizeof first) == 0, label,
	    first);
	printf("# %s lib plan: %s\n", what, first);
	for (i = 0; i < sizeof others / sizeof others[0]; i++) {
		mysql_free_result(mysql_store_result(c->db));
		if (mysql_query(c->db, others[i]) == 0)
			mysql_free_result(mysql_store_result(c->db));
		r = lib_plan(c, tmpl, using, NULL, again, sizeof again);
		snprintf(label, sizeof label, "%s: execution %zu after a read "
		    "of another index has the first's plan", what, i + 2);
		ok(r == 0 && strcmp(first, again) == 0, label, again);
	}
	r = lib_plan(c, tmpl, using, &held, again, sizeof again);
	if (r == 0 && mysql_query(c->db, others[0]) == 0) {
		mysql_free_result(mysql_store_result(c->db));
		r = lib_plan(c, tmpl, using, &held, again, sizeof again);
	}
	snprintf(label, sizeof label, "%s: one handle executed again has "
	    "the first's plan", what);
	ok(r == 0 && strcmp(first, again) == 0, label, again);
	if (held)
		mq__release(c, held);
}

/* The sum of the session's status counters named in the list (SQL
 * text: a parenthesized list of names); -1 if it cannot be read. */
static long long
status_sum(MYSQL *db, const char *names)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	char sql[512];
	long long sum = 0;

	snprintf(sql, sizeof sql, "SHOW SESSION STATUS WHERE Variable_name IN "
	    "%s", names);
	if (mysql_query(db, sql) != 0 || (res = mysql_store_result(db)) == NULL)
		return -1;
	while ((row = mysql_fetch_row(res)) != NULL)
		sum += atoll(row[1]);
	mysql_free_result(res);
	return sum;
}

/* The index entries a call reads (the session's handler counters; the
 * SHOW itself reads none of the table's). */
static long long
reads(MYSQL *db)
{
	return status_sum(db, "('Handler_read_first', 'Handler_read_key',"
	    " 'Handler_read_last', 'Handler_read_next', 'Handler_read_prev',"
	    " 'Handler_read_rnd', 'Handler_read_rnd_next')");
}

/* A read that may sort what it reads, but reads only the entries of the
 * claim or due index of its queue and states (ref or range access). */
static void
check_range(MYSQL *db, const char *what, const char *tmpl, const char *using)
{
	char plan[8192], label[256];

	explained(db, what, tmpl, using, plan, sizeof plan);
	snprintf(label, sizeof label, "%s reads the claim or due index by "
	    "queue and state (ref or range)", what);
	ok((strstr(plan, "|range|") || strstr(plan, "|ref|")) &&
	    (strstr(plan, "|claim|") || strstr(plan, "|due|")), label, plan);
	snprintf(label, sizeof label, "%s has no temporary table", what);
	ok(strstr(plan, "temporary") == NULL, label, plan);
	check_again(conn, what, tmpl, using);
}

/* A read of the leased jobs only: a range (or ref) of the lease index
 * (state, leased_until); it may sort them by queue to group them (a
 * filesort of that range's rows, the jobs running now, not the
 * table's). */
static void
check_lease(MYSQL *db, const char *what, const char *tmpl, const char *using)
{
	char plan[4096], label[256];

	explained(db, what, tmpl, using, plan, sizeof plan);
	snprintf(label, sizeof label, "%s reads the lease index by state "
	    "(ref or range)", what);
	ok((strstr(plan, "|range|") || strstr(plan, "|ref|")) &&
	    strstr(plan, "|lease|") != NULL, label, plan);
	check_again(conn, what, tmpl, using);
}

/* A read of limits.c: each table it reads, by an index range (or a
 * lookup: ref, eq_ref, const), never a scan (ALL, index), no filesort,
 * no temporary table; the index named first among them. */
static void
check_limits(MYSQL *db, const char *what, const char *tmpl,
    const char *using, const char *index)
{
	char plan[4096], label[256], want[80];

	explained(db, what, tmpl, using, plan, sizeof plan);
	snprintf(want, sizeof want, "|%s|", index);
	snprintf(label, sizeof label, "%s uses the %s index", what, index);
	ok(strstr(plan, want) != NULL, label, plan);
	snprintf(label, sizeof label, "%s reads index ranges or keys only "
	    "(no ALL, no index scan)", what);
	ok(strstr(plan, "|ALL|") == NULL && strstr(plan, "|index|") == NULL &&
	    (strstr(plan, "|range|") || strstr(plan, "|ref|") ||
	    strstr(plan, "|const|") || strstr(plan, "|eq_ref|")), label, plan);
	snprintf(label, sizeof label, "%s has no filesort", what);
	ok(strstr(plan, "filesort") == NULL, label, plan);
	snprintf(label, sizeof label, "%s has no temporary table", what);
	ok(strstr(plan, "temporary") == NULL, label, plan);
	check_again(conn, what, tmpl, using);
}

/* A read of held.c's count of the due jobs of full keys: the keys
 * first (a derived table, and a union of two key sets, over the few
 * keys that are full), each from an index range, then each key's due
 * jobs by a lookup of the index held: every table it reads (not the
 * derived ones, <derivedN> and <unionN,M>) by a range or lookup, the
 * indexes named, no filesort. */
static void
check_held(MYSQL *db, const char *what, const char *tmpl, const char *using,
    const char *const *indexes)
{
	char plan[4096], label[256], want[80], bad[512] = "";
	char *cells[400], *p;
	size_t nc = 0, i;

	explained(db, what, tmpl, using, plan, sizeof plan);
	for (i = 0; indexes[i]; i++) {
		snprintf(want, sizeof want, "|%s|", indexes[i]);
		snprintf(label, sizeof label, "%s uses the %s index", what,
		    indexes[i]);
		ok(strstr(plan, want) != NULL, label, plan);
	}
	snprintf(label, sizeof label, "%s has no filesort", what);
	ok(strstr(plan, "filesort") == NULL, label, plan);
	{
		char copy[4096];

		snprintf(copy, sizeof copy, "%s", plan);
		for (p = copy; nc < 400 && (cells[nc] = p) != NULL; nc++) {
			if ((p = strchr(p, '|')) == NULL)
				break;
			*p++ = '\0';
		}
		/* 10 cells a row: id, select_type, table, type, ... */
		for (i = 0; i + 3 < nc; i += 10)
			if (cells[i + 2][0] != '<' &&
			    strcmp(cells[i + 3], "range") != 0 &&
			    strcmp(cells[i + 3], "ref") != 0 &&
			    strcmp(cells[i + 3], "eq_ref") != 0 &&
			    strcmp(cells[i + 3], "const") != 0)
				snprintf(bad + strlen(bad), sizeof bad -
				    strlen(bad), "%s by %s; ", cells[i + 2],
				    cells[i + 3]);
	}
	snprintf(label, sizeof label, "%s reads its tables by index ranges "
	    "or keys only", what);
	ok(nc >= 20 && bad[0] == '\0', label, bad[0] ? bad : plan);
	check_again(conn, what, tmpl, using);
}

/* The session's count of statements prepared. */
static long long
prepares(MYSQL *db)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	long long count = -1;

	if (mysql_query(db, "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'") != 0 ||
	    (res = mysql_store_result(db)) == NULL)
		return -1;
	if ((row = mysql_fetch_row(res)) != NULL && row[1])
		count = atoll(row[1]);
	mysql_free_result(res);
	return count;
}

/* A read whose run failed once prepared (a lock wait timeout here; a
 * KILL QUERY or a deadlock alike) is prepared again before it runs
 * again, as after a run that succeeded: the server plans the next run
 * as a second one all the same (a retry on the same handle). */
static void
check_failed_run(struct mq_conn *c)
{
	static const char tmpl[] =
	    "SELECT id FROM `{{TABLE}}` WHERE id = ? FOR UPDATE";
	struct mq_conn *holder = test_connect();
	MYSQL_STMT *st = NULL;
	MYSQL_BIND in[1];
	int64_t id = 1;
	long long before = -1, after = -2;
	int timed_out = 0, again = 0;

	ok(holder && mysql_query(holder->db, "START TRANSACTION") == 0 &&
	    mysql_query(holder->db, "SELECT id FROM explain_jobs WHERE "
	    "id = 1 FOR UPDATE") == 0, "failed run: a row held locked",
	    holder ? mysql_error(holder->db) : "no second connection");
	if (holder)
		mysql_free_result(mysql_store_result(holder->db));
	if (mysql_query(c->db, "SET SESSION innodb_lock_wait_timeout = 1")
	    == 0 && (st = mq__prepare_once(c, tmpl)) != NULL) {
		mq__bind_i64(&in[0], &id);
		timed_out = mq__execute(c, st, in, "read") != MQ_OK &&
		    c->err.db_errno == 1205;
		if (holder)
			(void)mysql_query(holder->db, "ROLLBACK");
		before = prepares(c->db);
		again = mq__execute(c, st, in, "read") == MQ_OK;
		mysql_stmt_free_result(st);
		after = prepares(c->db);
		mq__release(c, st);
	}
	ok(timed_out && again && after == before + 1, "a read whose run failed "
	    "(1205) is prepared again before its next run",
	    c->err.msg);
	printf("# prepares before the second run %lld, after %lld\n", before,
	    after);
	mq_close(holder);
}

/* Rows of queue into the job table: VALUES in which Q names it. */
static int
insert_due(MYSQL *db, const char *queue, const char *rows)
{
	char sql[1024], q[80];
	const char *p;
	size_t k = 0;

	snprintf(q, sizeof q, "'%s'", queue);
	k = (size_t)snprintf(sql, sizeof sql, "INSERT INTO explain_jobs "
	    "(queue, priority, payload, available_at) VALUES ");
	for (p = rows; *p && k + strlen(q) + 1 < sizeof sql; p++) {
		if (*p == 'Q') {
			k += (size_t)snprintf(sql + k, sizeof sql - k, "%s", q);
			continue;
		}
		sql[k++] = *p;
	}
	sql[k] = '\0';
	return mysql_query(db, sql);
}

/* The index entries a call looks at: those it reads, and those the
 * engine passes over by the pushed index condition, which the handler's
 * read counters do not see. */
static long long
looked_at(MYSQL *db)
{
	long long r = reads(db), icp = status_sum(db,
	    "('Handler_icp_attempts')");

	return r < 0 || icp < 0 ? -1 : r + icp;
}

/* A claim of up to count jobs of queue: their payloads in got, in the
 * order handed out; returns the index entries it looked at, -1 if it
 * failed. */
static long long
claim_order(struct mq_conn *c, const char *queue, enum mq_claim how,
    unsigned count, char *got, size_t size)
{
	struct mq_pop_opts o = { queue, count, 0, 60000000, how };
	struct mq_job *jobs = NULL;
	size_t njobs = 0, i, len = 0;
	long long r0 = looked_at(c->db), r;
	enum mq_status st;

	got[0] = '\0';
	if ((st = mq_pop(c, &o, &jobs, &njobs)) != MQ_OK && st != MQ_EMPTY)
		return -1;
	r = looked_at(c->db) - r0;
	for (i = 0; i < njobs && len + 8 < size; i++)
		len += (size_t)snprintf(got + len, size - len, "%s%.*s",
		    i ? "," : "", (int)jobs[i].len, (const char *)jobs[i].payload);
	mq_jobs_free(jobs, njobs);
	return r;
}

/* Claims that find fewer due jobs than they have room for (a consumer
 * keeping up with its queue) in a queue holding 2,000 jobs due later:
 * after the first, each asks the due index which priorities have due
 * jobs and reads only those in the claim index (pop.c,
 * mq__sql_due_priorities), not the claim index's walk over the 2,000,
 * and hands them out in claim order; one that fills its room is the
 * claim index's, most urgent first. Before: each claim looked at about
 * 2,000 entries. */
static void
check_short_claims(struct mq_conn *c, const char *queue, enum mq_claim how,
    const char *name)
{
	char got[512], detail[700], sql[512], label[200];
	long long first, r;

#define LABEL(what) (snprintf(label, sizeof label, "short claims (%s): %s", \
	name, what), label)
	snprintf(sql, sizeof sql, "INSERT INTO explain_jobs (queue, priority, "
	    "payload, available_at) SELECT '%s', seq %% 3, 'later', "
	    "UTC_TIMESTAMP(6) + INTERVAL seq MINUTE FROM seq_1_to_2000", queue);
	ok(mysql_query(c->db, sql) == 0 &&
	    insert_due(c->db, queue, "(Q, 5, 'a5', UTC_TIMESTAMP(6) - INTERVAL 3 "
	    "SECOND), (Q, 1, 'b1', UTC_TIMESTAMP(6) - INTERVAL 2 SECOND), "
	    "(Q, 1, 'c1', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)") == 0,
	    LABEL("2,000 jobs due later, 3 due"), mysql_error(c->db));
	first = claim_order(c, queue, how, 10, got, sizeof got);
	ok(first >= 0 && strcmp(got, "b1,c1,a5") == 0,
	    LABEL("the first, by the claim index, in claim order"), got);
	ok(insert_due(c->db, queue, "(Q, 5, 'e5', UTC_TIMESTAMP(6) - INTERVAL 3 "
	    "SECOND), (Q, 0, 'f0', UTC_TIMESTAMP(6) - INTERVAL 2 SECOND), "
	    "(Q, 1, 'g1', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)") == 0,
	    LABEL("3 more due"), mysql_error(c->db));
	r = claim_order(c, queue, how, 10, got, sizeof got);
	snprintf(detail, sizeof detail, "got %s; entries looked at: %lld, "
	    "by the first claim %lld", got, r, first);
	ok(r >= 0 && strcmp(got, "f0,g1,e5") == 0,
	    LABEL("the next, in claim order (priority first)"), detail);
	ok(r >= 0 && r < 100, LABEL("the next reads the due jobs, not the "
	    "2,000 due later"), detail);
	printf("# short claims (%s): %s\n", name, detail);
	/* more due than its room: the most urgent one, due last, first */
	snprintf(sql, sizeof sql, "INSERT INTO explain_jobs (queue, priority, "
	    "payload, available_at) SELECT '%s', 3, CONCAT('m', seq), "
	    "UTC_TIMESTAMP(6) - INTERVAL 100 - seq SECOND "
	    "FROM seq_1_to_12", queue);
	ok(mysql_query(c->db, sql) == 0 &&
	    insert_due(c->db, queue, "(Q, 0, 'z0', UTC_TIMESTAMP(6))") == 0,
	    LABEL("13 due, the most urgent due last"), mysql_error(c->db));
	r = claim_order(c, queue, how, 4, got, sizeof got);
	ok(r >= 0 && strcmp(got, "z0,m1,m2,m3") == 0,
	    LABEL("a claim its room limits takes the most urgent first"), got);
	r = claim_order(c, queue, how, 100, got, sizeof got);
	ok(r >= 0 && strcmp(got, "m4,m5,m6,m7,m8,m9,m10,m11,m12") == 0,
	    LABEL("then the rest, in claim order"), got);
	r = claim_order(c, queue, how, 100, got, sizeof got);
	snprintf(detail, sizeof detail, "got '%s'; entries looked at: %lld",
	    got, r);
	ok(r >= 0 && got[0] == '\0' && r < 100,
	    LABEL("then none, reading the due index only"), detail);
	if (how != MQ_CLAIM_UPDATE) {
		/* a claim of one whose due job another claim holds: it
		 * skips it, and reads no further than the due jobs (the
		 * claim index's read went on over the 2,000) */
		struct mq_conn *other = test_connect();
		char lock[256];

		snprintf(lock, sizeof lock, "SELECT id FROM explain_jobs WHERE "
		    "queue = '%s' AND payload = 'held' FOR UPDATE", queue);
		ok(other != NULL && insert_due(c->db, queue,
		    "(Q, 0, 'held', UTC_TIMESTAMP(6))") == 0 &&
		    mysql_query(other->db, "BEGIN") == 0 &&
		    mysql_query(other->db, lock) == 0,
		    LABEL("a due job, locked by another session"),
		    other ? mysql_error(other->db) : "no connection");
		if (other)
			mysql_free_result(mysql_store_result(other->db));
		r = claim_order(c, queue, how, 1, got, sizeof got);
		snprintf(detail, sizeof detail, "got '%s'; entries looked at: "
		    "%lld", got, r);
		ok(r >= 0 && got[0] == '\0' && r < 100,
		    LABEL("a claim of one passes over the held job, reading "
		    "the due jobs only"), detail);
		mq_close(other);
	}
#undef LABEL
}

static long long
count_of(MYSQL *db, const char *sql)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	long long v = -1;

	if (mysql_query(db, sql) == 0 && (res = mysql_store_result(db))) {
		if ((row = mysql_fetch_row(res)) != NULL && row[0])
			v = atoll(row[0]);
		mysql_free_result(res);
	}
	return v;
}

/* A queue at a rate of 20,000 an hour, its gate holding 20,000 ticks
 * (19,000 out of the window, 1,000 in it): a claim reads as many ticks
 * as it may take jobs, not all of them (before: each claim read the
 * 20,000). Then the rate lowered to 10 a second: the ticks past 10 go
 * once out of the window, and the claims read few again. */
static void
check_rate_ticks(struct mq_conn *c)
{
	char got[512], detail[700];
	long long r, left;

	ok(mysql_query(c->db, "INSERT INTO explain_jobs_queues (queue, rate,"
	    " rate_us) VALUES ('rt', 20000, 3600000000)") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs_ticks (queue, "
	    "gate_key, n, at) SELECT 'rt', '', seq, IF(seq < 19000, "
	    "UTC_TIMESTAMP(6) - INTERVAL 2 HOUR + INTERVAL seq MICROSECOND, "
	    "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND + INTERVAL seq MICROSECOND)"
	    " FROM seq_0_to_19999") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs (queue, payload) "
	    "SELECT 'rt', CONCAT('r', seq) FROM seq_1_to_20") == 0,
	    "rate ticks: 20,000 ticks, 19,000 of them out of the window",
	    mysql_error(c->db));
	r = claim_order(c, "rt", MQ_CLAIM_AUTO, 2, got, sizeof got);
	snprintf(detail, sizeof detail, "got '%s'; entries looked at: %lld",
	    got, r);
	printf("# rate ticks: %s\n", detail);
	ok(r >= 0 && strcmp(got, "r1,r2") == 0 && r < 1000,
	    "rate ticks: a claim of 2 reads a few of the gate's 20,000 "
	    "ticks", detail);
	ok(count_of(c->db, "SELECT COUNT(*) FROM explain_jobs_ticks WHERE "
	    "queue = 'rt' AND at > UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE") ==
	    1002, "rate ticks: its 2 ticks written over 2 out of the window",
	    mysql_error(c->db));
	/* lowered to 10 a second: 1,002 claims in the last second hold
	 * it back; the ticks past 10 out of the window go at once, the
	 * others once they are */
	ok(mysql_query(c->db, "UPDATE explain_jobs_queues SET rate = 10, "
	    "rate_us = 1000000 WHERE queue = 'rt'") == 0 &&
	    mysql_query(c->db, "UPDATE explain_jobs_ticks SET at = "
	    "UTC_TIMESTAMP(6) WHERE queue = 'rt' AND at > UTC_TIMESTAMP(6) - "
	    "INTERVAL 1 MINUTE") == 0, "rate ticks: the rate lowered to 10/s",
	    mysql_error(c->db));
	r = claim_order(c, "rt", MQ_CLAIM_AUTO, 2, got, sizeof got);
	left = count_of(c->db, "SELECT COUNT(*) FROM explain_jobs_ticks "
	    "WHERE queue = 'rt'");
	snprintf(detail, sizeof detail, "got '%s'; %lld ticks left", got,
	    left);
	ok(r >= 0 && got[0] == '\0' && left == 20000,
	    "rate ticks: held back by the 1,002 in the window, every tick "
	    "kept while one past 10 is in it", detail);
	ok(mysql_query(c->db, "UPDATE explain_jobs_ticks SET at = "
	    "UTC_TIMESTAMP(6) - INTERVAL 2 SECOND WHERE queue = 'rt'") == 0,
	    "rate ticks: a second later", mysql_error(c->db));
	r = claim_order(c, "rt", MQ_CLAIM_AUTO, 2, got, sizeof got);
	left = count_of(c->db, "SELECT COUNT(*) FROM explain_jobs_ticks "
	    "WHERE queue = 'rt'");
	snprintf(detail, sizeof detail, "got '%s'; %lld ticks left", got,
	    left);
	ok(r >= 0 && strcmp(got, "r3,r4") == 0 && left == 10,
	    "rate ticks: claims go on, 10 ticks left", detail);
	r = claim_order(c, "rt", MQ_CLAIM_AUTO, 2, got, sizeof got);
	snprintf(detail, sizeof detail, "got '%s'; entries looked at: %lld",
	    got, r);
	ok(r >= 0 && strcmp(got, "r5,r6") == 0 && r < 200,
	    "rate ticks: and read a few of them again", detail);
	printf("# rate ticks, lowered: %s\n", detail);
	/* raised again: the 10 left are numbered 0 to 9, no hole (one
	 * would count as a tick for ever: deleted one by one as they
	 * left the window, a gate of 10 let 8 through) */
	ok(mysql_query(c->db, "UPDATE explain_jobs_queues SET rate = 20 "
	    "WHERE queue = 'rt'") == 0 && mysql_query(c->db, "UPDATE "
	    "explain_jobs_ticks SET at = UTC_TIMESTAMP(6) - INTERVAL 2 SECOND "
	    "WHERE queue = 'rt'") == 0 && count_of(c->db, "SELECT MAX(n) + 1 "
	    "- COUNT(*) FROM explain_jobs_ticks WHERE queue = 'rt'") == 0,
	    "rate ticks: raised to 20/s, the ticks numbered with no hole",
	    mysql_error(c->db));
	r = claim_order(c, "rt", MQ_CLAIM_AUTO, 20, got, sizeof got);
	snprintf(detail, sizeof detail, "got '%s'", got);
	ok(r >= 0 && strcmp(got, "r7,r8,r9,r10,r11,r12,r13,r14,r15,r16,r17,"
	    "r18,r19,r20") == 0, "rate ticks: the 14 left go through at once",
	    detail);
}

int
main(void)
{
	struct mq_init_report rep;
	struct mq_conn *c;
	char label[256];

	if ((c = test_connect()) == NULL)
		return 1;
	conn = c;
	ok(mq_init(c, "explain_jobs", &rep) == MQ_OK, "init", c->err.msg);
	/* rows in every state and several queues, so the optimizer has a
	 * real choice */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs (queue, state, "
	    "payload, available_at, leased_until, lease_token, finished_at) "
	    "SELECT "
	    "ELT(1 + seq % 3, 'a', 'b', 'c'), "
	    "ELT(1 + seq % 4, 'ready', 'leased', 'done', 'dead'), 'x', "
	    "NOW(6) - INTERVAL seq SECOND, "
	    "IF(seq % 4 = 1, NOW(6) - INTERVAL seq % 100 SECOND, NULL), "
	    "IF(seq % 4 = 1, REPEAT('a', 32), NULL), "
	    "IF(seq % 4 >= 2, NOW(6) - INTERVAL seq SECOND, NULL) "
	    "FROM seq_1_to_20000") == 0 &&
	    mysql_query(c->db, "ANALYZE TABLE explain_jobs") == 0,
	    "fill the table", mysql_error(c->db));
	mysql_free_result(mysql_store_result(c->db));
	ok(mysql_query(c->db, "INSERT INTO explain_jobs (queue, payload, "
	    "available_at) SELECT 's', 'x', UTC_TIMESTAMP(6) + INTERVAL seq MINUTE "
	    "FROM seq_1_to_2000") == 0, "schedule jobs for later",
	    mysql_error(c->db));
	/* dependents waiting for their parents (deps.c): due at the end
	 * of time, with their edges; and the parents' other dependents */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs (queue, payload, "
	    "available_at, parent_shards, if_parent_dies) SELECT 'a', 'x', "
	    "'9999-12-31 23:59:59.999999', 1, 'cancel' "
	    "FROM seq_1_to_500") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs_deps (parent, child, "
	    "on_death) SELECT 1 + seq % 40, id, 'cancel' FROM explain_jobs "
	    "JOIN seq_0_to_3 WHERE parent_shards IS NOT NULL") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs_waits (child, shard, "
	    "parents) SELECT id, 1, 4 FROM explain_jobs "
	    "WHERE parent_shards IS NOT NULL") == 0 &&
	    mysql_query(c->db, "ANALYZE TABLE explain_jobs, explain_jobs_deps, "
	    "explain_jobs_waits") == 0, "waiting jobs and their parents",
	    mysql_error(c->db));
	mysql_free_result(mysql_store_result(c->db));
	/* the history of many jobs, several rows each */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs_history (job_id, "
	    "event, state, attempt, worker, error) SELECT 1 + seq % 5000, "
	    "'failed', 'ready', 1 + seq DIV 5000, 'h:1', 'e' "
	    "FROM seq_1_to_20000") == 0 &&
	    mysql_query(c->db, "ANALYZE TABLE explain_jobs_history") == 0,
	    "fill the history", mysql_error(c->db));
	mysql_free_result(mysql_store_result(c->db));
	ok(mysql_query(c->db, "SET @q = 'a', @s = 's', @n = 5, @null = NULL, "
	    "@done = 'done', @age = 1000000, @id1 = 3, @id2 = 5, @zero = 0, "
	    "@three = 3, @nine = 9, "
	    "@tok = '0123456789abcdef0123456789abcdef', @minp = -32769, "
	    "@pat = '%x%'") == 0, "set parameters",
	    mysql_error(c->db));

	check(c->db, "claim", mq__sql_claim_select, "@q, @q, @q, @n", "claim",
	    NULL);
	/* after a short claim: the priorities of the due jobs, by the due
	 * index, as far as the jobs due later; then the claim index, a range
	 * a priority, ending at now (check_short_claims) */
	check(c->db, "due priorities after a short claim",
	    mq__sql_due_priorities, "@q, @q, @n", "due", NULL);
	{
		char sql[2048], plan[4096];

		snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_claim_priorities,
		    mq__sql_claim_priorities_tail);
		check(c->db, "claim of due priorities", sql,
		    "@q, @q, @zero, @three, @n", "claim", NULL);
		explained(c->db, "claim of due priorities", sql,
		    "@q, @q, @zero, @three, @n", plan, sizeof plan);
		/* the key's four parts: queue, state, priority, due time */
		ok(strstr(plan, "|range|claim|claim|77|") != NULL,
		    "claim of due priorities: a range of each priority, as far "
		    "as now", plan);
		snprintf(sql, sizeof sql, "%s?, ?%s",
		    mq__sql_claim_update_priorities,
		    mq__sql_claim_update_priorities_tail);
		check(c->db, "UPDATE claim of due priorities", sql,
		    "@tok, @age, @s, @q, @q, @zero, @three, @n", "claim", NULL);
		explained(c->db, "UPDATE claim of due priorities", sql,
		    "@tok, @age, @s, @q, @q, @zero, @three, @n", plan,
		    sizeof plan);
		ok(strstr(plan, "|range|claim|claim|77|") != NULL,
		    "UPDATE claim of due priorities: a range of each priority, "
		    "as far as now", plan);
	}
	/* a queue of jobs scheduled for later: the due index says so at
	 * once, and the claim index is not read (it would walk them all) */
	/* Galera: a node's share, read without locks, in index order */
	check(c->db, "claim of a node's share", mq__sql_claim_share,
	    "@three, @three, @nine, @three, @zero, @q, @q, @q, @q, @q, @n",
	    "claim", NULL);
	/* after a short window: the due index, every due job as far as
	 * the window (claim.c) */
	check(c->db, "claim of a node's share after a short one",
	    mq__sql_claim_share_due,
	    "@three, @three, @nine, @three, @zero, @q, @q, @n", "due", NULL);
	{
		/* then the share's candidates, locked (or leased) by
		 * primary key: the listed rows alone (a sort of those) */
		char sql[1024], plan[4096];
		snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_claim_ids,
		    mq__sql_claim_ids_tail);
		ok(explain(c->db, sql, "@q, @q, @id1, @id2", plan,
		    sizeof plan) == 0, "share claim by id: EXPLAIN runs", plan);
		printf("# share claim by id plan: %s\n", plan);
		ok(strstr(plan, "|explain_jobs|range|PRIMARY|PRIMARY|") &&
		    !strstr(plan, "|claim|"), "share claim by id reads a range "
		    "of the primary key", plan);
		check_again(conn, "share claim by id", sql,
		    "@q, @q, @id1, @id2");
		snprintf(sql, sizeof sql, "%s?, ?)", mq__sql_claim_update_ids);
		ok(explain(c->db, sql, "@tok, @age, @s, @q, @q, @id1, @id2", plan,
		    sizeof plan) == 0, "share UPDATE claim by id: EXPLAIN runs",
		    plan);
		printf("# share UPDATE claim by id plan: %s\n", plan);
		ok(strstr(plan, "|explain_jobs|range|PRIMARY|PRIMARY|") &&
		    !strstr(plan, "|claim|"), "share UPDATE claim by id reads a "
		    "range of the primary key", plan);
	}
	check(c->db, "claim with nothing due", mq__sql_claim_select,
	    "@s, @s, @s, @n", "due", "Impossible WHERE");
	check(c->db, "requeue-stale (all queues)", mq__sql_requeue_pick,
	    "@null, @null, @n", "lease", NULL);
	check(c->db, "requeue-stale (one queue)", mq__sql_requeue_pick,
	    "@q, @q, @n", "lease", NULL);
	check(c->db, "archive", mq__sql_archive_pick, "@done, @age, @n",
	    "finished", NULL);
	{
		/* then the picked ids awaited by dependents, read again
		 * once locked: those rows by primary key, each one's
		 * edges by the deps table's key */
		char sql[1024], plan[4096];

		snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_archive_awaited,
		    mq__sql_archive_awaited_tail);
		ok(explain(c->db, sql, "@id1, @id2", plan, sizeof plan) == 0,
		    "archive's awaited re-read: EXPLAIN runs", plan);
		printf("# archive's awaited re-read plan: %s\n", plan);
		ok(strstr(plan, "|j|range|") &&
		    !strstr(plan, "|ALL|") && !strstr(plan, "filesort"),
		    "archive's awaited re-read reads the ids by primary key, "
		    "their edges by index", plan);
		check_again(conn, "archive's awaited re-read", sql,
		    "@id1, @id2");
	}
	/* retry: a queue's dead jobs from the cursor on, a range of the
	 * claim index in its order (the filters checked on the way) */
	check(c->db, "retry", mq__sql_retry_pick, "@q, @minp, @minp, @zero, "
	    "@zero, @zero, @null, @null, @null, @null, @null, @null, @zero, "
	    "@n", "claim", "|range|");
	check(c->db, "retry with filters", mq__sql_retry_pick, "@q, @zero, "
	    "@zero, @zero, @zero, @id1, @pat, @pat, @age, @age, @zero, "
	    "@zero, @zero, @n", "claim", "|range|");
	/* stats: one claim-index entry per queue, then each queue's due
	 * and scheduled ranges (due index) and leased ones (claim index);
	 * done and dead entries are never read */
	check(c->db, "stats: the queues", mq__sql_stats_queues, "",
	    "claim", "Using index for group-by");
	check(c->db, "stats: a queue's live jobs", mq__sql_stats_live,
	    "@q, @q, @q, @q", "due", "|explain_jobs|range|due|due|");
	{
		/* each of its four reads a range: due, scheduled, leased,
		 * waiting (an equality on the due index's last column: a
		 * ref of all three, or a range) */
		char plan[4096], *p;
		int ranges = 0, waiting;
		explain(c->db, mq__sql_stats_live, "@q, @q, @q, @q", plan,
		    sizeof plan);
		for (p = plan; (p = strstr(p, "|explain_jobs|range|due|due|"));
		    p++)
			ranges++;
		waiting = strstr(plan, "|explain_jobs|ref|due|due|") != NULL;
		ok(ranges + waiting == 3 && strstr(plan,
		    "|explain_jobs|ref|claim|claim|") &&
		    !strstr(plan, "|index|") && !strstr(plan, "|ALL|"),
		    "stats: three ranges of the due index (due, scheduled, "
		    "waiting), one of the claim index, no scan", plan);
	}
	{
		/* mq top's refresh (stats, then the workers) and mq stats'
		 * queue list, three times on one connection: each reads the
		 * entries the first does (the queue list read the whole
		 * claim index from its second run on: 22,000 entries here
		 * against 5) */
		struct mq_queue_stats *qs;
		struct mq_queue_workers *w;
		size_t nq, nw;
		uint64_t archived;
		long long r0, r[3][3];
		char detail[256];
		int k;

		for (k = 0; k < 3; k++) {
			r0 = reads(c->db);
			mq_queue_names(c, &qs, &nq);
			free(qs);
			r[0][k] = reads(c->db) - r0;
			r0 = reads(c->db);
			mq_stats(c, NULL, &qs, &nq, &archived);
			free(qs);
			r[1][k] = reads(c->db) - r0;
			r0 = reads(c->db);
			mq_workers(c, NULL, &w, &nw);
			free(w);
			r[2][k] = reads(c->db) - r0;
		}
		for (k = 0; k < 3; k++) {
			static const char *const name[] = { "stats' queue list",
			    "stats", "top's workers" };
			snprintf(detail, sizeof detail, "entries read: %lld, "
			    "%lld, %lld", r[k][0], r[k][1], r[k][2]);
			printf("# %s: %s\n", name[k], detail);
			snprintf(label, sizeof label, "%s: the second and third "
			    "runs on one connection read what the first does",
			    name[k]);
			ok(r[k][0] >= 0 && r[k][1] <= r[k][0] + 2 &&
			    r[k][2] <= r[k][0] + 2, label, detail);
		}
	}
	{
		/* several acks: by primary key, not the lease index */
		char ack[512];
		snprintf(ack, sizeof ack, "%s?, ?%s(?, ?), (?, ?)%s",
		    mq__sql_ack_lock, mq__sql_ack_lock_pairs,
		    mq__sql_ack_lock_tail);
		check(c->db, "ack of several", ack,
		    "@id1, @id2, @id1, @tok, @id2, @tok", "PRIMARY", "|range|");
	}
	/* mq why: the job by primary key in both tables; a ready job's
	 * place, a range of the claim index */
	check(c->db, "why: the job", mq__sql_job_get, "@id1, @id1", "PRIMARY",
	    "|const|");
	/* mq show: the same job read, then its history, one range of the
	 * history's primary key (job_id, seq), in order */
	check(c->db, "show: the history", mq__sql_history_get, "@id1",
	    "PRIMARY", "|ref|");
	{
		/* mq why, mq show: a job's dependencies, the counts and the
		 * first few of each list, in the deps' indexes: no sort, no
		 * scan (the parents' states by primary key) */
		char plan[8192];
		explained(c->db, "why: the dependencies", mq__sql_job_deps,
		    "@id1, @id1, @id1, @id1, @id1, @id1", plan, sizeof plan);
		ok(strstr(plan, "filesort") == NULL && strstr(plan, "|ALL|")
		    == NULL && strstr(plan, "|index|") == NULL &&
		    strstr(plan, "|explain_jobs_deps|ref|child|child|") &&
		    strstr(plan, "|explain_jobs_deps|ref|PRIMARY|PRIMARY|"),
		    "why: the dependencies read ranges of the deps' indexes, "
		    "no sort, no scan", plan);
		check_again(conn, "why: the dependencies", mq__sql_job_deps,
		    "@id1, @id1, @id1, @id1, @id1, @id1");
	}
	{
		/* dead parents' dependents to cancel, a round: ranges of
		 * the deps' primary key, the parents' edges in key order
		 * from the round before's last (no sort: the LIMIT ends
		 * the read), each dependent by its primary key */
		char sql[1024], plan[8192];
		snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_doomed,
		    mq__sql_doomed_tail);
		explained(c->db, "cancel: the doomed dependents", sql,
		    "@id1, @id1, @zero, @zero, @id1, @id2",
		    plan, sizeof plan);
		ok(strstr(plan, "filesort") == NULL &&
		    strstr(plan, "temporary") == NULL &&
		    strstr(plan, "|d|range|PRIMARY|PRIMARY|") &&
		    strstr(plan, "|j|eq_ref|") &&
		    strstr(plan, "|PRIMARY|8|"),
		    "cancel: the doomed dependents read ranges of the deps' "
		    "primary key in order, each dependent by its primary key",
		    plan);
		check_again(conn, "cancel: the doomed dependents", sql,
		    "@id1, @id1, @zero, @zero, @id1, @id2");
		/* then cancelled by their edges: those of the deps' primary
		 * key (both columns), each dependent by its primary key */
		snprintf(sql, sizeof sql, "%s(?, ?), (?, ?))",
		    mq__sql_cancel_doomed);
		explained(c->db, "cancel: the doomed by their edges", sql,
		    "@zero, @zero, @id1, @id2, @id2, @id1", plan, sizeof plan);
		ok(strstr(plan, "|d|range|PRIMARY|PRIMARY|16|") &&
		    strstr(plan, "|j|eq_ref|") && strstr(plan, "|PRIMARY|8|") &&
		    strstr(plan, "filesort") == NULL,
		    "cancel: the doomed cancelled by their edges, ranges of "
		    "the deps' whole primary key, each dependent by its "
		    "primary key", plan);
	}
	{
		/* a finished parent's edges met: each statement reads the
		 * parents' edges (a derived table, ranges of the deps' key)
		 * first, then the rows they name by key, never the job
		 * table (or its ready jobs) first: a multiple-table UPDATE
		 * locks every row it reads until the commit */
		static const char *const what[MQ_SQL_MEETS] = {
			"meet: a dependent's last parent",
			"meet: the shards lowered",
			"meet: the dependents' shards lowered",
			"meet: the dependents made due",
			"meet: the queues of those made due",
			"meet: the edges marked met",
		};
		char sql[2048], plan[8192], says[256];
		size_t k;

		for (k = 0; k < MQ_SQL_MEETS; k++) {
			snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_meet[k][0],
			    mq__sql_meet[k][1]);
			/* the queues read bind the ids only */
			explained(c->db, what[k], sql, k == 4 ? "@id1, @id2" :
			    "@one, @id1, @id2", plan, sizeof plan);
			snprintf(says, sizeof says, "%s: the edges first, each "
			    "row they name by its key", what[k]);
			ok(k == 0 ?
			    strncmp(plan, "1|SIMPLE|d|range|PRIMARY|PRIMARY|",
			    33) == 0 && strstr(plan, "|w|eq_ref|") != NULL &&
			    strstr(plan, "|j|eq_ref|") != NULL :
			    k == MQ_SQL_MEETS - 1 ?
			    strstr(plan, "|d|range|PRIMARY|PRIMARY|") != NULL :
			    strncmp(plan, "1|PRIMARY|<derived", 18) == 0 &&
			    strstr(plan, "|d|range|") != NULL &&
			    strstr(plan, "|eq_ref|") != NULL &&
			    strstr(plan, "|j|ALL|") == NULL &&
			    strstr(plan, "|w|ALL|") == NULL &&
			    strstr(plan, "|lease|") == NULL &&
			    strstr(plan, "LATERAL") == NULL, says, plan);
		}
		/* the last parent's statement has no SELECT in it: kept
		 * prepared (stmt.c, is_read), its plan must not change with
		 * the executions after the first */
		snprintf(sql, sizeof sql, "%s?, ?%s", mq__sql_meet[0][0],
		    mq__sql_meet[0][1]);
		check_again(conn, what[0], sql, "@one, @id1, @id2");
	}
	check(c->db, "why: the jobs ahead", mq__sql_job_ahead,
	    "@q, @zero, @zero, @age, @age, @id1, @n", "claim", "|range|");
	/* mq top's workers: the 'leased' range of the lease index, the
	 * jobs running now, whatever else the table holds; its groups are
	 * made from that range alone */
	check_lease(c->db, "top: the workers (all queues)", mq__sql_workers,
	    "@null, @null");
	check_lease(c->db, "top: the workers (one queue)", mq__sql_workers,
	    "@q, @q");
	{
		/* mq ls: a queue's jobs of one stored state, a range of the
		 * list index in id order (no sort: a page reads its rows);
		 * of several, ranges of the claim or due index (sorted by
		 * id: the ranges' rows, not the table's); with no filter,
		 * the primary key in order */
		struct mq_list_filter f;
		char *sql, plan[8192];

		memset(&f, 0, sizeof f);
		f.queue = "a";
		f.states = 1u << MQ_ST_DEAD;
		f.since_us = f.before_us = -1;
		f.limit = 5;
		sql = mq__list_sql(&f);
		check(c->db, "ls of a queue's dead jobs", sql,
		    "@zero, @q, @n", "list", "|range|");
		free(sql);
		f.states = 1u << MQ_ST_READY | 1u << MQ_ST_SCHEDULED;
		sql = mq__list_sql(&f);
		check(c->db, "ls of a queue's waiting jobs", sql,
		    "@zero, @q, @n", "list", "|range|");
		free(sql);
		f.states = 1u << MQ_ST_WAITING;
		sql = mq__list_sql(&f);
		check(c->db, "ls of a queue's jobs waiting for parents", sql,
		    "@zero, @q, @n", "list", "|range|");
		free(sql);
		f.states = 1u << MQ_ST_READY | 1u << MQ_ST_DEAD;
		sql = mq__list_sql(&f);
		check_range(c->db, "ls of a queue's ready and dead jobs", sql,
		    "@zero, @q, @n");
		free(sql);
		f.queue = NULL;
		f.states = 0;
		sql = mq__list_sql(&f);
		check(c->db, "ls of all jobs", sql, "@id1, @n", "PRIMARY",
		    "|range|");
		free(sql);
		f.states = 1u << MQ_ST_ARCHIVED;
		sql = mq__list_sql(&f);
		check(c->db, "ls of archived jobs", sql, "@id1, @n", "PRIMARY",
		    "|range|");
		free(sql);
		/* the runs of calendar schedules: 2,000 ledger rows of
		 * schedule 's', one a job, and 2,000 of others */
		ok(mysql_query(c->db, "INSERT INTO explain_jobs_fired "
		    "(schedule, instant, job) SELECT IF(seq % 2, 's', "
		    "CONCAT('o', seq % 50)), '2026-01-01' + INTERVAL seq "
		    "MINUTE, seq FROM seq_1_to_4000") == 0 &&
		    mysql_query(c->db, "ANALYZE TABLE explain_jobs_fired") == 0,
		    "fill the ledger", mysql_error(c->db));
		mysql_free_result(mysql_store_result(c->db));
		check(c->db, "show: the run a job is", mq__sql_run_of, "@id1",
		    "job", "|ref|");
		f.states = 0;
		f.schedule = "s";
		sql = mq__list_sql(&f);
		explained(c->db, "ls --schedule", sql, "@zero, @s, @n", plan,
		    sizeof plan);
		ok(strstr(plan, "|explain_jobs_fired|ref|PRIMARY") != NULL,
		    "ls --schedule reads the schedule's ledger rows by its "
		    "primary key", plan);
		free(sql);
		explained(c->db, "show: a schedule's runs",
		    mq__sql_schedule_runs, "@s, @n, @s, @n, @n", plan,
		    sizeof plan);
		/* each part a range of the ledger's primary key read in
		 * order (no sort), its jobs by primary key; only the merge
		 * of the two parts' 2n rows at most is sorted */
		{
			const char *p = strstr(plan, "filesort");

			ok(strstr(plan, "|f|ref|PRIMARY|PRIMARY|") != NULL &&
			    strstr(plan, "|j|eq_ref|PRIMARY|") != NULL &&
			    strstr(plan, "|a|eq_ref|PRIMARY|") != NULL &&
			    strstr(plan, "<union1,2>|ALL|NULL|NULL|NULL|NULL|"
			    "NULL|Using filesort|") != NULL && p != NULL &&
			    strstr(p + 1, "filesort") == NULL,
			    "show: a schedule's runs: the ledger's primary key "
			    "in order, each job by id, only the merge sorted",
			    plan);
		}
	}
	/* a limited claim (limits.c): queue 'lim' at per key 1, 2,000 due
	 * jobs of key 'hot' (one more of it leased, live), 200 keys with a
	 * due job each behind them, 50 keys with a live lease */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs (queue, payload, "
	    "job_key, available_at) SELECT 'lim', 'x', 'hot', "
	    "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL seq MICROSECOND "
	    "FROM seq_1_to_2000") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs (queue, payload, "
	    "job_key) SELECT 'lim', 'x', CONCAT('k', seq) "
	    "FROM seq_1_to_200") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs (queue, state, "
	    "payload, job_key, attempts, lease_token, leased_until) SELECT "
	    "'lim', 'leased', 'x', IF(seq = 1, 'hot', CONCAT('l', seq)), 1, "
	    "REPEAT('a', 32), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR "
	    "FROM seq_1_to_51") == 0 &&
	    mysql_query(c->db, "INSERT INTO explain_jobs_queues (queue, "
	    "per_key) VALUES ('lim', 1)") == 0 &&
	    mysql_query(c->db, "ANALYZE TABLE explain_jobs") == 0,
	    "limits: fill a limited queue", mysql_error(c->db));
	mysql_free_result(mysql_store_result(c->db));
	{
		/* @lid: the first due job of the limited queue */
		MYSQL_RES *res = NULL;
		MYSQL_ROW row;
		size_t i;

		ok(mysql_query(c->db, "SET @lq = 'lim', @key = 'hot', "
		    "@one = 1, @key2 = 'l2', @empty = '', @lid = (SELECT MIN(id) FROM explain_jobs "
		    "WHERE queue = 'lim' AND state = 'ready')") == 0 &&
		    mysql_query(c->db, "SELECT @lid") == 0 &&
		    (res = mysql_store_result(c->db)) != NULL &&
		    (row = mysql_fetch_row(res)) != NULL && row[0],
		    "limits: set parameters", mysql_error(c->db));
		for (i = 0; res && i < sizeof vars / sizeof vars[0]; i++)
			if (strcmp(vars[i].name, "@lid") == 0)
				vars[i].i = atoll(row[0]);
		mysql_free_result(res);
	}
	check_limits(c->db, "limits: the queue's settings", sql_settings,
	    "@lq", "PRIMARY");
	/* the head: the claim index as far as its LIMIT, each row's key's
	 * live leases and ticks by a dive of the held and oldest indexes */
	check_limits(c->db, "limits: the candidates' head", sql_head,
	    "@one, @one, @age, @lq, @lq, @n", "claim");
	check_limits(c->db, "limits: the candidates' head without key limits",
	    sql_head, "@zero, @zero, @age, @lq, @lq, @n", "claim");
	{
		/* past the head: the held index's ranges around the keys
		 * used up (sorted: the other keys' due jobs) */
		char past[4096], plan[4096];

		snprintf(past, sizeof past, "%s?%s", sql_past_head,
		    sql_past_tail);
		explained(c->db, "limits: the candidates past the head", past,
		    "@one, @one, @age, @lq, @key, @n", plan, sizeof plan);
		ok(strstr(plan, "|range|held|held|") != NULL &&
		    strstr(plan, "|ALL|") == NULL &&
		    strstr(plan, "|index|") == NULL,
		    "limits: the candidates past the head read ranges of the "
		    "held index", plan);
	}
	check_limits(c->db, "limits: a key's live leases", mq__sql_live_key,
	    "@lq, @key", "held");
	{
		/* a key's gate and its live leases in one statement
		 * (MariaDB 10.5+: RETURNING): the count a lookup of the
		 * held index by the gate row written (the INSERT's own row
		 * shows as ALL: it reads none) */
		char plan[4096];

		explained(c->db, "limits: a key's gate and live leases",
		    sql_gate_live, "@lq, @key", plan, sizeof plan);
		ok(strstr(plan, "|ref|held|held|") != NULL &&
		    strstr(plan, "filesort") == NULL &&
		    strstr(plan, "temporary") == NULL,
		    "limits: a key's gate and live leases: its count is a "
		    "lookup of the held index", plan);
	}
	check_limits(c->db, "limits: the queue's live leases",
	    mq__sql_live_queue,
	    "@lq", "held");
	{
		/* the candidates' keys: their live leases in one grouped
		 * read, and their rates' ticks in another (two keys here),
		 * ranges of the held index and of the ticks' primary key */
		char keys[2048], ticks[2048];

		snprintf(keys, sizeof keys, "%s?, ?%s", sql_live_keys_head,
		    sql_live_keys_tail);
		check_limits(c->db, "limits: the candidates' keys' live leases",
		    keys, "@lq, @key, @key2", "held");
		snprintf(ticks, sizeof ticks, "%s?, ?%s", sql_ticks_keys_head,
		    sql_ticks_keys_tail);
		check_limits(c->db, "limits: the candidates' keys' ticks",
		    ticks, "@age, @age, @age, @lq, @key, @key2", "PRIMARY");
	}
	{
		/* the chosen candidates, locked together (one id here) */
		char skip[2048], wait[2048];

		snprintf(skip, sizeof skip, "%s?%s", sql_lock_ids,
		    sql_lock_ids_tail);
		snprintf(wait, sizeof wait, "%s?%s", sql_lock_ids_wait,
		    sql_lock_ids_wait_tail);
		check_limits(c->db, "limits: the candidates locked by "
		    "primary key", skip, "@lq, @lq, @lid", "PRIMARY");
		check_limits(c->db, "limits: the candidates locked, waiting",
		    wait, "@lq, @lq, @lid", "PRIMARY");
	}
	{
		/* mq stats' count of the due jobs a full key holds back
		 * (held.c): keys full by per_key (the live leases), by their
		 * key rate (the ticks, 'hot' and 'k1' at 1 per hour here), by
		 * either; the due jobs of each by the index held */
		static const char *const by_keys[] = { "held", NULL };
		static const char *const by_rate[] = { "oldest", "held",
		    NULL };
		static const char *const by_both[] = { "held", "oldest",
		    NULL };

		ok(mysql_query(c->db, "INSERT INTO explain_jobs_ticks (queue, "
		    "gate_key, n, at) VALUES ('lim', '', 1, UTC_TIMESTAMP(6)),"
		    " ('lim', 'hot', 1, UTC_TIMESTAMP(6)),"
		    " ('lim', 'k1', 1, UTC_TIMESTAMP(6))") == 0 &&
		    mysql_query(c->db, "ANALYZE TABLE explain_jobs_ticks") == 0,
		    "held: ticks of the limited queue's keys",
		    mysql_error(c->db));
		mysql_free_result(mysql_store_result(c->db));
		{
			/* the queue's gate: how many ticks (the primary
			 * key's last, by the index alone) and the oldest
			 * few (a lookup of oldest, as far as the LIMIT) */
			char plan[4096];

			explained(c->db, "limits: the queue's oldest ticks",
			    sql_ticks_oldest, "@lq, @empty, @age, @age, @age, "
			    "@lq, @empty, @n", plan, sizeof plan);
			ok((strstr(plan, "|explain_jobs_ticks|ref|oldest|") ||
			    strstr(plan, "|explain_jobs_ticks|range|oldest|")) &&
			    (strstr(plan, "Select tables optimized away") ||
			    strstr(plan, "No matching min/max row")),
			    "limits: the queue's oldest ticks: a lookup of "
			    "oldest, the count by the primary key's last", plan);
			check_again(conn, "limits: the queue's oldest ticks",
			    sql_ticks_oldest, "@lq, @empty, @age, @age, @age, "
			    "@lq, @empty, @n");
		}
		check_held(c->db, "held: the due jobs of full keys",
		    mq__sql_held_by_keys, "@lq, @one, @lq", by_keys);
		check_held(c->db, "held: the due jobs of keys at their rate",
		    mq__sql_held_by_key_rate, "@lq, @age, @one, @lq", by_rate);
		check_held(c->db, "held: the due jobs of keys full either way",
		    mq__sql_held_by_keys_or_rate,
		    "@lq, @one, @lq, @age, @one, @lq", by_both);
	}
	{
		/* What the candidates' read costs past 2,000 jobs of a key at
		 * its limit (their head): about what it costs with no key
		 * full, not a walk over them. Before (one read of the claim
		 * index leaving the full keys out by a condition): 2,069
		 * entries against 58. */
		struct key_limits kl = { 1, 0, 0 }, none = { 1000000, 0, 0 };
		struct candidate *cand = NULL;
		enum mq_cand_held held;
		size_t got = 0, got_free = 0;
		long long r0, walked = -1, free_read = -1;
		char detail[200];

		r0 = reads(c->db);
		if (mq__candidates(c, "lim", &kl, 1, &cand, &got, &held) == MQ_OK)
			walked = reads(c->db) - r0;
		free(cand);
		cand = NULL;
		r0 = reads(c->db);
		if (mq__candidates(c, "lim", &none, 1, &cand, &got_free,
		    &held) ==
		    MQ_OK)
			free_read = reads(c->db) - r0;
		free(cand);
		snprintf(detail, sizeof detail, "entries read: %lld past 2,000 "
		    "jobs of a full key (%zu candidates), %lld with no key "
		    "full (%zu)", walked, got, free_read, got_free);
		ok(walked >= 0 && free_read >= 0 && got > 0 &&
		    walked < free_read + 600, "limits: the candidates' read "
		    "passes 2,000 jobs of a full key without reading them",
		    detail);
		printf("# limits: the candidates' read: %s\n", detail);
	}
	check_failed_run(c);
	check_rate_ticks(c);
	check_short_claims(c, "sh", MQ_CLAIM_AUTO, "skip locked");
	check_short_claims(c, "su", MQ_CLAIM_UPDATE, "update");
	/* firing (schedule.c): the due schedules are one range of an index
	 * (all queues: due; some: queue_due), in order, whatever the
	 * schedules not due; and the earliest next_at of some queues */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs_schedules (name, expr,"
	    " zone, queue, payload, max_attempts, next_at) SELECT CONCAT('s',"
	    " seq), '0 0 * * *', 'UTC', IF(seq % 2, 'a', 'b'), '', 10,"
	    " UTC_TIMESTAMP(6) + INTERVAL CAST(seq AS SIGNED) - 20 MINUTE"
	    " FROM seq_1_to_3000")
	    == 0 && mysql_query(c->db, "ANALYZE TABLE explain_jobs_schedules")
	    == 0, "3,000 schedules, 19 due", mysql_error(c->db));
	{
		MYSQL_RES *r = mysql_store_result(c->db);
		char due[1024], next[2048];

		mysql_free_result(r);
		/* (the last parameter: the due schedules passed over, those
		 * this host cannot fire) */
		check(c->db, "schedule fire: the due schedule of every queue",
		    sql_due_all, "@zero", "due", NULL);
		check(c->db, "schedule fire: the due schedule of every queue, "
		    "3 passed over", sql_due_all, "@three", "due", NULL);
		snprintf(due, sizeof due, sql_due_queues, "?");
		check(c->db, "schedule fire: the due schedule of a queue", due,
		    "@q, @zero", "queue_due", NULL);
		char plan[4096];

		snprintf(next, sizeof next, "%s%s UNION ALL %s%s",
		    sql_next_head, sql_next_part, sql_next_part, sql_next_tail);
		explained(c->db, "schedule fire: two queues' next instant",
		    next, "@q, @s", plan, sizeof plan);
		/* each part answered from the index's first entry: no row of
		 * the plan reads the table (the derived table's 2 rows are
		 * the two minima) */
		ok(strstr(plan, "explain_jobs_schedules") == NULL &&
		    strstr(plan, "Select tables optimized away") != NULL,
		    "schedule fire: two queues' next instant: a lookup of each "
		    "queue's first entry, no range nor scan", plan);
	}
	mq_close(c);
	printf("1..%d\n", n);
	return failed != 0;
}
