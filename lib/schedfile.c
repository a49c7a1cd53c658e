/*
 * schedfile.c: the schedule file (mq-schedule(5)), parsed without a
 * server. A file is all or nothing: the first error, with its line,
 * and no schedule. Every value is checked here as the table will hold
 * it (the canonical expression, a zone that loads, a valid queue and
 * key), so that applying a file that parsed fails only for reasons of
 * the server.
 *
 * Raw control bytes (other than tab) are refused anywhere in the file,
 * so that a message quoting the file's text holds no control byte but a
 * tab (the command shows it as \t); a payload gets any byte through its
 * escapes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedule.h"

static const char *const missed_names[] = { "skip", "once", "all" };

const char *
mq_missed_name(enum mq_missed m)
{
	return (unsigned)m < 3 ? missed_names[m] : "?";
}

int
mq_missed_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (s != NULL && strcmp(s, missed_names[i]) == 0)
			return i;
	return -1;
}

void
mq_schedule_defaults(struct mq_schedule *s)
{
	memset(s, 0, sizeof *s);
	strcpy(s->queue, "default");
	strcpy(s->zone, "UTC");
	s->max_attempts = MQ_DEFAULT_MAX_ATTEMPTS;
	s->missed = MQ_MISSED_DEFAULT;
	s->missed_max = MQ_MISSED_MAX_DEFAULT;
}

/* The parse in progress. */
struct file {
	struct mq_schedset *set;	/* the blocks ended */
	struct mq_schedule cur;		/* the current block's (have_cur) */
	int have_cur;
	char last[MQ_SCHEDULE_NAME_MAX + 1];	/* the last block's name */
	const char *dir;
	size_t bytes;		/* file and payload files read so far */
	unsigned line;
	int named;		/* messages name the last block */
	unsigned seen;		/* settings of the current block (bits) */
	unsigned missed_max_line;	/* its missed-max's line */
	int payload_file;	/* current block's payload came from a file */
	struct mq_error *err;
	size_t n;		/* blocks begun */
};

/* Settings, one bit each in file.seen. */
enum setting {
	S_CRON, S_TZ, S_QUEUE, S_PAYLOAD, S_PAYLOAD_FILE, S_PRIORITY,
	S_MAX_ATTEMPTS, S_KEY, S_MISSED, S_MISSED_MAX, S_COUNT
};
static const char *const setting_names[S_COUNT] = {
	"cron", "tz", "queue", "payload", "payload-file", "priority",
	"max-attempts", "key", "missed", "missed-max",
};

static int
fail(struct file *f, enum mq_status st, const char *fmt, ...)
{
	char what[420];	/* with the line and the name, fits msg */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	memset(f->err, 0, sizeof *f->err);
	f->err->status = st;
	if (f->named && f->n > 0 && f->line > 0)
		snprintf(f->err->msg, sizeof f->err->msg, "line %u: [%.64s]: %.420s",
		    f->line, f->last, what);
	else if (f->line > 0)
		snprintf(f->err->msg, sizeof f->err->msg, "line %u: %.420s",
		    f->line, what);
	else
		snprintf(f->err->msg, sizeof f->err->msg, "%.420s", what);
	return -1;
}

static int
blank(int ch)
{
	return ch == ' ' || ch == '\t';
}

/* Trims blanks from both ends of s[0..*n); returns the new start. */
static const char *
trim(const char *s, size_t *n)
{
	while (*n > 0 && blank(s[0]))
		s++, (*n)--;
	while (*n > 0 && blank(s[*n - 1]))
		(*n)--;
	return s;
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A payload's C escapes: \\ \n \t \r \0 \xHH; nothing else. */
static int
unescape(struct file *f, const char *s, size_t n, struct mq_schedule *sc)
{
	unsigned char *out = malloc(n + 1);
	size_t o = 0;

	if (out == NULL)
		return fail(f, MQ_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			out[o++] = (unsigned char)s[i];
			continue;
		}
		if (++i == n) {
			free(out);
			return fail(f, MQ_EINVAL, "payload: a backslash ends "
			    "the line (write \\\\ for one)");
		}
		switch (s[i]) {
		case '\\': out[o++] = '\\'; break;
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case '0': out[o++] = '\0'; break;
		case 'x':
					if (i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
				out[o++] = (unsigned char)(hexval(s[i + 1]) * 16 +
				    hexval(s[i + 2]));
				i += 2;
				break;
			}
			free(out);
			return fail(f, MQ_EINVAL, "payload: \\x takes two "
			    "hex digits");
		default:
			free(out);
			return fail(f, MQ_EINVAL, "payload: unknown escape "
			    "'\\%c' (\\\\ \\n \\t \\r \\0 \\xHH)", s[i]);
		}
	}
	free(sc->payload);
	sc->payload = out;
	sc->payload_len = o;
	return 0;
}

/* Reads a payload file, whole and verbatim. */
static int
read_payload_file(struct file *f, const char *name, struct mq_schedule *sc)
{
	char path[PATH_MAX];
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	if (name[0] != '/' && f->dir != NULL && f->dir[0] != '\0') {
		if ((size_t)snprintf(path, sizeof path, "%s/%s", f->dir, name) >=
		    sizeof path)
			return fail(f, MQ_EINVAL, "payload-file: '%s': path too "
			    "long", name);
	} else if ((size_t)snprintf(path, sizeof path, "%s", name) >=
	    sizeof path)
		return fail(f, MQ_EINVAL, "payload-file: '%s': path too long",
		    name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail(f, MQ_EIO, "payload-file: '%s': %s", name,
		    strerror(errno));
	{
		struct stat st;

		/* a FIFO or a device would block or never end */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return fail(f, MQ_EINVAL, "payload-file: '%s' is not a "
			    "regular file", name);
		}
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			unsigned char *nb;

			cap = cap ? 2 * cap : 4096;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				close(fd);
				return fail(f, MQ_ENOMEM, "out of memory");
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return fail(f, MQ_EIO, "payload-file: '%s': %s", name,
			    strerror(e));
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (f->bytes + len > MQ_SCHEDFILE_MAX) {
			free(buf);
			close(fd);
			return fail(f, MQ_EINVAL, "payload-file: '%s': the file "
			    "and its payloads exceed %u MiB", name,
			    MQ_SCHEDFILE_MAX >> 20);
		}
	}
	close(fd);
	f->bytes += len;
	free(sc->payload);
	sc->payload = buf;
	sc->payload_len = len;
	if (buf == NULL && (sc->payload = malloc(1)) == NULL)
		return fail(f, MQ_ENOMEM, "out of memory");
	return 0;
}

/* The error of a value, as mq_schedule_set reports it. */
static enum mq_status
bad(struct mq_error *err, enum mq_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum mq_status
bad(struct mq_error *err, enum mq_status st, const char *fmt, ...)
{
	va_list ap;

	memset(err, 0, sizeof *err);
	err->status = st;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return st;
}

static enum mq_status
int_value(struct mq_error *err, const char *what, const char *v, long lo,
    long hi, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (v[0] == '\0' || *end != '\0' || errno != 0 || x < lo || x > hi ||
	    blank(v[0]) || v[0] == '+')
		return bad(err, MQ_EINVAL, "%s: '%.80s' is not a whole number "
		    "from %ld to %ld", what, v, lo, hi);
	*out = x;
	return MQ_OK;
}

enum mq_status
mq_schedule_set(struct mq_schedule *sc, const char *name, const char *v,
    struct mq_error *err)
{
	struct mq_error e;
	long x;

	if (strlen(v) > MQ_CRON_INPUT_MAX)
		return bad(err, MQ_EINVAL, "%s: value longer than %d bytes",
		    name, MQ_CRON_INPUT_MAX);
	if (strcmp(name, "cron") == 0) {
		struct mq_cron c;

		if (mq_cron_parse(v, &c, &e) != MQ_OK)
			return bad(err, MQ_EINVAL, "cron: %s", e.msg);
		mq_cron_format(&c, sc->expr);
	} else if (strcmp(name, "tz") == 0) {
		struct mq_tz *tz;

		if (!mq_tz_valid_name(v))
			return bad(err, MQ_EINVAL, "tz: '%.80s' is not a zone "
			    "name", v);
		if (mq_tz_load(v, NULL, &tz, &e) != MQ_OK)
			return bad(err, e.status == MQ_ENOMEM ? MQ_ENOMEM :
			    MQ_EINVAL, "tz: %s", e.msg);
		mq_tz_free(tz);
		strcpy(sc->zone, v);
	} else if (strcmp(name, "queue") == 0) {
		if (!mq_valid_queue(v))
			return bad(err, MQ_EINVAL, "queue: '%.80s' is not a "
			    "queue name ([A-Za-z0-9_.-], 1 to %d bytes)", v,
			    MQ_QUEUE_MAX);
		strcpy(sc->queue, v);
	} else if (strcmp(name, "priority") == 0) {
		if (int_value(err, "priority", v, MQ_PRIORITY_MIN,
		    MQ_PRIORITY_MAX, &x) != MQ_OK)
			return err->status;
		sc->priority = (int)x;
	} else if (strcmp(name, "max-attempts") == 0) {
		if (int_value(err, "max-attempts", v, 1, 1000000, &x) != MQ_OK)
			return err->status;
		sc->max_attempts = (unsigned)x;
	} else if (strcmp(name, "key") == 0) {
		if (!mq_valid_key(v))
			return bad(err, MQ_EINVAL, "key: '%.80s' is not a key "
			    "(1 to %d bytes, no control characters)", v,
			    MQ_KEY_MAX);
		strcpy(sc->key, v);
		sc->has_key = 1;
	} else if (strcmp(name, "missed") == 0) {
		if ((x = mq_missed_parse(v)) < 0)
			return bad(err, MQ_EINVAL, "missed: '%.80s' is not "
			    "skip, once or all", v);
		sc->missed = (enum mq_missed)x;
	} else if (strcmp(name, "missed-max") == 0) {
		if (int_value(err, "missed-max", v, 1, MQ_MISSED_MAX_LIMIT,
		    &x) != MQ_OK)
			return err->status;
		sc->missed_max = (unsigned)x;
	} else {
		return bad(err, MQ_EINVAL, "unknown setting '%.64s'", name);
	}
	return MQ_OK;
}

/* One "name = value" of the current block. */
static int
setting(struct file *f, const char *name, size_t nlen, const char *val,
    size_t vlen)
{
	struct mq_schedule *sc = &f->cur;
	struct mq_error e;
	char v[MQ_CRON_INPUT_MAX + 1];
	int which = -1;

	for (int i = 0; i < S_COUNT; i++)
		if (strlen(setting_names[i]) == nlen &&
		    memcmp(setting_names[i], name, nlen) == 0)
			which = i;
	if (which < 0)
		return fail(f, MQ_EINVAL, "unknown setting '%.*s' (cron, tz, "
		    "queue, payload, payload-file, priority, max-attempts, "
		    "key, missed, missed-max)", (int)(nlen > 64 ? 64 : nlen),
		    name);
	if (f->seen & (1u << which))
		return fail(f, MQ_EINVAL, "%s given twice", setting_names[which]);
	if ((which == S_PAYLOAD && (f->seen & (1u << S_PAYLOAD_FILE))) ||
	    (which == S_PAYLOAD_FILE && (f->seen & (1u << S_PAYLOAD))))
		return fail(f, MQ_EINVAL, "payload and payload-file exclude "
		    "each other");
	f->seen |= 1u << which;
	if (which == S_MISSED_MAX)
		f->missed_max_line = f->line;
	if (which == S_PAYLOAD)
		return unescape(f, val, vlen, sc);
	if (vlen >= sizeof v)
		return fail(f, MQ_EINVAL, "%s: value longer than %zu bytes",
		    setting_names[which], sizeof v - 1);
	memcpy(v, val, vlen);
	v[vlen] = '\0';
	if (which == S_PAYLOAD_FILE) {
		if (v[0] == '\0')
			return fail(f, MQ_EINVAL, "payload-file: no file named");
		f->payload_file = 1;
		return read_payload_file(f, v, sc);
	}
	if (mq_schedule_set(sc, setting_names[which], v, &e) != MQ_OK)
		return fail(f, e.status, "%s", e.msg);
	return 0;
}

/* Ends the current block: what it must have. */
static int
end_block(struct file *f, unsigned header_line)
{
	struct mq_schedule *sc = &f->cur;
	unsigned line = f->line;
	enum mq_status st;

	if (!f->have_cur)
		return 0;
	f->line = header_line;
	if (!(f->seen & (1u << S_CRON)))
		return fail(f, MQ_EINVAL, "no cron expression (cron = ...)");
	/* named on missed-max's line: the block's settings are all read
	 * (missed may come after it), the error is that line's */
	if ((f->seen & (1u << S_MISSED_MAX)) && sc->missed != MQ_MISSED_ALL) {
		f->line = f->missed_max_line;
		return fail(f, MQ_EINVAL, "missed-max is for missed = all");
	}
	/* into the set, compact: the block's payload goes */
	st = mq_schedset_add(f->set, sc);
	free(sc->payload);
	sc->payload = NULL;
	f->have_cur = 0;
	if (st != MQ_OK)
		return fail(f, st, "out of memory");
	f->line = line;
	return 0;
}

/* A "[name]" line: a new block. */
static int
header(struct file *f, const char *s, size_t n)
{
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	size_t len, first;
	const char *in;

	if (n < 2 || s[n - 1] != ']')
		return fail(f, MQ_EINVAL, "a header is '[name]'");
	f->named = 0;
	len = n - 2;
	in = trim(s + 1, &len);
	if (len == 0 || len > MQ_SCHEDULE_NAME_MAX) {
		return fail(f, MQ_EINVAL, "'%.*s' is not a schedule name "
		    "([A-Za-z0-9_.-], 1 to %d bytes)", (int)(len > 80 ? 80 :
		    len), in, MQ_SCHEDULE_NAME_MAX);
	}
	memcpy(name, in, len);
	name[len] = '\0';
	if (!mq_valid_queue(name)) {
		return fail(f, MQ_EINVAL, "'%s' is not a schedule name "
		    "([A-Za-z0-9_.-], 1 to %d bytes)", name,
		    MQ_SCHEDULE_NAME_MAX);
	}
	/* the blocks before are in the set (end_block), found by name (a
	 * file of 10,000 schedules is parsed in milliseconds, not in n^2
	 * comparisons) */
	if ((first = mq_schedset_find(f->set, name)) != 0) {
		struct mq_schedule was;

		mq_schedset_get(f->set, first - 1, &was);
		return fail(f, MQ_EINVAL, "[%s] again (first on line %u)",
		    name, was.line);
	}
	mq_schedule_defaults(&f->cur);
	strcpy(f->cur.name, name);
	strcpy(f->last, name);
	f->cur.line = f->line;
	f->have_cur = 1;
	f->n++;
	f->named = 1;
	f->seen = 0;
	f->payload_file = 0;
	return 0;
}

enum mq_status
mq_schedfile_parse(const char *text, size_t len, const char *dir,
    struct mq_schedset **out, struct mq_error *err)
{
	struct file f = { .dir = dir, .err = err, .bytes = len };
	size_t pos = 0;
	unsigned header_line = 0;

	*out = NULL;
	memset(err, 0, sizeof *err);
	if ((f.set = mq_schedset_new()) == NULL) {
		fail(&f, MQ_ENOMEM, "out of memory");
		return err->status;
	}
	if (len > MQ_SCHEDFILE_MAX) {
		fail(&f, MQ_EINVAL, "the file exceeds %u MiB",
		    MQ_SCHEDFILE_MAX >> 20);
		goto fail;
	}
	/* a UTF-8 byte order mark, as some editors write one: not a
	 * control byte nor a setting, passed over (mq-schedule(5)) */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos;
		const char *eq;

		pos += l + (nl != NULL);
		f.line++;
		if (l > 0 && s[l - 1] == '\r')
			l--;
		for (size_t i = 0; i < l; i++) {
			unsigned char ch = (unsigned char)s[i];

			if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
				fail(&f, MQ_EINVAL, "column %zu: control byte "
				    "0x%02x (a payload writes it as \\x%02x)",
				    i + 1, ch, ch);
				goto fail;
			}
		}
		s = trim(s, &l);
		if (l == 0 || s[0] == '#')
			continue;
		if (s[0] == '[') {
			if (end_block(&f, header_line) != 0 ||
			    header(&f, s, l) != 0)
				goto fail;
			header_line = f.line;
			continue;
		}
		eq = memchr(s, '=', l);
		if (eq == NULL) {
			fail(&f, MQ_EINVAL, "expected 'setting = value', "
			    "'[name]' or a # comment");
			goto fail;
		}
		if (f.n == 0) {
			fail(&f, MQ_EINVAL, "a setting before the first "
			    "[name]");
			goto fail;
		}
		{
			size_t nl2 = (size_t)(eq - s), vl = l - nl2 - 1;
			const char *name = trim(s, &nl2);
			const char *val = trim(eq + 1, &vl);

			if (setting(&f, name, nl2, val, vl) != 0)
				goto fail;
		}
	}
	if (end_block(&f, header_line) != 0)
		goto fail;
	*out = f.set;
	return MQ_OK;
fail:
	if (f.have_cur)
		free(f.cur.payload);
	mq_schedset_free(f.set);
	return err->status;
}
