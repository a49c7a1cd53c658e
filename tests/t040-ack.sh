#!/bin/sh
# mq ack: done by id and token; a lost lease is refused, naming the job,
# with its own status; valid receipts are never refused.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

for claim in skip-locked update; do
  id=$("$MQ" push "job for $claim")
  r=$("$MQ" pop --claim "$claim" -o /dev/null)
  expect_status 0 "$claim: ack" "$MQ" ack "$r"
  is "$(sql "SELECT CONCAT_WS(',', state, finished_at IS NOT NULL, leased_until IS NULL) FROM mq_jobs WHERE id = $id")" \
    "done,1,1" "$claim: job is done with its finish time"
  expect_status 2 "$claim: second ack of the same receipt is refused" "$MQ" ack "$r"
  like "$ERR" "mq ack: job $id: lease lost*" "$claim: message names the job"
done

# a lease lost to another consumer: expired, claimed again
id=$("$MQ" push slow)
r1=$("$MQ" pop -o /dev/null)
sql "UPDATE mq_jobs SET state = 'ready' WHERE id = $id"   # as requeue-stale does
r2=$("$MQ" pop -o /dev/null)
sum=$(table_sum)
expect_status 2 "the first consumer's late ack is refused" "$MQ" ack "$r1"
is "$(table_sum)" "$sum" "and changes nothing"
expect_status 0 "the second consumer's ack succeeds" "$MQ" ack "$r2"

# several receipts, one transaction; the lost one is reported, the rest acked
a=$("$MQ" push a) b=$("$MQ" push b) c=$("$MQ" push c)
ra=$("$MQ" pop -o /dev/null) rb=$("$MQ" pop -o /dev/null) rc=$("$MQ" pop -o /dev/null)
"$MQ" ack "$rb"
expect_status 2 "ack of three with one lost exits 2" "$MQ" ack "$ra" "$rb" "$rc"
like "$ERR" "mq ack: job $b: lease lost*" "only the lost one is named"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE id IN ($a, $b, $c)")" \
  "done,done,done" "the valid ones are acked"

# a long list (over the 64 acked per statement), with a recurring job,
# a receipt acked before, a forged token (first: its job is leased, under
# another token) and a receipt given twice
seq 1 100 | "$MQ" push --lines --queue many >/dev/null
rec=$("$MQ" push --queue many --every 1h recurring)
"$MQ" pop --queue many --count 101 --shell | sed -n 's/^MQ_RECEIPT_[0-9]*=//p' >"$T_TMP/many"
is "$(wc -l <"$T_TMP/many" | tr -d ' ')" 101 "101 receipts claimed"
first=$(sed -n 1p "$T_TMP/many") last=$(sed -n 101p "$T_TMP/many")
"$MQ" ack "$first"
forged=$(sed -n 50p "$T_TMP/many" | cut -d. -f1).0123456789abcdef0123456789abcdef
run "$MQ" ack "$forged" $(cat "$T_TMP/many") "$last"
is "$RC" 2 "ack of 103 receipts, 2 of them lost, exits 2"
is "$(printf '%s\n' "$ERR" | grep -c 'lease lost')" 2 "two named as lost (the repeated one is acked once)"
like "$ERR" "*job ${forged%%.*}: lease lost*job ${first%%.*}: lease lost*" \
  "the forged one, the one acked before"
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(finished_at IS NOT NULL), SUM(leased_until IS NULL)) FROM mq_jobs WHERE queue = 'many' AND id <> $rec")" \
  "100,100,100" "the 100 are done"
is "$(sql "SELECT CONCAT_WS(',', state, attempts, finished_at IS NULL, available_at > UTC_TIMESTAMP(6)) FROM mq_jobs WHERE id = $rec")" \
  "ready,0,1,1" "the recurring one is due again later"

# several receipts where one job was claimed again by another consumer:
# that consumer's lease is left alone, and its own ack still works
seq 1 3 | "$MQ" push --lines --queue again >/dev/null
"$MQ" pop --queue again --count 3 --shell | sed -n 's/^MQ_RECEIPT_[0-9]*=//p' >"$T_TMP/again"
x=$(sed -n 2p "$T_TMP/again")
sql "UPDATE mq_jobs SET state = 'ready' WHERE id = ${x%%.*}"   # as requeue-stale does
x2=$("$MQ" pop --queue again -o /dev/null)
run "$MQ" ack $(cat "$T_TMP/again")
is "$RC:$ERR" "2:mq ack: job ${x%%.*}: lease lost or unknown receipt (acked, failed, requeued, cancelled, purged or claimed again)" \
  "the old receipt of the job claimed again is lost"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'again'")" \
  "done,leased,done" "the other two are done, the new holder's job still leased"
expect_status 0 "the new holder acks it" "$MQ" ack "$x2"
run "$MQ" ack $(cat "$T_TMP/again")
is "$RC:$(printf '%s\n' "$ERR" | grep -c 'lease lost')" "2:3" "all lost: status 2, each named"

# forged and malformed receipts
id=$("$MQ" push forged)
r=$("$MQ" pop -o /dev/null)
sum=$(table_sum)
expect_status 2 "a receipt with a forged token is refused" \
  "$MQ" ack "$id.0123456789abcdef0123456789abcdef"
expect_status 2 "another job's token is refused" "$MQ" ack "$a.${r#*.}"
expect_status 2 "a receipt for no job is refused" "$MQ" ack "999999.${r#*.}"
expect_status 65 "a malformed receipt: status 65" "$MQ" ack "$r" "not-a-receipt"
like "$ERR" "mq ack: malformed receipt 'not-a-receipt'*" "message quotes it"
is "$(sql "SELECT state FROM mq_jobs WHERE id = $id")" leased "nothing acked when one is malformed"
expect_status 65 "receipt with SQL in it" "$MQ" ack "1' OR '1'='1"
is "$(table_sum)" "$sum" "refused receipts changed nothing"
expect_status 64 "ack without receipts" "$MQ" ack
expect_status 0 "the real receipt still acks" "$MQ" ack "$r"
# a receipt given twice: acked once, status 0 (before: status 2, "lease
# lost" for a job that was acked)
"$MQ" push --queue twice x >/dev/null
r=$("$MQ" pop --queue twice -o /dev/null)
expect_status 0 "a receipt given twice is acked once: status 0" "$MQ" ack "$r" "$r"
is "$ERR" "" "nothing said"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'twice'")" done "the job is done"
done_testing
