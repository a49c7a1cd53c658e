#!/bin/sh
# bench-wakeup.sh: how fast a push wakes a waiting `mq pop --wait`, and how
# quiet an idle waiter is. Latency is taken from the server's own clock:
# the job's created_at (its INSERT, just before the commit) to its claim
# (leased_until minus the lease). Prints figures; asserts nothing.
# usage: sh tests/bench-wakeup.sh [ROUNDS]   (after a build)
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
ROUNDS=${1:-50}

parked() { # parked: a waiter sits in its marked SLEEP
  [ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%'")" -ge 1 ]
}

i=0
while [ $i -lt "$ROUNDS" ]; do
  i=$((i + 1))
  "$MQ" pop --queue bench --wait 30s --lease 60s -o /dev/null >/dev/null 2>&1 &
  w=$!
  until parked; do sleep 0.01; done
  sleep 0.05
  "$MQ" push --queue bench "job $i" >/dev/null
  wait $w
done
sql "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, leased_until - INTERVAL 60 SECOND)
     FROM mq_jobs WHERE queue = 'bench' ORDER BY 1" >"$T_TMP/lat"
n=$(wc -l <"$T_TMP/lat")
med=$(sed -n "$(((n + 1) / 2))p" "$T_TMP/lat")
p90=$(sed -n "$(((n * 9 + 9) / 10))p" "$T_TMP/lat")
max=$(tail -n 1 "$T_TMP/lat")
printf 'push commit -> claim by a waiting mq pop --wait (%d rounds):\n' "$n"
awk -v m="$med" -v p="$p90" -v x="$max" 'BEGIN {
  printf "  median %.2f ms, p90 %.2f ms, max %.2f ms\n", m / 1000, p / 1000, x / 1000 }'

# an idle waiter: statements per second it sends, beyond what a single
# non-waiting pop sends (connecting, checking the table, one claim)
questions() { sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }
q0=$(questions)
"$MQ" pop --queue idle >/dev/null 2>&1
q1=$(questions)
"$MQ" pop --queue idle --wait 10s >/dev/null 2>&1
q2=$(questions)
# each questions() call itself counts one
once=$((q1 - q0 - 1))
waited=$((q2 - q1 - 1))
printf 'an idle mq pop --wait 10s: %d statements, %d more than a pop that does not wait: %.1f per second of waiting\n' \
  "$waited" "$((waited - once))" "$(awk -v a="$waited" -v b="$once" 'BEGIN { print (a - b) / 10 }')"
