/*
 * tzrule.c: POSIX TZ strings, the rule a TZif file's footer gives for
 * the instants after its last transition ("CET-1CEST,M3.5.0,M10.5.0/3"),
 * with RFC 8536's extension (transition times from -167 to 167 hours,
 * section 3.3.1): parsed, and asked for the offset at an instant. No
 * C library time function, no TZ: pure arithmetic (civil.h).
 */
#include <stdio.h>
#include <string.h>

#include "civil.h"
#include "cron.h"


/* A zone abbreviation: 3+ letters, or <...> of letters, digits, + and -. */
static const char *
abbr(const char *p, char out[16])
{
	size_t n = 0;

	if (*p == '<') {
		for (p++; mq__ascii_alpha(*p) || mq__ascii_digit(*p) || *p == '+' ||
		    *p == '-'; p++, n++)
			if (n < 15)
				out[n] = *p;
		if (*p != '>' || n < 3 || n > 15)
			return NULL;
		p++;
	} else {
		for (; mq__ascii_alpha(*p); p++, n++)
			if (n < 15)
				out[n] = *p;
		if (n < 3 || n > 15)
			return NULL;
	}
	out[n] = '\0';
	return p;
}

/* [+-]hh[:mm[:ss]], hh at most maxh; *secs signed. */
static const char *
hms(const char *p, int maxh, int32_t *secs)
{
	int sign = 1, h = 0, m = 0, s = 0, nd;

	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	for (nd = 0; mq__ascii_digit(*p) && nd < 3; p++, nd++)
		h = h * 10 + (*p - '0');
	if (nd == 0 || mq__ascii_digit(*p) || h > maxh)
		return NULL;
	if (*p == ':') {
		p++;
		if (!mq__ascii_digit(p[0]) || !mq__ascii_digit(p[1]))
			return NULL;
		m = (p[0] - '0') * 10 + (p[1] - '0');
		p += 2;
		if (m > 59)
			return NULL;
		if (*p == ':') {
			p++;
			if (!mq__ascii_digit(p[0]) || !mq__ascii_digit(p[1]))
				return NULL;
			s = (p[0] - '0') * 10 + (p[1] - '0');
			p += 2;
			if (s > 59)
				return NULL;
		}
	}
	*secs = sign * (h * 3600 + m * 60 + s);
	return p;
}

/* a number lo..hi of up to 3 digits */
static const char *
num(const char *p, int lo, int hi, int *v)
{
	int x = 0, nd;

	for (nd = 0; mq__ascii_digit(*p) && nd < 3; p++, nd++)
		x = x * 10 + (*p - '0');
	if (nd == 0 || mq__ascii_digit(*p) || x < lo || x > hi)
		return NULL;
	*v = x;
	return p;
}

/* date[/time]: Jn, n or Mm.w.d; the time defaults to 02:00 */
static const char *
date(const char *p, struct mq__tzdate *d)
{
	memset(d, 0, sizeof *d);
	if (*p == 'J') {
		d->kind = 'J';
		p = num(p + 1, 1, 365, &d->n);
	} else if (*p == 'M') {
		d->kind = 'M';
		p = num(p + 1, 1, 12, &d->m);
		if (p && *p == '.')
			p = num(p + 1, 1, 5, &d->w);
		else
			p = NULL;
		if (p && *p == '.')
			p = num(p + 1, 0, 6, &d->d);
		else
			p = NULL;
	} else {
		d->kind = 'D';
		p = num(p, 0, 365, &d->n);
	}
	if (p == NULL)
		return NULL;
	d->secs = 2 * 3600;
	if (*p == '/')
		p = hms(p + 1, 167, &d->secs);
	return p;
}

int
mq__tzrule_parse(const char *s, struct mq__tzrule *r, char *msg,
    size_t msgsize)
{
	struct mq__tzrule x;
	const char *p = s;
	int32_t off;

	memset(&x, 0, sizeof x);
	if ((p = abbr(p, x.std_abbr)) == NULL)
		goto bad;
	/* POSIX offsets are west of UTC: "CET-1" is UTC+1 */
	if ((p = hms(p, 24, &off)) == NULL)
		goto bad;
	x.std_off = x.dst_off = -off;
	if (*p != '\0') {
		x.has_dst = 1;
		if ((p = abbr(p, x.dst_abbr)) == NULL)
			goto bad;
		x.dst_off = x.std_off + 3600;
		if (*p != ',' && *p != '\0') {
			if ((p = hms(p, 24, &off)) == NULL)
				goto bad;
			x.dst_off = -off;
		}
		if (*p == '\0') {
			/* no rule given: POSIX leaves it to the
			 * implementation; glibc's (and the US's) */
			x.start = (struct mq__tzdate){'M', 0, 3, 2, 0, 7200};
			x.end = (struct mq__tzdate){'M', 0, 11, 1, 0, 7200};
		} else {
			if (*p != ',' || (p = date(p + 1, &x.start)) == NULL ||
			    *p != ',' || (p = date(p + 1, &x.end)) == NULL)
				goto bad;
		}
	}
	if (*p != '\0')
		goto bad;
	*r = x;
	return 0;
bad:
	snprintf(msg, msgsize, "not a POSIX TZ rule at byte %d",
	    p ? (int)(p - s) + 1 : 0);
	return -1;
}

/* The instant of a rule's change in year y; off is the offset in force
 * before it (the change's time of day is local time in that offset). */
static int64_t
change_at(const struct mq__tzdate *d, int64_t y, int32_t off)
{
	int64_t day = mq__days_from_civil(y, 1, 1);

	if (d->kind == 'J') {
		day += d->n - 1 + (mq__is_leap(y) && d->n >= 60);
	} else if (d->kind == 'D') {
		day += d->n;
	} else {
		int64_t first = mq__days_from_civil(y, d->m, 1);
		int k = (d->d - mq__weekday(first) + 7) % 7 + (d->w - 1) * 7;

		while (k >= mq__month_days(y, d->m))
			k -= 7;	/* week 5: the last such day */
		day = first + k;
	}
	return day * 86400 + d->secs - off;
}

int32_t
mq__tzrule_at(const struct mq__tzrule *r, int64_t t, int *isdst,
    int64_t *from, int64_t *to)
{
	/* the changes of the years around t, in order; a change to DST
	 * and one back at the same instant (DST all year: "0/0,J365/25")
	 * are no change at all */
	struct {
		int64_t at;
		int dst;
	} ev[10], tmp;
	int64_t y;
	int m, d, n = 0, i, j, state, prev;

	if (!r->has_dst) {
		*isdst = 0;
		*from = INT64_MIN;
		*to = INT64_MAX;
		return r->std_off;
	}
	mq__civil_from_days(mq__floor_div(t, 86400), &y, &m, &d);
	for (i = -2; i <= 2; i++) {
		ev[n].at = change_at(&r->start, y + i, r->std_off);
		ev[n++].dst = 1;
		ev[n].at = change_at(&r->end, y + i, r->dst_off);
		ev[n++].dst = 0;
	}
	/* insertion sort, stable: at equal instants, the later year's
	 * change (and a year's end after its start) comes last */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && ev[j - 1].at > ev[j].at; j--) {
			tmp = ev[j];
			ev[j] = ev[j - 1];
			ev[j - 1] = tmp;
		}
	/* before the first change: the state it does not change to; the
	 * span's ends may then be changes that keep the offset, which is
	 * still true of them */
	state = !ev[0].dst;
	*from = ev[0].at;
	*to = ev[n - 1].at;
	prev = state;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && ev[j].at == ev[i].at; j++)
			state = ev[j].dst;
		if (state == prev)
			continue;
		prev = state;
		if (ev[i].at <= t) {
			*from = ev[i].at;
		} else {
			*to = ev[i].at;
			break;
		}
	}
	/* the state at t: the last change at or before t */
	state = !ev[0].dst;
	for (i = 0; i < n && ev[i].at <= t; i++)
		state = ev[i].dst;
	*isdst = state;
	return state ? r->dst_off : r->std_off;
}
