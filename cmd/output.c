/*
 * output.c: writing payloads so that a shell or a JSON reader gets them
 * back byte for byte: JSON strings, base64, POSIX shell single quotes.
 */
#include <stdio.h>

#include "cmds.h"

int
utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		size_t len, k;
		unsigned cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return 0;
		i += len;
	}
	return 1;
}

void
put_json_string(const unsigned char *p, size_t n)
{
	size_t i;

	putchar('"');
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		switch (c) {
		case '"':	fputs("\\\"", stdout); break;
		case '\\':	fputs("\\\\", stdout); break;
		case '\n':	fputs("\\n", stdout); break;
		case '\r':	fputs("\\r", stdout); break;
		case '\t':	fputs("\\t", stdout); break;
		default:
			if (c < 0x20 || c == 0x7f)
				printf("\\u%04x", c);
			else
				putchar(c);
		}
	}
	putchar('"');
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
