# galera.sh: sourced by bench.sh (full size, when galera-4 is
# installed): mq on a 3-node Galera cluster on this machine
# (tests/galera.sh): consumers spread over the three nodes vs the same
# consumers all on one node of the same cluster, in alternating rounds
# (which goes first alternates too), so that the machine's other load
# falls on both alike. Conflicts are the
# nodes' certification failures and brute-force aborts (each retried
# inside mq), per 100 jobs.
galera_cluster
G_WORKJOBS=3000 G_SHELLJOBS=600 G_ROUNDS=4
gconflicts() {
  _t=0
  for _n in 1 2 3; do
    _t=$((_t + $(gstatus $_n wsrep_local_cert_failures) + $(gstatus $_n wsrep_local_bf_aborts)))
  done
  echo $_t
}
gmq 1 init >/dev/null
g_loop() { # g_loop NODE QUEUE: pop/ack until the queue is empty
  while r=$(gmq "$1" pop --queue "$2" -o /dev/null 2>/dev/null); do
    gmq "$1" ack "$r" 2>/dev/null
  done
}
g_drain() { # g_drain KIND(work|loop) PLACES QUEUE JOBS: prints "MS CONFLICTS"
  # (one line: it runs in a command substitution, whose variables are lost)
  seq 1 "$4" | gmq 1 push --lines --queue "$3" >/dev/null 2>&1
  # every node has the jobs (gsql waits for its node to catch up) before
  # the clock starts: consumers on nodes 2 and 3 do not wait for them
  gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$3'" >/dev/null
  gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$3'" >/dev/null
  sleep 1
  _c0=$(gconflicts)
  _t0=$(now_ms)
  for _n in $2; do
    if [ "$1" = work ]; then
      gmq "$_n" work --queue "$3" --exit-when-empty -- true 2>/dev/null &
    else
      g_loop "$_n" "$3" &
    fi
  done
  wait
  _t1=$(now_ms)
  echo $((_t1 - _t0)) $(($(gconflicts) - _c0))
}
for kind in work loop; do
  jobs=$G_WORKJOBS
  [ $kind = loop ] && jobs=$G_SHELLJOBS
  one_ms=0 spread_ms=0 one_c=0 spread_c=0 i=0 rounds=
  while [ $i -lt $G_ROUNDS ]; do
    i=$((i + 1))
    # one node first in odd rounds, the three first in even ones: the
    # server's background work after a drain (purge) falls on both alike
    for way in one spread; do
      [ $((i % 2)) = 1 ] || way=$([ $way = one ] && echo spread || echo one)
      if [ $way = one ]; then
        d=$(g_drain $kind "1 1 1 1 1 1" "g1_${kind}_$i" "$jobs")
        r_one=${d% *}
        one_ms=$((one_ms + r_one)) one_c=$((one_c + ${d#* }))
      else
        d=$(g_drain $kind "1 2 3 1 2 3" "g3_${kind}_$i" "$jobs")
        r_spread=${d% *}
        spread_ms=$((spread_ms + r_spread)) spread_c=$((spread_c + ${d#* }))
      fi
    done
    # each round's own ratio: how far one round is from the next
    rounds="$rounds${rounds:+ }$(ratio "$r_one" "$r_spread")"
  done
  all=$((jobs * G_ROUNDS))
  r=$(ratio "$one_ms" "$spread_ms")
  per=$(awk -v c="$spread_c" -v n="$all" 'BEGIN { printf "%.2f", c * 100 / n }')
  met=$(meets "$r" 1.0 '>=')
  [ "$(meets "$per" 1 '<=')" = yes ] || met=NO
  if [ $kind = work ]; then
    name="galera: 6 mq work over 3 nodes vs 6 on one node"
  else
    name="galera: 6 pop/ack loops over 3 nodes vs 6 on one node"
  fi
  row "$name" "${r}x the jobs/s; $per conflicts per 100 jobs" \
    ">= 1.0x; <= 1 per 100" "$met" \
    "$all jobs each way in $G_ROUNDS alternating rounds: one node $((all * 1000 / one_ms)) jobs/s ($one_c conflicts), three nodes $((all * 1000 / spread_ms)) jobs/s ($spread_c conflicts); rounds: $rounds"
done

# ---- galera fan-in (issue 32): its own file, also run alone
. "$top/tests/bench/galera-fanin.sh"

# ---- galera wakeup: push on node 1 -> claim by a waiting pop --wait on
# node 2 or 3 (through the waiters table) and on node 1 (KILL QUERY), on
# a 3-node cluster of tests/galera.sh, when galera-4 is installed. A
# consumer per node, each on its queue (pop --wait in a loop); pushes
# 0.6 s apart, in turn, so each waits 1.8 s between its jobs: a push
# comes early in its first one-second park (after 0.1 + 0.2 + 0.4 + 0.8
# s), where only a wakeup finds the job within 0.7 s. Push commit -> claim from the job's times, as
# above (one clock: the nodes share the machine).
g0=$(now_ms)
gpids=
for n in 1 2 3; do
  (
    while [ ! -e "$T_TMP/gstop" ]; do
      MQ_SOCKET=$G_DIR/n$n/sock "$MQ" pop --queue gw$n --wait 2s \
        --lease 60s -o /dev/null >/dev/null 2>>"$T_TMP/gwork.err"
    done
  ) &
  gpids="$gpids $!"
done
sleep 2
i=0
while [ $i -lt "$GROUNDS" ]; do
  for n in 2 3 1; do
    gmq 1 push --queue gw$n "job $i" >/dev/null
    sleep 0.6
  done
  i=$((i + 1))
done
i=0
while [ "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE state = 'ready'")" != 0 ] &&
    [ $i -lt 500 ]; do
  sleep 0.02; i=$((i + 1))
done
touch "$T_TMP/gstop"
# shellcheck disable=SC2086
wait $gpids
gmed() { # gmed WHERE: median push -> claim in ms
  gsql 1 "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, leased_until - INTERVAL 60 SECOND)
    FROM mq_jobs WHERE $1 ORDER BY 1" |
    awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'
}
gcross=$(gmed "queue IN ('gw2', 'gw3')")
gsame=$(gmed "queue = 'gw1'")
gmax=$(gsql 1 "SELECT ROUND(MAX(TIMESTAMPDIFF(MICROSECOND, created_at, leased_until - INTERVAL 60 SECOND)) / 1000, 1) FROM mq_jobs WHERE queue IN ('gw2', 'gw3')")
row "galera wakeup: push on node 1 -> claim by pop --wait on node 2/3, median" \
  "$gcross ms (same node $gsame ms)" "<= 10 ms" "$(meets "$gcross" 10 '<=')" \
  "3 nodes on this machine; $((2 * GROUNDS)) pushes to waiters on nodes 2 and 3 (slowest $gmax ms), $GROUNDS on node 1, in $(( $(now_ms) - g0 )) ms; $(grep -c . "$T_TMP/gwork.err") lines on the waiters' stderr"
