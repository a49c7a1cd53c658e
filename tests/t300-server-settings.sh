#!/bin/sh
# The same guarantees under any server globals and init_connect: a second
# private server, in a time zone east of UTC, with autocommit off,
# sql_mode ORACLE then ANSI, init_connect turning autocommit off (and
# fixing the clock and the next id) for an ordinary account,
# max_statement_time=1, div_precision_increment=0, optimizer switches
# off, idle transactions killed after 1 s, lock waits longer than mq's
# read timeout, COMMIT that disconnects, one-row select limits, unique
# and CHECK checks off, read-only transactions by default. The core path
# of every command runs against it, as root and as that account, and the
# tables show exactly what mq printed: the operator's commands too (ls,
# why, show, check, retry by id and by filter into another queue, top
# --once across the idle timeouts) and the counters of stats --json.
. "$(dirname "$0")/lib.sh"

# the hostile server, its globals and init_connect (lib.sh)
hostile_server --performance-schema=ON

export MQ_SOCKET="$H/sock" MQ_DATABASE=h
round() { # round USER SQL_MODE TABLE
  export MQ_USER=$1 MQ_TABLE=$3
  hostile "$2"
  w="[$1, $2]"
  expect_status 0 "$w init" "$MQ" init
  expect_status 0 "$w init again (schema recognised)" "$MQ" init
  expect_status 0 "$w push" "$MQ" push p1
  is "$OUT" 1 "$w push printed id 1"
  expect_status 0 "$w push --lines" sh -c 'printf "l1\nl2\nl3\nl4\n" | "$0" push --lines' "$MQ"
  is "$(echo $OUT)" "2 3 4 5" "$w ids 2..5"
  expect_status 0 "$w push --dedup" "$MQ" push --dedup k d1
  expect_status 0 "$w push --dedup again: the same job" "$MQ" push --dedup k d2
  is "$OUT" 6 "$w dedup holds (unique_checks off globally)"
  expect_status 0 "$w push --delay" "$MQ" push --queue later --delay 1h s1
  is "$(hsql "SELECT COUNT(*) FROM h.$3")" 7 "$w every push committed (autocommit off globally)"
  is "$(hsql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), MIN(available_at)) BETWEEN -60 AND 0,
               TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(6), MAX(available_at)) BETWEEN 58 AND 60 FROM h.$3" | tr '\t' ' ')" \
    "1 1" "$w due times are UTC: now, and in an hour"
  expect_status 0 "$w stats" "$MQ" stats --json
  like "$OUT" '*"queue":"default","ready":6,"scheduled":0,*' "$w stats counts 6 ready (select limit 1 globally)"
  expect_status 0 "$w pop --claim update" "$MQ" pop --claim update --shell
  r1=$(printf '%s\n' "$OUT" | sed -n 's/^MQ_RECEIPT=//p')
  expect_status 0 "$w pop --claim update again" "$MQ" pop --claim update --shell
  r2=$(printf '%s\n' "$OUT" | sed -n 's/^MQ_RECEIPT=//p')
  check "$w two claims, two jobs (${r1%%.*} and ${r2%%.*})" test "${r1%%.*}" != "${r2%%.*}"
  expect_status 0 "$w pop skip-locked" "$MQ" pop --claim skip-locked --shell
  r3=$(printf '%s\n' "$OUT" | sed -n 's/^MQ_RECEIPT=//p')
  is "$(hsql "SELECT COUNT(*) FROM h.$3 WHERE state = 'leased'")" 3 "$w three jobs leased"
  expect_status 0 "$w ack" "$MQ" ack "$r1"
  expect_status 0 "$w extend" "$MQ" extend --lease 10m "$r2"
  expect_status 0 "$w fail" "$MQ" fail --error boom "$r3"
  is "$(hsql "SELECT state FROM h.$3 WHERE id = ${r1%%.*}")" done "$w the ack committed"
  is "$(hsql "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(6), leased_until) >= 9 FROM h.$3 WHERE id = ${r2%%.*}")" 1 \
    "$w the extend committed (UTC)"
  is "$(hsql "SELECT state, attempts, CAST(last_error AS CHAR) FROM h.$3 WHERE id = ${r3%%.*}" | tr '\t' ' ')" \
    "ready 1 boom" "$w the fail committed"
  expect_status 0 "$w pause" "$MQ" pause default
  expect_status 1 "$w pop from the paused queue: nothing" "$MQ" pop
  expect_status 0 "$w resume" "$MQ" resume default
  hsql "UPDATE h.$3 SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = ${r2%%.*}"
  expect_status 0 "$w requeue-stale" "$MQ" requeue-stale
  is "$(hsql "SELECT state FROM h.$3 WHERE id = ${r2%%.*}")" ready "$w the stale job is ready again"
  expect_status 0 "$w cancel" "$MQ" cancel 5
  # a wait longer than the server's max_statement_time (1 s): a push
  # from another process ends it
  ( sleep 1.5; "$MQ" push --queue w w1 >/dev/null ) &
  expect_status 0 "$w pop --wait 5s across max_statement_time=1" \
    "$MQ" pop --queue w --wait 5s --json
  like "$OUT" '*"payload":"w1"*' "$w got the job pushed while it waited"
  wait
  expect_status 0 "$w work" "$MQ" work --exit-when-empty -- sh -c 'cat >/dev/null'
  is "$(hsql "SELECT COUNT(*) FROM h.$3 WHERE queue = 'default' AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)")" 0 \
    "$w work did every due job"
  done=$(hsql "SELECT COUNT(*) FROM h.$3 WHERE state = 'done'")
  expect_status 0 "$w archive" "$MQ" archive --older-than 0s
  is "$(hsql "SELECT COUNT(*) FROM h.${3}_archive") $(hsql "SELECT COUNT(*) FROM h.$3 WHERE state = 'done'")" \
    "$done 0" "$w archived the $done done jobs"
  expect_status 0 "$w purge" "$MQ" purge --queue later --yes
  is "$(hsql "SELECT COUNT(*) FROM h.$3 WHERE queue = 'later'")" 0 "$w purged the scheduled job"
  expect_status 0 "$w stats --recount" "$MQ" stats --recount
  # a recurring job whose anchor is 40 minutes old: the next slot is
  # in 20 minutes, whatever div_precision_increment says
  expect_status 0 "$w push --every 1h" "$MQ" push --queue every --every 1h e1
  hsql "UPDATE h.$3 SET every_anchor = UTC_TIMESTAMP(6) - INTERVAL 40 MINUTE WHERE queue = 'every'"
  r=$("$MQ" pop --queue every --shell | sed -n 's/^MQ_RECEIPT=//p')
  expect_status 0 "$w ack of the recurring job" "$MQ" ack "$r"
  is "$(hsql "SELECT state, TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(6), available_at) BETWEEN 18 AND 20 FROM h.$3 WHERE queue = 'every'" | tr '\t' ' ')" \
    "ready 1" "$w due again at the next slot, 20 minutes on (UTC, no run skipped)"
  ops "$@"
}
# ops USER SQL_MODE TABLE: the operator's commands, on a queue of their
# own: one job done, one failed and due again in an hour, one dead
ops() {
  c1=$("$MQ" push --queue ops a1) c2=$("$MQ" push --queue ops a2) c3=$("$MQ" push --queue ops a3)
  "$MQ" ack "$("$MQ" pop --queue ops -o /dev/null)"
  "$MQ" fail --retry-in 1h --error e1 "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
  "$MQ" fail --no-retry --error e2 "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
  is "$(hsql "SELECT GROUP_CONCAT(state, attempts ORDER BY id) FROM h.$3 WHERE queue = 'ops'")" \
    "done1,ready1,dead1" "$w ops: done, failed, dead"
  is "$(counters ops)" "3 1 1 1 0 0 0 0" "$w stats --json: the counters pushed 3, done 1, failed 1, dead 1"
  expect_status 0 "$w ls --ids" "$MQ" ls --queue ops --ids
  is "$(echo $OUT)" "$c1 $c2 $c3" "$w ls lists the three (select limit 1 globally)"
  expect_status 0 "$w ls --state dead --json" "$MQ" ls --state dead,scheduled --queue ops --json
  is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    print(d["id"], d["state"], d["error"], 3500e6 < d["available_at_from_now_us"] <= 3600e6)' | tr '\n' ,)" \
    "$c2 scheduled e1 True,$c3 dead e2 False," "$w ls --json: the two, due times in UTC"
  expect_status 0 "$w ls (the table)" "$MQ" ls --queue ops
  is "$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1, $2, $3, $5 }' | tr '\n' ,)" \
    "$c1 ops done 1/10,$c2 ops scheduled 1/10,$c3 ops dead 1/10," "$w ls: the table's rows"
  answers 15 "$w why of the done job" "$MQ" why "$c1"
  answers 11 "$w why of the failed job" "$MQ" why --json "$c2"
  is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["answer"], d["error"], 3500e6 < d["available_at_from_now_us"] <= 3600e6)')" \
    "scheduled e1 True" "$w why --json: scheduled, in an hour (UTC)"
  answers 14 "$w why of the dead job" "$MQ" why "$c3"
  like "$OUT" "job $c3 is dead since *, with error: e2*" "$w why: dead, with its error"
  answers 16 "$w why of an archived job" "$MQ" why "${r1%%.*}"
  expect_status 0 "$w show --json" "$MQ" show --json "$c2" "$c3" "${r1%%.*}"
  is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    print(d["id"], d["state"], d["payload"], " ".join("%s/%s/%s/%s" % (h["event"], h["state"], h["attempt"], h["error"]) for h in d["history"]))' | tr '\n' ,)" \
    "$c2 scheduled a2 failed/ready/1/e1,$c3 dead a3 failed/dead/1/e2,${r1%%.*} archived p1 ," \
    "$w show --json: state, payload and history of each"
  expect_status 0 "$w show -o" "$MQ" show -o "$T_TMP/shown" "$c3"
  is "$(cat "$T_TMP/shown")" a3 "$w show -o wrote the payload"
  like "$OUT" "*history:*failed, attempt 1, then dead, worker *, error: e2*" "$w show: the history line"
  answers 2 "$w check --max-dead 0" "$MQ" check --queue ops --max-dead 0
  like "$OUT" "MQ CRITICAL - ops: 1 dead > 0 (critical) | 'ops.ready'=0;;;0 'ops.scheduled'=1;;;0 *" \
    "$w check: critical, the figures"
  expect_status 0 "$w check" "$MQ" check --queue ops --max-stale 0
  like "$OUT" "MQ OK - queue ops: 0 ready, 0 stale, 1 dead | *" "$w check: OK"
  expect_status 0 "$w retry by id" "$MQ" retry "$c3"
  is "$OUT" "retried 1 job" "$w retry: one job"
  is "$(hsql "SELECT state, attempts, queue, finished_at IS NULL FROM h.$3 WHERE id = $c3" | tr '\t' ' ')" \
    "ready 0 ops 1" "$w the retry committed (autocommit off globally)"
  is "$(hsql "SELECT GROUP_CONCAT(event, '/', state ORDER BY seq) FROM h.${3}_history WHERE job_id = $c3")" \
    "failed/dead,retried/ready" "$w the history: the failure, then the retry"
  "$MQ" fail --no-retry --error e3 "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
  expect_status 0 "$w retry --dry-run by filter" "$MQ" retry --queue ops --error e --dry-run
  is "$OUT" "$c3" "$w retry --dry-run: the dead job"
  expect_status 0 "$w retry by filter --to-queue" "$MQ" retry --queue ops --error e3 --to-queue ops2
  is "$(hsql "SELECT state, attempts, queue FROM h.$3 WHERE id = $c3" | tr '\t' ' ')" \
    "ready 0 ops2" "$w the job is in ops2, ready"
  is "$(counters ops) / $(counters ops2)" "3 1 1 2 0 1 0 0 / 1 0 0 0 0 0 0 0" \
    "$w stats --json: the counters of both queues, exact"
  # top samples twice, 3.5 s apart: longer than the idle timeouts
  # (idle_transaction_timeout=1, wait_timeout=3 globally)
  expect_status 0 "$w top --once across the idle timeouts" "$MQ" top --once --interval 3500ms
  is "$(printf '%s\n' "$OUT" | awk '$1 == "ops" || $1 == "ops2" { print $1, $2, $3, $4, $5, $6 }' | tr '\n' ,)" \
    "ops 0 1 0 0 0,ops2 1 0 0 0 0," "$w top: the depth of ops and ops2"
  # limits (mq-limit(1)): their gates, counts and ticks under the same
  # globals (autocommit off, select limit 1, read-only transactions)
  expect_status 0 "$w limit" "$MQ" limit lim --concurrency 2 --per-key 1 --rate 100/s
  for k in a a b c; do "$MQ" push --queue lim --key $k "$k" >/dev/null; done
  expect_status 0 "$w pop --count 4 of a limited queue" "$MQ" pop --queue lim --count 4 --json --lease 1m
  is "$(printf '%s\n' "$OUT" | grep -o '"payload":"[a-z]*"' | tr -d '"' | tr '\n' ' ')" "payload:a payload:b " \
    "$w per key 1 and concurrency 2: a and b (not a again, not c)"
  is "$(hsql "SELECT COUNT(*) FROM h.$3 WHERE queue = 'lim' AND state = 'leased'")" 2 "$w the two leases committed"
  expect_status 1 "$w the update claim: nothing while they hold" "$MQ" pop --queue lim --claim update
  is "$(hsql "SELECT COUNT(*) FROM h.${3}_ticks WHERE queue = 'lim'")" 2 "$w the rate's two ticks committed"
  # dependencies (mq push --after): the edges, shards and the parents'
  # counts written, the finish that meets them, the cancel of the dead
  # parent's dependent, all committed under the same globals
  pa=$("$MQ" push --queue dpa pa)
  pb=$("$MQ" push --queue dpa --max-attempts 1 pb)
  kid=$("$MQ" push --queue dkid --after "$pa" kid)
  kid2=$("$MQ" push --queue dkid --after "$pb" kid2)
  expect_status 0 "$w push --after" "$MQ" push --queue dkid --after "$pa,$pb" --if-parent-dies run kid3
  kid3=$OUT
  is "$(hsql "SELECT CONCAT_WS(' ', parent_shards, if_parent_dies) FROM h.$3 WHERE id = $kid3")" "2 run" \
    "$w the dependent's shards committed"
  expect_status 0 "$w ack of a parent" "$MQ" ack "$("$MQ" pop --queue dpa -o /dev/null)"
  expect_status 0 "$w fail of the other for good" "$MQ" fail --no-retry "$("$MQ" pop --queue dpa -o /dev/null)"
  is "$(hsql "SELECT GROUP_CONCAT(CONCAT(payload, ':', state, IF(state = 'ready' AND available_at > '9999-01-01', '/waiting', '')) ORDER BY id) FROM h.$3 WHERE queue = 'dkid'")" \
    "kid:ready,kid2:dead,kid3:ready" "$w due, cancelled, due (runs anyway): committed"
  is "$(hsql "SELECT COUNT(*) FROM h.${3}_deps WHERE met = 0 AND child IN ($kid, $kid3)")" 0 "$w the edges met"
  # calendar schedules (mq-schedule(1)): instants are UTC whatever the
  # server's zone and clock settings; the apply writes nothing twice
  printf '[new-year]\ncron = 0 0 1 1 *\nqueue = hq\npayload = cheers\n' >"$T_TMP/h.conf"
  expect_status 0 "$w schedule apply" "$MQ" schedule apply "$T_TMP/h.conf"
  is "$(hsql "SELECT next_at = CONCAT(YEAR(UTC_TIMESTAMP()) + 1, '-01-01 00:00:00') FROM h.${3}_schedules")" 1 \
    "$w the next instant: 1 January 00:00 UTC (not the server's zone)"
  expect_status 0 "$w schedule apply again" "$MQ" schedule apply "$T_TMP/h.conf"
  is "$OUT:$(hsql "SELECT version FROM h.${3}_schedules")" "unchanged new-year (next $(hsql "SELECT YEAR(UTC_TIMESTAMP()) + 1")-01-01 00:00:00 UTC):1" \
    "$w unchanged, not written"
  hsql "UPDATE h.${3}_schedules SET next_at = '2026-01-01 00:00:00' WHERE name = 'new-year'"
  expect_status 0 "$w schedule fire" "$MQ" schedule fire
  is "$(hsql "SELECT CONCAT(f.instant, ' ', j.available_at, ' ', j.payload) FROM h.${3}_fired f JOIN h.$3 j ON j.id = f.job" | tr '\t' ' ')" \
    "2026-01-01 00:00:00.000000 2026-01-01 00:00:00.000000 cheers" "$w one run, at the instant in UTC, committed"
  expect_status 0 "$w schedule run" "$MQ" schedule run new-year
  is "$(hsql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), available_at) BETWEEN -60 AND 0 FROM h.$3 WHERE id = $OUT")" 1 "$w a run by hand is due now (UTC)"
  expect_status 0 "$w schedule ls" "$MQ" schedule ls -n 1
  like "$OUT" "*next $(hsql "SELECT YEAR(UTC_TIMESTAMP()) + 1")-01-01 00:00:00 UTC*by hand*" "$w ls reads it all (select limit 1 globally)"
}
round root ORACLE t_oracle
round root "ANSI,NO_BACKSLASH_ESCAPES,PAD_CHAR_TO_FULL_LENGTH" t_ansi
round app ORACLE t_app

# What an mq session runs with: the limits are below the client's read
# timeout (300 s), so the server answers first (the general log shows the
# statement that sets them, after the account's init_connect).
hostile ORACLE
hsql "SET GLOBAL log_output = 'TABLE', GLOBAL general_log = 1"
MQ_USER=app "$MQ" stats >/dev/null
hsql "SET GLOBAL general_log = 0"
is "$(hsql "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query'
  AND argument LIKE 'ROLLBACK AND NO CHAIN NO RELEASE;SET SESSION autocommit=1, SESSION completion_type=0,%'
  AND argument LIKE '%innodb_lock_wait_timeout=50, SESSION lock_wait_timeout=60,%'
  AND argument LIKE '%time_zone=''+00:00''%' AND argument LIKE '%max_statement_time=240;%'")" 1 \
  "the session's settings: lock waits 50 s and 60 s, statements 240 s, UTC"
is "$(hsql "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE 'SET autocommit=0, timestamp=1, insert_id=3'")" 1 \
  "after the account's init_connect"

# an init_connect that moves the session to another database, or hides
# the job table behind a temporary one: the push lands in the table asked
# for (on 8ff402c it went to the other database, or vanished)
hsql "CREATE DATABASE other; GRANT ALL ON other.* TO app@localhost"
MQ_USER=root MQ_TABLE=t_move MQ_DATABASE=other "$MQ" init >/dev/null
MQ_USER=root MQ_TABLE=t_move "$MQ" init >/dev/null
hsql "SET GLOBAL init_connect = 'USE other'"
MQ_USER=app MQ_TABLE=t_move expect_status 0 "init_connect USE other: push" "$MQ" push moved
is "$(hsql "SELECT COUNT(*) FROM h.t_move") $(hsql "SELECT COUNT(*) FROM other.t_move")" "1 0" \
  "the job is in the database asked for"
printf '[mq]\ninit-command=USE other\n' >"$T_TMP/use.cnf"
MQ_USER=root MQ_TABLE=t_move MQ_DEFAULTS_FILE="$T_TMP/use.cnf" expect_status 0 \
  "an option file's init-command USE other: push" "$MQ" push moved2
is "$(hsql "SELECT COUNT(*) FROM h.t_move") $(hsql "SELECT COUNT(*) FROM other.t_move")" "2 0" \
  "the job is in the database asked for"
hsql "SET GLOBAL tx_read_only = 0, GLOBAL init_connect = 'CREATE TEMPORARY TABLE h.t_move LIKE other.t_move'"
MQ_USER=app MQ_TABLE=t_move expect_status 0 "init_connect hiding the table behind a temporary one: push" "$MQ" push hidden
is "$(hsql "SELECT COUNT(*) FROM h.t_move")" 3 "the job is in the real table"
hsql "SET GLOBAL init_connect = ''"

# an option file's max-allowed-packet below a job's size (the client's
# own limit; on the test's own server): the job is claimed and handed
# over, by pop and by work (on 6f40b45 every claim failed, 69, the job
# leased to nobody, its attempt counted: the queue stalled)
printf '[client]\nmax-allowed-packet=16384\n' >"$T_TMP/small.cnf"
export MQ_SOCKET="$MQ_TEST_SOCKET" MQ_DATABASE="$T_DB" MQ_USER=root MQ_TABLE=t_packet
"$MQ" init >/dev/null
big=$(head -c 60000 /dev/zero | tr '\0' x)
"$MQ" push "$big" >/dev/null
MQ_DEFAULTS_FILE="$T_TMP/small.cnf" expect_status 0 \
  "client max-allowed-packet 16384: pop of a 60000-byte job" "$MQ" pop --shell
is "$(printf '%s\n' "$OUT" | sed -n 's/^MQ_PAYLOAD=//p' | wc -c | tr -d ' ')" 60003 \
  "the whole payload handed over (quoted)"
r=$(printf '%s\n' "$OUT" | sed -n 's/^MQ_RECEIPT=//p')
MQ_DEFAULTS_FILE="$T_TMP/small.cnf" expect_status 0 \
  "client max-allowed-packet 16384: push of 60000 bytes" "$MQ" push "$big"
MQ_DEFAULTS_FILE="$T_TMP/small.cnf" expect_status 0 \
  "client max-allowed-packet 16384: work" "$MQ" work --exit-when-empty -- sh -c 'test "$(wc -c)" -eq 60000'
"$MQ" ack "$r"
is "$(sql "SELECT state, COUNT(*), SUM(attempts) FROM t_packet GROUP BY state" | tr '\t' ' ')" "done 2 2" \
  "both jobs done, one attempt each"
# a job table converted to another engine (MyISAM: no transactions, no
# row locks; on 6f40b45, 4 consumers popping at once were handed 29 of
# 240 jobs twice, and mq init called it up to date)
export MQ_TABLE=t_myisam
"$MQ" init >/dev/null
sql "ALTER TABLE t_myisam ENGINE=MyISAM"
expect_status 78 "a MyISAM job table: push refused" "$MQ" push x
like "$ERR" "mq push: table '$T_DB.t_myisam' uses the MyISAM engine: mq needs InnoDB (ALTER TABLE \`t_myisam\` ENGINE=InnoDB)" \
  "it says why, and how to put it back"
expect_status 78 "a MyISAM job table: pop refused" "$MQ" pop
expect_status 78 "a MyISAM job table: mq init refuses it" "$MQ" init
is "$(sql "SELECT COUNT(*) FROM t_myisam")" 0 "nothing was pushed"
sql "ALTER TABLE t_myisam ENGINE=InnoDB"
expect_status 0 "back on InnoDB: push" "$MQ" push x

# the hostile server logs statements: InnoDB refuses every write of a
# READ COMMITTED transaction (1665: mq init created the tables, then
# failed at the counts; every push, claim and ack failed, 70). mq's
# session logs rows instead; an account that may not is refused, 78,
# before anything is written.
hsql "SET GLOBAL binlog_format = 'STATEMENT'; CREATE DATABASE hb;
  GRANT ALL ON hb.* TO app@localhost"
is "$(hsql "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format" | tr '\t' ' ')" "1 STATEMENT" \
  "the hostile server logs statements"
export MQ_SOCKET="$H/sock" MQ_DATABASE=hb MQ_TABLE=mq_jobs
MQ_USER=app expect_status 78 "binlog_format STATEMENT, an account that cannot log rows: init refused" "$MQ" init
like "$ERR" "mq init: the server logs statements (binlog_format=STATEMENT), which InnoDB refuses for mq's READ COMMITTED transactions, and this account cannot log rows instead (error 1227, SQLSTATE 42000): set binlog_format=ROW or MIXED, or grant BINLOG ADMIN (MySQL: SESSION_VARIABLES_ADMIN)" \
  "it says why and what to do"
is "$(hsql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'hb'")" 0 "nothing created"
MQ_USER=root expect_status 0 "binlog_format STATEMENT, root: init" "$MQ" init
is "$(hsql "SELECT @@GLOBAL.sync_binlog")" 0 "the hostile server's binary log is not synced (sync_binlog 0)"
is "$ERR" "mq init: warning: the binary log is on with sync_binlog 0: a crash of the machine can roll back transactions the server said were committed; set it to 1" \
  "  init warns of it (mq-init(1), DURABILITY)"
hsql "SET GLOBAL sync_binlog = 1"
MQ_USER=root expect_status 0 "sync_binlog 1: init" "$MQ" init
is "$ERR" "" "  no warning"
hsql "SET GLOBAL sync_binlog = 0"
MQ_USER=root expect_status 0 "root: push" "$MQ" push stmt
MQ_USER=root expect_status 0 "root: pop" "$MQ" pop --json
r=$(printf '%s\n' "$OUT" | sed -n 's/.*"receipt":"\([^"]*\)".*/\1/p')
MQ_USER=root expect_status 0 "root: ack" "$MQ" ack "$r"
MQ_USER=root expect_status 0 "root: work" sh -c '"$0" push w && "$0" work --exit-when-empty -- cat' "$MQ"
is "$(hsql "SELECT GROUP_CONCAT(CONCAT(payload, ' ', state) ORDER BY id) FROM hb.mq_jobs")" \
  "stmt done,w done" "both jobs done"
MQ_USER=app expect_status 78 "the account that cannot: push refused" "$MQ" push x
hsql "SET GLOBAL binlog_format = 'MIXED'"
MQ_USER=app expect_status 0 "binlog_format MIXED: that account pushes" "$MQ" push x

# ---- a due schedule whose payload this server's max_allowed_packet,
# lowered since the apply, no longer takes is passed over: the others
# fire, then status 65 (mq-schedule(1)); it stays due for a host whose
# server takes it
hsql "SET GLOBAL binlog_format = 'ROW'; CREATE DATABASE hp"
export MQ_DATABASE=hp MQ_USER=root MQ_TABLE=mq_jobs
expect_status 0 "init hp" "$MQ" init
{ printf '[big]\ncron = * * * * *\nqueue = pq\npayload = '
  head -c 40000 /dev/zero | tr '\0' a
  printf '\n[small]\ncron = * * * * *\nqueue = pq\npayload = s\n'; } >"$T_TMP/big.conf"
expect_status 0 "apply a schedule of 40,000 bytes and a small one" "$MQ" schedule apply "$T_TMP/big.conf"
hsql "UPDATE hp.mq_jobs_schedules SET next_at = DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:00') WHERE name IN ('big', 'small');
  SET GLOBAL max_allowed_packet = 16384"
expect_status 65 "max_allowed_packet 16384: fire passes over big, 65" "$MQ" schedule fire
like "$OUT" "fired 1 schedule: * pushed*" "  small fired"
like "$ERR" "mq schedule: *40000 bytes is larger than the server's max_allowed_packet*" "  big named, one line"
is "$(hsql "SELECT GROUP_CONCAT(DISTINCT payload) FROM hp.mq_jobs")" "s" "  its jobs: small's only"
is "$(hsql "SELECT name FROM hp.mq_jobs_schedules WHERE next_at <= UTC_TIMESTAMP(6)")" "big" "  big is still due"
# the statements mq makes itself fit the server's packet: a fan-in of
# 5,000 parents, a fan-out of 3,000 after two (a900bf0: error 1153 at the
# parents' edges, status 65 as if a payload were too big)
seq 1 5000 | "$MQ" push --queue fan --lines --quiet >"$T_TMP/fan.ids"
expect_status 0 "max_allowed_packet 16384: push --after-file of 5,000 parents" "$MQ" push --queue fan --after-file "$T_TMP/fan.ids" last
p1=$("$MQ" push --queue fan p1) p2=$("$MQ" push --queue fan p2)
expect_status 0 "  a fan-out of 3,000 after two parents" sh -c 'seq 1 3000 | "$0" push --queue fan --lines --quiet --after "$1,$2"' "$MQ" "$p1" "$p2"
is "$(hsql "SELECT COUNT(*) FROM hp.mq_jobs_deps")" 11000 "  their 11,000 edges"
expect_status 0 "  the cancel of one of the two: its 3,000 dependents with it" "$MQ" cancel "$p1"
is "$(hsql "SELECT COUNT(*) FROM hp.mq_jobs WHERE queue = 'fan' AND state = 'dead'")" 3001 "  3,001 jobs dead"
hsql "SET GLOBAL max_allowed_packet = 16777216"
done_testing
