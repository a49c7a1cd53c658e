/*
 * common.c: settings from the environment and error reporting shared by
 * every command, so that each reads and fails the same way.
 */
#define _GNU_SOURCE		/* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"

const char *
shown(const char *s)
{
	static char buf[80 + TEXT_NEXT_MAX + 4];
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, o = 0, len;

	while (i < n && o < 80) {
		i += text_next(p + i, n - i, buf + o, &len);
		o += len;
	}
	if (i < n)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = '\0';
	return buf;
}

/* Why name is not a table name: 0, or -1 with the message in why. */
static int
table_problem(const char *what, const char *name, char *why, size_t len)
{
	if (mq_valid_table(name))
		return 0;
	snprintf(why, len, "invalid table name in %s: use 1 to %d of "
	    "A-Z a-z 0-9 _", what, MQ_TABLE_MAX);
	return -1;
}

/* Why name is not a queue name (a list of them with g->queue_list): 0,
 * or -1 with the message in why. */
static int
queue_problem(const struct mq_global *g, const char *what, const char *name,
    char *why, size_t len)
{
	if (g->queue_list) {
		if (mq_valid_queue_list(name))
			return 0;
		snprintf(why, len, "invalid queue list in %s: 1 to %d "
		    "queue names (1 to %d of A-Z a-z 0-9 _ . -), "
		    "separated by commas, none twice", what,
		    MQ_QUEUES_MAX, MQ_QUEUE_MAX);
		return -1;
	}
	if (strchr(name, ',') && mq_valid_queue_list(name)) {
		snprintf(why, len, "%s takes one queue here (a list of queues "
		    "only for pop and work)", what);
		return -1;
	}
	if (mq_valid_queue(name))
		return 0;
	snprintf(why, len, "invalid queue name in %s: use 1 to %d of "
	    "A-Z a-z 0-9 _ . -", what, MQ_QUEUE_MAX);
	return -1;
}

/* arg as an integer in [lo, hi] into *v: 0, or -1 with the message in
 * why. */
static int
int_problem(const char *opt, const char *arg, long long lo, long long hi,
    long long *v, char *why, size_t len)
{
	char *end;

	errno = 0;
	*v = strtoll(arg, &end, 10);
	/* digits, after a minus at most: not the blanks or the plus sign
	 * strtoll would also take */
	if (errno || end == arg || *end || *v < lo || *v > hi ||
	    (arg[arg[0] == '-'] < '0' || arg[arg[0] == '-'] > '9')) {
		snprintf(why, len, "invalid value for %s: '%s' (an integer "
		    "from %lld to %lld)", opt, shown(arg), lo, hi);
		return -1;
	}
	return 0;
}

void
check_table(const struct command *cmd, const char *what, const char *name)
{
	char why[256];

	if (table_problem(what, name, why, sizeof why) != 0)
		usage_error(cmd, "%s", why);
}

void
check_queue(const struct command *cmd, const struct mq_global *g, const char *what,
    const char *name)
{
	char why[256];

	if (queue_problem(g, what, name, why, sizeof why) != 0)
		usage_error(cmd, "%s", why);
}

/* getenv, with an empty value taken as unset */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

void
global_from_env(struct mq_global *g)
{
	g->table = "mq_jobs";
	g->queue = "default";
	g->table_env = env("MQ_TABLE");
	g->queue_env = env("MQ_QUEUE");
	g->port_env = env("MQ_PORT");
	g->conn.defaults_file = env("MQ_DEFAULTS_FILE");
	g->conn.env_host = env("MQ_HOST");
	g->conn.env_socket = env("MQ_SOCKET");
	g->conn.env_user = env("MQ_USER");
	g->conn.env_database = env("MQ_DATABASE");
	/* the fallback of older servers, testable on a new one */
	g->conn.no_skip_locked = env("MQ_NO_SKIP_LOCKED") != NULL &&
	    strcmp(env("MQ_NO_SKIP_LOCKED"), "0") != 0;
}

/* The most of a piped option file read into memory (lib/conn.c refuses
 * a larger regular file alike). */
#define PIPE_MAX (1L << 20)

/* An option file given as a pipe (--defaults-file <(...), /dev/stdin):
 * read once, here, into a file in memory, whose name the client library
 * is given instead. It reads the file more than once (mq's TLS check
 * first), and mq work connects again and again: a pipe read once is
 * empty after. The whole of it must be written, and the pipe closed,
 * within wait_ms: a pipe nobody writes to, or whose writer never ends,
 * is not waited for for ever. Anything else is left to mq_connect's
 * checks. Returns the name to use, or NULL with the reason in *why. */
static const char *
option_file_from_pipe(const char *path, int wait_ms, const char **why)
{
	static char name[32];
	static char reason[64];
	struct stat st;
	struct pollfd p;
	char buf[4096];
	ssize_t n;
	long total = 0;
	int in, out = -1, left, r;
	int64_t deadline = mq_now_us() + (int64_t)wait_ms * 1000;

	*why = NULL;
	if (path == NULL || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
		return path;
	if ((in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		*why = strerror(errno);
		return NULL;
	}
	/* Until a writer comes, poll waits and read() would say the end:
	 * poll first, every time */
	for (;;) {
		left = (int)((deadline - mq_now_us() + 999) / 1000);
		p.fd = in;
		p.events = POLLIN;
		p.revents = 0;
		r = left > 0 ? poll(&p, 1, left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*why = strerror(errno);
			break;
		}
		if (r == 0) {
			snprintf(reason, sizeof reason, "%s in %d s", total ?
			    "not written to its end" : "nothing written to it",
			    (wait_ms + 999) / 1000);
			*why = reason;
			break;
		}
		if (out < 0) {
#if defined(MFD_CLOEXEC)
			out = memfd_create("mq-options", MFD_CLOEXEC);
#endif
			if (out < 0) {
				/* kept open to the end: its fd stays */
				FILE *t = tmpfile();

				out = t ? fileno(t) : -1;
			}
			if (out < 0) {
				*why = strerror(errno);
				break;
			}
		}
		n = read(in, buf, sizeof buf);
		if (n == 0) {
			close(in);
			snprintf(name, sizeof name, "/proc/self/fd/%d", out);
			return name;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			*why = strerror(errno);
			break;
		}
		if ((total += n) > PIPE_MAX) {
			*why = "larger than 1 MiB";
			break;
		}
		if (write(out, buf, (size_t)n) != n) {
			*why = strerror(errno);
			break;
		}
	}
	close(in);
	if (out >= 0)
		close(out);
	return NULL;
}

int
settle_checked(const struct command *cmd, struct mq_global *g, int uses_queue,
    int wait_ms, char *why, size_t len)
{
	long long port;
	const char *file, *because;

	(void)cmd;
	if (g->table_env) {
		if (table_problem("MQ_TABLE", g->table_env, why, len) != 0)
			return EX_USAGE;
		g->table = g->table_env;
	}
	if (uses_queue && g->queue_env) {
		if (queue_problem(g, "MQ_QUEUE", g->queue_env, why, len) != 0)
			return EX_USAGE;
		g->queue = g->queue_env;
	}
	if (g->port_env && !g->conn.port) {
		if (int_problem("MQ_PORT", g->port_env, 1, 65535, &port, why,
		    len) != 0)
			return EX_USAGE;
		g->conn.env_port = (unsigned)port;
	}
	file = option_file_from_pipe(g->conn.defaults_file, wait_ms,
	    &because);
	if (because != NULL) {	/* NULL file alone: none given */
		snprintf(why, len, "cannot read option file '%s': %s",
		    shown(g->conn.defaults_file), because);
		return EX_CONFIG;
	}
	g->conn.defaults_file = file;
	return 0;
}

void
settle(const struct command *cmd, struct mq_global *g, int uses_queue)
{
	char why[512];

	switch (settle_checked(cmd, g, uses_queue, PIPE_WAIT_MS, why,
	    sizeof why)) {
	case 0:
		return;
	case EX_USAGE:
		usage_error(cmd, "%s", why);
	default:
		fprintf(stderr, "mq %s: %s\n", cmd->name, why);
		exit(EX_CONFIG);
	}
}

void
usage_error(const struct command *cmd, const char *fmt, ...)
{
	const struct command *hook = cmd->flags & CMD_MAIN ?
	    command_after_options : cmd;
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s: %s\n", cmd->flags & CMD_MAIN ? "" : "mq ",
	    cmd->name, msg);
	if (hook && hook->usage_hook)
		hook->usage_hook(msg);
	exit(EX_USAGE);
}

void
say(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "mq %s: %s\n", cmd->name, msg);
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

void
receipt_error(const struct command *cmd, const char *arg)
{
	fprintf(stderr, "mq %s: malformed receipt '%s' (expected ID.TOKEN as "
	    "printed by mq pop)\n", cmd->name, shown(arg));
	exit(EX_DATAERR);
}

int
exit_status(enum mq_status st)
{
	switch (st) {
	case MQ_OK:		return 0;
	case MQ_EMPTY:		return EXIT_EMPTY;
	case MQ_PAUSED:		return EXIT_EMPTY;
	case MQ_ELEASE:		return EXIT_LEASE;
	case MQ_EUNKNOWN:	return EXIT_UNKNOWN;
	case MQ_EINVAL:		return EX_USAGE;
	case MQ_ETOOBIG:	return EX_DATAERR;
	case MQ_ESCHEMA:	return EX_CONFIG;
	case MQ_ECONFIG:	return EX_CONFIG;
	case MQ_EUNAVAIL:	return EX_UNAVAILABLE;
	case MQ_EACCESS:	return EX_NOPERM;
	case MQ_ERETRY:		return EX_TEMPFAIL;
	case MQ_EIO:		return EX_IOERR;
	case MQ_ENOMEM:		return EX_OSERR;
	case MQ_EDB:		break;
	}
	return EX_SOFTWARE;
}

void
report(const struct command *cmd, const char *where, const struct mq_error *e)
{
	/* the server's message may quote table data (a duplicate key's
	 * value, a name): shown as terminal text */
	fprintf(stderr, "mq %s: %s%s", cmd->name, where ? where : "",
	    where ? ": " : "");
	if (e->msg[0])
		put_text(stderr, (const unsigned char *)e->msg,
		    strlen(e->msg));
	else
		fputs(mq_strerror(e->status), stderr);
	if (e->db_errno && e->sqlstate[0])
		fprintf(stderr, " (error %u, SQLSTATE %s)", e->db_errno,
		    shown(e->sqlstate));
	else if (e->db_errno)
		fprintf(stderr, " (error %u)", e->db_errno);
	fputc('\n', stderr);
}

void
die(const struct command *cmd, const struct mq_error *e)
{
	report(cmd, NULL, e);
	exit(exit_status(e->status));
}

struct mq_conn *
open_queue_table(const struct command *cmd, const struct mq_global *g)
{
	struct mq_error e;
	struct mq_conn *c = mq_connect(&g->conn, &e);

	if (c == NULL)
		die(cmd, &e);
	if (mq_use_table(c, g->table) != MQ_OK) {
		e = *mq_conn_error(c);
		mq_close(c);
		die(cmd, &e);
	}
	return c;
}

long long
duration_arg(const struct command *cmd, const char *opt, const char *arg)
{
	int64_t us;

	if (mq_parse_duration(arg, &us) != MQ_OK)
		usage_error(cmd, "invalid duration for %s: '%s' (examples: "
		    "30s, 5m, 1h30m, 500ms, 2d)", opt, shown(arg));
	return (long long)us;
}

long long
int_arg(const struct command *cmd, const char *opt, const char *arg, long long lo,
    long long hi)
{
	char why[256];
	long long v;

	if (int_problem(opt, arg, lo, hi, &v, why, sizeof why) != 0)
		usage_error(cmd, "%s", why);
	return v;
}

int
parse_id(const char *s, uint64_t *id)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*id = strtoull(s, &end, 10);
	return *end || errno || *id == 0 ? -1 : 0;
}
