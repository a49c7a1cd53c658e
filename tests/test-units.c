/*
 * test-units.c: unit tests of cmd/output/units.c, the human durations of
 * tables and messages (mq(1) OUTPUT). TAP on stdout; no server.
 */
#include <stdio.h>
#include <string.h>

#include "output/units.h"

static int n, failed;

static void
duration_is(long long us, const char *want)
{
	char buf[DURATION_MAX];

	fmt_duration(buf, sizeof buf, us);
	n++;
	if (strcmp(buf, want) != 0)
		failed++;
	printf("%sok %d - %lld us is '%s' (got '%s')\n",
	    strcmp(buf, want) ? "not " : "", n, us, want, buf);
}

int
main(void)
{
	const long long s = 1000000;

	duration_is(0, "0ms");
	duration_is(999, "0ms");
	duration_is(1000, "1ms");
	duration_is(850000, "850ms");
	duration_is(999999, "999ms");
	duration_is(s, "1s");
	duration_is(s + 999999, "1s");	/* truncated, not rounded */
	duration_is(42 * s, "42s");
	duration_is(59 * s + 999999, "59s");
	duration_is(60 * s, "1m00s");
	duration_is(187 * s, "3m07s");
	duration_is(192 * s, "3m12s");
	duration_is(3599 * s + 999999, "59m59s");
	duration_is(3600 * s, "1h00m");
	duration_is(2 * 3600 * s + 5 * 60 * s + 59 * s, "2h05m");
	duration_is(86399 * s, "23h59m");
	duration_is(86400 * s, "1d");
	duration_is((3 * 86400 + 4 * 3600 + 3599) * s, "3d4h");
	duration_is(400LL * 86400 * s, "400d");
	duration_is((2 * 86400 + 3599) * s, "2d");
	duration_is(-1, "-");
	duration_is(-86400 * s, "-");
	duration_is(9223372036854775807LL, "106751991d4h");
	printf("1..%d\n", n);
	return failed != 0;
}
