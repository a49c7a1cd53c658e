#!/bin/sh
# Limits on a 3-node Galera cluster (issue 31; lib/limits.c): consumers on
# every node, both ways of claiming, never run more than a queue's
# concurrency or a key's per-key limit at once (each job logs its start
# and end; the gate write is what certification checks, not a count read
# before it), every job runs once, and no certification failure reaches
# a user (retried inside mq).
. "$(dirname "$0")/lib.sh"
galera_cluster
gmq 1 init >/dev/null

cat >"$T_TMP/job.sh" <<'EOF'
read -r key n
echo "$(date +%s%N) 1 $key $n" >>"$LOG"
sleep 0.05
echo "$(date +%s%N) -1 $key $n" >>"$LOG"
EOF
LOG=$T_TMP/runs.log
export LOG

# round QUEUE CONCURRENCY PER_KEY KEYS JOBS: jobs over KEYS keys, 9
# consumers (3 per node, both ways of claiming); prints "most at once,
# most of one key at once"
round() {
  q=$1 conc=$2 per=$3 keys=$4 jobs=$5
  : >"$LOG"
  i=0
  while [ $i -lt "$jobs" ]; do
    k=$((i % keys))
    printf 'k%d %d\n' $k $i | gmq $((i % 3 + 1)) push --queue "$q" --key "k$k" >/dev/null
    i=$((i + 1))
  done
  set --
  [ "$conc" = - ] || set -- "$@" --concurrency "$conc"
  [ "$per" = - ] || set -- "$@" --per-key "$per"
  gmq 1 limit "$q" "$@" >/dev/null
  gsql 2 "SELECT 1" >/dev/null; gsql 3 "SELECT 1" >/dev/null
  pids=
  for n in 1 2 3; do
    for how in skip-locked update skip-locked; do
      gmq $n work --queue "$q" --claim=$how --lease 60s --wait 2s -- sh "$T_TMP/job.sh" \
        2>>"$T_TMP/work.err" &
      pids="$pids $!"
    done
  done
  for p in $pids; do wait "$p"; done
  sort -n "$LOG" | awk '{ q += $2; k[$3] += $2; if (q > mq) mq = q; if (k[$3] > mk) mk = k[$3] } END { print mq + 0, mk + 0 }'
}

c0=$(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures)))
r=$(round pk - 1 6 36)
is "${r#* }" 1 "per key 1 over 6 keys, 9 consumers on 3 nodes: never 2 of a key at once ($r)"
is "$(gsql 1 "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue = 'pk' AND state = 'done'")" "36,36" \
  "all 36 done, each claimed once"
is "$(wc -l <"$LOG" | tr -d ' ')" 72 "each job started and ended once"
c1=$(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures)))
echo "# certification failures over the per-key round: $((c1 - c0))"

r=$(round cc 2 - 9 27)
check "concurrency 2 across the nodes: never 3 at once ($r)" test "${r% *}" -le 2
is "$(gsql 1 "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue = 'cc' AND state = 'done'")" "27,27" \
  "all 27 done, each claimed once"

r=$(round both 3 1 2 24)
check "concurrency 3, per key 1 over 2 keys: 2 at once at most ($r)" test "${r% *}" -le 2
is "${r#* }" 1 "and 1 of a key"
is "$(gsql 1 "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue = 'both' AND state = 'done'")" "24,24" \
  "all 24 done, each claimed once"

# one hot key: every claim of the 9 consumers competes for its one slot
r=$(round hot - 1 1 30)
is "${r#* }" 1 "one key at per key 1, 9 consumers on 3 nodes: one at a time ($r)"
is "$(gsql 1 "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue = 'hot' AND state = 'done'")" "30,30" \
  "all 30 done, each claimed once"

# claims of unrelated keys share no certification key: each node works
# a queue of its own (per key 1 and a key rate: gates and ticks of its
# keys), 2 consumers a node, all at once; no write of one node's claims,
# acks, counts or wakeups is a row another node writes
i=0
while [ $i -lt 60 ]; do
  n=$((i % 3 + 1))
  printf 'd%d %d\n' $n $i | gmq $n push --queue "dk$n" --key "d$n-$((i % 4))" >/dev/null
  i=$((i + 1))
done
for n in 1 2 3; do
  gmq $n limit "dk$n" --per-key 1 --key-rate 1000/1s >/dev/null
done
gsql 1 "SELECT 1" >/dev/null; gsql 2 "SELECT 1" >/dev/null; gsql 3 "SELECT 1" >/dev/null
c0=$(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures)))
: >"$LOG"
pids=
for n in 1 2 3; do
  for how in skip-locked update; do
    gmq $n work --queue "dk$n" --claim=$how --lease 60s --exit-when-empty -- sh "$T_TMP/job.sh" \
      2>>"$T_TMP/work.err" &
    pids="$pids $!"
  done
done
for p in $pids; do wait "$p"; done
c1=$(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures)))
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue LIKE 'dk_' AND state = 'done'")" 60 \
  "three nodes, a queue each: all 60 done"
is "$((c1 - c0))" 0 "no certification failure between the claims of unrelated keys"

is "$(grep -v '^$' "$T_TMP/work.err" || true)" "" "nothing on the consumers' stderr (no 1213 reached them)"
done_testing
