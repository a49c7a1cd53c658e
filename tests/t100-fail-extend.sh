#!/bin/sh
# mq fail and mq extend: fenced by the lease token; backoff, dead-letter
# at max attempts, error text kept whatever its size or bytes; a job that
# keeps failing or cannot be claimed never blocks the head of its queue.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

job() { # job [PUSH OPTIONS]: pushes a job, claims it, prints its receipt
  "$MQ" push --queue "${Q:-f}" "$@" payload >/dev/null &&
    "$MQ" pop --queue "${Q:-f}" -o /dev/null
}
row() { # row ID COLUMNS
  sql "SELECT CONCAT_WS(',', $2) FROM mq_jobs WHERE id = $1"
}

# backoff: 10 s doubling per attempt, jitter 0.75..1.25
r=$(job)
id=${r%%.*}
expect_status 0 "fail gives the job back" "$MQ" fail --error "it broke" "$r"
like "$OUT" "job $id: due again in *s (after attempt 1)" "fail says when"
is "$(row "$id" "state, attempts, last_error, finished_at IS NULL, leased_until IS NULL, TIMESTAMPDIFF(MICROSECOND, NOW(6), available_at) BETWEEN 7000000 AND 12500000")" \
  "ready,1,it broke,1,1,1" "first retry due in 7.5-12.5 s, error kept"
sql "UPDATE mq_jobs SET available_at = NOW(6) WHERE id = $id"
r=$("$MQ" pop --queue f -o /dev/null)
"$MQ" fail "$r" >/dev/null
is "$(row "$id" "attempts, last_error, TIMESTAMPDIFF(MICROSECOND, NOW(6), available_at) BETWEEN 14500000 AND 25000000")" \
  "2,it broke,1" "second retry due in 15-25 s; without --error the earlier text stays"

r=$(job)
id=${r%%.*}
"$MQ" fail --retry-in 90s "$r" >/dev/null
is "$(row "$id" "state, TIMESTAMPDIFF(SECOND, NOW(6), available_at) BETWEEN 88 AND 90")" \
  "ready,1" "--retry-in 90s"
r=$(job)
id=${r%%.*}
"$MQ" fail --retry-in 0s "$r" >/dev/null
expect_status 0 "--retry-in 0s makes it due at once" "$MQ" pop --queue f -o /dev/null

r=$(job)
id=${r%%.*}
expect_status 0 "fail --no-retry" "$MQ" fail --no-retry --error fatal "$r"
like "$OUT" "job $id: dead after 1 attempt" "says dead"
is "$(row "$id" "state, last_error, finished_at IS NOT NULL")" "dead,fatal,1" "the job is dead"

# max attempts: dead on the last failure
r=$(job --max-attempts 2)
id=${r%%.*}
"$MQ" fail --retry-in 0s "$r" >/dev/null
r=$("$MQ" pop --queue f -o /dev/null)
expect_status 0 "the last allowed failure" "$MQ" fail --retry-in 0s "$r"
like "$OUT" "job $id: dead after 2 attempts" "buries the job"
is "$(row "$id" "state, attempts")" "dead,2" "dead at max_attempts, even with --retry-in"
expect_status 1 "a dead job is not claimed" "$MQ" pop --queue f

# error text: long, not UTF-8, NUL-free argv bytes
r=$(job)
id=${r%%.*}
long=$(head -c 60000 /dev/zero | tr '\0' 'e')
expect_status 0 "a 60,000-byte error is stored, not refused" "$MQ" fail --error "$long" "$r"
is "$(row "$id" "LENGTH(last_error)")" 4096 "error text truncated to 4096 bytes"
r=$(job)
id=${r%%.*}
expect_status 0 "an error that is not UTF-8" "$MQ" fail --error "$(printf 'bad \377\376 text')" "$r"
is "$(row "$id" "HEX(last_error)")" "$(printf 'bad \377\376 text' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
  "stored byte for byte"

# extend
r=$(job)
id=${r%%.*}
expect_status 0 "extend" "$MQ" extend --lease 2h "$r"
is "$OUT" "" "extend prints nothing"
is "$(row "$id" "TIMESTAMPDIFF(SECOND, NOW(6), leased_until) BETWEEN 7190 AND 7200")" 1 "lease ends in 2 h"
expect_status 0 "extend can shorten" "$MQ" extend --lease 10s "$r"
is "$(row "$id" "TIMESTAMPDIFF(SECOND, NOW(6), leased_until) BETWEEN 8 AND 10")" 1 "lease ends in 10 s"
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = $id"
expect_status 0 "an expired lease nobody took back can be extended" "$MQ" extend --lease 1m "$r"

# lost leases: acked, failed, requeued, claimed again
sum=$(table_sum)
for how in acked failed; do
  r=$(job)
  id=${r%%.*}
  if [ $how = acked ]; then "$MQ" ack "$r"; else "$MQ" fail "$r" >/dev/null; fi
  sum=$(table_sum)
  expect_status 2 "fail after the job was $how" "$MQ" fail "$r"
  like "$ERR" "mq fail: job $id: lease lost*" "names the job"
  expect_status 2 "extend after the job was $how" "$MQ" extend --lease 1m "$r"
  like "$ERR" "mq extend: job $id: lease lost*" "names the job"
  is "$(table_sum)" "$sum" "refused calls after $how changed nothing"
done
r=$(job)
id=${r%%.*}
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = $id"
"$MQ" requeue-stale >/dev/null
expect_status 2 "fail after requeue-stale" "$MQ" fail "$r"
expect_status 2 "extend after requeue-stale" "$MQ" extend --lease 1m "$r"
expect_status 2 "ack after requeue-stale" "$MQ" ack "$r"
r2=$("$MQ" pop --queue f -o /dev/null)
expect_status 2 "the first consumer's fail after a new claim" "$MQ" fail "$r"
expect_status 0 "the new consumer's extend" "$MQ" extend --lease 1m "$r2"
expect_status 0 "the new consumer's ack" "$MQ" ack "$r2"

# a job that keeps failing, or cannot be claimed, does not block the head
Q=head
sql "DELETE FROM mq_jobs WHERE queue = 'head'"
poison=$("$MQ" push --queue head --priority -10 --max-attempts 3 poison)
"$MQ" push --queue head one >/dev/null
"$MQ" push --queue head two >/dev/null
got=
while r=$("$MQ" pop --queue head -o "$T_TMP/p"); do
  if [ "$(cat "$T_TMP/p")" = poison ]; then
    "$MQ" fail --retry-in 0s --error crash "$r" >/dev/null
  else
    got="$got$(cat "$T_TMP/p") "
    "$MQ" ack "$r"
  fi
done
is "$got" "one two " "the others were done while the poison job failed"
is "$(row "$poison" "state, attempts")" "dead,3" "the poison job is dead after 3 attempts"

for claim in skip-locked update; do
  sql "DELETE FROM mq_jobs WHERE queue = 'locked'"
  a=$("$MQ" push --queue locked --priority -1 held)
  "$MQ" push --queue locked free >/dev/null
  # another session holds the head row locked (an operator's open
  # transaction, say)
  mariadb --no-defaults --socket="$MQ_TEST_SOCKET" --user=root "$T_DB" -e \
    "BEGIN; SELECT id FROM mq_jobs WHERE id = $a FOR UPDATE; SELECT SLEEP(3); ROLLBACK" >/dev/null &
  holder=$!
  sleep 0.5
  run "$MQ" pop --claim "$claim" --queue locked
  if [ $claim = skip-locked ]; then
    is "$RC:$OUT" "0:free" "skip-locked: a locked head row is skipped, the next job claimed"
  else
    # UPDATE ... LIMIT waits for the lock; it must still get a job
    is "$RC" 0 "update: a locked head row delays the claim but does not fail it"
  fi
  wait $holder
done

# refusals
r=1.0123456789abcdef0123456789abcdef
sum=$(table_sum)
expect_status 65 "fail: malformed receipt" "$MQ" fail nope
expect_status 65 "extend: malformed receipt" "$MQ" extend --lease 1m "1.XYZ"
expect_status 64 "fail: bad --retry-in" "$MQ" fail --retry-in 10x "$r"
expect_status 64 "fail: --retry-in with --no-retry" "$MQ" fail --retry-in 1s --no-retry "$r"
expect_status 64 "fail: no receipt" "$MQ" fail
expect_status 64 "fail: two receipts" "$MQ" fail "$r" "$r"
expect_status 64 "extend: no --lease" "$MQ" extend "$r"
expect_status 64 "extend: bad --lease" "$MQ" extend --lease -1s "$r"
expect_status 64 "extend: --lease under 1 s" "$MQ" extend --lease 500ms "$r"
expect_status 64 "fail: unknown flag" "$MQ" fail --retry "$r"
is "$(table_sum)" "$sum" "refusals changed nothing"
done_testing
