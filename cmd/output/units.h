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

#endif
