/*
 * cron.c: cron expressions, as Vixie cron (and cronie, Debian's cron)
 * reads them: five fields or an @macro, parsed into one bit per value
 * (struct mq_cron), every fault refused with its column; and the
 * canonical text of a parsed expression, for storing and comparing.
 * Nothing here knows about time zones or instants (cron_next.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cron.h"

enum { F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, NFIELDS };

static const char *const field_name[NFIELDS] = {
	"minute", "hour", "day-of-month", "month", "day-of-week",
};
/* the values a field takes; day-of-week 7 is Sunday again */
static const int field_lo[NFIELDS] = {0, 0, 1, 1, 0};
static const int field_hi[NFIELDS] = {59, 23, 31, 12, 7};

static const char month_names[] = "JANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC";
static const char day_names[] = "SUNMONTUEWEDTHUFRISAT";

static const struct {
	const char *name, *expr;
} macros[] = {
	{"yearly", "0 0 1 1 *"}, {"annually", "0 0 1 1 *"},
	{"monthly", "0 0 1 * *"}, {"weekly", "0 0 * * 0"},
	{"daily", "0 0 * * *"}, {"midnight", "0 0 * * *"},
	{"hourly", "0 * * * *"},
};

struct parser {
	const char *s;		/* the whole expression, for columns */
	struct mq_error *err;
};

static int
upper(int ch)
{
	return ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}


static int
is_blank(int ch)
{
	return ch == ' ' || ch == '\t';
}

/* Records "column N: FIELD: what"; at may be NULL (no column), field
 * -1 (the whole expression). */
static enum mq_status bad(struct parser *ps, const char *at, int field,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum mq_status
bad(struct parser *ps, const char *at, int field, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	int n = 0;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (ps->err == NULL)
		return MQ_EINVAL;
	ps->err->status = MQ_EINVAL;
	ps->err->db_errno = 0;
	ps->err->sqlstate[0] = '\0';
	if (at != NULL)
		n = snprintf(ps->err->msg, sizeof ps->err->msg, "column %d: ",
		    (int)(at - ps->s) + 1);
	if (field >= 0)
		n += snprintf(ps->err->msg + n, sizeof ps->err->msg - (size_t)n,
		    "%s: ", field_name[field]);
	snprintf(ps->err->msg + n, sizeof ps->err->msg - (size_t)n, "%s",
	    what);
	return MQ_EINVAL;
}

/* A token for a message: at most 20 bytes of it, then "...". The parser
 * has checked every byte is printable ASCII. */
static const char *
tok(const char *p, size_t n, char out[32])
{
	if (n > 20) {
		memcpy(out, p, 20);
		memcpy(out + 20, "...", 4);
	} else {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return out;
}

/* One value at *pp: a number, or a name in the month and day-of-week
 * fields. MQ_OK and *v in the field's range, *pp moved past it. */
static enum mq_status
value(struct parser *ps, int f, const char **pp, int *v)
{
	const char *p = *pp, *q = p;
	char t[32];
	long x = 0;

	if (mq__ascii_digit(*p)) {
		for (; mq__ascii_digit(*q); q++)
			if (x < 100000)
				x = x * 10 + (*q - '0');
		if (x < field_lo[f] || x > field_hi[f])
			return bad(ps, p, f, "%s is out of range %d-%d",
			    tok(p, (size_t)(q - p), t), field_lo[f],
			    field_hi[f]);
	} else if (mq__ascii_alpha(*p)) {
		const char *names = f == F_MON ? month_names :
		    f == F_DOW ? day_names : NULL;
		size_t i;

		while (mq__ascii_alpha(*q) || mq__ascii_digit(*q))
			q++;
		if (names == NULL)
			return bad(ps, p, f, "unexpected '%s' (names are for "
			    "the month and day-of-week fields)",
			    tok(p, (size_t)(q - p), t));
		x = -1;
		for (i = 0; q - p == 3 && names[i]; i += 3)
			if (upper(p[0]) == names[i] &&
			    upper(p[1]) == names[i + 1] &&
			    upper(p[2]) == names[i + 2])
				x = (long)(i / 3) + (f == F_MON);
		if (x < 0)
			return bad(ps, p, f, "unknown name '%s' (%s)",
			    tok(p, (size_t)(q - p), t),
			    f == F_MON ? "JAN-DEC" : "SUN-SAT");
	} else if (*p == '\0' || *p == ',' || is_blank(*p)) {
		return bad(ps, p, f, "a value is missing");
	} else {
		return bad(ps, p, f, "unexpected '%c'", *p);
	}
	*v = (int)x;
	*pp = q;
	return MQ_OK;
}

/* One field, s[0..n): a list of *, N, N-M, each with an optional /STEP. */
static enum mq_status
field(struct parser *ps, int f, const char *s, size_t n, uint64_t *bits)
{
	const char *p = s, *end = s + n, *elem;
	int lo, hi, step, v, elems = 0;
	uint64_t b = 0;
	char t[32];

	for (;;) {
		elem = p;
		step = 1;
		if (*p == '*') {
			lo = field_lo[f];
			hi = field_hi[f];
			p++;
		} else {
			if (value(ps, f, &p, &lo) != MQ_OK)
				return MQ_EINVAL;
			hi = lo;
			if (*p == '-') {
				p++;
				if (value(ps, f, &p, &hi) != MQ_OK)
					return MQ_EINVAL;
				if (hi < lo)
					return bad(ps, elem, f, "range %s is "
					    "reversed", tok(elem,
					    (size_t)(p - elem), t));
			} else if (*p == '/') {
				hi = field_hi[f];	/* N/STEP: N-max */
			}
		}
		if (*p == '/') {
			const char *q = ++p;
			long x = 0;

			if (!mq__ascii_digit(*q))
				return bad(ps, q, f, "a step is missing after "
				    "'/'");
			for (; mq__ascii_digit(*q); q++)
				if (x < 100000)
					x = x * 10 + (*q - '0');
			if (x < 1 || x > field_hi[f] - field_lo[f] + 1)
				return bad(ps, p, f, "step %s is not in 1-%d",
				    tok(p, (size_t)(q - p), t),
				    field_hi[f] - field_lo[f] + 1);
			step = (int)x;
			p = q;
		}
		for (v = lo; v <= hi; v += step)
			b |= (uint64_t)1 << v;
		elems++;
		if (*elem == '*' && (elems > 1 || (p < end && *p == ',')))
			return bad(ps, elem, f, "'*' must be the field's only "
			    "element");
		if (p == end)
			break;
		if (*p != ',')
			return bad(ps, p, f, "unexpected '%c'", *p);
		p++;
		if (p == end)
			return bad(ps, p, f, "a value is missing after ','");
	}
	*bits = b;
	return MQ_OK;
}

/* The longest day-of-month each month can have (February: 29). */
static const int month_max[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30,
    31, 30, 31};

enum mq_status
mq_cron_parse(const char *s, struct mq_cron *c, struct mq_error *err)
{
	struct parser ps = {s, err};
	const char *p, *start[NFIELDS + 1];
	size_t len[NFIELDS + 1], n = 0, i;
	uint64_t bits[NFIELDS];
	struct mq_cron x;
	int m, d, fires = 0;

	if (s == NULL)
		return bad(&ps, NULL, -1, "no expression");
	for (i = 0; s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (i == MQ_CRON_INPUT_MAX)
			return bad(&ps, NULL, -1, "expression longer than %d "
			    "bytes", MQ_CRON_INPUT_MAX);
		if ((ch < 0x20 && ch != '\t') || ch >= 0x7f)
			return bad(&ps, s + i, -1, "unexpected byte 0x%02x",
			    ch);
	}
	for (p = s; is_blank(*p); p++)
		;
	if (*p == '\0')
		return bad(&ps, NULL, -1, "empty expression");
	if (*p == '@') {
		const char *q = p + 1, *e;
		char t[32];

		while (mq__ascii_alpha(*q))
			q++;
		for (e = q; is_blank(*e); e++)
			;
		if (*e != '\0')
			return bad(&ps, e, -1, "unexpected '%c' after %s", *e,
			    tok(p, (size_t)(q - p), t));
		for (i = 0; i < sizeof macros / sizeof macros[0]; i++) {
			size_t l = strlen(macros[i].name);

			if ((size_t)(q - p - 1) == l) {
				size_t k;

				for (k = 0; k < l && upper(p[1 + k]) ==
				    upper(macros[i].name[k]); k++)
					;
				if (k == l)
					return mq_cron_parse(macros[i].expr, c,
					    err);
			}
		}
		if (q - p == 7 && strncmp(p, "@reboot", 7) == 0)
			return bad(&ps, p, -1, "@reboot is not a schedule "
			    "(mq has no boot to run at)");
		return bad(&ps, p, -1, "unknown macro '%s' (@yearly "
		    "@annually @monthly @weekly @daily @midnight @hourly)",
		    tok(p, (size_t)(q - p), t));
	}
	while (*p) {
		if (n == NFIELDS + 1)
			break;
		start[n] = p;
		while (*p && !is_blank(*p))
			p++;
		len[n] = (size_t)(p - start[n]);
		n++;
		while (is_blank(*p))
			p++;
	}
	if (n != NFIELDS) {
		for (; *p; n++) {	/* count them all for the message */
			while (*p && !is_blank(*p))
				p++;
			while (is_blank(*p))
				p++;
		}
		return bad(&ps, NULL, -1, "expected 5 fields (minute hour "
		    "day-of-month month day-of-week), found %zu", n);
	}
	for (i = 0; i < NFIELDS; i++)
		if (field(&ps, (int)i, start[i], len[i], &bits[i]) != MQ_OK)
			return MQ_EINVAL;
	memset(&x, 0, sizeof x);
	x.minute = bits[F_MIN];
	x.hour = (uint32_t)bits[F_HOUR];
	x.dom = (uint32_t)bits[F_DOM];
	x.month = (uint16_t)bits[F_MON];
	x.dow = (uint8_t)((bits[F_DOW] | bits[F_DOW] >> 7) & 0x7f);
	if (start[F_DOM][0] == '*')
		x.flags |= MQ_CRON_DOM_STAR;
	if (start[F_DOW][0] == '*')
		x.flags |= MQ_CRON_DOW_STAR;
	/* Does it ever fire? With both day fields restricted, any weekday
	 * will do; otherwise a day of the month must exist in a month of
	 * the month field (each such day falls on every weekday within
	 * the 400-year cycle, February 29 included). */
	if (!(x.flags & (MQ_CRON_DOM_STAR | MQ_CRON_DOW_STAR)))
		fires = 1;
	for (m = 1; m <= 12 && !fires; m++)
		for (d = 1; d <= month_max[m] && !fires; d++)
			fires = (x.month >> m & 1) && (x.dom >> d & 1);
	if (!fires) {
		char t1[32], t2[32];

		return bad(&ps, NULL, -1, "never fires: no day-of-month '%s' "
		    "in month '%s'", tok(start[F_DOM], len[F_DOM], t1),
		    tok(start[F_MON], len[F_MON], t2));
	}
	*c = x;
	return MQ_OK;
}

int
mq_cron_every_hour(const struct mq_cron *c)
{
	return c->hour == 0xffffff;
}

/* Appends the values of bits in lo..hi: "*" if all of them (and
 * full_star or star), a step from lo if one gives them (and star, or
 * full_star and 3 values or more), else a list with ranges. */
static char *
put(char *o, uint64_t bits, int lo, int hi, int full_star, int star)
{
	uint64_t pat;
	int v, w, step;

	if (star || full_star) {
		/* a star day field must stay one; elsewhere only a step
		 * that gives 3 values or more reads better than a list */
		for (step = 1; step <= hi - lo + 1; step++) {
			for (pat = 0, v = lo; v <= hi; v += step)
				pat |= (uint64_t)1 << v;
			if (pat == bits)
				break;
		}
		if (step == 1)
			return o + sprintf(o, "*");
		if (step <= hi - lo + 1 && (star || (hi - lo) / step >= 2))
			return o + sprintf(o, "*/%d", step);
	}
	for (v = lo; v <= hi; v = w + 1) {
		if (!(bits >> v & 1)) {
			w = v;
			continue;
		}
		for (w = v; w < hi && (bits >> (w + 1) & 1); w++)
			;
		if (o[-1] != ' ' && o[-1] != '\0')
			*o++ = ',';
		if (w - v >= 2)
			o += sprintf(o, "%d-%d", v, w);
		else if (w == v + 1)
			o += sprintf(o, "%d,%d", v, w);
		else
			o += sprintf(o, "%d", v);
	}
	return o;
}

size_t
mq_cron_format(const struct mq_cron *c, char *buf)
{
	char *o = buf + 1;

	/* buf[0] is a sentinel for put()'s "first value" test */
	buf[0] = '\0';
	o = put(o, c->minute, 0, 59, 1, 0);
	*o++ = ' ';
	o = put(o, c->hour, 0, 23, 1, 0);
	*o++ = ' ';
	o = put(o, c->dom, 1, 31, 0, c->flags & MQ_CRON_DOM_STAR);
	*o++ = ' ';
	o = put(o, c->month, 1, 12, 1, 0);
	*o++ = ' ';
	/* a star day-of-week is a step over 0-7, 7 folded into 0 */
	if (c->flags & MQ_CRON_DOW_STAR) {
		int step;

		for (step = 1; step <= 8; step++) {
			unsigned pat = 0;
			int v;

			for (v = 0; v <= 7; v += step)
				pat |= 1u << (v % 7);
			if (pat == c->dow)
				break;
		}
		o += step == 1 ? sprintf(o, "*") : sprintf(o, "*/%d", step);
	} else {
		o = put(o, c->dow, 0, 6, 0, 0);
	}
	*o = '\0';
	memmove(buf, buf + 1, (size_t)(o - buf));
	return (size_t)(o - buf - 1);
}
