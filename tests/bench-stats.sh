#!/bin/sh
# bench-stats.sh: how long `mq stats`, `mq pop` + `mq ack` and
# `mq requeue-stale` take on a table of 1,000,000 rows (900,000 done,
# 100,000 scheduled, 1,000 ready), against the same on a near-empty table.
# Prints figures; asserts nothing. Uses tests/lib.sh's private server.
# usage: sh tests/bench-stats.sh   (after a build)
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
"$MQ" init --table small >/dev/null

ms() { # ms CMD...: wall time of CMD in milliseconds, best of 5
  best=
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    t=$(((e - s) / 1000000))
    [ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
  done
  echo "$best"
}

echo "# filling mq_jobs: 900,000 done, 100,000 scheduled, 1,000 ready"
sql "INSERT INTO mq_jobs (queue, state, payload, attempts, finished_at)
     SELECT ELT(1 + seq % 4, 'a', 'b', 'c', 'd'), 'done', REPEAT('x', 100), 1,
            NOW(6) - INTERVAL seq SECOND FROM seq_1_to_900000"
sql "INSERT INTO mq_jobs (queue, state, payload, available_at)
     SELECT ELT(1 + seq % 4, 'a', 'b', 'c', 'd'), 'ready', REPEAT('x', 100),
            NOW(6) + INTERVAL seq SECOND FROM seq_1_to_100000"
seq 1 1000 | "$MQ" push --lines --queue a >/dev/null
seq 1 1000 | "$MQ" push --lines --queue a --table small >/dev/null
sql "ANALYZE TABLE mq_jobs" >/dev/null

pa() { r=$("$MQ" pop --queue a -o /dev/null "$@") && "$MQ" ack "$@" "$r"; }
printf '%-34s %10s %10s\n' "" "1M rows" "1k rows"
printf '%-34s %8s ms %8s ms\n' "mq stats" "$(ms "$MQ" stats)" \
  "$(ms "$MQ" stats --table small)"
printf '%-34s %8s ms %8s ms\n' "mq stats --prometheus" \
  "$(ms "$MQ" stats --prometheus)" "$(ms "$MQ" stats --prometheus --table small)"
printf '%-34s %8s ms %8s ms\n' "mq pop + mq ack (skip-locked)" \
  "$(ms pa)" "$(ms pa --table small)"
printf '%-34s %8s ms %8s ms\n' "mq pop, empty queue, 25k scheduled" \
  "$(ms "$MQ" pop --queue b)" "$(ms "$MQ" pop --queue b --table small)"
printf '%-34s %8s ms %8s ms\n' "mq requeue-stale (nothing stale)" \
  "$(ms "$MQ" requeue-stale)" "$(ms "$MQ" requeue-stale --table small)"
