# galera-durability.sh: sourced by bench.sh with
# MQ_BENCH_ONLY=galera-durability (on a cluster of its own, or the one of
# MQ_TEST_GALERA=DIR): what the whole cluster's crash (kill -9 of the
# three nodes within a second: tests/galera-faults.sh's kill3, the node
# whose data holds most bootstrapped) loses with each setting of
# innodb_flush_log_at_trx_commit, counted by tests/galera-check.py from
# what mq reported: pushes that printed an id and are gone, acks reported
# done whose job ran again, claims that another consumer made again
# while the first ran. MQ_BENCH_GDURABLE=S seconds of crashes a setting
# (90 by default: 5 or 6 crashes), 4 jobs a second pushed meanwhile.
# Goal: nothing lost at 1 (what tests/galera.sh and mq-galera(7)
# recommend); the others are the price of their speed.
# shellcheck shell=sh disable=SC2154
galera_cluster
G_SECS=${MQ_BENCH_GDURABLE:-90}
for flush in 1 2 0; do
  grun=$T_TMP/gdurable$flush
  MQ_FAULT_SECONDS=$G_SECS MQ_FAULT_JOBS=$((G_SECS * 4)) MQ_DATABASE=$T_DB \
    MQ_FAULT_FAULTS=kill3 MQ_FAULT_FLUSH=$flush \
    sh "$top/tests/galera-faults.sh" "$G_DIR" "$grun"
  python3 "$top/tests/galera-check.py" "$grun" >"$T_TMP/gdurable$flush.out"
  gst=$?
  grep '^#' "$T_TMP/gdurable$flush.out" | grep -v '^# allowed loss' >&2
  lost() { awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$grun/lost"; }
  gviol=$(awk -F '\t' '{ s += $2 } END { print s + 0 }' "$grun/verdict" 2>/dev/null)
  gcrash=$(grep -c ' kill3 .* killed' "$grun/faults.log")
  if [ "$gst" != 0 ]; then
    gkeep=${TMPDIR:-/tmp}/mq-durable.$flush.$(cat "$grun/seed").$$
    cp -r "$grun" "$gkeep"
    echo "# the run is kept in $gkeep" >&2
  fi
  lp=$(lost pushes) la=$(lost acks) lc=$(lost claims)
  # a checker that did not finish wrote neither file: nothing is known
  if [ ! -s "$grun/verdict" ] || [ ! -s "$grun/lost" ]; then
    lp=? la=? lc=? goal=0 met=NO
  elif [ "$flush" = 1 ]; then
    goal=0 met=$( [ "$gst" = 0 ] && [ "$((lp + la + lc + gviol))" = 0 ] && echo yes || echo NO)
  else
    goal=- met=-
  fi
  row "Galera durability: whole-cluster crashes at innodb_flush_log_at_trx_commit=$flush, lost" \
    "$lp pushes, $la acks, $lc claims" "$goal" "$met" \
    "seed $(cat "$grun/seed"); $gcrash crashes; $(wc -l <"$grun/jobs.tsv" | tr -d ' ') jobs; violations beyond the losses: $gviol ($(tr '\t\n' '= ' <"$grun/verdict"))"
done
