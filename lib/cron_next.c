/*
 * cron_next.c: when a cron expression runs next in a time zone, by the
 * rules cron users know when clocks change (cronie's, Debian's cron;
 * doc/cron.md has them with examples):
 * - an expression that fires in every hour of the day (mq_cron_every_hour)
 *   runs at every real instant whose local time matches: twice in a
 *   repeated hour, not at all in a skipped one (cronie's "wildcard"
 *   jobs);
 * - any other runs at fixed local times: once each, at the first
 *   occurrence of a repeated one; the local times a gap skips, if any
 *   of them matches, run once at the first instant after the gap
 *   (cronie's "fixed-time" jobs, which it runs when the jump is seen).
 *
 * The zone is a sequence of segments of constant offset (tz.c). Within
 * one, local time is UTC plus the offset and the search is a calendar
 * search (next_local); at a segment's start, the two rules above look
 * at the offset before it.
 */
#include "civil.h"
#include "cron.h"

/* The first minute of the day at or after minute mod (0..1439) whose
 * hour and minute match; -1 if none. */
static int
time_ge(const struct mq_cron *c, int mod)
{
	int h, m;

	for (h = mod / 60; h < 24; h++) {
		if (!(c->hour >> h & 1))
			continue;
		for (m = h == mod / 60 ? mod % 60 : 0; m < 60; m++)
			if (c->minute >> m & 1)
				return h * 60 + m;
	}
	return -1;
}

/* Vixie cron's day rule: both day fields restricted, either matches;
 * otherwise both must. */
static int
day_matches(const struct mq_cron *c, int dom, int wday)
{
	int a = c->dom >> dom & 1, b = c->dow >> wday & 1;

	if (c->flags & (MQ_CRON_DOM_STAR | MQ_CRON_DOW_STAR))
		return a && b;
	return a || b;
}

/*
 * The first local time L (seconds, as if local time were UTC) with
 * lo <= L < hi, on a whole minute, that c matches; 1 and *out, or 0 if
 * there is none before hi or within 401 years of lo: every expression
 * mq_cron_parse accepts fires in each 400-year cycle of the calendar.
 */
static int
next_local(const struct mq_cron *c, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t m = mq__floor_div(lo, 60) + (mq__floor_mod(lo, 60) != 0);
	int64_t day = mq__floor_div(m, 1440), last = day + 146097 + 366, y;
	int mod = (int)(m - day * 1440), mon, dom, t;

	mq__civil_from_days(day, &y, &mon, &dom);
	while (day <= last && day * 86400 < hi) {
		if (!(c->month >> mon & 1)) {
			/* skip to the 1st of the next month */
			day += mq__month_days(y, mon) - dom + 1;
			dom = 1;
			mod = 0;
			if (++mon == 13) {
				mon = 1;
				y++;
			}
			continue;
		}
		if (day_matches(c, dom, mq__weekday(day)) &&
		    (t = time_ge(c, mod)) >= 0) {
			int64_t l = day * 86400 + (int64_t)t * 60;

			if (l >= hi)
				return 0;
			*out = l;
			return 1;
		}
		day++;
		mod = 0;
		if (++dom > mq__month_days(y, mon)) {
			dom = 1;
			if (++mon == 13) {
				mon = 1;
				y++;
			}
		}
	}
	return 0;
}

enum mq_status
mq_cron_next(const struct mq_cron *c, const struct mq_tz *tz, int64_t t,
    int64_t *next)
{
	int fixed = !mq_cron_every_hour(c);
	int64_t u, from, to, pfrom, pto, lo, hi, l, limit;
	int32_t off, prev;

	if (t < MQ_CRON_TIME_MIN || t > MQ_CRON_TIME_MAX)
		return MQ_EINVAL;
	u = t + 1;
	limit = t + (int64_t)401 * 366 * 86400;
	for (;;) {
		/* the segment [from, to) holding u, its offset, and the
		 * offset before it */
		off = mq__tz_offset(tz, u, &from, &to);
		prev = from == INT64_MIN ? off :
		    mq__tz_offset(tz, from - 1, &pfrom, &pto);
		/* the clock jumped forward at from, after t: a fixed
		 * time it skipped runs once, now */
		if (fixed && from == u && off > prev &&
		    next_local(c, from + prev, from + off, &l)) {
			*next = from;
			return from > MQ_CRON_TIME_MAX ? MQ_EMPTY : MQ_OK;
		}
		lo = u + off;
		/* it jumped back at from: a fixed time repeated after it
		 * ran before it */
		if (fixed && from != INT64_MIN && prev > off &&
		    from + prev > lo)
			lo = from + prev;
		hi = to == INT64_MAX ? INT64_MAX : to + off;
		if (next_local(c, lo, hi, &l)) {
			*next = l - off;
			return *next > MQ_CRON_TIME_MAX ? MQ_EMPTY : MQ_OK;
		}
		if (to == INT64_MAX || to > limit || to > MQ_CRON_TIME_MAX)
			return MQ_EMPTY;
		u = to;
	}
}

enum mq_status
mq_cron_runs(const struct mq_cron *c, const struct mq_tz *tz, int64_t t0,
    int64_t t1, int64_t *runs, size_t max, size_t *n)
{
	enum mq_status st;
	int64_t r;

	*n = 0;
	if (t0 < MQ_CRON_TIME_MIN || t0 > MQ_CRON_TIME_MAX)
		return MQ_EINVAL;
	while (*n < max && t0 < t1) {
		st = mq_cron_next(c, tz, t0, &r);
		if (st == MQ_EMPTY || (st == MQ_OK && r > t1))
			break;
		if (st != MQ_OK)
			return st;
		runs[(*n)++] = r;
		t0 = r;
	}
	return MQ_OK;
}
