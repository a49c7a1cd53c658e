/*
 * check.c: mq check: queue health as a monitoring plugin (Nagios, Icinga,
 * Zabbix, cron, a Kubernetes exec probe, systemd's ExecCondition): one
 * status line with performance data on stdout, and the Monitoring Plugins'
 * exit status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* All mq check may wait for, in all (a piped option file, the
 * connection, the server's answers): UNKNOWN after it, well within the
 * 60 s a monitoring system usually allows a check. */
#define CHECK_TIMEOUT_S 50

static const char *const state_name[] = { "OK", "WARNING", "CRITICAL",
    "UNKNOWN" };

enum {
	OPT_MAX_AGE = OPT_CMD, OPT_MAX_DEAD, OPT_MAX_STALE, OPT_MAX_READY,
	OPT_MAX_HELD, OPT_WARN_AGE, OPT_WARN_DEAD, OPT_WARN_STALE,
	OPT_WARN_READY, OPT_WARN_HELD, OPT_ALLOW_UNKNOWN
};

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: every queue)",
	    COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_ALLOW_UNKNOWN, "allow-unknown", 0, NULL,
	    "a --queue mq never saw is OK with zeros, not UNKNOWN",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_AGE, "max-age", 0, "D",
	    "CRITICAL if the oldest ready job waits longer", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_MAX_DEAD, "max-dead", 0, "N", "CRITICAL above N dead jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_STALE, "max-stale", 0, "N", "CRITICAL above N stale leases",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_READY, "max-ready", 0, "N", "CRITICAL above N ready jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_MAX_HELD, "max-held", 0, "N",
	    "CRITICAL above N ready jobs held back by a limit", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ OPT_WARN_AGE, "warn-age", 0, "D",
	    "WARNING if the oldest ready job waits longer", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_WARN_DEAD, "warn-dead", 0, "N", "WARNING above N dead jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_STALE, "warn-stale", 0, "N", "WARNING above N stale leases",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_READY, "warn-ready", 0, "N", "WARNING above N ready jobs",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_WARN_HELD, "warn-held", 0, "N",
	    "WARNING above N ready jobs held back by a limit", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

/* Set once the status line is on its way: a signal must not start
 * another. */
static volatile sig_atomic_t line_started;

/* The signals that end mq check with an UNKNOWN line: those of
 * catch_check_signals(). */
static sigset_t caught;

/* Starts the status line: the signals that would end it are held from
 * here to the exit, so that the line goes out whole and the status is
 * its own. */
static void
start_line(void)
{
	sigprocmask(SIG_BLOCK, &caught, NULL);
	line_started = 1;
}

/* A stop signal or the timeout: the UNKNOWN line, unless the status line
 * was started (then it ends as it is), and status 3, whatever ended it
 * (a monitoring system takes any status above 3 for a broken plugin).
 * Only write() and _exit(): this is a signal handler. */
static void
on_signal(int sig)
{
	static const char alarm_line[] = "MQ UNKNOWN - timed out after "
	    "50 s\n";
	static const char term_line[] = "MQ UNKNOWN - stopped by SIGTERM\n";
	static const char int_line[] = "MQ UNKNOWN - stopped by SIGINT\n";
	static const char hup_line[] = "MQ UNKNOWN - stopped by SIGHUP\n";
	static const char quit_line[] = "MQ UNKNOWN - stopped by SIGQUIT\n";
	static const char usr_line[] = "MQ UNKNOWN - stopped by SIGUSR1 or "
	    "SIGUSR2\n";
	const char *line = sig == SIGALRM ? alarm_line : sig == SIGTERM ?
	    term_line : sig == SIGINT ? int_line : sig == SIGHUP ? hup_line :
	    sig == SIGQUIT ? quit_line : usr_line;
	size_t n = strlen(line);

	_Static_assert(CHECK_TIMEOUT_S == 50, "the timeout's text");
	if (!line_started) {
		line_started = 1;
		if (write(STDOUT_FILENO, line, n) < 0)
			n = 0;
	}
	_exit(ST_UNKNOWN);
}

/* mq check's ends are the guidelines' ends, signals included: SIGTERM,
 * SIGINT and SIGHUP (unless ignored at start: nohup), SIGQUIT, SIGUSR1
 * and SIGUSR2 (which would end it with no line, or a core) and the
 * overall timeout are UNKNOWN with their line; SIGALRM is unblocked
 * whatever the parent held (the timeout depends on it); SIGPIPE is
 * ignored, a write to a reader gone failing instead (finish()). */
static void
catch_check_signals(void)
{
	static const int others[] = { SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa, was;
	sigset_t alarm_set;
	size_t i;

	sigemptyset(&caught);
	for (i = 0; i < NSTOP_SIGNALS; i++)
		sigaddset(&caught, stop_signals[i]);
	for (i = 0; i < sizeof others / sizeof others[0]; i++)
		sigaddset(&caught, others[i]);
	sigaddset(&caught, SIGALRM);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_mask = caught;
	for (i = 0; i < NSTOP_SIGNALS; i++)
		catch_signal(stop_signals[i], &sa);
	for (i = 0; i < sizeof others / sizeof others[0]; i++)
		if (sigaction(others[i], NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)	/* ignored: stays so */
			sigaction(others[i], &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alarm_set);
	sigaddset(&alarm_set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alarm_set, NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(CHECK_TIMEOUT_S);
}

/* The status line out: status, or 3 when it could not be written (a
 * reader gone: silently; else a line on stderr, the only place left to
 * say it). */
static int
finish(int status)
{
	if (flush_stdout() != 0) {
		if (!reader_gone(errno))
			(void)stdout_failure(&check_command);
		_exit(ST_UNKNOWN);
	}
	return status;
}

/* msg after "MQ UNKNOWN - " for a message mq wrote, whose values its
 * writer escaped already (shown()): escaping it again would double its
 * backslashes, so only a bar, which would start the performance data,
 * becomes \x7c, and a byte above ASCII (the UTF-8 a value quoted in a
 * usage error may hold) \xHH: the status line is printable ASCII.
 * Returns 3. */
static int
unknown_said(const char *prefix, const char *msg)
{
	start_line();
	fputs("MQ UNKNOWN - ", stdout);
	fputs(prefix, stdout);
	for (; *msg; msg++) {
		if (*msg == '|' || (unsigned char)*msg >= 0x80)
			printf("\\x%02x", (unsigned char)*msg);
		else
			putchar(*msg);
	}
	putchar('\n');
	return finish(ST_UNKNOWN);
}

/* The UNKNOWN line of a usage error (the command's usage_hook, also for
 * one among mq's own options before "check"): a monitoring system reads
 * stdout and the exit status, not stderr. */
static void
usage_unknown(const char *msg)
{
	signal(SIGPIPE, SIG_IGN);
	exit(unknown_said("usage error: ", msg));
}

const struct command check_command = {
	"check", "health check for Nagios, cron, probes (exit 0-3)", opts,
	{ "", NULL }, CMD_READS_ONLY, cmd_check,
	usage_unknown
};

static void
set_count(struct limit *l, const char *opt, const char *arg)
{
	l->set = 1;
	l->v = int_arg(&check_command, opt, arg, 0, 999999999999999LL);
}

static void
set_age(struct limit *l, const char *opt, const char *arg)
{
	l->set = 1;
	l->v = duration_arg(&check_command, opt, arg);
}

static void
option(void *ctx, int id, const char *arg)
{
	struct check_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:	a->one = 1; break;
	case OPT_ALLOW_UNKNOWN: a->allow_unknown = 1; break;
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
	case OPT_MAX_HELD:
		set_count(&a->crit[M_HELD], "--max-held", arg);
		break;
	case OPT_WARN_HELD:
		set_count(&a->warn[M_HELD], "--warn-held", arg);
		break;
	}
}

/* Whether the table knows queue q at all: a job in it, in any state,
 * a count kept for it (jobs finished, archived or purged), or a setting
 * (paused, a limit). A typo in --queue must not pass for ever as an
 * empty queue. */
static int
queue_seen(const struct mq_queue_stats *q)
{
	const struct mq_counters *t = &q->total;

	return q->ready || q->scheduled || q->waiting || q->leased ||
	    q->done || q->dead || q->recurring || q->paused ||
	    q->concurrency || q->per_key || q->rate || q->key_rate ||
	    t->pushed || t->done || t->failed || t->dead || t->requeued ||
	    t->retried || t->archived || t->purged;
}

/* The UNKNOWN line of a failure to connect or to read. */
static int
unknown(const struct mq_error *e)
{
	const char *msg = e->msg[0] ? e->msg : mq_strerror(e->status);

	start_line();
	fputs("MQ UNKNOWN - ", stdout);
	check_put_text((const unsigned char *)msg, strlen(msg));
	if (e->db_errno)
		printf(" (error %u)", e->db_errno);
	putchar('\n');
	return finish(ST_UNKNOWN);
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
	char why[512];

	catch_check_signals();
	memset(&a, 0, sizeof a);
	nargs = parse_options(&check_command, argc, argv, g, option, &a);
	no_operands(&check_command, nargs, argv);
	/* a bad MQ_* value is a usage error (the hook's UNKNOWN); an option
	 * file that cannot be read is UNKNOWN, on stdout only */
	switch (settle_checked(&check_command, g, 0, PIPE_WAIT_MS, why,
	    sizeof why)) {
	case 0:
		break;
	case EX_USAGE:
		usage_error(&check_command, "%s", why);
	default:
		return unknown_said("", why);
	}

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

	if (a.one && !a.allow_unknown && n == 1 && !queue_seen(&q[0])) {
		start_line();
		fputs("MQ UNKNOWN - queue ", stdout);
		check_put_text((const unsigned char *)q[0].queue,
		    q[0].queue_len);
		fputs(": no such queue (no job, count or setting; "
		    "--allow-unknown takes it as empty)\n", stdout);
		free(q);
		return finish(ST_UNKNOWN);
	}
	for (i = 0; i < n; i++)
		for (m = 0; m < M_COUNT; m++)
			if ((s = check_judge(&a, &q[i], m)) > worst)
				worst = s;
	start_line();
	printf("MQ %s - ", state_name[worst]);
	check_put_report(&a, worst, q, n);
	putchar('\n');
	free(q);
	return finish(worst);
}
