#!/bin/sh
# The README's examples, run as written: each block after an
# "<!-- example: NAME -->" marker.
. "$(dirname "$0")/lib.sh"
README=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/README.md
mkdir -p "$T_TMP/bin" "$T_TMP/work"
ln -s "$MQ" "$T_TMP/bin/mq"
PATH=$T_TMP/bin:$PATH
cd "$T_TMP/work" || exit 1

example() { # example NAME: the code of that block
  awk -v name="$1" '
    $0 == "<!-- example: " name " -->" { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$README"
}

run_example() { # run_example NAME: runs it with sh -e, status in $RC
  example "$1" >"$T_TMP/$1.sh"
  if [ ! -s "$T_TMP/$1.sh" ]; then
    not_ok "README has the $1 example"
    return
  fi
  run sh -e "$T_TMP/$1.sh"
}

run_example producer
is "$RC" 0 "producer example runs"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'thumbs'")" 102 "producer pushed 102 jobs"
is "$(printf '%s\n' "$OUT" | tail -n 2 | uniq | wc -l)" 1 "the dedup push printed the same id twice"

run_example consumer
is "$RC" 0 "consumer example runs until the queue is empty"
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(state = 'ready')) FROM mq_jobs WHERE queue = 'thumbs'")" \
  "101,1" "consumer did the 101 due jobs, left the scheduled one"
is "$(wc -l <sizes.log | tr -d ' ')" 101 "consumer did the work once per job"

run_example eval
is "$RC" 0 "eval example runs"
like "$OUT" "*job *, attempt 1: to: ops@example.com*\"payload\":\"to: dev@example.com\"*" \
  "eval and JSON output as shown"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'mail'")" \
  "done,leased" "mail: first acked, second leased"
done_testing
