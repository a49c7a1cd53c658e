/*
 * push_records.c: part of mq push (documented in mq-push(1)): the
 * records of a stream on standard input (--lines and -0), read so that
 * a stop signal is seen at once and never cuts a record in two: the caller keeps its stop signals blocked, and they are
 * let in only while waiting for input (pselect: no window between the
 * test and the wait); a record is handed over whole, or, at the end of
 * the input, what follows the last delimiter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "cmds.h"

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
		if (*stop)
			return -2;
		if (r->start)
			memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
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
