/*
 * work.h: what mq work's two files share: a slot per job the worker
 * holds (claimed and waiting, or running as a child process), and the
 * child-process side (work_jobs.c).
 */
#ifndef MQ_WORK_H
#define MQ_WORK_H

#include <pthread.h>
#include <sys/types.h>

#include "cmds.h"

#define TAIL 4096		/* bytes of a job's stderr kept as its error */
#define MAX_CONCURRENCY 128
#define MAX_SLOTS (4 * MAX_CONCURRENCY)	/* running + prefetched, at most */

enum slot_state {
	FREE,
	QUEUED,		/* claimed, waiting for a free process slot */
	RUNNING,	/* CMD runs */
	ENDED		/* reaped, to be reported to the server */
};

/* How a job ended. */
enum end { EXITED, TIMED_OUT, LOST, ABANDONED };

struct slot {
	enum slot_state state;
	struct mq_job job;		/* payload held while QUEUED */
	pid_t pid;
	int err_fd;			/* the child's stderr, or -1 */
	char tail[TAIL];		/* ring of its last stderr bytes */
	size_t tail_len, tail_pos;
	int64_t next_beat, deadline, kill_at, started_at, ended_at;
	int64_t lease_end;		/* the lease's end, as far as we know */
	int in_op;			/* in the task of the work thread */
	enum end end;
	int stopping;			/* SIGTERM sent; end says why */
	int status;			/* from waitpid */
};

/* Finds cmd as a shell would, once: in PATH unless it has a '/'. */
int find_command(const char *cmd, char *path, size_t size);

/* Starts the job of s (QUEUED) as path + argv: payload on stdin, MQ_* in
 * the environment, stderr to a pipe, in a process group of its own. The
 * payload is freed. Returns an errno value, 0 on success. */
int spawn_job(struct slot *s, const char *path, char **argv);

/* Reads what the child wrote to stderr: passed on, and its tail kept.
 * At end of file the pipe is closed. */
void drain(struct slot *s);

/* Signals the job's whole process group. */
void kill_job(const struct slot *s, int sig);

/* The error text of a failed job into buf (TAIL + 128 bytes): how it
 * ended, then as much of its stderr's end as fits in TAIL bytes. */
size_t error_text(const struct slot *s, int64_t timeout_us, char *buf);

/* "timed out", "killed by a signal" or "non-zero exit". */
const char *how_it_ended(const struct slot *s);

/* Whether the job exited 0. */
int succeeded(const struct slot *s);


/* A thread that talks to the server for the loop (work_db.c): one task
 * at a time; a byte on fd[0] when it is done. */
struct dbt {
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void (*fn)(void *);	/* the task running, NULL: none */
	void *arg;
	int busy;		/* posted and not collected (the loop's) */
	int fd[2];
};

/* Starts the thread, signals blocked in it. Returns an errno value. */
int dbt_start(struct dbt *d);

/* Gives the idle thread fn(arg) to run. */
void dbt_post(struct dbt *d, void (*fn)(void *), void *arg);

/* After fd[0] was readable: whether the task is done (busy then 0). */
int dbt_collect(struct dbt *d);

#endif
