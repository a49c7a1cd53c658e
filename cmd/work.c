/*
 * work.c: mq work -- CMD: a consumer loop for shell users. Claims jobs,
 * runs CMD once per job (payload on stdin, MQ_* in the environment), acks
 * on exit 0 and fails otherwise; extends leases while CMD runs; waits for
 * pushes on a second, non-blocking connection parked in a marked SLEEP.
 * One process, one poll() loop: children, their stderr, signals (through
 * a self-pipe) and the waiting connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq work [--queue Q] [--concurrency N] [--lease D] [--timeout D]"
    " [--max-jobs N] [--exit-when-empty | --wait D] [--table T]"
    " [CONNECTION-OPTIONS] -- CMD [ARG...]";

static const char options[] =
    "\noptions:\n"
    "  --queue Q           queue to work on (default: default; MQ_QUEUE)\n"
    "  --concurrency N     run up to N jobs at once (default 1)\n"
    "  --lease D           lease per job, extended while it runs (default 1m)\n"
    "  --timeout D         kill and fail a job running longer than D\n"
    "  --max-jobs N        claim N jobs, finish them, exit\n"
    "  --exit-when-empty   exit when no job is due and none runs\n"
    "  --wait D            exit when no job came for D (default: wait on)\n";

#define TAIL 4096		/* bytes of a job's stderr kept as its error */
#define GRACE_US 5000000	/* from SIGTERM to SIGKILL */
#define MAX_SLOTS 256

enum end { RUNNING, EXITED, TIMED_OUT, LOST, ABANDONED };

struct slot {
	int used;
	pid_t pid;
	struct mq_receipt receipt;
	uint64_t id;
	int err_fd;			/* the child's stderr, or -1 */
	char tail[TAIL];		/* ring of its last stderr bytes */
	size_t tail_len, tail_pos;
	int64_t next_beat, deadline, kill_at;
	enum end end;
	int status;			/* from waitpid, when reaped */
	int reaped, reported;
};

struct worker {
	struct mq_global *g;
	struct mq_pop_opts pop;
	int64_t lease_us, timeout_us, wait_us;
	long long max_jobs, claimed;
	int exit_when_empty, concurrency;
	char **cmd;
	char path[4096];		/* cmd[0], found in PATH once */
	struct slot slot[MAX_SLOTS];
	int running;
	struct mq_conn *c, *cw;		/* work; waiting (non-blocking) */
	struct mq_async wait;
	int waiting, wait_broken;
	int64_t next_claim, idle_since, reconnect_at, backoff_us;
	int stopping;
};

extern char **environ;

static int sigpipe_fd[2] = { -1, -1 };
static int spawn_failed;	/* CMD cannot be run at all */

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	(void)!write(sigpipe_fd[1], &b, 1);
	errno = saved;
}

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
warn_job(const struct slot *s, const char *what)
{
	fprintf(stderr, "mq work: job %llu: %s\n", (unsigned long long)s->id,
	    what);
}

/* Drops the connections after a failure that may mean the server is
 * gone; they are made again, with backoff, before the next use. */
static void
lost_server(struct worker *w, const struct mq_error *e)
{
	report("work", NULL, e);
	mq_close(w->c);
	mq_close(w->cw);
	w->c = w->cw = NULL;
	w->waiting = 0;
	w->backoff_us = w->backoff_us ? w->backoff_us * 2 : 500000;
	if (w->backoff_us > 30000000)
		w->backoff_us = 30000000;
	w->reconnect_at = now_us() + w->backoff_us;
	fprintf(stderr, "mq work: reconnecting in %.1fs\n",
	    (double)w->backoff_us / 1e6);
}

/* The work connection, made again if needed; NULL while it cannot be. */
static struct mq_conn *
conn(struct worker *w)
{
	struct mq_error e;

	if (w->c || now_us() < w->reconnect_at)
		return w->c;
	if ((w->c = mq_connect(&w->g->conn, &e)) == NULL) {
		if (e.status != MQ_EUNAVAIL)
			die("work", &e);
		lost_server(w, &e);
		return NULL;
	}
	if (mq_use_table(w->c, w->g->table) != MQ_OK) {
		e = *mq_conn_error(w->c);
		if (e.status != MQ_EUNAVAIL)
			die("work", &e);
		lost_server(w, &e);
		return NULL;
	}
	if (w->backoff_us)
		fprintf(stderr, "mq work: connected again\n");
	w->backoff_us = 0;
	return w->c;
}

/* Handles a library failure on the work connection: the server's loss is
 * survived, anything else about the setup ends the worker. */
static void
db_failure(struct worker *w, enum mq_status st)
{
	struct mq_error e = *mq_conn_error(w->c);

	if (st == MQ_EUNAVAIL || st == MQ_ERETRY || st == MQ_EDB) {
		lost_server(w, &e);
		return;
	}
	die("work", &e);
}

static void
kill_job(struct slot *s, int sig)
{
	kill(-s->pid, sig);	/* its process group: CMD and its children */
}

/* Finds cmd as a shell would (in PATH unless it has a '/'), once, rather
 * than at each job. */
static int
find_command(const char *cmd, char *path, size_t size)
{
	const char *dirs = getenv("PATH"), *p, *end;
	size_t n;

	if (strchr(cmd, '/')) {
		snprintf(path, size, "%s", cmd);
		return access(path, X_OK);
	}
	for (p = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; ; p = end + 1) {
		end = strchr(p, ':');
		n = end ? (size_t)(end - p) : strlen(p);
		snprintf(path, size, "%.*s%s%s", (int)n, p, n ? "/" : "",
		    cmd);
		if (access(path, X_OK) == 0)
			return 0;
		if (!end)
			return -1;
	}
}

/* The child's environment: ours, with the job's MQ_* in place of any we
 * have. */
static char **
job_env(const struct mq_job *j, char vars[4][96])
{
	static const char *const names[] = { "MQ_ID=", "MQ_RECEIPT=",
	    "MQ_QUEUE=", "MQ_ATTEMPT=" };
	char receipt[MQ_RECEIPT_SIZE];
	size_t n = 0, k, i;
	char **env;

	while (environ[n])
		n++;
	if ((env = malloc((n + 5) * sizeof *env)) == NULL)
		return NULL;
	for (i = k = 0; i < n; i++) {
		size_t m;
		for (m = 0; m < 4; m++)
			if (strncmp(environ[i], names[m], strlen(names[m])) == 0)
				break;
		if (m == 4)
			env[k++] = environ[i];
	}
	mq_format_receipt(&j->receipt, receipt);
	snprintf(vars[0], 96, "MQ_ID=%llu", (unsigned long long)j->id);
	snprintf(vars[1], 96, "MQ_RECEIPT=%s", receipt);
	snprintf(vars[2], 96, "MQ_QUEUE=%s", j->queue);
	snprintf(vars[3], 96, "MQ_ATTEMPT=%u", j->attempt);
	for (i = 0; i < 4; i++)
		env[k++] = vars[i];
	env[k] = NULL;
	return env;
}

/* Starts CMD for job j in slot s: posix_spawn, not fork, so a worker
 * with many connections and buffers starts a job as cheaply as a shell. */
static int
start(struct worker *w, struct slot *s, const struct mq_job *j)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	char vars[4][96], **env = NULL;
	int errp[2] = { -1, -1 }, rc = -1, e;
	FILE *in = tmpfile();

	memset(s, 0, sizeof *s);
	s->err_fd = -1;
	s->id = j->id;
	s->receipt = j->receipt;
	/* the payload from a file, not a pipe: any size, no deadlock */
	if (in == NULL || fwrite(j->payload, 1, j->len, in) != j->len ||
	    fflush(in) != 0 || lseek(fileno(in), 0, SEEK_SET) != 0 ||
	    pipe(errp) != 0 || (env = job_env(j, vars)) == NULL) {
		fprintf(stderr, "mq work: cannot stage job %llu: %s\n",
		    (unsigned long long)j->id, strerror(errno));
		goto out;
	}
	fcntl(errp[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawn_file_actions_addclose(&fa, errp[1]);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	/* its own process group: a timeout or lost lease stops CMD and
	 * whatever it started */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&s->pid, w->path, &fa, &attr, w->cmd, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (e != 0) {
		fprintf(stderr, "mq work: cannot run '%s': %s\n",
		    shown(w->cmd[0]), strerror(e));
		spawn_failed = 1;
		goto out;
	}
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	s->err_fd = errp[0];
	errp[0] = -1;
	s->used = 1;
	s->end = RUNNING;
	s->next_beat = now_us() + w->lease_us / 3;
	s->deadline = w->timeout_us ? now_us() + w->timeout_us : 0;
	w->running++;
	rc = 0;
out:
	if (in)
		fclose(in);
	if (errp[0] >= 0)
		close(errp[0]);
	if (errp[1] >= 0)
		close(errp[1]);
	free(env);
	return rc;
}

/* Reads what the child wrote to stderr: passed on, and its tail kept. */
static void
drain(struct slot *s)
{
	char buf[4096];
	ssize_t n, i;

	while (s->err_fd >= 0 && (n = read(s->err_fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			n = 0;
			break;
		}
		(void)!fwrite(buf, 1, (size_t)n, stderr);
		for (i = 0; i < n; i++) {
			s->tail[s->tail_pos] = buf[i];
			s->tail_pos = (s->tail_pos + 1) % TAIL;
			if (s->tail_len < TAIL)
				s->tail_len++;
		}
	}
	close(s->err_fd);
	s->err_fd = -1;
}

/* The error text of a failed job: its stderr's tail, or how it ended. */
static size_t
error_text(const struct slot *s, const struct worker *w, char *buf)
{
	size_t start = (s->tail_pos + TAIL - s->tail_len) % TAIL, i;
	int n = 0;

	if (s->end == TIMED_OUT)
		n = snprintf(buf, 128, "timed out after %.1fs; ",
		    (double)w->timeout_us / 1e6);
	else if (WIFSIGNALED(s->status))
		n = snprintf(buf, 128, "killed by signal %d; ",
		    WTERMSIG(s->status));
	else
		n = snprintf(buf, 128, "exit status %d; ",
		    WEXITSTATUS(s->status));
	for (i = 0; i < s->tail_len; i++)
		buf[n + (int)i] = s->tail[(start + i) % TAIL];
	return (size_t)n + s->tail_len;
}

static int
succeeded(const struct slot *s)
{
	return s->end == EXITED && WIFEXITED(s->status) &&
	    WEXITSTATUS(s->status) == 0;
}

/* Reports a finished job to the server: ack, fail, or give back. */
static void
report_job(struct worker *w, struct slot *s)
{
	char text[TAIL + 128];
	struct mq_fail_opts fo = { .retry_in_us = -1 };
	struct mq_fail_result res;
	unsigned char lost = 0;
	struct mq_conn *c;
	enum mq_status st;

	if (s->end == LOST) {
		s->reported = 1;	/* someone else has it now */
		return;
	}
	if ((c = conn(w)) == NULL)
		return;		/* again once the server is back */
	if (s->end == ABANDONED) {
		st = mq_release(c, &s->receipt);
	} else if (succeeded(s)) {
		st = mq_ack(c, &s->receipt, 1, &lost);
	} else {
		fo.error = text;
		fo.error_len = error_text(s, w, text);
		st = mq_fail(c, &s->receipt, &fo, &res);
		if (st == MQ_OK && res.dead)
			fprintf(stderr, "mq work: job %llu: failed (%s); dead "
			    "after %u attempt%s\n", (unsigned long long)s->id,
			    s->end == TIMED_OUT ? "timed out" : "non-zero exit",
			    res.attempts, PLURAL(res.attempts));
		else if (st == MQ_OK)
			fprintf(stderr, "mq work: job %llu: failed (%s); due "
			    "again in %.1fs\n", (unsigned long long)s->id,
			    s->end == TIMED_OUT ? "timed out" : "non-zero exit",
			    (double)res.retry_in_us / 1e6);
	}
	if (st == MQ_ELEASE)
		warn_job(s, MQ_LEASE_LOST);
	else if (st != MQ_OK) {
		db_failure(w, st);
		return;		/* kept: reported after reconnecting */
	}
	s->reported = 1;
}

static void
reap(struct worker *w)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < w->concurrency; i++)
			if (w->slot[i].used && w->slot[i].pid == pid &&
			    !w->slot[i].reaped) {
				w->slot[i].reaped = 1;
				w->slot[i].status = status;
				if (w->slot[i].end == RUNNING)
					w->slot[i].end = EXITED;
				drain(&w->slot[i]);
			}
}

/* Claims up to count jobs, acking the receipts in r in the same
 * transaction; starts the jobs. Returns 0, or -1 if the server failed
 * (the acks are then still to do). */
static int
claim(struct worker *w, const struct mq_receipt *r, unsigned char *lost,
    size_t nr, unsigned count)
{
	struct mq_job *jobs;
	enum mq_status st;
	size_t n, i;
	int k = 0;

	w->pop.count = count;
	st = mq_ack_pop(w->c, r, nr, lost, &w->pop, &jobs, &n);
	if (st == MQ_EMPTY || st == MQ_PAUSED) {
		w->next_claim = INT64_MAX;	/* until the wait says so */
		if (!w->idle_since)
			w->idle_since = now_us();
		return 0;
	}
	if (st != MQ_OK) {
		db_failure(w, st);
		return -1;
	}
	w->idle_since = 0;
	for (i = 0; i < n; i++) {
		while (w->slot[k].used)
			k++;
		w->claimed++;
		if (spawn_failed || start(w, &w->slot[k], &jobs[i]) != 0) {
			/* give it back rather than hold it for a lease */
			(void)mq_release(w->c, &jobs[i].receipt);
		}
	}
	if (spawn_failed)
		w->stopping = 1;	/* CMD cannot run: no use claiming more */
	mq_jobs_free(jobs, n);
	return 0;
}

/* Reports the jobs that ended, and claims new ones when it may: the acks
 * of jobs that exited 0 go in the claim's transaction (one commit per
 * job), or alone when there is nothing to claim. */
static void
finish(struct worker *w)
{
	struct mq_receipt r[MAX_SLOTS];
	unsigned char lost[MAX_SLOTS];
	struct slot *which[MAX_SLOTS];
	size_t nr = 0, i;
	int k, busy = 0, acked = 0, may_claim;
	long long room;
	enum mq_status st;

	for (k = 0; k < w->concurrency; k++) {
		struct slot *s = &w->slot[k];
		if (s->used && !s->reaped)
			busy++;
		else if (s->used && !s->reported && succeeded(s)) {
			which[nr] = s;
			r[nr++] = s->receipt;
		}
	}
	room = w->concurrency - busy;
	if (w->max_jobs && room > w->max_jobs - w->claimed)
		room = w->max_jobs - w->claimed;
	may_claim = !w->stopping && room > 0 && now_us() >= w->next_claim;
	if ((nr || may_claim) && conn(w)) {
		/* free the acked slots first: the claim's jobs need them */
		if (may_claim) {
			for (i = 0; i < nr; i++)
				which[i]->used = 0;
			w->running -= (int)nr;
			acked = claim(w, r, lost, nr, (unsigned)room) == 0;
			if (!acked)	/* keep them for after reconnecting */
				for (i = 0; i < nr; i++) {
					which[i]->used = 1;
					w->running++;
				}
		} else {
			st = mq_ack(w->c, r, nr, lost);
			acked = st == MQ_OK || st == MQ_ELEASE;
			if (!acked)
				db_failure(w, st);
			for (i = 0; acked && i < nr; i++) {
				which[i]->used = 0;
				w->running--;
			}
		}
		for (i = 0; acked && i < nr; i++)
			if (lost[i])
				warn_job(which[i], MQ_LEASE_LOST);
	}
	for (k = 0; k < w->concurrency; k++) {
		struct slot *s = &w->slot[k];
		if (!s->used || !s->reaped || succeeded(s))
			continue;
		if (!s->reported)
			report_job(w, s);
		if (s->reported) {
			s->used = 0;
			w->running--;
		}
	}
}

/* Heartbeats, timeouts, kills: what the clock asks of running jobs. */
static void
tend(struct worker *w)
{
	int64_t now = now_us();
	enum mq_status st;
	int i;

	for (i = 0; i < w->concurrency; i++) {
		struct slot *s = &w->slot[i];
		if (!s->used || s->reaped)
			continue;
		if (s->kill_at && now >= s->kill_at) {
			kill_job(s, SIGKILL);
			s->kill_at = 0;
		}
		if (s->end == RUNNING && s->deadline && now >= s->deadline) {
			s->end = TIMED_OUT;
			kill_job(s, SIGTERM);
			s->kill_at = now + GRACE_US;
		}
		if (s->end == RUNNING && now >= s->next_beat && conn(w)) {
			st = mq_extend(w->c, &s->receipt, w->lease_us);
			s->next_beat = now + w->lease_us / 3;
			if (st == MQ_ELEASE) {
				warn_job(s, MQ_LEASE_LOST "; stopping it");
				s->end = LOST;
				kill_job(s, SIGTERM);
				s->kill_at = now + GRACE_US;
			} else if (st != MQ_OK) {
				db_failure(w, st);
			}
		}
	}
}

/* The first signal stops claiming; the second stops the jobs too and
 * gives them back at once. */
static void
on_stop(struct worker *w)
{
	int i;

	if (!w->stopping) {
		w->stopping = 1;
		return;
	}
	for (i = 0; i < w->concurrency; i++)
		if (w->slot[i].used && !w->slot[i].reaped &&
		    w->slot[i].end == RUNNING) {
			w->slot[i].end = ABANDONED;
			kill_job(&w->slot[i], SIGKILL);
		}
}

/* Parks the waiting connection, if idle and not parked yet. */
static void
park(struct worker *w)
{
	struct mq_error e;
	struct mq_connopts o = w->g->conn;

	if (w->waiting || w->wait_broken)
		return;
	if (w->cw == NULL) {
		o.nonblock = 1;
		if ((w->cw = mq_connect(&o, &e)) == NULL ||
		    mq_use_table(w->cw, w->g->table) != MQ_OK) {
			mq_close(w->cw);
			w->cw = NULL;
			return;		/* polled each second instead */
		}
	}
	if (mq_wait_begin(w->cw, w->pop.queue, 1000000, &w->wait) != MQ_OK) {
		/* no non-blocking waits here: poll each second */
		w->wait_broken = 1;
		return;
	}
	w->waiting = !w->wait.done;
	if (w->wait.done)
		w->next_claim = 0;
}

/* After poll(): the waiting connection's answer, if any. */
static void
step_wait(struct worker *w, short revents, int timed_out)
{
	enum mq_status st = mq_wait_step(w->cw, &w->wait, revents, timed_out);

	if (!w->wait.done)
		return;
	w->waiting = 0;
	if (st == MQ_OK)
		w->next_claim = 0;		/* due now, or woken */
	else if (st != MQ_EMPTY) {
		mq_close(w->cw);		/* made again when next idle */
		w->cw = NULL;
		w->next_claim = 0;
	}
}

static int
done(struct worker *w)
{
	int64_t now = now_us();

	if (w->running)
		return 0;
	if (w->stopping)
		return 1;
	if (w->max_jobs && w->claimed >= w->max_jobs)
		return 1;
	if (w->idle_since && w->exit_when_empty)
		return 1;
	return w->idle_since && w->wait_us >= 0 &&
	    now - w->idle_since >= w->wait_us;
}

static int
timeout_ms(struct worker *w)
{
	int64_t now = now_us(), next = now + 1000000;
	int i;

	if (!w->waiting && w->next_claim < next)
		next = w->next_claim;
	if (w->reconnect_at > now && w->reconnect_at < next)
		next = w->reconnect_at;
	for (i = 0; i < w->concurrency; i++) {
		const struct slot *s = &w->slot[i];
		if (!s->used || s->reaped)
			continue;
		if (s->end == RUNNING && s->next_beat < next)
			next = s->next_beat;
		if (s->end == RUNNING && s->deadline && s->deadline < next)
			next = s->deadline;
		if (s->kill_at && s->kill_at < next)
			next = s->kill_at;
	}
	if (w->waiting && w->wait.timeout_ms >= 0 &&
	    now + (int64_t)w->wait.timeout_ms * 1000 < next)
		next = now + (int64_t)w->wait.timeout_ms * 1000;
	return next <= now ? 0 : (int)((next - now + 999) / 1000);
}

static void
loop(struct worker *w)
{
	struct pollfd fds[MAX_SLOTS + 2];
	int map[MAX_SLOTS + 2], nfds, i, r, wait_idx;
	unsigned char sig;

	while (!done(w)) {
		reap(w);
		tend(w);
		finish(w);
		if (done(w))
			break;
		if (!w->stopping && w->idle_since && w->running <
		    w->concurrency && conn(w)) {
			park(w);
			if (!w->waiting && w->next_claim == INT64_MAX)
				w->next_claim = now_us() + 1000000;
		}
		nfds = 0;
		fds[nfds].fd = sigpipe_fd[0];
		fds[nfds++].events = POLLIN;
		for (i = 0; i < w->concurrency; i++)
			if (w->slot[i].used && w->slot[i].err_fd >= 0) {
				map[nfds] = i;
				fds[nfds].fd = w->slot[i].err_fd;
				fds[nfds++].events = POLLIN;
			}
		wait_idx = -1;
		if (w->waiting) {
			wait_idx = nfds;
			fds[nfds].fd = w->wait.fd;
			fds[nfds++].events = w->wait.events;
		}
		r = poll(fds, (nfds_t)nfds, timeout_ms(w));
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "mq work: poll: %s\n", strerror(errno));
			exit(EX_OSERR);
		}
		if (r > 0 && (fds[0].revents & POLLIN))
			while (read(sigpipe_fd[0], &sig, 1) == 1)
				if (sig == SIGTERM || sig == SIGINT)
					on_stop(w);
		for (i = 1; r > 0 && i < nfds; i++) {
			if (i == wait_idx)
				continue;
			if (fds[i].revents)
				drain(&w->slot[map[i]]);
		}
		if (w->waiting && (wait_idx < 0 ? 0 : fds[wait_idx].revents))
			step_wait(w, fds[wait_idx].revents, 0);
		else if (w->waiting && w->wait.timeout_ms >= 0 && r == 0)
			step_wait(w, 0, 1);
	}
}

int
cmd_work(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_CONC = OPT_CMD, OPT_LEASE, OPT_TIMEOUT, OPT_MAX_JOBS,
	    OPT_EXIT_EMPTY, OPT_WAIT };
	static const struct option longopts[] = {
		{"concurrency", required_argument, NULL, OPT_CONC},
		{"lease", required_argument, NULL, OPT_LEASE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"max-jobs", required_argument, NULL, OPT_MAX_JOBS},
		{"exit-when-empty", no_argument, NULL, OPT_EXIT_EMPTY},
		{"wait", required_argument, NULL, OPT_WAIT},
		QUEUE_LONGOPT,
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	static struct worker w;
	struct sigaction sa;
	int opt;

	memset(&w, 0, sizeof w);
	w.concurrency = 1;
	w.lease_us = 60000000;
	w.wait_us = -1;
	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option("work", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_CONC:
			w.concurrency = (int)int_arg("work", "--concurrency",
			    optarg, 1, MAX_SLOTS);
			break;
		case OPT_LEASE:
			w.lease_us = duration_arg("work", "--lease", optarg);
			if (w.lease_us < 3000000)
				usage_error("work", "--lease must be at least 3s");
			break;
		case OPT_TIMEOUT:
			w.timeout_us = duration_arg("work", "--timeout", optarg);
			if (w.timeout_us == 0)
				usage_error("work", "--timeout must be above 0");
			break;
		case OPT_MAX_JOBS:
			w.max_jobs = int_arg("work", "--max-jobs", optarg, 1,
			    1000000000000LL);
			break;
		case OPT_EXIT_EMPTY:	w.exit_when_empty = 1; break;
		case OPT_WAIT:
			w.wait_us = duration_arg("work", "--wait", optarg);
			break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("work", opt, argv);
		}
	}
	settle("work", g, 1);
	if (w.exit_when_empty && w.wait_us >= 0)
		usage_error("work", "--exit-when-empty and --wait exclude each "
		    "other");
	if (optind >= argc)
		usage_error("work", "no command given (mq work [options] -- CMD)");
	w.g = g;
	w.cmd = argv + optind;
	if (find_command(w.cmd[0], w.path, sizeof w.path) != 0) {
		fprintf(stderr, "mq work: cannot run '%s': %s\n",
		    shown(w.cmd[0]), strchr(w.cmd[0], '/') ? strerror(errno) :
		    "not found in PATH");
		return 127;
	}
	w.pop.queue = g->queue;
	w.pop.lease_us = w.lease_us;

	/* fail early on what no retry can mend (table, grants, names) */
	w.c = open_queue_table("work", g);
	if (pipe(sigpipe_fd) != 0) {
		fprintf(stderr, "mq work: pipe: %s\n", strerror(errno));
		return EX_OSERR;
	}
	fcntl(sigpipe_fd[0], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fd[1], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(sigpipe_fd[1], F_SETFD, FD_CLOEXEC);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;	/* the client library's reads go on */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	loop(&w);
	mq_close(w.c);
	mq_close(w.cw);
	return spawn_failed ? 127 : 0;
}
