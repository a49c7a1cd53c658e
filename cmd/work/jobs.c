/*
 * work/jobs.c: part of mq work, not a command of its own (its page is
 * mq-work(1)): the child-process side: finding CMD, starting it per job
 * with posix_spawn (not fork: a worker with connections and buffers
 * starts a job as cheaply as a shell), keeping the tail of its stderr,
 * stopping it.
 */
#define _GNU_SOURCE		/* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int
spawn_job(struct slot *s, const char *path, char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
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
	fcntl(fileno(in), F_SETFD, FD_CLOEXEC);	/* its dup as stdin stays */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawn_file_actions_addclose(&fa, errp[1]);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	/* the db threads connect while jobs start: a socket opened but not
	 * yet close-on-exec (libmariadb sets no SOCK_CLOEXEC; conn.c marks
	 * it after the handshake) must not reach the job */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	/* a group of its own: a timeout or lost lease stops CMD and what it
	 * started, and a terminal's ^C reaches only the worker */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&s->pid, path, &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
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
