/*
 * wait.c: mq wait: block until jobs finish, a line for each as it does
 * (done, dead with its error, gone), the outcome as the exit status. The
 * ids come as operands or one per line on standard input. It looks at
 * the table, for all the jobs still waited for at once (lib/finished.c),
 * when a finish wakes it (mq_finish_park), and mq push --wait waits so
 * too (wait_for_jobs).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "output/output.h"

enum { OPT_TIMEOUT = OPT_CMD };

static const struct opt opts[] = {
	{ OPT_TIMEOUT, "timeout", 0, "D", "give up after D (status 124; the "
	    "jobs still\nwaited for are listed as waiting)", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command wait_command = {
	"wait", "wait until jobs finish", opts, { "[ID...]", NULL },
	CMD_READS_ONLY, cmd_wait, NULL
};

/* Where the waiters table can be used (mq_finish_arm), a look when a
 * finish wakes the park, one after the first arming (a finisher that
 * saw no waiter looks again a second later), and one every LOOK_PARKS
 * parks of PARK_US (jobs finished by other programs' statements,
 * mq-sql(7)): about one statement a second while nothing finishes.
 * While its jobs finish, a look every LOOK_AFTER_FINISH_US and no
 * arming; while other jobs of the range of ids finish, an arming, a
 * look and a park every ARM_GAP_US: two statements a second at most.
 * Where it cannot be used, the looks: the first at once, then 100 ms,
 * doubling up to a second while nothing finishes. */
#define PARK_US 1000000
#define ARM_GAP_US 1500000
#define LOOK_PARKS 3
#define LOOK_FIRST_US 100000
#define LOOK_MAX_US 1000000
#define LOOK_AFTER_FINISH_US 900000

struct waiting {
	const struct command *cmd;
	const char *table;
	uint64_t *ids;		/* ascending, unique: those still waited for */
	unsigned char *out;	/* 1: finished (reported) */
	size_t n;
	int first;		/* the first look: a job not there is unknown */
	int dead, gone, found;
	sigset_t stops;		/* held while a line is written */
};

static void
stop_now(int sig)
{
	_exit(128 + sig);	/* nothing to undo: mq wait only reads */
}

static int
cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The place of id among those waited for, or w->n. */
static size_t
find(const struct waiting *w, uint64_t id)
{
	const uint64_t *p = bsearch(&id, w->ids, w->n, sizeof id, cmp_id);

	return p ? (size_t)(p - w->ids) : w->n;
}

/* A line on stdout, whole: a stop signal waits until it is out. Its
 * reader gone, mq wait ends as the read-only commands do (SIGPIPE);
 * push --wait, which pushed, says the write failure (74: mq(1) keeps
 * 141 for the commands that only read). */
static int
flush_out(const struct waiting *w)
{
	int rc;

	rc = flush_stdout();
	sigprocmask(SIG_UNBLOCK, &w->stops, NULL);
	if (rc != 0) {
		if ((w->cmd->flags & CMD_READS_ONLY) && reader_gone(errno))
			end_by_sigpipe();
		exit(stdout_failure(w->cmd));
	}
	return 0;
}

static int
finished(const struct mq_fin_job *j, void *ctx)
{
	struct waiting *w = ctx;
	size_t k = find(w, j->id);
	unsigned long long id = (unsigned long long)j->id;

	if (k == w->n || w->out[k])
		return 0;
	w->out[k] = 1;
	w->found++;
	if (j->how == MQ_FIN_RECURRING) {
		say(w->cmd, "job %llu is recurring (push --every): it never "
		    "finishes; not waited for", id);
		w->gone++;
		return 0;
	}
	if (j->how == MQ_FIN_GONE && w->first) {
		say(w->cmd, "no job %llu in table %s nor in its archive "
		    "(purged, or never pushed)", id, w->table);
		w->gone++;
		return 0;
	}
	sigprocmask(SIG_BLOCK, &w->stops, NULL);
	switch (j->how) {
	case MQ_FIN_DONE:
		printf("%llu done\n", id);
		break;
	case MQ_FIN_DEAD:
		w->dead++;
		if (j->error && j->error_len) {
			printf("%llu dead ", id);
			put_text(stdout, j->error, j->error_len);
			putchar('\n');
		} else {
			printf("%llu dead\n", id);
		}
		break;
	case MQ_FIN_ARCHIVED:
		/* finished (archived), its outcome unknown: as show says
		 * it, "archived (ready)", "archived (state '')" */
		w->gone++;
		printf("%llu archived (%s)\n", id, archived_state(j->state));
		break;
	default:
		w->gone++;
		printf("%llu gone\n", id);
		break;
	}
	return flush_out(w);
}

/* Sorted, each id once. */
static size_t
unique(uint64_t *ids, size_t n)
{
	size_t i, m = 0;

	qsort(ids, n, sizeof *ids, cmp_id);
	for (i = 0; i < n; i++)
		if (m == 0 || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	return m;
}

static void
sleep_us(int64_t us)
{
	struct timespec ts;

	if (us <= 0)
		return;
	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
fail(struct waiting *w, struct mq_conn *c)
{
	struct mq_error e = *mq_conn_error(c);

	free(w->out);
	mq_close(c);
	die(w->cmd, &e);
}

/* A look, or the command's end on its failure. */
static void
look(struct waiting *w, struct mq_conn *c)
{
	size_t i, m;

	w->found = 0;
	if (mq_look_finished(c, w->ids, w->n, finished, w) != MQ_OK)
		fail(w, c);
	w->first = 0;
	for (i = m = 0; i < w->n; i++)	/* those still waited for */
		if (!w->out[i])
			w->ids[m++] = w->ids[i];
	w->n = m;
	memset(w->out, 0, w->n);
}

/* Parks until a finish wakes it (1), or the timeout, the look for
 * finishes mq did not make, or the look after the first arming is due
 * (0). */
static int
park(struct waiting *w, struct mq_conn *c, int64_t deadline,
    int64_t *stale_at)
{
	int64_t now, us;
	unsigned idle;
	enum mq_status rc;

	for (idle = 1;; idle++) {
		now = mq_now_us();
		us = PARK_US;
		if (deadline && us > deadline - now)
			us = deadline - now;
		if (*stale_at && us > *stale_at - now)
			us = *stale_at - now;
		if (us > 0 && (rc = mq_finish_park(c, us)) != MQ_EMPTY) {
			if (rc != MQ_OK)
				fail(w, c);
			return 1;
		}
		now = mq_now_us();
		if (*stale_at && now >= *stale_at) {
			*stale_at = 0;
			return 0;
		}
		if ((deadline && now >= deadline) || idle % LOOK_PARKS == 0)
			return 0;
	}
}

int
wait_for_jobs(const struct command *cmd, struct mq_conn *c,
    const char *table, uint64_t *ids, size_t n, int64_t timeout_us)
{
	struct waiting w;
	struct sigaction sa;
	int64_t deadline = 0, now, pause = LOOK_FIRST_US, left, stale_at = 0;
	int64_t last_arm = 0;
	uint64_t lo, hi;
	int k, wakeups = 1, armed = 0, armed_once = 0;
	size_t i;

	memset(&w, 0, sizeof w);
	w.cmd = cmd;
	w.table = table;
	w.first = 1;
	sigemptyset(&w.stops);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = stop_now;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < NSTOP_SIGNALS; k++) {
		catch_signal(stop_signals[k], &sa);
		if (!ignored_at_start(stop_signals[k]))
			sigaddset(&w.stops, stop_signals[k]);
	}
	sigprocmask(SIG_UNBLOCK, &w.stops, NULL);
	w.n = unique(ids, n);
	w.ids = ids;
	lo = w.n ? w.ids[0] : 0;
	hi = w.n ? w.ids[w.n - 1] : 0;
	if ((w.out = calloc(w.n ? w.n : 1, 1)) == NULL)
		return no_memory(cmd);
	if (timeout_us >= 0)
		deadline = mq_now_us() + timeout_us;
	for (;;) {
		/* armed before the look that comes before a park; not
		 * before the first look (jobs all finished already, a
		 * read-only server: no write), nor while jobs finish (a
		 * look every LOOK_AFTER_FINISH_US then) */
		if (wakeups && !armed && !w.found && !w.first) {
			enum mq_status rc;

			/* finishes of other jobs of the range woke it: one
			 * arming every ARM_GAP_US at most */
			now = mq_now_us();
			left = last_arm + ARM_GAP_US - now;
			if (last_arm && deadline && left > deadline - now)
				left = deadline - now;
			if (last_arm)
				sleep_us(left);
			last_arm = mq_now_us();
			rc = mq_finish_arm(c, lo, hi);

			if (rc == MQ_EMPTY) {
				wakeups = 0;
			} else if (rc != MQ_OK) {
				fail(&w, c);
			} else {
				armed = 1;
				if (!armed_once++)
					stale_at = mq_now_us() +
					    MQ_FINISH_STALE_US;
			}
		}
		look(&w, c);
		if (w.n == 0)
			break;
		now = mq_now_us();
		if (deadline && now >= deadline) {
			sigprocmask(SIG_BLOCK, &w.stops, NULL);
			for (i = 0; i < w.n; i++)
				printf("%llu waiting\n",
				    (unsigned long long)w.ids[i]);
			flush_out(&w);
			say(cmd, "%zu job%s not finished within the "
			    "timeout", w.n, PLURAL(w.n));
			free(w.out);
			(void)mq_finish_leave(c);
			return EXIT_WAIT_TIMEOUT;
		}
		if (wakeups && !w.found && armed) {
			if (park(&w, c, deadline, &stale_at))
				armed = 0;	/* its row: disarmed */
			continue;
		}
		if (wakeups && !w.found)
			continue;	/* arm, then look, then park */
		if (w.found)
			pause = LOOK_AFTER_FINISH_US;
		left = pause;
		if (deadline && left > deadline - now)
			left = deadline - now;
		sleep_us(left);
		if (!w.found && pause < LOOK_MAX_US)
			pause = pause * 2 < LOOK_MAX_US ? pause * 2 :
			    LOOK_MAX_US;
	}
	free(w.out);
	(void)mq_finish_leave(c);
	return w.dead ? EXIT_WAIT_DEAD : w.gone ? EXIT_EMPTY : 0;
}

static void
option(void *ctx, int id, const char *arg)
{
	if (id == OPT_TIMEOUT)
		*(int64_t *)ctx = duration_arg(&wait_command, "--timeout",
		    arg);
}

int
cmd_wait(int argc, char **argv, struct mq_global *g)
{
	int64_t timeout_us = -1;
	struct mq_conn *c;
	uint64_t *ids;
	size_t n;
	int i, m, rc;

	m = parse_options(&wait_command, argc, argv, g, option, &timeout_us);
	settle(&wait_command, g, 0);
	need_stdio(&wait_command, STDOUT_CLOSED | (m == 0 ? STDIN_CLOSED :
	    0));
	if (m > 0) {
		if ((ids = calloc((size_t)m, sizeof *ids)) == NULL)
			return no_memory(&wait_command);
		/* all ids are checked before anything is read */
		for (i = 0; i < m; i++)
			if (parse_id(argv[1 + i], &ids[i]) != 0) {
				free(ids);
				usage_error(&wait_command, "invalid job id "
				    "'%s': a positive number, as push prints "
				    "it", shown(argv[1 + i]));
			}
		n = (size_t)m;
	} else {
		ids = read_id_lines(&wait_command, stdin, "standard input", &n);
		if (n == 0) {
			free(ids);
			return 0;	/* nothing to wait for */
		}
	}
	c = open_queue_table(&wait_command, g);
	rc = wait_for_jobs(&wait_command, c, g->table, ids, n, timeout_us);
	mq_close(c);
	free(ids);
	return rc;
}
