#!/usr/bin/python3
"""consumer.py: claim one job from mq's table with plain SQL, as
mq-sql(7) documents it, write its payload, and ack it; or fail it.

usage: consumer.py [--queue Q] [--claim skip-locked|update] [--lease S]
                   [--output F] [--extend S] [--fail TEXT [--retry-in S]
                   [--no-retry]] [--wait-file F] [--lock-wait S]
                   [--confirm-host H [--confirm-port N]]
                   [--confirm-socket S] [connection options]

The payload goes to F (default: standard output), byte for byte, then
the job is acked. With --fail the job is failed instead, with TEXT as
its error: due again after --retry-in seconds (default: mq's backoff),
or dead with --no-retry or once its attempts are used up. --extend moves
the lease to S seconds from now before the work (a heartbeat).
--wait-file waits, once the job is claimed, until F exists (to show a
consumer whose lease ran out). The receipt (id.token) and what became of
the job go to standard error.

On a Galera cluster a node may lose a claim it reported committed, and
another consumer then runs the job too (mq-galera(7), CLAIMS CONFIRMED
ON ANOTHER NODE). Name another node of the cluster, the confirming
node, with --confirm-host H (--confirm-port N: default MYSQL_TCP_PORT,
else 3306) or --confirm-socket S (used without --confirm-host, or with
localhost), or MQ_CONFIRM_HOST, MQ_CONFIRM_PORT, MQ_CONFIRM_SOCKET (not
the option files: they name the first node); it is reached with the
same user, password and database, its session set up as the first's.
The job is then run (or failed) only once that node shows its claim
(mq-sql(7), CLAIMING A JOB). The node is checked before the claim: one
that cannot be connected to, is not ready in the primary component, is
of another cluster or is the claim's own node fails the consumer, with
nothing claimed (69). A claim it does not show, once it caught up, is
neither run nor acked (3): the cluster lost it, or the lease was taken
back; its lease ends as a lost consumer's does. Without a confirming
node, a claim the cluster lost may be run. On a server that is not a
Galera node the confirming node is not used (not connected to): there
is no cluster to lose a claim.

Exit status (mq's, mq(1) EXIT STATUS): 0 done, 1 nothing to claim, 2
the lease was lost (the job was requeued and claimed again, or finished:
this consumer's ack or fail changed nothing), 3 the confirming node
does not show the claim (the job not run), 64 usage, 69 cannot connect
(or the connection was lost), or the confirming node cannot be used or
read, 70 another server error, 74 I/O
error, 75 deadlocks or lock wait timeouts after retries, 77 access
denied, 78 no database selected, an option file that cannot be read,
not an mq table, or statement logging this account cannot turn to rows.
--lock-wait: a row lock is waited for S seconds (default 50, as mq),
then retried.
The runs of calendar schedules (mq-schedule(1)) are jobs like any other;
this program does not fire schedules (SQL cannot compute a cron instant):
where only it consumes a queue, run `mq schedule fire` from a timer.
Connection as producer.py. Debian: apt-get install python3-pymysql.
"""
import copy
import os
import random
import secrets
import socket
import sys
import time

import pymysql

from mq_session import (Fail, Parser, check_names, connect,
                        connection_options, db_error, execute, main,
                        transaction)

# The statements of mq-sql(7), word for word (t330 checks that they are
# there); those of the session are in mq_session.py. `mq_jobs` is the
# default table: prepared() puts the one asked for in its place.
SQL_CLAIM_SELECT = """
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND (paused OR (concurrency >= 1
                      OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
                      OR (key_rate >= 1 AND key_rate_us >= 1))))
   AND EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
 ORDER BY priority, available_at, id LIMIT ?
   FOR UPDATE SKIP LOCKED
"""
SQL_CLAIM_LEASE = """
UPDATE `mq_jobs` SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE id IN (?)
"""
SQL_ANY_DUE = """
SELECT EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
"""
SQL_CLAIM_UPDATE = """
UPDATE `mq_jobs` FORCE INDEX (claim) SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND (paused OR (concurrency >= 1
                      OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
                      OR (key_rate >= 1 AND key_rate_us >= 1))))
 ORDER BY priority, available_at, id LIMIT ?
"""
SQL_CLAIM_READ = """
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'leased' AND lease_token = ?
 ORDER BY priority, available_at, id
"""
SQL_ACK = """
UPDATE `mq_jobs` SET
 state = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))
   AND every_us <=
   TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59')),
   'ready', 'done'),
 finished_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), NULL, UTC_TIMESTAMP(6)),
 available_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')),
   every_anchor + INTERVAL IF(TIMESTAMPDIFF(MICROSECOND, every_anchor,
   UTC_TIMESTAMP(6)) < 0, 0,
   TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))
   DIV every_us + 1) * every_us
   MICROSECOND, available_at),
 attempts = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), 0, attempts),
 leased_until = NULL,
 every_us = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), every_us, NULL),
 every_anchor = IF(every_us IS NULL, NULL, every_anchor)
 WHERE id = ? AND lease_token = ? AND state = 'leased'
"""
# A job with dependents (schema 11, mq-sql(7) DEPENDENCIES): the ack
# tries the UPDATE for a job without any first; the finish of one that
# has some meets its edges (four statements), and a dead one's cancels
# the dependents that die with it, and theirs in turn.
SQL_ACK_CHILDLESS = """
UPDATE `mq_jobs` SET
 state = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))
   AND every_us <=
   TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59')),
   'ready', 'done'),
 finished_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), NULL, UTC_TIMESTAMP(6)),
 available_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')),
   every_anchor + INTERVAL IF(TIMESTAMPDIFF(MICROSECOND, every_anchor,
   UTC_TIMESTAMP(6)) < 0, 0,
   TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))
   DIV every_us + 1) * every_us
   MICROSECOND, available_at),
 attempts = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), 0, attempts),
 leased_until = NULL,
 every_us = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), every_us, NULL),
 every_anchor = IF(every_us IS NULL, NULL, every_anchor)
 WHERE id = ? AND lease_token = ? AND state = 'leased'
   AND children IS NULL
"""
SQL_MEET_SHARDS = """
UPDATE (SELECT d.child, d.parent % 1024 AS shard, COUNT(*) AS n
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY) WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
  GROUP BY d.child, d.parent % 1024) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  SET w.parents = w.parents - e.n
"""
SQL_MEET_PARENTS = """
UPDATE (SELECT w.child, COUNT(*) AS n FROM (SELECT DISTINCT d.child,
  d.parent % 1024 AS shard FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  WHERE w.parents = 0 GROUP BY w.child) z
  STRAIGHT_JOIN `mq_jobs` j ON j.id = z.child
  SET j.parent_shards = j.parent_shards - z.n
"""
SQL_MEET_RELEASE = """
UPDATE (SELECT DISTINCT d.child
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0 AND (? OR d.on_death = 'run')
  AND d.parent IN (?)) e STRAIGHT_JOIN `mq_jobs` j ON j.id = e.child
  SET j.available_at = UTC_TIMESTAMP(6)
  WHERE j.parent_shards = 0 AND j.state = 'ready'
  AND j.available_at = '9999-12-31 23:59:59.999999'
"""
SQL_MEET_MARK = """
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY) SET d.met = 1
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
"""
SQL_HAS_DEPENDENTS = """
SELECT id, state = 'dead' FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE children IS NOT NULL AND id IN (?)
"""
SQL_DOOMED = """
SELECT d.child, d.parent, j.children IS NOT NULL
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  WHERE (d.parent > ? OR (d.parent = ? AND d.child > ?)) AND d.met = 0
  AND (d.on_death = 'cancel' OR (? AND d.on_death = 'wait'))
  AND j.state = 'ready' AND j.parent_shards > 0
  AND d.parent IN (?)
  ORDER BY d.parent, d.child LIMIT 1000 FOR UPDATE
"""
SQL_CANCEL = """
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  SET j.state = 'dead', j.finished_at = UTC_TIMESTAMP(6),
  j.available_at = UTC_TIMESTAMP(6),
  j.last_error = CONCAT('cancelled: parent ', d.parent,
  IF(?, ' was purged', ' is dead'))
  WHERE d.met = 0 AND (d.on_death = 'cancel'
  OR (? AND d.on_death = 'wait')) AND j.state = 'ready'
  AND j.parent_shards > 0 AND (d.parent, d.child) IN ((?, ?))
"""
# The counts' slot is CONNECTION_ID() % 16 plus this: any slot keeps the
# counts exact; mq adds 16 times its Galera node's index (0 on one server)
# so that two nodes never write one count row (mq(1) GALERA).
SLOT_BASE = 0

SQL_COUNT_FINISHED = """
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, COALESCE(?, CAST(state AS CHAR)), CONNECTION_ID() % 16 + ?,
       ? * COUNT(*), IF(? > 0, COUNT(*), 0)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state IN ('done', 'dead') AND id IN (?)
 GROUP BY queue, state ORDER BY queue, state
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
"""
SQL_LOCK = """
SELECT attempts, max_attempts FROM `mq_jobs`
 WHERE id = ? AND lease_token = ? AND state = 'leased' FOR UPDATE
"""
SQL_RETRY = """
UPDATE `mq_jobs` SET state = 'ready', leased_until = NULL,
       available_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       last_error = COALESCE(?, last_error)
 WHERE id = ?
"""
SQL_BURY = """
UPDATE `mq_jobs` SET state = 'dead', leased_until = NULL,
       finished_at = UTC_TIMESTAMP(6),
       last_error = COALESCE(?, last_error)
 WHERE id = ?
"""
SQL_HISTORY = """
INSERT INTO `mq_jobs_history`
       (job_id, event, state, attempt, at, worker, error)
SELECT id, ?, IF(state = 'dead', 'dead', 'ready'), attempts,
       UTC_TIMESTAMP(6), leased_by, ?
  FROM `mq_jobs` FORCE INDEX (PRIMARY) WHERE id IN (?) ORDER BY id
"""
SQL_COUNT_EVENT = """
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, ?, CONNECTION_ID() % 16 + ?, COUNT(*), COUNT(*)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE (? IS NULL OR queue = ?) AND id IN (?)
 GROUP BY queue ORDER BY queue
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
"""
SQL_JOB_LIMITS = """
SELECT j.queue, j.job_key, l.concurrency, l.per_key
  FROM `mq_jobs` AS j FORCE INDEX (PRIMARY)
  LEFT JOIN `mq_jobs_queues` AS l ON l.queue = j.queue
 WHERE j.id = ?
"""
SQL_GATE = """
INSERT INTO `mq_jobs_gates` (queue, gate_key, claims)
VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1
"""
SQL_EXTEND = """
UPDATE `mq_jobs` SET leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
 WHERE id = ? AND (leased_until >= UTC_TIMESTAMP(6) OR NOT EXISTS
       (SELECT 1 FROM `mq_jobs_queues` AS l
         WHERE l.queue = `mq_jobs`.queue AND (concurrency >= 1
           OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
           OR (key_rate >= 1 AND key_rate_us >= 1))))
"""
# A claim confirmed on another Galera node (mq-sql(7), CLAIMING A JOB):
# who a node is, which cluster's, whether it is ready in the primary
# component (NULL when it is), and the cluster's size; then, after the
# claim's COMMIT, the claim read there once that node applied what the
# cluster committed before the read.
SQL_NODE = """
SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_gcomm_uuid'),
       (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_cluster_state_uuid'),
       (SELECT GROUP_CONCAT(VARIABLE_NAME, ' ', VARIABLE_VALUE)
          FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME IN ('wsrep_ready', 'wsrep_cluster_status')
           AND VARIABLE_VALUE NOT IN ('ON', 'Primary')),
       (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_cluster_size')
"""
SQL_SYNC_WAIT = """
SET SESSION wsrep_sync_wait = 3
"""
SQL_SEEN = """
SELECT id FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state = 'leased' AND lease_token = ? AND id IN (?)
"""

SCHEMA_MIN = 11         # the first schema these statements are right for
ERROR_MAX = 4096        # bytes of error text kept, as mq keeps
DOOMED_MAX = 1000       # dependents SQL_DOOMED locks at a time (its LIMIT)


def leased_by():
    """The lease holder as mq writes it (mq-sql(7), CLAIMING A JOB): the
    host name, its first 199 bytes, each byte outside '!' to '~' as '?'
    (leased_by is ASCII: a UTF-8 host name made every claim fail with
    1366), then ':' and the process id; 255 characters at most."""
    try:
        host = os.fsencode(socket.gethostname())[:199]
    except OSError:
        host = b"unknown"
    host = bytes(b if 0x21 <= b <= 0x7e else 0x3f for b in host)
    return ("%s:%d" % (host.decode("ascii"), os.getpid()))[:255]


def claim(db, o, token):
    """(id, attempt, payload) of the job claimed with token, or None."""
    lease_us = int(o.lease * 1e6)
    worker = leased_by()
    q = o.queue

    def skip_locked():
        row = execute(db, SQL_CLAIM_SELECT, (q, q, q, 1), o.table).fetchone()
        if row is None:
            return None
        n = execute(db, SQL_CLAIM_LEASE, (token, lease_us, worker, row[0]),
                    o.table).rowcount
        if n != 1:
            raise Fail("claim leased %d of 1 rows" % n)
        return row[0], row[3] + 1, row[4]       # attempts read before +1

    def update():
        # its own statement: the UPDATE may not read its own table
        if not execute(db, SQL_ANY_DUE, (q,), o.table).fetchone()[0]:
            return 0
        return execute(db, SQL_CLAIM_UPDATE,
                       (token, lease_us, worker, q, q, 1), o.table).rowcount

    if o.claim == "skip-locked":
        return transaction(db, skip_locked)
    if transaction(db, update, autocommit=True) == 0:
        return None
    # committed: the job is ours until the lease ends
    row = execute(db, SQL_CLAIM_READ, (q, token), o.table).fetchone()
    return row[0], row[3], row[4]


def lost(job):
    return Fail("job %d: lease lost (the job was requeued and claimed "
                "again, or finished): nothing changed" % job, 2)


def listed(sql, n):
    """sql for n ids: one ? per id in its IN (?) (mq-sql(7), CONVENTIONS)."""
    return sql.replace("IN (?)", "IN (%s)" % ", ".join(["?"] * n))


def paired(sql, n):
    """sql for n pairs: one (?, ?) per pair in its IN ((?, ?))."""
    return sql.replace("IN ((?, ?))", "IN (%s)" % ", ".join(["(?, ?)"] * n))


def meet(db, o, job, done):
    """The edges of job met: all of them (done 1), or those of the
    dependents that run anyway (done 0: it is dead); a dependent whose
    last shard this empties is due now (mq-sql(7), DEPENDENCIES)."""
    execute(db, SQL_MEET_SHARDS, (done, job), o.table)
    if execute(db, SQL_MEET_PARENTS, (done, job), o.table).rowcount > 0:
        execute(db, SQL_MEET_RELEASE, (done, job), o.table)
    execute(db, SQL_MEET_MARK, (done, job), o.table)


def dead_with_dependents(db, o, job):
    """After the burial and its count, in its transaction: the death of
    job applied to its dependents, and the deaths that cancels to
    theirs (a list, not a recursion)."""
    todo, i = [job], 0
    while i < len(todo):
        j = todo[i]
        i += 1
        row = execute(db, SQL_HAS_DEPENDENTS, (j,), o.table).fetchone()
        if row is None:
            continue
        meet(db, o, j, 0 if row[1] else 1)
        if not row[1]:
            continue
        last = 0
        while True:
            # one parent: each dependent in one row, and the cursor
            # its last one
            doomed = [r[0] for r in
                      execute(db, SQL_DOOMED,
                              (j, j, last, 0, j),
                              o.table).fetchall()]
            if doomed:
                n = execute(db, paired(SQL_CANCEL, len(doomed)),
                            (0, 0) + tuple(x for c in doomed for x in (j, c)),
                            o.table).rowcount
                if n != len(doomed):
                    raise Fail("cannot cancel the dependents of job %d: "
                               "%d of %d changed" % (j, n, len(doomed)))
                execute(db, listed(SQL_COUNT_FINISHED, len(doomed)),
                        (None, SLOT_BASE, 1, 1) + tuple(doomed), o.table)
                todo.extend(doomed)
                last = doomed[-1]
            if len(doomed) < DOOMED_MAX:
                break


def ack(db, o, job, token):
    def tx():
        # a job without dependents (nearly all): one UPDATE
        if execute(db, SQL_ACK_CHILDLESS, (job, token), o.table).rowcount:
            execute(db, SQL_COUNT_FINISHED, (None, SLOT_BASE, 1, 1, job),
                    o.table)
            return
        if execute(db, SQL_ACK, (job, token), o.table).rowcount != 1:
            raise lost(job)
        # the job and its count commit together: mq stats stays exact
        execute(db, SQL_COUNT_FINISHED, (None, SLOT_BASE, 1, 1, job), o.table)
        # it has dependents: those it was the last parent of are due
        meet(db, o, job, 1)
    transaction(db, tx)


def backoff_us(attempts):
    """mq's: 10 s doubling per attempt, at most 1 h, times [0.75, 1.25)."""
    base = min(10000000 << min(max(attempts - 1, 0), 9), 3600000000)
    return int(base * random.uniform(0.75, 1.25))


def fail(db, o, job, token, error):
    error = error[:ERROR_MAX]

    def tx():
        row = execute(db, SQL_LOCK, (job, token), o.table).fetchone()
        if row is None:
            raise lost(job)
        attempts, max_attempts = row
        if o.no_retry or attempts >= max_attempts:
            execute(db, SQL_BURY, (error, job), o.table)
            execute(db, SQL_HISTORY, ("failed", error, job), o.table)
            execute(db, SQL_COUNT_FINISHED, (None, SLOT_BASE, 1, 1, job),
                    o.table)
            dead_with_dependents(db, o, job)
            return "dead after attempt %d" % attempts
        delay = (int(o.retry_in * 1e6) if o.retry_in is not None
                 else backoff_us(attempts))
        execute(db, SQL_RETRY, (delay, error, job), o.table)
        execute(db, SQL_HISTORY, ("failed", error, job), o.table)
        execute(db, SQL_COUNT_EVENT, ("failed", SLOT_BASE, None, None, job),
                o.table)
        return "due again in %.3fs (after attempt %d)" % (delay / 1e6,
                                                          attempts)
    return transaction(db, tx)


def extend(db, o, job, token):
    def tx():
        # a limited queue's gates first, as a claim writes them: an
        # extend and a claim that counts the lease ended are then in
        # one order (mq-sql(7), EXTENDING A LEASE)
        row = execute(db, SQL_JOB_LIMITS, (job,), o.table).fetchone()
        if row is not None and row[0] is not None:
            queue, key, concurrency, per_key = row
            if concurrency is not None and concurrency >= 1:
                execute(db, SQL_GATE, (queue, b""), o.table)
            if per_key is not None and per_key >= 1 and key:
                execute(db, SQL_GATE, (queue, key), o.table)
        if execute(db, SQL_LOCK, (job, token), o.table).fetchone() is None:
            raise lost(job)
        # no row changed: the lease expired in a limited queue, whose
        # slot may be another job's (mq-sql(7), EXTENDING A LEASE)
        if execute(db, SQL_EXTEND, (int(o.extend * 1e6), job),
                   o.table).rowcount == 0:
            raise lost(job)
    transaction(db, tx)


def confirm_node(o):
    """The confirming node named: (host, socket, port) for connect(), and
    its name in messages; None if none is."""
    env = lambda k, d: os.environ.get(k) or d
    if not o.confirm_host and not o.confirm_socket:
        return None
    if o.confirm_host and o.confirm_host != "localhost":
        port = o.confirm_port or env("MYSQL_TCP_PORT", "3306")
        return (o.confirm_host, None, port), "%s:%s" % (o.confirm_host, port)
    sock = o.confirm_socket or env("MYSQL_UNIX_PORT", "/run/mysqld/mysqld.sock")
    return (None, sock, None), sock


def confirming(db, o):
    """A session on the confirming node, checked before the claim: a
    member of the primary component, of the claim's node's cluster, not
    that node (told apart by wsrep_gcomm_uuid, not by a host name:
    containers share those); None where none is named, or db's server is
    not a Galera node (there is no cluster to lose a claim)."""
    named = confirm_node(o)
    if named is None or not db.mq_galera:
        return None
    node, o.confirm_name = named

    def refuse(why):
        return Fail("confirming node %s cannot be used: %s"
                    % (o.confirm_name, " ".join(str(why).split())), 69)

    me = execute(db, SQL_NODE, (), o.table).fetchone()
    c = copy.copy(o)
    c.database = db.mq_database         # the same user, password, database
    try:
        other = connect(c, SCHEMA_MIN, o.lock_wait, node)
        it = execute(other, SQL_NODE, (), o.table).fetchone()
    except Fail as e:
        raise refuse(e)
    except pymysql.err.MySQLError as e:
        raise refuse(db_error(e))
    if it[0] is None:
        raise refuse("not a Galera node")
    if it[0] == me[0]:
        raise refuse("it is the claim's own node (wsrep_gcomm_uuid %s)"
                     % it[0])
    if it[1] != me[1]:
        raise refuse("a node of another cluster (wsrep_cluster_state_uuid "
                     "%s, not %s)" % (it[1], me[1]))
    if it[2] is not None:
        raise refuse("not ready (%s)" % it[2])
    return other


def confirmed(other, o, job, token):
    """Whether the confirming node shows job leased with token, read once
    it applied what the cluster committed before the read."""
    try:
        execute(other, SQL_SYNC_WAIT, (), o.table)
        rows = execute(other, SQL_SEEN, (token, job), o.table).fetchall()
    except pymysql.err.MySQLError as e:
        raise Fail("cannot read the claim of job %d on the confirming node "
                   "%s: %s" % (job, o.confirm_name, db_error(e)), 69)
    return any(r[0] == job for r in rows)


def options():
    env = os.environ.get
    p = Parser(description="claim and run one mq job")
    p.add_argument("--queue", default=env("MQ_QUEUE", "default"))
    p.add_argument("--claim", choices=("skip-locked", "update"),
                   default="skip-locked")
    p.add_argument("--lease", type=float, default=300.0, help="seconds")
    p.add_argument("--output", help="payload file (default: stdout)")
    p.add_argument("--extend", type=float, help="lease seconds from now")
    p.add_argument("--fail", metavar="TEXT", help="fail the job with TEXT")
    p.add_argument("--retry-in", type=float, help="seconds (with --fail)")
    p.add_argument("--no-retry", action="store_true", help="dead now")
    p.add_argument("--wait-file", help="wait for this file once claimed")
    p.add_argument("--lock-wait", type=int, default=50,
                   help="seconds a row lock is waited for, then retried")
    # a variable set to the empty string counts as unset, as for mq
    p.add_argument("--confirm-host", metavar="H",
                   default=env("MQ_CONFIRM_HOST") or None,
                   help="Galera: run a job once this node shows its claim")
    p.add_argument("--confirm-port", metavar="N",
                   default=env("MQ_CONFIRM_PORT") or None,
                   help="the confirming node's port (with --confirm-host)")
    p.add_argument("--confirm-socket", metavar="S",
                   default=env("MQ_CONFIRM_SOCKET") or None,
                   help="the confirming node's Unix socket")
    connection_options(p)
    o = p.parse_args()
    check_names(p, o)
    if o.confirm_port is not None and not o.confirm_host:
        p.error("--confirm-port needs --confirm-host")
    if o.confirm_port is not None and not (
            o.confirm_port.isdigit() and 1 <= int(o.confirm_port) <= 65535):
        p.error("--confirm-port takes 1 to 65535")
    if o.lease <= 0 or (o.extend is not None and o.extend <= 0):
        p.error("a lease is positive")
    if not 1 <= o.lock_wait <= 3600:
        p.error("--lock-wait takes 1 to 3600 seconds")
    return o


def consume():
    o = options()
    db = connect(o, SCHEMA_MIN, o.lock_wait)
    # Galera, a confirming node named: checked before the claim (one
    # that cannot be used fails with nothing claimed)
    other = confirming(db, o)
    token = secrets.token_hex(16)   # 128 random bits, lowercase hex
    got = claim(db, o, token)
    if got is None:
        print("consumer.py: queue %s: nothing to claim" % o.queue,
              file=sys.stderr)
        return 1
    job, attempt, payload = got
    print("consumer.py: claimed job %d, attempt %d, receipt %d.%s"
          % (job, attempt, job, token), file=sys.stderr)
    # committed: run only if the confirming node shows the claim
    if other is not None and not confirmed(other, o, job, token):
        raise Fail("the claim of job %d is not seen on the confirming node "
                   "(%s) once it caught up: the cluster lost it, or the "
                   "lease was taken back; not run" % (job, o.confirm_name),
                   3)
    while o.wait_file and not os.path.exists(o.wait_file):
        time.sleep(0.02)
    if o.extend:
        extend(db, o, job, token)
    if o.fail is not None:
        what = fail(db, o, job, token, os.fsencode(o.fail))
        print("consumer.py: job %d: %s" % (job, what), file=sys.stderr)
        return 0
    if o.output:
        with open(o.output, "wb") as f:
            f.write(payload)
    else:
        sys.stdout.buffer.write(payload)
        sys.stdout.flush()
    ack(db, o, job, token)
    print("consumer.py: job %d: acked" % job, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main("consumer.py", consume))
