/*
 * schema.c: creating, upgrading and recognising the job table and its
 * companions (<table>_archive, <table>_queues, <table>_counts,
 * <table>_history, <table>_waiters, <table>_gates, <table>_ticks,
 * <table>_deps, <table>_waits, <table>_schedules, <table>_fired). The SQL
 * is in sql/, embedded at build time; the version lives in the job
 * table's COMMENT ('mq schema N'), written last by each script, so a
 * script cut short is simply run again.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

extern const char mq_sql_schema[];
extern const char mq_sql_upgrade_2[];
extern const char mq_sql_upgrade_3[];
extern const char mq_sql_upgrade_4[];
extern const char mq_sql_upgrade_5[];
extern const char mq_sql_upgrade_6[];
extern const char mq_sql_upgrade_7[];
extern const char mq_sql_upgrade_8[];
extern const char mq_sql_upgrade_9[];
extern const char mq_sql_upgrade_10[];
extern const char mq_sql_upgrade_11[];
extern const char mq_sql_upgrade_12[];

/* upgrades[v] takes a table from version v - 1 to v */
static const char *const upgrades[MQ_SCHEMA_VERSION + 1] = {
	NULL, NULL, mq_sql_upgrade_2, mq_sql_upgrade_3, mq_sql_upgrade_4,
	mq_sql_upgrade_5, mq_sql_upgrade_6, mq_sql_upgrade_7, mq_sql_upgrade_8,
	mq_sql_upgrade_9, mq_sql_upgrade_10, mq_sql_upgrade_11,
	mq_sql_upgrade_12,
};

/* One round trip tells everything a command needs before it starts, and
 * first sets what the session must be (conn.c: autocommit, isolation,
 * sql_mode, time zone, limits). A text query, not a prepared one (that
 * would be two round trips): its only inputs are the table's validated
 * name and fixed suffixes. The table's comment comes from SHOW CREATE
 * TABLE, which opens the table alone: information_schema costs a new session three
 * times as much. The statements run in turn until one fails: which one
 * tells what is missing. mq init reads the archive and the counts too (a
 * producer need not be able to). */
#define SQL_PROBE(WSREP) \
    "DROP TEMPORARY TABLE IF EXISTS `{{TABLE}}`, `{{TABLE}}_archive`," \
    " `{{TABLE}}_queues`, `{{TABLE}}_counts`, `{{TABLE}}_history`," \
    " `{{TABLE}}_waiters`, `{{TABLE}}_gates`, `{{TABLE}}_ticks`," \
    " `{{TABLE}}_deps`, `{{TABLE}}_waits`, `{{TABLE}}_schedules`," \
    " `{{TABLE}}_fired`;" \
    "SELECT @@max_allowed_packet, @@auto_increment_increment," \
    " IF(@@GLOBAL.log_bin AND @@SESSION.sql_log_bin," \
    " @@SESSION.binlog_format, 'NONE'), DATABASE(), " WSREP "," \
    " CONCAT(@@hostname, ':', @@port);" \
    "SHOW CREATE TABLE `{{TABLE}}`;" \
    "SELECT (SELECT queue FROM `{{TABLE}}_queues` AS l WHERE " \
    MQ_SQL_LIMITED " AND EXISTS (SELECT 1 FROM `{{TABLE}}_waiters` AS w" \
    " WHERE w.queue = l.queue) LIMIT 1), EXISTS (SELECT 1 FROM" \
    " `{{TABLE}}_waiters` WHERE " MQ_SQL_FINISH_ROWS ")"
#define SQL_PROBE_INIT \
    ";SELECT id FROM `{{TABLE}}_archive` LIMIT 0" \
    ";SHOW CREATE TABLE `{{TABLE}}_counts`" \
    ";SELECT job_id FROM `{{TABLE}}_history` LIMIT 0" \
    ";SELECT conn FROM `{{TABLE}}_waiters` LIMIT 0" \
    ";SELECT claims FROM `{{TABLE}}_gates` LIMIT 0" \
    ";SELECT at FROM `{{TABLE}}_ticks` LIMIT 0" \
    ";SELECT child FROM `{{TABLE}}_deps` LIMIT 0" \
    ";SELECT child FROM `{{TABLE}}_waits` LIMIT 0" \
    ";SELECT next_at FROM `{{TABLE}}_schedules` LIMIT 0" \
    ";SELECT job FROM `{{TABLE}}_fired` LIMIT 0"
/* Galera (MariaDB only: MySQL has no such variables): on for the server,
 * on for this session, and "<the node's index> <the cluster's size>",
 * read only when it is on (IF evaluates one branch). Where Galera sets
 * the global auto-increment offset and step from each view
 * (wsrep_auto_increment_control, the default), they are index + 1 and
 * size: two variables. Else "?", and they come from one read of the
 * status after the probe (sql_wsrep_status), which asks the provider for
 * all of it: 0.55 ms of the server's CPU against 0.05. Not in the probe,
 * even in a branch IF never takes: a statement opens every table it
 * names before it runs, and opening information_schema.GLOBAL_STATUS
 * (a temporary table made for the statement) cost each connection
 * about 0.1 ms of the server's time, Galera or not (a pop or an ack of
 * a shell loop). */
#define SQL_WSREP "@@GLOBAL.wsrep_on, @@SESSION.wsrep_on," \
    " IF(@@GLOBAL.wsrep_on, IF(@@GLOBAL.wsrep_auto_increment_control," \
    " CONCAT(@@GLOBAL.auto_increment_offset - 1, ' '," \
    " @@GLOBAL.auto_increment_increment), '?'), NULL)"
#define SQL_WSREP_NODE(name) \
    "COALESCE(MAX(IF(VARIABLE_NAME = '" name "', VARIABLE_VALUE, NULL)), '')"
static const char sql_wsrep_status[] = "SELECT CONCAT("
    SQL_WSREP_NODE("WSREP_LOCAL_INDEX") ", ' ',"
    SQL_WSREP_NODE("WSREP_CLUSTER_SIZE") ")"
    " FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN"
    " ('WSREP_LOCAL_INDEX', 'WSREP_CLUSTER_SIZE')";
#define SQL_NO_WSREP "0, 0, NULL"
static const char sql_probe[] = SQL_PROBE(SQL_WSREP);
static const char sql_probe_init[] = SQL_PROBE(SQL_WSREP) SQL_PROBE_INIT;
static const char sql_probe_mysql[] = SQL_PROBE(SQL_NO_WSREP);
static const char sql_probe_init_mysql[] = SQL_PROBE(SQL_NO_WSREP)
    SQL_PROBE_INIT;

/* The counts table's comment once mq init has filled it (it is made with
 * ", to fill" after this). */
#define COUNTS_FILLED "mq counts 1"
static const char sql_counts_filled[] =
    "ALTER TABLE `{{TABLE}}_counts` COMMENT='" COUNTS_FILLED "';\n";

/* the tables next to the job table, by suffix (in the probe's order) */
static const char *const companions[] = {
	"_queues", "_archive", "_counts", "_history", "_waiters", "_gates",
	"_ticks", "_deps", "_waits", "_schedules", "_fired"
};
#define NCOMP (sizeof companions / sizeof companions[0])

struct probe {
	uint64_t max_packet, autoinc_step, companion[NCOMP];
	int wsrep, wsrep_session;	/* Galera on: server, session */
	unsigned node_index;		/* the node's, in the cluster */
	unsigned cluster_size;		/* nodes in the cluster */
	int node_unread;	/* both are in the status (sql_wsrep_status) */
	char binlog[32], database[65];
	char server[128];	/* @@hostname:@@port */
	char comment[2049];	/* the job table's; "" if missing */
	char engine[65];	/* the job table's; "" if not shown */
	char counts_comment[64];	/* the counts table's (mq init) */
	int exists;
	int has_limits;		/* a queue with limits has waiters */
	int finish_waiters;	/* mq wait waits (waiters.c) */
};

static void
copy_cell(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* The table's COMMENT in SHOW CREATE TABLE's text: among the options
 * after the column list (a line that starts with ')'), quoted, a quote
 * doubled and a backslash escaping. "" if there is none. */
static void
table_comment(const char *ddl, char *out, size_t size)
{
	const char *opts = ddl ? strstr(ddl, "\n) ") : NULL, *end, *p;
	size_t n = 0;

	out[0] = '\0';
	if (opts == NULL || (p = strstr(opts, " COMMENT='")) == NULL)
		return;
	end = strchr(opts + 1, '\n');	/* partitions may follow */
	if (end && p > end)
		return;
	for (p += 10; *p && n + 1 < size; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '\'' && p[1] == '\'')
			p++;
		else if (*p == '\'')
			break;
		out[n++] = *p;
	}
	out[n] = '\0';
}

/* The table's engine in SHOW CREATE TABLE's text (") ENGINE=InnoDB"),
 * "" if it is not there. */
static void
table_engine(const char *ddl, char *out, size_t size)
{
	const char *p = ddl ? strstr(ddl, "\n) ENGINE=") : NULL;
	size_t n = 0;

	out[0] = '\0';
	if (p == NULL)
		return;
	for (p += 10; *p && *p != ' ' && *p != '\n' && n + 1 < size; p++)
		out[n++] = *p;
	out[n] = '\0';
}

/* The probe's statements, in order: the session's settings (two
 * statements: conn.c); temporary tables of mq's names dropped (an
 * init_connect or init-command that made one would hide the real table:
 * pushes into it vanish at disconnect); the server's variables, the job
 * table, then the companions. */
enum { P_ROLLBACK, P_SESSION, P_TEMPORARY, P_VARS, P_TABLE, P_COMPANIONS };

/* The node's index and the cluster's size from "<index> <size>" (either
 * empty when the server has no such status; 0 then, as with no cell). */
static void
wsrep_node(struct probe *p, const char *cell)
{
	const char *size = cell ? strchr(cell, ' ') : NULL;

	p->node_index = cell && *cell >= '0' && *cell <= '9' ?
	    (unsigned)strtoul(cell, NULL, 10) : 0;
	p->cluster_size = size ? (unsigned)strtoul(size + 1, NULL, 10) : 0;
}

/* What statement k of the probe returned. */
static void
take_result(struct probe *p, unsigned k, MYSQL_RES *res)
{
	MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;

	switch (k) {
	case P_ROLLBACK:
	case P_SESSION:
	case P_TEMPORARY:
		break;
	case P_VARS:
		if (row == NULL)
			break;
		p->max_packet = row[0] ? strtoull(row[0], NULL, 10) : 0;
		p->autoinc_step = row[1] ? strtoull(row[1], NULL, 10) : 1;
		copy_cell(p->binlog, sizeof p->binlog, row[2]);
		copy_cell(p->database, sizeof p->database, row[3]);
		p->wsrep = row[4] && strcmp(row[4], "1") == 0;
		p->wsrep_session = row[5] && strcmp(row[5], "1") == 0;
		if (row[6] && strcmp(row[6], "?") == 0)
			p->node_unread = 1;
		else
			wsrep_node(p, row[6]);
		copy_cell(p->server, sizeof p->server,
		    mysql_num_fields(res) > 7 ? row[7] : NULL);
		break;
	case P_TABLE:
		p->exists = 1;
		if (row && mysql_num_fields(res) >= 2) {
			table_comment(row[1], p->comment, sizeof p->comment);
			table_engine(row[1], p->engine, sizeof p->engine);
		}
		break;
	default:
		if (k - P_COMPANIONS < NCOMP)
			p->companion[k - P_COMPANIONS] = 1;
		if (k - P_COMPANIONS == 0 && row &&
		    mysql_num_fields(res) >= 2) {
			p->has_limits = row[0] != NULL;
			p->finish_waiters = row[1] && strcmp(row[1], "1") == 0;
		}
		if (k - P_COMPANIONS == 2 && row && mysql_num_fields(res) >= 2) {
			table_comment(row[1], p->counts_comment,
			    sizeof p->counts_comment);
		}
		break;
	}
}

/* The node's index and the cluster's size from the status, where the
 * variables do not hold them (a Galera node without
 * wsrep_auto_increment_control): one round trip more, only there. */
static enum mq_status
read_wsrep_status(struct mq_conn *c, struct probe *p)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (mysql_real_query(c->db, sql_wsrep_status,
	    strlen(sql_wsrep_status)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot read the Galera status");
	if ((row = mysql_fetch_row(res)) != NULL)
		wsrep_node(p, row[0]);
	mysql_free_result(res);
	return MQ_OK;
}

static enum mq_status
probe_once(struct mq_conn *c, const char *table, struct probe *p, int init)
{
	const char *info = mysql_get_server_info(c->db);
	/* a MariaDB built without wsrep has no wsrep_on (1193): probed
	 * again as MySQL (probe()) */
	int mariadb = info && strstr(info, "MariaDB") != NULL && !c->no_wsrep;
	char *tail = mq__expand(init ? (mariadb ? sql_probe_init :
	    sql_probe_init_mysql) : (mariadb ? sql_probe : sql_probe_mysql),
	    table, NULL), *sql = NULL;
	const char *session = mq__session_sql(c);
	MYSQL_RES *res;
	unsigned k, err;
	size_t n;
	int more;

	memset(p, 0, sizeof *p);
	n = strlen(session) + 1 + (tail ? strlen(tail) : 0) + 1;
	if (tail == NULL || (sql = malloc(n)) == NULL) {
		free(tail);
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	}
	snprintf(sql, n, "%s;%s", session, tail);
	free(tail);
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0) {
		free(sql);
		return mq__dberr(c, NULL, "cannot set up the session");
	}
	free(sql);
	for (k = 0;; k++) {
		res = mysql_store_result(c->db);
		if (res == NULL && mysql_field_count(c->db) != 0)
			return mq__dberr(c, NULL, "cannot read table status");
		take_result(p, k, res);
		mysql_free_result(res);
		if ((more = mysql_next_result(c->db)) != 0)
			break;
	}
	/* statement k + 1 failed: no job table, or a companion missing (or
	 * not readable); anything else is the server's to tell */
	err = more > 0 ? mysql_errno(c->db) : 0;
	if (err && k + 1 <= P_TEMPORARY && err != ER_NO_DB_ERROR)
		return mq__dberr(c, NULL, "cannot set up the session");
	if (err == ER_NO_DB_ERROR || (k + 1 > P_VARS && p->database[0] == '\0'))
		return mq__fail(c, MQ_ECONFIG, "no database selected: give "
		    "--database, set MQ_DATABASE, or set database= in an "
		    "option file");
	/* a queues table older than schema 10 has no limit columns: it is
	 * there (the version says to run mq init; mq init upgrades it, and
	 * probes no further companion: it makes any that is missing); an
	 * account that may read its queue column alone (a producer) may not
	 * read them, and one that may read neither it nor the waiters table
	 * (mq wait's, which needs the job table and the archive only; a
	 * producer without the waiters grant) may not read this statement's
	 * tables at all: there too, the limits and waiters unknown (nothing
	 * it does needs them; what does is refused by the server then, 77,
	 * not taken for a table to create, 78) */
	if ((err == ER_BAD_FIELD_ERROR || err == ER_COLUMNACCESS_DENIED_ERROR ||
	    err == ER_TABLEACCESS_DENIED_ERROR) && k + 1 == P_COMPANIONS) {
		p->companion[0] = 1;
		err = 0;
	}
	if (err && !(k + 1 == P_TABLE && err == 1146) &&
	    !(k + 1 >= P_COMPANIONS && (err == 1146 || err == 1142)))
		return mq__dberr(c, NULL, "cannot read table status");
	if (p->node_unread && read_wsrep_status(c, p) != MQ_OK)
		return c->err.status;
	c->read_committed = 1;
	return MQ_OK;
}

/* Probes; if the session is not in the database asked for (an
 * init_connect or an option file's init-command ran USE), goes back to
 * it and probes again: a push must not land where its consumers never
 * look. (One extra round trip, only then.) */
static enum mq_status
probe(struct mq_conn *c, const char *table, struct probe *p, int init)
{
	enum mq_status st = probe_once(c, table, p, init);
	int tries = 1;

	/* a KILL QUERY meant for a statement this connection no longer
	 * runs (a late wakeup) interrupts a probe that writes nothing:
	 * it is run again, as any read is (it was status 75) */
	while (st != MQ_OK && c->err.db_errno == ER_QUERY_INTERRUPTED &&
	    tries++ < 4)
		st = probe_once(c, table, p, init);
	if (st != MQ_OK && c->err.db_errno == ER_UNKNOWN_SYSTEM_VARIABLE &&
	    !c->no_wsrep) {
		c->no_wsrep = 1;
		st = probe_once(c, table, p, init);
	}
	if (st != MQ_OK || c->want_db[0] == '\0' ||
	    strcmp(p->database, c->want_db) == 0)
		return st;
	if (mysql_select_db(c->db, c->want_db) != 0)
		return mq__dberr(c, NULL, "cannot use the database");
	return probe_once(c, table, p, init);
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

/* On a Galera node a session with wsrep_on off (an init_connect, an
 * option file) writes on this node alone: its pushes and acks never
 * reach the others, and the nodes' tables part ways. Refused. */
static enum mq_status
check_wsrep(struct mq_conn *c, const struct probe *p)
{
	if (p->wsrep && !p->wsrep_session)
		return mq__fail(c, MQ_ECONFIG, "wsrep_on is OFF in this session "
		    "of a Galera node: its writes would stay on this node; "
		    "remove what sets it (init_connect, an option file)");
	return MQ_OK;
}

/* A server that logs statements (binlog_format=STATEMENT, log_bin on)
 * has InnoDB refuse every write of a READ COMMITTED transaction (error
 * 1665), and would replicate SKIP LOCKED and UPDATE ... LIMIT unsafely:
 * the session logs rows instead, where the account may set that (BINLOG
 * ADMIN, SUPER); else refused, saying so, before anything is written
 * (mq init once created the tables and failed at the counts). */
static enum mq_status
session_logs_rows(struct mq_conn *c, struct probe *p)
{
	static const char sql[] = "SET SESSION binlog_format = 'ROW'";

	if (strcmp(p->binlog, "STATEMENT") != 0)
		return MQ_OK;
	if (mysql_real_query(c->db, sql, sizeof sql - 1) != 0)
		return mq__fail(c, MQ_ECONFIG, "the server logs statements "
		    "(binlog_format=STATEMENT), which InnoDB refuses for mq's "
		    "READ COMMITTED transactions, and this account cannot "
		    "log rows instead (error %u, SQLSTATE %s): set "
		    "binlog_format=ROW or MIXED, or grant BINLOG ADMIN "
		    "(MySQL: SESSION_VARIABLES_ADMIN)",
		    mysql_errno(c->db), mysql_sqlstate(c->db));
	copy_cell(p->binlog, sizeof p->binlog, "ROW");
	return MQ_OK;
}

/* A job table in another engine (converted by hand: mq init makes
 * InnoDB) has no transactions nor row locks: claims deliver one job to
 * two consumers, and nothing given back is rolled back. Refused. */
static enum mq_status
check_engine(struct mq_conn *c, const char *table, const struct probe *p)
{
	if (p->engine[0] == '\0' || strcmp(p->engine, "InnoDB") == 0)
		return MQ_OK;
	return mq__fail(c, MQ_ESCHEMA, "table '%s.%s' uses the %s engine: "
	    "mq needs InnoDB (ALTER TABLE `%s` ENGINE=InnoDB)", p->database,
	    table, p->engine, table);
}

static enum mq_status
check_version(struct mq_conn *c, const char *table, const struct probe *p)
{
	int v = schema_version(p->comment);

	if (p->exists && check_engine(c, table, p) != MQ_OK)
		return MQ_ESCHEMA;
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
	if ((st = probe(c, table, &p, 0)) != MQ_OK)
		return st;
	if ((st = check_version(c, table, &p)) != MQ_OK)
		return st;
	if ((st = check_wsrep(c, &p)) != MQ_OK)
		return st;
	if ((st = session_logs_rows(c, &p)) != MQ_OK)
		return st;
	c->max_packet = (unsigned long)p.max_packet;
	c->autoinc_step = p.autoinc_step ? p.autoinc_step : 1;
	c->galera = p.wsrep;
	c->has_limits = p.has_limits;
	c->finish_waiters = p.finish_waiters;
	c->finish_checked_us = mq_now_us();
	memset(c->limited_seen, 0, sizeof c->limited_seen);
	memset(c->short_seen, 0, sizeof c->short_seen);
	memset(c->short_window_seen, 0, sizeof c->short_window_seen);
	memset(c->full_window_seen, 0, sizeof c->full_window_seen);
	c->count_slot_base = 16 * (p.node_index % 16);
	c->shares = p.wsrep && p.cluster_size > 1 ? p.cluster_size : 0;
	c->share = p.node_index;
	memcpy(c->server, p.server, sizeof c->server);
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

/* Rows that upgrade 6 cannot repair: a queue name mq does not accept
 * (the CHECK's own pattern). Refused before anything changes, naming the
 * first ids, rather than by the ALTER's "CONSTRAINT failed". */
static const char sql_bad_queues[] =
    "SELECT COUNT(*), SUBSTRING_INDEX(GROUP_CONCAT(id ORDER BY id"
    " SEPARATOR ', '), ', ', 10) FROM `{{TABLE}}`"
    " WHERE queue NOT REGEXP '^[A-Za-z0-9_.-]+$'";

/* Rows that upgrade 8's unique key (queue '/' dedup key) may find twice:
 * waiting or leased jobs with a dedup key whose queue holds a '/' (not a
 * name mq accepts, in a table whose CHECKs were off): queue a/b with key
 * c and queue a with key b/c are both "a/b/c" (the ALTER's "Duplicate
 * entry"). One of two such rows always has the '/' in its queue. */
static const char sql_slash_dedup[] =
    "SELECT COUNT(*), SUBSTRING_INDEX(GROUP_CONCAT(id ORDER BY id"
    " SEPARATOR ', '), ', ', 10) FROM `{{TABLE}}`"
    " WHERE queue LIKE '%/%' AND dedup_key IS NOT NULL"
    " AND state IN ('ready', 'leased')";

static enum mq_status
refuse_rows(struct mq_conn *c, const char *tmpl, int version,
    const char *what)
{
	char *sql = mq__expand(tmpl, c->table, NULL);
	MYSQL_RES *res;
	MYSQL_ROW row;
	enum mq_status st = MQ_OK;

	if (sql == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if (mysql_real_query(c->db, sql, strlen(sql)) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL) {
		free(sql);
		return mq__dberr(c, NULL, "cannot upgrade table");
	}
	free(sql);
	row = mysql_fetch_row(res);
	if (row && row[0] && strcmp(row[0], "0") != 0)
		st = mq__fail(c, MQ_ESCHEMA, "cannot upgrade table '%s' to "
		    "schema %d: %s jobs have %s (ids %s%s): rename their "
		    "queue or delete them, then run 'mq init' again",
		    c->table, version, row[0], what, row[1] ? row[1] : "",
		    strtoull(row[0], NULL, 10) > 10 ? ", ..." : "");
	mysql_free_result(res);
	return st;
}

/* Upgrade 7's change to the counts table, before the script: one ALTER,
 * all or nothing. Run again after a cut (the version is recorded in the
 * other table), it finds its column there (1060); with no counts table
 * (1146), the schema makes a new one afterwards. Then the counters of
 * done, dead and archived jobs start from their counts: pushed is
 * derived from them (stats.c), and a counter that started below its
 * count would make it go down once dead jobs that died before the
 * upgrade are retried and finished. Set, not added: a rerun (no
 * version 7 writer runs before the version is recorded) sets the same. */
static const char sql_counts_7[] =
    "ALTER TABLE `{{TABLE}}_counts` ADD COLUMN"
    " total BIGINT UNSIGNED NOT NULL DEFAULT 0,"
    " MODIFY state ENUM('done', 'dead', 'archived', 'failed', 'requeued',"
    " 'retried', 'purged') NOT NULL;\n";
static const char sql_counts_7_totals[] =
    "UPDATE `{{TABLE}}_counts` SET total = GREATEST(n, 0)"
    " WHERE state IN ('done', 'dead', 'archived');\n";

static enum mq_status
counts_7(struct mq_conn *c)
{
	enum mq_status st = run_script(c, sql_counts_7, "cannot upgrade table");
	unsigned err = mysql_errno(c->db);

	if (st != MQ_OK && err != ER_DUP_FIELDNAME)
		return err == ER_NO_SUCH_TABLE ? MQ_OK : st;
	return run_script(c, sql_counts_7_totals, "cannot upgrade table");
}

/* Upgrade 10's changes to the queues' settings (the limits) and to the
 * archive (the key), before the script: each one ALTER, all or nothing,
 * skipped when it finds its first column there (1060: a rerun after a
 * cut); a table that is not there (1146) is made by the schema
 * afterwards, with them. */
static const char sql_queues_10[] =
    "ALTER TABLE `{{TABLE}}_queues`"
    " ADD COLUMN concurrency INT UNSIGNED NULL,"
    " ADD COLUMN per_key INT UNSIGNED NULL,"
    " ADD COLUMN rate INT UNSIGNED NULL,"
    " ADD COLUMN rate_us BIGINT UNSIGNED NULL,"
    " ADD COLUMN key_rate INT UNSIGNED NULL,"
    " ADD COLUMN key_rate_us BIGINT UNSIGNED NULL,"
    " ADD CONSTRAINT `{{TABLE}}_queues_limits` CHECK ((concurrency IS NULL"
    " OR concurrency >= 1) AND (per_key IS NULL OR per_key >= 1)"
    " AND (rate IS NULL) = (rate_us IS NULL) AND (rate IS NULL"
    " OR (rate >= 1 AND rate_us >= 1)) AND (key_rate IS NULL) ="
    " (key_rate_us IS NULL) AND (key_rate IS NULL"
    " OR (key_rate >= 1 AND key_rate_us >= 1))),"
    " COMMENT='mq queues 3';\n";
static const char sql_archive_10[] =
    "ALTER TABLE `{{TABLE}}_archive` ADD COLUMN job_key VARBINARY(255) NULL;\n";

static enum mq_status
alter_once(struct mq_conn *c, const char *sql)
{
	enum mq_status st = run_script(c, sql, "cannot upgrade table");
	unsigned err = mysql_errno(c->db);

	if (st != MQ_OK && (err == ER_DUP_FIELDNAME || err == ER_NO_SUCH_TABLE))
		return MQ_OK;
	return st;
}

static enum mq_status
limits_10(struct mq_conn *c)
{
	enum mq_status st = alter_once(c, sql_queues_10);

	return st == MQ_OK ? alter_once(c, sql_archive_10) : st;
}

/* Counts just made (or made by hand, or whose filling was cut short)
 * start from what the tables hold; the comment says when that is done. */
static enum mq_status
use_and_fill(struct mq_conn *c, const char *table)
{
	enum mq_status st;

	if ((st = mq_use_table(c, table)) != MQ_OK)
		return st;
	if ((st = mq_recount(c)) != MQ_OK)
		return st;
	return run_script(c, sql_counts_filled, "cannot fill the counts");
}

/* Each companion's SHOW CREATE TABLE, and the start of the comment it
 * has (kept by every schema version), in the order of companions[]. */
static const char *const companion_ddl[][2] = {
	{ "SHOW CREATE TABLE `{{TABLE}}_queues`", "mq queues " },
	{ "SHOW CREATE TABLE `{{TABLE}}_archive`", "mq archive " },
	{ "SHOW CREATE TABLE `{{TABLE}}_counts`", "mq counts " },
	{ "SHOW CREATE TABLE `{{TABLE}}_history`", "mq history " },
	{ "SHOW CREATE TABLE `{{TABLE}}_waiters`", "mq waiters " },
	{ "SHOW CREATE TABLE `{{TABLE}}_gates`", "mq gates " },
	{ "SHOW CREATE TABLE `{{TABLE}}_ticks`", "mq ticks " },
	{ "SHOW CREATE TABLE `{{TABLE}}_deps`", "mq deps " },
	{ "SHOW CREATE TABLE `{{TABLE}}_waits`", "mq waits " },
	{ "SHOW CREATE TABLE `{{TABLE}}_schedules`", "mq schedules " },
	{ "SHOW CREATE TABLE `{{TABLE}}_fired`", "mq fired " },
};

/* mq init: a companion that is there is one of mq's, of its kind. The
 * schema's CREATE TABLE IF NOT EXISTS would pass over another table of
 * that name (the job table of "mq init --table jobs_archive" before
 * "mq init --table jobs"), and every later archive of jobs would fail. */
static enum mq_status
check_companions(struct mq_conn *c, const char *database)
{
	char comment[256], *sql;
	MYSQL_RES *res;
	MYSQL_ROW row;
	size_t k;
	int failed, fields;

	for (k = 0; k < NCOMP; k++) {
		if ((sql = mq__expand(companion_ddl[k][0], c->table,
		    NULL)) == NULL)
			return mq__fail(c, MQ_ENOMEM, "out of memory");
		failed = mysql_real_query(c->db, sql, strlen(sql)) != 0;
		free(sql);
		if (failed && mysql_errno(c->db) == ER_NO_SUCH_TABLE)
			continue;	/* made next */
		if (failed || (res = mysql_store_result(c->db)) == NULL)
			return mq__dberr(c, NULL, "cannot read table status");
		row = mysql_fetch_row(res);
		fields = (int)mysql_num_fields(res);
		table_comment(row && fields >= 2 ? row[1] : NULL, comment,
		    sizeof comment);
		mysql_free_result(res);
		if (strncmp(comment, companion_ddl[k][1],
		    strlen(companion_ddl[k][1])) != 0)
			return mq__fail(c, MQ_ESCHEMA, "table '%s.%s%s' exists "
			    "and is not the %.*stable of %s: rename or drop it, "
			    "or choose another --table", database, c->table,
			    companions[k], (int)strlen(companion_ddl[k][1]) - 3,
			    companion_ddl[k][1] + 3, c->table);
	}
	return MQ_OK;
}

static enum mq_status
init_tables(struct mq_conn *c, const char *table, struct mq_init_report *rep)
{
	struct probe p;
	enum mq_status st;
	size_t k;
	int v;

	memset(rep, 0, sizeof *rep);
	if ((st = set_table(c, table)) != MQ_OK)
		return st;
	if ((st = probe(c, table, &p, 1)) != MQ_OK)
		return st;
	if ((st = check_wsrep(c, &p)) != MQ_OK)
		return st;
	if ((st = session_logs_rows(c, &p)) != MQ_OK)
		return st;
	if ((st = check_companions(c, p.database)) != MQ_OK)
		return st;
	if (!p.exists) {
		rep->created = 1;
		if ((st = run_script(c, mq_sql_schema,
		    "cannot create table")) != MQ_OK)
			return st;
		return use_and_fill(c, table);
	}
	v = schema_version(p.comment);
	if (v == 0 || v > MQ_SCHEMA_VERSION)
		return check_version(c, table, &p);
	if ((st = check_engine(c, table, &p)) != MQ_OK)
		return st;
	rep->from_version = v;
	/* rows no upgrade can take: refused before any changes (the bad
	 * names before 6 hold those with a '/') */
	if (v < 6 && (st = refuse_rows(c, sql_bad_queues, 6,
	    "a queue name mq does not accept")) != MQ_OK)
		return st;
	if (v >= 6 && v < 8 && (st = refuse_rows(c, sql_slash_dedup, 8,
	    "a '/' in their queue name and a dedup key (upgrade 8's unique "
	    "key, queue/key, could find two of them equal)")) != MQ_OK)
		return st;
	/* each upgrade script records its version last: rerun-safe */
	for (; v < MQ_SCHEMA_VERSION; v++) {
		if (v + 1 == 7 && (st = counts_7(c)) != MQ_OK)
			return st;
		if (v + 1 == 10 && (st = limits_10(c)) != MQ_OK)
			return st;
		if ((st = run_script(c, upgrades[v + 1],
		    "cannot upgrade table")) != MQ_OK)
			return st;
	}
	for (k = 0; k < NCOMP && p.companion[k]; k++)
		;
	if (k < NCOMP) {
		/* someone dropped one: the schema's IF NOT EXISTS remakes it */
		rep->companions_created =
		    rep->from_version == MQ_SCHEMA_VERSION;
		if ((st = run_script(c, mq_sql_schema,
		    "cannot create table")) != MQ_OK)
			return st;
	}
	/* an upgrade may have finished or buried jobs (6 repairs rows):
	 * the counts are made right again */
	if (p.companion[2] && strcmp(p.counts_comment, COUNTS_FILLED) == 0 &&
	    rep->from_version == MQ_SCHEMA_VERSION)
		return mq_use_table(c, table);
	return use_and_fill(c, table);
}

enum mq_status
mq_init(struct mq_conn *c, const char *table, struct mq_init_report *rep)
{
	enum mq_status st = init_tables(c, table, rep);

	/* after the tables: their primary keys are among what is checked */
	if (st == MQ_OK)
		st = mq__galera_check(c, &rep->galera);
	if (st == MQ_OK)
		st = mq__durability_check(c, &rep->durability);
	return st;
}
