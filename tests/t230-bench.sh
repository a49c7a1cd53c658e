#!/bin/sh
# tests/bench/bench.sh at its small size: it runs, and prints a row for every
# yardstick. Its figures are not judged here (they are the benchmark's,
# recorded in the README): only that the benchmark works.
. "$(dirname "$0")/lib.sh"
if [ -n "${MQ_SANITIZED:-}" ]; then
  # the plain run checks the benchmark; sanitizers only slow it down
  echo "1..0 # SKIP the benchmark runs in the plain build's run"
  exit 0
fi
out=$(MQ_BENCH_NO_SETUP=1 sh "$TESTS_DIR/bench/bench.sh" small 2>"$T_TMP/err")
is "$?" 0 "bench.sh small runs"
for r in "per call" floor bulk workers "flat claim" "ops: stats" "ops: mq archive" \
  "ops: consumers" wakeup; do
  like "$out" "*| $r*|*|*|*|*" "it prints the '$r' row"
done
like "$out" "*| wakeup*idle * statements/s*" "the wakeup row has the idle rate"
like "$out" "*mq 0.*, *, * cores, MariaDB *" "and the machine it ran on"
is "$(grep -c '^| [a-z]' "$T_TMP/err" 2>/dev/null)" 0 "nothing but progress on stderr"
done_testing
