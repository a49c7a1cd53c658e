/*
 * sched.h: mq schedule's files (cmd/schedule/): the command and its
 * subcommands (schedule.c), the list's output (list.c).
 */
#ifndef MQ_CMD_SCHED_H
#define MQ_CMD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

/* mq schedule ls: every schedule of rows[0..n), with its next count
 * instants (from its next_at on), as text or one JSON object a line. */
void sched_list(const struct mq_schedule_row *rows, size_t n, unsigned count,
    int json);

#endif
