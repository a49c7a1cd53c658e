#!/bin/sh
# bench-work.sh: jobs per second of `mq work --concurrency 4 -- true`
# against 4 shell loops of `mq pop` + `mq ack` on the same kind of jobs,
# and of `mq work` with 1 and 16 consumers. Prints figures; asserts
# nothing. Uses tests/lib.sh's private server (or $MQ_TEST_SOCKET).
# usage: sh tests/bench-work.sh [JOBS]   (after a build)
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
JOBS=${1:-4000}
SHELL_JOBS=$((JOBS / 5))

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
rate() { awk -v n="$1" -v ms="$2" 'BEGIN { printf "%.0f", n * 1000 / ms }'; }

seq 1 "$SHELL_JOBS" | "$MQ" push --lines --queue shell >/dev/null
t0=$(date +%s%N)
for i in 1 2 3 4; do
  (while r=$("$MQ" pop --queue shell -o /dev/null); do "$MQ" ack "$r"; done) &
done
wait
shell_ms=$(ms_since "$t0")
shell_rate=$(rate "$SHELL_JOBS" "$shell_ms")
printf '%-44s %6d jobs in %6d ms: %6s jobs/s\n' \
  "4 shell loops of mq pop + mq ack" "$SHELL_JOBS" "$shell_ms" "$shell_rate"

for c in 1 4 16; do
  seq 1 "$JOBS" | "$MQ" push --lines --queue "work$c" >/dev/null
  t0=$(date +%s%N)
  "$MQ" work --queue "work$c" --concurrency "$c" --exit-when-empty -- true
  ms=$(ms_since "$t0")
  r=$(rate "$JOBS" "$ms")
  printf '%-44s %6d jobs in %6d ms: %6s jobs/s (%s x the shell loops)\n' \
    "mq work --concurrency $c -- true" "$JOBS" "$ms" "$r" \
    "$(awk -v a="$r" -v b="$shell_rate" 'BEGIN { printf "%.1f", a / b }')"
done
left=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state <> 'done'")
printf 'jobs not done afterwards: %s (must be 0)\n' "$left"
