/*
 * parse.h: the parsers' internal helpers, apart from internal.h so that
 * parse.c builds without the client library (tests/t220-fuzz.sh).
 */
#ifndef MQ_PARSE_H
#define MQ_PARSE_H

#include "mq.h"

/* Splits a preference list (mq_valid_queue_list) into names; returns
 * how many, 0 if it is not valid. */
size_t mq__queue_list(const char *s, char names[][MQ_QUEUE_MAX + 1]);

/* s[0..n) as a LIKE pattern that matches it as a substring, with '!'
 * as the escape (MQ_SQL_ERROR_LIKE): % and _ (and !) are plain
 * characters. malloc'ed, its length in *len; NULL if out of memory. */
char *mq__like_substring(const char *s, size_t n, unsigned long *len);

/* Compares two names as the schema's ascii_bin columns do (PAD SPACE:
 * trailing blanks do not count), so that names the server sorted and
 * matched merge in C the same way. */
int mq__padcmp(const char *a, const char *b);
/* Whether a[0..alen) and b[0..blen) are one name to those columns (the
 * bytes may hold NUL: a name another program wrote). */
int mq__padeq(const char *a, size_t alen, const char *b, size_t blen);
/* A rate's window as a row gives it, at most the longest duration mq
 * takes (100 years): a longer one, written by SQL, would take the
 * server's date arithmetic out of range and count no claim in it (the
 * limit off); capped, it holds. */
uint64_t mq__window_us(uint64_t us);

#endif
