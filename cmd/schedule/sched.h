/*
 * sched.h: mq schedule's files (cmd/schedule/): the command and its
 * subcommands (schedule.c), the list's output (list.c).
 */
#ifndef MQ_CMD_SCHED_H
#define MQ_CMD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

/* An instant (seconds since the epoch) as "2026-11-30 01:30:00 UTC" and
 * in zone tz as "2026-11-30 02:30:00 CET" (tz NULL: UTC only), into
 * utc and local (SCHED_TIME_MAX bytes each). */
#define SCHED_TIME_MAX 64
struct mq_tz;
void sched_times(int64_t t, const struct mq_tz *tz, char *utc, char *local);

/* mq schedule ls: every schedule of rows[0..n), with its next count
 * instants (from its next_at on), as text or one JSON object a line. */
void sched_list(const struct mq_schedule_row *rows, size_t n, unsigned count,
    int json);

#endif
