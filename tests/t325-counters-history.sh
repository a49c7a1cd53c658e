#!/bin/sh
# Schema 7: the counters per queue (pushed, done, failed, dead, requeued,
# retried, archived, purged) are kept by the writes that change them and
# never go down (archive, purge); the history has a row for every attempt
# that ended without an ack, and goes with a deleted job. stats --json and
# --prometheus show the counters.
. "$(dirname "$0")/lib.sh"

"$MQ" init >/dev/null
HOST=$(hostname)
for i in 1 2 3 4 5 6 7 8; do "$MQ" push "job $i" >/dev/null; done
is "$(counters)" "8 0 0 0 0 0 0 0" "8 pushed, nothing else yet"

# ack two, fail one to retry, fail one for good
for i in 1 2 3 4; do
  "$MQ" pop --receipt-file "$T_TMP/r$i" >/dev/null
done
set -- $(cat "$T_TMP/r1" "$T_TMP/r2" "$T_TMP/r3" "$T_TMP/r4")
"$MQ" ack "$1" "$2" >/dev/null
"$MQ" fail "$3" --error 'first error' >/dev/null
"$MQ" fail "$4" --error 'for good' --no-retry >/dev/null
is "$(counters)" "8 2 1 1 0 0 0 0" "acks, a retry and a burial counted"
ID3=${3%%.*} ID4=${4%%.*}
like "$(history_of "$ID3")" "failed ready 1 $HOST:* first error," "a failed attempt's history row: event, state, attempt, worker, error"
like "$(history_of "$ID4")" "failed dead 1 $HOST:* for good," "a burial's row says dead"
is "$(history_of 1)" "" "an acked job has no history"

# an expired lease: requeued, with an 'expired' row; then its last one
sql "UPDATE mq_jobs SET max_attempts = 2 WHERE id = 5"
"$MQ" pop --lease 1s --receipt-file "$T_TMP/r5" >/dev/null
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE state = 'leased'"
"$MQ" requeue-stale >/dev/null 2>&1
ID5=$(cut -d. -f1 "$T_TMP/r5")
like "$(history_of "$ID5")" "expired ready 1 $HOST:* -," "an expired lease leaves an 'expired' row"
sql "UPDATE mq_jobs SET available_at = '2000-01-01' WHERE id = $ID5"
"$MQ" pop --lease 1s --queue default --receipt-file "$T_TMP/r5" >/dev/null
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE state = 'leased'"
"$MQ" requeue-stale >/dev/null 2>&1
is "$(sql "SELECT state FROM mq_jobs WHERE id = $ID5")" dead "its last lease expired: buried"
like "$(history_of "$ID5")" "expired ready 1 *,expired dead 2 $HOST:* -," "and the history has both"
C=$(counters)
is "$(echo "$C" | cut -d' ' -f1,4,5)" "8 2 1" "requeued once, buried: 2 dead"

# archive: done and dead leave the table, the counters stay
sql "UPDATE mq_jobs SET finished_at = finished_at - INTERVAL 1 DAY WHERE state IN ('done', 'dead')"
"$MQ" archive --older-than 1h --dead >/dev/null 2>&1
is "$(counters)" "8 2 1 2 1 0 4 0" "archive lowers no counter and counts what it moved"
is "$(counted_jobs)" "$(finished_jobs)" "the counts still equal the tables"
like "$(history_of "$ID4")" "failed dead 1 *" "an archived job keeps its history"

# purge deletes the waiting jobs: counted as purged; pushed stays
"$MQ" purge --queue default --yes >/dev/null 2>&1
is "$(counters)" "8 2 1 2 1 0 4 4" "purge counts what it deleted, pushed stays 8"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history WHERE job_id = $ID3")" 0 "a purged job's history is deleted"

# archive --purge deletes finished jobs and their history
"$MQ" push --queue p x >/dev/null
"$MQ" pop --queue p --receipt-file "$T_TMP/rp" >/dev/null
"$MQ" fail "$(cat "$T_TMP/rp")" --no-retry --error e >/dev/null
IDP=$(cut -d. -f1 "$T_TMP/rp")
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history WHERE job_id = $IDP")" 1 "a dead job's row"
sql "UPDATE mq_jobs SET finished_at = finished_at - INTERVAL 1 DAY WHERE id = $IDP"
"$MQ" archive --older-than 1h --dead --purge >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history WHERE job_id = $IDP")" 0 "archive --purge deletes its history"
is "$(counters p)" "1 0 0 1 0 0 0 0" "and lowers no counter"

# recurring runs are not done; a job pushed by plain SQL is pushed
"$MQ" push --queue r --every 1h rec >/dev/null
"$MQ" pop --queue r --receipt-file "$T_TMP/rr" >/dev/null
"$MQ" ack "$(cat "$T_TMP/rr")" >/dev/null
is "$(counters r)" "1 0 0 0 0 0 0 0" "a recurring run is not counted done"
sql "INSERT INTO mq_jobs (queue, payload) VALUES ('r', 'foreign')"
is "$(counters r | cut -d' ' -f1)" 2 "a foreign INSERT counts as pushed"

# monotonic under a running consumer: pushed and done never go down
for i in $(seq 1 300); do echo "m$i"; done | "$MQ" push --queue m --lines >/dev/null
"$MQ" work --queue m --exit-when-empty --concurrency 4 -- true >/dev/null 2>&1 &
W=$!
prev="0 0" bad=0 k=0
while kill -0 $W 2>/dev/null && [ $k -lt 200 ]; do
  cur=$(counters m | cut -d' ' -f1,2)
  set -- $prev $cur
  if [ "$3" -lt "$1" ] || [ "$4" -lt "$2" ]; then bad=$((bad + 1)); fi
  prev=$cur k=$((k + 1))
done
wait $W
is "$bad" 0 "pushed and done never went down while mq work drained ($k reads)"
is "$(counters m)" "300 300 0 0 0 0 0 0" "300 pushed, 300 done"

# the outputs
expect_status 0 "stats --prometheus" "$MQ" stats --prometheus
is "$(printf '%s\n' "$OUT" | grep -c '^# TYPE mq_jobs_[a-z]*_total counter$')" 8 "8 counters, each TYPE counter"
like "$OUT" "*mq_jobs_pushed_total{table=\"mq_jobs\",queue=\"m\"} 300*" "pushed_total for queue m"
like "$OUT" "*mq_jobs_purged_total{table=\"mq_jobs\",queue=\"default\"} 4*" "purged_total"
printf '%s\n' "$OUT" >"$T_TMP/metrics.prom"
promtool_check "$T_TMP/metrics.prom" "promtool accepts it"
# a queue whose jobs all left keeps its counters in the output
like "$(counters default)" "8 *" "a queue with no job left still shows its counters"

done_testing
