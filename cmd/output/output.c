/*
 * output.c: the one home of mq's output encodings. Payloads go out so
 * that a shell or a JSON reader gets them back byte for byte (JSON
 * strings, base64, POSIX shell single quotes); text from the table or the
 * server (queue names, server messages) goes out so that it can neither
 * drive a terminal nor break a line of a machine format (terminal text,
 * Prometheus label values, JSON strings). Any byte may come from the
 * table: other programs write it.
 */
#include <stdio.h>
#include <string.h>

#include "output/output.h"

const char *
shown(const char *s)
{
	return shown_bytes(s, strlen(s));
}

const char *
shown_bytes(const void *s, size_t n)
{
	static char buf[80 + TEXT_NEXT_MAX + 4];
	const unsigned char *p = s;
	size_t i = 0, o = 0, len;

	while (i < n && o < 80) {
		i += text_next(p + i, n - i, buf + o, &len);
		o += len;
	}
	if (i < n)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = '\0';
	return buf;
}

/* The length of the well-formed UTF-8 sequence at p[0..n) (1 to 4, its
 * code point in *cp), or 0 if p[0] does not start one. */
static size_t
utf8_char(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned char c = p[0];
	size_t len, k;
	unsigned v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[k] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return len;
}

/* Code points a terminal acts on rather than shows: C0 and C1 controls,
 * DEL, and the line separators and bidirectional overrides that make a
 * line look other than it is. */
static int
controls_terminal(unsigned cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int
utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0, len;
	unsigned cp;

	for (i = 0; i < n; i += len)
		if ((len = utf8_char(p + i, n - i, &cp)) == 0)
			return 0;
	return 1;
}

size_t
text_next(const unsigned char *p, size_t n, char *out, size_t *outlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned cp;
	size_t len = utf8_char(p, n, &cp), k, o = 0;

	if (len == 1 && cp == '\\') {
		out[o++] = '\\';
		out[o++] = '\\';
	} else if (len && !controls_terminal(cp)) {
		for (k = 0; k < len; k++)
			out[o++] = (char)p[k];
	} else {
		/* each byte of it, or the one byte that is not UTF-8 */
		if (len == 0)
			len = 1;
		for (k = 0; k < len; k++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[k] >> 4];
			out[o++] = hex[p[k] & 15];
		}
	}
	*outlen = o;
	return len;
}

/* The columns a terminal gives code point cp (wcwidth's, for the
 * ranges that matter, whatever the locale): 0 for combining marks and
 * zero-width characters, 2 for East Asian wide and fullwidth ones and
 * emoji, 1 for the rest. */
static size_t
cp_width(unsigned cp)
{
	static const unsigned zero[][2] = { { 0x300, 0x36f },
	    { 0x483, 0x489 }, { 0x591, 0x5bd }, { 0x610, 0x61a },
	    { 0x64b, 0x65f }, { 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff },
	    { 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
	    { 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff }, { 0xe0100, 0xe01ef } };
	static const unsigned wide[][2] = { { 0x1100, 0x115f },
	    { 0x231a, 0x231b }, { 0x2329, 0x232a }, { 0x23e9, 0x23ec },
	    { 0x25fd, 0x25fe }, { 0x2614, 0x2615 }, { 0x2e80, 0x303e },
	    { 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff },
	    { 0xa000, 0xa4cf }, { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 },
	    { 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f },
	    { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x16fe0, 0x18aff },
	    { 0x1b000, 0x1b2ff }, { 0x1f300, 0x1f64f }, { 0x1f680, 0x1f6ff },
	    { 0x1f900, 0x1f9ff }, { 0x1fa70, 0x1faff }, { 0x20000, 0x2fffd },
	    { 0x30000, 0x3fffd } };
	size_t i;

	if (cp < 0x300)
		return 1;
	for (i = 0; i < sizeof zero / sizeof zero[0]; i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (i = 0; i < sizeof wide / sizeof wide[0]; i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

size_t
shown_fit(const char *s, size_t n, size_t max, size_t *width)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, w = 0, len, cw;
	unsigned cp;

	while (i < n) {
		if ((len = utf8_char(p + i, n - i, &cp)) == 0) {
			len = 1;	/* not UTF-8: a byte, a column */
			cw = 1;
		} else {
			cw = cp_width(cp);
		}
		if (max && w + cw > max)
			break;
		w += cw;
		i += len;
	}
	if (width)
		*width = w;
	return i;
}

size_t
shown_width(const char *s, size_t n)
{
	size_t w;

	(void)shown_fit(s, n, 0, &w);
	return w;
}

/* The columns the shown form of out[0..n) takes. */
static size_t
columns(const char *out, size_t n)
{
	return shown_width(out, n);
}

size_t
put_text(FILE *f, const unsigned char *p, size_t n)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o, w = 0;

	for (i = 0; i < n; ) {
		i += text_next(p + i, n - i, out, &o);
		fwrite(out, 1, o, f);
		w += columns(out, o);
	}
	return w;
}

void
put_text_line(const char *label, const void *p, size_t n)
{
	printf("%s: ", label);
	put_text(stdout, (const unsigned char *)p, n);
	putchar('\n');
}

void
put_when(const char *iso, int64_t us)
{
	char d[DURATION_MAX];

	fmt_duration(d, sizeof d, us < 0 ? -us : us);
	printf("%s (%s%s%s)", iso, us < 0 ? "" : "in ", d,
	    us < 0 ? " ago" : "");
}

void
put_when_line(const char *label, const char *iso, int64_t us)
{
	printf("%s: ", label);
	put_when(iso, us);
	putchar('\n');
}

size_t
text_width(const unsigned char *p, size_t n)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o, w = 0;

	for (i = 0; i < n; ) {
		i += text_next(p + i, n - i, out, &o);
		w += columns(out, o);
	}
	return w;
}

void
put_json_string(const unsigned char *p, size_t n)
{
	size_t i, len;
	unsigned cp;

	putchar('"');
	for (i = 0; i < n; i += len) {
		len = utf8_char(p + i, n - i, &cp);
		if (len == 0) {
			/* not UTF-8: the replacement character, per byte */
			fputs("\\ufffd", stdout);
			len = 1;
			continue;
		}
		switch (cp) {
		case '"':	fputs("\\\"", stdout); break;
		case '\\':	fputs("\\\\", stdout); break;
		case '\n':	fputs("\\n", stdout); break;
		case '\r':	fputs("\\r", stdout); break;
		case '\t':	fputs("\\t", stdout); break;
		default:
			if (controls_terminal(cp))
				printf("\\u%04x", cp);
			else
				fwrite(p + i, 1, len, stdout);
		}
	}
	putchar('"');
}

void
put_prom_label(const unsigned char *p, size_t n)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o, k;

	/* the text as the human table shows it (a backslash doubled, a
	 * control character or a byte not UTF-8 as \xHH: no newline is
	 * left), then escaped as the format asks: one value per name */
	for (i = 0; i < n; ) {
		i += text_next(p + i, n - i, out, &o);
		for (k = 0; k < o; k++) {
			if (out[k] == '\\' || out[k] == '"')
				putchar('\\');
			putchar(out[k]);
		}
	}
}

void
put_base64(const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		putchar(tab[p[i] >> 2]);
		putchar(tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)]);
		putchar(tab[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)]);
		putchar(tab[p[i + 2] & 63]);
	}
	if (n - i == 1) {
		putchar(tab[p[i] >> 2]);
		putchar(tab[(p[i] & 3) << 4]);
		fputs("==", stdout);
	} else if (n - i == 2) {
		putchar(tab[p[i] >> 2]);
		putchar(tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)]);
		putchar(tab[(p[i + 1] & 15) << 2]);
		putchar('=');
	}
}

void
put_shell_quoted(const unsigned char *p, size_t n)
{
	size_t i;

	/* inside '...' only the quote itself is special: close, escape it,
	 * reopen */
	putchar('\'');
	for (i = 0; i < n; i++) {
		if (p[i] == '\'')
			fputs("'\\''", stdout);
		else
			putchar(p[i]);
	}
	putchar('\'');
}

void
put_shell_word(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || p[i] == '_' ||
		    p[i] == '.' || p[i] == '-'))
			break;
	if (n && i == n)
		fwrite(p, 1, n, stdout);	/* a queue name as mq writes one */
	else
		put_shell_quoted(p, n);
}

void
put_json_payload(const unsigned char *p, size_t n)
{
	if (utf8_valid(p, n)) {
		fputs("\"payload\":", stdout);
		put_json_string(p, n);
	} else {
		fputs("\"payload_base64\":\"", stdout);
		put_base64(p, n);
		putchar('"');
	}
}
