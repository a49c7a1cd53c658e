/*
 * check.c: mq check: queue health as a monitoring plugin (Nagios, Icinga,
 * Zabbix, cron, a Kubernetes exec probe, systemd's ExecCondition): one
 * status line with performance data on stdout, and the Monitoring Plugins'
 * exit status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *const state_name[] = { "OK", "WARNING", "CRITICAL",
    "UNKNOWN" };

enum {
	OPT_MAX_AGE = OPT_CMD, OPT_MAX_DEAD, OPT_MAX_STALE, OPT_MAX_READY,
	OPT_WARN_AGE, OPT_WARN_DEAD, OPT_WARN_STALE, OPT_WARN_READY
};

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: every queue)",
	    COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_MAX_AGE, "max-age", 0, "D",
	    "CRITICAL if the oldest ready job waits longer", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_MAX_DEAD, "max-dead", 0, "N", "CRITICAL above N dead jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_STALE, "max-stale", 0, "N", "CRITICAL above N stale leases",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_READY, "max-ready", 0, "N", "CRITICAL above N ready jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_AGE, "warn-age", 0, "D",
	    "WARNING if the oldest ready job waits longer", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_WARN_DEAD, "warn-dead", 0, "N", "WARNING above N dead jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_STALE, "warn-stale", 0, "N", "WARNING above N stale leases",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_READY, "warn-ready", 0, "N", "WARNING above N ready jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

/* The UNKNOWN line of a usage error (the command's usage_hook): a
 * monitoring system reads stdout and the exit status, not stderr. The
 * message is the stderr line's, whose values usage_error's callers escaped
 * already (shown()): escaping it again would double its backslashes, so
 * only a bar, which would start the performance data, becomes \x7c. */
static void
usage_unknown(const char *msg)
{
	fputs("MQ UNKNOWN - usage error: ", stdout);
	for (; *msg; msg++) {
		if (*msg == '|')
			fputs("\\x7c", stdout);
		else
			putchar(*msg);
	}
	putchar('\n');
	fflush(stdout);
	exit(ST_UNKNOWN);
}

const struct command check_command = {
	"check", "health check for Nagios, cron, probes (exit 0-3)", opts,
	{ "", NULL }, COMPLETE_NONE, NULL, CMD_READS_ONLY, cmd_check,
	usage_unknown
};

static void
set_count(struct limit *l, const char *opt, const char *arg)
{
	l->set = 1;
	l->v = int_arg("check", opt, arg, 0, 999999999999999LL);
}

static void
set_age(struct limit *l, const char *opt, const char *arg)
{
	l->set = 1;
	l->v = duration_arg("check", opt, arg);
}

static void
option(void *ctx, int id, const char *arg)
{
	struct check_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:	a->one = 1; break;
	case OPT_MAX_AGE:
		set_age(&a->crit[M_AGE], "--max-age", arg);
		break;
	case OPT_MAX_DEAD:
		set_count(&a->crit[M_DEAD], "--max-dead", arg);
		break;
	case OPT_MAX_STALE:
		set_count(&a->crit[M_STALE], "--max-stale", arg);
		break;
	case OPT_MAX_READY:
		set_count(&a->crit[M_READY], "--max-ready", arg);
		break;
	case OPT_WARN_AGE:
		set_age(&a->warn[M_AGE], "--warn-age", arg);
		break;
	case OPT_WARN_DEAD:
		set_count(&a->warn[M_DEAD], "--warn-dead", arg);
		break;
	case OPT_WARN_STALE:
		set_count(&a->warn[M_STALE], "--warn-stale", arg);
		break;
	case OPT_WARN_READY:
		set_count(&a->warn[M_READY], "--warn-ready", arg);
		break;
	}
}

/* The UNKNOWN line of a failure to connect or to read. */
static int
unknown(const struct mq_error *e)
{
	const char *msg = e->msg[0] ? e->msg : mq_strerror(e->status);

	fputs("MQ UNKNOWN - ", stdout);
	check_put_text((const unsigned char *)msg, strlen(msg));
	if (e->db_errno)
		printf(" (error %u)", e->db_errno);
	putchar('\n');
	return ST_UNKNOWN;
}

int
cmd_check(int argc, char **argv, struct mq_global *g)
{
	struct check_args a;
	struct mq_queue_stats *q;
	uint64_t archived;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	enum state worst = ST_OK, s;
	size_t n, i;
	int nargs, m;

	memset(&a, 0, sizeof a);
	nargs = parse_options(&check_command, argc, argv, g, option, &a);
	settle("check", g, 0);
	if (nargs > 0)
		usage_error("check", "unexpected argument '%s'",
		    shown(argv[1]));

	/* a hung server is UNKNOWN within a monitoring system's usual
	 * 60 s check timeout, not after the default 300 s */
	if (g->conn.connect_timeout_s == 0)
		g->conn.connect_timeout_s = 10;
	if (g->conn.read_timeout_s == 0)
		g->conn.read_timeout_s = 30;
	if ((c = mq_connect(&g->conn, &e)) == NULL)
		return unknown(&e);
	st = mq_use_table(c, g->table);
	if (st == MQ_OK)
		st = mq_stats(c, a.one ? g->queue : NULL, &q, &n, &archived);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		return unknown(&e);

	for (i = 0; i < n; i++)
		for (m = 0; m < M_COUNT; m++)
			if ((s = check_judge(&a, &q[i], m)) > worst)
				worst = s;
	printf("MQ %s - ", state_name[worst]);
	check_put_report(&a, worst, q, n);
	putchar('\n');
	free(q);
	return worst;
}
