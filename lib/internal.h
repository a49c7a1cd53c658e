/*
 * internal.h: what the files of lib/ share and the commands never see:
 * the connection handle, error recording, statement helpers, the
 * transaction retry loop.
 *
 * Layers. A file of lib/ calls functions of files in lower layers only,
 * never of its own layer or above, so calls form no cycle and a change
 * low down is seen by what is above it only (tests/t240 checks this
 * list against the calls):
 * layer 8: pop_wait.c
 * layer 7: fire_due.c stats.c
 * layer 6: schedule.c
 * layer 6: pop.c held.c
 * layer 5: ack.c cancel.c lease.c requeue.c push.c purge.c archive.c
 * layer 5: retry.c confirm.c
 * layer 4: queues.c deps.c deps_read.c
 * layer 4: schema.c inspect.c inspect_list.c history_read.c
 * layer 4: workers.c limits.c
 * layer 4: schedule_runs.c
 * layer 3: counts.c history.c wakeup.c inspect_row.c claim.c gates.c
 * layer 3: candidates.c
 * layer 3: finished.c
 * layer 2: conn.c ids.c yield.c galera.c waiters.c durability.c
 * layer 2: cron_next.c schedfile.c
 * layer 1: client_init.c stmt.c token.c hosts.c
 * layer 1: tz.c
 * layer 0: error.c parse.c
 * layer 0: cron.c tzrule.c schedset.c
 * That is: the error record and the parsers; statements and tokens;
 * connections, id lists and the wakeup of other Galera nodes' waiters;
 * counting, the history, parking and waking waiters, a claim's rows
 * and the gates of limits; the operations (push wakes waiters, it does
 * not claim) and a limited queue's claim; the claim, which carries
 * acks, and what limits hold back; the claim that waits (it claims, and
 * parks in between), and the stats (they count what limits hold back).
 * Beside them, calendar schedules (cron.h; no server): expressions and
 * POSIX TZ rules, a file's schedules held compactly; zone files; the
 * next run. Headers: every file includes internal.h (which
 * includes mq.h, parse.h and the client's mysql.h), and those that build
 * SQL include sql_terms.h, which includes nothing; the readers for
 * operators (inspect*.c) share inspect.h.
 */
#ifndef MQ_INTERNAL_H
#define MQ_INTERNAL_H

#include <mysql.h>

#include "mq.h"
#include "parse.h"

/* The type of MYSQL_BIND's is_null and of boolean options: my_bool in
 * libmariadb and in MySQL's client before 8.0; MySQL 8.0's headers
 * dropped my_bool for bool. libmariadb defines MARIADB_PACKAGE_VERSION
 * (and MARIADB_BASE_VERSION); MySQL's client defines
 * LIBMYSQL_VERSION_ID. Use mq__bool, never my_bool: tests/t241 checks. */
#if defined(MARIADB_PACKAGE_VERSION) || defined(MARIADB_BASE_VERSION) || \
    !defined(LIBMYSQL_VERSION_ID) || LIBMYSQL_VERSION_ID < 80000
typedef my_bool mq__bool;
#else
#include <stdbool.h>
typedef bool mq__bool;
#endif

/* Prepared statements kept for the connection's life: a hot path (claim,
 * ack, extend) then costs one round trip per statement, not three. */
#define MQ_STMT_CACHE 64
struct mq_cached {
	const void *key;	/* the template (static storage) */
	size_t n;		/* and its variant: ids in an IN list */
	MYSQL_STMT *st;
};

/* A statement's text, kept while it is needed: a statement not yet
 * prepared (deferred) has its first execution send the text along
 * (mariadb_stmt_execute_direct), one round trip instead of two; a read
 * (never kept in the cache: stmt.c, is_read) keeps it for its life, so
 * that a second execution of the handle is prepared again first. */
#define MQ_UNPREPARED 16
struct mq_unprepared {
	MYSQL_STMT *st;
	char *sql;		/* expanded text, malloc'ed */
	int deferred;		/* not prepared yet: sent with its execution */
	int read;		/* a read: prepared again when run again */
	int ran;		/* executed (prepared since) */
};

/* Where a non-blocking wait is (wakeup.c): one at a time on a connection,
 * as the client library allows; the caller's struct mq_async holds what
 * it polls for. */
struct mq__async_state {
	int stage, err;
	int pre;		/* statements before the park still to answer */
	int leave;		/* leaving the waiters' rows, not waiting */
};

/* jobs of limited claims remembered with their keys (wakeup.c) */
#define MQ_LEASED_KEYS 64
/* Queues whose dependents a finish made due (deps.c): their waiters are
 * woken once it committed. */
#define MQ_RELEASED_MAX 8

struct mq_conn {
	MYSQL *db;
	struct mq__async_state async;
	struct mq_cached cache[MQ_STMT_CACHE];
	struct mq_unprepared unprepared[MQ_UNPREPARED];
	struct mq_error err;
	char table[MQ_TABLE_MAX + 1];
	unsigned long max_packet;	/* server's max_allowed_packet */
	uint64_t autoinc_step;		/* auto_increment_increment */
	int skip_locked;		/* server has FOR UPDATE SKIP LOCKED */
	int returning;			/* server has INSERT ... RETURNING
					 * (MariaDB 10.5+; limits.c) */
	int galera;			/* a Galera node (wsrep on) */
	unsigned hosts;			/* entries of the list it came from */
	int orphan_elsewhere;		/* mq_orphan_elsewhere */
	int sees_cluster;		/* wsrep_sync_wait set (galera.c) */
	int no_wsrep;			/* MariaDB without wsrep_on */
	int64_t count_slot_base;	/* counts.c: this node's slots */
	uint32_t shares, share;		/* pop.c: claim shares on Galera */
	int wait_joined;		/* rows in <table>_waiters */
	int waiters_off;		/* no <table>_waiters to use */
	int kill_own;			/* may KILL its account's sessions only */
	/* waiters.c: this transaction finished jobs, whose waiters (mq
	 * wait) are woken after its commit; the last read found some
	 * (or the probe did), at this time */
	int finished_unwoken, finish_waiters;
	int64_t finish_checked_us, finish_cleaned_us;
	uint64_t finished_lo, finished_hi;	/* the ids it finished */
	int read_committed;		/* the session's isolation is set */
	int in_tx;			/* inside mq__in_tx's transaction */
	/* Galera: a statement was prepared in this transaction since the
	 * server last said it was open; and it said it is not (stmt.c,
	 * tx_gone) */
	int tx_unsure, tx_lost;
	int may_commit;			/* the statement in flight commits */
	int one_try;			/* retry loops try once (pop.c) */
	/* claims whose jobs may be leased to nobody (pop.c): kept until
	 * the caller takes them (mq_take_orphans) */
	struct mq_orphan orphans[MQ_ORPHANS_MAX];
	size_t norphans;
	int64_t retry_until_us;		/* none begins after (0: none) */
	int64_t read_timeout_us;	/* the client's: retries' budget */
	int (*stop_pending)(void);	/* the caller would rather stop */
	int wait_said_due;		/* the last wait ended: a job is due */
	int wait_wakes_known;		/* the last wait read wait_wakes */
	uint64_t wait_wakes;		/* its rows' wakes then, summed */
	struct mq_fire_state fire;	/* mq_pop_wait fires schedules */
	char released[MQ_RELEASED_MAX][MQ_QUEUE_MAX + 1];
	uint64_t released_n[MQ_RELEASED_MAX];
	size_t nreleased;		/* deps.c: woken after the commit */
	int has_limits;			/* a queue of the table had limits
					 * and waiters when it was opened
					 * (mq_use_table): acks wake them */
	int limit_held;			/* the last claim: limits held due
					 * jobs back */
	int64_t limit_retry_us;		/* the last claim: a rate lets one
					 * through in this long (0: none) */
	unsigned limit_lost;		/* the claim's limited transactions
					 * begun again: others took what
					 * they chose (limits.c) */
	/* queues the last claims found limited (pop.c): claimed by the
	 * limited claim first, not by the plain one that passes them
	 * over ("": a free place) */
	char limited_seen[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	/* queues whose last plain claim was short (pop.c): claimed by the
	 * due index first, not by the claim index, which walks the rows
	 * due later */
	char short_seen[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	/* Galera (claim.c): queues whose node's-share window was short at
	 * the last claim (read by the due index next), and those whose
	 * window by the due index came back full (not again until the
	 * queue has nothing due) */
	char short_window_seen[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	char full_window_seen[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	int acked_one_child;		/* the last ack of one receipt was
					 * of a parent of one dependent
					 * (ack.c) */
	/* the settings of limited queues as their last claims read them
	 * (limits.c): a claim uses them without reading them first, and
	 * its candidates' read says whether they are still those */
	struct mq_limit_cache {
		char queue[MQ_QUEUE_MAX + 1];	/* "": a free place */
		uint32_t concurrency, per_key, rate, key_rate;
		uint64_t rate_us, key_rate_us;
	} limit_cache[MQ_QUEUES_MAX];
	/* the last jobs limited claims took, with their queue and key
	 * (limits.c): an ack whose claim took a job of the same queue and
	 * key again freed no slot, and wakes nobody for it (wakeup.c) */
	struct mq_leased_key {
		uint64_t id;			/* 0: a free place */
		char queue[MQ_QUEUE_MAX + 1];
		unsigned char key[255];
		unsigned short key_len;
		unsigned char has_key;
	} leased_keys[MQ_LEASED_KEYS];
	size_t leased_next;
	char session[2048];		/* what every session sets (conn.c) */
	char leased_by[256];		/* host:pid written on claims */
	char want_db[65];		/* the database asked for, "" if none */
	char server[128];		/* @@hostname:@@port (schema.c) */
	int64_t connected_us;		/* mq_now_us() once connected */
	/* confirm.c: the settings it was made with (their strings are the
	 * caller's), the list of hosts it came from ("" if one host), and
	 * the connection to another node of it that reads each claim; what
	 * the last claim's reading found not the claim's */
	struct mq_connopts opts;
	char list[1024];
	struct mq_conn *confirm;
	char confirm_node[64];		/* a confirming one's gcomm uuid */
	struct mq__node {		/* a Galera node (confirm.c) */
		char gcomm[64], cluster[64], not_ready[160], size[24];
	} self_node;			/* its own node, read once */
	char unconfirmed[512];
};

/* Records a failure that is not the server's; returns st. */
enum mq_status mq__fail(struct mq_conn *c, enum mq_status st,
    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records the server's failure on stmt (or on the connection if NULL),
 * prefixed by what was being done; returns the classified status. */
enum mq_status mq__dberr(struct mq_conn *c, MYSQL_STMT *stmt,
    const char *what);

/* Maps a server or client error number to a status. */
enum mq_status mq__classify(unsigned err);

/* Fills an mq_error from a MYSQL handle, for callers without an mq_conn. */
void mq__error_from_db(struct mq_error *e, MYSQL *db, const char *what);

/* Returns tmpl with every {{TABLE}} replaced by table and every {{LOCK}}
 * by lock (NULL: nothing), malloc'ed. */
char *mq__expand(const char *tmpl, const char *table, const char *lock);

/* Prepares the statement of key (a template in static storage) and
 * variant n, from text (a template, expanded here) unless the connection
 * has it already; release it with mq__release. NULL with c->err set.
 * A read (text with a SELECT) is never kept: it is prepared for this
 * use (mq__prepare_once), since the server does not plan a read's
 * later executions as its first (stmt.c, is_read). */
MYSQL_STMT *mq__prepare_keyed(struct mq_conn *c, const void *key, size_t n,
    const char *text);

/* Prepares text (a template) for one use; release it with mq__release. */
MYSQL_STMT *mq__prepare_once(struct mq_conn *c, const char *text);

/* Done with st: a cached statement is reset for its next use, another one
 * closed. */
void mq__release(struct mq_conn *c, MYSQL_STMT *st);

/* Closes the cached statements (on a new table, and at mq_close). */
void mq__forget_statements(struct mq_conn *c);

/* Prepares tmpl (a template in static storage), cached: as
 * mq__prepare_keyed(c, tmpl, 0, tmpl).
 * {{LOCK}} becomes the locking clause of batch reads: SKIP LOCKED where
 * the server has it, so concurrent runs take disjoint rows; plain FOR
 * UPDATE elsewhere, where they wait and then find the rows moved. */
MYSQL_STMT *mq__prepare(struct mq_conn *c, const char *tmpl);

/* Binds params (may be NULL), executes; returns MQ_OK or the error. */
enum mq_status mq__execute(struct mq_conn *c, MYSQL_STMT *st,
    MYSQL_BIND *params, const char *what);

/* As mq__execute, for one autocommitted statement: a deadlock or lock wait
 * timeout rolled it back whole, so it is run again (bounded). */
enum mq_status mq__execute_retry(struct mq_conn *c, MYSQL_STMT *st,
    MYSQL_BIND *params, const char *what);

/* MYSQL_BIND fillers. */
void mq__bind_u64(MYSQL_BIND *b, uint64_t *v);
void mq__bind_i64(MYSQL_BIND *b, int64_t *v);
void mq__bind_u32(MYSQL_BIND *b, uint32_t *v);
void mq__bind_i32(MYSQL_BIND *b, int32_t *v);
void mq__bind_str(MYSQL_BIND *b, const char *s, unsigned long *len);
void mq__bind_blob(MYSQL_BIND *b, const void *p, unsigned long *len);
void mq__bind_name(MYSQL_BIND *b, const char *name, unsigned long *len);
void mq__bind_null(MYSQL_BIND *b);
/* A text column read into buf (size bytes at most), its length in *len
 * and NULL-ness in *null. */
void mq__bind_text_out(MYSQL_BIND *b, void *buf, size_t size,
    unsigned long *len, mq__bool *null);
/* Whether a statement or transaction that met a deadlock or a lock
 * wait timeout (attempt, from 0, just failed; the first began at t0)
 * runs again. */
int mq__retry_again(struct mq_conn *c, unsigned attempt, int64_t t0);

/* The connection's socket; and cutting it (shutdown): the server sees a
 * lost connection and rolls back, and the client's next call fails as
 * one (2006/2013). */
int mq__socket(const struct mq_conn *c);
void mq__cut(struct mq_conn *c);

/* mq starts OpenSSL itself, lighter when nothing asks for TLS, where
 * the client library (Connector/C before 3.4) uses TLS only when asked
 * and uses OpenSSL, whose headers are here (MQ_CLIENT_OPENSSL, from
 * meson.build): linked in (MQ_STATIC_CLIENT) or not. Linked dynamically,
 * client_init.c checks the library it runs with as well. */
#if defined(MQ_CLIENT_OPENSSL) && defined(MARIADB_PACKAGE_VERSION_ID) && \
    MARIADB_PACKAGE_VERSION_ID < 30400
#define MQ_LIGHT_CLIENT_INIT 1
#endif

/* Starts the client library, once per process: lighter when nothing
 * asks for TLS (client_init.c says what and why). */
void mq__client_init(const struct mq_connopts *o);

/* Whether o or an option file the library will read asks for TLS: any
 * ssl/tls setting. Always 1 without MQ_LIGHT_CLIENT_INIT. */
int mq__tls_asked(const struct mq_connopts *o);

/* Whether db's connection uses TLS though OpenSSL was started without
 * its configuration (no TLS was asked for, as far as mq could tell):
 * the system's TLS policy was not applied to it. */
int mq__tls_unpoliced(MYSQL *db);

/* The statement that sets what mq relies on in a session, whatever the
 * server's globals and init_connect did (conn.c); the schema probe sends
 * it first, in the round trip it makes anyway. */
const char *mq__session_sql(const struct mq_conn *c);

/* Sets the session to READ COMMITTED (once): call before a transaction
 * that takes locks (claims, batch moves). */
enum mq_status mq__read_committed(struct mq_conn *c);

/* A transaction body; called again from the start after a deadlock. */
typedef enum mq_status (*mq__txfn)(struct mq_conn *c, void *ctx);

/* Runs fn inside START TRANSACTION ... COMMIT, retrying deadlocks and
 * lock wait timeouts a bounded number of times with jittered backoff.
 * fn returning MQ_OK or MQ_EMPTY commits; anything else rolls back. */
enum mq_status mq__in_tx(struct mq_conn *c, mq__txfn fn, void *ctx);
/* A transaction begun on c (START TRANSACTION answered), and whether it
 * is still open when its COMMIT is due (MQ_ERETRY with c->err if the
 * server ended it without saying so: stmt.c, tx_gone); mq__in_tx uses
 * them, and the callers that make their own. */
void mq__tx_begun(struct mq_conn *c);
enum mq_status mq__tx_open(struct mq_conn *c);

/* The ack statements, inside a transaction the caller runs. */
enum mq_status mq__ack_in_tx(struct mq_conn *c, const struct mq_receipt *r,
    size_t n, unsigned char *lost);

/* push.c: one plain job inserted in the caller's transaction (a
 * schedule's run), *id its id; and after the commit, the wakeup of
 * queue's waiters for n jobs due now, as a push does (a failed wakeup
 * is forgotten: they look again within a second). */
enum mq_status mq__push_in_tx(struct mq_conn *c, const struct mq_push_opts *o,
    const void *payload, size_t len, uint64_t *id);
void mq__wake_pushed(struct mq_conn *c, const char *queue, size_t n);

/* Sleeps before retry number attempt (0-based), with jitter. */
void mq__backoff(unsigned attempt);

/* How many times a deadlock or lock wait timeout is retried. */
#define MQ_RETRIES 8

/* Fills buf with MQ_TOKEN_LEN random lowercase hex digits and a NUL. */
enum mq_status mq__token(struct mq_conn *c, char *buf);

/* Executes st (a SELECT of id and, optionally, an int flag) and collects
 * up to max ids, and flags if not NULL. */
enum mq_status mq__select_ids(struct mq_conn *c, MYSQL_STMT *st,
    MYSQL_BIND *params, uint64_t *ids, unsigned char *flags, size_t max,
    size_t *n);

/* The text head, then n times part joined by ",", then tail (a list of
 * placeholders: "?", "(?, ?, 1)"...); malloc'ed, NULL if out of memory. */
char *mq__sql_list(const char *head, const char *part, size_t n,
    const char *tail);

/* Executes head followed by "?,?,...?)" for the n ids (n >= 1), with
 * the npre parameters of head bound first (outside a transaction, run
 * again as mq__execute_retry does); *affected gets the rows changed. head is a template ({{TABLE}}) ending in "id IN (". Lists of
 * up to MQ_IDS_KEPT ids are padded to a power of two (mq__padded) and
 * their statements kept. */
#define MQ_IDS_KEPT 64
size_t mq__padded(size_t n);
enum mq_status mq__exec_ids(struct mq_conn *c, const char *head,
    const MYSQL_BIND *pre, size_t npre, const uint64_t *ids, size_t n,
    uint64_t *affected);
/* As mq__exec_ids, with tail (fixed for head) after the list instead of
 * ")": tail closes the list itself. */
enum mq_status mq__exec_ids_tail(struct mq_conn *c, const char *head,
    const char *tail, const MYSQL_BIND *pre, size_t npre,
    const uint64_t *ids, size_t n, uint64_t *affected);

/* Reads the result of an executed statement (mq__query_ids). */
typedef enum mq_status (*mq__read_fn)(struct mq_conn *c, MYSQL_STMT *st,
    void *ctx);
/* As mq__exec_ids_tail, but read (if not NULL) reads the executed
 * statement; what names a failure ("cannot claim"). */
enum mq_status mq__query_ids(struct mq_conn *c, const char *what,
    const char *head, const char *tail, const MYSQL_BIND *pre, size_t npre,
    const uint64_t *ids, size_t n, mq__read_fn read, void *ctx);
/* The rows of an executed mq__select_ids statement. */
enum mq_status mq__fetch_ids(struct mq_conn *c, MYSQL_STMT *st,
    uint64_t *ids, unsigned char *flags, size_t max, size_t *n);

/* As mq__exec_ids_tail, for a SELECT of ids (as mq__select_ids): collects
 * up to max of them into out. */
enum mq_status mq__select_ids_in(struct mq_conn *c, const char *head,
    const char *tail, const MYSQL_BIND *pre, size_t npre,
    const uint64_t *ids, size_t n, uint64_t *out, size_t max, size_t *got);

/* As mq__select_ids_in, with each row's second column (a small number)
 * in flags. */
enum mq_status mq__select_flagged_in(struct mq_conn *c, const char *head,
    const char *tail, const MYSQL_BIND *pre, size_t npre,
    const uint64_t *ids, size_t n, uint64_t *out, unsigned char *flags,
    size_t max, size_t *got);

/* mq push --after (deps.c). The parents after[0..nafter) (any order,
 * repeats allowed), sorted once (*d; mq__deps_free it): a single push
 * and a stream of them (--lines) keep them for all their batches. Then,
 * in the push's transaction, before the INSERT of its n dependents: the
 * parents written (children + n, once per parent whatever n) and their
 * states read; n 0: read only, no write (a first refusal before a stream
 * is read, outside any transaction: each batch checks again). A parent
 * that does not exist, recurs, or is dead under cancel (dead and
 * archived under wait) fails it (MQ_EPARENT): the transaction rolls
 * back. policy: MQ_AFTER_*. Then, after the INSERT, the edges and shards
 * of the n dependents first, first + step, ... (as the INSERT numbered
 * them), made due at once (*due) if all are met already. */
struct mq__deps;
enum mq_status mq__deps_new(struct mq_conn *c, const uint64_t *after,
    size_t nafter, int policy, struct mq__deps **d);
enum mq_status mq__deps_check(struct mq_conn *c, struct mq__deps *d,
    uint64_t n);
enum mq_status mq__deps_link(struct mq_conn *c, const struct mq__deps *d,
    uint64_t first, uint64_t step, size_t n, int *due);
void mq__deps_free(struct mq__deps *d);
/* What every write that finishes jobs (done or dead: ack, fail,
 * cancel, requeue-stale's burials) does in its transaction after its
 * writes to the jobs (deps.c): counts them (mq__count_finished), then
 * meets the edges of those with dependents, makes due the dependents
 * whose last parent that was, and cancels those a dead parent cancels
 * (counted and finished in turn, and so on). */
enum mq_status mq__finished(struct mq_conn *c, const uint64_t *ids,
    size_t n);
/* The same for jobs done (acked), where the caller read which of them
 * have dependents (parents[0..np)): no read more for an ack. one: the
 * caller's locked rows said each of them has one dependent at most
 * (children = 1, which counts every dependent pushed after it). */
enum mq_status mq__acked(struct mq_conn *c, const uint64_t *ids, size_t n,
    const uint64_t *parents, size_t np, int one);
/* mq purge, in its transaction, before it deletes ids[0..n) (live jobs,
 * locked): those of them that have dependents, ascending, into
 * parents[0..*np) (n at most). */
enum mq_status mq__deps_purging(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *parents, size_t *np);
/* mq purge, in the same transaction, once it deleted ids[0..n): their
 * own edges and shards, as dependents, go; then the dependents of
 * parents[0..np) (mq__deps_purging's) cannot wait for them any more:
 * those that run anyway are met, the others cancelled ("parent N was
 * purged") and finished in turn. A dependent the purge deleted is not
 * in the job table any more, and no other is passed over. */
enum mq_status mq__deps_purged(struct mq_conn *c, const uint64_t *ids,
    size_t n, const uint64_t *parents, size_t np);
/* mq archive --dead, in its transaction, once it deleted ids[0..n) (dead
 * jobs, archived or purged): the dead dependents that did not meet them
 * can never be retried any more, nor finish; those waiting for them
 * (--if-parent-dies wait, or made to wait again by mq retry) are
 * cancelled, and theirs in turn, as below a purged job. */
enum mq_status mq__deps_archived(struct mq_conn *c, const uint64_t *ids,
    size_t n);
/* After the commit of a finish (wakeup.c): wakes the waiters of the
 * queues whose dependents it made due (mq__finished, mq__acked,
 * mq__deps_purged noted them in c->released) and forgets them, then
 * those waiting for jobs to finish (mq__wake_finish_waiters). Errors
 * are not the caller's: the waiters look again within seconds. */
void mq__wake_after_commit(struct mq_conn *c);
/* mq retry, in its transaction after it made ids[0..n) ready: those of
 * them that have dependents into parents[0..*nparents) (n at most), and
 * adds to *wait_again those of them that are dependents waiting again
 * for parents not done. */
enum mq_status mq__deps_retried(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *parents, size_t *nparents, uint64_t *wait_again);
/* mq retry, after its run: *stay_dead gets how many dependents the
 * retried parents[0..n) (each once) cancelled when they died are dead
 * now, each counted once (by the parent its error names). */
enum mq_status mq__deps_stay_dead(struct mq_conn *c, const uint64_t *parents,
    size_t n, uint64_t *stay_dead);
/* mq retry: the dependents among ids[0..n) (ascending) that cannot wait
 * again (a parent not done is gone, or dead in the archive), in out[0..
 * *got), ascending. Writes their parents not done first (deps.c), and
 * adds the rows so written to *rows. */
enum mq_status mq__deps_unretriable(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *out, size_t *got, uint64_t *rows);
/* The same read alone, for mq retry --dry-run: it writes nothing, so
 * an archive or a purge at the same moment may change the answer a real
 * run then gets. */
enum mq_status mq__deps_unretriable_read(struct mq_conn *c,
    const uint64_t *ids, size_t n, uint64_t *out, size_t *got);
/* The edges and shards of ids[0..n) as dependents, which leave the
 * table (archive): as parents, theirs stay while their dependents do.
 * The rows deleted are added to *rows (NULL: not counted). */
enum mq_status mq__deps_forget(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *rows);

/* The counting half of mq__finished (deps.c): adds the jobs among
 * ids[0..n) that are now done or dead to the counts of their queues (a
 * recurring job an ack made due again is not counted). After the
 * writes, so that count rows are locked after job rows (in key order
 * within a statement; only mq work's claim, carrying acks first, takes
 * job rows after them, with SKIP LOCKED, which never waits). */
enum mq_status mq__count_finished(struct mq_conn *c, const uint64_t *ids,
    size_t n);

/* The same for finished jobs leaving the table (archive, --purge), while
 * they are still there to be grouped: takes them off done and dead, and
 * adds them to "archived" if archived. *written (if not NULL) gets the
 * count rows' changes, as the server's handlers count. */
enum mq_status mq__count_removed(struct mq_conn *c, int archived,
    const uint64_t *ids, size_t n, uint64_t *written);

/* The counter of an event (failed, requeued, retried, purged: counts
 * that are counters only) goes up by one for each of ids[0..n) (only
 * those in queue only, if not NULL), in the queue each is in now. In
 * the transaction of the write. */
enum mq_status mq__count_event(struct mq_conn *c, const char *event,
    const char *only, const uint64_t *ids, size_t n);

/* History (history.c): a row per job of ids[0..n) for event (failed,
 * expired, retried), with the state, attempts and lease holder each job
 * has now and error (NULL: none); in the transaction of the write,
 * after it. And the rows of jobs being deleted. */
enum mq_status mq__history_add(struct mq_conn *c, const char *event,
    const void *error, size_t error_len, const uint64_t *ids, size_t n);
enum mq_status mq__history_delete(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *rows);

/* Bulk work that gives way to others (yield.c): after a batch that
 * began at t0 and wrote own rows itself, the pause in microseconds that leaves the
 * server to other writers, 0 when there are none. */
struct mq__yield {
	uint64_t written;
	int64_t busy_at;
};
void mq__yield_start(struct mq_conn *c, struct mq__yield *y);
int64_t mq__yield_pause(struct mq_conn *c, struct mq__yield *y, int64_t t0,
    uint64_t own);

/* Galera: wakes up to n consumers waiting on queue on the other nodes
 * (waiters.c), after a push's commit, or in its transaction (_in_tx;
 * mq__wakes_nodes says whether there is anything to do). Nothing
 * elsewhere. mq__wake_local: the pusher's node only (KILL QUERY). */
int mq__wakes_nodes(const struct mq_conn *c);
/* Whether waiters write their rows in <table>_waiters and pushers read
 * them (on one server too): not where the table cannot be used. */
int mq__uses_waiters(const struct mq_conn *c);
/* The most waiters one wakeup wakes (a push of more jobs wakes this many:
 * those it leaves find the jobs with their next check). */
#define MQ_WAKE_MAX 1024
/* Wakes up to n sessions waiting on queue on this server or node, read
 * from the waiters table (waiters.c). */
enum mq_status mq__wake_registered(struct mq_conn *c, const char *queue,
    size_t n, uint64_t *woken);
/* KILL QUERY of each of the n sessions ids, in one round trip (one more
 * after each that fails); *woken counts those done, fate (n, or NULL)
 * says what became of each. */
enum { MQ_KILLED, MQ_KILL_GONE, MQ_KILL_DENIED };
enum mq_status mq__kill_queries(struct mq_conn *c, const uint64_t *ids,
    size_t n, uint64_t *woken, unsigned char *fate);
enum mq_status mq__wake_nodes(struct mq_conn *c, const char *queue,
    uint64_t n);
enum mq_status mq__wake_nodes_in_tx(struct mq_conn *c, const char *queue,
    uint64_t n);
enum mq_status mq__wake_local(struct mq_conn *c, const char *queue,
    uint64_t n, uint64_t *woken);
/* waiters.c: after a commit that finished jobs (c->finished_unwoken,
 * their ids between c->finished_lo and _hi: mq__note_finished), the
 * mq wait sessions waiting for them are woken; errors are forgotten
 * (they look again within seconds). */
void mq__wake_finish_waiters(struct mq_conn *c);
void mq__note_finished(struct mq_conn *c, const uint64_t *ids, size_t n);
/* The DELETE of this node's rows of waiters whose session ended, into
 * buf (at least mq__sql_dead_waiters_max() bytes): those of every queue
 * (finish 0: a Galera waiter as it joins) or mq wait's (1); its
 * length. */
size_t mq__sql_dead_waiters(char *buf, size_t size, const char *table,
    int finish);
size_t mq__sql_dead_waiters_max(void);

/* waiters.c: the statement that deletes this waiter's rows (malloc'd;
 * NULL: c->err), and the same run in a claim's transaction (*left: it
 * did, and the commit ends the wait: c->wait_joined is then the
 * caller's to clear). */
char *mq__leave_sql(struct mq_conn *c);
enum mq_status mq__leave_in_tx(struct mq_conn *c, int *left);

/* The reads whose index matters, shared with the test that EXPLAINs
 * them. */
/* galera.c: on a Galera node, what mq needs of it (MQ_ECONFIG if not
 * there) and what it is; all 0 elsewhere. */
enum mq_status mq__galera_check(struct mq_conn *c,
    struct mq_galera_report *g);
/* ack.c: on Galera, each receipt of r[0..n) that looked lost (lost[i])
 * acked once more after this node caught up with the cluster; lost[i]
 * cleared for those it acked. */
enum mq_status mq__ack_lost_again(struct mq_conn *c,
    const struct mq_receipt *r, size_t n, unsigned char *lost);

/* confirm.c: on a Galera node, with a list of hosts to find another node
 * in, the jobs[0..*n) of a claim c committed are read on another node,
 * once it applied what the cluster committed before: those it does not
 * show leased with their token are dropped (freed; *n lowered) and said
 * in c->unconfirmed, MQ_EUNKNOWN if none is left. MQ_EUNAVAIL (jobs
 * untouched) when no other node could be asked and the cluster has
 * others. Elsewhere nothing is read. */
enum mq_status mq__confirm_claim(struct mq_conn *c, struct mq_job *jobs,
    size_t *n);

/* hosts.c: a list of servers ("db1,db2:3307,[::1]:3308"): whether host
 * is one (a comma in it); its entry i (MQ_EMPTY past the last;
 * MQ_ECONFIG with err filled if it is not valid); whether the node db
 * is connected to may be used (not a Galera node, or one Synced in the
 * primary component: else 0, and why says so). */
int mq__host_list(const char *host);
enum mq_status mq__host_entry(const char *list, size_t i, char *host,
    size_t size, unsigned *port, struct mq_error *err);
int mq__node_ready(MYSQL *db, char *why, size_t size);

/* durability.c: the settings under which an answered COMMIT may be lost
 * in a crash (mq init warns of them). */
enum mq_status mq__durability_check(struct mq_conn *c,
    struct mq_durability_report *d);

/* galera.c: the session's statements wait until this node has applied
 * what the cluster committed before them (wsrep_sync_wait), until
 * mq__caught_up puts its setting back; mq__in_tx so, or lost if that
 * cannot be set. */
enum mq_status mq__see_cluster(struct mq_conn *c);
enum mq_status mq__catch_up(struct mq_conn *c);
void mq__caught_up(struct mq_conn *c);
enum mq_status mq__in_tx_caught_up(struct mq_conn *c, mq__txfn fn,
    void *ctx, enum mq_status lost);

extern const char mq__sql_claim_select[], mq__sql_due_priorities[];
extern const char mq__sql_claim_priorities[], mq__sql_claim_priorities_tail[];
extern const char mq__sql_claim_update_priorities[];
extern const char mq__sql_claim_update_priorities_tail[];
extern const char mq__sql_claim_share[], mq__sql_claim_share_due[];
extern const char mq__sql_claim_ids[], mq__sql_claim_ids_tail[];
extern const char mq__sql_claim_update_ids[];
extern const char mq__sql_requeue_pick[];
extern const char mq__sql_archive_pick[];
extern const char mq__sql_archive_awaited[], mq__sql_archive_awaited_tail[];
extern const char mq__sql_retry_pick[];
extern const char mq__sql_stats_queues[];
extern const char mq__sql_stats_live[];
/* mq why's reads: the job by id in both tables, the due jobs ahead. */
extern const char mq__sql_job_get[], mq__sql_job_ahead[];
/* a job's ledger row, a schedule's newest runs (schedule_runs.c) */
extern const char mq__sql_run_of[], mq__sql_schedule_runs[];
/* The slots held in a queue, in a key of it: their live leases
 * (limits.c; binds the queue, then the key). */
extern const char mq__sql_live_queue[], mq__sql_live_key[];
/* What limits hold back (held.c): the holders of the slots of a queue,
 * of a key; a queue's due jobs whose key is full (by per_key, by its
 * key rate, by either). */
extern const char mq__sql_holders_queue[], mq__sql_holders_key[];
extern const char mq__sql_held_by_keys[], mq__sql_held_by_key_rate[];
extern const char mq__sql_held_by_keys_or_rate[];
/* The due jobs of q a limit holds back now into q->held_back, from its
 * limits and ready count (mq_stats, in its snapshot). */
enum mq_status mq__held_back(struct mq_conn *c, struct mq_queue_stats *q);
/* mq show's read of a job's history (history_read.c). */
extern const char mq__sql_history_get[], mq__sql_job_deps[];
/* The dependents of dead or purged parents to cancel, a round, and
 * their cancellation by their edges (deps.c). */
extern const char mq__sql_doomed[], mq__sql_doomed_tail[];
extern const char mq__sql_cancel_doomed[];
/* The statements that meet the edges of finished parents, head and tail
 * (deps.c: a dependent's last parent at once, lower the shards, the
 * dependents' parent_shards, make due, the queues made due, mark met),
 * binding the flag (but the queues' read) and the parents. */
#define MQ_SQL_MEETS 6
extern const char *const mq__sql_meet[MQ_SQL_MEETS][2];
/* mq top's count of the workers holding leases (workers.c). */
extern const char mq__sql_workers[];
/* mq_job_list's statement for f (inspect_list.c), a template, malloc'ed.
 * Its parameters, in order, those of f's filters that are set: per
 * table read (the jobs, then the archive) queue, error pattern, since,
 * before, after, limit; then the limit again if both are read. */
char *mq__list_sql(const struct mq_list_filter *f);
/* The ack's locking read: head, "?,?,...", pairs, "(?,?),...", tail. */
extern const char mq__sql_ack_lock[], mq__sql_ack_lock_pairs[],
    mq__sql_ack_lock_tail[];

/* The slots that acks of r[0..n) ended (lost[i] 0: acked) wake the
 * waiters a limit held back (ack.c, mq__wake_freed). */
void mq__wake_acked(struct mq_conn *c, const struct mq_receipt *r,
    size_t n, const unsigned char *lost);

/* After a claim that carried acks committed (wakeup.c): the waiters of
 * the slots the acks ended and of the dependents they made due, less
 * what jobs[0..njobs), leased in the acks' transaction, took again (a
 * job of the same queue and key as an acked one, both taken by this
 * connection's limited claims, mq__leased_key; a dependent: a chain's
 * next link), then as mq__wake_after_commit. */
void mq__wake_after_claim(struct mq_conn *c, const struct mq_receipt *r,
    size_t n, const unsigned char *lost, const struct mq_job *jobs,
    size_t njobs);

/* Remembers that job id of queue, of key (NULL: none), was taken by a
 * limited claim (the last MQ_LEASED_KEYS of them) (wakeup.c). */
void mq__leased_key(struct mq_conn *c, uint64_t id, const char *queue,
    const void *key, size_t key_len);

/* Writes the gate of queue (key NULL: the queue's own) (gates.c). */
enum mq_status mq__gate(struct mq_conn *c, const char *queue,
    const char *key, unsigned long key_len);

/* In an extend's transaction: the gates of the limits that count the
 * lease of job id (its queue's concurrency, its key's per-key limit),
 * written, so that the extend and a claim that counts live leases are
 * in one order: a lease extended just before it ended, committed after
 * a claim counted it ended, would run beside that claim's job. */
enum mq_status mq__gate_job(struct mq_conn *c, uint64_t id);

/* A rate gate's ticks (limits.c): how many, how many in the window, in
 * how many µs the oldest of those leaves it; binds the window three
 * times, the queue, the gate key ('' for the queue's). */
extern const char mq__sql_ticks[];

/* The slots of jobs ids[0..n) ended (acked, failed, given back), their
 * transaction committed: wakes a waiter of a limited queue per slot
 * (limits.c). Nothing (no round trip) where no limited queue had
 * waiters when the table was opened: an ack of an unlimited queue's job
 * costs what it did. A failure changes nothing that matters (waiters
 * look each second). */
void mq__wake_freed(struct mq_conn *c, const uint64_t *ids, size_t n);

/* Used by lib/ alone: not in mq.h. */
/* The strategy AUTO resolves to on this server. */
enum mq_claim mq__server_claim(const struct mq_conn *c);

/*
 * Wakes up to n consumers waiting on queue (KILL QUERY of their marked
 * SLEEP); *woken counts them. Needs to see and kill their threads: the
 * same user, or PROCESS and CONNECTION ADMIN (SUPER before MySQL 8).
 */
enum mq_status mq__wake(struct mq_conn *c, const char *queue, uint64_t n,
    uint64_t *woken);

/*
 * The waits of c are over for now: on a Galera cluster, where a wait
 * writes rows in <table>_waiters for pushers on other nodes to wake it
 * by, deletes them (mq_pop_wait does, once it claimed or gave up).
 * Nothing to do elsewhere, or when no wait wrote them.
 */
enum mq_status mq__wait_leave(struct mq_conn *c);

/*
 * The default retry delay after the given number of attempts: 10 s,
 * doubling with each attempt, at most 1 h, times a jitter factor
 * 0.75 + 0.5u for u in [0, 1).
 */
int64_t mq__backoff_us(unsigned attempts, double u);

/* Gives back, as mq_release() does, every job of queues (a list, as
 * in mq_pop_opts) leased with token; *n of them. */
enum mq_status mq__release_token(struct mq_conn *c, const char *queues,
    const char *token, size_t *n);

#endif
