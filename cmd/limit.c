/*
 * limit.c: mq limit: show, set and clear a queue's limits (a row of
 * <table>_queues that every consumer's claim obeys from its next claim;
 * mq-limit(1)), as pause and resume do for pausing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_CONCURRENCY = OPT_CMD, OPT_PER_KEY, OPT_RATE, OPT_KEY_RATE,
	OPT_CLEAR_CONCURRENCY, OPT_CLEAR_PER_KEY, OPT_CLEAR_RATE,
	OPT_CLEAR_KEY_RATE, OPT_CLEAR, OPT_JSON };

static const struct opt opts[] = {
	{ OPT_CONCURRENCY, "concurrency", 0, "N",
	    "at most N jobs of the queue leased at once", COMPLETE_NONE, NULL,
	    NULL, FORM(0), 0 },
	{ OPT_PER_KEY, "per-key", 0, "N",
	    "at most N jobs of one key leased at once", COMPLETE_NONE, NULL,
	    NULL, FORM(0), 0 },
	{ OPT_RATE, "rate", 0, "N/D",
	    "at most N claims of the queue in any window of D (10/s, 600/5m)",
	    COMPLETE_NONE, NULL, NULL, FORM(0), 0 },
	{ OPT_KEY_RATE, "key-rate", 0, "N/D",
	    "at most N claims of one key in any window of D", COMPLETE_NONE,
	    NULL, NULL, FORM(0), 0 },
	{ OPT_CLEAR_CONCURRENCY, "clear-concurrency", 0, NULL,
	    "remove the --concurrency limit", COMPLETE_NONE, NULL, NULL,
	    FORM(0), 0 },
	{ OPT_CLEAR_PER_KEY, "clear-per-key", 0, NULL,
	    "remove the --per-key limit", COMPLETE_NONE, NULL, NULL, FORM(0),
	    0 },
	{ OPT_CLEAR_RATE, "clear-rate", 0, NULL, "remove the --rate limit",
	    COMPLETE_NONE, NULL, NULL, FORM(0), 0 },
	{ OPT_CLEAR_KEY_RATE, "clear-key-rate", 0, NULL,
	    "remove the --key-rate limit", COMPLETE_NONE, NULL, NULL, FORM(0),
	    0 },
	{ OPT_CLEAR, "clear", 0, NULL, "remove every limit of the queue",
	    COMPLETE_NONE, NULL, "--clear", FORM(1), 0 },
	{ OPT_JSON, "json", 0, NULL, "the limits as one JSON object",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command limit_command = {
	"limit", "show, set or clear a queue's limits", opts,
	{ "QUEUE", "QUEUE" }, CMD_HOLDS_STOPS, cmd_limit, NULL
};

/* The largest limit: the columns are INT UNSIGNED. */
#define LIMIT_MAX 4294967295LL

struct limit_args {
	struct mq_limits l;
	unsigned set, clear;	/* MQ_LIMIT_* bits */
	int all, json;
};

/* N/D (cli's rate_arg()): N claims, 1 to LIMIT_MAX, in any window D */
static void
limit_rate(const char *opt, const char *arg, uint32_t *n, uint64_t *us)
{
	uint64_t v;
	int64_t w;

	rate_arg(&limit_command, opt, arg, LIMIT_MAX, &v, &w);
	*n = (uint32_t)v;
	*us = (uint64_t)w;
}

static void
option(void *ctx, int id, const char *arg)
{
	struct limit_args *a = ctx;

	switch (id) {
	case OPT_CONCURRENCY:
		a->l.concurrency = (uint32_t)int_arg(&limit_command,
		    "--concurrency", arg, 1, LIMIT_MAX);
		a->set |= MQ_LIMIT_CONCURRENCY;
		break;
	case OPT_PER_KEY:
		a->l.per_key = (uint32_t)int_arg(&limit_command, "--per-key",
		    arg, 1, LIMIT_MAX);
		a->set |= MQ_LIMIT_PER_KEY;
		break;
	case OPT_RATE:
		limit_rate("--rate", arg, &a->l.rate, &a->l.rate_us);
		a->set |= MQ_LIMIT_RATE;
		break;
	case OPT_KEY_RATE:
		limit_rate("--key-rate", arg, &a->l.key_rate, &a->l.key_rate_us);
		a->set |= MQ_LIMIT_KEY_RATE;
		break;
	case OPT_CLEAR_RATE:
		a->clear |= MQ_LIMIT_RATE;
		break;
	case OPT_CLEAR_KEY_RATE:
		a->clear |= MQ_LIMIT_KEY_RATE;
		break;
	case OPT_CLEAR_CONCURRENCY:
		a->clear |= MQ_LIMIT_CONCURRENCY;
		break;
	case OPT_CLEAR_PER_KEY:
		a->clear |= MQ_LIMIT_PER_KEY;
		break;
	case OPT_CLEAR:
		a->all = 1;
		break;
	case OPT_JSON:
		a->json = 1;
		break;
	}
}

/* A rate's line: "rate 10/1s". */
static void
text_rate(const char *name, uint32_t n, uint64_t us)
{
	char r[LIMIT_RATE_MAX];

	if (n)
		printf("%s %s\n", name, fmt_limit_rate(r, sizeof r, n, us));
}

static void
put_text_limits(const struct mq_limits *l)
{
	if (l->concurrency)
		printf("concurrency %lu\n", (unsigned long)l->concurrency);
	if (l->per_key)
		printf("per-key %lu\n", (unsigned long)l->per_key);
	text_rate("rate", l->rate, l->rate_us);
	text_rate("key-rate", l->key_rate, l->key_rate_us);
	if (!l->concurrency && !l->per_key && !l->rate && !l->key_rate)
		printf("no limits\n");
}

/* ,"name":N or ,"name":null for 0 */
static void
json_limit(const char *name, uint64_t v)
{
	if (v)
		printf(",\"%s\":%llu", name, (unsigned long long)v);
	else
		printf(",\"%s\":null", name);
}

static void
put_json_limits(const char *queue, const struct mq_limits *l)
{
	printf("{\"queue\":");
	put_json_string((const unsigned char *)queue, strlen(queue));
	json_limit("concurrency", l->concurrency);
	json_limit("per_key", l->per_key);
	json_limit("rate", l->rate);
	json_limit("rate_us", l->rate_us);
	json_limit("key_rate", l->key_rate);
	json_limit("key_rate_us", l->key_rate_us);
	printf("}\n");
}

int
cmd_limit(int argc, char **argv, struct mq_global *g)
{
	struct limit_args a;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st = MQ_OK;
	const char *queue;
	int n, changed;

	memset(&a, 0, sizeof a);
	n = parse_options(&limit_command, argc, argv, g, option, &a);
	settle(&limit_command, g, 0);
	if (n != 1)
		usage_error(&limit_command, "one QUEUE expected");
	queue = argv[1];
	if (!mq_valid_queue(queue))
		usage_error(&limit_command, "invalid queue name '%s': use 1 to "
		    "%d of A-Z a-z 0-9 _ . -", shown(queue), MQ_QUEUE_MAX);
	if (a.all && (a.set || a.clear))
		usage_error(&limit_command, "--clear removes every limit: no "
		    "other limit option with it");
	if (a.set & a.clear & MQ_LIMIT_CONCURRENCY)
		usage_error(&limit_command, "--concurrency and "
		    "--clear-concurrency exclude each other");
	if (a.set & a.clear & MQ_LIMIT_PER_KEY)
		usage_error(&limit_command, "--per-key and --clear-per-key "
		    "exclude each other");
	if (a.set & a.clear & MQ_LIMIT_RATE)
		usage_error(&limit_command, "--rate and --clear-rate "
		    "exclude each other");
	if (a.set & a.clear & MQ_LIMIT_KEY_RATE)
		usage_error(&limit_command, "--key-rate and --clear-key-rate "
		    "exclude each other");

	c = open_queue_table(&limit_command, g);
	/* the options' values for what they set; 0 (none) for what they
	 * clear; --clear: every limit, the rates too */
	if (a.all)
		st = mq_limits_set(c, queue, MQ_LIMIT_ALL, &a.l);
	else if (a.set || a.clear)
		st = mq_limits_set(c, queue, a.set | a.clear, &a.l);
	changed = st == MQ_OK && (a.all || a.set || a.clear);
	if (st == MQ_OK)
		st = mq_limits_get(c, queue, &a.l);
	e = *mq_conn_error(c);
	mq_close(c);
	/* the change made, its read-back failed (a lost connection too):
	 * said so, 70 (mq-limit(1)), not a failure of the change (69) */
	if (st != MQ_OK && changed) {
		report(&limit_command, "the change was made, but reading the "
		    "limits back failed", &e);
		n = held_stop_status(&limit_command);
		exit(n ? n : EX_SOFTWARE);
	}
	if (st != MQ_OK)
		die(&limit_command, &e);
	if (a.json)
		put_json_limits(queue, &a.l);
	else
		put_text_limits(&a.l);
	/* the showing form only reads: its reader gone (mq limit q | true),
	 * it ends by SIGPIPE as mq stats does; a form that changed the
	 * limits says a failure (74), as every writer does (mq(1) OUTPUT) */
	if (!a.all && !a.set && !a.clear && flush_read_only() != 0)
		return EX_IOERR;
	return 0;
}
