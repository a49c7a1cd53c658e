#!/bin/sh
# Server crashes: kill -9 mariadbd during a `push --lines` stream and
# during consumption, then restart it. Every push that reported its ids is
# there, each batch is all or nothing, the clients report the documented
# status, `mq work` reconnects and carries on, and every job gets done.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
SRV_DIR=$(dirname "$MQ_TEST_SOCKET")
crash() { sh "$TESTS_DIR/server.sh" restart "$SRV_DIR" --crash; }

# 1. during a push --lines stream
seq 1 300000 >"$T_TMP/lines"
: >"$T_TMP/ids"
"$MQ" push --lines --queue p <"$T_TMP/lines" >"$T_TMP/ids" 2>"$T_TMP/push.err" &
pid=$!
i=0
while [ "$(wc -l <"$T_TMP/ids")" -lt 3000 ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
crash
wait $pid
st=$?
printed=$(wc -l <"$T_TMP/ids" | tr -d ' ')
rows=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'p'")
check "the push was cut short ($printed ids printed, $rows rows)" test "$rows" -lt 300000
# 69 if the crash came between batches; 3 (outcome unknown) if a batch
# was in flight, which its commit may have reached
case $st in
3) like "$(cat "$T_TMP/push.err")" "mq push: stopped after reading * records (the ids printed are pushed; the last batch, not printed, may be too): outcome unknown: cannot push: * (error 2013, SQLSTATE HY000)" \
  "naming how far it got, the batch in flight and the error" ;;
*) is "$st" 69 "push reports the lost server: status 69 (or 3)"
   like "$(cat "$T_TMP/push.err")" "mq push: stopped after reading * records (the ids printed are the jobs pushed): * (error 20[0-9][0-9], SQLSTATE HY000)" \
  "naming how far it got and the error" ;;
esac
is "$(wc -l <"$T_TMP/push.err" | tr -d ' ')" 1 "in one line"
sql "SELECT id FROM mq_jobs WHERE queue = 'p' ORDER BY id" >"$T_TMP/rows"
is "$(comm -23 "$T_TMP/ids" "$T_TMP/rows" | wc -l | tr -d ' ')" 0 \
  "every id printed is in the table (committed before the crash)"
is "$((rows % 1000))" 0 "whole batches only: $rows rows, a multiple of 1000"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'p' AND CAST(payload AS UNSIGNED) > $rows")" 0 \
  "and they are the first $rows lines: no hole, no partial batch"
extra=$((rows - printed))
check "at most the one batch in flight committed unreported ($extra rows)" test "$extra" -ge 0 -a "$extra" -le 1000

# 2. during consumption: 4 workers and 4 pop/ack loops, the server
# crashes and restarts under them
sql "DELETE FROM mq_jobs"
seq 1 3000 | awk '{ printf "%d\n%c", $1, 0 }' | "$MQ" push -0 --queue c >/dev/null
loop() { # loop LOG: pop + ack until empty; a lost server is waited out
  while :; do
    r=$("$MQ" pop --queue c --lease 3s -o "$1.payload" 2>>"$1.err")
    st=$?
    if [ $st -eq 1 ]; then
      # empty: unless jobs are still held (a crash lost their acks)
      [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND state <> 'done'")" = 0 ] && return 0
      "$MQ" requeue-stale >/dev/null 2>&1
      sleep 0.5
      continue
    fi
    if [ $st -ne 0 ]; then
      echo "pop $st" >>"$1.status"
      sleep 0.5
      continue
    fi
    # the job ran once the pop returned it: log it before the ack, whose
    # answer a crash may lose after its commit (then it is done, and
    # logged here, though the ack says 69)
    cat "$1.payload" >>"$1"
    "$MQ" ack "$r" 2>>"$1.err" || echo "ack $?" >>"$1.status"
  done
}
pids=
for i in 1 2 3 4; do
  "$MQ" work --queue c --lease 3s -- tee -a "$T_TMP/w$i" >/dev/null 2>"$T_TMP/w$i.err" &
  wpids="${wpids:-} $!"
  loop "$T_TMP/l$i" &
  pids="$pids $!"
done
until [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND state = 'done'")" -ge 500 ]; do sleep 0.05; done
crash
for p in $pids; do wait "$p"; done
until_done=0
while [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND state <> 'done'")" != 0 ] && [ $until_done -lt 200 ]; do
  "$MQ" requeue-stale >/dev/null 2>&1
  sleep 0.1
  until_done=$((until_done + 1))
done
for p in $wpids; do kill -TERM "$p"; done
ws=0
for p in $wpids; do wait "$p" || ws=$((ws + 1)); done
is "$ws" 0 "the workers carried on and stopped cleanly (exit 0)"
like "$(cat "$T_TMP"/w?.err)" "*reconnecting in*connected again*" "the workers reported the loss and reconnected"
like "$(cat "$T_TMP"/l?.status 2>/dev/null | sort -u | tr '\n' ' ')" "*pop 69*" \
  "the loops' pops reported the lost server as status 69"
is "$(grep -v '^pop \(3\|69\)$\|^ack \(3\|69\)$\|^ack 2$' "$T_TMP"/l?.status 2>/dev/null)" "" \
  "no status but 69 (server gone), 3 (outcome unknown: the ack was in flight) or 2 (an ack whose lease had been lost)"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'c'")" \
  "3000,3000" "every job done after the crash"
is "$(counted_jobs | tr ',' '\n' | grep '^c ')" "c done 3000" "and counted once: a count commits with its jobs, or not at all"
is "$(counters c | cut -d' ' -f1-5)" "$(tallied c)" "the counters agree with the table and the history after the crash"
cat "$T_TMP"/w? "$T_TMP"/l? 2>/dev/null | sort -n | uniq >"$T_TMP/ran"
is "$(wc -l <"$T_TMP/ran" | tr -d ' ')" 3000 "every job ran (an ack lost in the crash means it ran again)"
done_testing
