/*
 * stats.c: mq stats: queue health for operators and monitoring: a table,
 * JSON, or the Prometheus text format (for node_exporter's textfile
 * collector).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_JSON = OPT_CMD, OPT_PROMETHEUS, OPT_RECOUNT };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: every queue)",
	    COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_JSON, "json", 0, NULL, "one JSON object", COMPLETE_NONE, NULL,
	    "[--json | --prometheus]", 0, 0 },
	{ OPT_PROMETHEUS, "prometheus", 0, NULL,
	    "Prometheus text exposition format", COMPLETE_NONE, NULL, "", 0,
	    0 },
	{ OPT_RECOUNT, "recount", 0, NULL,
	    "count done, dead and archived jobs from the\ntables first (after "
	    "rows were changed by hand)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command stats_command = {
	"stats", "queue health: counts, ages", opts, { "", NULL },
	CMD_READS_ONLY, cmd_stats, NULL
};

struct stats_args {
	int json, prom, one, recount;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct stats_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:		a->one = 1; break;
	case OPT_JSON:		a->json = 1; break;
	case OPT_PROMETHEUS:	a->prom = 1; break;
	case OPT_RECOUNT:	a->recount = 1; break;
	}
}

/* A queue's name as text: another program may have written any bytes. */
#define QNAME(q) (const unsigned char *)(q).queue, (q).queue_len

/* A limit as a cell: "-" for none. */
static void
limit_cell(char *cell, uint32_t v)
{
	if (v)
		snprintf(cell, TABLE_CELL, "%lu", (unsigned long)v);
	else
		snprintf(cell, TABLE_CELL, "-");
}

/* A rate limit as a cell, as mq limit shows it ("10/1s"; "-": none):
 * the cell holds the longest (LIMIT_RATE_MAX). */
static void
rate_cell(char *cell, uint32_t n, uint64_t us)
{
	char r[LIMIT_RATE_MAX];

	snprintf(cell, TABLE_CELL, "%s", fmt_limit_rate(r, sizeof r, n, us));
}

/* The table: counts as plain integers, the oldest ready job's age in
 * human units (mq(1) OUTPUT), "-" in a queue with no ready job; the
 * limits ("-": none) and the due jobs they hold back last. */
static void
print_table(const struct mq_queue_stats *q, size_t n, uint64_t archived)
{
	static const char *const head[] = { "QUEUE", "READY", "SCHEDULED",
	    "WAITING", "LEASED", "STALE", "DONE", "DEAD", "RECURRING", "PAUSED",
	    "OLDEST_READY", "CONCURRENCY", "PER_KEY", "RATE", "KEY_RATE",
	    "HELD" };
	struct table_row *r = calloc(n ? n : 1, sizeof *r);
	size_t i, k;

	if (r == NULL) {
		exit(no_memory(&stats_command));
	}
	for (i = 0; i < n; i++) {
		const uint64_t v[] = { q[i].ready, q[i].scheduled,
		    q[i].waiting, q[i].leased, q[i].stale, q[i].done,
		    q[i].dead, q[i].recurring };
		r[i].name = (const unsigned char *)q[i].queue;
		r[i].name_len = q[i].queue_len;
		for (k = 0; k < 8; k++)
			snprintf(r[i].cell[k + 1], TABLE_CELL, "%llu",
			    (unsigned long long)v[k]);
		snprintf(r[i].cell[9], TABLE_CELL, "%s",
		    q[i].paused ? "yes" : "no");
		fmt_duration(r[i].cell[10], TABLE_CELL, q[i].ready ?
		    (int64_t)(q[i].oldest_ready_s * 1e6) : -1);
		limit_cell(r[i].cell[11], q[i].concurrency);
		limit_cell(r[i].cell[12], q[i].per_key);
		rate_cell(r[i].cell[13], q[i].rate, q[i].rate_us);
		rate_cell(r[i].cell[14], q[i].key_rate, q[i].key_rate_us);
		snprintf(r[i].cell[15], TABLE_CELL, "%llu",
		    (unsigned long long)q[i].held_back);
	}
	table_print(head, 16, r, n);
	free(r);
	printf("archive: %llu job%s\n", (unsigned long long)archived,
	    PLURAL(archived));
}

/* The counters, by name, in the order mq-stats(1) lists them. */
#define NCOUNTERS 8
static const char *const counter_names[NCOUNTERS] = { "pushed", "done",
    "failed", "dead", "requeued", "retried", "archived", "purged" };
static const char *const counter_help[NCOUNTERS] = {
	"Jobs pushed (mq push, or an INSERT by another program)",
	"Jobs acked (done; a recurring job's runs are not counted)",
	"Failed attempts that will be retried",
	"Jobs buried (failed for good, cancelled, or their last lease "
	"expired)",
	"Expired leases taken back by mq requeue-stale",
	"Dead jobs put back by mq retry",
	"Finished jobs moved to the archive",
	"Waiting or running jobs deleted by mq purge",
};

static void
counter_values(const struct mq_queue_stats *q, uint64_t v[NCOUNTERS])
{
	const struct mq_counters *t = &q->total;

	v[0] = t->pushed;
	v[1] = t->done;
	v[2] = t->failed;
	v[3] = t->dead;
	v[4] = t->requeued;
	v[5] = t->retried;
	v[6] = t->archived;
	v[7] = t->purged;
}

/* ,"counters":{...}} closing a queue's object */
static void
print_json_counters(const struct mq_queue_stats *q)
{
	uint64_t v[NCOUNTERS];
	size_t k;

	counter_values(q, v);
	for (k = 0; k < NCOUNTERS; k++)
		printf("%s\"%s\":%llu", k ? "," : ",\"counters\":{",
		    counter_names[k], (unsigned long long)v[k]);
	printf("}}");
}

/* ,"name":N, or null for no limit (as mq limit --json) */
static void
json_limit(const char *name, uint64_t v)
{
	if (v)
		printf(",\"%s\":%llu", name, (unsigned long long)v);
	else
		printf(",\"%s\":null", name);
}

static void
print_json(const char *table, const struct mq_queue_stats *q, size_t n,
    uint64_t archived)
{
	size_t i;

	printf("{\"table\":\"%s\",\"queues\":[", table);
	for (i = 0; i < n; i++) {
		printf("%s{\"queue\":", i ? "," : "");
		put_json_string(QNAME(q[i]));
		printf(",\"ready\":%llu,\"scheduled\":%llu,\"waiting\":%llu,"
		    "\"leased\":%llu,\"stale\":%llu,\"done\":%llu,"
		    "\"dead\":%llu,\"recurring\":%llu,\"paused\":%s,"
		    "\"oldest_ready_seconds\":",
		    (unsigned long long)q[i].ready,
		    (unsigned long long)q[i].scheduled,
		    (unsigned long long)q[i].waiting,
		    (unsigned long long)q[i].leased,
		    (unsigned long long)q[i].stale,
		    (unsigned long long)q[i].done,
		    (unsigned long long)q[i].dead,
		    (unsigned long long)q[i].recurring,
		    q[i].paused ? "true" : "false");
		/* no ready job, no age: null, as the table's '-' */
		if (q[i].ready)
			printf("%.3f", q[i].oldest_ready_s);
		else
			fputs("null", stdout);
		json_limit("concurrency", q[i].concurrency);
		json_limit("per_key", q[i].per_key);
		json_limit("rate", q[i].rate);
		json_limit("rate_us", q[i].rate_us);
		json_limit("key_rate", q[i].key_rate);
		json_limit("key_rate_us", q[i].key_rate_us);
		printf(",\"held_back\":%llu",
		    (unsigned long long)q[i].held_back);
		print_json_counters(&q[i]);
	}
	printf("],\"archive\":%llu}\n", (unsigned long long)archived);
}

/* "NAME{table="T",queue="Q"" of one sample line: the caller closes the
 * braces. Every label value goes through put_prom_label (the others,
 * state and limit, are mq's own words): a name could otherwise end the
 * label, or the line, and forge samples, or share a series with
 * another. */
static void
labels(const char *name, const char *table, const struct mq_queue_stats *q)
{
	printf("%s{table=\"", name);
	put_prom_label((const unsigned char *)table, strlen(table));
	fputs("\",queue=\"", stdout);
	put_prom_label(QNAME(*q));
	putchar('"');
}

/* The gauges of each queue after mq_jobs, in their order. */
static const struct {
	const char *name, *help;
} gauges[] = {
	{ "mq_stale_leases", "Leased jobs whose lease has expired "
	    "(mq requeue-stale puts them back)." },
	{ "mq_recurring_jobs", "Recurring jobs (ready, scheduled or leased; "
	    "also counted in mq_jobs)." },
	{ "mq_queue_paused", "Whether the queue is paused." },
	{ "mq_oldest_ready_age_seconds", "Age of the oldest job that is due "
	    "and waiting, 0 if none." },
	{ "mq_jobs_held_back", "Jobs due and waiting that a limit of the "
	    "queue holds back now (its concurrency or their key's slots all "
	    "held, or the rate window of the queue or of their key full)." },
};

/* The end of gauges[k]'s sample line for q: "} VALUE". */
static void
put_gauge(size_t k, const struct mq_queue_stats *q)
{
	switch (k) {
	case 0:	printf("} %llu\n", (unsigned long long)q->stale); break;
	case 1:	printf("} %llu\n", (unsigned long long)q->recurring); break;
	case 2:	printf("} %d\n", q->paused); break;
	case 3:	printf("} %.3f\n", q->oldest_ready_s); break;
	default: printf("} %llu\n", (unsigned long long)q->held_back); break;
	}
}

/* us in seconds, exact, and the line's end: "1", "1.5", "0.000001". */
static void
put_seconds(uint64_t us)
{
	char frac[8];
	int k;

	snprintf(frac, sizeof frac, "%06llu",
	    (unsigned long long)(us % 1000000));
	for (k = 5; k >= 0 && frac[k] == '0'; k--)
		frac[k] = '\0';
	printf("%llu%s%s\n", (unsigned long long)(us / 1000000),
	    frac[0] ? "." : "", frac);
}

static void
print_prometheus(const char *table, const struct mq_queue_stats *q, size_t n,
    uint64_t archived)
{
	static const char *const states[] = { "ready", "scheduled",
	    "waiting", "leased", "done", "dead" };
	size_t i, k;

	printf("# HELP mq_jobs Jobs in the table by queue and state (ready: "
	    "due now; scheduled: due later; waiting: for parents not done "
	    "yet).\n# TYPE mq_jobs gauge\n");
	for (i = 0; i < n; i++) {
		const uint64_t v[] = { q[i].ready, q[i].scheduled,
		    q[i].waiting, q[i].leased, q[i].done, q[i].dead };
		for (k = 0; k < 6; k++) {
			labels("mq_jobs", table, &q[i]);
			printf(",state=\"%s\"} %llu\n", states[k],
			    (unsigned long long)v[k]);
		}
	}
	for (k = 0; k < sizeof gauges / sizeof gauges[0]; k++) {
		printf("# HELP %s %s\n# TYPE %s gauge\n", gauges[k].name,
		    gauges[k].help, gauges[k].name);
		for (i = 0; i < n; i++) {
			labels(gauges[k].name, table, &q[i]);
			put_gauge(k, &q[i]);
		}
	}
	printf("# HELP mq_queue_limit The queue's limits (mq limit): at most "
	    "that many jobs leased at once, of the queue (concurrency) or of "
	    "one key (per_key); at most that many claims in any window "
	    "(mq_queue_limit_window_seconds), of the queue (rate) or of one "
	    "key (key_rate); no sample for a limit not set.\n"
	    "# TYPE mq_queue_limit gauge\n");
	for (i = 0; i < n; i++) {
		if (q[i].concurrency) {
			labels("mq_queue_limit", table, &q[i]);
			printf(",limit=\"concurrency\"} %lu\n",
			    (unsigned long)q[i].concurrency);
		}
		if (q[i].per_key) {
			labels("mq_queue_limit", table, &q[i]);
			printf(",limit=\"per_key\"} %lu\n",
			    (unsigned long)q[i].per_key);
		}
		if (q[i].rate) {
			labels("mq_queue_limit", table, &q[i]);
			printf(",limit=\"rate\"} %lu\n",
			    (unsigned long)q[i].rate);
		}
		if (q[i].key_rate) {
			labels("mq_queue_limit", table, &q[i]);
			printf(",limit=\"key_rate\"} %lu\n",
			    (unsigned long)q[i].key_rate);
		}
	}
	printf("# HELP mq_queue_limit_window_seconds The window of the "
	    "queue's rate limits (mq limit): of the queue (rate) or of one "
	    "key (key_rate); no sample for a limit not set.\n"
	    "# TYPE mq_queue_limit_window_seconds gauge\n");
	for (i = 0; i < n; i++) {
		if (q[i].rate) {
			labels("mq_queue_limit_window_seconds", table, &q[i]);
			printf(",limit=\"rate\"} ");
			put_seconds(q[i].rate_us);
		}
		if (q[i].key_rate) {
			labels("mq_queue_limit_window_seconds", table, &q[i]);
			printf(",limit=\"key_rate\"} ");
			put_seconds(q[i].key_rate_us);
		}
	}
	for (k = 0; k < NCOUNTERS; k++) {
		printf("# HELP mq_jobs_%s_total %s.\n"
		    "# TYPE mq_jobs_%s_total counter\n", counter_names[k],
		    counter_help[k], counter_names[k]);
		for (i = 0; i < n; i++) {
			uint64_t v[NCOUNTERS];
			char name[40];
			counter_values(&q[i], v);
			snprintf(name, sizeof name, "mq_jobs_%s_total",
			    counter_names[k]);
			labels(name, table, &q[i]);
			printf("} %llu\n", (unsigned long long)v[k]);
		}
	}
	printf("# HELP mq_archive_jobs Jobs moved to the archive table and "
	    "still there.\n"
	    "# TYPE mq_archive_jobs gauge\n"
	    "mq_archive_jobs{table=\"");
	put_prom_label((const unsigned char *)table, strlen(table));
	printf("\"} %llu\n", (unsigned long long)archived);
}

int
cmd_stats(int argc, char **argv, struct mq_global *g)
{
	struct stats_args a = { 0, 0, 0, 0 };
	struct mq_queue_stats *q;
	uint64_t archived;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	size_t n;
	int nargs;

	nargs = parse_options(&stats_command, argc, argv, g, option, &a);
	settle(&stats_command, g, 0);
	if (a.json && a.prom)
		usage_error(&stats_command, "--json and --prometheus exclude each other");
	no_operands(&stats_command, nargs, argv);

	c = open_queue_table(&stats_command, g);
	st = a.recount ? mq_recount(c) : MQ_OK;
	if (st == MQ_OK)
		st = mq_stats(c, a.one ? g->queue : NULL, &q, &n, &archived);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&stats_command, &e);
	if (a.json)
		print_json(g->table, q, n, archived);
	else if (a.prom)
		print_prometheus(g->table, q, n, archived);
	else
		print_table(q, n, archived);
	free(q);
	return 0;
}
