/*
 * mq.h: the one public header of libmq, a job queue kept in a MySQL or
 * MariaDB table. The library never prints and never exits: every call
 * returns an mq_status, and the details of a failure stay on the handle
 * (mq_conn_error) or in the caller's struct mq_error.
 */
#ifndef MQ_H
#define MQ_H

#include <stddef.h>
#include <stdint.h>

/** Outcome of every library call. */
enum mq_status {
	MQ_OK = 0,
	MQ_EMPTY,	/* nothing to claim */
	MQ_ELEASE,	/* lease lost or receipt unknown */
	MQ_EINVAL,	/* a value the caller passed is not valid */
	MQ_ETOOBIG,	/* payload larger than the server accepts */
	MQ_ESCHEMA,	/* table missing, not an mq table, or newer schema */
	MQ_ECONFIG,	/* option file or connection settings unusable */
	MQ_EUNAVAIL,	/* cannot connect, or the connection was lost */
	MQ_EACCESS,	/* the server denied access */
	MQ_ERETRY,	/* deadlock or lock wait timeout, retries used up */
	MQ_EDB,		/* any other server error */
	MQ_ENOMEM,
	MQ_EIO,		/* reading input failed */
	MQ_PAUSED,	/* nothing claimed: the queue is paused */
	MQ_EUNKNOWN,	/* the connection was lost while a write or its
			 * COMMIT was in flight: it may or may not have
			 * taken effect */
	MQ_EPARENT	/* mq push --after: a parent that does not exist,
			 * recurs, or is dead where that cancels */
};

/** A failure, as the caller reports it. */
struct mq_error {
	enum mq_status status;
	unsigned db_errno;	/* server or client error number, 0 if none */
	char sqlstate[6];	/* "" if none */
	char msg[512];		/* one line, no trailing period */
};

/** The text of a status, said after what failed ("job N: " and the
 * lease lost, ...): the one home of each status's words. */
const char *mq_strerror(enum mq_status st);

/** Nonzero if e is a connection the server refused for a limit on
 * connections (max_connections; an account's max_user_connections or
 * max_connections_per_hour): none to spare now, one may be later. */
int mq_conn_limit(const struct mq_error *e);

/* ---- parsers (no connection needed) ---- */

/** Longest table name: every identifier mq derives from it must fit
 * MySQL's 64, and the longest is the constraint "<table>_queues_limits"
 * (14 more; sql/schema.sql). The user locks' names do not grow with it
 * (an MD5 of the name: MQ_SQL_WALL, counts.c). */
#define MQ_TABLE_MAX 50
/** Longest queue name. */
#define MQ_QUEUE_MAX 64

/** Nonzero if s is a valid table name: [A-Za-z0-9_], 1..MQ_TABLE_MAX (50),
 * not all digits. */
int mq_valid_table(const char *s);

/** Nonzero if s is a valid queue name: [A-Za-z0-9_.-], 1..64. */
int mq_valid_queue(const char *s);

/** Most queues in a preference list. */
#define MQ_QUEUES_MAX 16

/**
 * Nonzero if s is a preference list: 1 to MQ_QUEUES_MAX valid queue
 * names, separated by single commas, none twice ("high,default,low").
 */
int mq_valid_queue_list(const char *s);

/** Longest job key (mq push --key). */
#define MQ_KEY_MAX 255

/**
 * Nonzero if s is a job key (the job_key column, what a per-key limit
 * counts by): 1 to MQ_KEY_MAX bytes, none of them a control byte
 * (0x00-0x1F, 0x7F); any other byte, UTF-8 or not.
 */
int mq_valid_key(const char *s);

/**
 * Parses a duration: an integer with an optional unit (ms, s, m, h, d),
 * or several such terms ("1h30m"); a bare integer is seconds.
 * Stores microseconds. MQ_EINVAL for garbage, negatives or overflow.
 */
enum mq_status mq_parse_duration(const char *s, int64_t *usec);

/** Hex characters in a lease token. */
#define MQ_TOKEN_LEN 32
/** Room for "<id>.<token>" and its NUL. */
#define MQ_RECEIPT_SIZE (20 + 1 + MQ_TOKEN_LEN + 1)

/** What a consumer holds after a claim: the job id and its lease token. */
struct mq_receipt {
	uint64_t id;
	char token[MQ_TOKEN_LEN + 1];
};

/** Parses "<id>.<32 lowercase hex>". MQ_EINVAL if malformed. */
enum mq_status mq_parse_receipt(const char *s, struct mq_receipt *r);

/** Writes r as text into buf (MQ_RECEIPT_SIZE bytes). */
void mq_format_receipt(const struct mq_receipt *r, char *buf);

/**
 * Checks a time for push --at: "@EPOCH" or "YYYY-MM-DD[ T]HH:MM[:SS[.frac]]"
 * with an optional trailing "Z"; read as UTC. MQ_EINVAL if malformed,
 * or 9999-12-31 23:59:59.999999 (the due time of jobs that wait for
 * parents).
 */
enum mq_status mq_check_time(const char *s);

/* ---- connection ---- */

struct mq_conn;

/**
 * Connection settings: the explicit ones win, then the env_ ones, then
 * the option files. NULL/0 means unset.
 */
struct mq_connopts {
	const char *defaults_file;	/* read only this option file */
	const char *host, *socket, *user, *database;
	unsigned port;
	const char *env_host, *env_socket, *env_user, *env_database;
	unsigned env_port;
	/* a list of hosts ("db1,db2:3307"): tried from a random entry on,
	 * not from the first */
	int host_random;
	/* TLS, as the mysql client's --ssl-*, passed on when set; unlike
	 * the settings above, an option file's ssl-* wins over them */
	const char *ssl_ca, *ssl_capath, *ssl_cert, *ssl_key, *ssl_cipher;
	int ssl_verify_server_cert;	/* check the server's certificate */
	int no_skip_locked;	/* act as on a server without SKIP LOCKED */
	int nonblock;		/* for mq_wait_begin (libmariadb only) */
	int long_statements;	/* DDL on big tables (mq init): no statement
				 * time limit, a day's read timeout */
	/* seconds the client waits for the server: for the handshake
	 * (0: 10) and for each answer (0: 300); a command with a deadline
	 * (mq pop --wait) bounds a hung server's cost with them */
	unsigned connect_timeout_s, read_timeout_s;
};

/**
 * Connects as the mysql client would, reading the option files' [client]
 * and [mq] groups for what o leaves unset. NULL on failure, err filled in
 * (a server out of connections: a message that names max_connections).
 * The strings o points to must outlive the connection: on a Galera
 * cluster reached through a list of hosts, its claims are read on
 * another node of the list, connected to with them (mq_ack_pop).
 */
struct mq_conn *mq_connect(const struct mq_connopts *o, struct mq_error *err);

/**
 * Call first in a thread that uses connections made in another one:
 * libmysqlclient wants its per-thread state (libmariadb's does nothing).
 */
void mq_thread_init(void);
/* Before such a thread ends: the client library's part of it freed. */
void mq_thread_end(void);

/** Closes the connection and frees the handle. NULL is fine. */
void mq_close(struct mq_conn *c);

/** The failure of the last call that failed on this handle. */
const struct mq_error *mq_conn_error(const struct mq_conn *c);
/* How many hosts the list c was connected from has (--host, MQ_HOST or
 * an option file's host=): 1 for a single host. Another of them may be
 * up when c's is lost. */
unsigned mq_conn_hosts(const struct mq_conn *c);

/** A monotonic clock, in microseconds: the one the library's time limits
 * use, and the commands' too. */
int64_t mq_now_us(void);

/** Claim strategies. */
enum mq_claim {
	MQ_CLAIM_AUTO = 0,	/* skip-locked if the server has it */
	MQ_CLAIM_SKIP_LOCKED,	/* SELECT ... FOR UPDATE SKIP LOCKED */
	MQ_CLAIM_UPDATE		/* UPDATE ... ORDER BY ... LIMIT (seed 002) */
};

/* ---- schema ---- */

/** Schema version this library creates and understands. */
#define MQ_SCHEMA_VERSION 12

/** Returns the schema SQL for table, malloc'ed, or NULL (bad name/ENOMEM). */
char *mq_schema_sql(const char *table);

/** A Galera node, as mq init found it (all 0 elsewhere). */
struct mq_galera_report {
	int on;			/* wsrep on: a Galera node */
	unsigned long node;	/* its place in the cluster, from 1 */
	unsigned long nodes;	/* nodes in the cluster */
	char state[32];		/* Synced, Donor/Desynced, ... */
	unsigned long no_pk;	/* tables of the database without a PK */
	char no_pk_names[256];	/* their names, ", " between, cut */
};

/** Settings of the server under which a COMMIT it answered may be lost
 * in a crash (mq-init(1), DURABILITY). */
struct mq_durability_report {
	unsigned long flush_log_at_trx_commit;	/* 1 is safe */
	int log_bin;			/* the binary log is on */
	unsigned long sync_binlog;	/* 1 is safe, if log_bin */
	int flush_loses;		/* flush_log_at_trx_commit is not 1 */
	int binlog_loses;		/* log_bin and sync_binlog not 1 */
};

/** What mq_init did. */
struct mq_init_report {
	int created;		/* the job table did not exist: all made */
	int from_version;	/* version found (0 if created) */
	int companions_created;	/* _archive, _queues or _counts was missing */
	struct mq_galera_report galera;
	struct mq_durability_report durability;
};

/** Creates or upgrades table and its companions (<table>_archive,
 * _queues, _counts, _history, _waiters: mq-init(1));
 * idempotent: on an up-to-date schema it changes nothing. */
enum mq_status mq_init(struct mq_conn *c, const char *table,
    struct mq_init_report *rep);

/**
 * Selects the table the calls below work on, checking it is an mq table
 * of a schema this library knows (MQ_ESCHEMA otherwise).
 */
enum mq_status mq_use_table(struct mq_conn *c, const char *table);

/** The server's max_allowed_packet, known after mq_use_table. */
size_t mq_max_payload(const struct mq_conn *c);

/* ---- push ---- */

/** How new jobs are made. */
struct mq_push_opts {
	const char *queue;
	int priority;		/* lower runs first */
	unsigned max_attempts;
	int64_t delay_us;	/* due this long after now */
	const char *at;		/* or due at this time (mq_check_time) */
	const char *dedup;	/* optional dedup key (single push only) */
	int64_t every_us;	/* > 0: recurring (single push only): an ack
				 * makes it due again this long after its
				 * due time, not done */
	const char *key;	/* optional job key (mq_valid_key): what a
				 * per-key limit counts by; every job of a
				 * batch gets it */
	const uint64_t *after;	/* its parents (nafter, any order), of
				 * every job of a batch: due once every
				 * one is done, not before (no delay_us,
				 * at or every_us with them) */
	size_t nafter;
	int if_parent_dies;	/* a parent dead: MQ_AFTER_CANCEL (the
				 * job dies too), _RUN (counted as done),
				 * _WAIT (until it is retried and done) */
};
#define MQ_AFTER_CANCEL 0
#define MQ_AFTER_RUN 1
#define MQ_AFTER_WAIT 2

/** Defaults for struct mq_push_opts. */
#define MQ_DEFAULT_MAX_ATTEMPTS 10
#define MQ_PRIORITY_MIN (-32768)
#define MQ_PRIORITY_MAX 32767

/**
 * Pushes one job. *existed is set when opts->dedup names a live job;
 * then *id is that job and nothing was inserted.
 */
enum mq_status mq_push(struct mq_conn *c, const struct mq_push_opts *o,
    const void *payload, size_t len, uint64_t *id, int *existed);

/** Called after each batch commits: ids first, first+step, ... (n of them). */
typedef int (*mq_ids_fn)(uint64_t first, size_t n, uint64_t step, void *ctx);

struct mq_batch;

/** Starts a streaming multi-row push; on_ids reports committed ids. */
struct mq_batch *mq_batch_new(struct mq_conn *c, const struct mq_push_opts *o,
    mq_ids_fn on_ids, void *ctx);

/** Adds one job; commits a batch when it is full. */
enum mq_status mq_batch_add(struct mq_batch *b, const void *payload,
    size_t len);

/** Commits what is pending. */
enum mq_status mq_batch_flush(struct mq_batch *b);

/** Frees the batch; pending jobs not flushed are dropped. */
void mq_batch_free(struct mq_batch *b);

/* ---- pop ---- */

/** A claimed job. */
struct mq_job {
	uint64_t id;
	struct mq_receipt receipt;
	char queue[MQ_QUEUE_MAX + 1];
	int priority;
	unsigned attempt;	/* 1 on first delivery */
	unsigned char *payload;
	size_t len;
};

/** How jobs are claimed. */
struct mq_pop_opts {
	const char *queue;	/* one queue, or a preference list */
	unsigned count;		/* at most this many, >= 1 */
	/* the jobs wanted at least, the rest taken if the head of a
	 * limited queue has them (a prefetch): past its full keys, a
	 * limited claim reads on only while it has fewer (0: count) */
	unsigned need;
	int64_t lease_us;	/* lease length, > 0 */
	enum mq_claim claim;
};

/**
 * After a claim that got fewer jobs than asked: in how many microseconds
 * a rate limit of one of its queues (mq-limit(1)) lets a claim through
 * again, 0 if no rate held it back. Waiters park no longer than that.
 */
int64_t mq_claim_retry_us(const struct mq_conn *c);

/**
 * After a claim that got fewer jobs than asked: 1 if limits of one of
 * its queues held due jobs back (they are claimed once a slot ends or a
 * window has room), else 0.
 */
int mq_claim_held(const struct mq_conn *c);

/**
 * After a claim on a Galera node: what it took that another node did
 * not show leased to it (a claim the cluster lost: those jobs were not
 * handed out), or why no other node could be asked (MQ_EUNAVAIL), in
 * words; NULL if nothing.
 */
const char *mq_claim_unconfirmed(const struct mq_conn *c);

/**
 * Claims up to o->count due jobs in priority, due time, id order; with a
 * preference list, from the first queue that has due jobs, then the next
 * (one claim may span queues, in list order). MQ_EMPTY when none is due,
 * MQ_PAUSED when every listed queue is paused.
 * On a Galera node reached through a list of hosts, the jobs are handed
 * out once another node of the list shows them leased to this claim
 * (read once it applied what the cluster committed before): those it
 * does not are dropped (mq_claim_unconfirmed), MQ_EUNKNOWN if none is
 * left; MQ_EUNAVAIL, the jobs given back, if the cluster has other
 * nodes and none of the list could be asked.
 * Free *jobs with mq_jobs_free.
 */
enum mq_status mq_pop(struct mq_conn *c, const struct mq_pop_opts *o,
    struct mq_job **jobs, size_t *n);

/**
 * Acks r[0..nr) (lost[i] as with mq_ack) and claims as mq_pop, in one
 * transaction where the server has SKIP LOCKED: one commit per job for a
 * consumer loop. The acks stand even when the claim finds nothing; *acked
 * (if not NULL) says whether they were committed, also when the claim
 * then failed (with the UPDATE strategy, they commit first).
 */
enum mq_status mq_ack_pop(struct mq_conn *c, const struct mq_receipt *r,
    size_t nr, unsigned char *lost, int *acked, const struct mq_pop_opts *o,
    struct mq_job **jobs, size_t *n);

/** Frees what mq_pop returned. */
void mq_jobs_free(struct mq_job *jobs, size_t n);

/* ---- waiting and waking ---- */

/**
 * Parks the connection until a job of queue (or of any queue of a
 * preference list) is due, a pusher wakes it, or
 * max_us (at most a second) passes: MQ_OK for the first two (claim now),
 * MQ_EMPTY for the third.
 */
enum mq_status mq_wait(struct mq_conn *c, const char *queue, int64_t max_us);

/**
 * A wait that ended because a job was due, followed by a wait on the
 * same connection, means the claim in between found nothing (another
 * session holds the job's row locked): that next wait parks for its
 * time without looking for due jobs (a pusher still wakes it), instead
 * of ending at once, again and again. A caller that waits on one
 * connection and claims on another calls this when a claim got jobs:
 * its next wait looks at once again.
 */
void mq_wait_rearm(struct mq_conn *c);

/**
 * Waiting for jobs to finish (mq wait). mq_finish_arm writes or re-arms
 * the connection's row among the waiters, for the jobs lo to hi (the
 * same on each call): a finish of one of them committed after it (by
 * mq, on any node) wakes the next park. Arm, look at the jobs
 * (mq_look_finished), then park: mq_finish_park returns MQ_OK when a
 * finish came since the arm (arm and look again), MQ_EMPTY when max_us
 * passed without one. mq_finish_arm returns MQ_EMPTY where the waiters
 * table cannot be used (no grant): look about once a second instead. A
 * finisher that saw no waiter reads again only a second later: look
 * once more MQ_FINISH_STALE_US after the first arm. mq_finish_leave
 * deletes the row.
 */
#define MQ_FINISH_STALE_US 1500000
enum mq_status mq_finish_arm(struct mq_conn *c, uint64_t lo, uint64_t hi);
enum mq_status mq_finish_park(struct mq_conn *c, int64_t max_us);
enum mq_status mq_finish_leave(struct mq_conn *c);

/**
 * pending(), if not NULL, says whether the caller would rather stop (a
 * stop signal it holds is pending): a statement that met a deadlock or
 * a lock wait timeout is then not run again, and its error is returned.
 */
void mq_set_stop_check(struct mq_conn *c, int (*pending)(void));

/**
 * How long the idle_waits-th wait in a row should park: 100 ms, doubling,
 * at most a second (the polling fallback, when no pusher can wake us).
 */
int64_t mq_wait_backoff_us(unsigned idle_waits);

/**
 * As mq_pop, but waits up to wait_us for a job (mq_wait in between). If
 * park is not NULL, it is called with 1 before the waits that follow a
 * claim that found nothing, and with 0 after them, before the next claim
 * (mq pop lets stop signals end it while parked, and holds them while
 * claiming).
 */
enum mq_status mq_pop_wait(struct mq_conn *c, const struct mq_pop_opts *o,
    int64_t wait_us, void (*park)(int parked, void *ctx), void *ctx,
    struct mq_job **jobs, size_t *n);

/**
 * Whether the last look of mq_pop_wait on c at the due schedules of its
 * queues (mq_fire_due, a consumer's side duty) failed: 1 and *e its
 * error (a schedule passed over: its zone, its payload, its values; the
 * server's), 0 if it did not, or did for an account that may not write
 * the schedules' tables (such a consumer does not fire, by design).
 */
int mq_pop_fire_failed(struct mq_conn *c, struct mq_error *e);

/**
 * Consumers fire the calendar schedules of their queues (mq-schedule(1)):
 * mq_fire_due, called between claims, fires them (mq_schedule_fire)
 * when the earliest instant it last read has come, MQ_FIRE_RECHECK_US
 * after its last look (schedules added or moved by others), or when
 * woken is set (a wakeup that brought no job: an apply wakes the
 * waiters of its queues), never twice within MQ_FIRE_MIN_US. *runs:
 * the jobs it pushed (claim again). What fails in firing does not
 * fail the caller: it is kept in the state (say it once), and an
 * account that may not write the schedules' tables stops trying
 * (off); only a lost connection is returned. Zero a state to start.
 */
#define MQ_FIRE_MIN_US 1000000
#define MQ_FIRE_RECHECK_US 10000000
#define MQ_FIRE_BATCH 8		/* schedules a look fires at most */
struct mq_fire_state {
	int64_t at_us;		/* look when mq_now_us() reaches it */
	int64_t last_us;	/* the last look (0: none) */
	int off;		/* never again (refused: err) */
	int more;		/* the last look left due ones: at once */
	int failed;		/* the last look failed: err */
	struct mq_error err;
	uint64_t fired;		/* runs pushed in all */
};
enum mq_status mq_fire_due(struct mq_conn *c, const char *queues,
    struct mq_fire_state *s, int woken, uint64_t *runs);
/** How long until mq_fire_due would look (INT64_MAX: never). */
int64_t mq_fire_wait_us(const struct mq_fire_state *s);

/** A wait in progress on a non-blocking connection (libmariadb only). */
struct mq_async {
	int fd;			/* poll this... */
	short events;		/* ...for these (POLLIN, ...) */
	int timeout_ms;		/* and at most this long, -1: no limit */
	int64_t deadline_us;	/* that is, until this time (mq_now_us);
				 * 0: no limit */
	int done;		/* the wait is over */
};

/** Starts mq_wait on a connection made with nonblock set. */
enum mq_status mq_wait_begin(struct mq_conn *c, const char *queue,
    int64_t max_us, struct mq_async *a);

/** Starts leaving the waiters' rows (as mq_pop_wait does once it
 * claimed or gave up) on a connection made with nonblock set, between
 * waits; a->done at once if there is nothing to delete. */
enum mq_status mq_wait_leave_begin(struct mq_conn *c, struct mq_async *a);

/** Blocking, when the non-blocking waits of c are over: ends a's wait
 * (if not NULL nor done: within a second, or it is left, and the rows
 * with it), then leaves the waiters' rows as mq_wait_leave_begin does. */
enum mq_status mq_wait_end(struct mq_conn *c, struct mq_async *a);

/** Continues it after poll() (revents, or timed_out); once a->done, the
 * status is mq_wait's (mq_wait_leave_begin's: MQ_EMPTY or an error). A
 * timeout before a->deadline_us (a poll that ended for the caller's own
 * reasons) changes nothing: only the client's own timeout ends the
 * statement, as a lost connection. */
enum mq_status mq_wait_step(struct mq_conn *c, struct mq_async *a,
    short revents, int timed_out);

/* ---- ack ---- */

/**
 * Marks jobs done, in one transaction. lost[i] is set for each receipt
 * whose lease was lost (the others are acked); returns MQ_ELEASE if any.
 */
enum mq_status mq_ack(struct mq_conn *c, const struct mq_receipt *r,
    size_t n, unsigned char *lost);

/* ---- fail, extend ---- */

/** How a job is given back. */
struct mq_fail_opts {
	const char *error;	/* error text (any bytes), or NULL */
	size_t error_len;	/* stored up to 4096 bytes */
	int no_retry;		/* bury it now */
	int64_t retry_in_us;	/* < 0: exponential backoff */
};

/** What became of a failed job. */
struct mq_fail_result {
	int dead;		/* attempts used up, or no retry */
	unsigned attempts;	/* deliveries so far */
	int64_t retry_in_us;	/* when not dead: due again after this */
};

/**
 * Gives a claimed job back: due again after a delay, or dead when its
 * attempts reached max_attempts or o->no_retry. Records the error text.
 * MQ_ELEASE if the lease was lost.
 */
enum mq_status mq_fail(struct mq_conn *c, const struct mq_receipt *r,
    const struct mq_fail_opts *o, struct mq_fail_result *res);

/**
 * Gives a claimed job back at once, due now, without counting the
 * delivery as an attempt (the worker stopped, the job did not fail).
 * MQ_ELEASE if the lease was lost.
 */
enum mq_status mq_release(struct mq_conn *c, const struct mq_receipt *r);

/** A claim whose jobs may be leased to nobody (an orphan): the answer
 * to its COMMIT, or to an UPDATE claim's UPDATE (which commits by
 * itself), was lost with the connection (MQ_EUNKNOWN), or it committed
 * and its jobs could not all be read. Its jobs of queue carry token. */
struct mq_orphan {
	char queue[MQ_QUEUE_MAX + 1];
	char token[MQ_TOKEN_LEN + 1];
	/* the session that sent the claim, which may still be running it
	 * (waiting on a row lock, say): ended before the give-back */
	unsigned long thread;		/* its server thread id */
	char server[128];		/* its server's @@hostname:@@port */
	int64_t connected_us;		/* mq_now_us() once it was made */
	int64_t lease_end_us;		/* mq_now_us() + the claim's lease,
					 * when the claim was given up */
};

/** Orphans a connection keeps, at most; a claim adds up to
 * MQ_QUEUES_MAX (one per queue of its list). */
#define MQ_ORPHANS_MAX (2 * MQ_QUEUES_MAX)

/** Moves up to max of the orphans of the claims made on c into out
 * (oldest first) and returns their number. Every claim (mq_pop,
 * mq_ack_pop, mq_pop_wait) adds its own to those c keeps, whatever it
 * returns: with a preference list, one that returned jobs may have
 * lost another queue's (on Galera, another statement's). None is
 * overwritten: a claim on c is refused (MQ_EINVAL) while fewer than
 * MQ_QUEUES_MAX places are left. */
size_t mq_take_orphans(struct mq_conn *c, struct mq_orphan *out,
    size_t max);

/** Gives back, as mq_release() does, every job of o's queue leased with
 * o's token, *n of them (the jobs held with that token of other queues
 * of the claim stay leased). First the session that sent the claim is
 * ended (KILL CONNECTION) and waited for, so that a statement of it
 * still running cannot lease the jobs after the search: a failure if
 * it cannot be (c is on another server or Galera node than the claim
 * was, the KILL is refused, or the session has not ended within 10 s
 * or before c's stop check says stop); the caller keeps o then. On
 * another server or Galera node, the jobs the claim committed are given
 * back all the same (*n; read once this node applied them), and
 * mq_orphan_elsewhere(c) says so: one it commits later is not. */
enum mq_status mq_release_orphan(struct mq_conn *c, const struct mq_orphan *o,
    size_t *n);

/** Whether the last mq_release_orphan failed only because the claim's
 * session is another server's: what it had committed went back; the
 * caller may go on and try again later, until the claim's lease ends. */
int mq_orphan_elsewhere(const struct mq_conn *c);

/** Moves the lease's end to now + lease_us. MQ_ELEASE if it was lost. */
enum mq_status mq_extend(struct mq_conn *c, const struct mq_receipt *r,
    int64_t lease_us);

/**
 * As mq_extend, once, without waiting for a lock: MQ_ERETRY at once when
 * another session holds the job's row (the caller tries again later),
 * where the server has NOWAIT (MariaDB 10.6+, MySQL 8.0+, as SKIP
 * LOCKED); elsewhere it waits as mq_extend does, without retrying.
 */
enum mq_status mq_try_extend(struct mq_conn *c, const struct mq_receipt *r,
    int64_t lease_us);

/* ---- cancel ---- */

/** What a job was when mq_cancel looked at it. */
struct mq_cancel_result {
	char state[8];		/* ready, leased, done, dead; "" if no such job */
	int found;		/* the job is in the table (its state may be
				 * none of mq's: "") */
};

/**
 * Cancels a job that waits (ready or scheduled, recurring ones too): it
 * becomes dead, its last error "cancelled" (followed by the earlier
 * text, if any). MQ_ELEASE if it is leased and not force (forced, its
 * consumer finds its lease lost); MQ_EMPTY if it is finished already or
 * not in the table. res says what it was.
 */
enum mq_status mq_cancel(struct mq_conn *c, uint64_t id, int force,
    struct mq_cancel_result *res);

/* ---- wait: jobs that finished (finished.c) ---- */

/** How a job waited for ended. */
enum mq_fin {
	MQ_FIN_DONE,		/* done (in the table or its archive) */
	MQ_FIN_DEAD,		/* dead: failed, attempts used up, cancelled */
	MQ_FIN_GONE,		/* in neither table: purged, or never pushed */
	MQ_FIN_RECURRING,	/* recurring (push --every): never finishes */
	MQ_FIN_ARCHIVED		/* in the archive, its state neither done nor
				 * dead (another program's row: ready,
				 * leased or ''): finished, outcome unknown */
};

/** A job found finished by mq_look_finished. */
struct mq_fin_job {
	uint64_t id;
	enum mq_fin how;
	int archived;			/* found in <table>_archive */
	const unsigned char *error;	/* a dead one's last error; NULL: none */
	size_t error_len;		/* (read up to 65535 bytes) */
	const char *state;		/* MQ_FIN_ARCHIVED: the state column's
					 * text ("ready", "leased", "") */
};

/** Called for each job found; nonzero stops the look (MQ_EIO). */
typedef int (*mq_fin_fn)(const struct mq_fin_job *j, void *ctx);

/** Most runs of ids one statement of a look reads. */
#define MQ_LOOK_RUNS 1000

/**
 * Looks once at the jobs ids[0..n) (ascending, no duplicates) and calls
 * fn for each that has finished (done or dead, in the table or in its
 * archive; any row of the archive, whatever its state), is gone (in
 * neither), or is recurring: within each batch of MQ_LOOK_RUNS runs of
 * ids, in the order they finished (finished_at, then id), the table's
 * and the archive's alike, the gone ones after them. One statement for
 * each MQ_LOOK_RUNS runs of ids (consecutive, or evenly spaced by up to
 * 16: a Galera node's auto_increment_increment), whatever their length;
 * one more for a batch where a job left the table (archived, purged).
 * Reads only.
 */
enum mq_status mq_look_finished(struct mq_conn *c, const uint64_t *ids,
    size_t n, mq_fin_fn fn, void *ctx);

/* ---- requeue-stale ---- */

/** Which expired leases to reap, and how. */
struct mq_requeue_opts {
	const char *queue;	/* NULL: all queues */
	uint64_t limit;		/* at most this many jobs, 0: no limit */
	unsigned batch;		/* jobs per transaction */
	int dry_run;		/* count only */
	/* if not NULL: called after each batch commits, with its jobs */
	void (*progress)(uint64_t jobs, void *ctx);
	void *ctx;		/* for progress */
};

/** What requeue-stale did (or would do). */
struct mq_requeue_report {
	uint64_t requeued;	/* back to ready */
	uint64_t dead;		/* attempts used up */
};

/**
 * Puts jobs whose lease expired back to ready, or to dead when their
 * attempts are used up, in short transactions by primary key. Safe to run
 * concurrently: runs take disjoint rows.
 */
enum mq_status mq_requeue_stale(struct mq_conn *c,
    const struct mq_requeue_opts *o, struct mq_requeue_report *rep);

/* ---- stats ---- */

/** A queue's counters: monotonic, never lowered by archive or purge
 * (mq-queue(7) COUNTERS). pushed is derived: the jobs live now plus
 * those that left (done, dead, purged) less those that came back
 * (retried), all read from one snapshot. */
struct mq_counters {
	uint64_t pushed;
	uint64_t done;		/* acked (a recurring job's runs: not) */
	uint64_t failed;	/* failed and to be retried */
	uint64_t dead;		/* buried: failed for good, cancelled,
				 * or its lease expired on its last attempt */
	uint64_t requeued;	/* stale leases taken back */
	uint64_t retried;	/* dead jobs put back by mq retry */
	uint64_t archived;
	uint64_t purged;	/* waiting or running jobs deleted by purge */
};

/** Counts of one queue. */
struct mq_queue_stats {
	char queue[MQ_QUEUE_MAX + 1];
	size_t queue_len;	/* a name another program wrote may hold NUL */
	uint64_t ready;		/* due now */
	uint64_t scheduled;	/* due later */
	uint64_t waiting;	/* waiting for parents (mq push --after) */
	uint64_t leased;	/* claimed, stale ones included */
	uint64_t stale;		/* claimed, lease expired */
	uint64_t done, dead;
	uint64_t recurring;	/* recurring jobs, ready or leased */
	int paused;
	double oldest_ready_s;	/* age of the oldest due job, 0 if none */
	struct mq_counters total;
	uint32_t concurrency;	/* its limits (mq-limit(1)); 0: none */
	uint32_t per_key;
	uint32_t rate;		/* claims of the queue in any window */
	uint64_t rate_us;	/* of this length; 0, 0: none */
	uint32_t key_rate;	/* claims of one key in any window */
	uint64_t key_rate_us;	/* of this length; 0, 0: none */
	uint64_t held_back;	/* due jobs a limit holds back now */
};

/**
 * Per-queue counts (of queue only, if not NULL), sorted by queue name,
 * and the archive's job count. Free *qs with free(). Done, dead and
 * archived jobs come from <table>_counts, which mq's writes keep.
 */
enum mq_status mq_stats(struct mq_conn *c, const char *queue,
    struct mq_queue_stats **qs, size_t *n, uint64_t *archived);

/**
 * The names of the queues mq_stats would show, sorted, with no figure:
 * those with jobs in the table (a loose index scan of the claim index),
 * with settings (paused, limited) and with counts (their jobs all
 * archived), for shell completion. Free *qs.
 */
enum mq_status mq_queue_names(struct mq_conn *c, struct mq_queue_stats **qs,
    size_t *n);

/**
 * Counts the finished and archived jobs again, from the tables, into
 * <table>_counts: after rows were changed by hand. Reads the whole claim
 * index and the archive; writers need not stop.
 */
enum mq_status mq_recount(struct mq_conn *c);

/* ---- archive ---- */

/** Which finished jobs to move. */
struct mq_archive_opts {
	int64_t older_than_us;	/* finished longer ago than this */
	unsigned batch;		/* jobs per transaction */
	int dead;		/* dead jobs too, not only done ones */
	int purge;		/* delete instead of moving */
	/* if not NULL: called after each batch commits, with its jobs */
	void (*progress)(uint64_t jobs, void *ctx);
	void *ctx;		/* for progress */
};

/**
 * Moves finished jobs to <table>_archive (or deletes them), one short
 * transaction per batch: insert the batch, delete it by primary key.
 * *moved counts the jobs moved, also when a later batch fails.
 */
enum mq_status mq_archive(struct mq_conn *c, const struct mq_archive_opts *o,
    uint64_t *moved);

/* ---- retry ---- */

/** Why mq_retry left a job as it was. */
enum mq_retry_skip {
	MQ_RETRY_NOT_DEAD,	/* a given id: not a dead job, or no job */
	MQ_RETRY_DEDUP,		/* its dedup key is live again */
	MQ_RETRY_PARENTS	/* a dependent with a parent not done that
				 * can never finish: gone (purged), or dead
				 * in the archive (mq push --after) */
};

/** Which dead jobs to put back, and how. */
struct mq_retry_opts {
	const uint64_t *ids;	/* these jobs (n_ids of them); NULL: by
				 * the filter */
	size_t n_ids;
	const char *queue;	/* the filter: this queue's dead jobs */
	const char *error;	/* whose last error contains this, or NULL */
	size_t error_len;
	int64_t since_us;	/* finished at most this long ago; < 0: any */
	int64_t before_us;	/* finished longer ago than this; < 0: any */
	const char *to_queue;	/* into this queue; NULL: their own */
	unsigned batch;		/* jobs per transaction (default 100) */
	double rate;		/* at most this many jobs a second; 0: no
				 * limit */
	int dry_run;		/* change nothing: fn gets each job */
	/* each job a dry run would retry (if not NULL), by id */
	void (*fn)(uint64_t id, void *ctx);
	/* each job left as it was, and why (if not NULL) */
	void (*skipped)(uint64_t id, enum mq_retry_skip why, void *ctx);
	/* after each batch commits, with its jobs (if not NULL) */
	void (*progress)(uint64_t jobs, void *ctx);
	/* between batches: waits up to us microseconds (the rate's pause,
	 * 0: none); nonzero stops the retry (if NULL: sleeps) */
	int (*between)(int64_t us, void *ctx);
	void *ctx;		/* for fn, skipped, progress and between */
};

/** What mq_retry did (or would do). */
struct mq_retry_report {
	uint64_t retried;	/* back to ready (dry run: would be) */
	uint64_t not_dead;	/* given ids not dead or not found */
	uint64_t dedup;		/* left dead: dedup key live again */
	uint64_t parents;	/* left dead: a parent can never finish
				 * (dry run: would be, o->skipped too) */
	uint64_t stay_dead;	/* dependents the retried jobs cancelled
				 * when they died, dead after the run:
				 * they stay dead (each counted once) */
	uint64_t wait_again;	/* retried dependents that wait again for
				 * parents not done (mq push --after) */
	int stopped;		/* between() asked to stop */
};

/**
 * Puts dead jobs back to ready: due now, attempts 0, the last error
 * kept, a "retried" history row each; into o->to_queue if set. One
 * short transaction per batch, the rows locked (SKIP LOCKED where the
 * server has it: concurrent retries take disjoint jobs), counted in it;
 * then the target queue's waiters are woken. A job whose dedup key is
 * live again in its queue stays dead (o->skipped). rep counts what was
 * done, also when a later batch failed.
 */
enum mq_status mq_retry(struct mq_conn *c, const struct mq_retry_opts *o,
    struct mq_retry_report *rep);

/* ---- queues: pause, resume, purge ---- */

/** Pauses (paused = 1) or resumes a queue; *changed if it was not so. */
enum mq_status mq_set_paused(struct mq_conn *c, const char *queue,
    int paused, int *changed);

/**
 * A queue's limits (<table>_queues; mq-limit(1)), enforced at claim
 * time: 0 is no limit. concurrency: jobs of the queue holding a live
 * lease at once; per_key: of one key. rate claims of the queue in any
 * rate_us microseconds, key_rate of one key in key_rate_us (both of a
 * pair set, or both 0).
 */
struct mq_limits {
	uint32_t concurrency;
	uint32_t per_key;
	uint32_t rate;
	uint64_t rate_us;
	uint32_t key_rate;
	uint64_t key_rate_us;
};

/** Which limits mq_limits_set writes (bits); the others stay. */
#define MQ_LIMIT_CONCURRENCY 1u
#define MQ_LIMIT_PER_KEY 2u
#define MQ_LIMIT_RATE 4u	/* rate and rate_us */
#define MQ_LIMIT_KEY_RATE 8u	/* key_rate and key_rate_us */
#define MQ_LIMIT_ALL 15u

/**
 * Sets the limits of queue that which names to l's values (0: none,
 * NULL in the table), one upsert of its row in <table>_queues; the
 * others, and whether it is paused, stay. MQ_EINVAL for a bad queue
 * name or half a rate.
 */
enum mq_status mq_limits_set(struct mq_conn *c, const char *queue,
    unsigned which, const struct mq_limits *l);

/** The limits of queue into *l (all 0 if it has no row), as claims obey
 * them: half a rate (rate or its window NULL or 0) is none, both 0. */
enum mq_status mq_limits_get(struct mq_conn *c, const char *queue,
    struct mq_limits *l);

/**
 * Deletes a queue's waiting jobs (ready, scheduled), and its leased ones
 * too if leased; by primary key in batches. *deleted counts them.
 */
enum mq_status mq_purge(struct mq_conn *c, const char *queue, int leased,
    uint64_t *deleted);

/* ---- inspect: one job, lists of jobs (inspect.c) ---- */

/** A job's state as an operator reads it: the stored state, with ready
 * split by its due time (due now, later, or waiting for its parents: mq
 * push --after) and leased by its deadline (sql_terms.h). Invalid: a
 * state that is none of mq's ('', what a session without strict mode
 * stores for a value not in the ENUM): not claimed, not counted, until
 * requeue-stale buries it (mq-queue(7), CONSTRAINTS). */
enum mq_state {
	MQ_ST_READY, MQ_ST_SCHEDULED, MQ_ST_WAITING, MQ_ST_LEASED,
	MQ_ST_STALE, MQ_ST_DONE, MQ_ST_DEAD, MQ_ST_INVALID, MQ_ST_ARCHIVED,
	MQ_ST_COUNT
};

/** The state's name ("ready", ...), or NULL; and back (-1 if none). */
const char *mq_state_name(enum mq_state s);
int mq_state_parse(const char *s, size_t len);

/** The due time of a dependent that waits for its parents (mq push
 * --after), in microseconds since 1970: 9999-12-31 23:59:59.999999 UTC,
 * which no claim reaches (struct mq_job_info's available_epoch_us). */
#define MQ_WAITING_EPOCH_US 253402300799999999LL

/** Length of an ISO time text, "2026-01-02T03:04:05Z", and its NUL. */
#define MQ_ISO_SIZE 21

/** One job, every column; times as UTC ISO text ("" if NULL) and as
 * microseconds from the server's now (after - before, set when the time
 * is). Bytes from the table keep their length: another program may have
 * written anything. */
struct mq_job_info {
	uint64_t id;
	int archived;		/* found in <table>_archive */
	enum mq_state state;	/* MQ_ST_ARCHIVED if archived */
	char stored_state[8];	/* the state column: ready, leased, ... */
	char queue[MQ_QUEUE_MAX + 1];
	size_t queue_len;
	int priority;
	unsigned attempts, max_attempts;
	int paused;		/* its queue is paused now */
	char created_at[MQ_ISO_SIZE], available_at[MQ_ISO_SIZE];
	char leased_until[MQ_ISO_SIZE], finished_at[MQ_ISO_SIZE];
	char archived_at[MQ_ISO_SIZE];
	int64_t age_us;		/* now - created_at */
	int64_t due_in_us;	/* available_at - now */
	int64_t available_epoch_us;	/* available_at, exact */
	int has_lease;		/* leased_until is set */
	int64_t lease_left_us;	/* leased_until - now */
	int has_finished;
	int64_t finished_ago_us;	/* now - finished_at */
	int64_t every_us;	/* 0: not recurring */
	char leased_by[256];
	size_t leased_by_len;	/* 0: none */
	unsigned char *error;	/* last_error, malloc'ed; NULL: none */
	size_t error_len;
	unsigned char *payload;	/* malloc'ed (mq_job_get only) */
	size_t payload_len;
	unsigned char dedup_key[256];
	size_t dedup_len;
	int has_dedup;
	int has_token;		/* a lease token is set */
	char every_anchor[MQ_ISO_SIZE];	/* recurring: "" if not */
	unsigned char key[MQ_KEY_MAX + 1];	/* job_key (not terminated) */
	size_t key_len;
	int has_key;
	char if_parent_dies[8];	/* a dependent (mq push --after): cancel,
				 * run or wait; "" if not one */
	int may_have_deps;	/* a dependent, or a parent (dependents were
				 * pushed after it), or archived: see
				 * mq_job_deps; 0: neither */
};

/** Frees what a struct mq_job_info holds (not the struct). */
void mq_job_info_free(struct mq_job_info *j);

/**
 * One job by id, from the job table or else the archive (j->archived),
 * with whether its queue is paused: one statement. MQ_EMPTY if neither
 * table has it. Free with mq_job_info_free.
 */
enum mq_status mq_job_get(struct mq_conn *c, uint64_t id,
    struct mq_job_info *j);

/**
 * How many due jobs of j's queue a claim takes before j (by priority,
 * due time, id), counting up to max; j must be ready.
 */
enum mq_status mq_job_ahead(struct mq_conn *c, const struct mq_job_info *j,
    uint64_t max, uint64_t *n);

/** A job holding a slot of a limit: a live lease of its queue. */
struct mq_slot_holder {
	uint64_t id;
	char leased_by[256];
	size_t leased_by_len;	/* 0: none */
	char leased_until[MQ_ISO_SIZE];
	int64_t lease_left_us;	/* leased_until - now */
};

/** The holders mq_job_held lists per limit, at most. */
#define MQ_HOLDERS_MAX 10

/** The slots of one limit: its size, how many are held now (live
 * leases; above the limit when it was lowered under them), and, when
 * they are all held, the first MQ_HOLDERS_MAX holders, the lease that
 * ends first first. */
struct mq_slots {
	uint32_t limit;		/* 0: no such limit (nothing counted) */
	uint64_t held;
	size_t n;		/* holders listed */
	struct mq_slot_holder holder[MQ_HOLDERS_MAX];
};

/** A rate limit's window now (mq-limit(1) --rate, --key-rate). */
struct mq_rate_window {
	uint32_t rate;		/* 0: no such limit (nothing read) */
	uint64_t window_us;
	uint64_t used;		/* claims in the window now */
	int64_t next_us;	/* when the oldest of them leaves it */
};

/** Whether a limit of its queue holds a ready job back now. */
struct mq_job_hold {
	struct mq_slots queue;	/* concurrency: the queue's live leases */
	struct mq_slots key;	/* per_key: its key's (a job without a key:
				 * not counted) */
	int by_queue, by_key;	/* that limit's slots are all held */
	struct mq_rate_window queue_rate, key_rate;
	int by_queue_rate, by_key_rate;	/* that window is full */
};

/**
 * What the limits of j's queue (mq-limit(1)) make of j now: each limit
 * that applies counted (one range of the index held), and the holders
 * of a full one listed. A queue without limits, or whose name mq could
 * not have written (its claims never read limits for it), counts
 * nothing. Read only, no locks: the next claim may see otherwise.
 */
enum mq_status mq_job_held(struct mq_conn *c, const struct mq_job_info *j,
    struct mq_job_hold *h);

/** The related jobs mq_job_deps lists, of each kind, at most. */
#define MQ_DEPS_LISTED 10

/** A parent or a dependent of a job. */
struct mq_dep {
	uint64_t id;
	int met;		/* its edge is met (the parent is done, or dead
				 * and the dependent runs anyway) */
	char state[16];		/* mq_state_name's, or "deleted" (purged) */
};

/** A job's dependencies (mq push --after). */
struct mq_job_deps {
	uint64_t parents;	/* its parents (0: not a dependent) */
	uint64_t not_done;	/* of them, not met yet */
	uint64_t children;	/* its dependents */
	size_t nparent, nwaiting, nchild;	/* listed */
	struct mq_dep parent[MQ_DEPS_LISTED];	/* the first parents, by id */
	uint64_t waiting[MQ_DEPS_LISTED];	/* the first not met, by id */
	struct mq_dep child[MQ_DEPS_LISTED];	/* the first dependents */
};

/**
 * The dependencies of job id (in the job table or the archive): how many
 * parents it has, how many of them are not met yet, how many dependents,
 * and the first MQ_DEPS_LISTED of each by id, with their states: one
 * statement, each list bounded. A job without any gives all 0.
 */
enum mq_status mq_job_deps(struct mq_conn *c, uint64_t id,
    struct mq_job_deps *d);

/** One event of a job's history (<table>_history). */
struct mq_history_entry {
	uint64_t seq;		/* the order they happened in */
	char event[8];		/* failed, expired, retried */
	char state[8];		/* where it left the job: ready, dead */
	unsigned attempt;	/* the job's attempts then */
	char at[MQ_ISO_SIZE];
	int64_t ago_us;		/* now - at */
	char worker[256];	/* the lease holder, host:pid */
	size_t worker_len;	/* 0: none */
	const unsigned char *error;	/* NULL: none; valid during the call */
	size_t error_len;
};

/** Called for each event of a history; nonzero stops the reading. */
typedef int (*mq_history_fn)(const struct mq_history_entry *h, void *ctx);

/**
 * The history of job id, in the job table or the archive, event by event
 * in the order they happened: one statement, one range of the history's
 * primary key. No event (or no such job) calls fn never.
 */
enum mq_status mq_job_history(struct mq_conn *c, uint64_t id,
    mq_history_fn fn, void *ctx);

/** Which jobs mq_job_list lists. */
struct mq_list_filter {
	const char *queue;	/* NULL: every queue */
	unsigned states;	/* bits 1u << enum mq_state; 0: all but
				 * archived */
	const char *error;	/* substring of last_error, or NULL */
	size_t error_len;
	int64_t since_us;	/* its time at most this long ago; < 0: any */
	int64_t before_us;	/* its time longer ago than this; < 0: any */
	uint64_t after;		/* ids above this only */
	unsigned limit;		/* 1..MQ_LIST_MAX */
	const char *key;	/* only jobs of this key (mq_valid_key), or
				 * NULL */
	int recurring;		/* only recurring jobs: pushed with --every,
				 * or runs of a calendar schedule */
	const char *schedule;	/* only the runs of this calendar schedule
				 * (a name as mq_valid_queue takes), from
				 * its ledger, or NULL */
};
#define MQ_LIST_DEFAULT 100
#define MQ_LIST_MAX 10000

/** Called for each job listed, in id order; nonzero stops the list. */
typedef int (*mq_job_fn)(const struct mq_job_info *j, void *ctx);

/**
 * Lists the jobs f selects, by ascending id, up to f->limit of them (a
 * job's time: when it finished if it did, else when it was made); *more
 * is set if more follow. Payloads are not read.
 */
enum mq_status mq_job_list(struct mq_conn *c, const struct mq_list_filter *f,
    mq_job_fn fn, void *ctx, int *more);

/* ---- workers: who holds leases (workers.c) ---- */

/** The workers holding leases in one queue: distinct leased_by. */
struct mq_queue_workers {
	char queue[MQ_QUEUE_MAX + 1];
	size_t queue_len;	/* a name another program wrote may hold NUL */
	uint64_t workers;
};

/**
 * Per queue (of queue only, if not NULL) with leased jobs, the number
 * of distinct leased_by among them, read from the lease index. Free
 * *qw with free().
 */
enum mq_status mq_workers(struct mq_conn *c, const char *queue,
    struct mq_queue_workers **qw, size_t *n);

#endif
