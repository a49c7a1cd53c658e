#!/bin/sh
# mq pop --wait: blocks until a job can be claimed or the time passes; a
# push wakes it by KILL QUERY (not an error), waking no more waiters than
# jobs pushed; without the right to see the waiters, a push is still
# found by the once-a-second check.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

kills() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2; }
parked() { # parked QUEUE: how many waiters sit in their SLEEP
  sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait \`mq_jobs\` $1 */%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%'"
}
until_parked() { # until_parked QUEUE N
  i=0
  while [ "$(parked "$1")" -lt "$2" ] && [ $i -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
  done
}
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

# nothing comes: exit 1 after the wait
t0=$(date +%s%N)
expect_status 1 "--wait 2s on an empty queue exits 1" "$MQ" pop --queue none --wait 2s
ms=$(elapsed_ms "$t0")
check "it waited the 2 s ($ms ms)" test "$ms" -ge 1900 -a "$ms" -lt 10000
is "$OUT$ERR" "" "and printed nothing"

# a job already due: no wait at all
"$MQ" push --queue now x >/dev/null
expect_status 0 "--wait with a job due returns it" "$MQ" pop --queue now --wait 30s

# a push wakes a waiting pop by KILL QUERY; the killed SLEEP is no error
for claim in skip-locked update; do
  "$MQ" pop --claim $claim --queue w1 --wait 30s >"$T_TMP/got" 2>"$T_TMP/err" &
  pid=$!
  fresh_waiters w1
  k0=$(kills)
  "$MQ" push --queue w1 "hello $claim" >/dev/null
  wait $pid
  is "$?:$(cat "$T_TMP/got")" "0:hello $claim" "$claim: the waiter gets the pushed job"
  like "$(cat "$T_TMP/err")" "[0-9]*.????????????????????????????????" "$claim: its receipt, no error"
  is "$(($(kills) - k0))" 1 "$claim: the push woke it with one KILL QUERY"
done

# no more waiters woken than jobs pushed
for i in 1 2 3; do
  "$MQ" pop --queue w3 --wait 30s -o "$T_TMP/w3.$i" >"$T_TMP/r3.$i" 2>&1 &
  eval "p$i=\$!"
done
fresh_waiters w3 3
k0=$(kills)
"$MQ" push --queue w3 one >/dev/null
sleep 0.5
check "one job pushed: one waiter woken at most" test "$(($(kills) - k0))" -le 1
fresh_waiters w3 2
is "$(parked w3)" 2 "two still wait"
printf 'two\nthree\n' | "$MQ" push --queue w3 --lines >/dev/null
wait $p1 $p2 $p3
check "two more jobs: two more woken at most" test "$(($(kills) - k0))" -le 3
is "$(for f in "$T_TMP"/w3.*; do cat "$f"; echo; done | sort | tr '\n' ' ')" \
  "one three two " "each waiter got one job"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'w3' AND state = 'leased'")" 3 "all three claimed once"

# queue names are case-sensitive (ascii_bin), and so is the wakeup: a
# push to CW kills the park of CW's waiter, not that of the older waiter
# of cw (before: the pattern matched both, the oldest first)
"$MQ" pop --queue cw --wait 30s >/dev/null 2>&1 &
lo=$!
sleep 0.05
"$MQ" pop --queue CW --wait 30s >"$T_TMP/gotCW" 2>/dev/null &
up=$!
# both early in a one-second park (the pattern here matches both names),
# so that both are parked when the push looks for CW's
fresh_waiters cw 2
upid=
i=0
while [ -z "$upid" ] && [ $i -lt 100 ]; do
  upid=$(sql_root "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND CAST(INFO AS BINARY) LIKE '%mq-wait \`mq_jobs\` CW */%SLEEP%'")
  i=$((i + 1))
done
logfile=$(sql_root "SELECT @@GLOBAL.general_log_file")
sql_root "SET GLOBAL general_log_file = '$T_TMP/general.log'; SET GLOBAL general_log = 1"
"$MQ" push --queue CW upper >/dev/null
sql_root "SET GLOBAL general_log = 0; SET GLOBAL general_log_file = '$logfile'"
wait $up
is "$?:$(cat "$T_TMP/gotCW")" "0:upper" "CW's waiter gets the job pushed to CW"
like "$(grep -o 'KILL QUERY [0-9]*' "$T_TMP/general.log" | tr '\n' ' ')" \
  "KILL QUERY $upid " "the push killed CW's park (connection $upid) only"
kill $lo 2>/dev/null
wait $lo 2>/dev/null

# a pusher that may not wake the waiters (another account, without
# CONNECTION ADMIN): its one refused KILL, then no more; still delivered
sql_root "DROP USER IF EXISTS 'mq_t150'@'localhost'; CREATE USER 'mq_t150'@'localhost'; GRANT SELECT, INSERT ON \`$T_DB\`.* TO 'mq_t150'@'localhost'"
"$MQ" pop --queue w4 --wait 30s >"$T_TMP/got4" 2>/dev/null &
pid=$!
until_parked w4 1
k0=$(kills)
expect_status 0 "a pusher without PROCESS can push" env MQ_USER=mq_t150 "$MQ" push --queue w4 quiet
wait $pid
is "$?:$(cat "$T_TMP/got4")" "0:quiet" "the waiter still gets it (its once-a-second check)"
check "one refused kill at most" test "$(($(kills) - k0))" -le 1
sql_root "DROP USER 'mq_t150'@'localhost'"

# a paused queue: waits, then says paused
"$MQ" pause w5 >/dev/null
"$MQ" push --queue w5 x >/dev/null
expect_status 1 "--wait on a paused queue exits 1" "$MQ" pop --queue w5 --wait 1500ms
is "$ERR" "mq pop: queue 'w5' is paused" "and says paused"
"$MQ" pop --queue w5 --wait 30s -o /dev/null >/dev/null 2>&1 &
pid=$!
until_parked w5 1
"$MQ" resume w5 >/dev/null
wait $pid
is "$?" 0 "resume wakes a waiter of the paused queue"

# an empty claim's statements (counted here, where no other test runs): the claim, then the queue's settings (is
# it limited? paused?), read once: before, the answer (empty or paused)
# read the paused flag again (3 executions)
execs() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'" | cut -f2; }
e0=$(execs)
expect_status 1 "an empty queue: exit 1" "$MQ" pop --queue idle
e1=$(execs)
is "$((e1 - e0))" 2 "its statements: the claim and the queue's settings"
"$MQ" pause idlep >/dev/null
e0=$(execs)
run "$MQ" pop --queue idlep
e1=$(execs)
is "$RC:$ERR" "1:mq pop: queue 'idlep' is paused" "a paused queue: exit 1, and says so"
is "$((e1 - e0))" 2 "the same two statements say it is paused"
# an idle waiter is quiet: about one statement a second
questions() { sql_root "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }
q0=$(questions)
"$MQ" pop --queue quiet >/dev/null 2>&1
q1=$(questions)
"$MQ" pop --queue quiet --wait 5s >/dev/null 2>&1
q2=$(questions)
extra=$((q2 - q1 - (q1 - q0)))
# parks of 0.1, 0.2, 0.4, 0.8 s, then 1 s each: 8 statements in 5 s,
# and its row in the waiters table: 1 in front of the first park, 1
# after the last
check "5 s of waiting cost $extra statements (at most 11)" test "$extra" -le 11

# a due job whose row another session holds locked: the wait says "due",
# the claim skips it; the next park does not look (a push still wakes
# it), instead of ending at once (before: some 10,000 statements a
# second, from pop --wait and from mq work alike)
lid=$("$MQ" push --queue lockd held)
mariadb --no-defaults --socket="$MQ_SOCKET" -uroot "$T_DB" -e "SET SESSION
  TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN; SELECT id FROM mq_jobs
  WHERE id = $lid FOR UPDATE; SELECT SLEEP(20)" >/dev/null 2>&1 &
locker=$!
i=0
until [ "$(sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND INFO LIKE 'SELECT SLEEP(20)%'")" = 1 ] || [ $i -ge 100 ]; do
  sleep 0.1; i=$((i + 1))
done
q0=$(questions)
expect_status 1 "pop --wait 4s, the due job locked by another session: exit 1" \
  "$MQ" pop --queue lockd --wait 4s
q1=$(questions)
check "and $((q1 - q0)) statements in 4 s (at most 80)" test $((q1 - q0)) -le 80
"$MQ" work --queue lockd --wait 4s -- true 2>/dev/null
q2=$(questions)
check "mq work --wait 4s: $((q2 - q1)) statements (at most 100)" test $((q2 - q1)) -le 100
"$MQ" pop --queue lockd --wait 30s -o /dev/null >/dev/null 2>&1 &
pid=$!
sleep 1.5
"$MQ" push --queue lockd new >/dev/null
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 20 ]; do sleep 0.05; i=$((i + 1)); done
check "a push still wakes such a waiter at once (within 1 s)" test $i -lt 20
kill $pid 2>/dev/null
wait $pid 2>/dev/null
kill $locker 2>/dev/null
wait $locker 2>/dev/null

expect_status 64 "bad --wait" "$MQ" pop --wait soon
expect_status 64 "negative --wait" "$MQ" pop --wait -1s
# a finish that makes a dependent due (mq push --after) wakes its
# queue's waiter, as a push does: the ack, the fail of a parent whose
# dependent runs anyway, mq work's ack with its next claim
for how in ack fail work; do
  par=$("$MQ" push --queue dpar --max-attempts 1 "p $how")
  "$MQ" push --queue dkid --after "$par" --if-parent-dies run "kid $how" >/dev/null
  "$MQ" pop --queue dkid --wait 30s >"$T_TMP/dk" 2>/dev/null &
  pid=$!
  fresh_waiters dkid
  k0=$(kills)
  case $how in
  ack) r=$("$MQ" pop --queue dpar -o /dev/null); "$MQ" ack "$r" ;;
  fail) r=$("$MQ" pop --queue dpar -o /dev/null); "$MQ" fail --no-retry "$r" >/dev/null ;;
  work) "$MQ" work --queue dpar --exit-when-empty -- true >/dev/null 2>&1 ;;
  esac
  wait $pid
  is "$?:$(cat "$T_TMP/dk")" "0:kid $how" "$how of the parent: the waiter gets the dependent"
  is "$(($(kills) - k0))" 1 "  woken with one KILL QUERY (not at its next look)"
done

# its connection lost while it waits (the server ended the session, as
# when its server or Galera node dies): it connects again and waits
# there for what is left of D, and a push then wakes it (mq-pop(1))
"$MQ" pop --queue lostc --wait 30s >"$T_TMP/lc" 2>"$T_TMP/lc.err" &
pid=$!
until_parked lostc 1
cid=$(sql_root "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait \`mq_jobs\` lostc */%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%' LIMIT 1")
sql_root "KILL CONNECTION $cid"
until_parked lostc 1
"$MQ" push --queue lostc after-the-loss >/dev/null
wait $pid
is "$?:$(cat "$T_TMP/lc")" "0:after-the-loss" "its connection killed while parked: it waits on a new one, and gets the job"
done_testing
