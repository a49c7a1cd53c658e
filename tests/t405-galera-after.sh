#!/bin/sh
# Dependencies on a 3-node Galera cluster (issue 32; lib/deps.c): a
# fan-in of 600 parents drained by consumers on every node, both ways of
# claiming: the dependent runs once, after every parent (the conflicts
# the siblings' acks cause are printed, measured in the bench); a chain whose
# links are acked on one node and claimed on another runs in order; a
# parent pushed on one node and finished on another while dependents are
# pushed after it on the third: none is missed (the push and the finish
# both write the parent's row); a fan-out of 3,000 pushed on node 1
# after a parent of node 2 that node 3 acks between the push's batches,
# drained on every node: each child once, after the ack; mq wait woken
# by finishes, on node 2 by an ack on node 1 (a write to its row) and on
# node 1 by one there (KILL QUERY), told from its periodic look by the
# general log; no waiter's row left. And a chain's claims beside 3,000
# jobs due later do not walk them.
. "$(dirname "$0")/lib.sh"
galera_cluster
gmq 1 init >/dev/null
conflicts() {
  echo $(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures) +
    $(gstatus 1 wsrep_local_bf_aborts) + $(gstatus 2 wsrep_local_bf_aborts) + $(gstatus 3 wsrep_local_bf_aborts)))
}
cat >"$T_TMP/job.sh" <<'EOF'
read -r p
echo "$p $(date +%s%N)" >>"$LOG"
EOF
LOG=$T_TMP/runs.log
export LOG

# ---- fan-in: 600 parents, 9 consumers over 3 nodes
seq 1 600 | gmq 1 push --queue fan --lines --quiet >"$T_TMP/ids"
kid=$(gmq 2 push --queue fan --after-file "$T_TMP/ids" last)
is "$(gsql 3 "SELECT parent_shards FROM mq_jobs WHERE id = $kid")" 600 "600 parents in 600 shards"
: >"$LOG"
c0=$(conflicts)
pids=
for n in 1 2 3; do
  for how in skip-locked update skip-locked; do
    gmq $n work --queue fan --claim=$how --lease 60s --wait 2s -- sh "$T_TMP/job.sh" \
      2>>"$T_TMP/work.err" &
    pids="$pids $!"
  done
done
for p in $pids; do wait "$p"; done
c1=$(conflicts)
is "$(grep -c '^last ' "$LOG")" 1 "the dependent ran once"
is "$(wc -l <"$LOG" | tr -d ' ')" 601 "every job ran once"
lastt=$(awk '$1 == "last" { print $2 }' "$LOG")
maxp=$(awk '$1 != "last" { if ($2 > m) m = $2 } END { print m }' "$LOG")
check "the dependent after every parent" test "$lastt" -gt "$maxp"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fan' AND state = 'done' AND attempts = 1")" 601 \
  "all done, each claimed once"
# the conflicts are measured, not asserted (the bench's Galera row):
# with fewer parents than shards, every ack empties its shard and writes
# the dependent's row
echo "# certification failures and brute-force aborts over the 3 nodes: $((c1 - c0)) for 601 jobs"
sed 's/^/# work: /' "$T_TMP/work.err"

# ---- a chain: each link acked on one node, the next claimed on another
prev=$(gmq 1 push --queue chain 1)
for i in $(seq 2 30); do prev=$(gmq $((i % 3 + 1)) push --queue chain --after "$prev" "$i"); done
: >"$LOG"
pids=
for n in 1 2 3; do
  gmq $n work --queue chain --lease 60s --wait 3s -- sh "$T_TMP/job.sh" 2>>"$T_TMP/work.err" &
  pids="$pids $!"
done
for p in $pids; do wait "$p"; done
is "$(cut -d' ' -f1 "$LOG" | tr '\n' ' ')" "$(seq 1 30 | tr '\n' ' ')" "30 links over 3 nodes ran in order, once each"

# ---- a chain of 20 claimed on node 2 beside 3,000 jobs due later in
# its queue: the claims of the node's share, short (one job due, room
# for more), read the due index after the first, not the claim index's
# 3,000 rows due later of the head's priority (lib/claim.c; before:
# about 3,000 entries a claim). Node 2's global counters (this test
# runs alone); the chain's writes apply on the other nodes, not there.
seq 1 3000 | gmq 1 push --queue walk --lines --delay 1h --quiet >/dev/null
prev=$(gmq 1 push --queue walk 1)
for i in $(seq 2 20); do prev=$(gmq 1 push --queue walk --after "$prev" "$i"); done
looked() {
  echo $(($(gstatus 2 Handler_icp_attempts) + $(gstatus 2 Handler_read_next) + $(gstatus 2 Handler_read_key)))
}
l0=$(looked)
gmq 2 work --queue walk --concurrency 4 --lease 60s --exit-when-empty -- true 2>>"$T_TMP/work.err"
l=$(($(looked) - l0))
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'walk' AND state = 'done'")" 20 "a chain of 20 on node 2 beside 3,000 jobs due later: every link done"
check "... its claims do not walk the 3,000 ($l index entries on node 2; 15,000 at most)" [ "$l" -le 15000 ]

# ---- pushes after a parent on node 3 while node 2 finishes it: each
# dependent is either waiting for it (and released by its ack) or sees
# it done: none is left waiting
for round in 1 2 3 4 5; do
  par=$(gmq 1 push --queue race "p$round")
  gsql 2 "SELECT 1" >/dev/null; gsql 3 "SELECT 1" >/dev/null
  ( for i in 1 2 3 4 5 6 7 8; do gmq 3 push --queue racekid --after "$par" "k$round.$i" >/dev/null 2>>"$T_TMP/push.err"; done ) &
  pp=$!
  r=$(gmq 2 pop --queue race -o /dev/null)
  gmq 2 ack "$r"
  wait $pp
done
is "$(cat "$T_TMP/push.err")" "" "every push went through"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'racekid' AND available_at = '9999-12-31 23:59:59.999999'")" 0 \
  "no dependent left waiting for a done parent"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'racekid' AND state = 'ready'")" 40 "all 40 due"

# ---- a fan-out: 3,000 jobs pushed on node 1 (mq push --lines --after)
# after a parent pushed on node 2, while consumers on every node drain
# the queue's other jobs; node 3 acks the parent between the push's
# batches (of 1,000): each child runs once, after the parent's ack (the
# first batch released by it, the others due at once)
par=$(gmq 2 push --queue fopar parent)
seq -f f%g 1 600 | gmq 1 push --queue fo --lines --quiet >/dev/null
: >"$LOG"
gsql 3 "SELECT 1" >/dev/null
pids=
for n in 1 2 3; do
  for how in skip-locked update; do
    gmq $n work --queue fo --claim=$how --lease 60s --wait 10s -- sh "$T_TMP/job.sh" \
      2>>"$T_TMP/work.err" &
    pids="$pids $!"
  done
done
# the second half of the lines once the parent is acked
# (seq, not a filter, writes them: a filter would hold some of them back)
( { seq -f c%g 1 1500; i=0; while [ ! -e "$T_TMP/acked" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    seq -f c%g 1501 3000; } |
    gmq 1 push --queue fo --lines --quiet --after "$par" >"$T_TMP/fo.ids" 2>"$T_TMP/fo.err"
  echo $? >"$T_TMP/fo.rc" ) &
fpid=$!
# the ack: once the first batch is in, and a tenth of the other jobs ran
i=0
while { [ "$(grep -c '^f' "$LOG")" -lt 60 ] ||
    [ "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fo' AND payload LIKE 'c%'")" -lt 1000 ]; } &&
    [ $i -lt 600 ]; do
  sleep 0.05; i=$((i + 1))
done
r=$(gmq 3 pop --queue fopar -o /dev/null)
gmq 3 ack "$r"
pushed=$(gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fo' AND payload LIKE 'c%'")
touch "$T_TMP/acked"
wait $fpid
for p in $pids; do wait "$p"; done
is "$(cat "$T_TMP/fo.rc") $(cat "$T_TMP/fo.err")" "0 " "the fan-out's push went through"
is "$pushed $(wc -l <"$T_TMP/fo.ids" | tr -d ' ')" "1000 3000" "node 3 acked the parent with the first of the 3 batches in"
is "$(grep -c '^c' "$LOG")" 3000 "3000 children ran"
is "$(grep '^c' "$LOG" | cut -d' ' -f1 | sort -u | wc -l | tr -d ' ')" 3000 "each once"
pend=$(gsql 1 "SELECT ROUND(UNIX_TIMESTAMP(finished_at) * 1000000) FROM mq_jobs WHERE id = $par")
first=$(awk '$1 ~ /^c/ { v = substr($2, 1, 16); if (m == "" || v < m) m = v } END { print m }' "$LOG")
check "every child after the parent's ack on node 3 (${first:-none} > $pend)" test "${first:-0}" -gt "$pend"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fo' AND payload LIKE 'c%' AND state = 'done' AND attempts = 1")" 3000 \
  "the children done, each claimed once"

# ---- mq wait woken by finishes: on node 2 for jobs acked on node 1
# (the ack's write to the waiter's row aborts its park), on node 1 for
# jobs acked on node 1 (KILL QUERY). The general log of the waiter's
# node shows how each park ended, whatever the load: a park that a
# finish ended is followed by an arming of its row (then the look that
# prints the job); one that slept its time, by another park or by the
# periodic look (its row stays armed), never by an arming.
# parked N: waits (20 s at most) until node N's waiter has its row
# armed and is in a park; prints its connection id
parked() {
  _i=0
  while [ $_i -lt 400 ]; do
    _c=$(gsql "$1" "SELECT w.conn FROM mq_jobs_waiters w JOIN information_schema.PROCESSLIST p ON p.ID = w.conn WHERE w.queue LIKE '*%' AND w.wakes = 0 AND p.INFO LIKE '%mq-wait-finish%' AND p.INFO NOT LIKE '%PROCESSLIST%'")
    [ -n "$_c" ] && { echo "$_c"; return 0; }
    sleep 0.05
    _i=$((_i + 1))
  done
  return 1
}
# woken N CONN: in the general log of node N, the parks of connection
# CONN followed by an arming, its parks, its looks: "W P L"
woken() {
  gsql "$1" "SELECT COUNT(IF(k = 'P' AND nk = 'A', 1, NULL)), COUNT(IF(k = 'P', 1, NULL)), COUNT(IF(k = 'L', 1, NULL)) FROM (
      SELECT k, LEAD(k) OVER (ORDER BY event_time, n) AS nk FROM (
        SELECT event_time, ROW_NUMBER() OVER () AS n,
          CASE WHEN a LIKE '%mq-wait-finish%' THEN 'P'
            WHEN a LIKE 'INSERT INTO%\\_waiters%' THEN 'A' ELSE 'L' END AS k
        FROM (SELECT event_time, CONVERT(argument USING utf8mb4) AS a
          FROM mysql.general_log WHERE thread_id = $2
            AND command_type IN ('Query', 'Execute')) l
        WHERE a LIKE '%mq-wait-finish%' OR a LIKE 'INSERT INTO%\\_waiters%'
          OR a LIKE '%UNION ALL SELECT 0%') s) t" | tr '\t' ' '
}
# wait_line ID: waits (10 s at most) for its line in the waiter's output
wait_line() {
  _i=0
  while ! grep -q "^$1 " "$T_TMP/w.out" && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
  grep "^$1 " "$T_TMP/w.out"
}
for pair in "2 1" "1 1"; do
  wn=${pair% *} an=${pair#* }
  how=$([ "$wn" = "$an" ] && echo "KILL QUERY" || echo "a write to its row")
  ids=
  for i in 1 2 3; do ids="$ids $(gmq "$an" push --queue "ww$wn" "w$i")"; done
  gsql "$wn" "SET GLOBAL log_output = 'TABLE'; TRUNCATE mysql.general_log; SET GLOBAL general_log = 1"
  # shellcheck disable=SC2086
  ( gmq "$wn" wait --timeout 60s $ids >"$T_TMP/w.out" 2>"$T_TMP/w.err"; echo $? >"$T_TMP/w.rc" ) &
  wpid=$!
  lines=0 cw=
  for _ in $ids; do
    cw=$(parked "$wn") || break
    r=$(gmq "$an" pop --queue "ww$wn" -o /dev/null)
    gmq "$an" ack "$r"
    [ "$(wait_line "${r%%.*}")" = "${r%%.*} done" ] && lines=$((lines + 1))
  done
  wait $wpid
  gsql "$wn" "SET GLOBAL general_log = 0"
  is "$lines $(cat "$T_TMP/w.rc")" "3 0" "mq wait on node $wn: a line for each of 3 jobs acked on node $an as it finished, status 0"
  wl=$(woken "$wn" "${cw:-0}")
  is "${wl%% *}" 3 "... each woken ($how), not by its periodic look (parks woken, parks, looks: $wl)"
  gsql "$wn" "TRUNCATE mysql.general_log"
done
for n in 1 2 3; do
  is "$(gsql $n "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%'")" 0 "node $n: the waiters' rows are gone"
done

done_testing
