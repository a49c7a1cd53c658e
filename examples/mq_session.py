"""mq_session.py: what producer.py and consumer.py share: the session
mq-sql(7) asks for (THE SESSION), the connection and its options, the
schema check, and the retry of a deadlock or a lock wait timeout. It
lies next to them: Python finds it in the script's own directory,
whatever the current one.

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
# there, in this file and the examples'). `mq_jobs` is the default
# table: prepared() puts the one asked for in its place.
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
  `mq_jobs_waiters`, `mq_jobs_gates`, `mq_jobs_ticks`,
  `mq_jobs_deps`, `mq_jobs_waits`, `mq_jobs_schedules`,
  `mq_jobs_fired`
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

# Whether the server is a Galera node: 1 or 0 (MySQL: 0, which skips
# what MariaDB alone reads).
GALERA = """
SELECT 0 /*M! + (SELECT COUNT(*)
  FROM information_schema.GLOBAL_VARIABLES
 WHERE VARIABLE_NAME = 'WSREP_ON' AND VARIABLE_VALUE = 'ON') */
"""

RETRIES = 8             # tries of a transaction that met 1213 or 1205
ER_LOCK_WAIT, ER_DEADLOCK = 1205, 1213


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
    # PyMySQL quotes the values into the text in the client and sends
    # it as one COM_QUERY: it never prepares on the server (it has no
    # COM_STMT_PREPARE). So a Galera brute-force abort always reaches
    # us as error 1213 of a statement, which retried() retries: the
    # abort that loses its error (mq-sql(7), WHAT BREAKS THE CONTRACT)
    # lands in server-side prepares only, which the PHP and Perl
    # examples check for in their run() (t403 shows all three).
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


def transaction(db, fn, autocommit=False):
    """fn() in a transaction (or alone, autocommitted), retried as
    retried() says. fn may raise Fail: rolled back."""
    def once():
        try:
            if not autocommit:
                db.begin()
            r = fn()
            if not autocommit:
                db.commit()
            return r
        except (pymysql.err.OperationalError, Fail):
            db.rollback()
            raise
    return retried(db, once)


def session(db, o, lock_wait=50):
    """The session mq-sql(7) asks for (THE SESSION), whatever the server's
    globals or the account's init_connect made it: autocommit on (else
    every write is rolled back at disconnect), UTC, sql_mode, READ
    COMMITTED, the limits, the CHECKs off; the database asked for (an
    init_connect may have run USE), mq's tables and not temporary ones
    that hide them; statement logging turned to rows. And, on the
    connection, whether the server is a Galera node (db.mq_galera) and
    the database the session uses (db.mq_database)."""
    execute(db, SQL_ROLLBACK, (), o.table)
    execute(db, SQL_SESSION, (lock_wait, 60), o.table)
    execute(db, SQL_ISOLATION, (), o.table)
    current = execute(db, SQL_DATABASE, (), o.table).fetchone()[0]
    if o.database and current != o.database:
        db.select_db(o.database)        # the protocol's, not SQL text
    elif not o.database and current is None:
        raise Fail("no database selected: give --database, set "
                   "MQ_DATABASE or database= in an option file", 78)
    db.mq_database = o.database or current
    execute(db, SQL_DROP_TEMPORARY, (), o.table)
    db.mq_galera = execute(db, GALERA, (), o.table).fetchone()[0] == 1
    if execute(db, SQL_BINLOG, (), o.table).fetchone()[0] == "STATEMENT":
        try:
            execute(db, SQL_LOG_ROWS, (), o.table)
        except pymysql.err.MySQLError as e:
            raise Fail("the server logs statements (binlog_format="
                       "STATEMENT), which InnoDB refuses for READ COMMITTED "
                       "transactions, and this account cannot log rows "
                       "instead (%s): set binlog_format=ROW or MIXED, or "
                       "grant BINLOG ADMIN" % e.args[1], 78)


# The option files mq reads (mq(1), OPTION FILES), in its order, and the
# groups it reads in them. PyMySQL's own read_default_file reads one
# group of one file (and its read_default_group replaces [client]
# instead of adding to it), so the files are read here, as Connector/C
# reads them for mq, and what they say goes to PyMySQL as arguments.
GROUPS = ("client", "client-server", "client-mariadb", "mq")
SETTINGS = ("host", "port", "socket", "user", "password", "database")


def default_files():
    files = ["/etc/my.cnf", "/etc/mysql/my.cnf"]
    home = os.environ.get("MARIADB_HOME") or os.environ.get("MYSQL_HOME")
    if home:
        files.append(os.path.join(home, "my.cnf"))
    if os.environ.get("HOME"):
        files.append(os.path.join(os.environ["HOME"], ".my.cnf"))
    return files


def unquote(v):
    """An option's value as Connector/C reads it: quoted, the text
    between the quotes with its escapes; else up to a '#'."""
    if len(v) >= 2 and v[0] in "'\"" and v[-1] == v[0]:
        v = v[1:-1]
    else:
        v = v.split("#", 1)[0].rstrip()
    esc = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "s": " ",
           "\\": "\\", "'": "'", '"': '"'}
    return re.sub(r"\\(.)", lambda m: esc.get(m.group(1), "\\" + m.group(1)), v)


def read_option_file(path, found, depth=0):
    """found updated with the settings of mq's groups in path (and the
    files it includes); why path cannot be read, or None."""
    if os.path.isdir(path):
        return "a directory"
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "surrogateescape")
    except OSError as e:
        return e.strerror
    ours = False
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("!include") and depth < 10:
            word, _, arg = s.partition(" ")
            arg = arg.strip()
            if word == "!include":
                read_option_file(arg, found, depth + 1)
            elif word == "!includedir":     # Connector/C: DIR/my.cnf only
                read_option_file(os.path.join(arg, "my.cnf"), found,
                                 depth + 1)
            continue
        if s[0] == "[":
            ours = s[1:].split("]", 1)[0].strip().lower() in GROUPS
            continue
        key, eq, value = s.partition("=")
        key = key.strip().lower().replace("_", "-")
        if ours and eq and key in SETTINGS:
            found[key] = unquote(value.strip())
    return None


def option_settings(defaults_file):
    """The settings of the option files: only defaults_file if given
    (78 if it cannot be read, as mq), else the usual ones that exist."""
    found = {}
    if defaults_file:
        why = read_option_file(defaults_file, found)
        if why:
            raise Fail("cannot read option file '%s': %s" %
                       (defaults_file, why), 78)
    else:
        for f in default_files():
            read_option_file(f, found)
    return found


# mq's exit status for a server's or the client library's error number
# (mq(1), EXIT STATUS)
def status_of(code):
    if code in (1213, 1205):
        return 75
    if code in (1040, 1047, 1053, 1927, 5013, 5014, 5015) or \
            2000 <= code < 3000:
        return 69                       # cannot connect, connection lost
    if code in (1044, 1045, 1142, 1143, 1227):
        return 77                       # access denied
    if code in (1046, 1049, 1102, 1146, 1054):
        return 78                       # no database, no such table
    if code == 1153:
        return 65
    return 70


def db_error(e, what=None):
    """A Fail for a PyMySQL error: one line, mq's status for its code."""
    code = e.args[0] if e.args and isinstance(e.args[0], int) else 0
    msg = e.args[1] if len(e.args) > 1 else str(e)
    msg = " ".join(str(msg).split())
    if code:
        msg += " (error %d)" % code
    return Fail((what + ": " if what else "") + msg, status_of(code))


def connect(o, schema_min, lock_wait=50, node=None):
    """Connected as mq would be: the options (or MQ_* variables) first,
    then the option files, then the defaults of Connector/C (no host or
    localhost: the Unix socket, MYSQL_UNIX_PORT or Debian's; the
    password from an option file, else MYSQL_PWD). node, (host, socket,
    port), names another server (a consumer's confirming node): only
    these, not the option files' (which name the first), and o.database
    as it is."""
    files = option_settings(o.defaults_file)
    pick = lambda k: getattr(o, k) or files.get(k) or None
    if node is not None:
        host, socket_path, port = node
    else:
        host, socket_path, port = pick("host"), pick("socket"), pick("port")
        o.database = pick("database")
    kw = dict(user=pick("user"), password=files.get("password") or
              os.environ.get("MYSQL_PWD", ""), database=o.database,
              charset="utf8mb4", autocommit=True, binary_prefix=True,
              connect_timeout=10)
    if o.database and not re.fullmatch(r"[A-Za-z0-9_$-]{1,64}", o.database):
        raise Fail("invalid database name '%s'" % o.database, 78)
    if host in (None, "localhost"):
        kw["unix_socket"] = socket_path or os.environ.get(
            "MYSQL_UNIX_PORT") or "/run/mysqld/mysqld.sock"
    else:
        try:
            kw.update(host=host, port=int(port or os.environ.get(
                "MYSQL_TCP_PORT") or 3306))
        except ValueError:
            raise Fail("invalid port '%s'" % port, 78)
    try:
        db = pymysql.connect(**kw)
    except pymysql.err.MySQLError as e:
        f = db_error(e, "cannot connect")
        if not (e.args and isinstance(e.args[0], int)):
            f.status = 69   # the protocol broke (PyMySQL's, no number)
        raise f
    session(db, o, lock_wait)
    tz = os.environ.get("MQ_EXAMPLE_TIME_ZONE")
    if tz:
        db.cursor().execute("SET time_zone = %s", (tz,))
    row = execute(db, SQL_VERSION, (o.table,), o.table).fetchone()
    m = re.fullmatch(r"mq schema (\d+)", row[0] if row else "")
    if not m or int(m.group(1)) < schema_min:
        # newer schemas only add: these statements stay right there
        raise Fail("table '%s' is not an mq table of schema %d or later: "
                   "run 'mq init'" % (o.table, schema_min), 78)
    return db


class Parser(argparse.ArgumentParser):
    """argparse's, but a usage error is one line and status 64, as mq's
    (argparse's own is 2, which is "lease lost" here)."""
    def error(self, message):
        self.exit(64, "%s: %s\n" % (self.prog, message))


def connection_options(p):
    """The connection's options, from the environment by default (a
    variable set to the empty string counts as unset, as for mq)."""
    env = lambda k, d=None: os.environ.get(k) or d
    p.add_argument("--socket", default=env("MQ_SOCKET"))
    p.add_argument("--host", default=env("MQ_HOST"))
    p.add_argument("--port", default=env("MQ_PORT"))
    p.add_argument("--user", default=env("MQ_USER"))
    p.add_argument("--database", default=env("MQ_DATABASE"))
    p.add_argument("--table", default=env("MQ_TABLE", "mq_jobs"))
    p.add_argument("--defaults-file", default=env("MQ_DEFAULTS_FILE"))


def check_names(p, o):
    """Refuses (usage, 64) a table, queue or database name mq would not
    take: they end up in SQL text."""
    if not name_ok(o.table) or not name_ok(o.queue, r"[A-Za-z0-9_.-]{1,64}"):
        p.error("invalid table or queue name")
    # as the other languages, which put it in a USE: letters, digits, _ $ -
    if o.database and not re.fullmatch(r"[A-Za-z0-9_$-]{1,64}", o.database):
        p.error("invalid database name")


def main(name, run):
    """run() as the script name, its errors reported in one line: the
    exit status."""
    try:
        return run()
    except Fail as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return e.status
    except pymysql.err.MySQLError as e:
        e = db_error(e)
        print("%s: %s" % (name, e), file=sys.stderr)
        return e.status
    except OSError as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return 74
