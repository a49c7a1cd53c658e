/*
 * work.h: what the files of mq work share (the overview is at the top of
 * work.c): the worker's state, one struct the loop passes to every part,
 * a slot per job it holds, the tasks it hands its two server threads,
 * and each file's entry points.
 */
#ifndef MQ_WORK_H
#define MQ_WORK_H

#include <pthread.h>
#include <sys/types.h>

#include "commands.h"
#include "output/output.h"

#define TAIL 4096		/* bytes of a job's stderr kept as its error */
#define MAX_CONCURRENCY 128
#define MAX_SLOTS (4 * MAX_CONCURRENCY)	/* running + prefetched, at most */

/* The clock's settings, in one place because several files meet them. */
#define GRACE_US 5000000	/* from SIGTERM to SIGKILL */
#define ACK_DELAY_US 50000	/* longest an ack waits for a claim to join */
#define PREFETCH_US 100000	/* work to hold waiting, per process slot */
#define PREFETCH_MAX 15		/* waiting jobs per process slot, at most */
#define BUSY_RETRY_US 500000	/* a beat that met another's row lock */
#define BEAT_RETRY_US 1000000	/* a beat that failed */
#define BACKOFF_FIRST_US 500000	/* after a failure, doubling... */
#define BACKOFF_MAX_US 30000000	/* ...up to this, times [0.75, 1.25) */
#define BACKOFF_LIST_MAX_US 2000000	/* or this, with other hosts to try */
#define GIVE_UP_FAILURES 5	/* --exit-when-empty, --wait: tries in a row */
#define STOP_WAIT_US 10000000	/* stopping: longest wait for the server */
#define WAIT_CONN_RETRY_US 10000000	/* a waiting connection that failed */

#define LIMIT_SAID 1		/* struct worker's limit_said */
#define LIMIT_BACKOFF_SAID 2

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
	int beat_by_op;			/* the heartbeat's connection failed:
					 * the work thread's extends it */
	enum end end;
	int stopping;			/* SIGTERM sent; end says why */
	int status;			/* from waitpid */
};

/* A thread that talks to the server for the loop (work/db.c): one task
 * at a time; a byte on fd[0] when it is done. */
struct dbt {
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void (*fn)(void *);	/* the task running, NULL: none */
	void *ctx;
	int busy;		/* posted and not collected (the loop's) */
	int quit;		/* dbt_end: an idle thread returns */
	int started;
	int fd[2];
};

enum op_kind { OP_ACK, OP_FAIL, OP_RELEASE, OP_EXTEND };

/* One job's part of a task of the work thread. */
struct op_item {
	int slot;
	enum op_kind kind;
	struct mq_receipt r;
	int tried;			/* fail, release, extend: answered */
	int64_t sent_at;		/* extend: when */
	enum mq_status st;		/* their outcome */
	unsigned char lost;		/* ack: the lease was lost */
	struct mq_fail_result res;
	size_t text_len;
	char text[TAIL + 128];		/* fail: the error text */
};

struct worker;

/* What the work thread does in one go: fails and give-backs, then the
 * acks with a claim of up to room jobs (or alone), then the waiting
 * connection if asked for. The loop reads the outcome once it is done. */
struct op_task {
	struct worker *w;
	size_t n;
	unsigned room;
	unsigned need;		/* of those, for free process slots */
	int want_cw;
	int64_t posted_at;
	enum mq_status st;		/* MQ_OK, or the failure */
	struct mq_error err;
	enum mq_status claim_st;
	int64_t retry_us;		/* mq_claim_retry_us after it */
	int held;			/* mq_claim_held after it */
	char unconfirmed[512];		/* mq_claim_unconfirmed after it */
	struct mq_job *jobs;
	size_t njobs;
	int acked;
	size_t given_back;	/* jobs of a claim whose outcome was unknown */
	size_t forgotten;	/* such claims not given back, their lease
				 * over (left to requeue-stale) */
	struct mq_conn *cw;
	int fire;			/* fire the due schedules first */
	int fire_woken;			/* after a wakeup that brought none */
	uint64_t runs;			/* the runs firing pushed */
	struct op_item item[MAX_SLOTS];
};

/* Leases to extend, each once, on the heartbeat thread's connection. */
struct beat_task {
	struct worker *w;
	size_t n;
	int no_conn;			/* its connection could not be made */
	enum mq_status st;
	struct mq_error err;
	struct {
		int slot;
		struct mq_receipt r;
		int64_t sent_at;
		enum mq_status st;
	} item[MAX_SLOTS];
};

/* All of the worker's state: cmd_work() fills in the options, work_run()
 * the rest; only the loop's thread touches it, but for what a posted
 * task's thread owns until it is collected (its connection, its task). */
struct worker {
	struct mq_global *g;
	int err_stalled;	/* stderr took no write: jobs' output waits */
	struct mq_pop_opts pop;
	int64_t lease_us, timeout_us, wait_us;
	long long max_jobs, claimed;
	int exit_when_empty, concurrency, nslots;
	int64_t avg_run_us;		/* of recent jobs; 0: none yet */
	char **cmd;
	char path[4096];		/* cmd[0], found in PATH once */
	struct slot slot[MAX_SLOTS];
	/* the work thread's, the heartbeat thread's, the loop's (waiting,
	 * non-blocking): each touched by its owner only */
	struct mq_conn *c, *cb, *cw;
	/* the work thread's (read by the loop between its tasks): claims
	 * whose jobs may be leased to nobody (mq_take_orphans), given back
	 * first once connected again */
	struct mq_orphan orphans[MQ_ORPHANS_MAX];
	size_t norphans;
	struct dbt op, beat;
	struct op_task ot;
	struct beat_task bt;
	struct mq_async wait;
	int waiting, wait_broken;
	unsigned idle_waits;		/* waits in a row that found nothing */
	int64_t limit_retry_at;		/* a rate lets a claim through then
					 * (the claim's time plus
					 * mq_claim_retry_us; 0: none) */
	int limit_held;			/* limits held due jobs back at the
					 * last claim (mq_claim_held) */
	int64_t next_claim, idle_since, reconnect_at, cw_retry_at;
	/* firing the schedules of its queues (fire_due.c), by the work
	 * thread before a claim (which owns the state while its task
	 * runs) */
	struct mq_fire_state fire;
	int woke;			/* the last park ended early */
	int fire_woken;			/* and the claim after found none */
	int fire_said;			/* firing's failure was said */
	unsigned failures;		/* work tasks failed in a row */
	/* hosts of the list the work thread last connected from (written
	 * by it as it connects, read once its task is over) */
	unsigned hosts;
	int beat_failing;		/* the last heartbeat task failed */
	/* connections refused for the server's limit (mq_conn_limit),
	 * since the work thread last connected: LIMIT_SAID, the error was
	 * said; LIMIT_BACKOFF_SAID, the backoff too: once each, not once
	 * per refused connection */
	int limit_said;
	int64_t stop_idle_since;	/* stopping, no job running: since */
	int stopping;			/* claim no more */
	int signals;			/* stop signals received */
	int cannot_run;			/* CMD failed to start for good */
	int stdout_gone;		/* a job died of SIGPIPE, the reader
					 * of mq work's stdout gone: its
					 * jobs given back, exit 74 */
	int sig_fd;			/* the signals' self-pipe, read end */
};

/* work/loop.c: the rest of mq work once the options are read: CMD found,
 * the table checked, the threads started, the loop run. Returns the exit
 * status. */
int work_run(struct worker *w, struct mq_global *g, char **cmd);

/* work/stop.c: catches the stop signals and SIGCHLD into a self-pipe;
 * returns its read end. */
int work_signals(void);
/* A stop signal came (the second stops the running jobs too). */
void on_stop(struct worker *w);
/* Exiting: says which claims' jobs whose outcome was unknown were not
 * given back. */
void orphans_left(const struct worker *w);
/* Stopping, and the server did not answer for STOP_WAIT_US: exits. */
void give_up(struct worker *w);

/* work/slots.c: the held jobs on the loop's side. */
void warn_job(const struct slot *s, const char *what);
int count_slots(const struct worker *w, enum slot_state st);
void free_slot(struct slot *s);
/* Stops a running job whose lease is gone, or drops a waiting one. */
void lose(struct slot *s, const char *why);
/* Collects the children that ended. */
void reap(struct worker *w);
/* Starts waiting jobs while there is room. */
void start_queued(struct worker *w);
/* Timeouts, kills, leases that ran out. */
void tend(struct worker *w);

/* work/claim.c: the work thread's task: what to post, and its run. How
 * many jobs a claim may take now, nacks slots being acked with it; 0: no
 * claim now. */
long long claim_room(const struct worker *w, long long nacks);
/* Posts the work thread's next task, if there is anything to do. */
void op_post(struct worker *w);

/* work/result.c: the work thread is done: its outcome, job by job. */
void op_apply(struct worker *w);

/* work/heartbeat.c: leases due posted to the heartbeat thread, and the
 * outcome applied once it is done. */
void beat_post(struct worker *w);
void beat_apply(struct worker *w);

/* work/wait.c: the non-blocking connection that waits for pushes.
 * Parks it, if idle and not parked yet. */
void park(struct worker *w);
/* Busy again: its rows in the waiters table (Galera) go. */
void unpark(struct worker *w);
/* After poll(): the waiting connection's answer, if any. */
void step_wait(struct worker *w, short revents, int timed_out);

/* work/jobs.c: the child processes. Finds cmd as a shell would, once: in
 * PATH unless it has a '/'. */
int find_command(const char *cmd, char *path, size_t size);

/* Starts the job of s (QUEUED) as path + argv: payload on stdin, MQ_* in
 * the environment, stderr to a pipe, in a process group of its own. The
 * payload is freed. Returns an errno value, 0 on success. */
int spawn_job(struct slot *s, const char *path, char **argv);

/* Reads what the child wrote to stderr: passed on, and its tail kept.
 * At end of file the pipe is closed. Returns 1, reading nothing, while
 * mq work's stderr cannot take a write (unless the job has ended: then
 * what stderr cannot take is dropped), else 0. */
int drain(struct slot *s, int ended);

/* Whether mq work's stderr takes a write now (or fails at once). */
int stderr_ready(void);

/* Whether mq work's stdout, which its jobs share, is a pipe or socket
 * whose reader has gone (a write there would raise SIGPIPE). */
int stdout_gone(void);

/* Signals the job's whole process group. */
void kill_job(const struct slot *s, int sig);

/* work/result.c: the error text of a failed job into buf (TAIL + 128
 * bytes): how it ended, then as much of its stderr's end as fits in TAIL
 * bytes. */
size_t error_text(const struct slot *s, int64_t timeout_us, char *buf);

/* "timed out", "killed by signal 13 (SIGPIPE)" or "non-zero exit",
 * in buf (HOW_MAX bytes) or a constant. */
#define HOW_MAX 48
const char *how_it_ended(const struct slot *s, char *buf);

/* Whether the job exited 0. */
int succeeded(const struct slot *s);

/* work/db.c: starts the thread, signals blocked in it. Returns an errno
 * value. */
int dbt_start(struct dbt *d);

/* Ends the thread if it is idle, and joins it: at the worker's exit
 * (valgrind counts a thread that outlives main's exit as a leak). One
 * running a task (a server that hangs) is left as it is. */
void dbt_end(struct dbt *d);

/* Gives the idle thread fn(ctx) to run. */
void dbt_post(struct dbt *d, void (*fn)(void *), void *ctx);

/* After fd[0] was readable: whether the task is done (busy then 0). */
int dbt_collect(struct dbt *d);

/* A connection with the table selected; NULL with e filled in. (In the
 * server threads only: the loop never waits for the server.) */
struct mq_conn *connect_table(const struct mq_connopts *o, const char *table,
    struct mq_error *e);

#endif
