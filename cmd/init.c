/*
 * init.c: mq init: create or upgrade the job table and its archive, or
 * print the SQL that would.
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_PRINT = OPT_CMD };

static const struct opt opts[] = {
	{ OPT_PRINT, "print", 0, NULL,
	    "write the SQL to standard output instead", COMPLETE_NONE, NULL,
	    NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command init_command = {
	"init", "create or upgrade the job table", opts, { "", NULL },
	0, cmd_init, NULL
};

static void
option(void *ctx, int id, const char *arg)
{
	if (id == OPT_PRINT)
		*(int *)ctx = 1;
}

/* What mq needs of a Galera node holds (else mq_init failed): say so,
 * and what still deserves a look. */
static void
galera_lines(const struct mq_galera_report *r)
{
	printf("galera: node %lu of %lu (%s); binlog_format ROW, "
	    "innodb_autoinc_lock_mode 2\n", r->node, r->nodes, shown(r->state));
	if (r->no_pk)
		say(&init_command, "warning: %lu table%s of this database "
		    "without a primary key (Galera replicates them slowly and "
		    "certifies them without keys): %s", r->no_pk,
		    r->no_pk == 1 ? "" : "s", shown(r->no_pk_names));
}

/* The settings under which a COMMIT the server answered may be lost in
 * a crash: warned of, on standard error (mq-init(1), DURABILITY). */
static void
durability_lines(const struct mq_durability_report *d, int galera)
{
	if (d->flush_loses)
		say(&init_command, "warning: innodb_flush_log_at_trx_commit "
		    "is %lu: a crash of %s can lose transactions the server "
		    "said were committed (jobs pushed, acks); set it to 1",
		    d->flush_log_at_trx_commit, galera ?
		    "the nodes within a short time of each other" :
		    d->flush_log_at_trx_commit == 0 ? "the server" :
		    "the machine");
	if (d->binlog_loses)
		say(&init_command, "warning: the binary log is on with "
		    "sync_binlog %lu: a crash of the machine can roll back "
		    "transactions the server said were committed; set it to 1",
		    d->sync_binlog);
}

int
cmd_init(int argc, char **argv, struct mq_global *g)
{
	struct mq_init_report rep;
	struct mq_error e;
	struct mq_conn *c;
	int print = 0, n;
	char *sql;

	n = parse_options(&init_command, argc, argv, g, option, &print);
	settle(&init_command, g, 0);
	no_operands(&init_command, n, argv);

	if (print) {
		if ((sql = mq_schema_sql(g->table)) == NULL) {
			return no_memory(&init_command);
		}
		fputs(sql, stdout);
		free(sql);
		return 0;
	}

	g->conn.long_statements = 1;	/* ALTER TABLE of a big table */
	if ((c = mq_connect(&g->conn, &e)) == NULL)
		die(&init_command, &e);
	if (mq_init(c, g->table, &rep) != MQ_OK) {
		e = *mq_conn_error(c);
		mq_close(c);
		die(&init_command, &e);
	}
	mq_close(c);
	if (rep.created)
		printf("created tables %s, %s_archive, %s_queues, "
		    "%s_counts, %s_history, %s_waiters, %s_gates, %s_ticks, "
		    "%s_deps, %s_waits, %s_schedules and %s_fired (schema %d)\n",
		    g->table, g->table, g->table, g->table, g->table, g->table,
		    g->table, g->table, g->table, g->table, g->table, g->table,
		    MQ_SCHEMA_VERSION);
	else if (rep.from_version < MQ_SCHEMA_VERSION)
		printf("upgraded table %s from schema %d to %d\n", g->table,
		    rep.from_version, MQ_SCHEMA_VERSION);
	else if (rep.companions_created)
		printf("table %s is at schema %d; created the missing tables "
		    "next to it\n", g->table, MQ_SCHEMA_VERSION);
	else
		printf("table %s is up to date (schema %d)\n", g->table,
		    MQ_SCHEMA_VERSION);
	if (rep.galera.on)
		galera_lines(&rep.galera);
	durability_lines(&rep.durability, rep.galera.on);
	return 0;
}
