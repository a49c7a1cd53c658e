/*
 * push.c: mq push: one job from the argument or all of stdin, or a
 * stream of jobs from stdin, one per line or per NUL-terminated record.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq push [--queue Q] [--priority N] [--max-attempts N]"
    " [--delay D | --at TIME] [--every D] [--dedup KEY] [--table T]"
    " [CONNECTION-OPTIONS] [PAYLOAD]\n"
    "       mq push --lines | -0 [--queue Q] [--priority N]"
    " [--max-attempts N] [--delay D | --at TIME] [--table T]"
    " [CONNECTION-OPTIONS]";

static const char options[] =
    "\noptions:\n"
    "  --lines             one job per line of standard input\n"
    "  -0, --null          one job per NUL-terminated record\n"
    "  --queue Q           queue to push to (default: default; MQ_QUEUE)\n"
    "  --priority N        lower runs first, -32768..32767 (default 0)\n"
    "  --max-attempts N    deliveries before the job is dead (default 10)\n"
    "  --delay D           due D from now (30s, 5m, 1h30m, ...)\n"
    "  --at TIME           due at TIME, UTC: 'YYYY-MM-DD HH:MM[:SS]' or @EPOCH\n"
    "  --every D           recurring: each ack makes it due again D after\n"
    "                      its due time (at least 1s)\n"
    "  --dedup KEY         if a live job has KEY, print its id instead\n";

static int
print_ids(uint64_t first, size_t n, uint64_t step, void *ctx)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < n; i++)
		printf("%llu\n", (unsigned long long)(first + i * step));
	/* a reader of the ids sees each batch as soon as it is committed */
	return fflush(stdout) == EOF ? -1 : 0;
}

/* Reads all of stdin, refusing more than max bytes. */
static unsigned char *
slurp(size_t max, size_t *len)
{
	size_t cap = 65536, n = 0, r;
	unsigned char *buf = malloc(cap), *nb;

	while (buf) {
		if (n == cap) {
			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL)
				break;
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, stdin);
		n += r;
		if (r == 0 || n > max)
			break;
	}
	if (buf == NULL || ferror(stdin)) {
		fprintf(stderr, "mq push: cannot read standard input\n");
		exit(EX_IOERR);
	}
	if (n > max) {
		fprintf(stderr, "mq push: payload of more than %zu bytes is "
		    "larger than the server's max_allowed_packet allows\n",
		    max);
		exit(EX_DATAERR);
	}
	*len = n;
	return buf;
}

/* The signal that asked a stream to stop, 0 if none. */
static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* SIGTERM, SIGINT and SIGHUP stop a stream between batches, never inside
 * one: they are caught, and held blocked but while waiting for input
 * (push_records.c), so that a batch the server committed always has its ids
 * printed, and no record is cut short. */
static void
catch_stop(sigset_t *held)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(held);
	sigaddset(held, SIGTERM);
	sigaddset(held, SIGINT);
	sigaddset(held, SIGHUP);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Lets a signal held blocked arrive; whether one did. */
static int
stop_signal_pending(const sigset_t *held)
{
	sigprocmask(SIG_UNBLOCK, held, NULL);
	return stop_signal != 0;
}

static int
push_stream(struct mq_conn *c, const struct mq_push_opts *o, int delim)
{
	struct mq_batch *b = mq_batch_new(c, o, print_ids, NULL);
	enum mq_status st = b ? MQ_OK : mq_conn_error(c)->status;
	unsigned long long line = 0;
	struct records in = { NULL, 0, 0, 0, 0 };
	char *rec;
	size_t n;
	int got = 0;
	sigset_t held, waiting;

	catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGHUP);
	while (st == MQ_OK && (got = records_next(&in, delim, &waiting,
	    &stop_signal, &rec, &n)) == 1) {
		line++;
		st = mq_batch_add(b, rec, n);
	}
	if (st == MQ_OK && got == -1) {
		fprintf(stderr, "mq push: cannot read standard input after "
		    "record %llu\n", line);
		st = MQ_EIO;
	} else {
		if (st == MQ_OK)
			st = mq_batch_flush(b);
		/* a failed write of the ids is main's to report, once */
		if (st != MQ_OK && !(st == MQ_EIO && ferror(stdout))) {
			/* the jobs pushed are exactly those whose ids were
			 * printed (an outcome unknown adds the batch in
			 * flight); say how far the input was read */
			char at[160];
			snprintf(at, sizeof at, st == MQ_EUNKNOWN ?
			    "stopped after reading %llu records (the ids "
			    "printed are pushed; the last batch, not "
			    "printed, may be too)" : "stopped after reading "
			    "%llu records (the ids printed are the jobs "
			    "pushed)", line);
			report("push", at, mq_conn_error(c));
		}
	}
	records_free(&in);
	mq_batch_free(b);
	if (st == MQ_OK && stop_signal) {
		fprintf(stderr, "mq push: stopped by signal %d after reading "
		    "%llu records (the ids printed are the jobs pushed)\n",
		    (int)stop_signal, line);
		return 128 + stop_signal;
	}
	return exit_status(st);
}

int
cmd_push(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_LINES = OPT_CMD, OPT_PRIORITY, OPT_MAX_ATTEMPTS, OPT_DELAY,
	    OPT_AT, OPT_DEDUP, OPT_EVERY };
	static const struct option longopts[] = {
		{"lines", no_argument, NULL, OPT_LINES},
		{"null", no_argument, NULL, '0'},
		{"priority", required_argument, NULL, OPT_PRIORITY},
		{"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
		{"delay", required_argument, NULL, OPT_DELAY},
		{"at", required_argument, NULL, OPT_AT},
		{"dedup", required_argument, NULL, OPT_DEDUP},
		{"every", required_argument, NULL, OPT_EVERY},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_push_opts o = { .max_attempts = MQ_DEFAULT_MAX_ATTEMPTS };
	int opt, delim = -1, has_delay = 0, existed, rc;
	unsigned char *payload;
	struct mq_conn *c;
	size_t len;
	uint64_t id;
	sigset_t held;

	while ((opt = getopt_long(argc, argv, "+:h0", longopts, NULL)) != -1) {
		if (common_option("push", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_LINES:	delim = '\n'; break;
		case '0':	delim = '\0'; break;
		case OPT_PRIORITY:
			o.priority = (int)int_arg("push", "--priority", optarg,
			    MQ_PRIORITY_MIN, MQ_PRIORITY_MAX);
			break;
		case OPT_MAX_ATTEMPTS:
			o.max_attempts = (unsigned)int_arg("push",
			    "--max-attempts", optarg, 1, 1000000);
			break;
		case OPT_DELAY:
			o.delay_us = duration_arg("push", "--delay", optarg);
			has_delay = 1;
			break;
		case OPT_AT:
			if (mq_check_time(optarg) != MQ_OK)
				usage_error("push", "invalid time for --at: "
				    "'%s' (UTC 'YYYY-MM-DD HH:MM[:SS]' or "
				    "@EPOCH)", shown(optarg));
			o.at = optarg;
			break;
		case OPT_DEDUP:
			if (optarg[0] == '\0' || strlen(optarg) > 255)
				usage_error("push", "--dedup takes a key of "
				    "1 to 255 bytes");
			o.dedup = optarg;
			break;
		case OPT_EVERY:
			o.every_us = duration_arg("push", "--every", optarg);
			if (o.every_us < 1000000)
				usage_error("push", "--every must be at least "
				    "1s");
			break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("push", opt, argv);
		}
	}
	settle("push", g, 1);
	if (has_delay && o.at)
		usage_error("push", "--delay and --at exclude each other");
	if (delim != -1 && o.dedup)
		usage_error("push", "--dedup takes a single job, not --lines "
		    "or -0");
	if (delim != -1 && o.every_us)
		usage_error("push", "--every takes a single job, not --lines "
		    "or -0");
	if (delim != -1 && optind < argc)
		usage_error("push", "--lines and -0 read standard input; "
		    "no PAYLOAD argument");
	if (argc - optind > 1)
		usage_error("push", "one PAYLOAD at most (quote it, or use "
		    "--lines)");
	o.queue = g->queue;

	need_stdio("push", STDOUT_CLOSED |
	    (delim != -1 || optind >= argc ? STDIN_CLOSED : 0));
	c = open_queue_table("push", g);
	if (delim != -1) {
		rc = push_stream(c, &o, delim);
		mq_close(c);
		return rc;
	}
	if (optind < argc) {
		payload = (unsigned char *)argv[optind];
		len = strlen(argv[optind]);
	} else {
		payload = slurp(mq_max_payload(c), &len);
	}
	/* a signal waits until the id of a committed push is out */
	catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, NULL);
	if (mq_push(c, &o, payload, len, &id, &existed) != MQ_OK) {
		struct mq_error e = *mq_conn_error(c);
		mq_close(c);
		die("push", &e);
	}
	mq_close(c);
	printf("%llu\n", (unsigned long long)id);
	if (stop_signal_pending(&held))
		return 128 + stop_signal;
	if (optind >= argc)
		free(payload);
	return 0;
}
