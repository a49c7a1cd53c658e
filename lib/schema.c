/*
 * schema.c: creating, upgrading and recognising the job table. The SQL
 * is sql/schema.sql, embedded at build time; the version lives in the
 * table's COMMENT ('mq schema N').
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

extern const char mq_sql_schema[];

/* One round trip tells everything a command needs before it starts. */
static const char sql_probe[] =
    "SELECT @@max_allowed_packet, @@auto_increment_increment,"
    " @@SESSION.binlog_format, DATABASE(),"
    " (SELECT TABLE_COMMENT FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?),"
    " (SELECT TABLE_COMMENT FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?)";

struct probe {
	uint64_t max_packet, autoinc_step;
	char binlog[32], database[65];
	char comment[2][2049];	/* job table, archive; "" if missing */
	int exists[2];
};

static enum mq_status
probe(struct mq_conn *c, const char *table, struct probe *p)
{
	MYSQL_BIND in[2], out[6];
	unsigned long inlen[2], outlen[6];
	my_bool isnull[6];
	char archive[MQ_TABLE_MAX + 9];
	enum mq_status st;
	MYSQL_STMT *stmt;
	int i, r;

	memset(p, 0, sizeof *p);
	snprintf(archive, sizeof archive, "%s_archive", table);
	stmt = mq__prepare(c, sql_probe);
	if (stmt == NULL)
		return c->err.status;
	mq__bind_str(&in[0], table, &inlen[0]);
	mq__bind_str(&in[1], archive, &inlen[1]);
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
	for (i = 0; i < 2; i++) {
		out[4 + i].buffer_type = MYSQL_TYPE_STRING;
		out[4 + i].buffer = p->comment[i];
		out[4 + i].buffer_length = sizeof p->comment[i] - 1;
	}
	for (i = 0; i < 6; i++) {
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
	for (i = 2; i < 6; i++) {
		char *buf = out[i].buffer;
		size_t n = outlen[i] < out[i].buffer_length ?
		    outlen[i] : out[i].buffer_length;
		buf[isnull[i] ? 0 : n] = '\0';
	}
	p->exists[0] = !isnull[4];
	p->exists[1] = !isnull[5];
	if (isnull[3])
		st = mq__fail(c, MQ_ECONFIG, "no database selected: give "
		    "--database, set MQ_DATABASE, or set database= in an "
		    "option file");
out:
	mysql_stmt_close(stmt);
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
	int v = schema_version(p->comment[0]);

	if (!p->exists[0])
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
	return MQ_OK;
}

static enum mq_status
set_table(struct mq_conn *c, const char *table)
{
	if (!mq_valid_table(table))
		return mq__fail(c, MQ_EINVAL, "invalid table name");
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
	return mq__expand(mq_sql_schema, table);
}

/* Runs each ';'-terminated statement of sql in turn. */
static enum mq_status
run_script(struct mq_conn *c, char *sql)
{
	char *p = sql, *end;

	while ((end = strstr(p, ";\n")) != NULL) {
		*end = '\0';
		if (mysql_real_query(c->db, p, strlen(p)) != 0)
			return mq__dberr(c, NULL, "cannot create table");
		p = end + 2;
	}
	return MQ_OK;
}

enum mq_status
mq_init(struct mq_conn *c, const char *table, struct mq_init_report *rep)
{
	struct probe p;
	enum mq_status st;
	char *sql;
	int v;

	memset(rep, 0, sizeof *rep);
	if ((st = set_table(c, table)) != MQ_OK)
		return st;
	if ((st = probe(c, table, &p)) != MQ_OK)
		return st;
	rep->binlog_statement = strcmp(p.binlog, "STATEMENT") == 0;
	if (p.exists[0]) {
		v = schema_version(p.comment[0]);
		if (v == 0 || v > MQ_SCHEMA_VERSION)
			return check_version(c, table, &p);
		rep->from_version = v;
		if (p.exists[1] && schema_version(p.comment[0]) ==
		    MQ_SCHEMA_VERSION)
			return MQ_OK;	/* nothing to do: change nothing */
	}
	rep->created = !p.exists[0];
	rep->archive_created = !p.exists[1];
	sql = mq_schema_sql(table);
	if (sql == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	st = run_script(c, sql);
	free(sql);
	if (st == MQ_OK)
		st = mq_use_table(c, table);
	return st;
}
