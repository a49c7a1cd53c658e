/*
 * show.h: mq show's output (show/output.c), in its two forms: text for
 * a terminal, every byte from the table escaped, and one JSON object per
 * job.
 */
#ifndef MQ_SHOW_H
#define MQ_SHOW_H

#include "commands.h"
#include "output/output.h"

/* The payload preview on a terminal: its first bytes, escaped. */
#define SHOW_PREVIEW 1024

/* A job's fields, its parents and dependents (d) and payload preview
 * as "key: value" lines, after a blank line unless it is the first job;
 * path: where -o wrote the payload, or NULL. Then a "history:" line,
 * which the events follow. */
void show_text(const struct mq_job_info *j, const struct mq_job_deps *d,
    const char *path, int first);
int show_text_event(const struct mq_history_entry *h, void *ctx);

/* The JSON object of a job, open at its "history" array, which the
 * events fill; the caller closes both with "]}". */
void show_json_start(const struct mq_job_info *j,
    const struct mq_job_deps *d);
int show_json_event(const struct mq_history_entry *h, void *ctx);

/* How many of a schedule's last runs show lists for one of its runs. */
#define SHOW_RUNS 10

/* For a job that is a calendar schedule's run (show/schedule.c): its
 * schedule, instant and that schedule's last runs, as text lines or
 * the JSON member ,"schedule":{...} (,"schedule":null for another job);
 * a text job that is no run prints nothing. 0, or -1 on an error (in
 * c's error). */
int show_run(struct mq_conn *c, uint64_t id, int json);

#endif
