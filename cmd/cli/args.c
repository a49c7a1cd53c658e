/*
 * args.c: the values options and operands take: durations, integers in
 * a range, job ids; a bad one is a usage error naming the option.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

/* arg as an integer in [lo, hi] into *v: 0, or -1 with the message in
 * why. */
int
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

long long
duration_arg(const struct command *cmd, const char *opt, const char *arg)
{
	int64_t us;

	if (mq_parse_duration(arg, &us) != MQ_OK)
		usage_error(cmd, "invalid duration for %s: '%s' (examples: "
		    "30s, 5m, 1h30m, 500ms, 2d)", opt, shown(arg));
	return (long long)us;
}

void
rate_arg(const struct command *cmd, const char *opt, const char *arg,
    uint64_t max, uint64_t *n, int64_t *us)
{
	const char *p = arg;
	char d[64];
	size_t len, digits = 0;
	uint64_t v = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		if (++digits <= 20)
			v = v * 10 + (uint64_t)(*p - '0');
	if (digits == 0 || (*p != '\0' && *p != '/') ||
	    (*p == '/' && p[1] == '\0'))
		usage_error(cmd, "invalid %s '%s': N/D expected (N a second "
		    "alone), e.g. 10/s, 600/5m, 10/1h30m", opt, shown(arg));
	if (digits > 19 || v < 1 || v > max)
		usage_error(cmd, "invalid %s '%s': N from 1 to %llu", opt,
		    shown(arg), (unsigned long long)max);
	*n = v;
	if (*p == '\0') {
		*us = 1000000;
		return;
	}
	/* a unit alone is one of it; a final "min" is "m" */
	len = strlen(++p);
	if (len + 2 > sizeof d)
		len = sizeof d - 2;	/* too long to be a duration */
	snprintf(d, sizeof d, "%s%.*s", *p >= '0' && *p <= '9' ? "" : "1",
	    (int)len, p);
	len = strlen(d);
	if (len > 3 && strcmp(d + len - 3, "min") == 0)
		d[len - 2] = '\0';
	if (mq_parse_duration(d, us) != MQ_OK || *us <= 0)
		usage_error(cmd, "invalid %s '%s': the window D must be a "
		    "duration from 1ms to 36600d, or a unit alone (ms, s, m or "
		    "min, h, d)", opt, shown(arg));
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
parse_id_n(const char *s, size_t len, uint64_t *id)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*id = v;
	return v == 0 ? -1 : 0;
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

/* A line of an id list kept at most this long: an id has 20 digits at
 * most (and leading zeros), and a usage error shows 80 bytes of the
 * line. Blanks past it are read and dropped; anything else past it is
 * not an id, said at once, the line not read on (a line of /dev/zero
 * grew mq wait to gigabytes, and read for ever). */
#define ID_LINE_KEEP 128

/* One line of f into buf (at most ID_LINE_KEEP - 1 bytes kept, NUL
 * ended), its trailing blanks, CR and LF dropped; *over (and the line
 * left unread) if a byte other than a blank came past what was kept. 0
 * at the end of f (or a failed read: ferror), else 1. */
static int
next_id_line(FILE *f, char *buf, size_t *len, int *over)
{
	size_t l = 0;
	int ch, any = 0;

	*over = 0;
	while ((ch = getc(f)) != EOF) {
		any = 1;
		if (ch == '\n')
			break;
		if (l < ID_LINE_KEEP - 1) {
			buf[l++] = (char)ch;
		} else if (ch != ' ' && ch != '\t' && ch != '\r') {
			*over = 1;	/* not an id: said now, not read on */
			break;
		}
	}
	while (l > 0 && (buf[l - 1] == '\r' || buf[l - 1] == ' ' ||
	    buf[l - 1] == '\t'))
		l--;
	buf[l] = '\0';
	*len = l;
	return any;
}

uint64_t *
read_id_lines(const struct command *cmd, FILE *f, const char *what,
    size_t *n)
{
	uint64_t *ids = NULL, *more;
	size_t cap = 0, l;
	unsigned long long line = 0;
	char buf[ID_LINE_KEEP];
	int over;

	*n = 0;
	errno = 0;
	while (next_id_line(f, buf, &l, &over)) {
		line++;
		if (l == 0 && !over)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			if ((more = realloc(ids, cap * sizeof *ids)) == NULL) {
				free(ids);
				exit(no_memory(cmd));
			}
			ids = more;
		}
		/* a NUL in the line shown (\x00), not cut there */
		if (over || strlen(buf) != l || parse_id(buf, &ids[*n]) != 0) {
			free(ids);
			usage_error(cmd, "invalid job id '%s%s' on line %llu of "
			    "%s: a positive number, as push prints it",
			    shown_bytes(buf, l), over && l <= 80 ? "..." : "",
			    line, what);
		}
		(*n)++;
	}
	if (ferror(f)) {
		int err = errno;

		free(ids);
		if (line == 0)
			say(cmd, "cannot read %s: %s", what,
			    strerror(err ? err : EIO));
		else
			say(cmd, "cannot read %s after line %llu: %s", what,
			    line, strerror(err ? err : EIO));
		exit(EX_IOERR);
	}
	return ids;
}
