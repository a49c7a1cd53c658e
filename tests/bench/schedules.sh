# schedules.sh: sourced by bench.sh (and alone with MQ_BENCH_ONLY=schedules):
# calendar schedules' rows (issue 33).
# - A consumer's claims beside 10,000 schedules of its queue: mq work
#   drains the same jobs from a table with them and from one without (a
#   worker fires, that is looks at the schedules, before its first claim
#   and every MQ_FIRE_RECHECK_US after); and mq pop --wait's idle look.
#   Goal: at most 1.2x.
# - mq schedule apply of a file of 10,000 schedules that changed nothing:
#   under a second, and no row written (the server's Handler_write,
#   Handler_update and Handler_delete counters).
schedules_rows() {
  S_N=10000 S_JOBS=$WORKJOBS
  # every schedule of queue q, at 03:00 each day: none due in the run
  awk -v n=$S_N 'BEGIN { for (i = 0; i < n; i++)
    printf "[s%05d]\ncron = 0 3 * * *\nqueue = q\npayload = job %d\n\n", i, i }' \
    >"$T_TMP/sched.conf"
  "$MQ" init --table sched >/dev/null
  "$MQ" init --table nosched >/dev/null
  t0=$(now_ms)
  "$MQ" schedule apply --table sched "$T_TMP/sched.conf" >/dev/null || return
  first_ms=$(($(now_ms) - t0))
  writes() { mysqlc -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_write', 'Handler_update', 'Handler_delete')" | awk '{ s += $2 } END { print s }'; }
  w0=$(writes)
  t0=$(now_ms)
  "$MQ" schedule apply --table sched "$T_TMP/sched.conf" >"$T_TMP/again.out"
  again_ms=$(($(now_ms) - t0))
  w1=$(writes)
  unchanged=$(grep -c '^unchanged ' "$T_TMP/again.out")
  row "apply: $S_N schedules that changed nothing" "$again_ms ms, $((w1 - w0)) rows written" \
    "< 1000 ms, 0 written" \
    "$(meets "$again_ms" 999 '<=')$([ $((w1 - w0)) -le 0 ] || echo ' (writes NO)')" \
    "$unchanged unchanged; the first apply (all added) took $first_ms ms"

  # the drain: mq work --exit-when-empty, the same jobs, in turns
  drain() { # drain TABLE: ms to work S_JOBS jobs
    seq 1 "$S_JOBS" | "$MQ" push --lines --queue q --table "$1" >/dev/null
    t0=$(now_ms)
    "$MQ" work --table "$1" --queue q --concurrency 4 --exit-when-empty -- true
    echo $(($(now_ms) - t0))
  }
  # in turns, each first in every other turn: the machine's other load
  # and the order fall on both alike
  with=0 without=0
  for turn in 1 2 3 4; do
    if [ $((turn % 2)) -eq 1 ]; then
      a=$(drain sched); b=$(drain nosched)
    else
      b=$(drain nosched); a=$(drain sched)
    fi
    with=$((with + a)) without=$((without + b))
  done
  r=$(ratio "$with" "$without")
  # an idle pop --wait's statements: with the schedules and without
  q0=$(questions)
  "$MQ" pop --table sched --queue q --wait 3s >/dev/null 2>&1
  q1=$(questions)
  "$MQ" pop --table nosched --queue q --wait 3s >/dev/null 2>&1
  q2=$(questions)
  h0=$(reads)
  "$MQ" schedule fire --table sched --queue q >/dev/null
  h1=$(reads)
  row "claims beside $S_N schedules of the queue (mq work)" "${r}x" "<= 1.2x" \
    "$(meets "$r" 1.2 '<=')" \
    "4 x $S_JOBS jobs, mq work -c 4, in turns: with $with ms, without $without ms; pop --wait 3s idle: $((q1 - q0)) statements with, $((q2 - q1)) without; a look reads $((h1 - h0)) index entries"
}
