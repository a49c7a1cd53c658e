/*
 * process.c: what mq makes of the process it was started as: closed
 * standard descriptors, inherited signal masks and ignored signals, and
 * the ends of a command whose output has no reader; and the stop signals
 * of the commands that stop cleanly on them.
 */
#define _GNU_SOURCE		/* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Started with 0, 1 or 2 closed (`mq work 2>&-`), the first socket or file
 * mq opens would take that number: a job's stderr written into the server
 * connection, ids sent to the server as if to stdout. Each closed one is
 * opened on /dev/null first (OpenSSH's sanitise_stdfd()); without
 * /dev/null mq refuses to run rather than risk it. Commands whose work
 * is to read stdin or to hand something over on stdout refuse to start
 * when it was closed (need_stdio()): a job popped into /dev/null, or
 * pushed with ids nobody sees, would be a silent loss. */
unsigned std_closed;

/* A signal mask is inherited through exec: a parent that blocked
 * signals (for its own signalfd, say) and forgot them would leave mq
 * work deaf to SIGTERM, SIGINT and SIGHUP, and to its jobs' ends
 * (SIGCHLD), mq top to its terminal's, and the time limits of mq check
 * and mq completion (SIGALRM). What a command blocks, it
 * blocks itself, for as long as it needs to. (Ignored signals stay
 * ignored: a background job of a shell ignores SIGINT by design.) */
const int stop_signals[NSTOP_SIGNALS] = { SIGTERM, SIGINT, SIGHUP };

/* The stop signals mq was started with ignored: nohup's SIGHUP, a
 * shell's background job's SIGINT. They stay ignored (catch_signal). */
static sigset_t started_ignored;

static void
sanitise_stdfd(void)
{
	int fd, nullfd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFL) != -1)
			continue;
		std_closed |= 1u << fd;
		nullfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (nullfd != fd) {
			/* fd 2 may be the one closed: say it where we can */
			if (fcntl(2, F_GETFL) != -1)
				fprintf(stderr, "mq: cannot open /dev/null "
				    "for a closed standard descriptor\n");
			_exit(EX_OSERR);
		}
	}
}

/* Whether stdout is a pipe (or socket) nobody reads any more: the write
 * failed with EPIPE, or, the error having been met by an earlier write,
 * poll says so now. */
int
reader_gone(int err)
{
	struct pollfd p = { 1, POLLOUT, 0 };

	return err == EPIPE || (poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLERR | POLLHUP)));
}

/* The reader of a read-only command's output has had what it wanted
 * (`mq stats | head -1`): end as coreutils do under the default SIGPIPE,
 * silently, killed by that signal (the shell says 141). The client
 * library ignores SIGPIPE for its sockets, so the write only failed: the
 * default disposition comes back here. */
void
end_by_sigpipe(void)
{
	sigset_t s;

	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE);
}

int
flush_read_only(void)
{
	if (flush_stdout() != 0) {
		if (reader_gone(errno))
			end_by_sigpipe();
		return -1;
	}
	return 0;
}

int
discard_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fd != STDOUT_FILENO) {
		if (dup2(fd, STDOUT_FILENO) < 0) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	clearerr(stdout);
	return 0;
}

int
ignored_at_start(int sig)
{
	return sigismember(&started_ignored, sig) == 1;
}

void
catch_signal(int sig, const struct sigaction *sa)
{
	if (!ignored_at_start(sig))
		sigaction(sig, sa, NULL);
}

static void
note_ignored_signals(void)
{
	struct sigaction sa;
	size_t i;

	sigemptyset(&started_ignored);
	for (i = 0; i < NSTOP_SIGNALS; i++)
		if (sigaction(stop_signals[i], NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&started_ignored, stop_signals[i]);
}

static void
unblock_signals(void)
{
	static const int used[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE,
	    SIGWINCH, SIGTSTP, SIGCONT, SIGALRM };
	sigset_t s;
	size_t i;

	sigemptyset(&s);
	for (i = 0; i < sizeof used / sizeof used[0]; i++)
		sigaddset(&s, used[i]);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

/* Standard output's writes, as stdio's own (one write(2) after another
 * until all is out or one fails, an EINTR included), with the errno of
 * the first that failed kept for stdout_failure(): a write that fails
 * inside a printf() leaves only the error flag, and the buffer it
 * dropped, so a later flush could not tell why. */
static ssize_t
stdout_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;
	ssize_t w;

	(void)cookie;
	while (done < n) {
		if ((w = write(STDOUT_FILENO, buf + done, n - done)) < 0) {
			stdout_error(errno);
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)n;
}

/* stdout on that writer, buffered as stdio buffers it (by lines on a
 * terminal); left as it is if the stream cannot be made. */
static void
keep_stdout_errors(void)
{
	cookie_io_functions_t io = { NULL, stdout_write, NULL, NULL };
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return;
	if (isatty(STDOUT_FILENO))
		setvbuf(f, NULL, _IOLBF, BUFSIZ);
	stdout = f;
}

void
process_start(void)
{
	sanitise_stdfd();
	keep_stdout_errors();
	note_ignored_signals();
	unblock_signals();
}

/* Whether standard descriptor fd is open the wrong way round for its
 * use (`1<&0`: stdout read-only; stdin write-only): as good as closed,
 * every write or read fails, but only after the work is done. */
static int
wrong_way(int fd)
{
	int mode = fcntl(fd, F_GETFL);

	if (mode == -1)
		return 1;
	mode &= O_ACCMODE;
	return fd == 0 ? mode == O_WRONLY : mode == O_RDONLY;
}

void
need_stdio(const struct command *cmd, unsigned which)
{
	unsigned closed = std_closed & which, unusable = 0;
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if ((which & ~closed & 1u << fd) && wrong_way(fd))
			unusable |= 1u << fd;
	if ((closed | unusable) == 0)
		return;
	if (closed == 0) {
		fprintf(stderr, "mq %s: standard %s is not open for %s: "
		    "nothing done\n", cmd->name, unusable & STDIN_CLOSED ? "input" :
		    unusable & STDOUT_CLOSED ? "output" : "error",
		    unusable & STDIN_CLOSED ? "reading" : "writing");
		exit(EX_IOERR);
	}
	fprintf(stderr, "mq %s: standard %s is closed: nothing done\n", cmd->name,
	    closed & STDIN_CLOSED ? "input" : closed & STDOUT_CLOSED ?
	    "output" : "error");
	exit(EX_IOERR);
}

/* Standard output's failures (here, not in report.c, which uses this
 * file's signal holding: the two would use each other) */

/* said once: main()'s flush at the end, after a command that said it
 * already, does not say it again */
static int stdout_failure_said;
/* the errno of standard output's first failure, 0 while none is known */
static int stdout_errno;

void
stdout_error(int err)
{
	if (stdout_errno == 0)
		stdout_errno = err;
}

int
flush_stdout(void)
{
	int bad;

	errno = 0;
	bad = fflush(stdout) == EOF || ferror(stdout);
	if (bad)
		stdout_error(errno);
	return bad ? -1 : 0;
}

const char *
stdout_cause(void)
{
	static char cause[160];

	if (stdout_errno == 0)
		return "";
	snprintf(cause, sizeof cause, ": %s", strerror(stdout_errno));
	return cause;
}

int
stdout_failure(const struct command *cmd)
{
	if (stdout_failure_said++)
		return EX_IOERR;
	if (stdout_errno == 0)	/* what is left in the buffer says it */
		(void)flush_stdout();
	fprintf(stderr, "mq%s%s: write failure on standard output%s\n",
	    cmd->flags & CMD_MAIN ? "" : " ",
	    cmd->flags & CMD_MAIN ? "" : cmd->name, stdout_cause());
	return EX_IOERR;
}

/* The signal that asked a stream to stop, 0 if none. */
volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* SIGTERM, SIGINT and SIGHUP stop a stream between batches, never inside
 * one: they are caught, and held blocked but while waiting for input
 * (push/records.c), so that a batch the server committed always has its ids
 * printed, and no record is cut short. */
void
catch_stop(sigset_t *held)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(held);
	for (i = 0; i < NSTOP_SIGNALS; i++)
		if (!ignored_at_start(stop_signals[i])) {
			sigaddset(held, stop_signals[i]);
			catch_signal(stop_signals[i], &sa);
		}
}

/* The stop signal that came, or waits blocked; 0 if none. */
static int
held_signal(void)
{
	sigset_t p;
	unsigned k;

	if (stop_signal)
		return stop_signal;
	if (sigpending(&p) != 0)
		return 0;
	for (k = 0; k < NSTOP_SIGNALS; k++)
		if (sigismember(&p, stop_signals[k]) == 1 &&
		    !ignored_at_start(stop_signals[k]))
			return stop_signals[k];
	return 0;
}

int
stop_held(void)
{
	return held_signal() != 0;
}

int
held_stop_status(const struct command *cmd)
{
	int sig = cmd->flags & CMD_HOLDS_STOPS ? held_signal() : 0;

	return sig ? 128 + sig : 0;
}

/* Lets a signal held blocked arrive; whether one did. */
int
stop_signal_pending(const sigset_t *held)
{
	sigprocmask(SIG_UNBLOCK, held, NULL);
	return stop_signal != 0;
}
