# lib.sh: sourced by every test script. TAP output, a database of the
# test's own on the private server, and helpers to look into the tables.
#
# The server: $MQ_TEST_SOCKET when the runner (tests/run.sh) started one
# for the whole run; else this script starts its own and stops it at exit,
# so a single test still runs alone (`meson test -C build t030-pop`).

set -u
# (a script outside tests/, such as bench/bench.sh, names it)
TESTS_DIR=${MQ_TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
MQ=${MQ:-$TESTS_DIR/../build/cmd/mq}
T_NAME=$(basename "$0" .sh)
T_N=0
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mq-test.XXXXXX")

t_cleanup() {
  if [ -n "${T_OWN_SERVER:-}" ]; then
    sh "$TESTS_DIR/server.sh" stop "$T_OWN_SERVER"
  fi
  rm -rf "$T_TMP"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${MQ_TEST_SOCKET:-}" ]; then
  T_OWN_SERVER=$(mktemp -d "${TMPDIR:-/tmp}/mq-srv.XXXXXX")
  sh "$TESTS_DIR/server.sh" start "$T_OWN_SERVER" >&2 || {
    echo "Bail out! cannot start a private MariaDB"
    exit 1
  }
  MQ_TEST_SOCKET=$T_OWN_SERVER/sock
fi

# one database per test script, made anew each run
T_DB=$(printf '%s' "t_$T_NAME" | tr -c 'A-Za-z0-9_' '_')

# sql "STATEMENT": runs it as root in the test's database, tab-separated
sql() {
  mariadb --no-defaults --socket="$MQ_TEST_SOCKET" --user=root -N -B \
    "$T_DB" -e "$1"
}
sql_root() {
  mariadb --no-defaults --socket="$MQ_TEST_SOCKET" --user=root -N -B -e "$1"
}
sql_root "DROP DATABASE IF EXISTS \`$T_DB\`; CREATE DATABASE \`$T_DB\`" || {
  echo "Bail out! cannot create database $T_DB"
  exit 1
}

# mq sees only the test's settings: an empty option file, our socket
: >"$T_TMP/empty.cnf"
unset MQ_TABLE MQ_QUEUE MQ_HOST MQ_PORT MQ_USER MYSQL_PWD
export MQ_DEFAULTS_FILE="$T_TMP/empty.cnf"
export MQ_SOCKET="$MQ_TEST_SOCKET" MQ_USER=root MQ_DATABASE="$T_DB"

# fresh_waiters QUEUE [N]: waits (10 s at most) until N (1) waiters of
# QUEUE are early in a one-second park: SLEEP(1.000), under 300 ms in. A
# waiter also re-checks by itself at the end of each park, so only a
# push made in that window proves that the pusher's KILL QUERY woke it.
fresh_waiters() {
  _i=0
  while [ "$(sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait \`%\` $1 */%SLEEP(1.000)%' AND TIME_MS < 300 AND DB = '$T_DB' AND INFO NOT LIKE '%PROCESSLIST%'")" -lt "${2:-1}" ] && [ $_i -lt 500 ]; do
    sleep 0.02; _i=$((_i + 1))
  done
}

# ---- TAP ----
# python3 -c "$AS_FOREGROUND" CMD... &: CMD with SIGINT at its default,
# as a terminal's foreground job has it (a background job of this
# non-interactive shell starts with SIGINT ignored, and mq leaves an
# ignored signal ignored); $! is CMD's pid
AS_FOREGROUND='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
ok() { # ok DESCRIPTION: passes
  T_N=$((T_N + 1))
  echo "ok $T_N - $1"
}
not_ok() { # not_ok DESCRIPTION [DETAIL]
  T_N=$((T_N + 1))
  T_FAILED=$((T_FAILED + 1))
  echo "not ok $T_N - $1"
  # diagnostics stay short: the first 20 lines, each cut at 200 bytes
  [ $# -lt 2 ] || printf '%s\n' "$2" | head -n 20 | cut -c1-200 | sed 's/^/# /'
}
check() { # check DESCRIPTION COMMAND...: passes if COMMAND succeeds
  d=$1
  shift
  if "$@"; then ok "$d"; else not_ok "$d" "failed: $*"; fi
}
is() { # is ACTUAL EXPECTED DESCRIPTION
  if [ "$1" = "$2" ]; then
    ok "$3"
  else
    not_ok "$3" "got:      '$1'
expected: '$2'"
  fi
}
like() { # like ACTUAL GLOB DESCRIPTION
  case $1 in
  $2) ok "$3" ;;
  *) not_ok "$3" "got: '$1'
expected to match: '$2'" ;;
  esac
}
done_testing() {
  if [ -s "$T_TMP/query-failed" ]; then
    not_ok "every query of a helper (table_sum, counted_jobs...) succeeded" \
      "$(cat "$T_TMP/query-failed")"
  fi
  echo "1..$T_N"
  [ "$T_FAILED" -eq 0 ]
  exit $?
}

# promtool_check FILE DESCRIPTION: Prometheus's promtool accepts FILE
# (check metrics), silently; a TAP skip without promtool: it is not in
# Debian's main archive but for the prometheus package, out of which
# tests/deps.sh downloads it into .deps/bin, so a build without network
# (a package's) has none
PROMTOOL=$(command -v promtool || echo "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/.deps/bin/promtool")
promtool_check() {
  if [ -x "$PROMTOOL" ]; then
    "$PROMTOOL" check metrics <"$1" >"$T_TMP/promtool.out" 2>&1
    is "$?:$(cat "$T_TMP/promtool.out")" "0:" "$2"
  else
    ok "$2 # SKIP no promtool (tests/deps.sh downloads it into .deps/bin)"
  fi
}

# run CMD...: runs it, keeps stdout in $OUT, stderr in $ERR, status in $RC
run() {
  "$@" >"$T_TMP/out" 2>"$T_TMP/err"
  RC=$?
  OUT=$(cat "$T_TMP/out")
  ERR=$(cat "$T_TMP/err")
}

# expect_status STATUS DESCRIPTION CMD...: runs CMD, checks the status and
# that stderr is exactly one line when STATUS is not 0 or 1
expect_status() {
  want=$1 d=$2
  shift 2
  run "$@"
  if [ "$RC" -ne "$want" ]; then
    not_ok "$d" "exit status $RC, expected $want; stderr: $ERR"
  elif [ "$want" -gt 1 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" -ne 1 ]; then
    not_ok "$d" "stderr is not one line: $ERR"
  elif [ "$want" -gt 1 ] && [ -z "$ERR" ]; then
    not_ok "$d" "no message on stderr"
  else
    ok "$d"
  fi
}

# A helper's query that fails must not pass for a result: two empty
# strings compare equal, so "nothing changed" would pass with the table
# gone. t_query_failed WHAT DETAIL says so on stderr, notes it for
# done_testing (which then fails the test) and prints a text that no
# checksum or count, nor any other failure's text, can equal (a serial
# number: helpers run in $(...), where no variable outlives them).
t_query_failed() {
  # the client's last line is its error (it echoes the statement first)
  _d="$1: $(printf '%s\n' "$2" | grep . | tail -n 1 | tr '\t' ' ')"
  echo "$_d" >>"$T_TMP/query-failed"
  echo "# $T_NAME: query failed: $_d" >&2
  printf 'QUERY FAILED #%s (%s)\n' \
    "$(wc -l <"$T_TMP/query-failed" | tr -d ' ')" "$1"
}
# sql_checked WHAT STATEMENT: sql, but a failure is loud (t_query_failed)
sql_checked() {
  _o=$(sql "$2" 2>&1) || { t_query_failed "$1" "$_o"; return 1; }
  [ -z "$_o" ] || printf '%s\n' "$_o"
}

# table_sum [TABLE...]: checksums of the tables' rows (mq_jobs by
# default), one per table, to show nothing changed. A table that is gone
# checksums to NULL without an error: that fails too.
table_sum() {
  [ $# -gt 0 ] || set -- mq_jobs
  _list=
  for _t in "$@"; do _list="$_list${_list:+, }\`$_t\`"; done
  # one client for all the tables (a catalogue entry checks four)
  _o=$(sql "CHECKSUM TABLE $_list EXTENDED" 2>&1)
  _sums=$(printf '%s\n' "$_o" | cut -f2 | tr '\n' ' ')
  _sums=${_sums% }
  case " $_sums " in
  *[!0-9\ ]* | "  ")
    t_query_failed "table_sum $*" "$_o"
    return 1 ;;
  esac
  if [ "$(printf '%s\n' "$_o" | wc -l)" -ne $# ]; then
    t_query_failed "table_sum $*" "$_o"
    return 1
  fi
  echo "$_sums"
}

# The finished jobs of job table $1 (default mq_jobs) per queue and state,
# as the tables hold them and as $1_counts says ("queue state n," each):
# is "$(counted_jobs)" "$(finished_jobs)" checks the counts.
finished_jobs() {
  sql_checked finished_jobs "SELECT queue, state, COUNT(*) FROM \`${1:-mq_jobs}\` WHERE state IN ('done', 'dead') GROUP BY queue, state
       UNION ALL SELECT queue, 'archived', COUNT(*) FROM \`${1:-mq_jobs}_archive\` GROUP BY queue ORDER BY 1, 2" | tr '\t\n' ' ,'
}
counted_jobs() {
  sql_checked counted_jobs "SELECT queue, state, SUM(n) FROM \`${1:-mq_jobs}_counts\` WHERE state IN ('done', 'dead', 'archived') GROUP BY queue, state HAVING SUM(n) <> 0 ORDER BY 1, CAST(state AS CHAR)" | tr '\t\n' ' ,'
}

# counters [QUEUE]: the counters of QUEUE (default "default") as
# mq stats --json gives them: "pushed done failed dead requeued retried
# archived purged"
counters() {
  "$MQ" stats --json | python3 -c '
import json, sys
q = [x for x in json.load(sys.stdin)["queues"] if x["queue"] == sys.argv[1]]
c = q[0]["counters"] if q else {}
print(" ".join(str(c.get(k, 0)) for k in ("pushed", "done", "failed",
    "dead", "requeued", "retried", "archived", "purged")))' "${1:-default}"
}
# history_of ID: the job's history rows, "event state attempt worker error,"
history_of() {
  sql_checked history_of "SELECT event, state, attempt, COALESCE(worker, '-'), COALESCE(error, '-') FROM mq_jobs_history WHERE job_id = $1 ORDER BY seq" | tr '\t\n' ' ,'
}
# tallied [QUEUE]: what the counters pushed, done, failed, dead and
# requeued of QUEUE (default "default") must be, from the job table, the
# archive and the history (when nothing was purged, cancelled or moved
# to another queue): is "$(counters Q | cut -d' ' -f1-5)" "$(tallied Q)"
tallied() {
  _q=${1:-default}
  sql_checked tallied "SELECT
    (SELECT COUNT(*) FROM mq_jobs WHERE queue = '$_q') + (SELECT COUNT(*) FROM mq_jobs_archive WHERE queue = '$_q'),
    (SELECT COUNT(*) FROM mq_jobs WHERE queue = '$_q' AND state = 'done') + (SELECT COUNT(*) FROM mq_jobs_archive WHERE queue = '$_q' AND state = 'done'),
    (SELECT COUNT(*) FROM mq_jobs_history h WHERE h.event = 'failed' AND h.state = 'ready' AND h.job_id IN (SELECT id FROM mq_jobs WHERE queue = '$_q' UNION ALL SELECT id FROM mq_jobs_archive WHERE queue = '$_q')),
    (SELECT COUNT(*) FROM mq_jobs_history h WHERE h.state = 'dead' AND h.job_id IN (SELECT id FROM mq_jobs WHERE queue = '$_q' UNION ALL SELECT id FROM mq_jobs_archive WHERE queue = '$_q')),
    (SELECT COUNT(*) FROM mq_jobs_history h WHERE h.event = 'expired' AND h.state = 'ready' AND h.job_id IN (SELECT id FROM mq_jobs WHERE queue = '$_q' UNION ALL SELECT id FROM mq_jobs_archive WHERE queue = '$_q'))" | tr '\t' ' '
}

# The examples of the README and of doc/*.md: each block after an
# "<!-- example: NAME -->" marker (a NAME is in one file only).
# example_file NAME prints the file that has it; example NAME prints its
# code; run_example NAME runs it with sh -e (t080, t326), output in $OUT
# and $ERR, status in $RC.
README=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/README.md
EXAMPLE_FILES="$README $(ls "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}"/doc/*.md 2>/dev/null | tr '\n' ' ')"
example_file() {
  # shellcheck disable=SC2086 # the list of files, split on purpose
  grep -lxF "<!-- example: $1 -->" $EXAMPLE_FILES 2>/dev/null
}
example() {
  # shellcheck disable=SC2086
  awk -v name="$1" '
    $0 == "<!-- example: " name " -->" { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' $EXAMPLE_FILES
}
run_example() {
  example "$1" >"$T_TMP/$1.sh"
  if [ ! -s "$T_TMP/$1.sh" ]; then
    not_ok "README or doc/*.md has the $1 example"
    return
  fi
  run sh -e "$T_TMP/$1.sh"
}

# answers STATUS DESCRIPTION CMD...: CMD exits STATUS (an answer, not an
# error: mq why, mq check) with nothing on stderr
answers() {
  a_want=$1 a_d=$2
  shift 2
  run "$@"
  if [ "$RC" -eq "$a_want" ] && [ -z "$ERR" ]; then
    ok "$a_d"
  else
    not_ok "$a_d" "exit status $RC, expected $a_want; stderr: $ERR"
  fi
}

# ---- a private server on TCP (t216, t314) ----
# tcp_server DIR [MARIADBD_OPTION...]: a second private server in DIR on a
# free loopback port, $PORT (another one if that was taken: 5 tries);
# its output in $T_TMP/server.log. The caller stops it (server.sh stop).
tcp_server() {
  _dir=$1
  shift
  for _ in 1 2 3 4 5; do
    PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000))
    if MQ_SERVER_ARGS="--port=$PORT --bind-address=127.0.0.1 $*" \
      sh "$TESTS_DIR/server.sh" start "$_dir" >"$T_TMP/server.log" 2>&1; then
      return 0
    fi
    sh "$TESTS_DIR/server.sh" stop "$_dir"   # a port in use: another one
  done
  return 1
}

# ---- a hostile server (t300, t331) ----
# hostile_server [MARIADBD_OPTION...]: a second private server in $H, its
# clock 5h30 east of UTC (checked: one test point), its binary log on,
# stopped at exit; database h, and the account app with all rights on it.
# hsql "STATEMENT" runs it there as root, the session put right first;
# hostile SQL_MODE sets the hostile globals, and an init_connect (for
# app: root skips it) that turns autocommit off and fixes the clock and
# the next id.
hostile_server() {
  H=$T_TMP/hostile
  trap 'sh "$TESTS_DIR/server.sh" stop "$H" >/dev/null 2>&1; t_cleanup' EXIT
  TZ=IST-5:30 MQ_SERVER_ARGS="--default-time-zone=SYSTEM --log-bin=binlog $*" \
    sh "$TESTS_DIR/server.sh" start "$H" >&2 || {
    echo "Bail out! cannot start the hostile server"
    exit 1
  }
  hsql "CREATE DATABASE h; CREATE USER app@localhost; GRANT ALL ON h.* TO app@localhost"
  is "$(hsql "SELECT @@system_time_zone, TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW())" | tr '\t' ' ')" \
    "IST 330" "the server's clock is 5h30 east of UTC"
}
hsql() {
  mariadb --no-defaults --socket="$H/sock" --user=root -N -B \
    --init-command="SET SESSION autocommit=1, completion_type=0, sql_mode=DEFAULT, sql_select_limit=1000000, max_join_size=1000000000, max_statement_time=0, tx_read_only=0" \
    -e "$1"
}
hostile() { # hostile SQL_MODE
  hsql "SET GLOBAL autocommit=0, GLOBAL sql_mode='$1',
    GLOBAL init_connect='SET autocommit=0, timestamp=1, insert_id=3',
    GLOBAL max_statement_time=1, GLOBAL div_precision_increment=0,
    GLOBAL idle_transaction_timeout=1, GLOBAL optimizer_switch='index_merge=off,index_condition_pushdown=off',
    GLOBAL innodb_lock_wait_timeout=1000, GLOBAL lock_wait_timeout=1000,
    GLOBAL completion_type=2, GLOBAL sql_select_limit=1, GLOBAL max_join_size=10,
    GLOBAL unique_checks=0, GLOBAL check_constraint_checks=0,
    GLOBAL sql_safe_updates=1, GLOBAL wait_timeout=3, GLOBAL tx_read_only=1"
}

# ---- the examples of mq-sql(7) (t330, t331) ----
# examples_env: $EX, their folder; $PY, the python3 Debian's
# python3-pymysql is for (another python3 may come first in PATH). Then
# lang_cmd LANG producer|consumer prints LANG's (py, php, pl) interpreter
# and file; produce LANG ARGS... and consume LANG ARGS... run them;
# all_bytes FILE writes the 256 byte values, then NUL and invalid UTF-8
# again, to FILE.
examples_env() {
  EX=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/examples
  PY=python3
  if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; fi
}
lang_cmd() {
  case $1 in
  py) echo "$PY $EX/$2.py" ;;
  php) echo "php $EX/$2.php" ;;
  pl) echo "perl $EX/$2.pl" ;;
  esac
}
# shellcheck disable=SC2046
produce() { l=$1; shift; $(lang_cmd "$l" producer) "$@"; }
# shellcheck disable=SC2046
consume() { l=$1; shift; $(lang_cmd "$l" consumer) "$@"; }
all_bytes() {
  _i=0
  while [ $_i -lt 256 ]; do
    # shellcheck disable=SC2059
    printf "\\$(printf %o $_i)"
    _i=$((_i + 1))
  done >"$1"
  printf '\000\303\050\377\376\300\200' >>"$1"
}

# ---- a 3-node Galera cluster (tests/galera.sh) ----
# galera_cluster: $MQ_TEST_GALERA when the runner started one for the
# whole run; else starts one for this test, stopped at its exit. Then
# G_DIR is the cluster's directory, the test's database exists on every
# node, and: gsql N "STATEMENT" runs it as root on node N in that
# database; gmq N ARGS... runs mq against node N; gstatus N NAME reads a
# status variable of node N.
galera_cluster() {
  # without what a cluster needs (the SST scripts come from a download:
  # none in a build without network), the test skips, as it does
  # without galera-4
  _miss=$(sh "$TESTS_DIR/galera.sh" missing | paste -sd, - | sed 's/,/, /g')
  if [ -z "${MQ_TEST_GALERA:-}" ] && [ -n "$_miss" ]; then
    if [ "$T_N" -eq 0 ]; then
      echo "1..0 # SKIP no Galera cluster here: missing $_miss"
      exit 0
    fi
    ok "# SKIP the rest: no Galera cluster here: missing $_miss"
    done_testing
  fi
  if [ -n "${MQ_TEST_GALERA:-}" ]; then
    G_DIR=$MQ_TEST_GALERA
    # a test before this one that failed half-way may have left a node
    # down (t400 kills one): it joins again; a node that is up is waited
    # for until it is Synced (a donor, a joiner: 60 s at most)
    for _n in 1 2 3; do
      _i=0
      while _s=$(sh "$TESTS_DIR/galera.sh" status "$G_DIR" $_n) &&
          [ -n "$_s" ] && [ "$_s" != Synced ] && [ $_i -lt 600 ]; do
        sleep 0.1; _i=$((_i + 1))
      done
      # up but not Synced after a minute, or not answering: stuck (a
      # donor that lost the group stays Donor/Desynced): it starts anew
      if [ "$_s" != Synced ] && kill -0 "$(cat "$G_DIR/n$_n/mariadbd.pid" 2>/dev/null)" 2>/dev/null; then
        sh "$TESTS_DIR/galera.sh" kill "$G_DIR" $_n
        _s=
      fi
      [ -n "$_s" ] ||
        sh "$TESTS_DIR/galera.sh" rejoin "$G_DIR" $_n >&2 || {
          echo "Bail out! node $_n of the shared Galera cluster is down"
          exit 1
        }
    done
  else
    G_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mq-gal.XXXXXX")
    T_OWN_GALERA=$G_DIR
    trap 'sh "$TESTS_DIR/galera.sh" stop "$T_OWN_GALERA"; t_cleanup' EXIT
    sh "$TESTS_DIR/galera.sh" start "$G_DIR" >&2 || {
      echo "Bail out! cannot start a Galera cluster"
      exit 1
    }
  fi
  mariadb --no-defaults --socket="$G_DIR/n1/sock" --user=root -N -B \
    -e "DROP DATABASE IF EXISTS \`$T_DB\`; CREATE DATABASE \`$T_DB\`" || {
    echo "Bail out! cannot create database $T_DB on the cluster"
    exit 1
  }
}
# galera_hosts: the nodes' client addresses, for --host: N1, N2, N3, and
# DEAD (inside the cluster's range of ports: nobody listens); port N
# prints node N's port. mq connects by them, not by a socket.
galera_hosts() {
  _base=$(cat "$G_DIR/base")
  N1=127.0.0.1:$(port 1) N2=127.0.0.1:$(port 2) N3=127.0.0.1:$(port 3)
  DEAD=127.0.0.1:$((_base + 7))
  export MQ_SOCKET='' MQ_USER=root MQ_DATABASE=$T_DB
}
port() { echo $((_base + 10 * $1 + 3)); }
gsql() { # gsql N STATEMENT: after node N caught up with the cluster
  mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root -N -B \
    "$T_DB" -e "SET SESSION wsrep_sync_wait = 15; $2"
}
gmq() { # gmq N ARGS... (mq sees what node N has applied so far)
  _n=$1
  shift
  MQ_SOCKET="$G_DIR/n$_n/sock" "$MQ" "$@"
}
gstatus() { # gstatus N VARIABLE
  gsql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2
}
