# galera-failover.sh: sourced by bench.sh with MQ_BENCH_ONLY=galera-failover
# (on a cluster of its own, or the one of MQ_TEST_GALERA=DIR): the time
# from a kill -9 of the node an mq work uses (given the three nodes as a
# list, mq(1) --host) to its first job done through another node, the
# median of MQ_BENCH_GFAIL kills (10 by default; each node rejoins
# before the next), against Galera's suspect timeout (tests/galera.sh
# sets evs.suspect_timeout to 3 s): goal, at most twice it.
galera_cluster
G_FAIL=${MQ_BENCH_GFAIL:-10}
G_SUSPECT_MS=3000
gbase=$(cat "$G_DIR/base")
ghosts="127.0.0.1:$((gbase + 13)),127.0.0.1:$((gbase + 23)),127.0.0.1:$((gbase + 33))"
gmq 1 init >/dev/null
: >"$T_TMP/gfail.ms"
k=0
while [ $k -lt "$G_FAIL" ]; do
  q=fo$k
  seq 1 400 | gmq 2 push --lines --queue $q >/dev/null
  # node n is the list's first: the one mq work uses
  n=$((k % 3 + 1))
  hl=$(echo "$ghosts" | awk -F, -v n=$n '{ s = $n; for (i = 1; i <= 3; i++) if (i != n) s = s "," $i; print s }')
  MQ_SOCKET='' MQ_USER=root MQ_DATABASE=$T_DB "$MQ" work --host "$hl" \
    --queue $q --exit-when-empty -- sh -c 'sleep 0.01' 2>/dev/null &
  wp=$!
  o=$((n % 3 + 1))
  while [ "$(gsql $o "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" -lt 50 ]; do
    sleep 0.05
  done
  t0=$(now_ms)
  sh "$top/tests/galera.sh" kill "$G_DIR" $n
  d0=$(gsql $o "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")
  while [ "$(gsql $o "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" -le "$d0" ]; do
    sleep 0.02
  done
  echo $(($(now_ms) - t0)) >>"$T_TMP/gfail.ms"
  wait $wp
  sh "$top/tests/galera.sh" rejoin "$G_DIR" $n >/dev/null 2>&1
  k=$((k + 1))
done
gmed=$(sort -n "$T_TMP/gfail.ms" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }')
row "Galera failover: kill -9 of mq work's node to its first job done through another" \
  "median $gmed ms ($G_FAIL kills)" "<= $((2 * G_SUSPECT_MS)) ms (2x the suspect timeout)" \
  "$(meets "$gmed" $((2 * G_SUSPECT_MS)) '<=')" \
  "each: $(tr '\n' ' ' <"$T_TMP/gfail.ms")ms; mq work given the 3 nodes as a list (--host), the killed node first"
