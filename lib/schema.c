/*
 * schema.c: creating, upgrading and recognising the job table and its
 * companions (<table>_archive, <table>_queues). The SQL is in sql/,
 * embedded at build time; the version lives in the job table's COMMENT
 * ('mq schema N'), written last by each script, so a script cut short is
 * simply run again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

extern const char mq_sql_schema[];
extern const char mq_sql_upgrade_2[];

/* upgrades[v] takes a table from version v - 1 to v */
static const char *const upgrades[MQ_SCHEMA_VERSION + 1] = {
	NULL, NULL, mq_sql_upgrade_2,
};

/* the tables next to the job table, by suffix. information_schema shows
 * a user only the tables it has some privilege on: a producer need not
 * see the archive, so commands require only _queues (every claim reads
 * it); mq init makes any that is missing. */
static const char *const companions[] = { "_queues", "_archive" };
#define NCOMP (sizeof companions / sizeof companions[0])

/* One round trip tells everything a command needs before it starts. */
static const char sql_probe[] =
    "SELECT @@max_allowed_packet, @@auto_increment_increment,"
    " @@SESSION.binlog_format, DATABASE(),"
    " (SELECT TABLE_COMMENT FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?),"
    " (SELECT COUNT(*) FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?),"
    " (SELECT COUNT(*) FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?)";

struct probe {
	uint64_t max_packet, autoinc_step, companion[NCOMP];
	char binlog[32], database[65];
	char comment[2049];	/* the job table's; "" if missing */
	int exists;
};

static enum mq_status
probe(struct mq_conn *c, const char *table, struct probe *p)
{
	MYSQL_BIND in[1 + NCOMP], out[5 + NCOMP];
	unsigned long inlen[1 + NCOMP], outlen[5 + NCOMP];
	my_bool isnull[5 + NCOMP];
	char names[NCOMP][MQ_TABLE_MAX + 16];
	enum mq_status st;
	MYSQL_STMT *stmt;
	size_t i;
	int r;

	memset(p, 0, sizeof *p);
	stmt = mq__prepare(c, sql_probe);
	if (stmt == NULL)
		return c->err.status;
	mq__bind_str(&in[0], table, &inlen[0]);
	for (i = 0; i < NCOMP; i++) {
		snprintf(names[i], sizeof names[i], "%s%s", table,
		    companions[i]);
		mq__bind_str(&in[1 + i], names[i], &inlen[1 + i]);
	}
	st = mq__execute(c, stmt, in, "cannot read table status");
	if (st != MQ_OK)
		goto out;
	memset(out, 0, sizeof out);
	mq__bind_u64(&out[0], &p->max_packet);
	mq__bind_u64(&out[1], &p->autoinc_step);
	out[2].buffer_type = MYSQL_TYPE_STRING;
	out[2].buffer = p->binlog;
	out[2].buffer_length = sizeof p->binlog - 1;
	out[3].buffer_type = MYSQL_TYPE_STRING;
	out[3].buffer = p->database;
	out[3].buffer_length = sizeof p->database - 1;
	out[4].buffer_type = MYSQL_TYPE_STRING;
	out[4].buffer = p->comment;
	out[4].buffer_length = sizeof p->comment - 1;
	for (i = 0; i < NCOMP; i++)
		mq__bind_u64(&out[5 + i], &p->companion[i]);
	for (i = 0; i < 5 + NCOMP; i++) {
		out[i].length = &outlen[i];
		out[i].is_null = &isnull[i];
	}
	if (mysql_stmt_bind_result(stmt, out) != 0) {
		st = mq__dberr(c, stmt, "cannot read table status");
		goto out;
	}
	r = mysql_stmt_fetch(stmt);
	if (r != 0 && r != MYSQL_DATA_TRUNCATED) {
		st = mq__dberr(c, stmt, "cannot read table status");
		goto out;
	}
	for (i = 2; i < 5; i++) {
		char *buf = out[i].buffer;
		size_t n = outlen[i] < out[i].buffer_length ?
		    outlen[i] : out[i].buffer_length;
		buf[isnull[i] ? 0 : n] = '\0';
	}
	p->exists = !isnull[4];
	if (isnull[3])
		st = mq__fail(c, MQ_ECONFIG, "no database selected: give "
		    "--database, set MQ_DATABASE, or set database= in an "
		    "option file");
out:
	mq__release(c, stmt);
	return st;
}

/* The version in a job table's comment, 0 if it is not an mq table. */
static int
schema_version(const char *comment)
{
	int v;
	char extra;

	if (sscanf(comment, "mq schema %d%c", &v, &extra) != 1 || v < 1)
		return 0;
	return v;
}

static enum mq_status
check_version(struct mq_conn *c, const char *table, const struct probe *p)
{
	int v = schema_version(p->comment);

	if (!p->exists)
		return mq__fail(c, MQ_ESCHEMA, "table '%s.%s' does not exist: "
		    "run 'mq init' to create it", p->database, table);
	if (v == 0)
		return mq__fail(c, MQ_ESCHEMA, "table '%s.%s' is not an mq "
		    "table: choose another --table and run 'mq init'",
		    p->database, table);
	if (v > MQ_SCHEMA_VERSION)
		return mq__fail(c, MQ_ESCHEMA, "table '%s.%s' has schema "
		    "version %d, newer than this mq knows (%d): upgrade mq",
		    p->database, table, v, MQ_SCHEMA_VERSION);
	if (v < MQ_SCHEMA_VERSION)
		return mq__fail(c, MQ_ESCHEMA, "table '%s.%s' has schema "
		    "version %d: run 'mq init' to upgrade it", p->database,
		    table, v);
	if (!p->companion[0])
		return mq__fail(c, MQ_ESCHEMA, "table '%s.%s%s' is missing "
		    "(or not readable): run 'mq init' to create it",
		    p->database, table, companions[0]);
	return MQ_OK;
}

static enum mq_status
set_table(struct mq_conn *c, const char *table)
{
	if (!mq_valid_table(table))
		return mq__fail(c, MQ_EINVAL, "invalid table name");
	if (strcmp(c->table, table) != 0)
		mq__forget_statements(c);	/* they name the old table */
	snprintf(c->table, sizeof c->table, "%s", table);
	return MQ_OK;
}

enum mq_status
mq_use_table(struct mq_conn *c, const char *table)
{
	struct probe p;
	enum mq_status st;

	if ((st = set_table(c, table)) != MQ_OK)
		return st;
	if ((st = probe(c, table, &p)) != MQ_OK)
		return st;
	if ((st = check_version(c, table, &p)) != MQ_OK)
		return st;
	c->max_packet = (unsigned long)p.max_packet;
	c->autoinc_step = p.autoinc_step ? p.autoinc_step : 1;
	return MQ_OK;
}

char *
mq_schema_sql(const char *table)
{
	if (!mq_valid_table(table))
		return NULL;
	return mq__expand(mq_sql_schema, table, NULL);
}

/* Runs each ';'-terminated statement of tmpl, for table, in turn. */
static enum mq_status
run_script(struct mq_conn *c, const char *tmpl, const char *what)
{
	char *sql = mq__expand(tmpl, c->table, NULL), *p, *end;
	enum mq_status st = MQ_OK;

	if (sql == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	for (p = sql; st == MQ_OK && (end = strstr(p, ";\n")) != NULL;
	    p = end + 2) {
		*end = '\0';
		if (mysql_real_query(c->db, p, strlen(p)) != 0)
			st = mq__dberr(c, NULL, what);
	}
	free(sql);
	return st;
}

enum mq_status
mq_init(struct mq_conn *c, const char *table, struct mq_init_report *rep)
{
	struct probe p;
	enum mq_status st;
	int v;

	memset(rep, 0, sizeof *rep);
	if ((st = set_table(c, table)) != MQ_OK)
		return st;
	if ((st = probe(c, table, &p)) != MQ_OK)
		return st;
	rep->binlog_statement = strcmp(p.binlog, "STATEMENT") == 0;
	if (!p.exists) {
		rep->created = 1;
		if ((st = run_script(c, mq_sql_schema,
		    "cannot create table")) != MQ_OK)
			return st;
		return mq_use_table(c, table);
	}
	v = schema_version(p.comment);
	if (v == 0 || v > MQ_SCHEMA_VERSION)
		return check_version(c, table, &p);
	rep->from_version = v;
	/* each upgrade script records its version last: rerun-safe */
	for (; v < MQ_SCHEMA_VERSION; v++)
		if ((st = run_script(c, upgrades[v + 1],
		    "cannot upgrade table")) != MQ_OK)
			return st;
	if (rep->from_version == MQ_SCHEMA_VERSION &&
	    (!p.companion[0] || !p.companion[1])) {
		/* someone dropped one: the schema's IF NOT EXISTS remakes it */
		rep->companions_created = 1;
		if ((st = run_script(c, mq_sql_schema,
		    "cannot create table")) != MQ_OK)
			return st;
	}
	return mq_use_table(c, table);
}
