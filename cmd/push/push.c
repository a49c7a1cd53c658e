/*
 * push.c: mq push: one job from the argument or all of stdin, or a
 * stream of jobs from stdin, one per line or per NUL-terminated record.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push.h"

enum { OPT_LINES = OPT_CMD, OPT_PRIORITY, OPT_MAX_ATTEMPTS, OPT_DELAY,
    OPT_AT, OPT_DEDUP, OPT_EVERY, OPT_KEY, OPT_QUIET, OPT_WAIT, OPT_TIMEOUT };

static const struct opt opts[] = {
	{ OPT_LINES, "lines", 0, NULL, "one job per line of standard input",
	    COMPLETE_NONE, NULL, "--lines | -0", FORM(1), 0 },
	{ '0', "null", '0', NULL, "one job per NUL-terminated record",
	    COMPLETE_NONE, NULL, "", FORM(1), 0 },
	{ OPT_QUEUE, "queue", 0, "Q", "queue to push to (default: default; "
	    "MQ_QUEUE)", COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_PRIORITY, "priority", 0, "N",
	    "lower runs first, -32768..32767 (default 0)", COMPLETE_NONE, NULL,
	    NULL, 0, 0 },
	{ OPT_MAX_ATTEMPTS, "max-attempts", 0, "N",
	    "deliveries before the job is dead (default 10)", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ OPT_DELAY, "delay", 0, "D", "due D from now (30s, 5m, 1h30m, ...)",
	    COMPLETE_DURATION, NULL, "[--delay D | --at TIME]", 0, 0 },
	{ OPT_AT, "at", 0, "TIME", "due at TIME, UTC: 'YYYY-MM-DD "
	    "HH:MM[:SS]' or @EPOCH", COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_EVERY, "every", 0, "D", "recurring: each ack makes it due again "
	    "D after\nits due time (at least 1s)", COMPLETE_DURATION, NULL,
	    NULL, FORM(0), 0 },
	{ OPT_DEDUP, "dedup", 0, "KEY",
	    "if a live job has KEY, print its id instead", COMPLETE_NONE, NULL,
	    NULL, FORM(0), 0 },
	{ OPT_KEY, "key", 0, "KEY", "the job's key, what a per-key limit "
	    "counts by\n(mq-limit(1)); every job of a stream",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WAIT, "wait", 0, NULL, "then wait until the job finishes, as mq "
	    "wait:\nits outcome is the exit status", COMPLETE_NONE, NULL,
	    "[--wait [--timeout D]]", FORM(0), 0 },
	{ OPT_TIMEOUT, "timeout", 0, "D", "with --wait: give up after D "
	    "(status 124)", COMPLETE_DURATION, NULL, "", FORM(0), 0 },
	{ OPT_QUIET, "quiet", 0, NULL,
	    "no summary (nor progress) on standard error", COMPLETE_NONE, NULL,
	    NULL, FORM(1), 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command push_command = {
	"push", "add jobs", opts, { "[PAYLOAD]", "" }, COMPLETE_NONE, NULL, 0,
	cmd_push, NULL
};

struct push_args {
	struct mq_push_opts o;
	int delim, has_delay, quiet, wait;
	int64_t timeout_us;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct push_args *a = ctx;
	struct mq_push_opts *o = &a->o;

	switch (id) {
	case OPT_LINES:
	case '0':
		if (a->delim != -1 && a->delim != (id == '0' ? '\0' : '\n'))
			usage_error(&push_command, "--lines and -0 exclude each other");
		a->delim = id == '0' ? '\0' : '\n';
		break;
	case OPT_QUIET:	a->quiet = 1; break;
	case OPT_WAIT:	a->wait = 1; break;
	case OPT_TIMEOUT:
		a->timeout_us = duration_arg(&push_command, "--timeout", arg);
		break;
	case OPT_PRIORITY:
		o->priority = (int)int_arg(&push_command, "--priority", arg,
		    MQ_PRIORITY_MIN, MQ_PRIORITY_MAX);
		break;
	case OPT_MAX_ATTEMPTS:
		o->max_attempts = (unsigned)int_arg(&push_command, "--max-attempts",
		    arg, 1, 1000000);
		break;
	case OPT_DELAY:
		o->delay_us = duration_arg(&push_command, "--delay", arg);
		a->has_delay = 1;
		break;
	case OPT_AT:
		if (mq_check_time(arg) != MQ_OK)
			usage_error(&push_command, "invalid time for --at: '%s' (UTC "
			    "'YYYY-MM-DD HH:MM[:SS]' or @EPOCH)", shown(arg));
		o->at = arg;
		break;
	case OPT_DEDUP:
		if (arg[0] == '\0' || strlen(arg) > 255)
			usage_error(&push_command, "--dedup takes a key of 1 to 255 "
			    "bytes");
		o->dedup = arg;
		break;
	case OPT_KEY:
		if (!mq_valid_key(arg))
			usage_error(&push_command, "invalid --key '%s': 1 to %d "
			    "bytes, no control characters", shown(arg),
			    MQ_KEY_MAX);
		o->key = arg;
		break;
	case OPT_EVERY:
		o->every_us = duration_arg(&push_command, "--every", arg);
		if (o->every_us < 1000000)
			usage_error(&push_command, "--every must be at least 1s");
		break;
	}
}

int
cmd_push(int argc, char **argv, struct mq_global *g)
{
	struct push_args a = { { .max_attempts = MQ_DEFAULT_MAX_ATTEMPTS },
	    -1, 0, 0, 0, -1 };
	struct mq_push_opts *o = &a.o;
	int existed, rc, n;
	unsigned char *payload;
	struct progress p;
	struct mq_conn *c;
	size_t len;
	uint64_t id;
	sigset_t held;

	n = parse_options(&push_command, argc, argv, g, option, &a);
	settle(&push_command, g, 1);
	if (a.has_delay && o->at)
		usage_error(&push_command, "--delay and --at exclude each other");
	if (a.delim != -1 && o->dedup)
		usage_error(&push_command, "--dedup takes a single job, not --lines "
		    "or -0");
	if (a.delim != -1 && o->every_us)
		usage_error(&push_command, "--every takes a single job, not --lines "
		    "or -0");
	if (a.delim != -1 && n > 0)
		usage_error(&push_command, "--lines and -0 read standard input; "
		    "no PAYLOAD argument");
	if (a.delim != -1 && a.wait)
		usage_error(&push_command, "--wait takes a single job, not --lines "
		    "or -0 (mq push --lines | mq wait waits for them all)");
	if (a.wait && o->every_us)
		usage_error(&push_command, "--wait and --every exclude each other: "
		    "a recurring job never finishes");
	if (a.timeout_us >= 0 && !a.wait)
		usage_error(&push_command, "--timeout goes with --wait");
	if (n > 1)
		usage_error(&push_command, "one PAYLOAD at most (quote it, or use "
		    "--lines)");
	o->queue = g->queue;

	need_stdio(&push_command, STDOUT_CLOSED |
	    (a.delim != -1 || n == 0 ? STDIN_CLOSED : 0));
	c = open_queue_table(&push_command, g);
	if (a.delim != -1) {
		progress_start(&p, &push_command, "pushed", a.quiet);
		rc = push_stream(c, o, a.delim, &p);
		mq_close(c);
		return rc;
	}
	if (n > 0) {
		payload = (unsigned char *)argv[1];
		len = strlen(argv[1]);
	} else {
		payload = slurp(mq_max_payload(c), &len);
	}
	/* a signal waits until the id of a committed push is out */
	catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, NULL);
	if (mq_push(c, o, payload, len, &id, &existed) != MQ_OK) {
		struct mq_error e = *mq_conn_error(c);
		mq_close(c);
		die(&push_command, &e);
	}
	if (!a.wait)
		mq_close(c);
	printf("%llu\n", (unsigned long long)id);
	if (n == 0)
		free(payload);
	if (a.wait && fflush(stdout) == EOF) {
		mq_close(c);
		say(&push_command, "write failure on standard output");
		return EX_IOERR;
	}
	if (stop_signal_pending(&held)) {
		if (a.wait)
			mq_close(c);
		return 128 + stop_signal;
	}
	if (!a.wait)
		return 0;
	/* then as mq wait ID */
	rc = wait_for_jobs(&push_command, c, g->table, &id, 1, a.timeout_us);
	mq_close(c);
	return rc;
}
