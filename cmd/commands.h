/*
 * commands.h: the commands, each a cmd_NAME function and its NAME_command
 * table (cli/options.h); main.c's table lists them. To add a command:
 * HACKING.md.
 */
#ifndef MQ_COMMANDS_H
#define MQ_COMMANDS_H

#include "cli/cli.h"

/* The commands. */
int cmd_ack(int argc, char **argv, struct mq_global *g);
int cmd_archive(int argc, char **argv, struct mq_global *g);
int cmd_extend(int argc, char **argv, struct mq_global *g);
int cmd_fail(int argc, char **argv, struct mq_global *g);
int cmd_init(int argc, char **argv, struct mq_global *g);
int cmd_limit(int argc, char **argv, struct mq_global *g);
int cmd_pause(int argc, char **argv, struct mq_global *g);
int cmd_pop(int argc, char **argv, struct mq_global *g);
int cmd_purge(int argc, char **argv, struct mq_global *g);
int cmd_push(int argc, char **argv, struct mq_global *g);
int cmd_requeue_stale(int argc, char **argv, struct mq_global *g);
int cmd_cancel(int argc, char **argv, struct mq_global *g);
int cmd_check(int argc, char **argv, struct mq_global *g);
int cmd_resume(int argc, char **argv, struct mq_global *g);
int cmd_stats(int argc, char **argv, struct mq_global *g);
int cmd_work(int argc, char **argv, struct mq_global *g);
int cmd_completion(int argc, char **argv, struct mq_global *g);
int cmd_why(int argc, char **argv, struct mq_global *g);
int cmd_ls(int argc, char **argv, struct mq_global *g);
int cmd_retry(int argc, char **argv, struct mq_global *g);
int cmd_show(int argc, char **argv, struct mq_global *g);
int cmd_top(int argc, char **argv, struct mq_global *g);
int cmd_wait(int argc, char **argv, struct mq_global *g);
int cmd_schedule(int argc, char **argv, struct mq_global *g);

/* Their tables (options.h). */
extern const struct command ack_command, archive_command, cancel_command,
    check_command,
    completion_command, extend_command, fail_command, init_command,
    pause_command, pop_command, purge_command, push_command,
    requeue_stale_command, resume_command, stats_command, work_command;
extern const struct command why_command, ls_command;
extern const struct command retry_command;
extern const struct command show_command;
extern const struct command limit_command;
extern const struct command top_command;
extern const struct command wait_command;
extern const struct command schedule_command;

/* mq wait's statuses beyond mq(1)'s common ones: a job died (as mq
 * why's dead), the time was up (as timeout(1)). */
#define EXIT_WAIT_DEAD 14
#define EXIT_WAIT_TIMEOUT 124
/* Waits for the jobs ids[0..n) (sorted and made unique in place) of
 * table on c, a line for each as it finishes, until all have or
 * timeout_us (-1: none) passed; the exit status (wait.c, mq push --wait). */
int wait_for_jobs(const struct command *cmd, struct mq_conn *c,
    const char *table, uint64_t *ids, size_t n, int64_t timeout_us);

#endif
