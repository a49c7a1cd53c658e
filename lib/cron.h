/*
 * cron.h: calendar schedules (issue 33), the engine under mq's cron
 * jobs: 5-field cron expressions (cron.c), time zones read from the
 * system's zone database without touching TZ or tzset (tz.c,
 * tzrule.c), and the next run of an expression in a zone by the
 * daylight-saving rules cron users know (cron_next.c). No server, no
 * global state: every function is thread-safe; a struct mq_tz may be
 * shared by threads once loaded. The rules, with worked examples, are
 * in doc/cron.md.
 *
 * Times are whole seconds since 1970-01-01 UTC (Unix time, no leap
 * seconds) in an int64_t. Runs fall on whole local minutes, so a
 * caller holding microseconds passes floor(us / 1000000): the first
 * run strictly after that second is strictly after the microsecond.
 *
 * Errors: a function that can fail returns an mq_status; those taking
 * a struct mq_error fill its status and msg (one line, no trailing
 * period, the user's text quoted and never longer than it was typed)
 * and leave db_errno 0 and sqlstate "". The library prints nothing.
 */
#ifndef MQ_CRON_H
#define MQ_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "mq.h"

/* ASCII classes for the parsers of expressions and TZ rules, whatever
 * the locale (cron.c, tzrule.c). */
static inline int
mq__ascii_alpha(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static inline int
mq__ascii_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/* ---- expressions (cron.c) ---- */

/** Longest expression accepted, in bytes. */
#define MQ_CRON_INPUT_MAX 512
/** A buffer that holds any canonical form (mq_cron_format), its NUL too. */
#define MQ_CRON_FORMAT_SIZE 400

/** Day-of-month, day-of-week fields written starting with '*'. */
#define MQ_CRON_DOM_STAR 1
#define MQ_CRON_DOW_STAR 2

/**
 * A parsed expression: one bit per value that fires. Plain data, may
 * be copied; fill it only with mq_cron_parse.
 */
struct mq_cron {
	uint64_t minute;	/* bits 0..59 */
	uint32_t hour;		/* bits 0..23 */
	uint32_t dom;		/* bits 1..31 */
	uint16_t month;		/* bits 1..12 */
	uint8_t dow;		/* bits 0..6, Sunday 0 (7 is folded into 0) */
	uint8_t flags;		/* MQ_CRON_DOM_STAR, MQ_CRON_DOW_STAR */
};

/**
 * Parses a cron expression: five fields (minute 0-59, hour 0-23,
 * day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-7 or
 * SUN-SAT, 0 and 7 Sunday) separated by blanks (spaces, tabs), each a
 * list of '*', N, N-M, with an optional /STEP (N/STEP is N-max/STEP);
 * or one of @yearly @annually @monthly @weekly @daily @midnight
 * @hourly. Names and macros are case-insensitive. Blanks around the
 * expression are allowed. When both day fields are restricted (neither
 * starts with '*') a day fires if either matches, otherwise if both do
 * (Vixie cron). MQ_OK and *c filled; or MQ_EINVAL, *c untouched and
 * err->msg saying what is wrong and where ("column 4: hour: 24 is out
 * of range 0-23"): every field and value is checked, and an
 * expression that can never fire ("0 0 30 2 *") is refused as such.
 * s may be NULL (refused).
 */
enum mq_status mq_cron_parse(const char *s, struct mq_cron *c,
    struct mq_error *err);

/**
 * Writes the canonical form of c into buf (MQ_CRON_FORMAT_SIZE bytes):
 * five fields, numbers only, a star for a full field, a star with a
 * step where one gives 3 values or more, a star (or star and step) in a
 * day field exactly when it was written starting with '*', runs of
 * three or more values as ranges (doc/cron.md). It parses back to the same struct,
 * and two expressions that fire alike at the same times in every zone
 * have the same canonical form (for storing and comparing). Returns
 * its length.
 */
size_t mq_cron_format(const struct mq_cron *c, char *buf);

/**
 * Nonzero if c fires in every hour of the day (its hour field covers
 * 0-23): its runs are measured in real time when clocks change (every
 * instant whose local time matches, both passes of a repeated hour,
 * nothing for a skipped one). Zero: its runs are fixed local times
 * (once each; a skipped one runs at the end of the gap). doc/cron.md.
 */
int mq_cron_every_hour(const struct mq_cron *c);

/* ---- time zones (tz.c, tzrule.c) ---- */

/** Longest zone name. */
#define MQ_TZ_NAME_MAX 255

/** A loaded zone: opaque, immutable once loaded. */
struct mq_tz;

/**
 * Nonzero if s is a zone name mq looks up: 1 to MQ_TZ_NAME_MAX bytes
 * of A-Z a-z 0-9 and _ + - . /, not starting with '/', no empty, "."
 * or ".." component, and not localtime, posixrules or Factory (the
 * host's own choices, not places). It says nothing of whether the zone
 * exists.
 */
int mq_tz_valid_name(const char *s);

/**
 * Loads zone name from the zone database: the TZif file dir/name (v1,
 * or the 64-bit data of v2+ and its TZ string footer for instants
 * after the last transition). dir NULL: $TZDIR if set and not empty,
 * else /usr/share/zoneinfo. name NULL or "UTC": UTC, built in (no file
 * read). MQ_OK and *tz (free it with mq_tz_free); MQ_EINVAL for a bad
 * or unknown name, a file that is not a valid TZif file, or one with
 * leap seconds ("right/" zones); MQ_EIO if it cannot be read;
 * MQ_ENOMEM. err says which, with the name.
 */
enum mq_status mq_tz_load(const char *name, const char *dir,
    struct mq_tz **tz, struct mq_error *err);

/**
 * A zone from a POSIX TZ string alone ("CET-1CEST,M3.5.0,M10.5.0/3"),
 * with RFC 8536's extensions (transition times from -167 to 167
 * hours): the form of a TZif footer. For tests and for zones given
 * as rules. Same returns as mq_tz_load.
 */
enum mq_status mq_tz_rule(const char *rule, struct mq_tz **tz,
    struct mq_error *err);

/** Frees a zone; NULL is fine. */
void mq_tz_free(struct mq_tz *tz);

/** The name the zone was loaded by ("UTC" for the built-in one). */
const char *mq_tz_name(const struct mq_tz *tz);

/** Local time of an instant in a zone. */
struct mq_local {
	int64_t year;
	int month;		/* 1..12 */
	int day;		/* 1..31 */
	int hour, minute, second;
	int wday;		/* 0 Sunday .. 6 */
	int32_t utoff;		/* seconds east of UTC */
	int isdst;
	char abbr[16];		/* "CEST", "+1030" */
};

/** The local time of instant t in tz (t within MQ_CRON_TIME_MIN/MAX). */
void mq_tz_local(const struct mq_tz *tz, int64_t t, struct mq_local *l);

/* ---- next runs (cron_next.c) ---- */

/** The instants next() takes and gives: 1800-01-01 .. 9999-12-31 UTC. */
#define MQ_CRON_TIME_MIN (-5364662400LL)
#define MQ_CRON_TIME_MAX 253402300799LL

/**
 * The first run of c in tz strictly after instant t, in *next: the
 * first instant whose local time matches, by these rules when the
 * zone's offset changes (doc/cron.md):
 * - mq_cron_every_hour(c): every real instant whose local time
 *   matches: a repeated local time runs twice, a skipped one not at all
 *   (nothing is late: the neighbouring runs are there);
 * - otherwise (fixed local times): a repeated local time runs once, at
 *   its first occurrence; if the local times a gap skips hold one or
 *   more matches, one run happens at the first instant after the gap
 *   (the transition itself).
 * The set of runs does not depend on t: calling next() again from each
 * result lists them all, once each. MQ_OK; MQ_EINVAL if t is outside
 * MQ_CRON_TIME_MIN..MQ_CRON_TIME_MAX; MQ_EMPTY if no run falls in
 * (t, MQ_CRON_TIME_MAX] (the search is bounded: 401 years of local
 * days, more than the 400-year Gregorian cycle every expression
 * mq_cron_parse accepts repeats in).
 */
enum mq_status mq_cron_next(const struct mq_cron *c, const struct mq_tz *tz,
    int64_t t, int64_t *next);

/**
 * The runs r with t0 < r <= t1, oldest first, at most max of them, in
 * runs[0..*n): next() from t0 over and over. If *n == max there may be
 * more: call again from runs[max - 1]. Same returns as mq_cron_next,
 * but MQ_EMPTY is MQ_OK with *n = 0.
 */
enum mq_status mq_cron_runs(const struct mq_cron *c, const struct mq_tz *tz,
    int64_t t0, int64_t t1, int64_t *runs, size_t max, size_t *n);

/* ---- internal to the zone code (tz.c over tzrule.c) ---- */

/** A POSIX TZ rule (a TZif footer), parsed. */
struct mq__tzdate {
	char kind;		/* 'J' (1..365, no Feb 29), 'D' (0..365), 'M' */
	int n, m, w, d;		/* J/D: n; M: m.w.d */
	int32_t secs;		/* local time of day of the change, -167h..167h */
};
struct mq__tzrule {
	int32_t std_off, dst_off;	/* seconds east of UTC */
	int has_dst;
	char std_abbr[16], dst_abbr[16];
	struct mq__tzdate start, end;
};

/** Parses a POSIX TZ string; 0, or -1 with a message in msg. */
int mq__tzrule_parse(const char *s, struct mq__tzrule *r, char *msg,
    size_t msgsize);

/**
 * The rule's offset at t: its value, whether it is DST, and the span
 * [*from, *to) of instants around t with that same offset (INT64_MIN,
 * INT64_MAX when unbounded; a bound may be a rule change that keeps
 * the offset).
 */
int32_t mq__tzrule_at(const struct mq__tzrule *r, int64_t t, int *isdst,
    int64_t *from, int64_t *to);

/**
 * The offset of tz at t and the span [*from, *to) around t where it
 * holds (tz.c); the zone's segments, for cron_next.c.
 */
int32_t mq__tz_offset(const struct mq_tz *tz, int64_t t, int64_t *from,
    int64_t *to);

#endif
