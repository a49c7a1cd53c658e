/*
 * check.c: mq check: queue health as a monitoring plugin (Nagios, Icinga,
 * Zabbix, cron, a Kubernetes exec probe, systemd's ExecCondition): one
 * status line with performance data on stdout, and the Monitoring Plugins'
 * exit status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "units.h"

/* The Monitoring Plugins' states, which are also the exit statuses. */
enum state { ST_OK, ST_WARNING, ST_CRITICAL, ST_UNKNOWN };

static const char *const state_name[] = { "OK", "WARNING", "CRITICAL",
    "UNKNOWN" };

/* What a threshold watches; the order of the text. */
enum metric { M_AGE, M_DEAD, M_STALE, M_READY, M_COUNT };

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

const struct command check_command = {
	"check", "health check for Nagios, cron, probes (exit 0-3)", opts,
	{ "", NULL }, COMPLETE_NONE, NULL, 0, cmd_check
};

/* A threshold: set, and its limit (microseconds for the age). The state
 * trips when the value is above the limit, as the Monitoring Plugins'
 * threshold "N" (the range 0 to N) does. */
struct limit {
	int set;
	long long v;
};

struct check_args {
	int one;
	struct limit crit[M_COUNT], warn[M_COUNT];
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

/* Text of the status line, from the table or the server: shown as
 * put_text() shows it (one line, no control character), and '|', which
 * would start the performance data, as \x7c. */
static void
put_line_text(const unsigned char *p, size_t n)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o;

	for (i = 0; i < n; ) {
		if (p[i] == '|') {
			fputs("\\x7c", stdout);
			i++;
			continue;
		}
		i += text_next(p + i, n - i, out, &o);
		fwrite(out, 1, o, stdout);
	}
}

/* The UNKNOWN line of a usage error (usage_hook): a monitoring system
 * reads stdout and the exit status, not stderr. */
static void
usage_unknown(const char *msg)
{
	fputs("MQ UNKNOWN - usage error: ", stdout);
	put_line_text((const unsigned char *)msg, strlen(msg));
	putchar('\n');
	fflush(stdout);
	exit(ST_UNKNOWN);
}

/* The UNKNOWN line of a failure to connect or to read. */
static int
unknown(const struct mq_error *e)
{
	const char *msg = e->msg[0] ? e->msg : mq_strerror(e->status);

	fputs("MQ UNKNOWN - ", stdout);
	put_line_text((const unsigned char *)msg, strlen(msg));
	if (e->db_errno)
		printf(" (error %u)", e->db_errno);
	putchar('\n');
	return ST_UNKNOWN;
}

/* A queue's value of metric m: ages in microseconds. */
static long long
value(const struct mq_queue_stats *q, enum metric m)
{
	switch (m) {
	case M_AGE:	return (long long)(q->oldest_ready_s * 1e6);
	case M_DEAD:	return (long long)q->dead;
	case M_STALE:	return (long long)q->stale;
	case M_READY:	return (long long)q->ready;
	default:	return 0;
	}
}

/* The state of metric m of queue q: the critical threshold wins. */
static enum state
judge(const struct check_args *a, const struct mq_queue_stats *q,
    enum metric m)
{
	long long v = value(q, m);

	if (a->crit[m].set && v > a->crit[m].v)
		return ST_CRITICAL;
	if (a->warn[m].set && v > a->warn[m].v)
		return ST_WARNING;
	return ST_OK;
}

#define QNAME(q) (const unsigned char *)(q)->queue, (q)->queue_len

/* "12 dead > 10 (critical)": one threshold that tripped. */
static void
put_crossing(const struct check_args *a, const struct mq_queue_stats *q,
    enum metric m, enum state s)
{
	static const char *const what[] = { "", "dead", "stale", "ready" };
	const struct limit *l = s == ST_CRITICAL ? &a->crit[m] : &a->warn[m];
	char d[DURATION_MAX], t[DURATION_MAX];

	if (m == M_AGE)
		printf("oldest ready %s > %s", fmt_duration(d, sizeof d,
		    value(q, m)), fmt_duration(t, sizeof t, l->v));
	else
		printf("%lld %s > %lld", value(q, m), what[m], l->v);
	printf(" (%s)", s == ST_CRITICAL ? "critical" : "warning");
}

/* The text after "MQ STATE - " when something tripped: what crossed
 * which threshold, per queue, the critical ones first. */
static void
put_problems(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	size_t i, groups = 0;
	int m, first;
	enum state level;

	for (level = ST_CRITICAL; level >= ST_WARNING; level--)
		for (i = 0; i < n; i++) {
			first = 1;
			for (m = 0; m < M_COUNT; m++) {
				if (judge(a, &q[i], m) != level)
					continue;
				if (first) {
					fputs(groups++ ? "; " : "", stdout);
					put_line_text(QNAME(&q[i]));
					fputs(": ", stdout);
				} else {
					fputs(", ", stdout);
				}
				first = 0;
				put_crossing(a, &q[i], m, level);
			}
		}
}

/* The text when nothing tripped: the totals. */
static void
put_summary(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	unsigned long long ready = 0, stale = 0, dead = 0;
	double oldest = 0;
	char d[DURATION_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		ready += q[i].ready;
		stale += q[i].stale;
		dead += q[i].dead;
		if (q[i].ready && q[i].oldest_ready_s > oldest)
			oldest = q[i].oldest_ready_s;
	}
	if (a->one) {
		fputs("queue ", stdout);
		put_line_text(QNAME(&q[0]));
		fputs(": ", stdout);
	} else {
		printf("%zu queue%s: ", n, PLURAL(n));
	}
	printf("%llu ready, %llu stale, %llu dead", ready, stale, dead);
	if (ready)
		printf(", oldest ready %s", fmt_duration(d, sizeof d,
		    (int64_t)(oldest * 1e6)));
}

/* "; paused: a, b" */
static void
put_paused(const struct mq_queue_stats *q, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (!q[i].paused)
			continue;
		fputs(k++ ? ", " : "; paused: ", stdout);
		put_line_text(QNAME(&q[i]));
	}
}

/* A threshold in perfdata: empty if not set; an age in seconds. */
static void
put_limit(const struct limit *l, int age)
{
	if (!l->set)
		return;
	if (!age) {
		printf("%lld", l->v);
		return;
	}
	printf("%lld", l->v / 1000000);
	if (l->v % 1000000) {
		char frac[8];
		size_t k;

		snprintf(frac, sizeof frac, "%06lld", l->v % 1000000);
		for (k = strlen(frac); k > 0 && frac[k - 1] == '0'; k--)
			frac[k - 1] = '\0';
		printf(".%s", frac);
	}
}

/* One perfdata item: 'QUEUE.NAME'=VALUE[s];WARN;CRIT;0 */
static void
put_perf(const struct check_args *a, const struct mq_queue_stats *q,
    const char *name, int m, unsigned long long v)
{
	printf(" '%.*s.%s'=", (int)q->queue_len, q->queue, name);
	if (m == M_AGE)
		printf("%.3fs", q->oldest_ready_s);
	else
		printf("%llu", v);
	putchar(';');
	if (m >= 0)
		put_limit(&a->warn[m], m == M_AGE);
	putchar(';');
	if (m >= 0)
		put_limit(&a->crit[m], m == M_AGE);
	fputs(";0", stdout);
}

/* Performance data of the queues whose names mq could have written
 * (A-Z a-z 0-9 _ . -): such a name needs no quoting in a label, and no
 * graphing tool mangles it. Another name (a row written by another
 * program) has no perfdata: its thresholds still count, and the text
 * names it, escaped. */
static void
put_perfdata(const struct check_args *a, const struct mq_queue_stats *q,
    size_t n)
{
	size_t i;
	int any = 0;

	for (i = 0; i < n; i++) {
		if (strlen(q[i].queue) != q[i].queue_len ||
		    !mq_valid_queue(q[i].queue))
			continue;
		if (!any++)
			fputs(" |", stdout);
		put_perf(a, &q[i], "ready", M_READY, q[i].ready);
		put_perf(a, &q[i], "scheduled", -1, q[i].scheduled);
		put_perf(a, &q[i], "leased", -1, q[i].leased);
		put_perf(a, &q[i], "stale", M_STALE, q[i].stale);
		put_perf(a, &q[i], "dead", M_DEAD, q[i].dead);
		put_perf(a, &q[i], "oldest_ready", M_AGE, 0);
	}
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

	reads_only = 1;
	usage_hook = usage_unknown;
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
			if ((s = judge(&a, &q[i], m)) > worst)
				worst = s;
	printf("MQ %s - ", state_name[worst]);
	if (worst == ST_OK)
		put_summary(&a, q, n);
	else
		put_problems(&a, q, n);
	put_paused(q, n);
	put_perfdata(&a, q, n);
	putchar('\n');
	free(q);
	return worst;
}
