#!/bin/sh
# mq wait is woken by finishes (issue 32): every way mq finishes a job
# (ack, mq work's ack, fail with no attempt left, cancel, a dependent
# cancelled with its parent, requeue-stale's burial, purge) wakes a
# parked mq wait with one KILL QUERY after its commit; finishes outside
# the waited ids' range do not; many finishes in a row wake it once an
# arming; the row of a waiter killed -9 goes with the next finish; and
# a waiter that cannot write the waiters table still sees its jobs
# finish, by looking. Serial: it counts KILL statements (a global
# counter).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

kills() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2; }
rows_w() { sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%'"; }
# armed_parked: waits (10 s at most) until one mq wait has its row armed
# and sits in its park: a finish now must wake it
armed_parked() {
  i=0
  while [ $i -lt 200 ]; do
    a=$(sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%' AND wakes = 0")
    p=$(sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait-finish%' AND INFO NOT LIKE '%PROCESSLIST%'")
    [ "$a" = 1 ] && [ "$p" = 1 ] && return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
# line_of ID: its line in the waiter's output, waited for (10 s at most)
line_of() {
  i=0
  while [ $i -lt 200 ]; do
    l=$(grep "^$1 " "$T_TMP/w.out" || true)
    [ -n "$l" ] && { echo "$l"; return 0; }
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
bg_wait() {
  ( "$MQ" wait "$@" >"$T_TMP/w.out" 2>"$T_TMP/w.err"; echo $? >"$T_TMP/w.rc" ) &
  wsub=$!
  wpid=""
  i=0
  while [ -z "$wpid" ] && [ $i -lt 100 ]; do
    wpid=$(pgrep -P "$wsub" -x mq || true)
    [ -n "$wpid" ] || sleep 0.02
    i=$((i + 1))
  done
}
receipt() { "$MQ" pop --queue "$1" ${2:-} -o /dev/null; }
# a row written in the server's first seconds may be taken for one from
# before its start (UPTIME counts whole seconds), and deleted instead of
# woken (harmless: its waiter arms and looks again, without a KILL)
while [ "$(sql_root "SHOW GLOBAL STATUS LIKE 'Uptime'" | cut -f2)" -lt 3 ]; do sleep 0.2; done

# ---- one waiter, each way a job finishes
ja=$("$MQ" push --queue qa a)
jw=$("$MQ" push --queue qw w)
jf=$("$MQ" push --queue qf f)
jc=$("$MQ" push --queue qc c)
jp=$("$MQ" push --queue qp p)
jb=$("$MQ" push --queue qb --max-attempts 1 b)
par=$("$MQ" push --queue qd parent)
jd=$("$MQ" push --queue qd2 --after "$par" dependent)
never=$("$MQ" push --queue qn never)
bg_wait "$ja" "$jw" "$jf" "$jc" "$jp" "$jb" "$jd" "$never"
check "the waiter parks, its row armed" armed_parked
is "$(sql "SELECT queue FROM mq_jobs_waiters WHERE queue LIKE '*%'")" "*$ja-$never" \
  "  its row names the range of ids it waits for"

# woken KILL: the finish, its line, and one KILL QUERY for it
woken() { # woken WHAT ID EXPECTED-LINE: after the finish just made
  is "$(line_of "$2")" "$3" "$1: its line"
  is "$(($(kills) - k0))" 1 "  woken by one KILL QUERY (not by its next look)"
}
k0=$(kills); "$MQ" ack "$(receipt qa)"
woken "mq ack" "$ja" "$ja done"
armed_parked || true
k0=$(kills); "$MQ" work --queue qw --exit-when-empty -- true
woken "mq work" "$jw" "$jw done"
armed_parked || true
k0=$(kills); "$MQ" fail --no-retry --error boom "$(receipt qf)" >/dev/null
woken "mq fail --no-retry" "$jf" "$jf dead boom"
armed_parked || true
k0=$(kills); "$MQ" cancel "$jc" >/dev/null
woken "mq cancel" "$jc" "$jc dead cancelled"
armed_parked || true
k0=$(kills); "$MQ" purge --queue qp --yes >/dev/null
woken "mq purge" "$jp" "$jp gone"
r=$(receipt qb "--lease 1s")
sleep 1.2
armed_parked || true
k0=$(kills); "$MQ" requeue-stale --queue qb >/dev/null
like "$(line_of "$jb")" "$jb dead *" "mq requeue-stale's burial: its line"
is "$(($(kills) - k0))" 1 "  woken by one KILL QUERY (not by its next look)"
armed_parked || true
k0=$(kills); "$MQ" fail --no-retry "$(receipt qd)" >/dev/null
woken "a dependent cancelled with its parent" "$jd" "$jd dead cancelled: parent $par is dead"

# ---- finishes outside the range wake nobody; many inside, once an arming
armed_parked || true
out=$("$MQ" push --queue qo outside)
k0=$(kills); "$MQ" ack "$(receipt qo)"
sleep 0.3
is "$(($(kills) - k0))" 0 "a finish outside its range of ids: no KILL"
kill -TERM "$wpid"
wait "$wsub"
is "$(cat "$T_TMP/w.rc")" 143 "SIGTERM: 128+15"
is "$(rows_w)" 1 "  its row is left (a signal cannot send a statement)"
sleep 1.5	# its park ends (a second at most), and its session with it
"$MQ" ack "$(receipt qn)"
is "$(rows_w)" 0 "  the next finish in its range finds it gone and deletes it"

first=$("$MQ" push --queue qm m0)
seq 1 40 | "$MQ" push --queue qm --lines --quiet >/dev/null
last=$("$MQ" push --queue qz never2)
bg_wait "$first" "$last"
check "a waiter for the range first..last parks" armed_parked
t0=$(date +%s)
k0=$(kills)
"$MQ" work --queue qm --exit-when-empty -- true
secs=$(($(date +%s) - t0 + 1))
n=$(($(kills) - k0))
check "41 finishes in its range in ${secs}s: $n KILLs, at least 1, at most one an arming (1.5 s)" \
  test "$n" -ge 1 -a "$n" -le $((secs * 2 / 3 + 2))
is "$(line_of "$first")" "$first done" "  the job it waited for: its line"

# ---- the row of a waiter killed -9 goes with the next finish
armed_parked || true
kill -KILL "$wpid"
wait "$wsub" 2>/dev/null
is "$(rows_w)" 1 "a waiter killed -9 leaves its row"
sleep 1.5
"$MQ" ack "$(receipt qz)"
is "$(rows_w)" 0 "  the next finish in its range finds it gone and deletes it"

# ---- a waiter that leaves, leaves no row
j=$("$MQ" push --queue ql x)
bg_wait "$j"
armed_parked || true
"$MQ" ack "$(receipt ql)"
wait "$wsub"
is "$(cat "$T_TMP/w.rc"):$(cat "$T_TMP/w.out")" "0:$j done" "a waiter woken: 0, its line"
is "$(rows_w)" 0 "  its row deleted as it leaves"

# ---- 70 waiters, one job each: one purge wakes them all, each by a KILL
# (the read of the rows to wake is not cut at the first 64)
seq 1 70 | "$MQ" push --queue q70 --lines >"$T_TMP/ids70"
for j in $(cat "$T_TMP/ids70"); do
  ( "$MQ" wait "$j" >"$T_TMP/w70.$j" 2>&1 ) &
done
# (armed: each armed row is KILLed, its waiter parked or looking)
i=0
while [ "$(sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%' AND wakes = 0")" != 70 ]; do
  [ $i -lt 1200 ] || break
  sleep 0.05
  i=$((i + 1))
done
k0=$(kills)
"$MQ" purge --queue q70 --yes >/dev/null
wait
is "$(cat "$T_TMP"/w70.* | grep -c ' gone$')" 70 "70 waiters of one job each: each prints its job gone"
is "$(($(kills) - k0))" 70 "  the purge woke each by one KILL QUERY"
is "$(rows_w)" 0 "  no row left"

# ---- rows that nothing else deletes: a waiter stopped while parked (its
# row armed), and one written before the server's start (its id may
# name another session now: deleted, never KILLed)
j=$("$MQ" push --queue qr r)
bg_wait "$j"
armed_parked || true
kill -TERM "$wpid"
wait "$wsub"
sleep 1.5
sql "UPDATE mq_jobs_waiters SET since = since - INTERVAL 1 MINUTE WHERE queue LIKE '*%'"
sql "INSERT INTO mq_jobs_waiters (node, conn, queue, login, since) VALUES (CONCAT(@@hostname, ':', @@port), CONNECTION_ID(), '*1-999999', 'root', UTC_TIMESTAMP(6) - INTERVAL (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME') + 100 SECOND)"
is "$(rows_w)" 2 "a stopped waiter's armed row, and a row from before the server's start"
k0=$(kills)
x=$("$MQ" push --queue qr2 x)
"$MQ" ack "$(receipt qr2)"
is "$(rows_w):$(($(kills) - k0))" "0:0" "  a finish deletes both (30 s old, or older than the server), KILLs neither"

# ---- a read-only server, an account without SUPER: it looks instead
sql_root "DROP USER IF EXISTS 'ro354'@'localhost'; CREATE USER 'ro354'@'localhost'; GRANT ALL ON \`$T_DB\`.* TO 'ro354'@'localhost'"
jd=$("$MQ" push --queue qro d)
"$MQ" ack "$(receipt qro)"
jr=$("$MQ" push --queue qro r)
sql_root "SET GLOBAL read_only = 1"
expect_status 0 "read-only server: mq wait of a job done" env MQ_USER=ro354 "$MQ" wait "$jd"
is "$OUT:$ERR" "$jd done:" "  its line, nothing on stderr"
expect_status 124 "read-only server: mq wait --timeout 2s of a job not done" env MQ_USER=ro354 "$MQ" wait --timeout 2s "$jr"
is "$OUT:$ERR" "$jr waiting:mq wait: 1 job not finished within the timeout" "  listed as waiting, nothing else said"
sql_root "SET GLOBAL read_only = 0; DROP USER 'ro354'@'localhost'"

# ---- no grant to write the waiters table: it looks instead (within seconds)
sql_root "DROP USER IF EXISTS 'w354'@'localhost'; CREATE USER 'w354'@'localhost'; GRANT SELECT ON \`$T_DB\`.mq_jobs TO 'w354'@'localhost'; GRANT SELECT ON \`$T_DB\`.mq_jobs_archive TO 'w354'@'localhost'; GRANT SELECT ON \`$T_DB\`.mq_jobs_queues TO 'w354'@'localhost'; GRANT SELECT ON \`$T_DB\`.mq_jobs_waiters TO 'w354'@'localhost'"
j=$("$MQ" push --queue qg g)
( MQ_USER=w354 "$MQ" wait --timeout 20s "$j" >"$T_TMP/w.out" 2>"$T_TMP/w.err"; echo $? >"$T_TMP/w.rc" ) &
wsub=$!
sleep 1
"$MQ" ack "$(receipt qg)"
wait "$wsub"
is "$(cat "$T_TMP/w.rc"):$(cat "$T_TMP/w.out"):$(cat "$T_TMP/w.err")" "0:$j done:" \
  "no grant to write the waiters table: its job's line all the same, nothing on stderr"
is "$(rows_w)" 0 "  and no row"
sql_root "DROP USER 'w354'@'localhost'"

done_testing
