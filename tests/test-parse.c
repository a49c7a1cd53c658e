/*
 * test-parse.c: unit tests of lib's parsers: durations, receipts, table
 * and queue names, times. TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mq.h"
#include "internal.h"

static int n, failed;

static void
ok(int cond, const char *what, const char *input)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s '", cond ? "" : "not ", n, what);
	for (; *input; input++)	/* one TAP line, whatever the input */
		if ((unsigned char)*input < 0x20 || *input == 0x7f)
			printf("\\x%02x", (unsigned char)*input);
		else
			putchar(*input);
	printf("'\n");
}

static void
duration_is(const char *s, long long want)
{
	int64_t us = -1;

	ok(mq_parse_duration(s, &us) == MQ_OK && us == want,
	    "duration parses", s);
}

static void
duration_bad(const char *s)
{
	int64_t us = 12345;

	ok(mq_parse_duration(s, &us) == MQ_EINVAL && us == 12345,
	    "duration refused", s);
}

int
main(void)
{
	static const char *bad_durations[] = {
		"", " ", "-1", "-5s", "5x", "s", "1.5s", "1h30", "5 s", "5s ",
		"1e3", "+5", "0x10", "99999999999999999999",
		"18446744073709551615s", "3660000000000000000ms", "36601d",
		"5m5", "5S", "ms", "\xff", "1h-5m", "0h30", "0s0",
	};
	static const char *good_tables[] = {
		"mq_jobs", "a", "Jobs2", "_x", "a1234567890123456789012345678901"
		"234567890123456789", "9lives",
	};
	static const char *bad_tables[] = {
		"", "a-b", "a b", "a`b", "a'b", "a;b", "a.b", "12345",
		"j\xc3\xa9", "a\"b", "a1234567890123456789012345678901"
		"2345678901234567890", "a\nb", "a/b",
	};
	static const char *good_queues[] = {
		"default", "emails.high", "q-1", "Q_2", "x",
		"q234567890123456789012345678901234567890123456789012345678901234",
	};
	static const char *bad_queues[] = {
		"", "a,b", "a b", "a`b", "a'b", "a;b", "\xe9t\xe9", "a\\b",
		"q2345678901234567890123456789012345678901234567890123456789012345",
		"a\tb",
	};
	static const char *bad_receipts[] = {
		"", "1", "1.", ".0123456789abcdef0123456789abcdef",
		"0.0123456789abcdef0123456789abcdef",
		"01.0123456789abcdef0123456789abcdef",
		"1.0123456789ABCDEF0123456789abcdef",
		"1.0123456789abcdef0123456789abcde",
		"1.0123456789abcdef0123456789abcdef0",
		"1.0123456789abcdef0123456789abcdeg",
		"-1.0123456789abcdef0123456789abcdef",
		"18446744073709551616.0123456789abcdef0123456789abcdef",
		"1 .0123456789abcdef0123456789abcdef",
		"1.0123456789abcdef0123456789abcdef\n",
		"1;DROP TABLE mq_jobs",
	};
	static const char *good_times[] = {
		"2026-11-22 10:00", "2026-11-22T10:00:59", "2026-11-22 10:00:00Z",
		"2024-02-29 00:00:00.123456", "@0", "@1700000000",
	};
	static const char *bad_times[] = {
		"", "2026-11-22", "2026-13-01 00:00", "2026-02-29 00:00",
		"2026-04-31 00:00", "2026-11-22 24:00", "2026-11-22 10:60",
		"2026-11-22 10:00:00.", "2026-11-22 10:00:00.1234567",
		"2026-11-22 10:00:00+01:00", "@", "@-1", "@99999999999",
		"now", "2026-11-22 10:00'; DROP TABLE x; --", "26-11-22 10:00",
	};
	struct mq_receipt r;
	char buf[MQ_RECEIPT_SIZE];
	size_t i;

	duration_is("0", 0);
	duration_is("30", 30000000LL);
	duration_is("30s", 30000000LL);
	duration_is("500ms", 500000LL);
	duration_is("5m", 300000000LL);
	duration_is("1h30m", 5400000000LL);
	duration_is("2d", 172800000000LL);
	duration_is("1m30s250ms", 90250000LL);
	duration_is("36500d", 36500LL * 86400 * 1000000);
	for (i = 0; i < sizeof bad_durations / sizeof *bad_durations; i++)
		duration_bad(bad_durations[i]);

	for (i = 0; i < sizeof good_tables / sizeof *good_tables; i++)
		ok(mq_valid_table(good_tables[i]), "table valid", good_tables[i]);
	for (i = 0; i < sizeof bad_tables / sizeof *bad_tables; i++)
		ok(!mq_valid_table(bad_tables[i]), "table refused",
		    bad_tables[i]);
	ok(!mq_valid_table(NULL), "table refused", "(null)");
	for (i = 0; i < sizeof good_queues / sizeof *good_queues; i++)
		ok(mq_valid_queue(good_queues[i]), "queue valid", good_queues[i]);
	for (i = 0; i < sizeof bad_queues / sizeof *bad_queues; i++)
		ok(!mq_valid_queue(bad_queues[i]), "queue refused",
		    bad_queues[i]);

	ok(mq_parse_receipt("42.0123456789abcdef0123456789abcdef", &r) ==
	    MQ_OK && r.id == 42 &&
	    strcmp(r.token, "0123456789abcdef0123456789abcdef") == 0,
	    "receipt parses", "42.0123...");
	mq_format_receipt(&r, buf);
	ok(strcmp(buf, "42.0123456789abcdef0123456789abcdef") == 0,
	    "receipt formats back", buf);
	ok(mq_parse_receipt(
	    "18446744073709551615.ffffffffffffffffffffffffffffffff", &r) ==
	    MQ_OK && r.id == 18446744073709551615ULL, "receipt parses",
	    "max id");
	for (i = 0; i < sizeof bad_receipts / sizeof *bad_receipts; i++)
		ok(mq_parse_receipt(bad_receipts[i], &r) == MQ_EINVAL,
		    "receipt refused", bad_receipts[i]);

	for (i = 0; i < sizeof good_times / sizeof *good_times; i++)
		ok(mq_check_time(good_times[i]) == MQ_OK, "time valid",
		    good_times[i]);
	for (i = 0; i < sizeof bad_times / sizeof *bad_times; i++)
		ok(mq_check_time(bad_times[i]) == MQ_EINVAL, "time refused",
		    bad_times[i]);

	ok(mq_schema_sql("bad name") == NULL, "schema refuses bad table",
	    "bad name");
	/* every identifier the schema derives from the longest table name
	 * fits MySQL's 64 (the longest, <table>_queues_limits, did not at
	 * 56: mq init failed half way) */
	{
		char longest[MQ_TABLE_MAX + 1], *sql, *p, *q;
		size_t worst = 0;

		memset(longest, 't', MQ_TABLE_MAX);
		longest[MQ_TABLE_MAX] = '\0';
		sql = mq_schema_sql(longest);
		ok(sql != NULL, "schema of the longest table name", longest);
		for (p = sql; p && (p = strchr(p, '`')) != NULL; p = q + 1) {
			if ((q = strchr(p + 1, '`')) == NULL)
				break;
			if ((size_t)(q - p - 1) > worst)
				worst = (size_t)(q - p - 1);
		}
		ok(worst > MQ_TABLE_MAX && worst <= 64,
		    "its identifiers fit 64", "<table>_queues_limits");
		free(sql);
	}

	/* a connection the server cut, as Connector/C reports it on a
	 * write or read (5014 was "any other server error", 70) */
	ok(mq__classify(5014) == MQ_EUNAVAIL, "lost connection", "5014");
	ok(mq__classify(5013) == MQ_EUNAVAIL, "lost connection", "5013");
	ok(mq__classify(2013) == MQ_EUNAVAIL, "lost connection", "2013");
	ok(mq__classify(1213) == MQ_ERETRY, "retried", "1213");
	ok(mq__classify(1062) == MQ_EDB, "server error", "1062");
	ok(mq__classify(1047) == MQ_EUNAVAIL, "node not ready (Galera)",
	    "1047");
	printf("1..%d\n", n);
	return failed != 0;
}
