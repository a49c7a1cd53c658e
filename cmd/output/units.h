/*
 * units.h: human units for tables and messages (util/units.c): no database,
 * no stdio, so that a unit test links it alone.
 */
#ifndef MQ_UNITS_H
#define MQ_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Longest text fmt_duration() writes, NUL included. */
#define DURATION_MAX 24

/* us as people read a duration, two units at most, truncated (never
 * rounded up): "850ms" under a second, "42s", "3m07s", "2h05m", "3d4h";
 * "-" if negative (unknown). Writes at most size bytes; returns buf. */
const char *fmt_duration(char *buf, size_t size, int64_t us);

/* Longest text fmt_limit_rate() writes, NUL included. */
#define LIMIT_RATE_MAX 48

/* A rate limit (mq-limit(1)) as mq limit and mq stats show it: n
 * claims per window of us, "10/1s", "2/1m00s", its window exact: in
 * fmt_duration's units where they say it whole, else in ms ("10/1500ms"),
 * else in µs written "us"; "-" for no limit (n or us 0). Returns buf. */
const char *fmt_limit_rate(char *buf, size_t size, uint32_t n, uint64_t us);

#endif
