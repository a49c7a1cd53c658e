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
#include <time.h>
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

void
check_table(const char *cmd, const char *what, const char *name)
{
	if (!mq_valid_table(name))
		usage_error(cmd, "invalid table name in %s: use 1 to %d of "
		    "A-Z a-z 0-9 _", what, MQ_TABLE_MAX);
}

void
check_queue(const char *cmd, const struct mq_global *g, const char *what,
    const char *name)
{
	if (g->queue_list) {
		if (!mq_valid_queue_list(name))
			usage_error(cmd, "invalid queue list in %s: 1 to %d "
			    "queue names (1 to %d of A-Z a-z 0-9 _ . -), "
			    "separated by commas, none twice", what,
			    MQ_QUEUES_MAX, MQ_QUEUE_MAX);
		return;
	}
	if (strchr(name, ',') && mq_valid_queue_list(name))
		usage_error(cmd, "%s takes one queue here (a list of queues "
		    "only for pop and work)", what);
	if (!mq_valid_queue(name))
		usage_error(cmd, "invalid queue name in %s: use 1 to %d of "
		    "A-Z a-z 0-9 _ . -", what, MQ_QUEUE_MAX);
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

/* Longest wait for a piped option file's first bytes, and its most. */
#define PIPE_WAIT_MS 10000
#define PIPE_MAX (1L << 20)

/* An option file given as a pipe (--defaults-file <(...), /dev/stdin):
 * read once, here, into a file in memory, whose name the client library
 * is given instead. It reads the file more than once (mq's TLS check
 * first), and mq work connects again and again: a pipe read once is
 * empty after. A pipe nobody writes to is waited for 10 s, not for
 * ever. Anything else is left to mq_connect's checks. */
static const char *
option_file_from_pipe(const char *cmd, const char *path)
{
	static char name[32];
	struct stat st;
	struct pollfd p;
	char buf[4096];
	ssize_t n;
	long total = 0;
	int in, out = -1;
	const char *why = NULL;

	if (path == NULL || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
		return path;
	if ((in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		why = strerror(errno);
		goto fail;
	}
	p.fd = in;
	p.events = POLLIN;
	if (poll(&p, 1, PIPE_WAIT_MS) != 1) {
		why = "nothing written to it in 10 s";
		goto fail;
	}
	(void)fcntl(in, F_SETFL, fcntl(in, F_GETFL) & ~O_NONBLOCK);
#if defined(MFD_CLOEXEC)
	out = memfd_create("mq-options", MFD_CLOEXEC);
#endif
	if (out < 0) {
		FILE *t = tmpfile();	/* kept open to the end: its fd stays */

		out = t ? fileno(t) : -1;
	}
	if (out < 0) {
		why = strerror(errno);
		goto fail;
	}
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (total += n) > PIPE_MAX ||
		    write(out, buf, (size_t)n) != n) {
			why = n < 0 ? strerror(errno) : total > PIPE_MAX ?
			    "larger than 1 MiB" : strerror(errno);
			goto fail;
		}
	}
	close(in);
	snprintf(name, sizeof name, "/proc/self/fd/%d", out);
	return name;
fail:
	fprintf(stderr, "mq %s: cannot read option file '%s': %s\n", cmd,
	    shown(path), why);
	exit(EX_CONFIG);
}

void
settle(const char *cmd, struct mq_global *g, int uses_queue)
{
	g->conn.defaults_file = option_file_from_pipe(cmd,
	    g->conn.defaults_file);
	if (g->table_env) {
		check_table(cmd, "MQ_TABLE", g->table_env);
		g->table = g->table_env;
	}
	if (uses_queue && g->queue_env) {
		check_queue(cmd, g, "MQ_QUEUE", g->queue_env);
		g->queue = g->queue_env;
	}
	if (g->port_env && !g->conn.port)
		g->conn.env_port = (unsigned)int_arg(cmd, "MQ_PORT",
		    g->port_env, 1, 65535);
}

void
usage_error(const char *cmd, const char *fmt, ...)
{
	const struct command *c;
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s: %s\n", strcmp(cmd, "mq") == 0 ? "" : "mq ",
	    cmd, msg);
	c = find_command_spec(cmd);
	if (c && c->usage_hook)
		c->usage_hook(msg);
	exit(EX_USAGE);
}

int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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
need_stdio(const char *cmd, unsigned which)
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
		    "nothing done\n", cmd, unusable & STDIN_CLOSED ? "input" :
		    unusable & STDOUT_CLOSED ? "output" : "error",
		    unusable & STDIN_CLOSED ? "reading" : "writing");
		exit(EX_IOERR);
	}
	fprintf(stderr, "mq %s: standard %s is closed: nothing done\n", cmd,
	    closed & STDIN_CLOSED ? "input" : closed & STDOUT_CLOSED ?
	    "output" : "error");
	exit(EX_IOERR);
}

void
receipt_error(const char *cmd, const char *arg)
{
	fprintf(stderr, "mq %s: malformed receipt '%s' (expected ID.TOKEN as "
	    "printed by mq pop)\n", cmd, shown(arg));
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
report(const char *cmd, const char *where, const struct mq_error *e)
{
	/* the server's message may quote table data (a duplicate key's
	 * value, a name): shown as terminal text */
	fprintf(stderr, "mq %s: %s%s", cmd, where ? where : "",
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
die(const char *cmd, const struct mq_error *e)
{
	report(cmd, NULL, e);
	exit(exit_status(e->status));
}

struct mq_conn *
open_queue_table(const char *cmd, const struct mq_global *g)
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
duration_arg(const char *cmd, const char *opt, const char *arg)
{
	int64_t us;

	if (mq_parse_duration(arg, &us) != MQ_OK)
		usage_error(cmd, "invalid duration for %s: '%s' (examples: "
		    "30s, 5m, 1h30m, 500ms, 2d)", opt, shown(arg));
	return (long long)us;
}

long long
int_arg(const char *cmd, const char *opt, const char *arg, long long lo,
    long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	/* digits, after a minus at most: not the blanks or the plus sign
	 * strtoll would also take */
	if (errno || end == arg || *end || v < lo || v > hi ||
	    (arg[arg[0] == '-'] < '0' || arg[arg[0] == '-'] > '9'))
		usage_error(cmd, "invalid value for %s: '%s' (an integer "
		    "from %lld to %lld)", opt, shown(arg), lo, hi);
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
