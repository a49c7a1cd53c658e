/*
 * args.c: the values options and operands take: durations, integers in
 * a range, job ids; a bad one is a usage error naming the option.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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
parse_id(const char *s, uint64_t *id)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*id = strtoull(s, &end, 10);
	return *end || errno || *id == 0 ? -1 : 0;
}
