/*
 * fuzz-parse.c: a libFuzzer target for what mq reads from its users and
 * what it writes for them: the parsers of lib/parse.c (durations,
 * receipts, table and queue names, times), of lib/cron.c (cron
 * expressions, with the next run they give) and lib/tzrule.c (POSIX TZ
 * rules, zone names), and the encoders of
 * cmd/output/output.c (UTF-8 check, JSON strings, base64, shell quotes,
 * terminal text, Prometheus label values).
 *
 * Each one is checked against a property, not only for crashes: a
 * reference written here from the documented rules must agree with what
 * the parser accepts (and with the value it finds), and every encoding
 * must decode back to the input byte for byte. A failed property aborts,
 * which libFuzzer reports as a crash and keeps the input.
 *
 * Built and run by tests/t220-fuzz.sh:
 *   clang -fsanitize=fuzzer,address,undefined -Ilib -Icmd \
 *     tests/fuzz-parse.c lib/parse.c lib/cron.c lib/cron_next.c \
 *     lib/tz.c lib/tzrule.c lib/schedfile.c cmd/output/output.c
 *
 * The encoders print to stdout. To read what they print, stdout is
 * pointed for each call at a memory stream (open_memstream): glibc keeps
 * stdout in a plain variable that a program may assign ("In the GNU C
 * Library, stdin, stdout, and stderr are normal variables which you can
 * set just like any others", glibc manual, Standard Streams).
 */
#define _DEFAULT_SOURCE		/* timegm */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "schedule.h"
#include "mq.h"
#include "output/output.h"

#ifndef __GLIBC__
#error "fuzz-parse.c assigns stdout, which needs glibc"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken property: says which, shows the input, aborts (a "crash"). */
#define CHECK(cond, what) do { \
	if (!(cond)) \
		fail(__LINE__, (what), (#cond)); \
} while (0)

static const unsigned char *cur_data;
static size_t cur_size;

static void
fail(int line, const char *what, const char *cond)
{
	size_t i;

	fprintf(stderr, "fuzz-parse.c:%d: property broken: %s (%s)\n"
	    "input (%zu bytes): \"", line, what, cond, cur_size);
	for (i = 0; i < cur_size && i < 200; i++)
		if (cur_data[i] < 0x20 || cur_data[i] >= 0x7f ||
		    cur_data[i] == '"' || cur_data[i] == '\\')
			fprintf(stderr, "\\x%02x", cur_data[i]);
		else
			fputc(cur_data[i], stderr);
	fputs(i < cur_size ? "\"...\n" : "\"\n", stderr);
	abort();
}

static int
all_of(const char *s, const char *set)
{
	return s[strspn(s, set)] == '\0';
}

/* s[0..n) holds only bytes of set (and no NUL) */
static int
all_of_n(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(set, s[i]) == NULL)
			return 0;
	return 1;
}

#define DIGITS "0123456789"
#define ALNUM_ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	DIGITS "_"

/* ---- durations ---- */

/* mq.h's limit: 100 years of 366 days. */
#define MAX_US ((uint64_t)100 * 366 * 86400 * 1000000)

/* a * b, or MAX_US + 1 if that is larger than MAX_US */
static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	return a > (MAX_US + 1) / b ? MAX_US + 1 : a * b;
}

/*
 * The duration grammar, from mq.h and mq(1): terms of digits and a unit
 * (ms, s, m, h, d); one bare number alone is seconds. Accepted when the
 * sum is at most MAX_US. Values are kept saturated at MAX_US + 1, so the
 * order of the overflow checks cannot matter.
 */
static int
ref_duration(const char *s, uint64_t *out)
{
	uint64_t total = 0;
	int terms = 0;

	if (*s == '\0')
		return 0;
	while (*s) {
		uint64_t n = 0, mult;

		if (*s < '0' || *s > '9')
			return 0;
		for (; *s >= '0' && *s <= '9'; s++)
			n = sat_mul(n, 10) + (uint64_t)(*s - '0');
		if (n > MAX_US)
			n = MAX_US + 1;
		if (s[0] == 'm' && s[1] == 's')
			mult = 1000, s += 2;
		else if (*s == 's')
			mult = 1000000, s++;
		else if (*s == 'm')
			mult = 60 * (uint64_t)1000000, s++;
		else if (*s == 'h')
			mult = 3600 * (uint64_t)1000000, s++;
		else if (*s == 'd')
			mult = 86400 * (uint64_t)1000000, s++;
		else if (*s == '\0' && terms == 0)
			mult = 1000000;
		else
			return 0;
		terms++;
		total += sat_mul(n, mult);
		if (total > MAX_US)
			total = MAX_US + 1;
	}
	*out = total;
	return total <= MAX_US;
}

static void
fuzz_duration(const char *s)
{
	int64_t us = -12345, again = -1;
	uint64_t want = 0;
	int ok = mq_parse_duration(s, &us) == MQ_OK;
	char canon[64];

	CHECK(ok == ref_duration(s, &want), "duration: accepted as the rules say");
	if (!ok) {
		CHECK(us == -12345, "duration: a refused one stores nothing");
		return;
	}
	CHECK(us >= 0 && (uint64_t)us <= MAX_US, "duration: in 0..100 years");
	CHECK((uint64_t)us == want, "duration: the value the rules give");
	CHECK(all_of(s, DIGITS "mshd"), "duration: only digits and units");
	/* every unit is whole milliseconds: "<N>ms" is a canonical form */
	CHECK(us % 1000 == 0, "duration: whole milliseconds");
	snprintf(canon, sizeof canon, "%lldms", (long long)(us / 1000));
	CHECK(mq_parse_duration(canon, &again) == MQ_OK && again == us,
	    "duration: its canonical form parses to the same value");
}

/* ---- receipts ---- */

/* "<id>.<32 lowercase hex>": id 1..2^64-1 in decimal, no leading zero */
static int
ref_receipt(const char *s)
{
	size_t nd = strspn(s, DIGITS);
	const char *t = s + nd + 1;

	if (nd == 0 || s[0] == '0' || s[nd] != '.')
		return 0;
	if (nd > 20 || (nd == 20 && strncmp(s, "18446744073709551615", 20) > 0))
		return 0;
	return strspn(t, DIGITS "abcdef") == MQ_TOKEN_LEN &&
	    t[MQ_TOKEN_LEN] == '\0';
}

static void
fuzz_receipt(const char *s)
{
	struct mq_receipt r;
	char buf[MQ_RECEIPT_SIZE];
	int ok;

	memset(&r, 0xa5, sizeof r);
	ok = mq_parse_receipt(s, &r) == MQ_OK;
	CHECK(ok == ref_receipt(s), "receipt: accepted as the rules say");
	if (!ok)
		return;
	CHECK(r.id == strtoull(s, NULL, 10), "receipt: the id");
	CHECK(strlen(r.token) == MQ_TOKEN_LEN &&
	    strcmp(r.token, strchr(s, '.') + 1) == 0, "receipt: the token");
	memset(buf, 0xa5, sizeof buf);
	mq_format_receipt(&r, buf);
	CHECK(strcmp(buf, s) == 0, "receipt: formats back to the input");
}

/* ---- names ---- */

static void
fuzz_names(const char *s)
{
	size_t n = strlen(s);
	int table = mq_valid_table(s) != 0, queue = mq_valid_queue(s) != 0;

	CHECK(table == (n >= 1 && n <= MQ_TABLE_MAX && all_of(s, ALNUM_) &&
	    !all_of(s, DIGITS)), "table name: accepted as the rules say");
	CHECK(queue == (n >= 1 && n <= MQ_QUEUE_MAX && all_of(s, ALNUM_ ".-")),
	    "queue name: accepted as the rules say");
	/* what the rules are for: nothing that ends a backticked or
	 * quoted name, or escapes in it (implied by the above, stated for
	 * the reader) */
	if (table || queue)
		CHECK(strpbrk(s, "`'\"\\") == NULL && all_of(s, ALNUM_ ".-"),
		    "name: nothing that leaves its quotes");
	if (table)
		CHECK(queue, "name: a valid table name is a valid queue name");
}

/* ---- times ---- */

/* n digits at *p as a number, *p moved past them; -1 if not digits */
static int
digits(const char **p, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

/* a real day of the Gregorian calendar, by the C library's own timegm */
static int
real_date(int y, int m, int d)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	tm.tm_hour = 12;
	if (m < 1 || m > 12 || d < 1 || d > 31 || timegm(&tm) == (time_t)-1)
		return 0;
	/* timegm normalizes: April 31 comes back as May 1 */
	return tm.tm_year == y - 1900 && tm.tm_mon == m - 1 && tm.tm_mday == d;
}

/*
 * mq.h: "@EPOCH" (at most 2^31 - 1), or "YYYY-MM-DD[ T]HH:MM[:SS[.frac]]"
 * and an optional "Z"; years 1000..9999, fractions of 1 to 6 digits,
 * seconds 0..59.
 */
static int
ref_time(const char *s)
{
	const char *p = s;
	int y, mo, d, h, mi, sec, nf;

	if (*p == '@') {
		p++;
		if (*p == '\0' || !all_of(p, DIGITS))
			return 0;
		p += strspn(p, "0");	/* leading zeros are fine */
		return strlen(p) < 10 ||
		    (strlen(p) == 10 && strcmp(p, "2147483647") <= 0);
	}
	y = digits(&p, 4);
	if (y < 1000 || *p++ != '-' || (mo = digits(&p, 2)) < 0 ||
	    *p++ != '-' || (d = digits(&p, 2)) < 0 || !real_date(y, mo, d))
		return 0;
	if (*p != ' ' && *p != 'T')
		return 0;
	p++;
	h = digits(&p, 2);
	if (h < 0 || h > 23 || *p++ != ':' || (mi = digits(&p, 2)) < 0 ||
	    mi > 59)
		return 0;
	if (*p == ':') {
		p++;
		sec = digits(&p, 2);
		if (sec < 0 || sec > 59)
			return 0;
		if (*p == '.') {
			p++;
			nf = (int)strspn(p, DIGITS);
			if (nf < 1 || nf > 6)
				return 0;
			p += nf;
		}
	}
	if (*p == 'Z')
		p++;
	return *p == '\0';
}

static void
fuzz_time(const char *s)
{
	int ok = mq_check_time(s) == MQ_OK;

	CHECK(ok == ref_time(s), "time: accepted as the rules say");
	if (ok)
		CHECK(all_of(s, DIGITS "-: T.Z@"), "time: only time characters");
}

/* ---- cron expressions, zone rules and names ---- */

/* c's fields match the UTC instant t (Vixie's day rule) */
static int
cron_matches(const struct mq_cron *c, int64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;
	int d, w;

	gmtime_r(&tt, &tm);
	d = (int)(c->dom >> tm.tm_mday & 1);
	w = c->dow >> tm.tm_wday & 1;
	return tm.tm_sec == 0 && (c->minute >> tm.tm_min & 1) &&
	    (c->hour >> tm.tm_hour & 1) && (c->month >> (tm.tm_mon + 1) & 1) &&
	    ((c->flags & (MQ_CRON_DOM_STAR | MQ_CRON_DOW_STAR)) ?
	    d && w : d || w);
}

static void
fuzz_cron(const char *s, struct mq_tz *utc)
{
	struct mq_cron c, again;
	struct mq_error e;
	char canon[MQ_CRON_FORMAT_SIZE], canon2[MQ_CRON_FORMAT_SIZE];
	int64_t t = 1767225600, r;	/* 2026-01-01 */
	int i, ok;

	memset(&c, 0xa5, sizeof c);
	memset(&e, 0, sizeof e);
	ok = mq_cron_parse(s, &c, &e) == MQ_OK;
	if (!ok) {
		CHECK(e.status == MQ_EINVAL && e.msg[0] != '\0' &&
		    strchr(e.msg, '\n') == NULL, "cron: a refusal says why");
		CHECK(c.minute == 0xa5a5a5a5a5a5a5a5ULL,
		    "cron: a refused one stores nothing");
		return;
	}
	CHECK(strlen(s) <= MQ_CRON_INPUT_MAX, "cron: not too long");
	CHECK(all_of(s, DIGITS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
	    "tuvwxyz*/,-@ \t"), "cron: only the characters of the syntax");
	CHECK(c.minute != 0 && c.minute >> 60 == 0, "cron: minutes 0-59");
	CHECK(c.hour != 0 && c.hour >> 24 == 0, "cron: hours 0-23");
	CHECK(c.dom != 0 && (c.dom & 1) == 0, "cron: days 1-31");
	CHECK(c.month != 0 && (c.month & 1) == 0 && c.month >> 13 == 0,
	    "cron: months 1-12");
	CHECK(c.dow != 0 && c.dow >> 7 == 0, "cron: weekdays 0-6");
	mq_cron_format(&c, canon);
	CHECK(strlen(canon) < MQ_CRON_FORMAT_SIZE, "cron: the canonical form fits");
	CHECK(mq_cron_parse(canon, &again, &e) == MQ_OK &&
	    memcmp(&c, &again, sizeof c) == 0,
	    "cron: the canonical form parses to the same");
	mq_cron_format(&again, canon2);
	CHECK(strcmp(canon, canon2) == 0, "cron: the canonical form is stable");
	/* accepted: it fires, at times that match it, in order */
	for (i = 0; i < 3; i++) {
		CHECK(mq_cron_next(&c, utc, t, &r) == MQ_OK,
		    "cron: an accepted expression fires");
		CHECK(r > t && cron_matches(&c, r), "cron: next() matches it");
		t = r;
	}
}

static void
fuzz_tz(const char *s)
{
	struct mq_tz *tz;
	struct mq_error e;
	struct mq_local l;
	int64_t t;

	if (mq_tz_valid_name(s))
		CHECK(s[0] != '/' && strstr(s, "//") == NULL &&
		    strcmp(s, "..") != 0 && strncmp(s, "../", 3) != 0 &&
		    strstr(s, "/../") == NULL && all_of(s, ALNUM_ "+-./") &&
		    strlen(s) <= MQ_TZ_NAME_MAX, "zone name: only safe names");
	if (mq_tz_rule(s, &tz, &e) != MQ_OK) {
		CHECK(e.msg[0] != '\0', "zone rule: a refusal says why");
		return;
	}
	for (t = -2208988800LL; t < 4102444800LL; t += 86400 * 61 + 3607) {
		mq_tz_local(tz, t, &l);
		CHECK(l.utoff > -25 * 3600 && l.utoff < 26 * 3600,
		    "zone rule: offsets under 25 hours");
		CHECK(l.month >= 1 && l.month <= 12 && l.hour >= 0 &&
		    l.hour < 24, "zone rule: a local time");
	}
	mq_tz_free(tz);
}

/* ---- schedule files ---- */

static int
all_printable(const char *s)
{
	for (; *s; s++)	/* a tab quoted from a value: the command shows it */
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 0;
	return 1;
}

static int
has_bytes(const uint8_t *p, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= n; i++)
		if (memcmp(p + i, word, w) == 0)
			return 1;
	return 0;
}

static void
fuzz_schedfile(const uint8_t *data, size_t size)
{
	struct mq_schedset *set;
	struct mq_schedule s;
	struct mq_error e;
	struct mq_cron c;
	uint32_t *by;
	size_t n, i;

	/* a payload file would be read from the fuzzer's file system */
	if (has_bytes(data, size, "payload-file"))
		return;
	if (mq_schedfile_parse((const char *)data, size, NULL, &set,
	    &e) != MQ_OK) {
		CHECK(set == NULL, "schedule file: a refused one gives "
		    "nothing");
		CHECK(e.msg[0] != '\0' && all_printable(e.msg),
		    "schedule file: a refusal says why, printably");
		return;
	}
	n = mq_schedset_count(set);
	for (i = 0; i < n; i++) {
		mq_schedset_get(set, i, &s);
		CHECK(mq_valid_queue(s.name) && mq_valid_queue(s.queue),
		    "schedule file: valid names");
		CHECK(strcmp(s.name, mq_schedset_name(set, i)) == 0 &&
		    strcmp(s.queue, mq_schedset_queue(set, i)) == 0,
		    "schedule file: the set's name and queue are its own");
		CHECK(mq_cron_parse(s.expr, &c, &e) == MQ_OK,
		    "schedule file: the expression parses again");
		CHECK(mq_tz_valid_name(s.zone), "schedule file: a zone name");
		CHECK(s.payload != NULL && s.payload_len <= size,
		    "schedule file: a payload no longer than the file");
		CHECK(!s.has_key || mq_valid_key(s.key),
		    "schedule file: a valid key");
		CHECK(s.line >= 1 && s.missed_max >= 1,
		    "schedule file: line and missed-max");
	}
	by = mq_schedset_by_name(set);
	CHECK(by != NULL, "schedule file: sorted by name");
	for (i = 1; by && i < n; i++)
		CHECK(strcmp(mq_schedset_name(set, by[i - 1]),
		    mq_schedset_name(set, by[i])) < 0,
		    "schedule file: names in order, each once");
	free(by);
	mq_schedset_free(set);
}

/* ---- output encodings ---- */

/* Well-formed UTF-8 as the Unicode Standard's table 3-7 lists it: for
 * each lead byte, the range its second byte must lie in. */
static int
ref_utf8(const unsigned char *p, size_t n)
{
	size_t i = 0, len, k;

	while (i < n) {
		unsigned char c = p[i], lo = 0x80, hi = 0xbf;

		if (c <= 0x7f) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		else
			return 0;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong 3-byte forms */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
		else if (c == 0xf0)
			lo = 0x90;	/* no overlong 4-byte forms */
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing beyond U+10FFFF */
		if (n - i < len || p[i + 1] < lo || p[i + 1] > hi)
			return 0;
		for (k = 2; k < len; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xbf)
				return 0;
		i += len;
	}
	return 1;
}

/* The length of the well-formed sequence at p[0..n) by table 3-7, 0 if
 * none starts there. */
static size_t
ref_char(const unsigned char *p, size_t n)
{
	size_t k = 1;

	while (k <= 4 && k <= n) {
		if (ref_utf8(p, k))
			return k;
		k++;
	}
	return 0;
}

/* Whether the character c[0..len) is one a terminal acts on: C0, DEL,
 * C1, U+2028..U+202E, U+2066..U+2069 (cmd/output/output.c's list). */
static int
ref_control(const unsigned char *c, size_t len)
{
	if (len == 1)
		return c[0] < 0x20 || c[0] == 0x7f;
	if (len == 2)
		return c[0] == 0xc2 && c[1] <= 0x9f;
	if (len == 3 && c[0] == 0xe2 && c[1] == 0x80)
		return c[2] >= 0xa8 && c[2] <= 0xae;
	if (len == 3 && c[0] == 0xe2 && c[1] == 0x81)
		return c[2] >= 0xa6 && c[2] <= 0xa9;
	return 0;
}

/* What fn(p, n) prints on stdout, malloc'ed, its length in *len. */
static char *
captured(void (*fn)(const unsigned char *, size_t), const unsigned char *p,
    size_t n, size_t *len)
{
	FILE *saved = stdout, *mem;
	char *buf = NULL;

	fflush(stdout);
	mem = open_memstream(&buf, len);
	if (mem == NULL) {
		perror("open_memstream");
		abort();
	}
	stdout = mem;
	fn(p, n);
	stdout = saved;
	if (ferror(mem) || fclose(mem) != 0 || buf == NULL) {
		perror("fuzz-parse: writing to memory");
		abort();
	}
	return buf;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decodes a JSON string (RFC 8259, section 7) that must fill s[0..n)
 * into out (room for n bytes); the decoded length, or -1 if s is not
 * one. \u escapes of surrogates are refused: the encoder writes none.
 */
static long
json_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i = 1, o = 0;

	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		return -1;
	while (i < n - 1) {
		unsigned char c = (unsigned char)s[i++];
		unsigned cp;
		int k, h;

		if (c == '"' || c < 0x20)
			return -1;	/* must be escaped */
		if (c != '\\') {
			out[o++] = c;
			continue;
		}
		if (i >= n - 1)
			return -1;
		switch (s[i++]) {
		case '"':	out[o++] = '"'; break;
		case '\\':	out[o++] = '\\'; break;
		case '/':	out[o++] = '/'; break;
		case 'b':	out[o++] = '\b'; break;
		case 'f':	out[o++] = '\f'; break;
		case 'n':	out[o++] = '\n'; break;
		case 'r':	out[o++] = '\r'; break;
		case 't':	out[o++] = '\t'; break;
		case 'u':
			if (n - 1 - i < 4)
				return -1;
			for (cp = 0, k = 0; k < 4; k++) {
				if ((h = hexval((unsigned char)s[i++])) < 0)
					return -1;
				cp = cp << 4 | (unsigned)h;
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				return -1;
			if (cp < 0x80) {
				out[o++] = (unsigned char)cp;
			} else if (cp < 0x800) {
				out[o++] = (unsigned char)(0xc0 | cp >> 6);
				out[o++] = (unsigned char)(0x80 | (cp & 0x3f));
			} else {
				out[o++] = (unsigned char)(0xe0 | cp >> 12);
				out[o++] = (unsigned char)(0x80 |
				    (cp >> 6 & 0x3f));
				out[o++] = (unsigned char)(0x80 | (cp & 0x3f));
			}
			break;
		default:
			return -1;
		}
	}
	return (long)o;
}

/*
 * Decodes base64 (RFC 4648, section 4, with padding) strictly: length a
 * multiple of 4, '=' only at the end, unused bits zero. The decoded
 * length, or -1.
 */
static long
base64_decode(const char *s, size_t n, unsigned char *out)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0, pad = 0;

	if (n % 4 != 0)
		return -1;
	if (n >= 1 && s[n - 1] == '=')
		pad++;
	if (n >= 2 && s[n - 2] == '=')
		pad++;
	for (i = 0; i < n; i += 4) {
		unsigned long v = 0;
		int k, used = i + 4 == n ? 4 - (int)pad : 4;

		for (k = 0; k < 4; k++) {
			const char *c = s[i + k] ? strchr(tab, s[i + k]) : NULL;

			if (k >= used) {
				if (s[i + k] != '=')
					return -1;
				v <<= 6;
			} else if (c == NULL) {
				return -1;
			} else {
				v = v << 6 | (unsigned long)(c - tab);
			}
		}
		if ((used == 2 && (v & 0xffff)) || (used == 3 && (v & 0xff)))
			return -1;	/* non-zero bits after the data */
		out[o++] = (unsigned char)(v >> 16);
		if (used >= 3)
			out[o++] = (unsigned char)(v >> 8 & 0xff);
		if (used == 4)
			out[o++] = (unsigned char)(v & 0xff);
	}
	return (long)o;
}

/*
 * Decodes one POSIX shell word made only of '...' strings and \'
 * (XCU 2.2.2, 2.2.1): as a shell reads it, with nothing it would split,
 * expand or end a command at. The decoded length, or -1.
 */
static long
shell_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;

	if (n == 0)
		return -1;
	while (i < n) {
		if (s[i] == '\'') {
			for (i++; i < n && s[i] != '\''; i++)
				out[o++] = (unsigned char)s[i];
			if (i == n)
				return -1;	/* unterminated */
			i++;
		} else if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\'') {
			out[o++] = '\'';
			i += 2;
		} else {
			return -1;	/* anything unquoted */
		}
	}
	return (long)o;
}

/* Decodes a shell word that is either a name (A-Z a-z 0-9 _ . -, which
 * no shell splits, expands or ends a command at) or shell_decode's. */
static long
shell_word_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i;

	if (n && all_of_n(s, n, ALNUM_ ".-")) {
		for (i = 0; i < n; i++)
			out[i] = (unsigned char)s[i];
		return (long)n;
	}
	return shell_decode(s, n, out);
}

/* Decodes out[0..len) with fn into a buffer (a decoding is never longer
 * than its text) and compares with p[0..n); -1 if it does not decode. */
static int
decodes_to(long (*fn)(const char *, size_t, unsigned char *),
    const char *out, size_t len, const unsigned char *p, size_t n)
{
	unsigned char *dec = malloc(len + 1);
	long dl;
	int same;

	if (dec == NULL)
		abort();
	dl = fn(out, len, dec);
	same = dl >= 0 && (size_t)dl == n && memcmp(dec, p, n) == 0;
	free(dec);
	return dl < 0 ? -1 : same;
}

/* Decodes terminal text (put_text): \\ is a backslash, \xHH a byte,
 * any other backslash is not put_text's. */
static long
text_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;
	int h, l;

	while (i < n) {
		if (s[i] != '\\') {
			out[o++] = (unsigned char)s[i++];
		} else if (i + 1 < n && s[i + 1] == '\\') {
			out[o++] = '\\';
			i += 2;
		} else if (i + 3 < n && s[i + 1] == 'x' &&
		    (h = hexval((unsigned char)s[i + 2])) >= 0 &&
		    (l = hexval((unsigned char)s[i + 3])) >= 0) {
			out[o++] = (unsigned char)(h << 4 | l);
			i += 4;
		} else {
			return -1;
		}
	}
	return (long)o;
}

/* Decodes a Prometheus label value's inside: \\, \" and \n only,
 * no raw quote or newline. */
static long
prom_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		if (s[i] == '"' || s[i] == '\n')
			return -1;
		if (s[i] != '\\') {
			out[o++] = (unsigned char)s[i++];
			continue;
		}
		if (i + 1 >= n)
			return -1;
		if (s[i + 1] == '\\' || s[i + 1] == '"')
			out[o++] = (unsigned char)s[i + 1];
		else if (s[i + 1] == 'n')
			out[o++] = '\n';
		else
			return -1;
		i += 2;
	}
	return (long)o;
}

/* Whether q[0..n) holds a character a terminal acts on (or bytes that
 * are not UTF-8), newlines excepted if nl_ok. */
static int
has_control(const unsigned char *q, size_t n, int nl_ok)
{
	size_t i, len;

	for (i = 0; i < n; i += len) {
		if ((len = ref_char(q + i, n - i)) == 0)
			return 1;
		if (ref_control(q + i, len) && !(nl_ok && q[i] == '\n'))
			return 1;
	}
	return 0;
}

static size_t text_cols;

static void
text_to_stdout(const unsigned char *p, size_t n)
{
	text_cols = put_text(stdout, p, n);
}

/* p with each byte that starts no well-formed sequence replaced by
 * U+FFFD: what a JSON string of p holds. Malloc'ed, length in *len. */
static unsigned char *
ref_replaced(const unsigned char *p, size_t n, size_t *len)
{
	unsigned char *r = malloc(3 * n + 1);
	size_t i, k, o = 0;

	if (r == NULL)
		abort();
	for (i = 0; i < n; ) {
		if ((k = ref_char(p + i, n - i)) == 0) {
			memcpy(r + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(r + o, p + i, k);
			o += k;
			i += k;
		}
	}
	*len = o;
	return r;
}

static void
fuzz_text(const unsigned char *p, size_t n)
{
	unsigned char *dec;
	size_t len, i, rl, text_len;
	long dl;
	char *out, *text;
	int r;

	/* terminal text: nothing a terminal acts on, and exact */
	out = captured(text_to_stdout, p, n, &len);
	CHECK(!has_control((unsigned char *)out, len, 0),
	    "text: no control character, UTF-8 only");
	r = decodes_to(text_decode, out, len, p, n);
	CHECK(r == 1, "text: decodes to the input");
	CHECK(text_cols == text_width(p, n), "text: width as printed");
	CHECK(text_cols <= len, "text: no more columns than bytes");
	text = out;
	text_len = len;

	/* Prometheus: one line, escapes the format knows; decodes to the
	 * terminal text, which decodes to the input: two inputs never
	 * share a label value */
	out = captured(put_prom_label, p, n, &len);
	if ((dec = malloc(len + 1)) == NULL)
		abort();
	dl = prom_decode(out, len, dec);
	CHECK(dl >= 0, "prometheus: a label value");
	CHECK(!has_control(dec, (size_t)dl, 0),
	    "prometheus: UTF-8 without control characters");
	CHECK((size_t)dl == text_len && memcmp(dec, text, text_len) == 0,
	    "prometheus: the value as terminal text shows it");
	free(dec);
	free(out);
	free(text);

	/* JSON of bytes that are not all UTF-8: U+FFFD per stray byte */
	out = captured(put_json_string, p, n, &len);
	dec = ref_replaced(p, n, &rl);
	r = decodes_to(json_decode, out, len, dec, rl);
	CHECK(r == 1, "json: U+FFFD for each byte that is not UTF-8");
	CHECK(utf8_valid((unsigned char *)out, len), "json: always UTF-8");
	for (i = 0; i < len; i++)
		CHECK((unsigned char)out[i] >= 0x20 &&
		    (unsigned char)out[i] != 0x7f, "json: no raw control byte");
	free(dec);
	free(out);
}

static void
fuzz_output(const unsigned char *p, size_t n)
{
	char *out;
	size_t len;
	int valid = utf8_valid(p, n) != 0, r;

	CHECK(valid == ref_utf8(p, n), "utf8_valid: agrees with table 3-7");

	out = captured(put_json_string, p, n, &len);
	r = decodes_to(json_decode, out, len, p, n);
	CHECK(r >= 0, "json: a JSON string");
	if (valid)
		CHECK(r == 1, "json: decodes to valid UTF-8 input");
	free(out);
	fuzz_text(p, n);

	out = captured(put_base64, p, n, &len);
	CHECK(len == (n + 2) / 3 * 4, "base64: 4 characters per 3 bytes");
	r = decodes_to(base64_decode, out, len, p, n);
	CHECK(r >= 0, "base64: strict RFC 4648");
	CHECK(r == 1, "base64: decodes to the input");
	free(out);

	out = captured(put_shell_quoted, p, n, &len);
	r = decodes_to(shell_decode, out, len, p, n);
	CHECK(r >= 0, "shell: one quoted word");
	CHECK(r == 1, "shell: decodes to the input");
	free(out);

	out = captured(put_shell_word, p, n, &len);
	r = decodes_to(shell_word_decode, out, len, p, n);
	CHECK(r >= 0, "shell word: a name or one quoted word");
	CHECK(r == 1, "shell word: decodes to the input");
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t len = nul ? (size_t)(nul - data) : size;
	/* exactly len + 1 bytes: ASan sees any read past the NUL */
	char *s = malloc(len + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, len);
	s[len] = '\0';
	cur_data = data;
	cur_size = size;

	/* the parsers take C strings: the input up to its first NUL */
	fuzz_duration(s);
	fuzz_receipt(s);
	fuzz_names(s);
	fuzz_time(s);
	{
		static struct mq_tz *utc;

		if (utc == NULL && mq_tz_load(NULL, NULL, &utc, NULL) != MQ_OK)
			abort();
		fuzz_cron(s, utc);
	}
	fuzz_tz(s);
	fuzz_schedfile(data, size);

	/* the encoders take bytes: all of them, NULs too */
	fuzz_output(data, size);

	free(s);
	return 0;
}
