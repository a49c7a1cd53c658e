/*
 * sql_terms.h: the SQL ideas several statements share, each written
 * once. A statement is a string literal put together from these at
 * compile time, so the server sees the same text as if it were spelled
 * out; what changes in one place changes in every statement that says
 * it.
 *
 * The terms that name a table or a queue take them as arguments, as SQL
 * text: prepared statements pass "{{TABLE}}" (mq__expand fills it) and
 * "?"; the waiter's text query (wakeup.c) passes "%s" and "'%s'", with
 * names validated to [A-Za-z0-9_.-].
 */
#ifndef MQ_SQL_TERMS_H
#define MQ_SQL_TERMS_H

/* The server's clock: every time mq reads or writes comes from it, never
 * from a client's (clients disagree; the server is one). UTC, so that
 * the session's time zone changes nothing. */
#define MQ_SQL_NOW "UTC_TIMESTAMP(6)"
/* The due time of a dependent waiting for its parents (deps.c): the end
 * of DATETIME, which no claim's "due" reaches. */
#define MQ_SQL_WAITING "'9999-12-31 23:59:59.999999'"

/* The time that many microseconds (the parameter) from now. */
#define MQ_SQL_NOW_PLUS_US MQ_SQL_NOW " + INTERVAL ? MICROSECOND"

/* A ready job is due (else scheduled): what a claim takes, and what
 * mq stats counts as ready rather than scheduled. */
#define MQ_SQL_IS_DUE "available_at <= " MQ_SQL_NOW

/* A row of queue q that is ready and due: the equalities and range of
 * the claim index (queue, state, priority, available_at, id) and of the
 * due index (queue, state, available_at). */
#define MQ_SQL_DUE_ROW(q) \
    "queue = " q " AND state = 'ready' AND " MQ_SQL_IS_DUE

/* Whether queue q has a due job, paused or not: one probe of the due
 * index, however many jobs are scheduled for later (the claim index
 * sorts those among the due ones). A constant subquery, evaluated
 * once. Unqualified columns in it are its own table's. */
#define MQ_SQL_ANY_DUE(t, q) \
    "EXISTS (SELECT 1 FROM `" t "` FORCE INDEX (due)" \
    " WHERE " MQ_SQL_DUE_ROW(q) ")"

/* A row of <table>_queues that pauses queue q (a queue never paused
 * has none; a resumed one has paused 0). */
#define MQ_SQL_PAUSED(q) "queue = " q " AND paused"

/* Queue q is not paused. */
#define MQ_SQL_NOT_PAUSED(t, q) \
    "NOT EXISTS (SELECT 1 FROM `" t "_queues` WHERE " MQ_SQL_PAUSED(q) ")"

/* A row of <table>_queues that sets a limit (mq-limit(1); NULL: none).
 * What limits.c enforces: a 0, or half a rate (a row the CHECK did not
 * see: MySQL before 8.0.16, checks off), is no limit, not a queue that
 * nothing claims. */
#define MQ_SQL_LIMITED \
    "(concurrency >= 1 OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)" \
    " OR (key_rate >= 1 AND key_rate_us >= 1))"

/* Queue q is neither paused nor limited: a plain claim may take its
 * jobs (a limited queue's are taken by limits.c's claim, which counts
 * what its limits allow first; a program that claims by the plain
 * statements of mq-sql(7) leaves them alone). */
#define MQ_SQL_OPEN(t, q) \
    "NOT EXISTS (SELECT 1 FROM `" t "_queues` WHERE queue = " q \
    " AND (paused OR " MQ_SQL_LIMITED "))"

/* A row a plain claim may take, in either way of claiming (SKIP LOCKED,
 * or the UPDATE ... LIMIT fallback): due, in a queue that is neither
 * paused nor limited. */
#define MQ_SQL_CLAIMABLE(t, q) \
    MQ_SQL_DUE_ROW(q) " AND " MQ_SQL_OPEN(t, q)

/* A row a limited claim may take, once its limits allowed it: due, in
 * a queue that is not paused. */
#define MQ_SQL_CLAIMABLE_LIMITED(t, q) \
    MQ_SQL_DUE_ROW(q) " AND " MQ_SQL_NOT_PAUSED(t, q)

/* Queue q has a job a claim would take now: due and not paused. What a
 * waiter checks before it sleeps (wakeup.c), with one probe of the due
 * index per queue. */
#define MQ_SQL_DUE_NOT_PAUSED(t, q) \
    MQ_SQL_ANY_DUE(t, q) " AND " MQ_SQL_NOT_PAUSED(t, q)

/* The lease is stale: leased, and its deadline passed. A lease without
 * a deadline (a row written by another program) is stale too: nobody
 * could ever ack it in time. NULL sorts first in the lease index
 * (state, leased_until): one range, still in index order. */
#define MQ_SQL_STALE \
    "state = 'leased' AND (leased_until IS NULL" \
    " OR leased_until < " MQ_SQL_NOW ")"

/* The fence of every write after a claim: the row is still this
 * delivery (its id and the token the claim wrote) and still leased. A
 * consumer whose lease was lost (requeued, claimed again, acked)
 * matches nothing, so it cannot finish someone else's delivery. Binds
 * the id, then the token. */
#define MQ_SQL_HELD "id = ? AND lease_token = ? AND state = 'leased'"

/* The job is given back: ready at the time expression at, without a
 * lease. */
#define MQ_SQL_SET_READY(at) \
    "state = 'ready', leased_until = NULL, available_at = " at

/* The job becomes dead: finished now, without a lease, with why as its
 * last error (an SQL expression). The transaction that writes it counts
 * it (mq__count_finished) so that stats and the _total counters see it.
 * finished_at is what archive ages it by. (Its text is mq-sql(7)'s,
 * word for word: t330.) */
#define MQ_SQL_SET_DEAD(why) \
    "state = 'dead', leased_until = NULL, finished_at = " MQ_SQL_NOW "," \
    " last_error = " why

/* The queue filter of the cron-side reads: all queues when the
 * parameter is NULL, else the one named; binds the queue twice. */
#define MQ_SQL_QUEUE_OR_ALL "(? IS NULL OR queue = ?)"

/* The time that many microseconds (the parameter) ago. */
#define MQ_SQL_NOW_MINUS_US MQ_SQL_NOW " - INTERVAL ? MICROSECOND"

/* The states an operator reads (mq ls, mq why, mq stats): ready is due
 * now, scheduled due later, waiting due at the end of time (a dependent
 * whose parents are not all done: deps.c); a leased job's lease is live
 * or stale. Each of the three ready ones is one range of the due index
 * (queue, state, available_at). */
#define MQ_SQL_READY_NOW "state = 'ready' AND " MQ_SQL_IS_DUE
#define MQ_SQL_SCHEDULED "state = 'ready' AND available_at > " MQ_SQL_NOW \
    " AND available_at < " MQ_SQL_WAITING
#define MQ_SQL_WAITING_ROW "state = 'ready' AND available_at = " MQ_SQL_WAITING
#define MQ_SQL_LEASE_LIVE \
    "state = 'leased' AND leased_until >= " MQ_SQL_NOW

/* The keys of queue q whose live leases reach n (SQL text, as q): the
 * keys a per-key limit of n holds full now (mq-limit(1)). A subquery
 * of job_key values, one range of the index held (queue, state,
 * job_key, leased_until) in key order. */
#define MQ_SQL_FULL_KEYS(t, q, n) \
    "SELECT job_key FROM `" t "` FORCE INDEX (held)" \
    " WHERE queue = " q " AND " MQ_SQL_LEASE_LIVE \
    " AND job_key IS NOT NULL GROUP BY job_key HAVING COUNT(*) >= " n

/* The keys of queue q whose rate window is full: n or more of their
 * gate's ticks (<table>_ticks, a claim's time each; the queue's own
 * gate is the key '') younger than the window (the parameter, in µs
 * before it): the keys a key rate of n per window holds full now
 * (mq-limit(1)). A subquery of gate_key values, one range of the ticks'
 * index oldest (queue, gate_key, at) in key order. q and n are SQL
 * text, as for MQ_SQL_FULL_KEYS; the window is a parameter between
 * them. */
#define MQ_SQL_RATE_FULL_KEYS(t, q, n) \
    "SELECT gate_key FROM `" t "_ticks` FORCE INDEX (oldest)" \
    " WHERE queue = " q " AND gate_key <> ''" \
    " AND at > " MQ_SQL_NOW_MINUS_US \
    " GROUP BY gate_key HAVING COUNT(*) >= " n

/* Those states as one text column, the stored state for the others. */
#define MQ_SQL_SHOWN_STATE \
    "CASE WHEN " MQ_SQL_STALE " THEN 'stale'" \
    " WHEN " MQ_SQL_READY_NOW " THEN 'ready'" \
    " WHEN " MQ_SQL_WAITING_ROW " THEN 'waiting'" \
    " WHEN state = 'ready' THEN 'scheduled'" \
    " ELSE CAST(state AS CHAR) END"

/* The operator's filters (mq ls, mq retry). The last error contains a
 * text: the parameter is mq__like_substring's pattern. */
#define MQ_SQL_ERROR_LIKE "last_error LIKE ? ESCAPE '!'"

/* The time --since and --before compare: when the job finished, else
 * when it was made. */
#define MQ_SQL_JOB_TIME "COALESCE(finished_at, created_at)"

/* A time as UTC ISO 8601 text, to the second (NULL stays NULL). */
#define MQ_SQL_ISO(x) "DATE_FORMAT(" x ", '%Y-%m-%dT%H:%i:%sZ')"

/* x as a date that TIMESTAMPDIFF takes: a zero month or day, which
 * another program may write where the CHECKs are missing ('0000-00-00',
 * '2020-00-05'), read as 1: the earliest instant it can mean, as a zero
 * due time is the earliest (claimed first). NULL stays NULL. */
#define MQ_SQL_REAL_DATE(x) \
    "CAST(CONCAT(LPAD(YEAR(" x "), 4, '0'), '-', GREATEST(MONTH(" x "), 1)," \
    " '-', GREATEST(DAYOFMONTH(" x "), 1), ' ', TIME(" x ")) AS DATETIME(6))"

/* x - now, in microseconds (NULL if x is). */
#define MQ_SQL_US_FROM_NOW(x) \
    "TIMESTAMPDIFF(MICROSECOND, " MQ_SQL_NOW ", " x ")"

/* The same for a date as the readers show it: a zero date is as old as
 * the date it reads as (MQ_SQL_REAL_DATE), not now, in every command
 * that shows an age (why, show, ls, stats, check, top). x is written
 * several times: a column, or an expression without parameters. */
#define MQ_SQL_AGE_FROM_NOW(x) \
    "TIMESTAMPDIFF(MICROSECOND, " MQ_SQL_NOW ", IF(MONTH(" x ") > 0" \
    " AND DAYOFMONTH(" x ") > 0, " x ", " MQ_SQL_REAL_DATE(x) "))"

/* A time as microseconds since 1970 (times are UTC), exact; and back,
 * from the parameter. */
#define MQ_SQL_EPOCH_US(x) \
    "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " x ")"
#define MQ_SQL_FROM_EPOCH_US \
    "('1970-01-01 00:00:00' + INTERVAL ? MICROSECOND)"
/* Whole seconds since 1970 (the parameter), as a UTC DATETIME whatever
 * the session's zone (never FROM_UNIXTIME, which reads it). */
#define MQ_SQL_FROM_EPOCH_S "TIMESTAMPADD(SECOND, ?, '1970-01-01 00:00:00')"

/* A Galera node, as the waiters table names it (waiters.c, wakeup.c):
 * host and port, one per server even with several nodes on one machine.
 * And the session's user name as the process list shows it. */
#define MQ_SQL_NODE "CONCAT(@@hostname, ':', @@port)"
#define MQ_SQL_LOGIN "SUBSTRING_INDEX(USER(), '@', 1)"

/* The user lock waiters of table t on one server park on (wakeup.c):
 * one name per database and table, at most 64 characters. */
#define MQ_SQL_WALL(t) \
    "CONCAT('mq-wall-', MD5(CONCAT(DATABASE(), '.', '" t "')))"

/* mq wait's rows in the waiters table (wakeup.c, waiters.c): their
 * queue is "*LO-HI", the least and the greatest id waited for, a name
 * no queue can have (mq_valid_queue); those names sort between '*' and
 * '+' (ascii_bin), one range of the index wake (queue, node). */
#define MQ_SQL_FINISH_ROWS "queue > '*' AND queue < '+'"

/* The waiters table's rows of this session (the waiting connection). */
#define MQ_SQL_OWN_WAITER "node = " MQ_SQL_NODE " AND conn = CONNECTION_ID()"

#endif
