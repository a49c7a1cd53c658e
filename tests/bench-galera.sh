# bench-galera.sh: sourced by bench.sh (full size, when galera-4 is
# installed): mq on a 3-node Galera cluster on this machine
# (tests/galera.sh), consumers spread over the three nodes vs the same
# consumers all on one node of the same cluster, in alternating rounds,
# so that the machine's other load falls on both alike. Conflicts are the
# nodes' certification failures and brute-force aborts (each retried
# inside mq), per 100 jobs.
galera_cluster
G_WORKJOBS=3000 G_SHELLJOBS=600 G_ROUNDS=2
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
g_drain() { # g_drain KIND(work|loop) PLACES QUEUE JOBS: ms; conflicts in $G_C
  seq 1 "$4" | gmq 1 push --lines --queue "$3" >/dev/null 2>&1
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
  G_C=$(($(gconflicts) - _c0))
  echo $((_t1 - _t0))
}
for kind in work loop; do
  jobs=$G_WORKJOBS
  [ $kind = loop ] && jobs=$G_SHELLJOBS
  one_ms=0 spread_ms=0 one_c=0 spread_c=0 i=0
  while [ $i -lt $G_ROUNDS ]; do
    i=$((i + 1))
    ms=$(g_drain $kind "1 1 1 1 1 1" "g1_${kind}_$i" "$jobs")
    one_ms=$((one_ms + ms)) one_c=$((one_c + G_C))
    ms=$(g_drain $kind "1 2 3 1 2 3" "g3_${kind}_$i" "$jobs")
    spread_ms=$((spread_ms + ms)) spread_c=$((spread_c + G_C))
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
    "$all jobs each way in $G_ROUNDS alternating rounds: one node $((all * 1000 / one_ms)) jobs/s ($one_c conflicts), three nodes $((all * 1000 / spread_ms)) jobs/s ($spread_c conflicts)"
done
