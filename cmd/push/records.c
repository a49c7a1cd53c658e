/*
 * push/records.c: part of mq push (documented in mq-push(1)): the
 * records of a stream on standard input (--lines and -0), read so that
 * a stop signal is seen at once and never cuts a record in two: the
 * caller keeps its stop signals blocked, and they are let in only while
 * waiting for input (pselect: no window between the test and the wait),
 * or taken before each read when input never waits (stop_pending); a
 * record is handed over whole, or, at the end of
 * the input, what follows the last delimiter. Also a single payload read
 * whole, and the stop signals.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "push.h"

/* A stop signal that came while blocked, taken now: pselect lets one in
 * only when it has to wait, and input that is always ready (a file, a
 * fast pipe) never makes it wait. 0 if none. */
static int
stop_pending(const sigset_t *waiting)
{
	struct timespec now = { 0, 0 };
	sigset_t pending, one;
	size_t i;

	if (sigpending(&pending) != 0)
		return 0;
	for (i = 0; i < NSTOP_SIGNALS; i++) {
		if (!sigismember(&pending, stop_signals[i]) ||
		    sigismember(waiting, stop_signals[i]))
			continue;
		sigemptyset(&one);
		sigaddset(&one, stop_signals[i]);
		if (sigtimedwait(&one, NULL, &now) == stop_signals[i])
			return stop_signals[i];
	}
	return 0;
}

int
records_next(struct records *r, int delim, const sigset_t *waiting,
    volatile sig_atomic_t *stop, char **rec, size_t *n)
{
	char *p, *nb;
	fd_set in;
	ssize_t got;

	for (;;) {
		p = r->len > r->start ? memchr(r->buf + r->start, delim,
		    r->len - r->start) : NULL;
		if (p || (r->eof && r->start < r->len)) {
			*rec = r->buf + r->start;
			*n = (size_t)((p ? p : r->buf + r->len) - *rec);
			r->start += *n + (p != NULL);
			return 1;
		}
		if (r->eof)
			return 0;
		if (*stop || (*stop = stop_pending(waiting)) != 0)
			return -2;
		if (r->start)
			memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
		if (r->len > r->max)
			return -3;
		if (r->len == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 65536;
			if ((nb = realloc(r->buf, r->cap)) == NULL) {
				errno = ENOMEM;
				return -1;
			}
			r->buf = nb;
		}
		FD_ZERO(&in);
		FD_SET(0, &in);
		if (pselect(1, &in, NULL, NULL, NULL, waiting) < 0) {
			if (errno == EINTR)
				continue;	/* *stop says whether to go on */
			return -1;
		}
		got = read(0, r->buf + r->len, r->cap - r->len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			r->eof = 1;
		r->len += (size_t)got;
	}
}

void
records_free(struct records *r)
{
	free(r->buf);
	memset(r, 0, sizeof *r);
}

/* Reads all of stdin, refusing more than max bytes. */
unsigned char *
slurp(size_t max, size_t *len)
{
	size_t cap = 65536, n = 0, r;
	unsigned char *buf = malloc(cap), *nb;
	int err = 0;

	while (buf) {
		if (n == cap) {
			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);	/* never a payload cut short */
				buf = NULL;
				break;
			}
			buf = nb;
		}
		errno = 0;
		r = fread(buf + n, 1, cap - n, stdin);
		err = errno;
		n += r;
		if (n <= max && ferror(stdin) && (errno == EAGAIN ||
		    errno == EWOULDBLOCK)) {
			/* a stdin left non-blocking by the producer has no
			 * input yet: wait for it, as --lines does */
			struct pollfd in = { 0, POLLIN, 0 };

			clearerr(stdin);
			if (poll(&in, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		if (r == 0 || n > max)
			break;
	}
	if (buf == NULL)
		exit(no_memory(&push_command));
	if (ferror(stdin)) {
		/* the cause named: a directory, an I/O error */
		say(&push_command, "cannot read standard input: %s",
		    strerror(err ? err : EIO));
		exit(EX_IOERR);
	}
	if (n > max) {
		say(&push_command, "payload of more than %zu bytes is "
		    "larger than the server's max_allowed_packet allows",
		    max);
		exit(EX_DATAERR);
	}
	*len = n;
	return buf;
}

