/*
 * tz.c: time zones from the system's zone database, read as TZif files
 * (RFC 8536) by mq itself: no setenv("TZ"), no tzset, no localtime_r,
 * whose state is the whole process's (mq work runs threads). A zone is
 * its transitions (the 64-bit data of a v2+ file, or a v1 file's) and,
 * after the last one, the POSIX TZ rule of the file's footer
 * (tzrule.c). Debian's tzdata files are "fat" (transitions to 2037)
 * and have footers; "slim" files (transitions to the last rule change
 * only) work the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "civil.h"
#include "cron.h"

#define ZONEINFO "/usr/share/zoneinfo"
/* zone files are a few kB; anything far larger is not one */
#define TZIF_MAX (1 << 20)

struct tztype {
	int32_t off;		/* seconds east of UTC */
	int isdst;
	char abbr[16];
};

struct mq_tz {
	char name[MQ_TZ_NAME_MAX + 1];
	size_t n;		/* transitions */
	int64_t *at;		/* their instants, ascending */
	unsigned char *type;	/* the type each one starts */
	size_t ntypes;
	struct tztype *types;	/* types[0]: before the first transition */
	int has_rule;		/* after the last one: the footer's rule */
	struct mq__tzrule rule;
};

int
mq_tz_valid_name(const char *s)
{
	size_t i, comp = 0;

	if (s == NULL || *s == '\0' || *s == '/')
		return 0;
	for (i = 0; s[i]; i++) {
		char ch = s[i];

		if (i == MQ_TZ_NAME_MAX)
			return 0;
		if (ch == '/') {
			/* the component that ends here: not "", ".", ".." */
			if (comp == 0 || (comp <= 2 &&
			    strncmp(s + i - comp, "..", comp) == 0))
				return 0;
			comp = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '+' ||
		    ch == '-' || ch == '.'))
			return 0;
		comp++;
	}
	if (comp == 0 || (comp <= 2 && strncmp(s + i - comp, "..", comp) == 0))
		return 0;
	/* names whose zone is the host's own choice, not a place: two
	 * hosts would compute two instants for one schedule */
	return strcmp(s, "localtime") != 0 && strcmp(s, "posixrules") != 0 &&
	    strcmp(s, "Factory") != 0;
}

/* s for a message: at most 64 bytes, as they are (the command shows a
 * message escaped, as every other quoting a row's bytes: a control
 * byte as \xHH, never as a '?' that hides which) */
static const char *
shown(const char *s, char out[72])
{
	size_t i;

	for (i = 0; s[i] && i < 64; i++)
		out[i] = s[i];
	if (s[i])
		memcpy(out + i++, "...", 3), i += 2;
	out[i] = '\0';
	return out;
}

static enum mq_status fail(struct mq_error *err, enum mq_status st,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum mq_status
fail(struct mq_error *err, enum mq_status st, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->status = st;
		err->db_errno = 0;
		err->sqlstate[0] = '\0';
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return st;
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int64_t
be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* Parses a TZif file into z; 0, or -1 with why in msg. */
static int
parse_tzif(const unsigned char *b, size_t len, struct mq_tz *z, char *msg,
    size_t msgsize)
{
	uint64_t cnt[6], v1, need;
	const unsigned char *p = b, *tp, *ip, *yp, *cp, *end = b + len;
	size_t i, tsize = 4;

	if (len < 44 || memcmp(b, "TZif", 4) != 0)
		goto bad;
	for (i = 0; i < 6; i++)
		cnt[i] = be32(b + 20 + 4 * i);
	/* isutcnt isstdcnt leapcnt timecnt typecnt charcnt */
	v1 = cnt[3] * 5 + cnt[4] * 6 + cnt[5] + cnt[2] * 8 + cnt[1] + cnt[0];
	if (b[4] >= '2') {
		/* skip the 32-bit data: the 64-bit header and data follow */
		if (v1 > len - 44 || len - 44 - v1 < 44)
			goto bad;
		p = b + 44 + v1;
		if (memcmp(p, "TZif", 4) != 0)
			goto bad;
		for (i = 0; i < 6; i++)
			cnt[i] = be32(p + 20 + 4 * i);
		tsize = 8;
	} else if (b[4] != '\0') {
		goto bad;
	}
	if (cnt[2] != 0) {
		snprintf(msg, msgsize, "leap-second (\"right/\") zone files "
		    "are not supported");
		return -1;
	}
	if (cnt[4] < 1 || cnt[4] > 256 || cnt[5] < 1 || cnt[3] > 100000 ||
	    (cnt[0] != 0 && cnt[0] != cnt[4]) ||
	    (cnt[1] != 0 && cnt[1] != cnt[4]))
		goto bad;
	need = cnt[3] * (tsize + 1) + cnt[4] * 6 + cnt[5] + cnt[1] + cnt[0];
	if (need > (uint64_t)(end - p - 44))
		goto bad;
	tp = p + 44;
	ip = tp + cnt[3] * tsize;
	yp = ip + cnt[3];
	cp = yp + cnt[4] * 6;
	z->n = (size_t)cnt[3];
	z->ntypes = (size_t)cnt[4];
	z->at = malloc(z->n ? z->n * sizeof *z->at : 1);
	z->type = malloc(z->n ? z->n : 1);
	z->types = malloc(z->ntypes * sizeof *z->types);
	if (z->at == NULL || z->type == NULL || z->types == NULL) {
		snprintf(msg, msgsize, "out of memory");
		return -2;
	}
	for (i = 0; i < z->n; i++) {
		z->at[i] = tsize == 8 ? be64(tp + 8 * i) :
		    (int64_t)(int32_t)be32(tp + 4 * i);
		z->type[i] = ip[i];
		if (ip[i] >= z->ntypes || (i > 0 && z->at[i] <= z->at[i - 1]))
			goto bad;
	}
	for (i = 0; i < z->ntypes; i++) {
		const unsigned char *t = yp + 6 * i;
		int32_t off = (int32_t)be32(t);
		size_t a = t[5], k;

		/* RFC 8536: -89999..93599 (under 25 and 26 hours) */
		if (off < -89999 || off > 93599 || t[4] > 1 || a >= cnt[5])
			goto bad;
		z->types[i].off = off;
		z->types[i].isdst = t[4];
		for (k = 0; k < 15 && a + k < cnt[5] && cp[a + k]; k++)
			z->types[i].abbr[k] = (char)cp[a + k];
		z->types[i].abbr[k] = '\0';
	}
	if (tsize == 8) {
		/* the footer: "\n" TZ-string "\n" */
		const unsigned char *f = p + 44 + need, *nl;
		char rule[256];

		if (f >= end || *f != '\n')
			goto bad;
		f++;
		nl = memchr(f, '\n', (size_t)(end - f));
		if (nl == NULL || nl - f >= (long)sizeof rule)
			goto bad;
		memcpy(rule, f, (size_t)(nl - f));
		rule[nl - f] = '\0';
		if (rule[0] != '\0') {
			if (mq__tzrule_parse(rule, &z->rule, msg, msgsize) != 0)
				return -1;
			z->has_rule = 1;
		}
	}
	return 0;
bad:
	snprintf(msg, msgsize, "not a valid TZif file");
	return -1;
}

static struct mq_tz *
new_utc(const char *name)
{
	struct mq_tz *z = calloc(1, sizeof *z);

	if (z == NULL)
		return NULL;
	snprintf(z->name, sizeof z->name, "%s", name);
	z->ntypes = 1;
	z->types = calloc(1, sizeof *z->types);
	if (z->types == NULL) {
		free(z);
		return NULL;
	}
	strcpy(z->types[0].abbr, "UTC");
	return z;
}

enum mq_status
mq_tz_load(const char *name, const char *dir, struct mq_tz **tz,
    struct mq_error *err)
{
	char path[4096 + MQ_TZ_NAME_MAX + 2], why[200], q[72];
	unsigned char *buf = NULL;
	struct mq_tz *z;
	struct stat st;
	size_t len = 0;
	ssize_t r;
	int fd, e, rc;

	if (name == NULL || strcmp(name, "UTC") == 0) {
		if ((*tz = new_utc("UTC")) == NULL)
			return fail(err, MQ_ENOMEM, "out of memory");
		return MQ_OK;
	}
	if (!mq_tz_valid_name(name))
		return fail(err, MQ_EINVAL, "invalid time zone name '%s'",
		    shown(name, q));
	if (dir == NULL || *dir == '\0')
		dir = getenv("TZDIR");
	if (dir == NULL || *dir == '\0')
		dir = ZONEINFO;
	if (strlen(dir) > 4096)
		return fail(err, MQ_EINVAL, "zone directory too long");
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return fail(err, MQ_EINVAL, "unknown time zone '%s' "
			    "(no file %s)", name, path);
		return fail(err, MQ_EIO, "time zone '%s': cannot open %s", name,
		    path);
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > TZIF_MAX) {
		close(fd);
		return fail(err, MQ_EINVAL, "unknown time zone '%s' (%s is not "
		    "a zone file)", name, path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		return fail(err, MQ_ENOMEM, "out of memory");
	}
	while (len <= (size_t)st.st_size) {
		r = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			close(fd);
			return fail(err, MQ_EIO, "time zone '%s': cannot read "
			    "%s", name, path);
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	z = calloc(1, sizeof *z);
	if (z == NULL) {
		free(buf);
		return fail(err, MQ_ENOMEM, "out of memory");
	}
	snprintf(z->name, sizeof z->name, "%s", name);
	rc = len > (size_t)st.st_size ? -1 :
	    parse_tzif(buf, len, z, why, sizeof why);
	free(buf);
	if (rc != 0) {
		mq_tz_free(z);
		if (rc == -2)
			return fail(err, MQ_ENOMEM, "out of memory");
		if (len > (size_t)st.st_size)
			snprintf(why, sizeof why, "it changed while read");
		return fail(err, MQ_EINVAL, "time zone '%s': %s", name, why);
	}
	*tz = z;
	return MQ_OK;
}

enum mq_status
mq_tz_rule(const char *rule, struct mq_tz **tz, struct mq_error *err)
{
	struct mq__tzrule r;
	struct mq_tz *z;
	char why[200], q[72];

	if (rule == NULL || strlen(rule) > MQ_TZ_NAME_MAX ||
	    mq__tzrule_parse(rule, &r, why, sizeof why) != 0)
		return fail(err, MQ_EINVAL, "time zone rule '%s': %s",
		    shown(rule ? rule : "", q), rule && strlen(rule) <=
		    MQ_TZ_NAME_MAX ? why : rule ? "too long" : "none");
	if ((z = new_utc(rule)) == NULL)
		return fail(err, MQ_ENOMEM, "out of memory");
	z->rule = r;
	z->has_rule = 1;
	*tz = z;
	return MQ_OK;
}

void
mq_tz_free(struct mq_tz *tz)
{
	if (tz == NULL)
		return;
	free(tz->at);
	free(tz->type);
	free(tz->types);
	free(tz);
}

const char *
mq_tz_name(const struct mq_tz *tz)
{
	return tz->name;
}

/* The offset at t, whether DST, its abbreviation, and its span. */
static int32_t
lookup(const struct mq_tz *z, int64_t t, int *isdst, const char **abbr,
    int64_t *from, int64_t *to)
{
	const struct tztype *ty;
	size_t lo, hi, mid;
	int32_t off;
	int64_t f, u;

	if (z->n == 0 || t >= z->at[z->n - 1]) {
		if (z->has_rule) {
			off = mq__tzrule_at(&z->rule, t, isdst, &f, &u);
			*abbr = *isdst ? z->rule.dst_abbr : z->rule.std_abbr;
			*from = z->n > 0 && f < z->at[z->n - 1] ?
			    z->at[z->n - 1] : f;
			*to = u;
			return off;
		}
		ty = &z->types[z->n ? z->type[z->n - 1] : 0];
		*from = z->n ? z->at[z->n - 1] : INT64_MIN;
		*to = INT64_MAX;
	} else if (t < z->at[0]) {
		ty = &z->types[0];	/* RFC 8536: type 0 before the first */
		*from = INT64_MIN;
		*to = z->at[0];
	} else {
		lo = 0;			/* at[lo] <= t < at[hi] */
		hi = z->n - 1;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (z->at[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
		ty = &z->types[z->type[lo]];
		*from = z->at[lo];
		*to = z->at[hi];
	}
	*isdst = ty->isdst;
	*abbr = ty->abbr;
	return ty->off;
}

int32_t
mq__tz_offset(const struct mq_tz *tz, int64_t t, int64_t *from, int64_t *to)
{
	const char *abbr;
	int isdst;

	return lookup(tz, t, &isdst, &abbr, from, to);
}

void
mq_tz_local(const struct mq_tz *tz, int64_t t, struct mq_local *l)
{
	const char *abbr;
	int64_t from, to, local, day, sod;
	int isdst;
	int32_t off = lookup(tz, t, &isdst, &abbr, &from, &to);

	memset(l, 0, sizeof *l);
	local = t + off;
	day = mq__floor_div(local, 86400);
	sod = local - day * 86400;
	mq__civil_from_days(day, &l->year, &l->month, &l->day);
	l->hour = (int)(sod / 3600);
	l->minute = (int)(sod / 60 % 60);
	l->second = (int)(sod % 60);
	l->wday = mq__weekday(day);
	l->utoff = off;
	l->isdst = isdst;
	snprintf(l->abbr, sizeof l->abbr, "%s", abbr);
}
