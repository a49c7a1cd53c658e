/*
 * instant.c: part of the output layer, not a command: an instant of a
 * calendar schedule as mq schedule ls, mq show and mq why write it, in
 * UTC and in the schedule's zone.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "output/output.h"

void
fmt_instant(int64_t t, const struct mq_tz *tz, char *utc, char *local)
{
	struct mq_local l;
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL)
		memset(&tm, 0, sizeof tm);
	snprintf(utc, INSTANT_MAX, "%04d-%02d-%02d %02d:%02d:%02d UTC",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
	if (tz == NULL) {
		memcpy(local, utc, INSTANT_MAX);
		return;
	}
	mq_tz_local(tz, t, &l);
	snprintf(local, INSTANT_MAX, "%04lld-%02d-%02d %02d:%02d:%02d %s",
	    (long long)l.year, l.month, l.day, l.hour, l.minute, l.second,
	    l.abbr);
}

int64_t
instant_s(int64_t us)
{
	return us / 1000000 - (us % 1000000 < 0);
}

void
put_instant(int64_t t, const struct mq_tz *tz)
{
	char utc[INSTANT_MAX], local[INSTANT_MAX];

	fmt_instant(t, tz, utc, local);
	if (tz == NULL) {
		fputs(utc, stdout);
		return;
	}
	put_text(stdout, (const unsigned char *)local, strlen(local));
	printf(" (%s)", utc);
}
