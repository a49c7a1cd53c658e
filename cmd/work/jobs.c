/*
 * work/jobs.c: part of mq work, not a command of its own (its page is
 * mq-work(1)): the child-process side: finding CMD, starting it per job
 * (vfork, then exec), keeping the tail of its stderr, stopping it.
 */
#define _GNU_SOURCE		/* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "work.h"

extern char **environ;

/* An executable regular file? */
static int
runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EACCES;
		return -1;
	}
	return access(path, X_OK);
}

int
find_command(const char *cmd, char *path, size_t size)
{
	const char *dirs = getenv("PATH"), *p, *end;
	size_t n;

	if (strchr(cmd, '/')) {
		snprintf(path, size, "%s", cmd);
		return runnable(path);
	}
	for (p = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; ; p = end + 1) {
		end = strchr(p, ':');
		n = end ? (size_t)(end - p) : strlen(p);
		snprintf(path, size, "%.*s%s%s", (int)n, p, n ? "/" : "",
		    cmd);
		if (runnable(path) == 0)
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
	size_t n = 0, k, i, m;
	char **env;

	while (environ[n])
		n++;
	if ((env = malloc((n + 5) * sizeof *env)) == NULL)
		return NULL;
	for (i = k = 0; i < n; i++) {
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

/* An unnamed file for the payload: in memory where the kernel has
 * memfd_create (a file system's temporary file costs more per job), else
 * tmpfile()'s. Either is a regular file: CMD may seek in it. */
static FILE *
payload_file(void)
{
#if defined(MFD_CLOEXEC)
	int fd = memfd_create("mq-payload", MFD_CLOEXEC);
	FILE *f;

	if (fd >= 0) {
		if ((f = fdopen(fd, "w+")) != NULL)
			return f;
		close(fd);
	}
#endif
	return tmpfile();
}

/* What the job's process does between vfork and exec. */
struct child {
	const char *path;
	char **argv, **env;
	int in_fd, err_fd;
	int hup_ignored;	/* mq work was started with SIGHUP ignored */
	int fd_max;		/* close_range's fallback */
	volatile int err;	/* errno of a step that failed: exec's */
};

/* The job's process, sharing mq work's memory until it execs (vfork): it
 * calls only what is safe there (async-signal-safe), and never returns.
 * A group of its own first: a timeout or a lost lease stops CMD and what
 * it started, and a terminal's ^C reaches only the worker. A stop signal
 * sent to the worker's group before that (a ^C, a timeout(1)'s SIGTERM)
 * reached this process too, blocked: set to be ignored, it is thrown
 * away, then set back to the default, so that a job killed by it never
 * began (it killed the job at the exec, counted as a failed attempt:
 * posix_spawn's child has no step between those two). */
static _Noreturn void
child_exec(struct child *ch)
{
	/* what a terminal or a timeout(1) sends a whole group */
	static const int group[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
	    SIGTSTP, SIGTTIN, SIGTTOU };
	static const int dfl[] = { SIGINT, SIGTERM, SIGPIPE, SIGCHLD };
	struct sigaction sa, was[sizeof group / sizeof group[0]];
	sigset_t none;
	size_t i;
	int fd, sig;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	if (setpgid(0, 0) != 0)
		goto fail;
	/* a handler of mq work's must not run here (it shares mq work's
	 * memory), whatever comes when the mask is lifted */
	for (sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN &&
		    sa.sa_handler != SIG_DFL) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(sig, &sa, NULL);
		}
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	/* a group's signal that came before setpgid is thrown away;
	 * then each has what it had (ignored stays ignored: nohup) */
	sa.sa_handler = SIG_IGN;
	for (i = 0; i < sizeof group / sizeof group[0]; i++)
		sigaction(group[i], &sa, &was[i]);
	for (i = 0; i < sizeof group / sizeof group[0]; i++)
		if (was[i].sa_handler != SIG_IGN ||
		    (group[i] == SIGHUP && !ch->hup_ignored)) {
			was[i].sa_handler = SIG_DFL;
			sigaction(group[i], &was[i], NULL);
		}
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < sizeof dfl / sizeof dfl[0]; i++)
		sigaction(dfl[i], &sa, NULL);
	if (dup2(ch->in_fd, 0) < 0 || dup2(ch->err_fd, 2) < 0)
		goto fail;
	/* the db threads connect while jobs start: a socket opened but not
	 * yet close-on-exec (libmariadb sets no SOCK_CLOEXEC; conn.c marks
	 * it after the handshake) must not reach the job */
#if defined(SYS_close_range)
	if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
		for (fd = 3; fd < ch->fd_max; fd++)
			close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(ch->path, ch->argv, ch->env);
fail:
	ch->err = errno ? errno : ENOEXEC;
	_exit(127);
}

/* Starts the job's process: vfork (not fork: a worker with connections
 * and buffers starts a job as cheaply as a shell), with every signal
 * blocked until it has set its own, so that no handler of mq work runs
 * in it. 0, or an errno. */
static int
start_child(struct child *ch, pid_t *pid)
{
	sigset_t all, old;
	pid_t p;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ch->err = 0;
	p = vfork();
	if (p == 0)
		child_exec(ch);
	e = p < 0 ? errno : ch->err;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (p > 0 && e != 0) {
		(void)waitpid(p, NULL, 0);	/* it did not exec */
		p = -1;
	}
	*pid = p;
	return e;
}

int
spawn_job(struct slot *s, const char *path, char **argv)
{
	static int fd_max;
	struct child ch;
	struct rlimit rl;
	char vars[4][96], **env = NULL;
	int errp[2] = { -1, -1 }, e = 0;
	FILE *in = payload_file();

	/* the payload from a file, not a pipe: any size, no deadlock */
	if (in == NULL || fwrite(s->job.payload, 1, s->job.len, in) !=
	    s->job.len || fflush(in) != 0 ||
	    lseek(fileno(in), 0, SEEK_SET) != 0 || pipe(errp) != 0 ||
	    (env = job_env(&s->job, vars)) == NULL) {
		e = errno ? errno : ENOMEM;
		goto out;
	}
	fcntl(errp[0], F_SETFD, FD_CLOEXEC);
	memset(&ch, 0, sizeof ch);
	ch.path = path;
	ch.argv = argv;
	ch.env = env;
	ch.in_fd = fileno(in);
	ch.err_fd = errp[1];
	ch.hup_ignored = ignored_at_start(SIGHUP);
	/* read once: the worker does not change its limit */
	if (fd_max == 0)
		fd_max = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < INT_MAX ?
		    (int)rl.rlim_cur : 1 << 20;
	ch.fd_max = fd_max;
	e = start_child(&ch, &s->pid);
	if (e == 0) {
		fcntl(errp[0], F_SETFL, O_NONBLOCK);
		s->err_fd = errp[0];
		errp[0] = -1;
		s->tail_len = s->tail_pos = 0;
	}
out:
	if (in)
		fclose(in);
	if (errp[0] >= 0)
		close(errp[0]);
	if (errp[1] >= 0)
		close(errp[1]);
	free(env);
	free(s->job.payload);
	s->job.payload = NULL;
	return e;
}

/* Whether mq work's own stderr takes a write of PIPE_BUF bytes now
 * without blocking (or fails at once: its reader gone). */
int
stderr_ready(void)
{
	struct pollfd p = { 2, POLLOUT, 0 };

	return poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLOUT | POLLERR | POLLHUP));
}

int
stdout_gone(void)
{
	struct pollfd p = { 1, POLLOUT, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int
drain(struct slot *s, int ended)
{
	char buf[4096];
	ssize_t n, i;
	int ready;

	/* a log reader that stalls (mq work's stderr a pipe nobody reads)
	 * must not stall the loop, and with it every heartbeat and timeout:
	 * a running job's output waits in its own pipe (the job blocks, as
	 * it would writing there itself); an ended job's is read for its
	 * error text, and what stderr cannot take is not forwarded */
	while (s->err_fd >= 0) {
		if (!(ready = stderr_ready()) && !ended)
			return 1;
		if ((n = read(s->err_fd, buf, sizeof buf)) == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			break;
		}
		if (ready)
			(void)!fwrite(buf, 1, (size_t)n, stderr);
		for (i = 0; i < n; i++) {
			s->tail[s->tail_pos] = buf[i];
			s->tail_pos = (s->tail_pos + 1) % TAIL;
			if (s->tail_len < TAIL)
				s->tail_len++;
		}
	}
	if (s->err_fd >= 0)
		close(s->err_fd);
	s->err_fd = -1;
	return 0;
}

void
kill_job(const struct slot *s, int sig)
{
	if (s->pid > 0)
		kill(-s->pid, sig);
}
