/*
 * test-cron.c: unit tests of lib's calendar schedules (cron.h): the
 * expression parser (good and bad inputs, every message), zones read
 * from TZif files and POSIX TZ rules (against glibc's localtime_r), and
 * the next run, against a brute-force reference computed here minute by
 * minute with glibc under setenv("TZ") (this program may use TZ; the
 * library must not), over whole years in four zones, with the daylight
 * saving rules of doc/cron.md applied to the reference. TAP on stdout.
 *
 * MQ_CRON_TEST_YEARS: how many years from 2026 the whole-year runs
 * cover (default 5: 2026-2030).
 */
#define _DEFAULT_SOURCE		/* timegm, setenv */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cron.h"

static int n, failed;

static void ok(int cond, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ok(int cond, const char *fmt, ...)
{
	va_list ap;
	char line[600];
	size_t i;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - ", cond ? "" : "not ", n);
	for (i = 0; line[i]; i++)	/* one TAP line, whatever the input */
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			printf("\\x%02x", (unsigned char)line[i]);
		else
			putchar(line[i]);
	putchar('\n');
}

static void
diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

/* "2026-03-29 01:00" (UTC) as an instant */
static int64_t
utc(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	if (sscanf(s, "%d-%d-%d %d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	    &tm.tm_hour, &tm.tm_min) != 5)
		abort();
	tm.tm_year -= 1900;
	tm.tm_mon--;
	return (int64_t)timegm(&tm);
}

static const char *
show(int64_t t, char buf[32])
{
	struct tm tm;
	time_t tt = (time_t)t;

	gmtime_r(&tt, &tm);
	strftime(buf, 32, "%Y-%m-%d %H:%M:%SZ", &tm);
	return buf;
}

/* ---- the parser ---- */

static void
parses(const char *s, const char *canon)
{
	struct mq_cron c, again;
	struct mq_error e;
	char buf[MQ_CRON_FORMAT_SIZE];
	enum mq_status st = mq_cron_parse(s, &c, &e);

	if (st != MQ_OK) {
		ok(0, "parses '%s' (refused: %s)", s, e.msg);
		return;
	}
	mq_cron_format(&c, buf);
	ok(strcmp(buf, canon) == 0, "'%s' is '%s' (got '%s')", s, canon, buf);
	ok(mq_cron_parse(buf, &again, &e) == MQ_OK &&
	    memcmp(&c, &again, sizeof c) == 0,
	    "'%s': its canonical form parses back to it", s);
}

static void
refused(const char *s, const char *msg)
{
	struct mq_cron c;
	struct mq_error e;

	memset(&c, 0xa5, sizeof c);
	memset(&e, 0, sizeof e);
	ok(mq_cron_parse(s, &c, &e) == MQ_EINVAL && e.status == MQ_EINVAL &&
	    strcmp(e.msg, msg) == 0 && c.minute == 0xa5a5a5a5a5a5a5a5ULL,
	    "'%s' refused: %s%s%s", s, msg, strcmp(e.msg, msg) ? " (got: " :
	    "", strcmp(e.msg, msg) ? e.msg : "");
}

static void
test_parser(void)
{
	struct mq_cron c;
	struct mq_error e;
	char long_expr[MQ_CRON_INPUT_MAX + 2];

	parses("* * * * *", "* * * * *");
	parses("*/15 * * * *", "*/15 * * * *");
	parses("0 * * * *", "0 * * * *");
	parses("30 2 * * *", "30 2 * * *");
	parses("  30\t2 * *  *  ", "30 2 * * *");
	parses("1-30/2 * * * *",
	    "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29 * * * *");
	parses("5/10 * * * *", "5,15,25,35,45,55 * * * *");
	parses("0,30 1-3 * * *", "0,30 1-3 * * *");
	parses("0 0 1,15 * MON", "0 0 1,15 * 1");
	parses("0 9 * JAN-mar,Dec mon-FRI", "0 9 * 1-3,12 1-5");
	parses("0 0 * * 7", "0 0 * * 0");
	parses("0 0 * * 0,7", "0 0 * * 0");
	parses("0 0 * * 5-7", "0 0 * * 0,5,6");
	parses("0 0 * * 0-7", "0 0 * * 0-6");
	parses("0 0 * * */2", "0 0 * * */2");
	parses("0 0 * * */7", "0 0 * * */7");
	parses("0 0 * * */8", "0 0 * * */7");
	parses("0 0 */2 * *", "0 0 */2 * *");
	parses("0 0 1-31 * *", "0 0 1-31 * *");
	parses("0 0 1-31/2 * *", "0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,"
	    "29,31 * *");
	parses("0 0-23 * * *", "0 * * * *");
	parses("0 */2 * * *", "0 */2 * * *");
	parses("0 */12 * * *", "0 0,12 * * *");
	parses("0 0 29 2 *", "0 0 29 2 *");
	parses("0 0 31 2 MON", "0 0 31 2 1");
	parses("0 0 */30 2 *", "0 0 */30 2 *");
	parses("007 02 01 01 *", "7 2 1 1 *");
	parses("59 23 31 12 6", "59 23 31 12 6");
	parses("0 12 * */3 *", "0 12 * */3 *");
	parses("0 12 * 1,7 *", "0 12 * 1,7 *");
	parses("0,20,40 * * * *", "*/20 * * * *");
	parses("5/10 9-17 * JAN-MAR mon-fri",
	    "5,15,25,35,45,55 9-17 * 1-3 1-5");
	parses("@yearly", "0 0 1 1 *");
	parses("@annually", "0 0 1 1 *");
	parses("@monthly", "0 0 1 * *");
	parses("@weekly", "0 0 * * 0");
	parses("@daily", "0 0 * * *");
	parses("@midnight", "0 0 * * *");
	parses("@hourly", "0 * * * *");
	parses(" @Daily\t", "0 0 * * *");

	ok(mq_cron_parse("*/15 * * * *", &c, &e) == MQ_OK &&
	    c.minute == (1ULL | 1ULL << 15 | 1ULL << 30 | 1ULL << 45) &&
	    c.hour == 0xffffff && c.dom == 0xfffffffe && c.month == 0x1ffe &&
	    c.dow == 0x7f && c.flags == (MQ_CRON_DOM_STAR | MQ_CRON_DOW_STAR),
	    "*/15 * * * *: the bits");
	ok(mq_cron_every_hour(&c), "*/15 * * * * fires every hour");
	ok(mq_cron_parse("30 */2 * * *", &c, &e) == MQ_OK &&
	    !mq_cron_every_hour(&c), "30 */2 * * * is at fixed times");
	ok(mq_cron_parse("0 0 1 * 1", &c, &e) == MQ_OK && c.flags == 0,
	    "both day fields restricted: no star flag");

	refused(NULL, "no expression");
	refused("", "empty expression");
	refused(" \t ", "empty expression");
	refused("* * * *", "expected 5 fields (minute hour day-of-month month "
	    "day-of-week), found 4");
	refused("* * * * * *", "expected 5 fields (minute hour day-of-month "
	    "month day-of-week), found 6");
	refused("0 0 * * * /bin/true x", "expected 5 fields (minute hour "
	    "day-of-month month day-of-week), found 7");
	refused("60 * * * *", "column 1: minute: 60 is out of range 0-59");
	refused("0 24 * * *", "column 3: hour: 24 is out of range 0-23");
	refused("0 0 0 * *", "column 5: day-of-month: 0 is out of range 1-31");
	refused("0 0 32 * *", "column 5: day-of-month: 32 is out of range 1-31");
	refused("0 0 * 13 *", "column 7: month: 13 is out of range 1-12");
	refused("0 0 * 0 *", "column 7: month: 0 is out of range 1-12");
	refused("0 0 * * 8", "column 9: day-of-week: 8 is out of range 0-7");
	refused("99999999999999999999999 * * * *", "column 1: minute: "
	    "99999999999999999999... is out of range 0-59");
	refused("30-10 * * * *", "column 1: minute: range 30-10 is reversed");
	refused("0 0 * * FRI-MON", "column 9: day-of-week: range FRI-MON is "
	    "reversed");
	refused("*/0 * * * *", "column 3: minute: step 0 is not in 1-60");
	refused("1-30/0 * * * *", "column 6: minute: step 0 is not in 1-60");
	refused("*/61 * * * *", "column 3: minute: step 61 is not in 1-60");
	refused("0 */25 * * *", "column 5: hour: step 25 is not in 1-24");
	refused("*/ * * * *", "column 3: minute: a step is missing after '/'");
	refused("*/x * * * *", "column 3: minute: a step is missing after '/'");
	refused("0 0 * FOO *", "column 7: month: unknown name 'FOO' (JAN-DEC)");
	refused("0 0 * JANUARY *", "column 7: month: unknown name 'JANUARY' "
	    "(JAN-DEC)");
	refused("0 0 * * SUNDAY", "column 9: day-of-week: unknown name "
	    "'SUNDAY' (SUN-SAT)");
	refused("0 0 * MON *", "column 7: month: unknown name 'MON' (JAN-DEC)");
	refused("0 0 * * JAN", "column 9: day-of-week: unknown name 'JAN' "
	    "(SUN-SAT)");
	refused("MON 0 * * *", "column 1: minute: unexpected 'MON' (names are "
	    "for the month and day-of-week fields)");
	refused("1x * * * *", "column 2: minute: unexpected 'x'");
	refused("1,,2 * * * *", "column 3: minute: a value is missing");
	refused("1, * * * *", "column 3: minute: a value is missing after ','");
	refused(",1 * * * *", "column 1: minute: a value is missing");
	refused("1- * * * *", "column 3: minute: a value is missing");
	refused("-1 * * * *", "column 1: minute: unexpected '-'");
	refused("1-2-3 * * * *", "column 4: minute: unexpected '-'");
	refused("*,5 * * * *", "column 1: minute: '*' must be the field's only "
	    "element");
	refused("5,* * * * *", "column 3: minute: '*' must be the field's only "
	    "element");
	refused("*-5 * * * *", "column 2: minute: unexpected '-'");
	refused("** * * * *", "column 2: minute: unexpected '*'");
	refused("0 0 * * 1;", "column 10: day-of-week: unexpected ';'");
	refused("0 0 * * 1\n", "column 10: unexpected byte 0x0a");
	refused("0 0 * * 1\r", "column 10: unexpected byte 0x0d");
	refused("0 0 * * \xc3\xa9", "column 9: unexpected byte 0xc3");
	refused("@reboot", "column 1: @reboot is not a schedule (mq has no "
	    "boot to run at)");
	refused("@every 5m", "column 8: unexpected '5' after @every");
	refused("@daily 0", "column 8: unexpected '0' after @daily");
	refused("@dailyx", "column 1: unknown macro '@dailyx' (@yearly "
	    "@annually @monthly @weekly @daily @midnight @hourly)");
	refused("@", "column 1: unknown macro '@' (@yearly @annually @monthly "
	    "@weekly @daily @midnight @hourly)");
	refused("0 0 30 2 *", "never fires: no day-of-month '30' in month '2'");
	refused("0 0 31 2 *", "never fires: no day-of-month '31' in month '2'");
	refused("0 0 31 4,6,9,11 *", "never fires: no day-of-month '31' in "
	    "month '4,6,9,11'");
	refused("0 0 30-31 FEB */2", "never fires: no day-of-month '30-31' in "
	    "month 'FEB'");
	memset(long_expr, ' ', sizeof long_expr);
	memcpy(long_expr, "* * * * *", 9);
	long_expr[MQ_CRON_INPUT_MAX] = '\0';
	ok(mq_cron_parse(long_expr, &c, &e) == MQ_OK,
	    "an expression of %d bytes (blanks at the end) is accepted",
	    MQ_CRON_INPUT_MAX);
	long_expr[MQ_CRON_INPUT_MAX] = ' ';
	long_expr[MQ_CRON_INPUT_MAX + 1] = '\0';
	refused(long_expr, "expression longer than 512 bytes");
	ok(mq_cron_parse("0 0 30 2 *", &c, NULL) == MQ_EINVAL,
	    "no error record asked for: still refused");
}

/* ---- zones ---- */

static struct mq_tz *
load(const char *name)
{
	struct mq_tz *tz = NULL;
	struct mq_error e;

	if (mq_tz_load(name, NULL, &tz, &e) != MQ_OK) {
		ok(0, "zone %s loads (%s)", name, e.msg);
		return NULL;
	}
	return tz;
}

/* glibc's local time of t under TZ=zone (set by the caller) */
static void
glibc_local(int64_t t, struct tm *tm)
{
	time_t tt = (time_t)t;

	localtime_r(&tt, tm);
}

static int
same_local(const struct mq_local *l, const struct tm *tm)
{
	return l->year == tm->tm_year + 1900 && l->month == tm->tm_mon + 1 &&
	    l->day == tm->tm_mday && l->hour == tm->tm_hour &&
	    l->minute == tm->tm_min && l->second == tm->tm_sec &&
	    l->wday == tm->tm_wday && l->utoff == tm->tm_gmtoff &&
	    l->isdst == (tm->tm_isdst > 0) &&
	    strcmp(l->abbr, tm->tm_zone) == 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* mq_tz_local against glibc at k instants in [a, b) and at each
 * transition glibc shows there (found by bisection of hour steps) */
static void
compare_zone(const struct mq_tz *tz, const char *tzenv, int64_t a, int64_t b,
    int k, const char *what)
{
	struct mq_local l;
	struct tm tm;
	int64_t t;
	int i, bad = 0, trans = 0;
	char buf[32];

	setenv("TZ", tzenv, 1);
	tzset();
	for (i = 0; i < k && bad < 3; i++) {
		t = a + (int64_t)(rnd() % (uint64_t)(b - a));
		mq_tz_local(tz, t, &l);
		glibc_local(t, &tm);
		if (!same_local(&l, &tm)) {
			bad++;
			diag("%s at %s: mq %lld-%02d-%02d %02d:%02d:%02d %d %s,"
			    " glibc %02d:%02d:%02d %ld %s", tzenv, show(t, buf),
			    (long long)l.year, l.month, l.day, l.hour, l.minute,
			    l.second, l.utoff, l.abbr, tm.tm_hour, tm.tm_min,
			    tm.tm_sec, tm.tm_gmtoff, tm.tm_zone);
		}
	}
	/* around every change of offset (seen a day apart), to the second */
	for (t = a; t + 86400 <= b && bad < 3; t += 86400) {
		struct tm t2;
		int64_t lo = t, hi = t + 86400, s;

		glibc_local(lo, &tm);
		glibc_local(hi, &t2);
		if (tm.tm_gmtoff == t2.tm_gmtoff && tm.tm_isdst == t2.tm_isdst)
			continue;
		while (hi - lo > 1) {
			int64_t mid = lo + (hi - lo) / 2;

			glibc_local(mid, &t2);
			if (t2.tm_gmtoff == tm.tm_gmtoff &&
			    t2.tm_isdst == tm.tm_isdst)
				lo = mid;
			else
				hi = mid;
		}
		trans++;
		for (s = hi - 2; s <= hi + 1; s++) {
			mq_tz_local(tz, s, &l);
			glibc_local(s, &tm);
			if (!same_local(&l, &tm)) {
				bad++;
				diag("%s at %s (a transition): mq %02d:%02d:%02d "
				    "%d, glibc %02d:%02d:%02d %ld", tzenv,
				    show(s, buf), l.hour, l.minute, l.second,
				    l.utoff, tm.tm_hour, tm.tm_min, tm.tm_sec,
				    tm.tm_gmtoff);
			}
		}
	}
	ok(bad == 0, "%s: local time as glibc's at %d instants and around "
	    "its %d transitions (%s)", tzenv, k, trans, what);
}

static void
test_zones(const char *tmpdir)
{
	static const char *const names[] = {
		"Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
		"Asia/Tokyo", "UTC", "Etc/GMT+5", "America/Nuuk",
		"Asia/Jerusalem", "America/Santiago", "Pacific/Chatham",
		"Asia/Kathmandu", "Africa/Casablanca", "Europe/Dublin",
		"America/St_Johns", "Pacific/Apia", "Asia/Tehran",
		"Antarctica/Troll", "Europe/London", "America/Sao_Paulo",
	};
	static const char *const rules[] = {
		"CET-1CEST,M3.5.0,M10.5.0/3",
		"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
		"<-02>2<-01>,M3.5.0/-1,M10.5.0/0",
		"IST-2IDT,M3.4.4/26,M10.5.0",
		"<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
		"EST5EDT,M3.2.0,M11.1.0",
		"JST-9",
		"<+0545>-5:45",
		"AAA3BBB,J60/1:30,J300/-3:30:15",
		"AAA-3BBB-4,59/0,300/24",
		"NZST-12NZDT,M9.5.0,M4.1.0/3",
		"<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45",
		"XXX-10YYY-10:30,M10.1.0/167,M4.1.0/-167",
		"WGT3WGST,M3.5.0/-2,M10.5.0/-1",
	};
	static const char *const bad_names[] = {
		"", "/etc/passwd", "../etc/passwd", "Europe/../../etc/passwd",
		"Europe/..", "..", ".", "./UTC", "Europe//Berlin", "Europe/",
		"Europe/Ber lin", "Europe/Berlin\n", "Europe\\Berlin",
		"Europe/Berlin;rm", "Europe/$HOME", "Europe/Ber\xc3\xa9",
	};
	struct mq_tz *tz;
	struct mq_error e;
	char path[512], q[600];
	size_t i;
	int64_t t;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if ((tz = load(names[i])) == NULL)
			continue;
		ok(strcmp(mq_tz_name(tz), names[i]) == 0, "%s: its name",
		    names[i]);
		/* the table (fat files: to 2037), then the footer's rule */
		compare_zone(tz, names[i], utc("1850-01-01 00:00"),
		    utc("2040-01-01 00:00"), 5000, "1850-2040");
		compare_zone(tz, names[i], utc("2036-01-01 00:00"),
		    utc("2200-01-01 00:00"), 5000, "2036-2200, the footer");
		mq_tz_free(tz);
	}
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (mq_tz_rule(rules[i], &tz, &e) != MQ_OK) {
			ok(0, "rule %s loads (%s)", rules[i], e.msg);
			continue;
		}
		/* glibc applies a rule from 1970 on only */
		compare_zone(tz, rules[i], utc("1970-01-01 00:00"),
		    utc("2200-01-01 00:00"), 20000, "a POSIX TZ rule");
		mq_tz_free(tz);
	}
	/* no dates: the US rule (glibc takes posixrules' names too) */
	{
		struct mq_tz *a = NULL, *b = NULL;
		struct mq_local la, lb;
		int same = mq_tz_rule("ABC5DEF", &a, &e) == MQ_OK &&
		    mq_tz_rule("ABC5DEF,M3.2.0,M11.1.0", &b, &e) == MQ_OK;

		for (t = utc("1990-01-01 00:00"); same &&
		    t < utc("2100-01-01 00:00"); t += 3001) {
			mq_tz_local(a, t, &la);
			mq_tz_local(b, t, &lb);
			same = memcmp(&la, &lb, sizeof la) == 0;
		}
		ok(same, "a rule without dates: M3.2.0,M11.1.0");
		mq_tz_free(a);
		mq_tz_free(b);
	}
	ok(mq_tz_rule("CET-1CEST,M3.5.0", &tz, &e) == MQ_EINVAL &&
	    strcmp(e.msg, "time zone rule 'CET-1CEST,M3.5.0': not a POSIX TZ "
	    "rule at byte 17") == 0, "a rule with one date refused (%s)",
	    e.msg);
	ok(mq_tz_rule("CET-1CEST,M3.5.0,M10.5.0/168", &tz, &e) == MQ_EINVAL,
	    "a change at hour 168 refused (%s)", e.msg);
	ok(mq_tz_rule("CE-1", &tz, &e) == MQ_EINVAL, "a 2-letter name refused");
	ok(mq_tz_rule("CET-25", &tz, &e) == MQ_EINVAL, "offset 25h refused");

	/* UTC: built in, also when no name is given */
	ok(mq_tz_load(NULL, "/nonexistent", &tz, &e) == MQ_OK &&
	    strcmp(mq_tz_name(tz), "UTC") == 0, "no zone: UTC, built in");
	mq_tz_local(tz, 1700000000, &(struct mq_local){0});
	mq_tz_free(tz);
	ok(mq_tz_load("UTC", "/nonexistent", &tz, &e) == MQ_OK,
	    "UTC needs no zone file");
	mq_tz_free(tz);

	for (i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
		ok(!mq_tz_valid_name(bad_names[i]) &&
		    mq_tz_load(bad_names[i], NULL, &tz, &e) == MQ_EINVAL &&
		    strncmp(e.msg, "invalid time zone name '", 24) == 0 &&
		    /* its bytes as they are: the commands escape a
		     * message (put_text), a '?' would hide which */
		    strstr(e.msg, bad_names[i]) != NULL,
		    "zone name refused: '%s'", bad_names[i]);
	}
	memset(q, 'A', 300);
	q[300] = '\0';
	ok(!mq_tz_valid_name(q), "a 300-byte zone name refused");
	ok(mq_tz_valid_name("Etc/GMT+5") && mq_tz_valid_name("Etc/GMT-14") &&
	    mq_tz_valid_name("America/Port-au-Prince") &&
	    mq_tz_valid_name("America/Argentina/Buenos_Aires"),
	    "zone names with + - _ and three parts are valid");
	ok(mq_tz_load("Mars/Olympus_Mons", NULL, &tz, &e) == MQ_EINVAL &&
	    strcmp(e.msg, "unknown time zone 'Mars/Olympus_Mons' (no file "
	    "/usr/share/zoneinfo/Mars/Olympus_Mons)") == 0,
	    "an unknown zone refused (%s)", e.msg);
	ok(mq_tz_load("Europe", NULL, &tz, &e) == MQ_EINVAL &&
	    strstr(e.msg, "is not a zone file") != NULL,
	    "a directory refused (%s)", e.msg);
	ok(mq_tz_load("zone.tab", NULL, &tz, &e) == MQ_EINVAL &&
	    strcmp(e.msg, "time zone 'zone.tab': not a valid TZif file") == 0,
	    "a file that is not TZif refused (%s)", e.msg);
	if (access("/usr/share/zoneinfo/right/Europe/Berlin", R_OK) == 0)
		ok(mq_tz_load("right/Europe/Berlin", NULL, &tz, &e) ==
		    MQ_EINVAL && strstr(e.msg, "leap-second") != NULL,
		    "a leap-second zone refused (%s)", e.msg);

	/* another directory: the argument, then $TZDIR */
	snprintf(path, sizeof path, "%s/My", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/My/Zone", tmpdir);
	{
		FILE *in = fopen("/usr/share/zoneinfo/Australia/Lord_Howe", "rb");
		FILE *out = fopen(path, "wb");
		unsigned char buf[1 << 16];
		size_t len = in ? fread(buf, 1, sizeof buf, in) : 0, k;
		int bad = 0, loaded = 0;

		if (out)
			fwrite(buf, 1, len, out);
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		ok(mq_tz_load("My/Zone", tmpdir, &tz, &e) == MQ_OK,
		    "a zone from another directory (%s)", tmpdir);
		if (tz) {
			struct mq_local l;

			mq_tz_local(tz, utc("2026-01-01 00:00"), &l);
			ok(l.utoff == 11 * 3600 && strcmp(l.abbr, "+11") == 0,
			    "it is Lord Howe's");
			mq_tz_free(tz);
			tz = NULL;
		}
		setenv("TZDIR", tmpdir, 1);
		ok(mq_tz_load("My/Zone", NULL, &tz, &e) == MQ_OK,
		    "a zone from $TZDIR");
		mq_tz_free(tz);
		unsetenv("TZDIR");
		/* every truncation of a real file refused, not misread */
		for (k = 0; k < len; k++) {
			out = fopen(path, "wb");
			fwrite(buf, 1, k, out);
			fclose(out);
			if (mq_tz_load("My/Zone", tmpdir, &tz, &e) == MQ_OK) {
				bad++;
				mq_tz_free(tz);
			}
		}
		ok(bad == 0, "each of the %zu truncations of a zone file "
		    "refused", len);
		/* random damage: loads or is refused, never misbehaves
		 * (valgrind and ASan watch) */
		for (k = 0; k < 1000; k++) {
			unsigned char d[1 << 16];
			int j;

			memcpy(d, buf, len);
			for (j = 0; j < 1 + (int)(rnd() % 4); j++)
				d[rnd() % len] ^= (unsigned char)(1 + rnd() % 255);
			out = fopen(path, "wb");
			fwrite(d, 1, len, out);
			fclose(out);
			if (mq_tz_load("My/Zone", tmpdir, &tz, &e) == MQ_OK) {
				loaded++;
				for (t = utc("1900-01-01 00:00"); t <
				    utc("2100-01-01 00:00"); t += 86400 * 397) {
					int64_t r;
					struct mq_cron c;

					mq_tz_local(tz, t, &(struct mq_local){0});
					mq_cron_parse("30 2 * * *", &c, NULL);
					mq_cron_next(&c, tz, t, &r);
				}
				mq_tz_free(tz);
			}
		}
		ok(1, "1000 damaged zone files: %d loaded, the rest refused",
		    loaded);
		unlink(path);
	}
}

/* ---- next runs against brute force ---- */

/* One UTC minute of the reference: its local time, by glibc. */
struct minute {
	int64_t wall;		/* local time as seconds, as if UTC */
	unsigned char min, hour, dom, mon, wday;
};

struct ref {
	const char *zone;
	int64_t start;		/* the first minute's instant */
	size_t n;
	struct minute *m;
};

static void
ref_build(struct ref *r, const char *zone, int64_t a, int64_t b)
{
	size_t i;

	setenv("TZ", zone, 1);
	tzset();
	r->zone = zone;
	r->start = a;
	r->n = (size_t)((b - a) / 60);
	r->m = malloc(r->n * sizeof *r->m);
	if (r->m == NULL)
		abort();
	for (i = 0; i < r->n; i++) {
		struct tm tm;

		glibc_local(a + 60 * (int64_t)i, &tm);
		r->m[i].min = (unsigned char)tm.tm_min;
		r->m[i].hour = (unsigned char)tm.tm_hour;
		r->m[i].dom = (unsigned char)tm.tm_mday;
		r->m[i].mon = (unsigned char)(tm.tm_mon + 1);
		r->m[i].wday = (unsigned char)tm.tm_wday;
		r->m[i].wall = a + 60 * (int64_t)i + tm.tm_gmtoff;
	}
}

/* The expression's fields, read back from the bits: does the local time
 * whose fields these are match? (Vixie's day rule.) */
static int
ref_match(const struct mq_cron *c, int min, int hour, int dom, int mon,
    int wday)
{
	int d = (int)(c->dom >> dom & 1), w = (int)(c->dow >> wday & 1);

	if (!(c->minute >> min & 1) || !(c->hour >> hour & 1) ||
	    !(c->month >> mon & 1))
		return 0;
	if ((c->flags & MQ_CRON_DOM_STAR) || (c->flags & MQ_CRON_DOW_STAR))
		return d && w;
	return d || w;
}

static int
ref_match_wall(const struct mq_cron *c, int64_t wall)
{
	struct tm tm;
	time_t tt = (time_t)wall;

	gmtime_r(&tt, &tm);
	return tm.tm_sec == 0 && ref_match(c, tm.tm_min, tm.tm_hour,
	    tm.tm_mday, tm.tm_mon + 1, tm.tm_wday);
}

/*
 * The runs of c by the rules of doc/cron.md, found minute by minute in
 * r->m[from..to): every hour (the hour field is 0-23): each minute whose
 * local time matches. Otherwise: a matching local time only the first
 * time it is seen (a bitmap of the local minutes seen so far, from
 * r->m[0]); and where the local time jumps forward between two
 * minutes, one run at the later minute if a local minute in between
 * (skipped) matches. Returns how many, in out.
 */
static size_t
ref_runs(const struct ref *r, const struct mq_cron *c, size_t from,
    size_t to, int64_t *out, size_t max)
{
	int every = c->hour == 0xffffff;
	int64_t base = r->m[0].wall / 60 - 24 * 60;
	size_t nbits = r->n + 48 * 60, i, k = 0;
	unsigned char *seen = calloc(nbits / 8 + 1, 1);

	if (seen == NULL)
		abort();
	for (i = 0; i < to; i++) {
		const struct minute *m = &r->m[i];
		int64_t w = m->wall / 60 - base, s;
		int run = 0;

		if (m->wall % 60 == 0 && ref_match(c, m->min, m->hour, m->dom,
		    m->mon, m->wday))
			run = every || !(seen[w / 8] >> (w % 8) & 1);
		if (!every && i > 0 && m->wall - r->m[i - 1].wall > 60)
			for (s = r->m[i - 1].wall + 60; s < m->wall && !run;
			    s += 60)
				run = ref_match_wall(c, s);
		seen[w / 8] |= (unsigned char)(1 << (w % 8));
		if (run && i >= from && k < max)
			out[k++] = r->start + 60 * (int64_t)i;
	}
	free(seen);
	return k;
}

/* mq_cron_next over r->m[from..to) against the reference: 1 if equal */
static int
check_runs(const struct ref *r, const struct mq_cron *c,
    const struct mq_tz *tz, size_t from, size_t to, const char *expr,
    size_t *count)
{
	size_t max = to - from + 1, k, i = 0;
	int64_t *want = malloc(max * sizeof *want), t, got;
	int64_t a = r->start + 60 * (int64_t)from, b = r->start + 60 * (int64_t)to;
	int good = 1;
	char b1[32], b2[32];

	if (want == NULL)
		abort();
	k = ref_runs(r, c, from, to, want, max);
	for (t = a - 1; good; t = got) {
		if (mq_cron_next(c, tz, t, &got) != MQ_OK) {
			good = i == k;
			if (!good)
				diag("%s '%s': next after %s failed", r->zone,
				    expr, show(t, b1));
			break;
		}
		if (got >= b)
			break;
		if (i >= k || got != want[i]) {
			diag("%s '%s': after %s mq says %s, the reference %s",
			    r->zone, expr, show(t, b1), show(got, b2),
			    i < k ? show(want[i], b1) : "none");
			good = 0;
			break;
		}
		i++;
	}
	if (good && i != k) {
		diag("%s '%s': mq stops at %zu runs, the reference has %zu "
		    "(the next at %s)", r->zone, expr, i, k, show(want[i], b1));
		good = 0;
	}
	/* mq_cron_runs lists the same */
	if (good && k > 0) {
		int64_t *runs = malloc(k * sizeof *runs);
		size_t got_n = 0;

		good = mq_cron_runs(c, tz, a - 1, b - 1, runs, k, &got_n) ==
		    MQ_OK && got_n == k && memcmp(runs, want, k * sizeof *runs) == 0;
		if (!good)
			diag("%s '%s': mq_cron_runs differs", r->zone, expr);
		free(runs);
	}
	*count = k;
	free(want);
	return good;
}

static const char *const exprs[] = {
	"*/15 * * * *", "0 * * * *", "30 * * * *", "*/7 * * * *",
	"30 2 * * *", "0 2 * * *", "59 1 * * *", "0 3 * * *", "45 1 * * *",
	"30 */2 * * *", "0,30 1-3 * * *", "* 2 * * *", "*/15 2 * * *",
	"0 0 * * *", "15 3 * * SUN", "45 1 1,15 * MON", "0 12 29 2 *",
	"5 4 * * 1-5", "0 2,14 * * *", "0 0 1 * *", "15,45 0-1 * * *",
	"0 0-2/2,4 * * 0", "@hourly", "0 1 * 3,10 0",
};

static void
test_whole_years(const char *zone, int years)
{
	struct ref r;
	struct mq_tz *tz = load(zone);
	struct mq_cron c;
	struct mq_error e;
	size_t i, cnt, total = 0;
	int64_t a = utc("2025-12-30 00:00");
	int64_t b = utc("2026-01-01 00:00") + (int64_t)years * 365 * 86400 +
	    (years + 2) / 4 * 86400 + 2 * 86400;

	if (tz == NULL)
		return;
	ref_build(&r, zone, a, b);
	for (i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
		if (mq_cron_parse(exprs[i], &c, &e) != MQ_OK) {
			ok(0, "%s parses: %s", exprs[i], e.msg);
			continue;
		}
		/* from 2026-01-01 00:00Z: a day of history before it */
		ok(check_runs(&r, &c, tz, 2 * 1440, r.n, exprs[i], &cnt),
		    "%s '%s': %zu runs in 2026-%d as the reference", zone,
		    exprs[i], cnt, 2025 + years);
		total += cnt;
	}
	diag("%s: %zu runs checked", zone, total);
	free(r.m);
	mq_tz_free(tz);
}

/* A random field: a star with or without a step, N, N-M, N-M/S, or a
 * list of them. */
static char *
rand_field(char *o, int lo, int hi, int names)
{
	int parts = rnd() % 4 == 0 ? 2 + (int)(rnd() % 3) : 1, p;
	static const char *const months[] = {"JAN", "FEB", "MAR", "APR",
	    "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
	static const char *const days[] = {"SUN", "MON", "TUE", "WED", "THU",
	    "FRI", "SAT", "sun"};

	if (rnd() % 5 == 0) {
		int step = 1 + (int)(rnd() % (uint64_t)(hi - lo + 1));

		return o + (step == 1 ? sprintf(o, "*") : sprintf(o, "*/%d",
		    step));
	}
	for (p = 0; p < parts; p++) {
		int a = lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
		int b = a + (int)(rnd() % (uint64_t)(hi - a + 1));
		int kind = (int)(rnd() % 4);

		if (p > 0)
			*o++ = ',';
		if (names == 1 && rnd() % 3 == 0)
			o += sprintf(o, "%s", months[a - 1]);
		else if (names == 2 && rnd() % 3 == 0)
			o += sprintf(o, "%s", days[a]);
		else
			o += sprintf(o, "%d", a);
		if (kind >= 1)
			o += sprintf(o, "-%d", b);
		if (kind >= 2)
			o += sprintf(o, "/%d", 1 + (int)(rnd() % 9));
	}
	return o;
}

static void
test_random(struct ref *refs, struct mq_tz **tzs, int nzones, int count)
{
	char expr[256], *o;
	struct mq_cron c;
	struct mq_error e;
	int i, z, bad = 0, refusedn = 0;
	size_t cnt, total = 0, from;

	for (i = 0; i < count && bad < 5; i++) {
		o = expr;
		/* hours: often narrow, to meet the changes of offset */
		o = rand_field(o, 0, 59, 0);
		*o++ = ' ';
		if (rnd() % 3 == 0)
			o += sprintf(o, "%d", (int)(rnd() % 4));
		else
			o = rand_field(o, 0, 23, 0);
		*o++ = ' ';
		o = rnd() % 2 ? o + sprintf(o, "*") : rand_field(o, 1, 31, 0);
		*o++ = ' ';
		o = rnd() % 2 ? o + sprintf(o, "*") : rand_field(o, 1, 12, 1);
		*o++ = ' ';
		o = rnd() % 2 ? o + sprintf(o, "*") : rand_field(o, 0, 7, 2);
		*o = '\0';
		if (mq_cron_parse(expr, &c, &e) != MQ_OK) {
			refusedn++;	/* e.g. a reversed range, never fires */
			continue;
		}
		for (z = 0; z < nzones; z++) {
			struct ref *r = &refs[z];

			/* 40 days, often around a change of offset */
			from = 1440 + (size_t)(rnd() % (uint64_t)(r->n - 42 *
			    1440));
			if (!check_runs(r, &c, tzs[z], from, from + 40 * 1440,
			    expr, &cnt))
				bad++;
			total += cnt;
		}
	}
	ok(bad == 0, "%d random expressions (%d refused) in %d zones over "
	    "40 days each: %zu runs as the reference", count, refusedn, nzones,
	    total);
}

/* Worked examples of doc/cron.md: the runs of expr in zone after t. */
static void
example(const char *zone, const char *expr, const char *after,
    const char *const *want, int k)
{
	struct mq_tz *tz = load(zone);
	struct mq_cron c;
	struct mq_error e;
	int64_t t = utc(after), got;
	char b1[32], line[400];
	int i, good = 1;

	if (tz == NULL)
		return;
	mq_cron_parse(expr, &c, &e);
	snprintf(line, sizeof line, "%s", "");
	for (i = 0; i < k && good; i++) {
		if (mq_cron_next(&c, tz, t, &got) != MQ_OK || got != utc(want[i]))
			good = 0;
		else
			t = got;
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    "%s%s", i ? ", " : "", show(got, b1) + 11);
	}
	ok(good, "%s '%s' after %s: %s", zone, expr, after, line);
	mq_tz_free(tz);
}

static void
test_examples(void)
{
	struct mq_tz *tz;
	struct mq_cron c;
	struct mq_error e;
	int64_t r;

	/* Berlin, spring 2026-03-29: 02:00 CET -> 03:00 CEST (01:00Z) */
	example("Europe/Berlin", "30 2 * * *", "2026-03-28 00:00",
	    (const char *[]){"2026-03-28 01:30", "2026-03-29 01:00",
	    "2026-03-30 00:30"}, 3);
	example("Europe/Berlin", "30 */2 * * *", "2026-03-28 22:00",
	    (const char *[]){"2026-03-28 23:30", "2026-03-29 01:00",
	    "2026-03-29 02:30"}, 3);
	example("Europe/Berlin", "30 * * * *", "2026-03-29 00:00",
	    (const char *[]){"2026-03-29 00:30", "2026-03-29 01:30"}, 2);
	example("Europe/Berlin", "0,30 2 * * *", "2026-03-28 23:00",
	    (const char *[]){"2026-03-29 01:00", "2026-03-30 00:00"}, 2);
	/* Berlin, autumn 2026-10-25: 03:00 CEST -> 02:00 CET (01:00Z) */
	example("Europe/Berlin", "30 2 * * *", "2026-10-24 12:00",
	    (const char *[]){"2026-10-25 00:30", "2026-10-26 01:30"}, 2);
	example("Europe/Berlin", "*/30 * * * *", "2026-10-24 23:45",
	    (const char *[]){"2026-10-25 00:00", "2026-10-25 00:30",
	    "2026-10-25 01:00", "2026-10-25 01:30", "2026-10-25 02:00"}, 5);
	example("Europe/Berlin", "30 */2 * * *", "2026-10-24 23:45",
	    (const char *[]){"2026-10-25 00:30", "2026-10-25 03:30"}, 2);
	/* New York, spring 2026-03-08: 02:00 EST -> 03:00 EDT (07:00Z) */
	example("America/New_York", "30 2 * * *", "2026-03-07 12:00",
	    (const char *[]){"2026-03-08 07:00", "2026-03-09 06:30"}, 2);
	/* New York, autumn 2026-11-01: 02:00 EDT -> 01:00 EST (06:00Z) */
	example("America/New_York", "30 1 * * *", "2026-10-31 12:00",
	    (const char *[]){"2026-11-01 05:30", "2026-11-02 06:30"}, 2);
	example("America/New_York", "0 * * * *", "2026-11-01 04:30",
	    (const char *[]){"2026-11-01 05:00", "2026-11-01 06:00",
	    "2026-11-01 07:00"}, 3);
	/* Lord Howe, spring 2026-10-04: 02:00 +1030 -> 02:30 +11 (15:30Z) */
	example("Australia/Lord_Howe", "15 2 * * *", "2026-10-03 00:00",
	    (const char *[]){"2026-10-03 15:30", "2026-10-04 15:15"}, 2);
	example("Australia/Lord_Howe", "*/15 * * * *", "2026-10-03 15:00",
	    (const char *[]){"2026-10-03 15:15", "2026-10-03 15:30",
	    "2026-10-03 15:45"}, 3);
	example("Australia/Lord_Howe", "0 * * * *", "2026-10-03 14:00",
	    (const char *[]){"2026-10-03 14:30", "2026-10-03 16:00"}, 2);
	/* Lord Howe, autumn 2026-04-05: 02:00 +11 -> 01:30 +1030 (15:00Z) */
	example("Australia/Lord_Howe", "45 1 * * *", "2026-04-04 00:00",
	    (const char *[]){"2026-04-04 14:45", "2026-04-05 15:15"}, 2);
	example("Australia/Lord_Howe", "*/15 * * * *", "2026-04-04 14:20",
	    (const char *[]){"2026-04-04 14:30", "2026-04-04 14:45",
	    "2026-04-04 15:00", "2026-04-04 15:15", "2026-04-04 15:30"}, 5);
	/* Tokyo: no DST */
	example("Asia/Tokyo", "30 2 * * *", "2026-03-28 00:00",
	    (const char *[]){"2026-03-28 17:30", "2026-03-29 17:30"}, 2);
	/* February 29: the next leap year, and beyond 2038 (the footer) */
	example("Europe/Berlin", "0 0 29 2 *", "2026-01-01 00:00",
	    (const char *[]){"2028-02-28 23:00", "2032-02-28 23:00",
	    "2036-02-28 23:00", "2040-02-28 23:00"}, 4);
	example("UTC", "0 0 29 2 *", "2096-03-01 00:00",
	    (const char *[]){"2104-02-29 00:00"}, 1);
	example("America/New_York", "30 2 * * *", "2040-03-10 12:00",
	    (const char *[]){"2040-03-11 07:00", "2040-03-12 06:30"}, 2);
	example("UTC", "0 0 29 2 */7", "2026-01-01 00:00",
	    (const char *[]){"2032-02-29 00:00", "2060-02-29 00:00"}, 2);
	/* the day rule: both restricted, either; one a star, both */
	example("UTC", "0 0 13 * 5", "2026-02-01 00:00",
	    (const char *[]){"2026-02-06 00:00", "2026-02-13 00:00",
	    "2026-02-20 00:00"}, 3);
	example("UTC", "0 0 */13 * 5", "2026-02-01 00:00",
	    (const char *[]){"2026-02-27 00:00", "2026-03-27 00:00"}, 2);
	example("UTC", "0 0 13 * */5", "2026-02-01 00:00",
	    (const char *[]){"2026-02-13 00:00", "2026-03-13 00:00",
	    "2026-09-13 00:00"}, 3);

	/* strictly after, and the edges of time */
	tz = load("Europe/Berlin");
	mq_cron_parse("0 0 * * *", &c, &e);
	ok(mq_cron_next(&c, tz, utc("2025-12-31 23:00"), &r) == MQ_OK &&
	    r == utc("2026-01-01 23:00"), "a run exactly at t: the next one");
	ok(mq_cron_next(&c, tz, utc("2025-12-31 22:59") + 59, &r) == MQ_OK &&
	    r == utc("2025-12-31 23:00"), "a second before a run: that run");
	ok(mq_cron_next(&c, tz, MQ_CRON_TIME_MAX + 1, &r) == MQ_EINVAL &&
	    mq_cron_next(&c, tz, MQ_CRON_TIME_MIN - 1, &r) == MQ_EINVAL,
	    "an instant outside 1800-9999 refused");
	ok(mq_cron_next(&c, tz, utc("9999-12-31 23:00"), &r) == MQ_EMPTY,
	    "no run before 10000: MQ_EMPTY");
	ok(mq_cron_next(&c, tz, MQ_CRON_TIME_MIN, &r) == MQ_OK &&
	    r == utc("1800-01-01 00:00") + 86400 - 3208,
	    "in 1800 (Berlin's LMT, +0:53:28): local midnight (%lld)",
	    (long long)r);
	mq_tz_free(tz);
}

int
main(void)
{
	static const char *const zones[] = {
		"Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
		"Asia/Tokyo",
	};
	struct ref refs[4];
	struct mq_tz *tzs[4];
	char tmpdir[] = "/tmp/mq-test-cron.XXXXXX";
	const char *y = getenv("MQ_CRON_TEST_YEARS");
	/* the sanitized build's run: one year (the plain run does five) */
	int years = y && atoi(y) > 0 ? atoi(y) : getenv("MQ_SANITIZED") ?
	    1 : 5, i;

	if (mkdtemp(tmpdir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_parser();
	test_zones(tmpdir);
	test_examples();
	for (i = 0; i < 4; i++)
		test_whole_years(zones[i], years);

	/* beyond 2037 (the footer) and long ago, against brute force */
	for (i = 0; i < 4; i++) {
		tzs[i] = load(zones[i]);
		ref_build(&refs[i], zones[i], utc("2039-12-30 00:00"),
		    utc("2041-01-02 00:00"));
	}
	for (i = 0; i < 4; i++) {
		size_t k, cnt, total = 0;
		struct mq_cron c;
		int good = 1;

		for (k = 0; k < sizeof exprs / sizeof exprs[0]; k++) {
			mq_cron_parse(exprs[k], &c, NULL);
			good &= check_runs(&refs[i], &c, tzs[i], 2 * 1440,
			    refs[i].n, exprs[k], &cnt);
			total += cnt;
		}
		ok(good, "%s: %zu runs of %zu expressions in 2040 (the "
		    "footer's rule) as the reference", zones[i], total,
		    sizeof exprs / sizeof exprs[0]);
	}
	test_random(refs, tzs, 4, 150);
	for (i = 0; i < 4; i++) {
		free(refs[i].m);
		mq_tz_free(tzs[i]);
	}
	{
		/* Berlin 1945-1947: +1, +2 and +3 (double summer time) */
		struct ref r;
		struct mq_tz *tz = load("Europe/Berlin");
		size_t k, cnt, total = 0;
		struct mq_cron c;
		int good = 1;

		ref_build(&r, "Europe/Berlin", utc("1944-12-30 00:00"),
		    utc("1948-01-01 00:00"));
		for (k = 0; k < sizeof exprs / sizeof exprs[0]; k++) {
			mq_cron_parse(exprs[k], &c, NULL);
			good &= check_runs(&r, &c, tz, 2 * 1440, r.n, exprs[k],
			    &cnt);
			total += cnt;
		}
		ok(good, "Europe/Berlin 1945-1947 (CEMT, +3): %zu runs as the "
		    "reference", total);
		free(r.m);
		mq_tz_free(tz);
	}
	{
		char sub[sizeof tmpdir + 3];

		snprintf(sub, sizeof sub, "%s/My", tmpdir);
		rmdir(sub);
		rmdir(tmpdir);
	}
	printf("1..%d\n", n);
	return failed != 0;
}
