/*
 * units.c: part of every command that shows a duration (documented in mq(1)
 * OUTPUT), not a command: durations as people read them, the one home of the
 * rule that mq(1) OUTPUT states: at most two units, the second zero-padded
 * where it is minutes or seconds (so that a column of them reads at a glance),
 * truncated: a job 59.9 s old shows 59s, never a minute it has not waited.
 */
#include <stdio.h>

#include "output/units.h"

const char *
fmt_duration(char *buf, size_t size, int64_t us)
{
	long long s = us / 1000000;

	if (us < 0)
		snprintf(buf, size, "-");
	else if (us < 1000000)
		snprintf(buf, size, "%lldms", (long long)(us / 1000));
	else if (s < 60)
		snprintf(buf, size, "%llds", s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else if (s % 86400 / 3600 == 0)
		snprintf(buf, size, "%lldd", s / 86400);	/* "3d", not "3d0h" */
	else
		snprintf(buf, size, "%lldd%lldh", s / 86400, s % 86400 / 3600);
	return buf;
}

/* The µs fmt_duration(us) says (us >= 0): what it keeps of us. */
static int64_t
duration_said(int64_t us)
{
	int64_t s = us / 1000000;

	if (us < 1000000)
		return us / 1000 * 1000;
	if (s < 3600)
		return s * 1000000;
	if (s < 86400)
		return s / 60 * 60 * 1000000;
	return s / 3600 * 3600 * 1000000;
}

const char *
fmt_limit_rate(char *buf, size_t size, uint32_t n, uint64_t us)
{
	char d[DURATION_MAX];

	if (n == 0 || us == 0)
		snprintf(buf, size, "-");
	else if (us <= INT64_MAX && duration_said((int64_t)us) == (int64_t)us)
		snprintf(buf, size, "%lu/%s", (unsigned long)n,
		    fmt_duration(d, sizeof d, (int64_t)us));
	else if (us % 1000 == 0)
		snprintf(buf, size, "%lu/%llums", (unsigned long)n,
		    (unsigned long long)(us / 1000));
	else
		snprintf(buf, size, "%lu/%lluus", (unsigned long)n,
		    (unsigned long long)us);
	return buf;
}
