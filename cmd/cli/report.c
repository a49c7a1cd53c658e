/*
 * report.c: how commands fail: a usage error, a line of their own, the
 * library's error with the server's code, and the exit status each
 * status maps to; one home, so that every command fails the same way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

const struct command *command_after_options;

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
no_operands(const struct command *cmd, int n, char **argv)
{
	if (n > 0)
		usage_error(cmd, "unexpected argument '%s'", shown(argv[1]));
}

int
no_memory(const struct command *cmd)
{
	say(cmd, "out of memory");
	return EX_OSERR;
}

void
say(const struct command *cmd, const char *fmt, ...)
{
	va_list ap, again;
	char small[1024], *msg = small;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(small, sizeof small, fmt, ap);
	/* a longer line (a claim's list of queues) whole, if memory allows */
	if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
		vsnprintf(msg, (size_t)n + 1, fmt, again);
	else
		msg = small;
	va_end(again);
	va_end(ap);
	fprintf(stderr, "mq %s: %s\n", cmd->name, msg);
	if (msg != small)
		free(msg);
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
	case MQ_EPARENT:	return EX_NOINPUT;
	case MQ_EDB:		break;
	}
	return EX_SOFTWARE;
}

FILE *
err_line_begin(struct err_line *l)
{
	l->buf = NULL;
	l->len = 0;
	l->f = open_memstream(&l->buf, &l->len);
	return l->f ? l->f : stderr;
}

void
err_line_end(struct err_line *l)
{
	if (l->f == NULL)
		return;
	if (fclose(l->f) == 0 && l->buf)
		(void)!fwrite(l->buf, 1, l->len, stderr);
	free(l->buf);
	l->f = NULL;
}

void
report(const struct command *cmd, const char *where, const struct mq_error *e)
{
	struct err_line l;
	FILE *f = err_line_begin(&l);

	/* the server's message may quote table data (a duplicate key's
	 * value, a name): shown as terminal text */
	fprintf(f, "mq %s: %s%s", cmd->name, where ? where : "",
	    where ? ": " : "");
	if (e->msg[0])
		put_text(f, (const unsigned char *)e->msg, strlen(e->msg));
	else
		fputs(mq_strerror(e->status), f);
	if (e->db_errno && e->sqlstate[0])
		fprintf(f, " (error %u, SQLSTATE %s)", e->db_errno,
		    shown(e->sqlstate));
	else if (e->db_errno)
		fprintf(f, " (error %u)", e->db_errno);
	fputc('\n', f);
	err_line_end(&l);
}

void
die(const struct command *cmd, const struct mq_error *e)
{
	/* what the command printed before the error stopped it comes
	 * first (mq(1) DIAGNOSTICS), also where standard output is a file
	 * or a pipe, whose buffer exit() would write after this line */
	int held;

	(void)flush_stdout();
	report(cmd, NULL, e);
	/* a stop signal held meanwhile is the status, the error said
	 * (mq(1) EXIT STATUS 128+N) */
	held = held_stop_status(cmd);
	exit(held ? held : exit_status(e->status));
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
	if (cmd->flags & CMD_HOLDS_STOPS) {
		int held = held_stop_status(cmd);

		/* asked to stop while it connected: nothing done yet */
		if (held) {
			mq_close(c);
			exit(held);
		}
		mq_set_stop_check(c, stop_held);
	}
	return c;
}
