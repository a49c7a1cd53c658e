/*
 * parse.c: the checks on everything a user types that the library takes:
 * table and queue names, job keys, durations, receipts, times. Nothing
 * here touches the server; a name that passes is safe inside backticks
 * (a key is never SQL text: it is bound).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Largest duration: 100 years, far beyond any sane lease or delay and far
 * below what DATETIME arithmetic on the server can overflow. */
#define MAX_DURATION_US ((int64_t)100 * 366 * 86400 * 1000000)

static int
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int
is_alnum_(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    is_digit(ch) || ch == '_';
}

static int
is_hex(int ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'f');
}

int
mq_valid_table(const char *s)
{
	size_t n;
	int digits_only = 1;

	if (s == NULL)
		return 0;
	for (n = 0; s[n]; n++) {
		if (!is_alnum_((unsigned char)s[n]))
			return 0;
		if (!is_digit((unsigned char)s[n]))
			digits_only = 0;
	}
	/* an all-digit name would need quoting everywhere; refuse it */
	return n >= 1 && n <= MQ_TABLE_MAX && !digits_only;
}

int
mq_valid_queue(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	for (n = 0; s[n]; n++) {
		unsigned char ch = (unsigned char)s[n];
		if (!is_alnum_(ch) && ch != '.' && ch != '-')
			return 0;
	}
	return n >= 1 && n <= MQ_QUEUE_MAX;
}

int
mq__padcmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	while (*x || *y) {
		/* past its end, the shorter goes on as blanks */
		int cx = *x ? *x : ' ', cy = *y ? *y : ' ';

		if (cx != cy)
			return cx - cy;
		x += *x != 0;
		y += *y != 0;
	}
	return 0;
}

uint64_t
mq__window_us(uint64_t us)
{
	return us > (uint64_t)MAX_DURATION_US ? (uint64_t)MAX_DURATION_US : us;
}

int
mq__padeq(const char *a, size_t alen, const char *b, size_t blen)
{
	while (alen && a[alen - 1] == ' ')
		alen--;
	while (blen && b[blen - 1] == ' ')
		blen--;
	return alen == blen && memcmp(a, b, alen) == 0;
}

int
mq_valid_key(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	for (n = 0; s[n]; n++) {
		unsigned char ch = (unsigned char)s[n];
		if (ch < 0x20 || ch == 0x7f || n == MQ_KEY_MAX)
			return 0;
	}
	return n >= 1;
}

size_t
mq__queue_list(const char *s, char names[][MQ_QUEUE_MAX + 1])
{
	size_t n = 0, len, i;
	const char *end;

	if (s == NULL)
		return 0;
	for (;; s = end + 1) {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		if (n == MQ_QUEUES_MAX || len < 1 || len > MQ_QUEUE_MAX)
			return 0;
		memcpy(names[n], s, len);
		names[n][len] = '\0';
		if (!mq_valid_queue(names[n]))
			return 0;
		for (i = 0; i < n; i++)	/* a queue listed twice is a typo */
			if (strcmp(names[i], names[n]) == 0)
				return 0;
		n++;
		if (end == NULL)
			return n;
	}
}

int
mq_valid_queue_list(const char *s)
{
	char names[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];

	return mq__queue_list(s, names) > 0;
}

/* Parses an unsigned decimal prefix; NULL on overflow or no digits. */
static const char *
parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;

	if (!is_digit((unsigned char)*p))
		return NULL;
	for (; is_digit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return NULL;
		x = x * 10 + d;
	}
	*v = x;
	return p;
}


enum mq_status
mq_parse_duration(const char *s, int64_t *usec)
{
	static const struct {
		const char *name;
		uint64_t us;
	} units[] = {
		{"ms", 1000}, {"s", 1000000}, {"m", 60000000},
		{"h", 3600000000ULL}, {"d", 86400000000ULL},
	};
	uint64_t total = 0;
	const char *p = s;
	int terms = 0;

	if (s == NULL || *s == '\0')
		return MQ_EINVAL;
	while (*p) {
		uint64_t n, mult = 1000000;
		size_t i, best = 0;
		const char *q = parse_u64(p, &n);

		if (q == NULL)
			return MQ_EINVAL;
		p = q;
		if (*p) {
			mult = 0;
			/* longest unit name that matches ("ms" over "m") */
			for (i = 0; i < sizeof units / sizeof units[0]; i++) {
				size_t l = strlen(units[i].name);
				if (strncmp(p, units[i].name, l) == 0 &&
				    l > best) {
					best = l;
					mult = units[i].us;
				}
			}
			if (mult == 0)
				return MQ_EINVAL;
			p += best;
		} else if (terms != 0) {
			return MQ_EINVAL;	/* "1h30" is ambiguous */
		}
		terms++;
		if (n > (uint64_t)MAX_DURATION_US / mult)
			return MQ_EINVAL;
		total += n * mult;
		if (total > (uint64_t)MAX_DURATION_US)
			return MQ_EINVAL;
	}
	*usec = (int64_t)total;
	return MQ_OK;
}

enum mq_status
mq_parse_receipt(const char *s, struct mq_receipt *r)
{
	uint64_t id;
	const char *p;
	size_t i;

	if (s == NULL || *s == '0')
		return MQ_EINVAL;	/* ids start at 1, no leading zeros */
	p = parse_u64(s, &id);
	if (p == NULL || *p != '.')
		return MQ_EINVAL;
	p++;
	for (i = 0; i < MQ_TOKEN_LEN; i++)
		if (!is_hex((unsigned char)p[i]))
			return MQ_EINVAL;
	if (p[MQ_TOKEN_LEN] != '\0')
		return MQ_EINVAL;
	r->id = id;
	memcpy(r->token, p, MQ_TOKEN_LEN);
	r->token[MQ_TOKEN_LEN] = '\0';
	return MQ_OK;
}

void
mq_format_receipt(const struct mq_receipt *r, char *buf)
{
	snprintf(buf, MQ_RECEIPT_SIZE, "%llu.%s", (unsigned long long)r->id,
	    r->token);
}

/* Checks n digits at p and that their value lies in [lo, hi]. */
static int
field(const char **p, int n, int lo, int hi)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)(*p)[i]))
			return 0;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v >= lo && v <= hi;
}

static int
days_in_month(int y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

enum mq_status
mq_check_time(const char *s)
{
	const char *p = s;
	uint64_t epoch;
	int i, y, m;

	if (s == NULL)
		return MQ_EINVAL;
	if (*p == '@') {
		p = parse_u64(p + 1, &epoch);
		/* FROM_UNIXTIME's range ends in 2038 on older servers */
		return p && *p == '\0' && epoch <= 2147483647ULL ?
		    MQ_OK : MQ_EINVAL;
	}
	if (!field(&p, 4, 1000, 9999) || *p++ != '-' ||
	    !field(&p, 2, 1, 12) || *p++ != '-')
		return MQ_EINVAL;
	y = atoi(s);
	m = atoi(s + 5);
	if (!field(&p, 2, 1, days_in_month(y, m)))
		return MQ_EINVAL;
	if (*p != ' ' && *p != 'T')
		return MQ_EINVAL;
	p++;
	if (!field(&p, 2, 0, 23) || *p++ != ':' || !field(&p, 2, 0, 59))
		return MQ_EINVAL;
	if (*p == ':') {
		p++;
		if (!field(&p, 2, 0, 59))
			return MQ_EINVAL;
		if (*p == '.') {
			p++;
			for (i = 0; i < 6 && is_digit((unsigned char)*p); i++)
				p++;
			if (i == 0)
				return MQ_EINVAL;
		}
	}
	/* the last instant, 9999-12-31 23:59:59.999999, is the due time of
	 * the jobs that wait for parents (MQ_SQL_WAITING): a job due then
	 * would be counted, listed and explained as one of them */
	if (strncmp(s, "9999-12-31", 10) == 0 && strncmp(s + 11, "23:59:59.999999",
	    15) == 0 && (s[26] == '\0' || s[26] == 'Z'))
		return MQ_EINVAL;
	if (*p == 'Z')
		p++;
	return *p == '\0' ? MQ_OK : MQ_EINVAL;
}

char *
mq__like_substring(const char *s, size_t n, unsigned long *len)
{
	char *p = malloc(2 * n + 3), *o = p;
	size_t i;

	if (p == NULL)
		return NULL;
	*o++ = '%';
	for (i = 0; i < n; i++) {
		if (s[i] == '%' || s[i] == '_' || s[i] == '!')
			*o++ = '!';
		*o++ = s[i];
	}
	*o++ = '%';
	*len = (unsigned long)(o - p);
	return p;
}
