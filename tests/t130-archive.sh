#!/bin/sh
# mq archive: finished jobs older than D move to the archive in short
# transactions, or are purged; killed mid-run, nothing is lost or
# duplicated and a rerun finishes; consumers keep working meanwhile.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

finish() { # finish STATE N AGE_SECONDS: N finished jobs of that age
  sql "INSERT INTO mq_jobs (queue, state, payload, attempts, finished_at, dedup_key, last_error)
       SELECT 'q', '$1', CONCAT('payload ', seq), 1, NOW(6) - INTERVAL $3 SECOND,
              CONCAT('k', seq), IF('$1' = 'dead', 'boom', NULL) FROM seq_1_to_$2"
}
finish done 30 3600
finish done 5 10
finish dead 4 3600
seq 1 3 | "$MQ" push --lines --queue q >/dev/null
"$MQ" stats --recount >/dev/null   # the rows above were made by hand
sig_before=$(sql "SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, queue, state, priority, HEX(payload), attempts, max_attempts, available_at, created_at, finished_at, dedup_key, IFNULL(last_error, '')) ORDER BY id)) FROM mq_jobs WHERE state IN ('done', 'dead') AND finished_at < NOW(6) - INTERVAL 1 MINUTE")

expect_status 0 "archive --older-than 1m" "$MQ" archive --older-than 1m --batch 7
is "$OUT" "archived 30 jobs" "moves the 30 old done jobs"
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(state = 'dead'), SUM(state = 'ready')) FROM mq_jobs")" \
  "5,4,3" "recent done, dead and waiting jobs stay"
expect_status 0 "archive --dead" "$MQ" archive --older-than 1m --dead
is "$OUT" "archived 4 jobs" "moves the old dead jobs too"
is "$(sql "SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, queue, state, priority, HEX(payload), attempts, max_attempts, available_at, created_at, finished_at, dedup_key, IFNULL(last_error, '')) ORDER BY id)) FROM mq_jobs_archive")" \
  "$sig_before" "archived rows are the originals, column for column"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE archived_at IS NULL OR archived_at > NOW(6)")" 0 "archived_at set"
expect_status 0 "archive with nothing to do" "$MQ" archive
is "$OUT" "archived 0 jobs" "says 0"
expect_status 0 "archive --purge" "$MQ" archive --older-than 0s --purge
is "$OUT" "purged 5 jobs" "--purge deletes the done jobs"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive")" 34 "--purge leaves the archive alone"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state = 'ready'")" 3 "waiting jobs untouched"
is "$(counted_jobs)" "q archived 34," "the counts follow the archive and the purge"
is "$(finished_jobs)" "q archived 34," "(as the tables say)"

# killed mid-run: no job lost or duplicated; a rerun finishes (with SKIP
# LOCKED, and with the plain FOR UPDATE of older servers)
for lock in skip-locked for-update; do
  nsl=
  [ $lock = for-update ] && nsl=1
  sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_archive"
  finish done 20000 3600
  "$MQ" stats --recount >/dev/null
  MQ_NO_SKIP_LOCKED=$nsl "$MQ" archive --older-than 1m --batch 20 >/dev/null 2>&1 &
  pid=$!
  i=0
  while [ "$(sql "SELECT COUNT(*) FROM mq_jobs_archive")" -lt 2000 ] && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
  done
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  left=$(sql "SELECT COUNT(*) FROM mq_jobs")
  moved=$(sql "SELECT COUNT(*) FROM mq_jobs_archive")
  check "$lock: killed mid-run ($moved moved, $left left)" test "$moved" -gt 0 -a "$left" -gt 0
  is "$((left + moved))" 20000 "$lock: no job lost or doubled by the kill"
  is "$(sql "SELECT COUNT(*) FROM mq_jobs j JOIN mq_jobs_archive a USING (id)")" 0 "$lock: no job in both tables"
  # two reruns at once finish it
  MQ_NO_SKIP_LOCKED=$nsl "$MQ" archive --older-than 1m --batch 100 >"$T_TMP/a1" 2>&1 &
  p1=$!
  MQ_NO_SKIP_LOCKED=$nsl "$MQ" archive --older-than 1m --batch 100 >"$T_TMP/a2" 2>&1 &
  p2=$!
  wait $p1; s1=$?
  wait $p2; s2=$?
  is "$s1:$s2" "0:0" "$lock: two concurrent reruns succeed"
  n1=$(sed -n 's/^archived \([0-9]*\) jobs$/\1/p' "$T_TMP/a1")
  n2=$(sed -n 's/^archived \([0-9]*\) jobs$/\1/p' "$T_TMP/a2")
  is "$((n1 + n2))" "$left" "$lock: together they move the $left left ($n1 + $n2)"
  is "$(sql "SELECT CONCAT_WS(',', (SELECT COUNT(*) FROM mq_jobs), COUNT(*), COUNT(DISTINCT id), SUM(payload = CONCAT('payload ', id - (SELECT MIN(id) FROM mq_jobs_archive) + 1))) FROM mq_jobs_archive")" \
    "0,20000,20000,20000" "$lock: all 20,000 archived once, payloads intact"
  is "$(counted_jobs)" "q archived 20000," "$lock: counted once, across the kill and the reruns"
done

# consumers keep working while archive runs
sql "DELETE FROM mq_jobs_archive"
finish done 5000 3600
"$MQ" stats --recount >/dev/null
seq 1 300 | "$MQ" push --lines --queue work >/dev/null
"$MQ" archive --older-than 1m --batch 50 >"$T_TMP/arch" 2>&1 &
apid=$!
for c in 1 2; do
  (while r=$("$MQ" pop --queue work -o /dev/null); do "$MQ" ack "$r" || echo fail; done
   ) >"$T_TMP/cons.$c" 2>&1 &
done
wait
is "$(cat "$T_TMP/arch")" "archived 5000 jobs" "archive finished while consumers worked"
is "$(cat "$T_TMP/cons.1" "$T_TMP/cons.2")" "" "consumers saw no error"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'work' AND state = 'done'")" 300 "consumers did all 300 jobs"
is "$(counted_jobs)" "$(finished_jobs)" "the counts kept up with both"
is "$(counters work | cut -d' ' -f1-5)" "300 300 0 0 0" "the counters too"
"$MQ" archive --older-than 0s >/dev/null 2>&1
is "$(counters work | cut -d' ' -f1,2,7)" "300 300 300" "archived: pushed and done stay, archived counts them"
is "$(counters work | cut -d' ' -f1-5)" "$(tallied work)" "the counters agree with the tables"

sum=$(table_sum)
expect_status 64 "bad --older-than" "$MQ" archive --older-than yesterday
expect_status 64 "bad --batch" "$MQ" archive --batch 0
expect_status 64 "an operand" "$MQ" archive all
expect_status 64 "unknown flag" "$MQ" archive --all
is "$(table_sum)" "$sum" "refusals changed nothing"
# the job table's AUTO_INCREMENT went back (TRUNCATE): jobs whose ids the
# archive holds already are left where they are, the others archived, and
# archive goes on working (on 8ff402c every run failed on the same batch)
sql "TRUNCATE mq_jobs_archive; TRUNCATE mq_jobs"
for i in 1 2 3; do "$MQ" push --queue dup old$i >/dev/null; done
"$MQ" ack $("$MQ" pop --queue dup --count 3 --shell | sed -n 's/^MQ_RECEIPT_[0-9]*=//p')
"$MQ" archive --older-than 0s >/dev/null
sql "TRUNCATE mq_jobs"
for i in 1 2 3 4 5; do "$MQ" push --queue dup new$i >/dev/null; done
"$MQ" ack $("$MQ" pop --queue dup --count 5 --shell | sed -n 's/^MQ_RECEIPT_[0-9]*=//p')
expect_status 0 "archive with ids the archive holds already: exit 0" "$MQ" archive --older-than 0s
is "$(sql "SELECT GROUP_CONCAT(CAST(payload AS CHAR) ORDER BY id) FROM mq_jobs_archive")" \
  "old1,old2,old3,new4,new5" "the new ids archived, the archived jobs kept"
is "$(sql "SELECT GROUP_CONCAT(CAST(payload AS CHAR) ORDER BY id) FROM mq_jobs")" \
  "new1,new2,new3" "the colliding ones left in the job table, done"
expect_status 0 "and a second archive ends as well" "$MQ" archive --older-than 0s
expect_status 0 "archive --purge deletes them all the same" "$MQ" archive --purge --older-than 0s
is "$(sql "SELECT COUNT(*) FROM mq_jobs") $(sql "SELECT COUNT(*) FROM mq_jobs_archive")" "0 5" \
  "the job table's finished jobs gone, the archive kept"
done_testing
