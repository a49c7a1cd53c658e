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
    " [--max-attempts N] [--delay D | --at TIME] [--quiet] [--table T]"
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
    "  --dedup KEY         if a live job has KEY, print its id instead\n"
    "  --quiet             no summary (nor progress) on standard error\n";

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

int
cmd_push(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_LINES = OPT_CMD, OPT_PRIORITY, OPT_MAX_ATTEMPTS, OPT_DELAY,
	    OPT_AT, OPT_DEDUP, OPT_EVERY, OPT_QUIET };
	static const struct option longopts[] = {
		{"lines", no_argument, NULL, OPT_LINES},
		{"null", no_argument, NULL, '0'},
		{"priority", required_argument, NULL, OPT_PRIORITY},
		{"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
		{"delay", required_argument, NULL, OPT_DELAY},
		{"at", required_argument, NULL, OPT_AT},
		{"dedup", required_argument, NULL, OPT_DEDUP},
		{"every", required_argument, NULL, OPT_EVERY},
		{"quiet", no_argument, NULL, OPT_QUIET},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_push_opts o = { .max_attempts = MQ_DEFAULT_MAX_ATTEMPTS };
	int opt, delim = -1, has_delay = 0, existed, rc, quiet = 0;
	struct progress p;
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
		case OPT_QUIET:	quiet = 1; break;
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
		progress_start(&p, "push", "pushed", quiet);
		rc = push_stream(c, &o, delim, &p);
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
	push_catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, NULL);
	if (mq_push(c, &o, payload, len, &id, &existed) != MQ_OK) {
		struct mq_error e = *mq_conn_error(c);
		mq_close(c);
		die("push", &e);
	}
	mq_close(c);
	printf("%llu\n", (unsigned long long)id);
	if (push_stop_pending(&held))
		return 128 + push_stop_signal;
	if (optind >= argc)
		free(payload);
	return 0;
}
