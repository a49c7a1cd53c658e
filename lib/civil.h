/*
 * civil.h: the proleptic Gregorian calendar in whole days since
 * 1970-01-01, for cron.c and the zone code (tz.c, tzrule.c): Howard
 * Hinnant's days_from_civil and civil_from_days ("chrono-Compatible
 * Low-Level Date Algorithms"), exact for every int64 day count the
 * callers use (years -10000..10000 and more). No state, no locale, no
 * C library time functions: thread-safe.
 */
#ifndef MQ_CIVIL_H
#define MQ_CIVIL_H

#include <stdint.h>

/* a / b rounded down (b > 0) */
static inline int64_t
mq__floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* a mod b in 0..b-1 (b > 0) */
static inline int64_t
mq__floor_mod(int64_t a, int64_t b)
{
	return a - mq__floor_div(a, b) * b;
}

static inline int
mq__is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* days in month m (1..12) of year y */
static inline int
mq__month_days(int64_t y, int m)
{
	static const unsigned char days[12] =
	    {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return days[m - 1] + (m == 2 && mq__is_leap(y));
}

/* days since 1970-01-01 of y-m-d (m 1..12, d 1..31) */
static inline int64_t
mq__days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* the date of day z (days since 1970-01-01) */
static inline void
mq__civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* day of the week of day z: 0 Sunday .. 6 Saturday (1970-01-01: 4) */
static inline int
mq__weekday(int64_t z)
{
	return (int)mq__floor_mod(z + 4, 7);
}

#endif
