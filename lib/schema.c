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
extern const char mq_sql_upgrade_3[];

/* upgrades[v] takes a table from version v - 1 to v */
static const char *const upgrades[MQ_SCHEMA_VERSION + 1] = {
	NULL, NULL, mq_sql_upgrade_2, mq_sql_upgrade_3,
};

/* One round trip tells everything a command needs before it starts. A
 * text query, not a prepared one (that would be two round trips): its
 * only inputs are the table's validated name and fixed suffixes. */
static const char sql_probe[] =
    "SELECT @@max_allowed_packet, @@auto_increment_increment,"
    " @@SESSION.binlog_format, DATABASE(),"
    " (SELECT TABLE_COMMENT FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{TABLE}}'),"
    " (SELECT COUNT(*) FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{TABLE}}_queues'),"
    " (SELECT COUNT(*) FROM information_schema.TABLES"
    "   WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{TABLE}}_archive')";

/* the tables next to the job table, by suffix (in the probe's order).
 * information_schema shows a user only the tables it has some privilege
 * on: a producer need not see the archive, so commands require only
 * _queues (every claim reads it); mq init makes any that is missing. */
static const char *const companions[] = { "_queues", "_archive" };
#define NCOMP (sizeof companions / sizeof companions[0])

struct probe {
	uint64_t max_packet, autoinc_step, companion[NCOMP];
	char binlog[32], database[65];
	char comment[2049];	/* the job table's; "" if missing */
	int exists;
};

static void
copy_cell(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static enum mq_status
probe(struct mq_conn *c, const char *table, struct probe *p)
{
	char *sql = mq__expand(sql_probe, table, NULL);
	MYSQL_RES *res;
	MYSQL_ROW row;
	enum mq_status st = MQ_OK;
	size_t i;

	memset(p, 0, sizeof *p);
	if (sql == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL) {
		free(sql);
		return mq__dberr(c, NULL, "cannot read table status");
	}
	free(sql);
	if ((row = mysql_fetch_row(res)) == NULL) {
		mysql_free_result(res);
		return mq__dberr(c, NULL, "cannot read table status");
	}
	p->max_packet = row[0] ? strtoull(row[0], NULL, 10) : 0;
	p->autoinc_step = row[1] ? strtoull(row[1], NULL, 10) : 1;
	copy_cell(p->binlog, sizeof p->binlog, row[2]);
	copy_cell(p->database, sizeof p->database, row[3]);
	copy_cell(p->comment, sizeof p->comment, row[4]);
	p->exists = row[4] != NULL;
	for (i = 0; i < NCOMP; i++)
		p->companion[i] = row[5 + i] && strcmp(row[5 + i], "0") != 0;
	if (row[3] == NULL)
		st = mq__fail(c, MQ_ECONFIG, "no database selected: give "
		    "--database, set MQ_DATABASE, or set database= in an "
		    "option file");
	mysql_free_result(res);
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
