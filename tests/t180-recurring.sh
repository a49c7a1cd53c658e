#!/bin/sh
# Recurring jobs (push --every) and mq cancel. Time is the server's: the
# tests move a job's times back instead of waiting for the clock.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

H=3600000000	# an hour in microseconds
# slot ID [SINCE]: "K:future": K periods from SINCE (a time; default: the
# anchor) to the job's due time; future: 1 if that is after now and at
# most a period ahead
slot() {
  since=every_anchor
  [ -z "${2:-}" ] || since="'$2'"
  sql "SELECT CONCAT(TIMESTAMPDIFF(MICROSECOND, $since, available_at) / every_us, ':',
    available_at > UTC_TIMESTAMP(6) AND available_at <= UTC_TIMESTAMP(6) + INTERVAL every_us MICROSECOND)
    FROM mq_jobs WHERE id = $1"
}
# on_grid ID: 1 if the due time is a whole number of periods from the anchor
on_grid() {
  sql "SELECT TIMESTAMPDIFF(MICROSECOND, every_anchor, available_at) MOD every_us = 0 FROM mq_jobs WHERE id = $1"
}
# late ID SECONDS: as if time had passed until the job's due time was
# SECONDS ago: its due time and anchor move back together
late() {
  sql "UPDATE mq_jobs SET every_anchor = every_anchor - INTERVAL
    (TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), available_at) + $2 * 1000000) MICROSECOND,
    available_at = UTC_TIMESTAMP(6) - INTERVAL $2 SECOND WHERE id = $1"
}
field() { sql "SELECT $2 FROM mq_jobs WHERE id = $1"; }

# ---- push --every
expect_status 0 "push --every" "$MQ" push --queue cron --every 1h cleanup
id=$OUT
is "$(field "$id" "CONCAT_WS(',', state, every_us, every_anchor = available_at, available_at <= UTC_TIMESTAMP(6))")" \
  "ready,$H,1,1" "due now, period stored, anchored at its first due time"
expect_status 0 "push --every --delay" "$MQ" push --queue cron --every 1d --delay 10m later
is "$(field "$OUT" "CONCAT_WS(',', every_us, every_anchor = available_at, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), available_at) BETWEEN 590 AND 600)")" \
  "86400000000,1,1" "--delay sets the first due time and the anchor"
expect_status 0 "push --every --at" "$MQ" push --queue cron --every 90m --at '2031-01-01 04:00' at
is "$(field "$OUT" "CONCAT_WS(',', every_us, every_anchor, available_at)")" \
  "5400000000,2031-01-01 04:00:00.000000,2031-01-01 04:00:00.000000" "--at too"
sql "DELETE FROM mq_jobs WHERE id <> $id"

# ---- ack: due again a period after its due time, not after the ack
late "$id" 1800	# due half an hour ago: a late run
r=$("$MQ" pop --queue cron -o /dev/null)
expect_status 0 "ack of a recurring job" "$MQ" ack "$r"
is "$(field "$id" "CONCAT_WS(',', state, attempts, finished_at IS NULL)")" "ready,0,1" \
  "not done: ready again, attempts fresh"
is "$(slot "$id")" "1.0000:1" "due exactly one period after its due time (no drift from the late ack)"
expect_status 1 "not due before then" "$MQ" pop --queue cron
expect_status 2 "the old receipt is spent" "$MQ" ack "$r"
# a day of hourly runs, each acked a different time after its slot
i=0 drift=0
while [ $i -lt 24 ]; do
  late "$id" $((i * 97 % 3000))	# its slot passed up to 50 minutes ago
  due=$(field "$id" available_at)
  r=$("$MQ" pop --queue cron -o /dev/null) && "$MQ" ack "$r" || break
  [ "$(slot "$id" "$due")" = "1.0000:1" ] || drift=$((drift + 1))
  i=$((i + 1))
done
is "$i" 24 "24 runs claimed and acked"
is "$drift" 0 "each time due again exactly one period after its due time"
is "$(on_grid "$id")" 1 "on the grid of its anchor: no drift"

# ---- fell behind by more than a period: the next future slot, once
late "$id" $((3 * 3600 + 1800))	# its slot is 3.5 periods past
due=$(field "$id" available_at)
r=$("$MQ" pop --queue cron -o /dev/null)
"$MQ" ack "$r"
is "$(slot "$id" "$due")" "4.0000:1" "next due: the first slot after now (4 periods on), not the missed ones"
expect_status 1 "no burst of catch-up runs" "$MQ" pop --queue cron

# ---- fail retries with backoff, as for any job; the grid stays
late "$id" 60
due=$(field "$id" available_at)
r=$("$MQ" pop --queue cron -o /dev/null)
expect_status 0 "fail of a recurring job" "$MQ" fail --error boom "$r"
is "$(field "$id" "CONCAT_WS(',', state, attempts, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), available_at) BETWEEN 6 AND 13, last_error)")" \
  "ready,1,1,boom" "retried after the backoff (10 s +-25%), error kept"
sql "UPDATE mq_jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $id"
r=$("$MQ" pop --queue cron -o /dev/null)
like "$r" "$id.*" "the retry is delivered"
is "$(field "$id" attempts)" 2 "as attempt 2"
"$MQ" ack "$r"
is "$(field "$id" "CONCAT_WS(',', state, attempts, last_error)")" "ready,0,boom" \
  "acked: next run with fresh attempts (the last error stays for the record)"
is "$(slot "$id" "$due")" "1.0000:1" "due a period after the slot it failed in, not after the retry"

# ---- an expired lease is requeued like any other
late "$id" 60
due=$(field "$id" available_at)
r=$("$MQ" pop --queue cron -o /dev/null)
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = $id"
"$MQ" requeue-stale >/dev/null
is "$(field "$id" "CONCAT_WS(',', state, attempts)")" "ready,1" "requeue-stale puts it back"
expect_status 2 "and the stale consumer cannot ack it" "$MQ" ack "$r"
r=$("$MQ" pop --queue cron -o /dev/null)
"$MQ" ack "$r"
is "$(slot "$id" "$due")" "1.0000:1" "the redelivery's ack keeps the grid"

# ---- mq work runs it and leaves it scheduled
late "$id" 60
due=$(field "$id" available_at)
run "$MQ" work --queue cron --exit-when-empty -- sh -c 'cat; echo " ran"'
is "$RC:$OUT" "0:cleanup ran" "mq work ran it once and stopped: nothing else is due"
is "$(field "$id" state):$(slot "$id" "$due")" "ready:1.0000:1" "and it waits for its next slot"

# ---- dead when its attempts are used up: it recurs no more
expect_status 0 "push --every --max-attempts 1" "$MQ" push --queue once --every 1m --max-attempts 1 flaky
one=$OUT
r=$("$MQ" pop --queue once -o /dev/null)
run "$MQ" fail "$r"
is "$(field "$one" state)" dead "its one attempt failed: dead"
r=$("$MQ" push --queue once --every 1m --no-such-option 2>/dev/null)
is "$?" 64 "(an unknown option is a usage error)"

# ---- --dedup makes the declaration idempotent
"$MQ" push --queue deploy --every 1h --dedup nightly-vacuum 'vacuum' >"$T_TMP/a"
"$MQ" push --queue deploy --every 1h --dedup nightly-vacuum 'vacuum' >"$T_TMP/b"
is "$(cat "$T_TMP/b")" "$(cat "$T_TMP/a")" "declared twice: the same job"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'deploy'")" 1 "one row"
v=$(cat "$T_TMP/a")
r=$("$MQ" pop --queue deploy -o /dev/null)
"$MQ" push --queue deploy --every 1h --dedup nightly-vacuum 'vacuum' >"$T_TMP/c"
is "$(cat "$T_TMP/c")" "$v" "also while it runs"
"$MQ" ack "$r"
"$MQ" push --queue deploy --every 1h --dedup nightly-vacuum 'vacuum' >"$T_TMP/d"
is "$(cat "$T_TMP/d")" "$v" "and after a run (it stays live)"

# ---- stats counts them; its query reads the recurring index's range
run "$MQ" stats --queue deploy --json
like "$OUT" '*"queue":"deploy",*"recurring":1,*' "stats counts the recurring job"
like "$(sql "EXPLAIN SELECT queue, COUNT(*) FROM mq_jobs FORCE INDEX (recurring) WHERE every_us IS NOT NULL AND state IN ('ready', 'leased') GROUP BY queue" | cut -f4,6)" \
  "range	recurring" "a range of the recurring index"

# ---- cancel
expect_status 0 "cancel a recurring job" "$MQ" cancel "$v"
is "$OUT:$ERR" "job $v cancelled:" "says so on standard output, nothing on standard error"
is "$(field "$v" "CONCAT_WS(',', state, last_error, finished_at IS NOT NULL, dedup_live IS NULL)")" \
  "dead,cancelled,1,1" "dead, with a note; its key is free"
run "$MQ" push --queue deploy --every 1h --dedup nightly-vacuum 'vacuum'
is "$RC" 0 "declared again"
[ "$OUT" != "$v" ] && ok "as a new job" || not_ok "as a new job" "same id $OUT"
run "$MQ" stats --queue deploy --json
like "$OUT" '*"dead":1,"recurring":1,*' "stats: one cancelled, one recurring"

j=$("$MQ" push --queue c --delay 1h scheduled)
expect_status 0 "cancel a scheduled job" "$MQ" cancel "$j"
is "$(field "$j" "CONCAT_WS(',', state, last_error)")" "dead,cancelled" "dead, noted"
expect_status 1 "cancel it again" "$MQ" cancel "$j"
is "$ERR" "mq cancel: job $j is dead already: nothing to cancel" "says so"

j=$("$MQ" push --queue c --max-attempts 5 failing)
r=$("$MQ" pop --queue c -o /dev/null)
"$MQ" fail --error 'disk full' "$r" >/dev/null
expect_status 0 "cancel a job waiting for its retry" "$MQ" cancel "$j"
is "$OUT:$ERR" "job $j cancelled:" "cancel confirms on standard output, as pause and purge do"
is "$(field "$j" last_error)" "cancelled; last error: disk full" "the earlier error is kept in the note"

j=$("$MQ" push --queue c leased)
r=$("$MQ" pop --queue c -o /dev/null)
sum=$(table_sum)
expect_status 2 "a leased job is not cancelled" "$MQ" cancel "$j"
is "$ERR" "mq cancel: job $j is leased (being run): not cancelled; --force cancels it anyway" "says why"
is "$(table_sum)" "$sum" "nothing changed"
expect_status 0 "--force cancels it" "$MQ" cancel --force "$j"
is "$OUT:$ERR" "job $j cancelled (it was leased: its consumer's lease is lost):" "  and says its consumer lost the lease"
is "$(field "$j" "CONCAT_WS(',', state, last_error, leased_until IS NULL)")" "dead,cancelled,1" "dead"
expect_status 2 "its consumer's ack then fails" "$MQ" ack "$r"
expect_status 2 "and its heartbeat" "$MQ" extend --lease 1m "$r"

dn=$("$MQ" push --queue c done)
"$MQ" ack "$("$MQ" pop --queue c -o /dev/null)"
expect_status 1 "a done job" "$MQ" cancel "$dn"
is "$ERR" "mq cancel: job $dn is done already: nothing to cancel" "says so"
expect_status 1 "no such job" "$MQ" cancel 999999
is "$ERR" "mq cancel: no job 999999 in table mq_jobs (archived, purged or never pushed)" "says so"

# several: each handled, the worst status wins
ja=$("$MQ" push --queue m a)
jb=$("$MQ" push --queue m b)
jc=$("$MQ" push --queue m c)
rb=$("$MQ" pop --queue m -o /dev/null)	# a is leased now
run "$MQ" cancel "$jb" 999998 "$ja" "$jc"
is "$RC" 2 "a leased one among them: status 2"
is "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" 2 "a line for each one not cancelled"
is "$OUT" "job $jb cancelled
job $jc cancelled" "a line on standard output for each one cancelled, in the order given"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE id IN ($ja, $jb, $jc)")" \
  "leased,dead,dead" "the others cancelled"
"$MQ" ack "$rb"
jd=$("$MQ" push --queue m twice)
expect_status 0 "an id given twice is cancelled once" "$MQ" cancel "$jd" "$jd"
is "$OUT" "job $jd cancelled" "  and said once"

# bad input: nothing touched
sum=$(table_sum)
for bad in 0 -1 1x x ' 1' '' 1.5 18446744073709551616 +3; do
  expect_status 64 "cancel refuses the id '$bad'" "$MQ" cancel "$bad"
done
like "$ERR" "mq cancel: invalid job id '*': a positive number, as push prints it" "message says what an id is"
expect_status 64 "cancel needs an id" "$MQ" cancel
expect_status 64 "ids are checked before any is cancelled" "$MQ" cancel "$jc" x
for bad in 0 0s 999ms -1h 1x ''; do
  expect_status 64 "push refuses --every '$bad'" "$MQ" push --every "$bad" x
done
expect_status 64 "--every with --lines" sh -c 'echo x | "$0" push --lines --every 1h' "$MQ"
is "$ERR" "mq push: --every takes a single job, not --lines or -0" "says so"
expect_status 64 "--every with -0" sh -c 'printf x | "$0" push -0 --every 1h' "$MQ"
is "$(table_sum)" "$sum" "refusals changed nothing"

# cancelled jobs are dead: archive --dead moves them
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE last_error LIKE 'cancelled%'"):$(sql "SELECT COUNT(*) FROM mq_jobs WHERE last_error LIKE 'cancelled%'")" \
  "7:0" "archive --dead took the cancelled jobs"
# acked 2 s before a daily slot: that slot is next, not the one after
# (the quotient 0.99998 shows as 1.0000 at 4 digits; the next slot is
# by integer division)
id=$("$MQ" push --queue daily --every 1d d1)
sql "UPDATE mq_jobs SET every_anchor = UTC_TIMESTAMP(6) - INTERVAL 86398 SECOND WHERE id = $id"
r=$("$MQ" pop --queue daily --shell | sed -n 's/^MQ_RECEIPT=//p')
"$MQ" ack "$r"
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), available_at) BETWEEN 0 AND 3 FROM mq_jobs WHERE id = $id")" 1 \
  "acked just before a slot: due at that slot, no run skipped"
done_testing
