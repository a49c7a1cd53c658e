#!/bin/sh
# mq requeue-stale: expired leases back to ready, or dead when attempts
# are used up; batches, limits, dry runs; two runs at once move each job
# once; the old consumer is fenced out.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

claim_all() { # claim_all QUEUE N
  "$MQ" pop --queue "$1" --count "$2" --json >/dev/null
}
expire() { # expire QUEUE
  sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE queue = '$1' AND state = 'leased'"
}

seq 1 5 | "$MQ" push --lines --queue a >/dev/null
seq 1 3 | "$MQ" push --lines --queue b --max-attempts 1 >/dev/null
claim_all a 5
claim_all b 3
expect_status 0 "nothing stale yet" "$MQ" requeue-stale
is "$OUT" "requeued 0
dead 0" "prints zero counts"
expire a
expire b
sum=$(table_sum)
expect_status 0 "--dry-run" "$MQ" requeue-stale --dry-run
is "$OUT" "requeued 5 (dry run)
dead 3 (dry run)" "--dry-run counts per outcome"
is "$(table_sum)" "$sum" "--dry-run changes nothing"
expect_status 0 "--queue b only" "$MQ" requeue-stale --queue b
is "$OUT" "requeued 0
dead 3" "b's jobs had used their only attempt: dead"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'dead'), SUM(finished_at IS NOT NULL), SUM(last_error = 'lease expired; attempts used up')) FROM mq_jobs WHERE queue = 'b'")" \
  "3,3,3,3" "dead with finish time and reason"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'a' AND state = 'leased'")" 5 "a untouched by --queue b"
expect_status 0 "MQ_QUEUE does not narrow it: --limit 2" env MQ_QUEUE=zzz "$MQ" requeue-stale --limit 2
is "$OUT" "requeued 2
dead 0" "--limit 2 moves 2"
expect_status 0 "--batch 1 --all-queues moves the rest" "$MQ" requeue-stale --batch 1 --all-queues
is "$OUT" "requeued 3
dead 0" "the other 3"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'ready'), SUM(attempts = 1), SUM(leased_until IS NULL), SUM(available_at <= NOW(6))) FROM mq_jobs WHERE queue = 'a'")" \
  "5,5,5,5,5" "requeued: ready, due now, attempts kept"
run "$MQ" pop --queue a --json
like "$OUT" '*"attempt":2,*' "the redelivery says attempt 2"

# a live lease is left alone
r=$("$MQ" pop --queue a -o /dev/null)
"$MQ" requeue-stale >/dev/null
expect_status 0 "a live lease still acks after requeue-stale" "$MQ" ack "$r"

# two runs at once, 1,000 stale jobs: counts add up, no job moved twice;
# with SKIP LOCKED, and with the plain FOR UPDATE of older servers
for lock in skip-locked for-update; do
  nsl=
  [ $lock = for-update ] && nsl=1
  sql "DELETE FROM mq_jobs"
  seq 1 1000 | "$MQ" push --lines --queue many >/dev/null
  claim_all many 1000
  expire many
  MQ_NO_SKIP_LOCKED=$nsl "$MQ" requeue-stale --batch 10 >"$T_TMP/one" 2>&1 &
  p1=$!
  MQ_NO_SKIP_LOCKED=$nsl "$MQ" requeue-stale --batch 10 >"$T_TMP/two" 2>&1 &
  p2=$!
  wait $p1; s1=$?
  wait $p2; s2=$?
  is "$s1:$s2" "0:0" "$lock: both runs succeed"
  n1=$(sed -n 's/^requeued //p' "$T_TMP/one")
  n2=$(sed -n 's/^requeued //p' "$T_TMP/two")
  is "$((n1 + n2))" 1000 "$lock: their counts add up to 1000 ($n1 + $n2)"
  is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'ready'), SUM(attempts = 1)) FROM mq_jobs")" \
    "1000,1000" "$lock: every job requeued once"
done

# (that the pick reads the lease index, so that its cost grows with the
# stale rows and not the table, is test-explain's)

# refusals
sum=$(table_sum)
expect_status 64 "--queue with --all-queues" "$MQ" requeue-stale --queue a --all-queues
expect_status 64 "bad --limit" "$MQ" requeue-stale --limit 0
expect_status 64 "bad --batch" "$MQ" requeue-stale --batch x
expect_status 64 "bad --queue" "$MQ" requeue-stale --queue 'a;b'
expect_status 64 "an operand" "$MQ" requeue-stale now
is "$(table_sum)" "$sum" "refusals changed nothing"
done_testing
