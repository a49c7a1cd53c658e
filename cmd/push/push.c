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
#include "schedule.h"

enum { OPT_LINES = OPT_CMD, OPT_PRIORITY, OPT_MAX_ATTEMPTS, OPT_DELAY,
    OPT_AT, OPT_DEDUP, OPT_EVERY, OPT_KEY, OPT_QUIET, OPT_WAIT, OPT_TIMEOUT,
    OPT_AFTER, OPT_AFTER_FILE, OPT_IF_PARENT_DIES, OPT_CRON, OPT_TZ,
    OPT_NAME, OPT_MISSED };

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
	{ OPT_CRON, "cron", 0, "EXPR", "a calendar schedule instead: a run "
	    "at each instant\nof the cron expression (mq-schedule(1))",
	    COMPLETE_NONE, NULL, "[--cron EXPR [--tz ZONE] [--name NAME] "
	    "[--missed skip|once|all]]", FORM(0), 0 },
	{ OPT_TZ, "tz", 0, "ZONE", "with --cron: the expression's zone "
	    "(default UTC)", COMPLETE_NONE, NULL, "", FORM(0), 0 },
	{ OPT_NAME, "name", 0, "NAME", "with --cron: the schedule's name "
	    "(default: from\nwhat it pushes)", COMPLETE_NONE, NULL, "",
	    FORM(0), 0 },
	{ OPT_MISSED, "missed", 0, "skip|once|all", "with --cron: the "
	    "instants missed (default once)", COMPLETE_NONE, NULL, "",
	    FORM(0), 0 },
	{ OPT_DEDUP, "dedup", 0, "KEY",
	    "if a live job has KEY, print its id instead", COMPLETE_NONE, NULL,
	    NULL, FORM(0), 0 },
	{ OPT_KEY, "key", 0, "KEY", "the job's key, what a per-key limit "
	    "counts by\n(mq-limit(1)); every job of a stream",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_AFTER, "after", 0, "ID[,ID...]", "due once each of these jobs "
	    "is done, not before\n(repeatable); every job of a stream",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_AFTER_FILE, "after-file", 0, "FILE", "and after each job id "
	    "of FILE, one a line\n(- : standard input, not with a stream)",
	    COMPLETE_FILE, NULL, NULL, 0, 0 },
	{ OPT_IF_PARENT_DIES, "if-parent-dies", 0, "cancel|run|wait",
	    "what a parent that dies does to it\n(default cancel: it dies too)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WAIT, "wait", 0, NULL, "then wait until the job finishes, as mq "
	    "wait:\nits outcome is the exit status", COMPLETE_NONE, NULL,
	    "[--wait [--timeout D]]", FORM(0), 0 },
	{ OPT_TIMEOUT, "timeout", 0, "D", "with --wait: give up after D "
	    "(status 124)", COMPLETE_DURATION, NULL, "", FORM(0), 0 },
	{ OPT_QUIET, "quiet", 0, NULL,
	    "no summary (nor progress) on standard error,\nnor --cron's "
	    "report", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command push_command = {
	"push", "add jobs", opts, { "[PAYLOAD]", "" }, 0,
	cmd_push, NULL
};

struct push_args {
	struct mq_push_opts o;
	struct mq_schedule cron;	/* --cron and its options */
	int has_cron, has_cron_opt;
	const char *cron_name;
	int delim, has_delay, quiet, wait;
	int64_t timeout_us;
	uint64_t *after;	/* --after, --after-file: the parents */
	size_t nafter, cap;
	/* --after or --after-file given: the options' rules go by this,
	 * not by the count of parents (a file of no ids is zero parents,
	 * a job due at once, and no other rule than with ids in it) */
	int has_after, has_policy, after_stdin;
};

static void
add_parent(struct push_args *a, uint64_t id)
{
	uint64_t *more;

	if (a->nafter == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		if ((more = realloc(a->after, a->cap * sizeof *more)) == NULL)
			exit(no_memory(&push_command));
		a->after = more;
	}
	a->after[a->nafter++] = id;
}

/* --after ID[,ID...] */
static void
after_list(struct push_args *a, const char *arg)
{
	const char *p = arg, *end;
	uint64_t v;
	size_t l;

	for (;;) {
		end = strchr(p, ',');
		l = end ? (size_t)(end - p) : strlen(p);
		/* (leading zeros as --after-file, show and wait take them) */
		if (parse_id_n(p, l, &v) != 0)
			usage_error(&push_command, "invalid --after '%s': job "
			    "ids as push prints them, separated by commas",
			    shown(arg));
		add_parent(a, v);
		if (end == NULL)
			break;
		p = end + 1;
	}
}

/* --after-file FILE: one job id a line (blank lines passed over) */
static void
after_file(struct push_args *a, const char *path)
{
	FILE *f;
	char what[1100];
	uint64_t *ids;
	size_t n, i;

	/* standard input closed (opened on /dev/null): no parents read
	 * from it, a job due at once */
	if (strcmp(path, "-") == 0)
		need_stdio(&push_command, STDIN_CLOSED);
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (f == NULL) {
		say(&push_command, "cannot open --after-file '%s': %s",
		    shown(path), strerror(errno));
		exit(EX_NOINPUT);
	}
	a->after_stdin |= f == stdin;
	snprintf(what, sizeof what, "--after-file '%s'", shown(path));
	ids = read_id_lines(&push_command, f, what, &n);
	for (i = 0; i < n; i++)
		add_parent(a, ids[i]);
	free(ids);
	if (f != stdin)
		fclose(f);
}

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
			usage_error(&push_command, "invalid --dedup '%s': 1 to "
			    "255 bytes", shown(arg));
		o->dedup = arg;
		break;
	case OPT_KEY:
		if (!mq_valid_key(arg))
			usage_error(&push_command, "invalid --key '%s': 1 to %d "
			    "bytes, no control characters", shown(arg),
			    MQ_KEY_MAX);
		o->key = arg;
		break;
	case OPT_AFTER:
		after_list(a, arg);
		a->has_after = 1;
		break;
	case OPT_AFTER_FILE:
		after_file(a, arg);
		a->has_after = 1;
		break;
	case OPT_IF_PARENT_DIES:
		if (strcmp(arg, "cancel") == 0)
			o->if_parent_dies = MQ_AFTER_CANCEL;
		else if (strcmp(arg, "run") == 0)
			o->if_parent_dies = MQ_AFTER_RUN;
		else if (strcmp(arg, "wait") == 0)
			o->if_parent_dies = MQ_AFTER_WAIT;
		else
			usage_error(&push_command, "invalid --if-parent-dies "
			    "'%s': cancel, run or wait", shown(arg));
		a->has_policy = 1;
		break;
	case OPT_CRON:
		cron_setting(&a->cron, "--cron", "cron", arg);
		a->has_cron = 1;
		break;
	case OPT_TZ:
		cron_setting(&a->cron, "--tz", "tz", arg);
		a->has_cron_opt = 1;
		break;
	case OPT_MISSED:
		cron_setting(&a->cron, "--missed", "missed", arg);
		a->has_cron_opt = 1;
		break;
	case OPT_NAME:
		if (strlen(arg) > MQ_SCHEDULE_NAME_MAX || !mq_valid_queue(arg))
			usage_error(&push_command, "invalid schedule name '%s' "
			    "in --name: use 1 to %d of A-Z a-z 0-9 _ . -",
			    shown(arg), MQ_SCHEDULE_NAME_MAX);
		a->cron_name = arg;
		a->has_cron_opt = 1;
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
	struct push_args a = { .o = { .max_attempts = MQ_DEFAULT_MAX_ATTEMPTS },
	    .delim = -1, .timeout_us = -1 };
	struct mq_push_opts *o = &a.o;
	enum mq_status st;
	int existed, rc, n;
	unsigned char *payload;
	struct progress p;
	struct mq_conn *c;
	size_t len;
	uint64_t id;
	sigset_t held;

	mq_schedule_defaults(&a.cron);
	n = parse_options(&push_command, argc, argv, g, option, &a);
	settle(&push_command, g, 1);
	if (a.has_cron_opt && !a.has_cron)
		usage_error(&push_command, "--tz, --name and --missed go with "
		    "--cron");
	if (a.has_cron && (a.delim != -1 || o->every_us || a.has_delay ||
	    o->at || o->dedup || a.has_after || a.wait))
		usage_error(&push_command, "--cron makes a schedule: not with "
		    "--lines, -0, --every, --delay, --at, --dedup, --after or "
		    "--wait");
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
	if (a.has_policy && !a.has_after)
		usage_error(&push_command, "--if-parent-dies goes with --after or "
		    "--after-file");
	if (a.after_stdin && a.delim != -1)
		usage_error(&push_command, "--after-file - reads standard input, "
		    "as --lines and -0 do: give the parents in a file");
	if (a.has_after && (o->every_us || a.has_delay || o->at))
		usage_error(&push_command, "--after excludes --every, --delay and "
		    "--at: the job is due when its parents are done");
	if (a.after_stdin && n == 0)
		usage_error(&push_command, "--after-file - reads standard input: "
		    "give the PAYLOAD as an argument");
	if (a.has_cron) {
		/* the runs' settings: those of the options */
		a.cron.priority = o->priority;
		a.cron.max_attempts = o->max_attempts;
		if (o->key) {
			snprintf(a.cron.key, sizeof a.cron.key, "%s", o->key);
			a.cron.has_key = 1;
		}
		need_stdio(&push_command, STDOUT_CLOSED |
		    (n == 0 ? STDIN_CLOSED : 0));
		if (n > 0)
			return push_cron(g, &a.cron, a.cron_name,
			    (unsigned char *)argv[1], strlen(argv[1]), a.quiet);
		payload = slurp(MQ_SCHEDFILE_MAX, &len);
		rc = push_cron(g, &a.cron, a.cron_name, payload, len, a.quiet);
		free(payload);
		return rc;
	}
	o->queue = g->queue;
	o->after = a.after;
	o->nafter = a.nafter;

	need_stdio(&push_command, STDOUT_CLOSED |
	    (a.delim != -1 || n == 0 ? STDIN_CLOSED : 0));
	c = open_queue_table(&push_command, g);
	if (a.delim != -1) {
		progress_start(&p, &push_command, "pushed", a.quiet);
		rc = push_stream(c, o, a.delim, &p);
		mq_close(c);
		free(a.after);
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
	if ((st = mq_push(c, o, payload, len, &id, &existed)) != MQ_OK) {
		struct mq_error e = *mq_conn_error(c);
		mq_close(c);
		/* the push may have committed: with a dedup key once more,
		 * on a new connection (another node of a host list), which
		 * finds the job if it did (or pushes it if not) */
		if (st != MQ_EUNKNOWN || o->dedup == NULL)
			die(&push_command, &e);
		say(&push_command, "%s; pushing again with its dedup key",
		    e.msg);
		c = open_queue_table(&push_command, g);
		if (mq_push(c, o, payload, len, &id, &existed) != MQ_OK) {
			e = *mq_conn_error(c);
			mq_close(c);
			die(&push_command, &e);
		}
	}
	free(a.after);
	if (!a.wait)
		mq_close(c);
	printf("%llu\n", (unsigned long long)id);
	if (n == 0)
		free(payload);
	if (a.wait && flush_stdout() != 0) {
		mq_close(c);
		return stdout_failure(&push_command);	/* main: not again */
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
