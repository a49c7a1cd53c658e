/*
 * test-schedfile.c: unit tests of the schedule file's parser
 * (lib/schedfile.c, mq-schedule(5)): good files and the fields they
 * give, and bad files with their exact messages (a bad file gives no
 * schedule). TAP on stdout; no server.
 */
#define _DEFAULT_SOURCE		/* mkdtemp */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedule.h"

static int n, failed;

static void ok(int cond, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ok(int cond, const char *fmt, ...)
{
	va_list ap;
	char line[800];

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - ", cond ? "" : "not ", n);
	for (size_t i = 0; line[i]; i++)	/* one TAP line */
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			printf("\\x%02x", (unsigned char)line[i]);
		else
			putchar(line[i]);
	putchar('\n');
}

static struct mq_schedule *
parse_ok(const char *what, const char *text, const char *dir, size_t *cnt)
{
	struct mq_schedule *v;
	struct mq_error e;
	enum mq_status st = mq_schedfile_parse(text, strlen(text), dir, &v,
	    cnt, &e);

	ok(st == MQ_OK, "%s: parses%s%s", what, st ? ": " : "",
	    st ? e.msg : "");
	return st == MQ_OK ? v : NULL;
}

static void
parse_bad(const char *text, size_t len, enum mq_status want,
    const char *msg)
{
	struct mq_schedule *v = (struct mq_schedule *)1;
	struct mq_error e;
	size_t cnt = 99;
	enum mq_status st = mq_schedfile_parse(text, len, NULL, &v, &cnt, &e);

	if (msg == NULL) {	/* any message, one printable line */
		int printable = 1;

		for (const char *p = e.msg; *p; p++)	/* a tab, at most */
			if (((unsigned char)*p < 0x20 && *p != '\t') ||
			    *p == 0x7f)
				printable = 0;
		ok(st == want && v == NULL && cnt == 0 && printable &&
		    strlen(e.msg) > 20, "refused, printably: '%s'", e.msg);
		return;
	}
	ok(st == want && v == NULL && cnt == 0 && strcmp(e.msg, msg) == 0,
	    "refused: '%s' -> '%s' (status %d)", msg, e.msg, (int)st);
}

#define BAD(text, msg) parse_bad(text, sizeof text - 1, MQ_EINVAL, msg)

static void
good(void)
{
	struct mq_schedule *v;
	size_t cnt;

	v = parse_ok("empty", "", NULL, &cnt);
	ok(v == NULL && cnt == 0, "empty file: no schedule");
	v = parse_ok("comments", "# nothing\n\n   # here\n\t\n", NULL, &cnt);
	ok(cnt == 0, "comments only: no schedule");
	mq_schedules_free(v, cnt);

	v = parse_ok("full", "# ops\n"
	    "[nightly-backup]\n"
	    "cron    = 30 2 * * mon-fri\n"
	    "tz      = Europe/Berlin\n"
	    "queue   = ops\n"
	    "payload = backup --full\n"
	    "missed  = all\n"
	    "missed-max = 3\n"
	    "max-attempts = 5\n"
	    "priority = -7\n"
	    "key = repo:web\n"
	    "\n"
	    "  [ hourly ]  \r\n"
	    "cron=@hourly\r\n", NULL, &cnt);
	if (v != NULL) {
		ok(cnt == 2, "two schedules (%zu)", cnt);
		ok(strcmp(v[0].name, "nightly-backup") == 0 && v[0].line == 2,
		    "name and line: %s %u", v[0].name, v[0].line);
		ok(strcmp(v[0].expr, "30 2 * * 1-5") == 0,
		    "expression stored canonical: %s", v[0].expr);
		ok(strcmp(v[0].zone, "Europe/Berlin") == 0 &&
		    strcmp(v[0].queue, "ops") == 0, "zone and queue");
		ok(v[0].payload_len == 13 &&
		    memcmp(v[0].payload, "backup --full", 13) == 0, "payload");
		ok(v[0].missed == MQ_MISSED_ALL && v[0].missed_max == 3 &&
		    v[0].max_attempts == 5 && v[0].priority == -7,
		    "missed, missed-max, max-attempts, priority");
		ok(v[0].has_key && strcmp(v[0].key, "repo:web") == 0, "key");
		ok(strcmp(v[1].name, "hourly") == 0 && v[1].line == 13 &&
		    strcmp(v[1].expr, "0 * * * *") == 0, "[ hourly ] on "
		    "line 13 with CRLF: %s '%s'", v[1].name, v[1].expr);
		ok(strcmp(v[1].zone, "UTC") == 0 &&
		    strcmp(v[1].queue, "default") == 0 &&
		    v[1].payload != NULL && v[1].payload_len == 0 &&
		    v[1].missed == MQ_MISSED_ONCE &&
		    v[1].missed_max == MQ_MISSED_MAX_DEFAULT &&
		    v[1].max_attempts == MQ_DEFAULT_MAX_ATTEMPTS &&
		    v[1].priority == 0 && !v[1].has_key,
		    "defaults: UTC, default queue, empty payload, missed "
		    "once");
	}
	mq_schedules_free(v, cnt);

	v = parse_ok("escapes", "[e]\ncron = * * * * *\n"
	    "payload = a\\tb\\\\c\\n\\x00\\xfF\\0 =#x \n", NULL, &cnt);
	if (v != NULL)
		ok(v[0].payload_len == 13 && memcmp(v[0].payload,
		    "a\tb\\c\n\0\xff\0 =#x", 13) == 0,
		    "escapes decoded, '=' and '#' kept, blanks trimmed "
		    "(%zu bytes)", v[0].payload_len);
	mq_schedules_free(v, cnt);
}

static void
payload_files(void)
{
	char dir[] = "/tmp/test-schedfile.XXXXXX", path[64];
	struct mq_schedule *v;
	size_t cnt;
	FILE *f;

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof path, "%s/job.bin", dir);
	f = fopen(path, "wb");
	fwrite("line1\nline2\0\x01", 1, 13, f);
	fclose(f);
	v = parse_ok("payload-file relative", "[p]\ncron = @daily\n"
	    "payload-file = job.bin\n", dir, &cnt);
	if (v != NULL)
		ok(v[0].payload_len == 13 && memcmp(v[0].payload,
		    "line1\nline2\0\x01", 13) == 0, "payload-file verbatim");
	mq_schedules_free(v, cnt);
	{
		char text[200];
		struct mq_error e;

		snprintf(text, sizeof text, "[p]\ncron = @daily\n"
		    "payload-file = %s\n", path);
		ok(mq_schedfile_parse(text, strlen(text), "/nonexistent", &v,
		    &cnt, &e) == MQ_OK && cnt == 1 &&
		    v[0].payload_len == 13, "payload-file absolute");
		mq_schedules_free(v, cnt);
	}
	parse_bad("[p]\ncron = @daily\npayload-file = /nonexistent/x\n",
	    sizeof "[p]\ncron = @daily\npayload-file = /nonexistent/x\n" - 1,
	    MQ_EIO, "line 3: [p]: payload-file: '/nonexistent/x': No such "
	    "file or directory");
	parse_bad("[p]\ncron = @daily\npayload-file = /dev/null\n",
	    sizeof "[p]\ncron = @daily\npayload-file = /dev/null\n" - 1,
	    MQ_EINVAL, "line 3: [p]: payload-file: '/dev/null' is not a "
	    "regular file");
	unlink(path);
	rmdir(dir);
}

static void
bad(void)
{
	BAD("cron = * * * * *\n",
	    "line 1: a setting before the first [name]");
	BAD("[a]\ncron = * * * * *\nwhat\n",
	    "line 3: [a]: expected 'setting = value', '[name]' or a # "
	    "comment");
	BAD("[a]\ncron = * * * * *\nfoo = 1\n",
	    "line 3: [a]: unknown setting 'foo' (cron, tz, queue, payload, "
	    "payload-file, priority, max-attempts, key, missed, missed-max)");
	BAD("[a]\ncron = * * * * *\ncron = @daily\n",
	    "line 3: [a]: cron given twice");
	BAD("[a]\ntz = UTC\n\n[b]\ncron = @daily\n",
	    "line 1: [a]: no cron expression (cron = ...)");
	BAD("[a]\ncron = @daily\n[b]\n",
	    "line 3: [b]: no cron expression (cron = ...)");
	BAD("[a]\ncron = 0 24 * * *\n",
	    "line 2: [a]: cron: column 3: hour: 24 is out of range 0-23");
	BAD("[a]\ncron = 0 0 30 2 *\n",
	    "line 2: [a]: cron: never fires: no day-of-month '30' in month "
	    "'2'");
	BAD("[a]\ncron = @daily\ntz = Mars/Olympus\n",
	    "line 3: [a]: tz: unknown time zone 'Mars/Olympus' (no file "
	    "/usr/share/zoneinfo/Mars/Olympus)");
	BAD("[a]\ncron = @daily\ntz = localtime\n",
	    "line 3: [a]: tz: 'localtime' is not a zone name");
	BAD("[a]\ncron = @daily\ntz = posixrules\n",
	    "line 3: [a]: tz: 'posixrules' is not a zone name");
	BAD("[a]\ncron = @daily\ntz = ../etc/passwd\n",
	    "line 3: [a]: tz: '../etc/passwd' is not a zone name");
	BAD("[a]\ncron = @daily\nqueue = a b\n",
	    "line 3: [a]: queue: 'a b' is not a queue name ([A-Za-z0-9_.-], "
	    "1 to 64 bytes)");
	BAD("[a]\ncron = @daily\npriority = 40000\n",
	    "line 3: [a]: priority: '40000' is not a whole number from "
	    "-32768 to 32767");
	BAD("[a]\ncron = @daily\nmax-attempts = 0\n",
	    "line 3: [a]: max-attempts: '0' is not a whole number from 1 to "
	    "1000000");
	BAD("[a]\ncron = @daily\nmissed = sometimes\n",
	    "line 3: [a]: missed: 'sometimes' is not skip, once or all");
	BAD("[a]\ncron = @daily\nmissed-max = 5\n",
	    "line 3: [a]: missed-max is for missed = all");
	BAD("[a]\ncron = @daily\nmissed-max = 5\nmissed = once\n[b]\ncron = @daily\n",
	    "line 3: [a]: missed-max is for missed = all");
	BAD("[a]\ncron = @daily\nmissed = all\nmissed-max = 1001\n",
	    "line 4: [a]: missed-max: '1001' is not a whole number from 1 to "
	    "1000");
	BAD("[a]\ncron = @daily\npayload = x\\\n",
	    "line 3: [a]: payload: a backslash ends the line (write \\\\ for "
	    "one)");
	BAD("[a]\ncron = @daily\npayload = \\q\n",
	    "line 3: [a]: payload: unknown escape '\\q' (\\\\ \\n \\t \\r \\0 "
	    "\\xHH)");
	BAD("[a]\ncron = @daily\npayload = \\x4\n",
	    "line 3: [a]: payload: \\x takes two hex digits");
	BAD("[a]\ncron = @daily\npayload = x\npayload-file = y\n",
	    "line 4: [a]: payload and payload-file exclude each other");
	BAD("[a]\ncron = @daily\npayload-file =\n",
	    "line 3: [a]: payload-file: no file named");
	BAD("[a]\ncron = @daily\nkey = \n",
	    "line 3: [a]: key: '' is not a key (1 to 255 bytes, no control "
	    "characters)");
	BAD("[a]\ncron = @daily\n[a]\ncron = @daily\n",
	    "line 3: [a] again (first on line 1)");
	BAD("[a b]\n", "line 1: 'a b' is not a schedule name ([A-Za-z0-9_.-], "
	    "1 to 64 bytes)");
	BAD("[]\n", "line 1: '' is not a schedule name ([A-Za-z0-9_.-], 1 to "
	    "64 bytes)");
	BAD("[a\n", "line 1: a header is '[name]'");
	BAD("[a\tb]\n", "line 1: 'a\tb' is not a schedule name "
	    "([A-Za-z0-9_.-], 1 to 64 bytes)");
	{	/* a value of tabs, quoted up to the message's end */
		char text[700];

		snprintf(text, sizeof text, "[a]\ncron = @daily\nqueue = x%.500s\n",
		    "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
		    "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
		    "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
		    "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
		    "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\ty");
		parse_bad(text, strlen(text), MQ_EINVAL, NULL);
	}
	BAD("[a]\ncron = @daily\nqueue = x\ty\n", "line 3: [a]: queue: "
	    "'x\ty' is not a queue name ([A-Za-z0-9_.-], 1 to 64 bytes)");
	BAD("[a]\ncron = @daily\npayload = x\x1b[2J\n",
	    "line 3: [a]: column 12: control byte 0x1b (a payload writes it "
	    "as \\x1b)");
	BAD("[a]\ncron = @daily\x7f\n",
	    "line 2: [a]: column 14: control byte 0x7f (a payload writes it "
	    "as \\x7f)");
	BAD("[a]\ncron = @daily\0\n",
	    "line 2: [a]: column 14: control byte 0x00 (a payload writes it "
	    "as \\x00)");
	BAD("\x01", "line 1: column 1: control byte 0x01 (a payload writes it "
	    "as \\x01)");
}

/* many schedules (the names' table grows), then one named again */
static void
many(void)
{
	size_t cap = 3001 * 40, len = 0, cnt;
	char *text = malloc(cap);
	struct mq_schedule *v;

	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len,
		    "[s%d]\ncron = @daily\n", i);
	v = parse_ok("3000 schedules", text, NULL, &cnt);
	ok(cnt == 3000 && v != NULL && strcmp(v[2999].name, "s2999") == 0 &&
	    v[2999].line == 5999, "3000 schedules, the last on line 5999");
	mq_schedules_free(v, cnt);
	len += (size_t)snprintf(text + len, cap - len, "[s1717]\n");
	parse_bad(text, len, MQ_EINVAL, "line 6001: [s1717] again (first on "
	    "line 3435)");
	free(text);
}

int
main(void)
{
	good();
	payload_files();
	bad();
	many();
	ok(mq_missed_parse("once") == MQ_MISSED_ONCE &&
	    mq_missed_parse("ONCE") == -1 && mq_missed_parse(NULL) == -1 &&
	    strcmp(mq_missed_name(MQ_MISSED_ALL), "all") == 0,
	    "missed policy names");
	printf("1..%d\n", n);
	return failed != 0;
}
