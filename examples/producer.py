#!/usr/bin/python3
"""producer.py: push one job into mq's table with plain SQL, as
mq-sql(7) documents it; mq work or mq pop runs it like any other.

usage: producer.py [--queue Q] [--priority N] [--delay S]
                   [--max-attempts N] [--dedup KEY] [--every S] [--wake]
                   [--file F] [connection options]

The payload is the bytes of F, or of standard input, byte for byte.
Prints the job's id (with --dedup, the live job's id if one holds the
key). Connection, as mq finds it (mq(1), OPTION FILES, ENVIRONMENT):
--socket, --host, --port, --user, --database, --defaults-file, else
MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_DEFAULTS_FILE,
else the option files: [client], [client-server], [client-mariadb] and
[mq] of /etc/my.cnf, /etc/mysql/my.cnf, $MARIADB_HOME/my.cnf (or
$MYSQL_HOME's) and ~/.my.cnf, or of the --defaults-file alone; the
password from an option file, else MYSQL_PWD. PyMySQL's own
read_default_file reads one group of one file, so mq_session.py reads
them itself, as Connector/C does for mq, and takes host, port, socket,
user, password and database from them: not their other settings (TLS,
connect-timeout: add them to connect() if you need them), and a group
read earlier in a file loses to [mq] even where it comes after it.
--table or MQ_TABLE (default mq_jobs), MQ_QUEUE (default "default").
MQ_EXAMPLE_TIME_ZONE sets the session's time zone: it changes nothing.
Errors: one line, with mq's exit status (mq(1), EXIT STATUS): 69 cannot
connect, 77 access denied, 78 no database selected, an option file that
cannot be read or not an mq table, 70 another server error.

Debian: apt-get install python3-pymysql.
"""
import os
import re
import sys

import pymysql

from mq_session import (Fail, Parser, check_names, connect,
                        connection_options, execute, main, retried)

# The statements of mq-sql(7), word for word (t330 checks that they are
# there); those of the session are in mq_session.py. `mq_jobs` is the
# default table: prepared() puts the one asked for in its place.
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
ER_DUP_ENTRY = 1062
ER_NO_SUCH_THREAD = 1094


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
    p = Parser(description="push one job into mq's table")
    p.add_argument("--queue", default=env("MQ_QUEUE", "default"))
    p.add_argument("--priority", type=int, default=0)
    p.add_argument("--delay", type=float, default=0.0, help="seconds")
    p.add_argument("--max-attempts", type=int, default=10)
    p.add_argument("--dedup", help="at most one live job with this key")
    p.add_argument("--every", type=float, help="recurring: period, seconds")
    p.add_argument("--wake", action="store_true", help="wake a waiter")
    p.add_argument("--file", help="payload file (default: standard input)")
    connection_options(p)
    o = p.parse_args()
    check_names(p, o)
    if o.every is not None and o.every < 1:
        p.error("--every takes 1 second or more")
    if o.delay < 0 or not 1 <= o.max_attempts <= 4294967295:
        p.error("invalid --delay or --max-attempts")
    return o


def produce():
    o = options()
    if o.file:
        with open(o.file, "rb") as f:
            payload = f.read()
    else:
        payload = sys.stdin.buffer.read()
    db = connect(o, SCHEMA_MIN)
    job, existed = push(db, o, payload)
    if o.wake and not existed and o.delay == 0:
        wake(db, o)
    print(job)
    return 0


if __name__ == "__main__":
    sys.exit(main("producer.py", produce))
