/*
 * pop.c: mq pop: claim due jobs and hand them to a shell safely: raw
 * payload bytes with the receipt apart, an eval-able form, or JSON.
 */
#define _XOPEN_SOURCE 700	/* realpath */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pop.h"

enum form { RAW, SHELL, JSON };

/* With --wait D: a server that takes longer than this to answer one
 * statement (or the handshake) counts as lost, so a server that hangs
 * costs at most this beyond D (mq-pop(1), WAITING ON A SILENT SERVER) */
#define WAIT_BOUND_S 10

/* A connection of its own for giving jobs back once the claim's was
 * lost (NULL, with *e, if none can be made). A stop signal ends its
 * lock waits' retries, as the claim's. */
static struct mq_conn *
reconnect(const struct mq_global *g, struct mq_error *e)
{
	struct mq_conn *c = mq_connect(&g->conn, e);

	if (c && mq_use_table(c, g->table) != MQ_OK) {
		*e = *mq_conn_error(c);
		mq_close(c);
		c = NULL;
	}
	if (c)
		mq_set_stop_check(c, stop_held);
	return c;
}

/* Whether a statement that failed with st may go through on a new
 * connection: the one it used is lost. */
static int
conn_lost(enum mq_status st)
{
	return st == MQ_EUNAVAIL || st == MQ_EUNKNOWN;
}

/* The n jobs claimed but not handed over (after the handed ones) go
 * back at once, due now, the delivery not counted (mq_release), instead
 * of waiting out their lease: on a new connection if the claim's is
 * lost (a preference list's claim whose later queue lost its answer).
 * Says so in the one line of the error. */
static int
give_back(struct mq_conn **cp, const struct mq_global *g,
    struct mq_job *jobs, size_t n, size_t handed, const char *why, int rc)
{
	struct mq_conn *c = *cp;
	struct mq_error e;
	size_t i, back = 0;
	enum mq_status st;
	int again = 1;

	for (i = 0; i < n; i++) {
		st = mq_release(c, &jobs[i].receipt);
		if (conn_lost(st) && again) {
			again = 0;
			mq_close(c);
			if ((*cp = c = reconnect(g, &e)) == NULL)
				break;
			st = mq_release(c, &jobs[i].receipt);
		}
		if (st == MQ_OK)
			back++;
	}
	if (back == n && handed)
		say(&pop_command, "%s: %zu %s handed over, the other "
		    "%zu given back", why, handed, handed == 1 ? "job was" :
		    "jobs were", n);
	else if (back == n)
		say(&pop_command, "%s: %s given back", why, n == 1 ?
		    "the job was" : "the jobs were");
	else
		say(&pop_command, "%s: %zu of %zu jobs given back, the "
		    "others stay leased until their lease ends (%s)", why,
		    back, n, c ? mq_conn_error(c)->msg : e.msg);
	/* what stdout still buffers can go nowhere: main must not try */
	if (discard_stdout() != 0)
		_Exit(rc);
	return rc;
}

/* The jobs that claims whose outcome was unknown may have leased (a
 * COMMIT, or an UPDATE claim's UPDATE, whose answer was lost with the
 * connection: of one queue of a list, or of every one) go back at once,
 * on a new connection, instead of staying leased to nobody until their
 * lease ends; once the session that sent the claim is over (killed if
 * need be: a statement of it still running, held up by a row lock,
 * would lease them after the give-back). That connection lost too, one
 * more is made, and the same one is tried again (a search by token:
 * safe to repeat). 1 if every one went back (*back jobs); 0 with *e. */
static int
give_back_orphans(const struct mq_global *g, const struct mq_orphan *o,
    size_t n, size_t *back, struct mq_error *e)
{
	struct mq_conn *c;
	size_t i, k;
	enum mq_status st = MQ_OK;
	int again = 1;

	*back = 0;
	if ((c = reconnect(g, e)) == NULL)
		return 0;
	for (i = 0; i < n && st == MQ_OK; i++) {
		st = mq_release_orphan(c, &o[i], &k);
		*back += k;
		if (conn_lost(st) && again && !stop_held()) {
			again = 0;
			mq_close(c);
			if ((c = reconnect(g, e)) == NULL)
				return 0;
			st = mq_release_orphan(c, &o[i], &k);
			*back += k;
		}
	}
	if (st != MQ_OK)
		*e = *mq_conn_error(c);
	mq_close(c);
	return st == MQ_OK;
}

/* The claim failed (e) after its own or one of its queues' writes went
 * out: what it may have leased is given back, and the status says
 * whether anything stays leased to nobody: 69 if nothing does (as if
 * the connection had been lost before the claim), 3 if some may. */
static int
lost_claim(const struct mq_global *g, const struct mq_error *e,
    const struct mq_orphan *o, size_t n)
{
	struct mq_error why;
	size_t back;
	char where[sizeof why.msg + 128];

	if (give_back_orphans(g, o, n, &back, &why)) {
		if (back)
			snprintf(where, sizeof where, "nothing claimed: the "
			    "%zu job%s its claim leased %s given back", back,
			    back == 1 ? "" : "s", back == 1 ? "was" : "were");
		else
			snprintf(where, sizeof where, "nothing claimed: its "
			    "claim leased no job");
		report(&pop_command, where, e);
		return exit_status(MQ_EUNAVAIL);
	}
	snprintf(where, sizeof where, "the jobs its claim may have leased "
	    "stay leased until their lease ends (not given back: %s)",
	    why.msg);
	report(&pop_command, where, e);
	return exit_status(e->status);
}

/* After a claim that returned jobs or none: the jobs another queue's
 * claim whose outcome was unknown may have leased go back, and a line
 * says so. */
static void
orphans_after(const struct mq_global *g, const struct mq_orphan *o,
    size_t n)
{
	struct mq_error e;
	size_t back, i;
	char queues[MQ_ORPHANS_MAX * (MQ_QUEUE_MAX + 3) + 1] = "", *p = queues;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s'%s'", i ? ", " : "", o[i].queue);
	if (give_back_orphans(g, o, n, &back, &e))
		say(&pop_command, "the claim of %s lost its answer "
		    "(outcome unknown): %zu job%s it leased given back",
		    queues, back, back == 1 ? "" : "s");
	else
		say(&pop_command, "the claim of %s lost its answer "
		    "(outcome unknown): the jobs it may have leased stay "
		    "leased until their lease ends (not given back: %s)",
		    queues, e.msg);
}

/* The stop signals' dispositions mq pop was started with (a background
 * job of a shell ignores SIGINT). */
static struct sigaction started_with[NSTOP_SIGNALS];

/* While --wait parks in mq_wait, which claims nothing, the stop
 * signals (SIGTERM, SIGINT, SIGHUP) act as mq was started with: there
 * they end mq at once, as before. While it claims they are held blocked
 * and caught, so that none ends mq between a claim's COMMIT and the
 * hand-over (mq_pop_wait calls this around its waits). */
static void
park_signals(int parked, void *ctx)
{
	const sigset_t *held = ctx;
	sigset_t unused;
	unsigned k;

	if (parked) {
		/* one caught while claiming nothing ends mq now */
		for (k = 0; k < NSTOP_SIGNALS; k++)
			sigaction(stop_signals[k], &started_with[k], NULL);
		sigprocmask(SIG_UNBLOCK, held, NULL);
		if (stop_signal)
			raise(stop_signal);
	} else {
		catch_stop(&unused);
		sigprocmask(SIG_BLOCK, held, NULL);
	}
}

/* Whether two names are one file: the same name, the same file (a link,
 * ./F for F), or, for files still to be made, the same name in the
 * same directory. The receipt written over the payload would leave a
 * job handed over with no payload. */
/* Whether path is the regular file standard output writes (F in
 * "mq pop --receipt-file F > F", or -o /dev/stdout): what mq writes
 * there by name, it would write over by standard output, or the other
 * way round. */
static int
is_stdout_file(const char *path)
{
	struct stat sp, so;

	return stat(path, &sp) == 0 && fstat(STDOUT_FILENO, &so) == 0 &&
	    S_ISREG(so.st_mode) && sp.st_dev == so.st_dev &&
	    sp.st_ino == so.st_ino;
}

static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *da, *db, *ra, *rb;
	const char *ba, *bb;
	int same;

	if (strcmp(a, b) == 0)
		return 1;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ba = strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
	bb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
	if (strcmp(ba, bb) != 0)
		return 0;
	da = strndup(a, (size_t)(ba - a));
	db = strndup(b, (size_t)(bb - b));
	ra = da ? realpath(*da ? da : ".", NULL) : NULL;
	rb = db ? realpath(*db ? db : ".", NULL) : NULL;
	same = ra && rb && strcmp(ra, rb) == 0;
	free(da);
	free(db);
	free(ra);
	free(rb);
	return same;
}


enum { OPT_COUNT = OPT_CMD, OPT_LEASE, OPT_CLAIM, OPT_SHELL, OPT_JSON,
    OPT_RECEIPT_FILE, OPT_WAIT };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q[,Q...]",
	    "queue to claim from, or queues in order of\npreference (default: "
	    "default; MQ_QUEUE)", COMPLETE_QUEUES, NULL, NULL, 0, 0 },
	{ OPT_COUNT, "count", 0, "N", "claim up to N jobs (default 1)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_LEASE, "lease", 0, "D", "lease length (default 5m)",
	    COMPLETE_DURATION, NULL, NULL, 0, 0 },
	{ OPT_WAIT, "wait", 0, "D", "wait up to D for a job (default: do not "
	    "wait)", COMPLETE_DURATION, NULL, NULL, 0, 0 },
	{ OPT_CLAIM, "claim", 0, "skip-locked|update", "how jobs are claimed "
	    "(default: by server)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ 'o', "output", 'o', "FILE", "payload to FILE, receipt to standard "
	    "output", COMPLETE_FILE, NULL, "[-o FILE | --shell | --json]", 0,
	    0 },
	{ OPT_SHELL, "shell", 0, NULL, "MQ_RECEIPT=... lines for eval",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_JSON, "json", 0, NULL, "one JSON object per job and line",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_RECEIPT_FILE, "receipt-file", 0, "FILE",
	    "receipt to FILE (raw form; default stderr)", COMPLETE_FILE, NULL,
	    NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command pop_command = {
	"pop", "claim jobs", opts, { "", NULL },
	CMD_QUEUE_LIST, cmd_pop, NULL
};

struct pop_args {
	struct mq_pop_opts o;
	const char *path, *receipt_path;
	long long wait;
	enum form form;
	int forms, count_given;	/* forms: the bits of -o, --shell, --json */
};

static void
option(void *ctx, int id, const char *arg)
{
	struct pop_args *a = ctx;

	switch (id) {
	case OPT_COUNT:
		a->o.count = (unsigned)int_arg(&pop_command, "--count", arg, 1, 1000);
		a->count_given = 1;
		break;
	case OPT_LEASE:
		a->o.lease_us = duration_arg(&pop_command, "--lease", arg);
		if (a->o.lease_us < 1000000)
			usage_error(&pop_command, "--lease must be at least 1s");
		break;
	case OPT_CLAIM:
		if (strcmp(arg, "skip-locked") == 0)
			a->o.claim = MQ_CLAIM_SKIP_LOCKED;
		else if (strcmp(arg, "update") == 0)
			a->o.claim = MQ_CLAIM_UPDATE;
		else
			usage_error(&pop_command, "--claim takes skip-locked or "
			    "update, not '%s'", shown(arg));
		break;
	case OPT_WAIT:
		a->wait = duration_arg(&pop_command, "--wait", arg);
		break;
	/* forms: one bit per form, so a form given twice is the last
	 * one's (-o a -o b writes b), as every option is */
	case 'o':		a->path = arg; a->forms |= 1; break;
	case OPT_SHELL:		a->form = SHELL; a->forms |= 2; break;
	case OPT_JSON:		a->form = JSON; a->forms |= 4; break;
	case OPT_RECEIPT_FILE:	a->receipt_path = arg; break;
	}
}

int
cmd_pop(int argc, char **argv, struct mq_global *g)
{
	struct pop_args a = { { .count = 1, .lease_us = 300000000LL }, NULL,
	    NULL, 0, RAW, 0, 0 };
	struct mq_pop_opts *o = &a.o;
	long long t0 = 0, deadline = 0;
	int rc = 0, nargs;
	struct mq_job *jobs;
	struct mq_conn *c;
	enum mq_status st;
	size_t n, i, norphans = 0;
	sigset_t held;
	struct mq_orphan orphans[MQ_ORPHANS_MAX];
	struct mq_error unconfirmed = { .status = MQ_OK };
	char why[300] = "";

	nargs = parse_options(&pop_command, argc, argv, g, option, &a);
	settle(&pop_command, g, 1);
	no_operands(&pop_command, nargs, argv);
	if (a.forms & (a.forms - 1))	/* two different forms */
		usage_error(&pop_command, "-o, --shell and --json exclude each other");
	if (a.form == RAW && o->count > 1)
		usage_error(&pop_command, "--count above 1 needs --shell or --json");
	if (a.form != RAW && a.receipt_path)
		usage_error(&pop_command, "--receipt-file goes with the raw form only");
	/* checked before a job is claimed, not when writing it fails */
	if ((a.path && !*a.path) || (a.receipt_path && !*a.receipt_path))
		usage_error(&pop_command, "-o and --receipt-file need a file name");
	if (a.path && a.receipt_path && same_file(a.path, a.receipt_path))
		usage_error(&pop_command, "-o and --receipt-file name the same file");
	/* standard output is written too: the payload (no -o), or the
	 * receipt (-o without --receipt-file) */
	if (a.form == RAW && !a.path && a.receipt_path &&
	    is_stdout_file(a.receipt_path))
		usage_error(&pop_command, "--receipt-file names the file standard "
		    "output goes to");
	if (a.path && !a.receipt_path && is_stdout_file(a.path))
		usage_error(&pop_command, "-o names the file standard output goes to");
	o->queue = g->queue;

	/* a reader gone makes writes fail (EPIPE), not kill mq: the
	 * jobs are given back */
	signal(SIGPIPE, SIG_IGN);
	/* the raw form's receipt goes to stderr (without -o or
	 * --receipt-file): a job whose receipt goes nowhere is not out */
	need_stdio(&pop_command, STDOUT_CLOSED | (a.form == RAW && !a.path &&
	    !a.receipt_path ? STDERR_CLOSED : 0));
	if (a.wait) {
		g->conn.connect_timeout_s = WAIT_BOUND_S;
		g->conn.read_timeout_s = WAIT_BOUND_S;
		t0 = mq_now_us();
	}
	c = open_queue_table(&pop_command, g);
	mq_set_stop_check(c, stop_held);
	if (a.wait) {	/* D counts from the start, connecting included */
		long long left = a.wait - (mq_now_us() - t0);

		deadline = t0 + a.wait;
		a.wait = left > 0 ? left : 1;
	}
	/* a stop signal between the claim's COMMIT and the hand-over would
	 * leave the jobs leased to nobody: held from here (HAND-OVER) */
	for (i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i], NULL, &started_with[i]);
	catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, NULL);
	st = a.wait ? mq_pop_wait(c, o, a.wait, park_signals, &held, &jobs,
	    &n) : mq_pop(c, o, &jobs, &n);
	/* --wait, the connection lost with nothing claimed (its server or
	 * Galera node died while it waited): it waits on a new one, the
	 * next ready node of a list of hosts, for what is left of D */
	while (a.wait && st == MQ_EUNAVAIL && mq_now_us() < deadline &&
	    !stop_signal_pending(&held) &&
	    (norphans = mq_take_orphans(c, orphans, MQ_ORPHANS_MAX)) == 0) {
		struct mq_conn *again;
		struct mq_error e;

		/* no other node could confirm the claim (jobs given back):
		 * claimed again after a pause, not at once and again, and
		 * said if the wait ends so */
		unconfirmed.status = 0;
		if (mq_claim_unconfirmed(c)) {
			unconfirmed = *mq_conn_error(c);
			if (mq_now_us() + 500000 < deadline)
				nanosleep(&(struct timespec){ 0, 500000000 },
				    NULL);
		}
		while ((again = reconnect(g, &e)) == NULL &&
		    mq_now_us() + 500000 < deadline &&
		    !stop_signal_pending(&held))
			nanosleep(&(struct timespec){ 0, 500000000 }, NULL);
			/* the cluster re-forming */
		if (again == NULL)
			break;
		mq_close(c);
		c = again;
		if (mq_now_us() >= deadline) {	/* D ran out connecting */
			st = MQ_EMPTY;
			if (unconfirmed.status) {
				mq_close(c);
				die(&pop_command, &unconfirmed);
			}
			break;
		}
		st = mq_pop_wait(c, o, deadline - mq_now_us() > 0 ?
		    deadline - mq_now_us() : 1, park_signals, &held, &jobs, &n);
	}
	/* caught from now on: one that came during the claim gives every
	 * job back; one during the output, the jobs not yet out (a blocked
	 * write fails with EINTR) */
	stop_signal_pending(&held);
	/* claims whose answer was lost: with a list, also when others
	 * gave jobs (given back after those are out) */
	if (norphans == 0)	/* those the loop above took are kept */
		norphans = mq_take_orphans(c, orphans, MQ_ORPHANS_MAX);
	if (st != MQ_OK && st != MQ_EMPTY && st != MQ_PAUSED) {
		struct mq_error e = *mq_conn_error(c);
		mq_close(c);
		if (norphans)
			return lost_claim(g, &e, orphans, norphans);
		if (st == MQ_ERETRY && stop_signal) {	/* nothing claimed */
			char where[64];

			snprintf(where, sizeof where, "stopped by signal %d "
			    "before a claim succeeded", (int)stop_signal);
			report(&pop_command, where, &e);
			return 128 + stop_signal;
		}
		die(&pop_command, &e);
	}
	/* Galera: jobs of the claim another node did not show (lost) */
	if (st == MQ_OK && mq_claim_unconfirmed(c))
		say(&pop_command, "%s", mq_claim_unconfirmed(c));
	if (st == MQ_PAUSED)
		fprintf(stderr, strchr(o->queue, ',') ? "mq pop: queues '%s' "
		    "are all paused\n" : "mq pop: queue '%s' is paused\n",
		    o->queue);
	if (st != MQ_OK) {
		struct mq_error fe;

		/* nothing claimed, and firing the due schedules of the queues
		 * failed (a schedule passed over: its runs are not there):
		 * said, the status stays (mq-pop(1) CALENDAR SCHEDULES). With
		 * jobs claimed it is not: the receipt may be on stderr */
		if (a.wait && mq_pop_fire_failed(c, &fe))
			report(&pop_command, "cannot fire the schedules", &fe);
		mq_close(c);
		orphans_after(g, orphans, norphans);
		return stop_signal ? 128 + stop_signal : EXIT_EMPTY;
	}
	if (a.form == SHELL && a.count_given)
		printf("MQ_COUNT=%zu\n", n);
	/* each job is out (flushed) before the next is written: when a
	 * write fails, the jobs before were handed over, and this one and
	 * those after it are given back */
	for (i = 0; i < n; i++) {
		if (stop_signal)
			break;
		if (a.form == JSON)
			pop_print_json(&jobs[i]);
		else if (a.form == SHELL)
			pop_print_shell(&jobs[i], i + 1, a.count_given);
		else
			rc = pop_print_raw(&jobs[i], a.path, a.receipt_path,
			    why, sizeof why);
		/* a print that failed (a write a signal cut short) is not
		 * flushed: the flush would send the rest later, to a reader
		 * whose job is given back */
		if (rc == 0 && ferror(stdout))
			stdout_error(errno);	/* the print's own */
		if (rc == 0 && (ferror(stdout) || flush_stdout() != 0)) {
			snprintf(why, sizeof why, "write failure on standard "
			    "output%s", stdout_cause());
			rc = EX_IOERR;
		}
		if (rc != 0)
			break;
	}
	if (stop_signal && i < n) {
		snprintf(why, sizeof why, "stopped by signal %d",
		    (int)stop_signal);
		rc = 128 + stop_signal;
	}
	/* held again: another one must not cut the give-back short */
	sigprocmask(SIG_BLOCK, &held, NULL);
	if (rc != 0) {
		/* what stdio still holds of the job given back (a write a
		 * signal cut short keeps the rest) must not reach the reader
		 * at exit: it ran that job while another consumer had it */
		__fpurge(stdout);
		clearerr(stdout);
		rc = give_back(&c, g, jobs + i, n - i, i, why, rc);
	}
	else if (stop_signal)	/* every job out, then stopped */
		rc = 128 + stop_signal;
	mq_close(c);
	orphans_after(g, orphans, norphans);
	mq_jobs_free(jobs, n);
	return rc;
}
