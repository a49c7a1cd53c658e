#!/bin/sh
# The README's examples, run as written: each block after an
# "<!-- example: NAME -->" marker.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T_TMP/bin" "$T_TMP/work"
ln -s "$MQ" "$T_TMP/bin/mq"
PATH=$T_TMP/bin:$PATH
cd "$T_TMP/work" || exit 1

run_example producer
is "$RC" 0 "producer example runs"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'thumbs'")" 102 "producer pushed 102 jobs"
is "$(printf '%s\n' "$OUT" | tail -n 2 | uniq | wc -l)" 1 "the dedup push printed the same id twice"

run_example consumer
is "$RC" 0 "consumer example runs until the queue is empty"
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(state = 'ready')) FROM mq_jobs WHERE queue = 'thumbs'")" \
  "101,1" "consumer did the 101 due jobs, left the scheduled one"
is "$(wc -l <sizes.log | tr -d ' ')" 101 "consumer did the work once per job"

run_example failing
is "$RC" 0 "failing/extend example runs"
is "$(sql "SELECT CONCAT_WS(',', state, attempts, available_at > NOW(6), last_error) FROM mq_jobs WHERE queue = 'mail'")" \
  "ready,1,1,no route to to: nobody@invalid" "the failed job waits for its retry, error kept"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'video'")" done "the extended job was acked"

run_example eval
is "$RC" 0 "eval example runs"
like "$OUT" "*job *, attempt 1: to: ops@example.com*\"payload\":\"to: dev@example.com\"*" \
  "eval and JSON output as shown"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'mail'")" \
  "ready,done,leased" "mail: the retry waits, first acked, second leased"

run_example work
is "$RC" 0 "work example runs"
is "$(printf '%s\n' "$OUT" | grep -c '^resized img-')" 20 "the script ran once per image"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'images'")" \
  "20,20" "all 20 done"

# cron: t312-cron.sh runs that example as cron would

run_example recurring
is "$RC" 0 "recurring example runs"
is "$(printf '%s\n' "$OUT" | sed -n 1p)" "$(printf '%s\n' "$OUT" | sed -n 2p)" \
  "the deploy script declared the job twice: the same id"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), MIN(state), MIN(every_us), MIN(dedup_key), MIN(every_anchor = available_at)) FROM mq_jobs WHERE queue = 'maintenance'")" \
  "1,ready,3600000000,cleanup-tmp,1" "one recurring job, hourly, anchored at its first due time"
like "$(printf '%s\n' "$OUT" | awk '$1 == "maintenance" { print $2, $3, $8, $9 }')" "1 0 1 no" \
  "stats shows it ready and recurring"

# from other languages: the examples of the source tree
ln -s "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/examples" examples
run_example languages
is "$RC" 0 "languages example runs"
like "$OUT" "*resized img-7.png*" "mq work ran the job the Python producer pushed"
is "$(cat alert.job):$(sql "SELECT state FROM mq_jobs WHERE queue = 'alerts'")" \
  "disk full on db1:done" "the PHP consumer claimed mq push's job, wrote it and acked it"

run_example check
is "$RC" 0 "check example: OK"
like "$OUT" "MQ OK - * | '*'=*" "check example: a status line with perfdata"

# systemd: each service's ExecStart runs; each timer has a schedule
example systemd >"$T_TMP/units"
is "$(grep -c '^ExecStart=' "$T_TMP/units")" 2 "two services"
is "$(grep -c '^OnCalendar=' "$T_TMP/units")" 2 "two timers"
grep '^ExecStart=' "$T_TMP/units" | sed 's|^ExecStart=/usr/local/bin/mq|mq|' >"$T_TMP/exec"
while read -r cmd; do
  run sh -c "$cmd"
  is "$RC" 0 "systemd ExecStart runs: $cmd"
done <"$T_TMP/exec"
done_testing
