/*
 * galera.c: what mq needs of a Galera cluster, checked by mq init on a
 * node (wsrep on). Without ROW binlogs a node refuses or mangles writes;
 * with innodb_autoinc_lock_mode other than 2 concurrent pushes on one
 * node deadlock on the table's AUTO-INC lock; a table without a primary
 * key is replicated row by row with a full scan per row and certified
 * without keys. The node's state and its place in the cluster are
 * reported, not required.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Text query: no input but the server's own names. Tables without a
 * primary key in the database (base tables: views have none). */
static const char sql_galera[] =
    "SELECT @@GLOBAL.binlog_format, @@GLOBAL.innodb_autoinc_lock_mode,"
    " (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    "  WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT'),"
    " (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    "  WHERE VARIABLE_NAME = 'WSREP_LOCAL_INDEX'),"
    " (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    "  WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'),"
    " (SELECT COUNT(*) FROM information_schema.TABLES t"
    "  WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE'"
    "  AND NOT EXISTS (SELECT 1 FROM information_schema.TABLE_CONSTRAINTS k"
    "   WHERE k.TABLE_SCHEMA = t.TABLE_SCHEMA"
    "   AND k.TABLE_NAME = t.TABLE_NAME"
    "   AND k.CONSTRAINT_TYPE = 'PRIMARY KEY')),"
    " (SELECT GROUP_CONCAT(t.TABLE_NAME ORDER BY t.TABLE_NAME SEPARATOR ', ')"
    "  FROM information_schema.TABLES t"
    "  WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE'"
    "  AND NOT EXISTS (SELECT 1 FROM information_schema.TABLE_CONSTRAINTS k"
    "   WHERE k.TABLE_SCHEMA = t.TABLE_SCHEMA"
    "   AND k.TABLE_NAME = t.TABLE_NAME"
    "   AND k.CONSTRAINT_TYPE = 'PRIMARY KEY'))";

static void
cell(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

enum mq_status
mq__galera_check(struct mq_conn *c, struct mq_galera_report *g)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	char binlog[32] = "", autoinc[16] = "";

	memset(g, 0, sizeof *g);
	if (!c->galera)
		return MQ_OK;
	g->on = 1;
	if (mysql_real_query(c->db, sql_galera, sizeof sql_galera - 1) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot read the Galera settings");
	if ((row = mysql_fetch_row(res)) != NULL) {
		cell(binlog, sizeof binlog, row[0]);
		cell(autoinc, sizeof autoinc, row[1]);
		cell(g->state, sizeof g->state, row[2]);
		g->node = row[3] ? strtoul(row[3], NULL, 10) + 1 : 0;
		g->nodes = row[4] ? strtoul(row[4], NULL, 10) : 0;
		g->no_pk = row[5] ? strtoul(row[5], NULL, 10) : 0;
		cell(g->no_pk_names, sizeof g->no_pk_names, row[6]);
	}
	mysql_free_result(res);
	if (strcmp(binlog, "ROW") != 0 || strcmp(autoinc, "2") != 0)
		return mq__fail(c, MQ_ECONFIG, "this Galera node has "
		    "binlog_format=%s and innodb_autoinc_lock_mode=%s; mq needs "
		    "binlog_format=ROW and innodb_autoinc_lock_mode=2 on every "
		    "node (set them in the server's configuration)", binlog,
		    autoinc);
	return MQ_OK;
}

/* Reads and writes on a Galera node do not wait for the write sets of
 * other nodes to be applied here: a job claimed on another node an
 * instant ago may still look ready on this one, and its receipt lost.
 * An ack, fail or extend that found its receipt lost is therefore run
 * once more after a causality check (wsrep_sync_wait: the node first
 * applies all the cluster committed before), and only then, so that it
 * costs nothing more when all is well. A second run cannot apply twice:
 * the receipt's token fences it (a job acked or failed is no longer
 * leased with that token). The session's own wsrep_sync_wait is kept,
 * and put back. */
static const char sql_catch_up[] =
    "SET @mq_sync_wait = @@SESSION.wsrep_sync_wait,"
    " SESSION wsrep_sync_wait = 3";
static const char sql_caught_up[] =
    "SET SESSION wsrep_sync_wait = @mq_sync_wait";

/* An operator's reads and writes (cancel, retry, archive, purge, show,
 * why, ls) see what the cluster committed before they started: on a
 * Galera node a job pushed or changed on another node an instant ago is
 * not taken for missing, or for not yet dead (a cancel said "no job",
 * and the job ran). Each transaction of the session from here (at its START
 * TRANSACTION), and each statement outside one (reads, updates), waits
 * for its node to apply what the cluster committed before it: Galera
 * does not wait inside a transaction once begun (so a wait must come
 * before it: mq__in_tx_caught_up). A claim or an ack never asks for
 * that. */
static const char sql_see_cluster[] = "SET SESSION wsrep_sync_wait = 3";

enum mq_status
mq__see_cluster(struct mq_conn *c)
{
	if (!c->galera || c->sees_cluster)
		return MQ_OK;
	if (mysql_real_query(c->db, sql_see_cluster,
	    sizeof sql_see_cluster - 1) != 0)
		return mq__dberr(c, NULL, "cannot wait for the cluster");
	c->sees_cluster = 1;
	return MQ_OK;
}

enum mq_status
mq__catch_up(struct mq_conn *c)
{
	if (mysql_real_query(c->db, sql_catch_up, sizeof sql_catch_up - 1)
	    != 0)
		return mq__dberr(c, NULL, "cannot wait for the cluster");
	return MQ_OK;
}

void
mq__caught_up(struct mq_conn *c)
{
	struct mq_error saved = c->err;

	/* A failed restore changes no outcome (the write may have
	 * committed): the session only waits for the cluster before its
	 * statements from then on, and a lost connection is found by the
	 * next statement. */
	(void)mysql_real_query(c->db, sql_caught_up, sizeof sql_caught_up - 1);
	c->err = saved;
}

enum mq_status
mq__in_tx_caught_up(struct mq_conn *c, mq__txfn fn, void *ctx,
    enum mq_status lost)
{
	struct mq_error saved = c->err;
	enum mq_status rc;

	/* not set: the first outcome stands (the receipt is lost) */
	if (mq__catch_up(c) != MQ_OK) {
		c->err = saved;
		return lost;
	}
	rc = mq__in_tx(c, fn, ctx);
	mq__caught_up(c);
	return rc;
}
