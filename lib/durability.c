/*
 * durability.c: the server settings under which a transaction the
 * server said was committed (a push mq printed the id of, an ack) can
 * be gone after a crash, read by mq init to warn of them. Reported, not
 * required: a server may be run so on purpose.
 *
 * innodb_flush_log_at_trx_commit other than 1 answers a COMMIT before
 * its redo is on disk: 2 loses the last second's commits when the
 * machine crashes, 0 when mariadbd does. On a Galera cluster 2 is the
 * documented recommendation (the other nodes hold the write set), and
 * Jepsen's analysis of MariaDB Galera Cluster 12.1.2 (2026-03-15,
 * MDEV-38974) lost committed transactions when the nodes crashed within
 * a short time of each other. With the binary log on, it decides which
 * prepared transactions recovery keeps: sync_binlog other than 1 leaves
 * its last events in the page cache, and a machine crash rolls those
 * transactions back although their COMMIT was answered.
 * (wsrep_sync_wait is not read: mq sets it in its own sessions where it
 * relies on it, galera.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Text query: no input. MySQL and MariaDB both have these. */
static const char sql_durability[] =
    "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin,"
    " @@GLOBAL.sync_binlog";

enum mq_status
mq__durability_check(struct mq_conn *c, struct mq_durability_report *d)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	memset(d, 0, sizeof d[0]);
	d->flush_log_at_trx_commit = 1;
	d->sync_binlog = 1;
	if (mysql_real_query(c->db, sql_durability,
	    sizeof sql_durability - 1) != 0 ||
	    (res = mysql_store_result(c->db)) == NULL)
		return mq__dberr(c, NULL, "cannot read the durability settings");
	if ((row = mysql_fetch_row(res)) != NULL) {
		if (row[0])
			d->flush_log_at_trx_commit = strtoul(row[0], NULL, 10);
		d->log_bin = row[1] && strcmp(row[1], "1") == 0;
		if (row[2])
			d->sync_binlog = strtoul(row[2], NULL, 10);
	}
	mysql_free_result(res);
	d->flush_loses = d->flush_log_at_trx_commit != 1;
	d->binlog_loses = d->log_bin && d->sync_binlog != 1;
	return MQ_OK;
}
