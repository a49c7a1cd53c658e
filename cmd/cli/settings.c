/*
 * settings.c: the settings every command reads the same way: the MQ_*
 * variables under the options, checked once the options are read, and
 * an option file given as a pipe read within its bound.
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

#include "cli/cli.h"
#include "output/output.h"

/* Why name is not a table name: 0, or -1 with the message in why. */
static int
table_problem(const char *what, const char *name, char *why, size_t len)
{
	if (mq_valid_table(name))
		return 0;
	snprintf(why, len, "invalid table name '%s' in %s: use 1 to %d of "
	    "A-Z a-z 0-9 _", shown(name), what, MQ_TABLE_MAX);
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
		snprintf(why, len, "invalid queue list '%s' in %s: 1 to %d "
		    "queue names (1 to %d of A-Z a-z 0-9 _ . -), "
		    "separated by commas, none twice", shown(name), what,
		    MQ_QUEUES_MAX, MQ_QUEUE_MAX);
		return -1;
	}
	if (strchr(name, ',') && mq_valid_queue_list(name)) {
		snprintf(why, len, "%s takes one queue here (a list of queues "
		    "only for pop, work and schedule fire)", what);
		return -1;
	}
	if (mq_valid_queue(name))
		return 0;
	snprintf(why, len, "invalid queue name '%s' in %s: use 1 to %d of "
	    "A-Z a-z 0-9 _ . -", shown(name), what, MQ_QUEUE_MAX);
	return -1;
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
	g->host_order_env = env("MQ_HOST_ORDER");
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
	if (g->host_order_env) {
		if (strcmp(g->host_order_env, "first") != 0 &&
		    strcmp(g->host_order_env, "random") != 0) {
			snprintf(why, len, "MQ_HOST_ORDER: '%s' is neither "
			    "first nor random", shown(g->host_order_env));
			return EX_USAGE;
		}
		g->conn.host_random = strcmp(g->host_order_env, "random") == 0;
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
