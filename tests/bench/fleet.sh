#!/bin/sh
# fleet.sh: waiters at fleet scale (issue 30), on a private server of its
# own with max_connections raised: W parked `mq pop --wait` over Q
# queues, then pushes; for each job, the time from its push's commit to
# its claim (the server's clock: created_at of the push's last row,
# leased_until minus the lease), and how long the pushes took (their
# wakeups included). Prints one line; tests/bench/bench.sh (full) makes
# its rows of it.
#   usage: sh tests/bench/fleet.sh [W] [Q] [IDLE]
# W waiters (200), Q queues (1: one push of W jobs; more: pushes of 1,
# 2, 4, ... jobs round-robin until each queue got its share), IDLE
# idle connections of another program beside them (0).
set -u
W=${1:-200} Q=${2:-1} IDLE=${3:-0}
top=$(cd "$(dirname "$0")/../.." && pwd)
MQ_TESTS_DIR=$top/tests
MQ_SERVER_ARGS="${MQ_SERVER_ARGS:-} --max-connections=$((W + IDLE + 100))"
export MQ_SERVER_ARGS
unset MQ_TEST_SOCKET
. "$top/tests/lib.sh"
"$MQ" init >/dev/null
mysqlc() { mariadb --no-defaults --skip-ssl --socket="$MQ_TEST_SOCKET" --user=root -N -B "$T_DB" "$@"; }
LEASE=600
idlers=
if [ "$IDLE" -gt 0 ]; then
  # idle sessions: connected, running nothing (a client blocked on its
  # standard input)
  mkfifo "$T_TMP/hold"
  i=0
  while [ $i -lt "$IDLE" ]; do
    mariadb --no-defaults --skip-ssl --socket="$MQ_TEST_SOCKET" --user=root \
      <"$T_TMP/hold" >/dev/null 2>&1 &
    idlers="$idlers $!"
    i=$((i + 1))
  done
  exec 9>"$T_TMP/hold"
  i=0
  until [ "$(mysqlc -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Sleep'")" -ge "$IDLE" ] ||
      [ $i -ge 300 ]; do
    sleep 0.2; i=$((i + 1))
  done
fi
pids=
i=0
while [ $i -lt "$W" ]; do
  q=f$((i % Q))
  "$MQ" pop --queue "$q" --wait 60s --lease ${LEASE}s -o /dev/null >/dev/null 2>>"$T_TMP/errs" &
  pids="$pids $!"
  i=$((i + 1))
done
# all parked: each has its rows, and has sat through its first parks
i=0
until [ "$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs_waiters")" -ge "$W" ] ||
    [ "$(mysqlc -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%'")" -ge "$W" ] ||
    [ $i -ge 300 ]; do
  sleep 0.2; i=$((i + 1))
done
echo "parked: $(mysqlc -e "SELECT COUNT(*) FROM mq_jobs_waiters") rows, $(mysqlc -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%' AND INFO NOT LIKE '%PROCESSLIST%'") parked, $(mysqlc -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST") sessions" >&2
sleep 3
q0=$(mysqlc -e "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2)
sleep 2
q1=$(mysqlc -e "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2)
idle=$(awk -v d="$((q1 - q0))" -v w="$W" 'BEGIN { printf "%.2f", d / 2 / w }')
k=0 size=1
p0=$(date +%s%N)
if [ "$Q" -eq 1 ]; then
  seq 1 "$W" | "$MQ" push --lines --queue f0 >/dev/null 2>&1
else
  while [ $k -lt "$W" ]; do
    for q in $(seq 0 $((Q - 1))); do
      left=$((W / Q - $(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'f$q'")))
      n=$size; [ $n -gt $left ] && n=$left
      [ $n -gt 0 ] || continue
      seq 1 $n | "$MQ" push --lines --queue "f$q" >/dev/null 2>&1
      k=$((k + n))
      sleep 0.2
    done
    size=$((size * 2))
  done
fi
push_ms=$((($(date +%s%N) - p0) / 1000000))
# shellcheck disable=SC2086
wait $pids
# per job: its claim after its push's commit (the last row of its
# batch: one transaction, rows of one created_at order)
mysqlc -e "SELECT TIMESTAMPDIFF(MICROSECOND, (SELECT MAX(b.created_at) FROM mq_jobs b WHERE b.queue = j.queue AND b.created_at <= j.created_at + INTERVAL 0.05 SECOND AND b.created_at >= j.created_at - INTERVAL 0.05 SECOND), j.leased_until - INTERVAL $LEASE SECOND) FROM mq_jobs j" >"$T_TMP/lat"
claimed=$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")
sort -n "$T_TMP/lat" | awk -v idle="$idle" -v w="$W" -v q="$Q" -v i="$IDLE" \
    -v c="$claimed" -v p="$push_ms" '{ v[NR] = $1 / 1000 } END {
  n = NR; printf "fleet waiters=%d queues=%d idle_conns=%d claimed=%d median_ms=%.1f p90_ms=%.1f max_ms=%.1f push_ms=%d idle_stmts_per_s=%.2f\n",
  w, q, i, c, v[int((n + 1) / 2)], v[int(n * 0.9)], v[n], p, idle }'
[ ! -s "$T_TMP/errs" ] || { echo "stderr of the waiters:"; sort "$T_TMP/errs" | uniq -c | head -5; }
exec 9>&-
# shellcheck disable=SC2086
[ -z "$idlers" ] || wait $idlers
exit 0
