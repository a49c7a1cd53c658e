#!/usr/bin/python3
"""producer.py: push one job into mq's table with plain SQL, as
mq-sql(7) documents it; mq work or mq pop runs it like any other.

usage: producer.py [--queue Q] [--priority N] [--delay S]
                   [--max-attempts N] [--dedup KEY] [--every S] [--wake]
                   [--file F] [connection options]

The payload is the bytes of F, or of standard input, byte for byte.
Prints the job's id (with --dedup, the live job's id if one holds the
key). Connection: --socket, --host, --port, --user, --database, --table
or MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_TABLE (default
mq_jobs), MQ_QUEUE (default "default"); the password from MYSQL_PWD.
MQ_EXAMPLE_TIME_ZONE sets the session's time zone: it changes nothing.

Debian: apt-get install python3-pymysql.
"""
import argparse
import os
import random
import re
import sys
import time

import pymysql

# The statements of mq-sql(7), word for word (t330 checks that they are
# there). `mq_jobs` is the default table: table() puts the one asked for
# in its place.
SQL_ROLLBACK = """
ROLLBACK AND NO CHAIN NO RELEASE
"""
SQL_SESSION = """
SET SESSION autocommit = 1, SESSION completion_type = 0,
    SESSION sql_mode =
    'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',
    SESSION time_zone = '+00:00', NAMES utf8mb4,
    SESSION innodb_lock_wait_timeout = ?, SESSION lock_wait_timeout = ?,
    SESSION wait_timeout = 28800, SESSION net_read_timeout = 30,
    SESSION net_write_timeout = 60,
    SESSION sql_select_limit = 18446744073709551615,
    SESSION max_join_size = 18446744073709551615,
    SESSION sql_safe_updates = 0, SESSION unique_checks = 1,
    SESSION sql_auto_is_null = 0, SESSION timestamp = DEFAULT,
    SESSION insert_id = 0, SESSION div_precision_increment = 4,
    SESSION optimizer_switch = 'default'
    /*M!100300 , SESSION max_statement_time = 0,
      SESSION idle_transaction_timeout = 0,
      SESSION idle_readonly_transaction_timeout = 0,
      SESSION idle_write_transaction_timeout = 0 */
    /*M!100201 , SESSION check_constraint_checks = 0 */
    /*!80000 , SESSION max_execution_time = 0 */
"""
SQL_ISOLATION = """
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
"""
SQL_DATABASE = """
SELECT DATABASE()
"""
SQL_DROP_TEMPORARY = """
DROP TEMPORARY TABLE IF EXISTS `mq_jobs`, `mq_jobs_archive`,
  `mq_jobs_queues`, `mq_jobs_counts`, `mq_jobs_history`,
  `mq_jobs_waiters`
"""
SQL_BINLOG = """
SELECT IF(@@GLOBAL.log_bin AND @@SESSION.sql_log_bin,
          @@SESSION.binlog_format, 'NONE')
"""
SQL_LOG_ROWS = """
SET SESSION binlog_format = 'ROW'
"""
SQL_VERSION = """
SELECT TABLE_COMMENT FROM information_schema.TABLES
 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
"""
SQL_PUSH = """
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?)
"""
SQL_PUSH_KEY = """
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?)
"""
SQL_PUSH_EVERY = """
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key, every_us, every_anchor)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
"""
SQL_LIVE_KEY = """
SELECT id, queue FROM `mq_jobs`
 WHERE dedup_unique = CONCAT(?, '/', ?)
"""
SQL_WAITERS = """
SELECT ID FROM information_schema.PROCESSLIST
 WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
   AND CAST(INFO AS BINARY) LIKE ? ESCAPE '!'
 ORDER BY TIME DESC, ID LIMIT ?
"""
SQL_KILL = """
KILL QUERY ?
"""

SCHEMA_MIN = 8          # the first schema these statements are right for
RETRIES = 8             # tries of a statement that met 1213 or 1205
ER_DUP_ENTRY, ER_LOCK_WAIT, ER_DEADLOCK = 1062, 1205, 1213
ER_NO_SUCH_THREAD = 1094


class Fail(Exception):
    """An error to report in one line, with the exit status to use."""
    def __init__(self, msg, status=70):
        super().__init__(msg)
        self.status = status


def name_ok(s, pattern=r"[A-Za-z0-9_]{1,64}"):
    return re.fullmatch(pattern, s) is not None and not s.isdigit()


def prepared(sql, table):
    """The statement for this table, in pymysql's placeholders: pymysql
    formats its parameters into the text (escaped), with %s for each."""
    sql = sql.replace("`mq_jobs", "`" + table)
    return " ".join(sql.split()).replace("%", "%%").replace("?", "%s")


def execute(db, sql, args, table):
    cur = db.cursor()
    cur.execute(prepared(sql, table), args)
    return cur


def retried(db, fn):
    """fn() again after a deadlock or a lock wait timeout (a deadlock
    rolls the transaction back, a timeout only its statement: roll back
    the rest), a bounded number of times, with a jittered backoff."""
    for attempt in range(RETRIES):
        try:
            return fn()
        except pymysql.err.OperationalError as e:
            if e.args[0] not in (ER_DEADLOCK, ER_LOCK_WAIT):
                raise
            db.rollback()
            if attempt == RETRIES - 1:
                raise Fail("gave up after %d deadlocks or lock wait "
                           "timeouts: %s" % (RETRIES, e.args[1]), 75)
            time.sleep(random.uniform(0.005, 0.02) * 2 ** attempt)


def session(db, o, lock_wait=50):
    """The session mq-sql(7) asks for (THE SESSION), whatever the server's
    globals or the account's init_connect made it: autocommit on (else
    every write is rolled back at disconnect), UTC, sql_mode, READ
    COMMITTED, the limits, the CHECKs off; the database asked for (an
    init_connect may have run USE), mq's tables and not temporary ones
    that hide them; statement logging turned to rows."""
    execute(db, SQL_ROLLBACK, (), o.table)
    execute(db, SQL_SESSION, (lock_wait, 60), o.table)
    execute(db, SQL_ISOLATION, (), o.table)
    current = execute(db, SQL_DATABASE, (), o.table).fetchone()[0]
    if o.database and current != o.database:
        db.select_db(o.database)        # the protocol's, not SQL text
    elif not o.database and current is None:
        raise Fail("no database selected: give --database or set "
                   "MQ_DATABASE", 78)
    execute(db, SQL_DROP_TEMPORARY, (), o.table)
    if execute(db, SQL_BINLOG, (), o.table).fetchone()[0] == "STATEMENT":
        try:
            execute(db, SQL_LOG_ROWS, (), o.table)
        except pymysql.err.MySQLError as e:
            raise Fail("the server logs statements (binlog_format="
                       "STATEMENT), which InnoDB refuses for READ COMMITTED "
                       "transactions, and this account cannot log rows "
                       "instead (%s): set binlog_format=ROW or MIXED, or "
                       "grant BINLOG ADMIN" % e.args[1], 78)


def connect(o):
    kw = dict(user=o.user, password=os.environ.get("MYSQL_PWD", ""),
              database=o.database, charset="utf8mb4", autocommit=True,
              binary_prefix=True)
    if o.socket:
        kw["unix_socket"] = o.socket
    else:
        kw.update(host=o.host or "localhost", port=int(o.port or 3306))
    db = pymysql.connect(**kw)
    session(db, o)
    tz = os.environ.get("MQ_EXAMPLE_TIME_ZONE")
    if tz:
        db.cursor().execute("SET time_zone = %s", (tz,))
    row = execute(db, SQL_VERSION, (o.table,), o.table).fetchone()
    m = re.fullmatch(r"mq schema (\d+)", row[0] if row else "")
    if not m or int(m.group(1)) < SCHEMA_MIN:
        # newer schemas only add: these statements stay right there
        raise Fail("table '%s' is not an mq table of schema %d or later: "
                   "run 'mq init'" % (o.table, SCHEMA_MIN), 78)
    return db


def push(db, o, payload):
    """The job's id, and whether a live job held the key already."""
    key = os.fsencode(o.dedup) if o.dedup is not None else None
    delay_us = int(o.delay * 1e6)
    if o.every:
        sql = SQL_PUSH_EVERY
        args = (o.queue, o.priority, o.max_attempts, delay_us, payload, key,
                int(o.every * 1e6), delay_us)
    elif key is not None:
        sql, args = SQL_PUSH_KEY, (o.queue, o.priority, o.max_attempts,
                                   delay_us, payload, key)
    else:
        sql, args = SQL_PUSH, (o.queue, o.priority, o.max_attempts,
                               delay_us, payload)
    # a duplicate key: the live job's id, unless it finished in between
    # (the key is free again: insert again)
    for _ in range(3):
        try:
            return retried(db, lambda: execute(db, sql, args,
                                             o.table).lastrowid), False
        except pymysql.err.IntegrityError as e:
            if e.args[0] != ER_DUP_ENTRY or key is None:
                raise
        row = execute(db, SQL_LIVE_KEY, (o.queue, key), o.table).fetchone()
        if row and row[1] != o.queue:   # a foreign row: its queue has a '/'
            raise Fail("the dedup key is held by job %d, which is not of "
                       "queue '%s'" % (row[0], o.queue), 70)
        if row:
            return row[0], True
    raise Fail("the dedup key is taken and freed too fast: try again", 75)


def wake(db, o):
    """Optional: mq's waiters find the job within a second anyway. This
    ends the marked sleep of one of them now (mq-sql(7), WAKING WAITERS);
    seeing and ending another user's needs PROCESS and CONNECTION ADMIN."""
    marker = "/* mq-wait `%s` %s */" % (o.table, o.queue)
    pattern = "%" + re.sub(r"([_%!])", r"!\1", marker) + "%"
    for (tid,) in execute(db, SQL_WAITERS, (pattern, 1), o.table).fetchall():
        try:
            execute(db, SQL_KILL, (tid,), o.table)
        except pymysql.err.OperationalError as e:
            if e.args[0] != ER_NO_SUCH_THREAD:     # it ended by itself
                raise


def options():
    env = os.environ.get
    p = argparse.ArgumentParser(description="push one job into mq's table")
    p.add_argument("--queue", default=env("MQ_QUEUE", "default"))
    p.add_argument("--priority", type=int, default=0)
    p.add_argument("--delay", type=float, default=0.0, help="seconds")
    p.add_argument("--max-attempts", type=int, default=10)
    p.add_argument("--dedup", help="at most one live job with this key")
    p.add_argument("--every", type=float, help="recurring: period, seconds")
    p.add_argument("--wake", action="store_true", help="wake a waiter")
    p.add_argument("--file", help="payload file (default: standard input)")
    p.add_argument("--socket", default=env("MQ_SOCKET"))
    p.add_argument("--host", default=env("MQ_HOST"))
    p.add_argument("--port", default=env("MQ_PORT"))
    p.add_argument("--user", default=env("MQ_USER", env("USER")))
    p.add_argument("--database", default=env("MQ_DATABASE"))
    p.add_argument("--table", default=env("MQ_TABLE", "mq_jobs"))
    o = p.parse_args()
    if not name_ok(o.table) or not name_ok(o.queue, r"[A-Za-z0-9_.-]{1,64}"):
        p.error("invalid table or queue name")
    # as the other languages, which put it in a USE: letters, digits, _ $ -
    if o.database and not re.fullmatch(r"[A-Za-z0-9_$-]{1,64}", o.database):
        p.error("invalid database name")
    if o.every is not None and o.every < 1:
        p.error("--every takes 1 second or more")
    if o.delay < 0 or not 1 <= o.max_attempts <= 4294967295:
        p.error("invalid --delay or --max-attempts")
    return o


def main():
    o = options()
    try:
        if o.file:
            with open(o.file, "rb") as f:
                payload = f.read()
        else:
            payload = sys.stdin.buffer.read()
        db = connect(o)
        job, existed = push(db, o, payload)
        if o.wake and not existed and o.delay == 0:
            wake(db, o)
        print(job)
        return 0
    except Fail as e:
        print("producer.py: %s" % e, file=sys.stderr)
        return e.status
    except pymysql.err.MySQLError as e:
        print("producer.py: %s" % (e,), file=sys.stderr)
        return 70
    except OSError as e:
        print("producer.py: %s" % e, file=sys.stderr)
        return 74


if __name__ == "__main__":
    sys.exit(main())
