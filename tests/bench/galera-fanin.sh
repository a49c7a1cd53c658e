# galera-fanin.sh: sourced by galera.sh, or alone by bench.sh with
# MQ_BENCH_ONLY=galera-fanin (then on a cluster of its own, or the one of
# MQ_TEST_GALERA=DIR: tests/galera.sh start DIR).
if [ -z "${G_DIR:-}" ]; then
  galera_cluster
  gmq 1 init >/dev/null
fi
# ---- G_FANIN parents pushed on node 1 and a
# job after them all pushed on node 2, drained by 6 mq work over the 3
# nodes, against the same jobs with that last one not after them, in
# alternating rounds; the conflicts (as above) the dependent adds, per
# 100 acks. Each ack of a parent lowers its shard's row of the
# dependent's _waits (parent % 1024: siblings acked together are in
# different shards); an ack that empties a shard writes the dependent's
# row too, and claims in id order empty the 1,024 shards in the last
# 1,024 acks, from every node at once. MQ_BENCH_GFANIN=N for another size.
G_FANIN=${MQ_BENCH_GFANIN:-20000} G_FANROUNDS=2
g_fan() { # g_fan QUEUE AFTER(0|1): prints "MS CONFLICTS STATE"
  seq 1 "$G_FANIN" | gmq 1 push --lines --quiet --queue "$1" >"$T_TMP/gfan.ids"
  if [ "$2" = 1 ]; then
    _k=$(gmq 2 push --queue "$1" --after-file "$T_TMP/gfan.ids" last)
  else
    _k=$(gmq 2 push --queue "$1" last)
  fi
  gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1'" >/dev/null
  gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1'" >/dev/null
  sleep 1
  _c0=$(gconflicts)
  _t0=$(now_ms)
  for _n in 1 2 3 1 2 3; do
    gmq "$_n" work --queue "$1" --exit-when-empty -- true 2>/dev/null &
  done
  wait
  _t1=$(now_ms)
  echo $((_t1 - _t0)) $(($(gconflicts) - _c0)) "$(gsql 1 "SELECT state FROM mq_jobs WHERE id = $_k")"
}
fw_ms=0 fw_c=0 fo_ms=0 fo_c=0 i=0 fstates=
while [ $i -lt $G_FANROUNDS ]; do
  i=$((i + 1))
  for way in without with; do
    [ $((i % 2)) = 1 ] || way=$([ $way = with ] && echo without || echo with)
    if [ "$way" = with ]; then
      d=$(g_fan "gfw_$i" 1)
      fw_ms=$((fw_ms + ${d%% *})) fw_c=$((fw_c + $(echo "$d" | cut -d' ' -f2)))
      fstates="$fstates${fstates:+ }${d##* }"
    else
      d=$(g_fan "gfo_$i" 0)
      fo_ms=$((fo_ms + ${d%% *})) fo_c=$((fo_c + $(echo "$d" | cut -d' ' -f2)))
    fi
  done
done
all=$((G_FANIN * G_FANROUNDS))
per=$(awk -v a="$fw_c" -v b="$fo_c" -v n="$all" 'BEGIN { printf "%.2f", (a - b) * 100 / n }')
row "galera: a fan-in of $G_FANIN parents, 6 mq work over 3 nodes: conflicts the dependent adds" \
  "$per per 100 acks" "<= 1 per 100" "$(meets "$per" 1 '<=')" \
  "$G_FANROUNDS alternating rounds: with the dependent $fw_c conflicts, $((all * 1000 / fw_ms)) jobs/s; without $fo_c conflicts, $((all * 1000 / fo_ms)) jobs/s; the dependent: $fstates"

