/*
 * sched.h: mq schedule's files (cmd/schedule/): the command and its
 * subcommands (schedule.c), the list's output (list.c).
 */
#ifndef MQ_CMD_SCHED_H
#define MQ_CMD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

/* mq schedule ls: a schedule at a time, with its next count instants
 * (from its next_at on), as text or one JSON object a line:
 * sched_list_row(lister, row) for each (mq_schedule_list's each). */
struct sched_lister;
struct sched_lister *sched_lister_new(unsigned count, int json);
void sched_list_row(void *lister, const struct mq_schedule_row *row);
void sched_lister_free(struct sched_lister *l);

#endif
