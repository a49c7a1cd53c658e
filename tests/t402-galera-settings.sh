#!/bin/sh
# t402-galera-settings.sh: the Galera paths under another node's hostile
# globals, as t300 runs one server's: node 2 of the cluster gets
# autocommit off, sql_mode ORACLE, a zone east of UTC, COMMIT that
# disconnects, one-row select limits, unique and CHECK checks off,
# read-only transactions by default, idle transactions killed after 1 s,
# long lock waits, and no server-side retry of a certification failure
# (wsrep_retry_autocommit=0); an ordinary account's init_connect turns
# autocommit off and fixes the clock and the next id. On it: a push
# that wakes another node's waiter in its transaction, a waiter woken
# by another node's push whose claim deletes its waiter rows, dedup,
# mq work, fail, and two recounts at once (node 2's and node 3's); the
# other nodes' tables show exactly what mq printed. Then node 2 without
# wsrep_auto_increment_control, its offset another node's: its share
# from the status. The globals are put
# back at the end (run alone: no other test uses the cluster meanwhile).
. "$(dirname "$0")/lib.sh"
galera_cluster

vars="autocommit sql_mode init_connect time_zone completion_type
  sql_select_limit max_join_size unique_checks check_constraint_checks
  sql_safe_updates tx_read_only idle_transaction_timeout
  innodb_lock_wait_timeout lock_wait_timeout max_statement_time
  div_precision_increment wsrep_retry_autocommit
  wsrep_auto_increment_control auto_increment_increment
  auto_increment_offset"
# the statement that puts node 2's globals back as they are now
restore=$(for v in $vars; do
  echo "SELECT CONCAT('$v=', IF(@@GLOBAL.$v REGEXP '^[0-9.]+\$', @@GLOBAL.$v, QUOTE(@@GLOBAL.$v)));"
done | mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root -N -B |
  paste -sd, -)
trap 'mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root \
  -e "SET GLOBAL $restore; DROP USER IF EXISTS app_t402@localhost" \
  >/dev/null 2>&1
  [ -z "${T_OWN_GALERA:-}" ] || sh "$TESTS_DIR/galera.sh" stop "$T_OWN_GALERA"
  t_cleanup' EXIT
like "$restore" "autocommit=*,wsrep_retry_autocommit=*,auto_increment_offset=*" \
  "node 2's globals read, to be put back"

gsql 1 "CREATE USER IF NOT EXISTS app_t402@localhost;
  GRANT ALL ON \`$T_DB\`.* TO app_t402@localhost"
gmq 1 init >/dev/null
mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root -e "SET GLOBAL
  autocommit=0, sql_mode='ORACLE', time_zone='+05:30',
  init_connect='SET autocommit=0, timestamp=1, insert_id=3',
  completion_type=2, sql_select_limit=1, max_join_size=10,
  unique_checks=0, check_constraint_checks=0, sql_safe_updates=1,
  tx_read_only=1, idle_transaction_timeout=1,
  innodb_lock_wait_timeout=1000, lock_wait_timeout=1000,
  max_statement_time=1, div_precision_increment=0,
  wsrep_retry_autocommit=0"
is "$(mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root -N -B \
  -e "SELECT @@autocommit, @@sql_mode, @@tx_read_only")" \
  "0	PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ORACLE,NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS,NO_AUTO_CREATE_USER,SIMULTANEOUS_ASSIGNMENT	1" \
  "node 2's new sessions start hostile"

: >"$T_TMP/errs"
# fresh N QUEUE: waits (10 s at most) until a waiter of QUEUE on node N
# is early in a one-second park (SLEEP(1.000), under 300 ms in): only a
# wakeup finds a push made then within 700 ms (as t401)
fresh() {
  _i=0
  while [ "$(mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root -N -B -e "SET SESSION sql_mode=DEFAULT, autocommit=1; SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait \`mq_jobs\` $2 */%SLEEP(1.000)%' AND TIME_MS < 300 AND INFO NOT LIKE '%PROCESSLIST%'")" != 1 ] && [ $_i -lt 500 ]; do
    sleep 0.02; _i=$((_i + 1))
  done
  [ $_i -lt 500 ]
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# woken WAITER PUSHER QUEUE: a pop --wait on node WAITER, a push on node
# PUSHER early in its park; its status, the job, and the milliseconds
# from the push's start to the pop's exit
woken() {
  ( gmq "$1" pop --wait 30s --queue "$3" --receipt-file "$T_TMP/r.$3" \
      >"$T_TMP/got.$3" 2>>"$T_TMP/errs"; echo "$? $(now_ms)" >"$T_TMP/rc.$3" ) &
  _p=$!
  fresh "$1" "$3" || echo "the waiter on node $1 never parked" >>"$T_TMP/errs"
  _t=$(now_ms)
  gmq "$2" push --queue "$3" "job for $3" >/dev/null 2>>"$T_TMP/errs"
  wait $_p
  read -r _rc _end <"$T_TMP/rc.$3"
  echo "$_rc $(cat "$T_TMP/got.$3") $((_end - _t))"
}
for way in "1 2 wa" "2 3 wb" "2 2 wc"; do
  set -- $way
  r=$(woken "$1" "$2" "$3")
  like "$r" "0 job for $3 *" "push on node $2 -> pop --wait on node $1: the job"
  check "woken, not found at the park's end: ${r##* } ms (< 700)" \
    [ "${r##* }" -lt 700 ]
  expect_status 0 "ack of $3 on node $1" gmq "$1" ack "$(cat "$T_TMP/r.$3")"
done
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs_waiters")" 0 \
  "no waiter row is left (the claims deleted theirs)"
is "$(gsql 1 "SELECT GROUP_CONCAT(state ORDER BY queue) FROM mq_jobs WHERE queue LIKE 'w_'")" \
  "done,done,done" "the three jobs are done on node 1"

expect_status 0 "push --dedup on node 2" gmq 2 push --queue d --dedup k one
first=$OUT
expect_status 0 "push --dedup again on node 2" gmq 2 push --queue d --dedup k two
is "$OUT" "$first" "the same job (unique_checks off on node 2)"
expect_status 0 "the same key on node 3" gmq 3 push --queue d --dedup k three
is "$OUT" "$first" "the same job across nodes"
is "$(gsql 1 "SELECT COUNT(*), MIN(payload) FROM mq_jobs WHERE queue = 'd'")" \
  "1	one" "one row, the first payload"

# mq work on node 2 over jobs pushed on nodes 1 and 3; one of them fails
seq 1 20 | gmq 1 push --lines --queue wk >/dev/null 2>&1
seq 21 40 | gmq 3 push --lines --queue wk >/dev/null 2>&1
gsql 2 "SELECT 1" >/dev/null	# node 2 has applied both pushes
expect_status 0 "mq work on node 2" gmq 2 work --queue wk --exit-when-empty \
  --concurrency 3 -- sh -c 'read -r n; echo "$n" >>"$0/ran"; [ "$n" != 7 ]' \
  "$T_TMP"
gsql 1 "SELECT 1" >/dev/null
is "$(sort -n "$T_TMP/ran" | uniq | wc -l | tr -d ' ')" 40 "every job ran"
is "$(gsql 1 "SELECT state, COUNT(*) FROM mq_jobs WHERE queue = 'wk' GROUP BY state ORDER BY state" | tr '\t\n' ' ')" \
  "ready 1 done 39 " "39 done, the failed one ready again (node 1)"
is "$(gsql 3 "SELECT attempts FROM mq_jobs WHERE queue = 'wk' AND state = 'ready'")" \
  1 "its attempt counted once (node 3)"

# two recounts at once, node 2's (hostile) and node 3's, of counts
# that another program's rows have made wrong
gsql 1 "INSERT INTO mq_jobs (queue, state, payload, attempts, finished_at)
  SELECT 'rc', 'done', 'x', 1, UTC_TIMESTAMP(6) FROM seq_1_to_50"
( gmq 2 stats --recount --queue rc >/dev/null 2>>"$T_TMP/errs"; echo $? >"$T_TMP/rc2" ) &
( gmq 3 stats --recount --queue rc >/dev/null 2>>"$T_TMP/errs"; echo $? >"$T_TMP/rc3" ) &
wait
is "$(cat "$T_TMP/rc2") $(cat "$T_TMP/rc3")" "0 0" "both recounts succeed"
gsql 1 "SELECT 1" >/dev/null	# node 1 caught up
is "$(gmq 1 stats --queue rc | awk '$1 == "rc" { print $7 }')" 50 \
  "node 1 counts 50 done, not 100"

# an ordinary account, whose init_connect sets autocommit off, the clock
# to 1970 and the next id to 3
export MQ_USER=app_t402
expect_status 0 "push as app_t402 on node 2" gmq 2 push --queue app a1
id=$OUT
if [ "$id" != 3 ]; then ok "its id ($id) is the server's, not init_connect's insert_id"
else not_ok "its id is init_connect's insert_id 3"; fi
expect_status 0 "pop as app_t402 on node 2" gmq 2 pop --queue app \
  --receipt-file "$T_TMP/r.app"
is "$OUT" a1 "the job"
expect_status 0 "ack as app_t402 on node 2" gmq 2 ack "$(cat "$T_TMP/r.app")"
is "$(gsql 1 "SELECT state, YEAR(created_at) > 2000 FROM mq_jobs WHERE id = $id")" \
  "done	1" "done on node 1, with the server's clock"
unset MQ_USER

is "$(grep -c . "$T_TMP/errs")" 0 "nothing on any stderr"

# A node whose auto-increment offset Galera does not set from each view
# (wsrep_auto_increment_control off; where it does, the offset is the
# node's index + 1, which mq reads instead of the status): its share
# comes from the status, not from an offset that is another node's
n2sql() { # n2sql STATEMENT: on node 2, in a session that is not hostile
  mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root -N -B -e "SET
    SESSION sql_mode=DEFAULT, autocommit=1, sql_select_limit=DEFAULT,
    sql_big_selects=1,
    wsrep_sync_wait=15; $1"
}
idx2=$(n2sql "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
  WHERE VARIABLE_NAME = 'WSREP_LOCAL_INDEX'")
# (off, the step falls back to 1: it stays the cluster's 3 here)
n2sql "SET GLOBAL wsrep_auto_increment_control=0, auto_increment_increment=3,
  auto_increment_offset=$(((idx2 + 1) % 3 + 1))"
gsql 1 "INSERT INTO mq_jobs (queue, payload) SELECT 'off', 'x' FROM seq_1_to_30"
n2sql "SELECT 1" >/dev/null	# node 2 has the jobs
ids=$(gmq 2 pop --queue off --count 3 --json 2>>"$T_TMP/errs" |
  sed -n 's/^{"id":\([0-9]*\),.*/\1/p' | paste -sd, -)
is "$(gsql 1 "SELECT COUNT(*), SUM(((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $idx2) FROM mq_jobs WHERE id IN (${ids:-0})")" \
  "3	3" "node 2 without wsrep_auto_increment_control, another node's offset: its 3 jobs from its own share"
grep . "$T_TMP/errs" | sed 's/^/# /'
done_testing
