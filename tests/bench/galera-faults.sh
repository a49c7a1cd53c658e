# galera-faults.sh: sourced by bench.sh with MQ_BENCH_ONLY=galera-faults
# (on a cluster of its own, or the one of MQ_TEST_GALERA=DIR): the long
# run of tests/galera-faults.sh, faults of every kind drawn from the
# seed one after another for MQ_BENCH_GFAULTS seconds (600 by default),
# 2 jobs a second pushed meanwhile, then tests/galera-check.py on it.
# Goal: no violation. MQ_FAULT_SEED=N replays a schedule; the run's
# directory is kept when the checker finds something.
# shellcheck shell=sh disable=SC2154
galera_cluster
G_SECS=${MQ_BENCH_GFAULTS:-600}
grun=$T_TMP/gfaults
MQ_FAULT_SECONDS=$G_SECS MQ_FAULT_JOBS=$((G_SECS * 2)) MQ_DATABASE=$T_DB \
  MQ_FAULT_FAULTS=kill1,kill2,stop,isolate \
  sh "$top/tests/galera-faults.sh" "$G_DIR" "$grun"
python3 "$top/tests/galera-check.py" "$grun" >"$T_TMP/gfaults.out"
gst=$?
cat "$T_TMP/gfaults.out" >&2
gviol=$(awk -F '\t' '{ s += $2 } END { print s + 0 }' "$grun/verdict" 2>/dev/null)
gkinds=$(awk '$4 == "begin" || $5 == "begin" || $6 == "begin" { n[$3]++ } END { for (k in n) printf "%s%s %d", (s++ ? ", " : ""), k, n[k] }' "$grun/faults.log")
if [ "$gst" != 0 ]; then
  gkeep=${TMPDIR:-/tmp}/mq-faults.$(cat "$grun/seed").$$
  cp -r "$grun" "$gkeep"
  echo "# the run is kept in $gkeep" >&2
fi
# the drain goes on during the faults: jobs done a second in each kind's
# windows (their mean), against the rest of the time
gtput=$(awk -F '\t' '{ split($1, w, " "); k = w[1]; r[k] += $2; n[k]++ }
  END { for (k in r) if (k != "healthy") printf "%s%s %.1f/s", (s++ ? ", " : ""), k, r[k] / n[k];
        printf "%sotherwise %.1f/s", (s ? ", " : ""), r["healthy"] }' "$grun/throughput" 2>/dev/null)
row "Galera faults: jobs done a second during faults" "${gtput:-?}" \
  "> 0 in each" "$( [ -n "$gtput" ] && ! echo "$gtput" | grep -q ' 0\.0/s' && echo yes || echo NO)" \
  "a workload paced by its producers (2 jobs a second pushed): outside faults, that rate and the backlog the faults left"
row "Galera faults: violations the checker found (${G_SECS}s of faults)" \
  "$gviol" "0" "$( [ "$gviol" = 0 ] && echo yes || echo NO)" \
  "seed $(cat "$grun/seed"); faults: $gkinds; $(wc -l <"$grun/jobs.tsv" | tr -d ' ') jobs; $(tr '\t\n' '= ' <"$grun/verdict")"
