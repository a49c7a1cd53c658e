/*
 * test-schedfile.c: unit tests of the schedule file's parser
 * (lib/schedfile.c, mq-schedule(5)): good files and the fields they
 * give, and bad files with their exact messages (a bad file gives no
 * schedule). TAP on stdout; no server.
 */
#define _DEFAULT_SOURCE		/* mkdtemp */
#include <stdarg.h>
#include <stdint.h>
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

/* The set parsed last, whose schedules expand() gave (release() frees
 * both). */
static struct mq_schedset *last_set;

/* set's schedules, each whole (mq_schedset_get), in a malloc'd array
 * (NULL if there is none), *cnt of them. */
static struct mq_schedule *
expand(struct mq_schedset *set, size_t *cnt)
{
	size_t k = mq_schedset_count(set);
	struct mq_schedule *v = k ? calloc(k, sizeof *v) : NULL;

	for (size_t i = 0; v && i < k; i++)
		mq_schedset_get(set, i, &v[i]);
	*cnt = v ? k : 0;
	last_set = set;
	return v;
}

static void
release(struct mq_schedule *v)
{
	free(v);
	mq_schedset_free(last_set);
	last_set = NULL;
}

static struct mq_schedule *
parse_ok(const char *what, const char *text, const char *dir, size_t *cnt)
{
	struct mq_schedset *set;
	struct mq_error e;
	enum mq_status st = mq_schedfile_parse(text, strlen(text), dir, &set,
	    &e);

	ok(st == MQ_OK, "%s: parses%s%s", what, st ? ": " : "",
	    st ? e.msg : "");
	*cnt = 0;
	return st == MQ_OK ? expand(set, cnt) : NULL;
}

static void
parse_bad(const char *text, size_t len, enum mq_status want,
    const char *msg)
{
	struct mq_schedset *v = (struct mq_schedset *)1;
	struct mq_error e;
	size_t cnt = 0;
	enum mq_status st = mq_schedfile_parse(text, len, NULL, &v, &e);

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
	release(v);
	v = parse_ok("comments", "# nothing\n\n   # here\n\t\n", NULL, &cnt);
	ok(cnt == 0, "comments only: no schedule");
	release(v);
	/* a UTF-8 byte order mark, as some editors begin a file with:
	 * passed over (before: "expected 'setting = value'" on line 1) */
	v = parse_ok("a byte order mark", "\xef\xbb\xbf[bom]\ncron = @daily\n",
	    NULL, &cnt);
	ok(v != NULL && cnt == 1 && strcmp(v[0].name, "bom") == 0 &&
	    v[0].line == 1, "a byte order mark: the schedule of line 1");
	release(v);
	BAD("[a]\ncron = @daily\n\xef\xbb\xbf[b]\ncron = @daily\n", NULL);

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
	release(v);

	v = parse_ok("escapes", "[e]\ncron = * * * * *\n"
	    "payload = a\\tb\\\\c\\n\\x00\\xfF\\0 =#x \n", NULL, &cnt);
	if (v != NULL)
		ok(v[0].payload_len == 13 && memcmp(v[0].payload,
		    "a\tb\\c\n\0\xff\0 =#x", 13) == 0,
		    "escapes decoded, '=' and '#' kept, blanks trimmed "
		    "(%zu bytes)", v[0].payload_len);
	release(v);
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
	release(v);
	{
		char text[200];
		struct mq_error e;

		snprintf(text, sizeof text, "[p]\ncron = @daily\n"
		    "payload-file = %s\n", path);
		struct mq_schedset *set;

		v = mq_schedfile_parse(text, strlen(text), "/nonexistent",
		    &set, &e) == MQ_OK ? expand(set, &cnt) : NULL;
		ok(v != NULL && cnt == 1 && v[0].payload_len == 13,
		    "payload-file absolute");
		release(v);
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
	release(v);
	len += (size_t)snprintf(text + len, cap - len, "[s1717]\n");
	parse_bad(text, len, MQ_EINVAL, "line 6001: [s1717] again (first on "
	    "line 3435)");
	free(text);
}

/* the set holds each schedule whole: its extreme values, a key of 255
 * bytes, a payload of any byte; by name; its queue */
static void
set(void)
{
	struct mq_schedset *st = mq_schedset_new();
	struct mq_schedule a, b, g;
	unsigned char bytes[300];
	uint32_t *by;
	size_t i;
	int same = 1;

	for (i = 0; i < sizeof bytes; i++)
		bytes[i] = (unsigned char)(i * 7);
	mq_schedule_defaults(&a);
	strcpy(a.name, "zeta");
	strcpy(a.expr, "30 2 * * 1-5");
	strcpy(a.zone, "Europe/Berlin");
	strcpy(a.queue, "ops");
	a.payload = bytes;
	a.payload_len = sizeof bytes;
	a.priority = MQ_PRIORITY_MIN;
	a.max_attempts = 1000000;
	a.missed = MQ_MISSED_ALL;
	a.missed_max = MQ_MISSED_MAX_LIMIT;
	a.has_key = 1;
	memset(a.key, 'k', MQ_KEY_MAX);
	a.key[MQ_KEY_MAX] = '\0';
	a.line = 4000000000u;
	b = a;
	strcpy(b.name, "alpha");
	b.payload = NULL;
	b.payload_len = 0;
	b.priority = MQ_PRIORITY_MAX;
	b.has_key = 0;
	b.key[0] = '\0';
	b.missed = MQ_MISSED_SKIP;
	b.missed_max = 1;
	b.line = 1;
	ok(st != NULL && mq_schedset_add(st, &a) == MQ_OK &&
	    mq_schedset_add(st, &b) == MQ_OK && mq_schedset_count(st) == 2,
	    "set: two schedules added");
	mq_schedset_get(st, 0, &g);
	ok(strcmp(g.name, a.name) == 0 && strcmp(g.expr, a.expr) == 0 &&
	    strcmp(g.zone, a.zone) == 0 && strcmp(g.queue, a.queue) == 0 &&
	    g.priority == MQ_PRIORITY_MIN && g.max_attempts == 1000000 &&
	    g.missed == MQ_MISSED_ALL && g.missed_max == MQ_MISSED_MAX_LIMIT &&
	    g.has_key && strcmp(g.key, a.key) == 0 && g.line == a.line &&
	    g.payload_len == sizeof bytes &&
	    memcmp(g.payload, bytes, sizeof bytes) == 0,
	    "set: the first whole, extreme values kept");
	mq_schedset_get(st, 1, &g);
	ok(strcmp(g.name, "alpha") == 0 && g.priority == MQ_PRIORITY_MAX &&
	    !g.has_key && g.key[0] == '\0' && g.missed == MQ_MISSED_SKIP &&
	    g.missed_max == 1 && g.line == 1 && g.payload != NULL &&
	    g.payload_len == 0 && strcmp(g.queue, "ops") == 0,
	    "set: the second, no key, an empty payload");
	ok(strcmp(mq_schedset_name(st, 0), "zeta") == 0 &&
	    strcmp(mq_schedset_queue(st, 1), "ops") == 0,
	    "set: a name and a queue by index");
	by = mq_schedset_by_name(st);
	ok(by != NULL && by[0] == 1 && by[1] == 0, "set: by name");
	free(by);
	mq_schedset_free(st);
	/* many, priorities of both signs: each as added, in name order */
	st = mq_schedset_new();
	for (i = 0; i < 5000; i++) {
		snprintf(a.name, sizeof a.name, "n%05zu", (i * 7919) % 5000);
		a.priority = (int)(i % 200) - 100;
		snprintf(a.queue, sizeof a.queue, "q%zu", i % 3);
		a.payload_len = i % 300;
		if (mq_schedset_add(st, &a) != MQ_OK)
			same = 0;
	}
	by = mq_schedset_by_name(st);
	for (i = 0; by && i < 5000; i++) {
		mq_schedset_get(st, i, &g);
		if (g.priority != (int)(i % 200) - 100 ||
		    g.payload_len != i % 300 ||
		    memcmp(g.payload, bytes, g.payload_len) != 0 ||
		    strcmp(mq_schedset_queue(st, i), g.queue) != 0 ||
		    g.queue[1] != (char)('0' + i % 3))
			same = 0;
		if (i > 0 && strcmp(mq_schedset_name(st, by[i - 1]),
		    mq_schedset_name(st, by[i])) >= 0)
			same = 0;
	}
	ok(by != NULL && same, "set: 5000 schedules as added, by name");
	free(by);
	mq_schedset_free(st);
}

int
main(void)
{
	good();
	payload_files();
	bad();
	many();
	set();
	ok(mq_missed_parse("once") == MQ_MISSED_ONCE &&
	    mq_missed_parse("ONCE") == -1 && mq_missed_parse(NULL) == -1 &&
	    strcmp(mq_missed_name(MQ_MISSED_ALL), "all") == 0,
	    "missed policy names");
	printf("1..%d\n", n);
	return failed != 0;
}
