#!/bin/sh
# Rows written by other programs (issue 15, class 6): a plain INSERT with
# the defaults is due at once from a session in any time zone; rows no mq
# would write are refused by schema 6's CHECK constraints (error 4025),
# and where a server has no CHECKs (simulated with check_constraint_checks
# = 0) mq claims, reaps, finishes or buries them as mq-queue(7) says:
# never a crash, a stall, a division by zero or an endless loop.
. "$(dirname "$0")/lib.sh"

"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }
TOK=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa

# ---- defaults: UTC in every session ----
for tz in '+05:30' '-08:00' SYSTEM; do
  sql "SET time_zone = '$tz'; INSERT INTO mq_jobs (queue, payload) VALUES ('tz', 'from $tz')"
  is "$(sql "SELECT ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP(6))) < 60 AND ABS(TIMESTAMPDIFF(SECOND, created_at, UTC_TIMESTAMP(6))) < 60 FROM mq_jobs WHERE payload = 'from $tz'")" \
    1 "time_zone $tz: the defaults are UTC"
  run "$MQ" stats --json --queue tz
  like "$OUT" '*"queue":"tz","ready":1,*"oldest_ready_seconds":[0-9].*' \
    "time_zone $tz: stats shows the job ready, age under 10 s"
  run "$MQ" pop --queue tz
  is "$RC:$OUT" "0:from $tz" "time_zone $tz: the job is claimed at once"
done
sql "SET time_zone = '+05:30'; INSERT INTO mq_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at) VALUES (999, 'tz', 'done', 0, '', 1, 1, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
is "$(sql "SELECT ABS(TIMESTAMPDIFF(SECOND, archived_at, UTC_TIMESTAMP(6))) < 60 FROM mq_jobs_archive WHERE id = 999")" \
  1 "time_zone +05:30: the archive's archived_at default is UTC"
sql "DELETE FROM mq_jobs_archive; DELETE FROM mq_jobs"

# ---- CHECK constraints refuse rows no mq would write ----
refused() { # refused DESCRIPTION SQL: the server refuses it with 4025
  sql "SET SESSION sql_mode = ''; $2" 2>"$T_TMP/sql.err"
  like "$(cat "$T_TMP/sql.err")" "*ERROR 4025 *CONSTRAINT*failed*" "refused: $1"
}
ins="INSERT INTO mq_jobs (queue, payload"
refused "a queue name mq does not accept" "$ins) VALUES ('a b', 'x')"
refused "an empty queue name" "$ins) VALUES ('', 'x')"
refused "a state not in the ENUM ('')" "$ins, state) VALUES ('r', 'x', 'bogus')"
refused "max_attempts 0" "$ins, max_attempts) VALUES ('r', 'x', 0)"
refused "attempts beyond max_attempts" "$ins, state, attempts, max_attempts, finished_at) VALUES ('r', 'x', 'done', 5, 3, UTC_TIMESTAMP())"
refused "a waiting job with no delivery left" "$ins, attempts, max_attempts) VALUES ('r', 'x', 3, 3)"
refused "available_at 0000-00-00" "$ins, available_at) VALUES ('r', 'x', '0000-00-00')"
refused "created_at 0000-00-00" "$ins, created_at) VALUES ('r', 'x', '0000-00-00')"
refused "a lease without deadline" "$ins, state, lease_token) VALUES ('r', 'x', 'leased', '$TOK')"
refused "a lease without token" "$ins, state, leased_until) VALUES ('r', 'x', 'leased', UTC_TIMESTAMP())"
refused "a lease ending 0000-00-00" "$ins, state, leased_until, lease_token) VALUES ('r', 'x', 'leased', '0000-00-00', '$TOK')"
refused "a done job without finished_at" "$ins, state) VALUES ('r', 'x', 'done')"
refused "a dead job without finished_at" "$ins, state) VALUES ('r', 'x', 'dead')"
refused "every_us 0" "$ins, every_us, every_anchor) VALUES ('r', 'x', 0, UTC_TIMESTAMP())"
refused "every_us -1" "$ins, every_us, every_anchor) VALUES ('r', 'x', -1, UTC_TIMESTAMP())"
refused "every_us without every_anchor" "$ins, every_us) VALUES ('r', 'x', 1000000)"
sql "$ins) VALUES ('r', 'x')"
refused "an UPDATE that leases without deadline" "UPDATE mq_jobs SET state = 'leased', lease_token = '$TOK' WHERE queue = 'r'"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue <> 'r'") $(sql "SELECT state FROM mq_jobs WHERE queue = 'r'")" \
  "0 ready" "nothing refused got in"
sql "DELETE FROM mq_jobs"
# edge values that are allowed, and handled
sql "$ins, priority, available_at) VALUES ('e', 'far', -32768, '9999-12-31 23:59:59'), ('e', 'low', 32767, UTC_TIMESTAMP()), ('e', 'high', -32767, UTC_TIMESTAMP())"
run "$MQ" stats --json --queue e
like "$OUT" '*"queue":"e","ready":2,"scheduled":1,*' "a job due in 9999 is scheduled"
popped() { # popped ARGS...: claims with --json, $OUT the payloads "a,b,"
  run "$MQ" pop --json "$@"
  OUT=$(printf '%s\n' "$OUT" | sed -n 's/.*"payload":"\([^"]*\)".*/\1/p' | tr '\n' ,)
}
popped --queue e --count 3
is "$RC:$OUT" "0:high,low," "extreme priorities are claimed in order; 9999 waits"
sql "DELETE FROM mq_jobs"

# ---- a server without CHECKs: mq handles what gets in ----
# Every session, mq's too, as on MariaDB 10.1 or MySQL 5.7 (restored at
# exit: the server is shared with the other tests).
sql_root "SET GLOBAL check_constraint_checks = 0"
trap 'sql_root "SET GLOBAL check_constraint_checks = 1"; t_cleanup' EXIT
nocheck() { sql "SET SESSION check_constraint_checks = 0; SET SESSION sql_mode = ''; $1"; }
push_ok() { sql "$ins) VALUES ('$1', '$2')"; }

# state '' (a value not in the ENUM from a non-strict session)
nocheck "$ins, state) VALUES ('s', 'bogus', 'bogus')"
push_ok s behind-bad-state
run "$MQ" pop --queue s
is "$RC:$OUT" "0:behind-bad-state" "state '': the job behind it is claimed"
# one rule for it in every reader (mq-queue(7), CONSTRAINTS): invalid
bad=$(sql "SELECT id FROM mq_jobs WHERE payload = 'bogus'")
run "$MQ" ls --queue s
like "$OUT" "*$bad*invalid*" "state '': ls shows it invalid"
run "$MQ" ls --queue s --state invalid --ids
is "$RC:$OUT" "0:$bad" "  ls --state invalid lists it"
run "$MQ" ls --queue s --state dead --ids
is "$RC:$OUT" "1:" "  ls --state dead does not"
run "$MQ" ls --state invalid --ids
is "$RC:$OUT" "0:$bad" "  nor without --queue"
run "$MQ" ls --queue s --json
like "$OUT" "*\"state\":\"invalid\"*" "  --json: state invalid"
run "$MQ" why "$bad"
is "$RC" 19 "  why: status 19"
like "$OUT" "*none of mq's*requeue-stale buries it*" "  why says what it is"
run "$MQ" why --json "$bad"
like "$OUT" '*"answer":"invalid","status":19*' "  why --json"
run "$MQ" show "$bad"
like "$OUT" "*state: invalid*" "  show: invalid"
run "$MQ" cancel "$bad"
is "$RC" 1 "  cancel: status 1"
like "$ERR" "*job $bad has a state that is none of mq's*" "  cancel says so (not 'no job')"
is "$(sql "SELECT CAST(state AS CHAR) FROM mq_jobs WHERE id = $bad")" "" "  and leaves it"
run "$MQ" requeue-stale --dry-run
like "$OUT" "*dead 1*" "state '': --dry-run counts it"
run timeout 20 "$MQ" requeue-stale
is "$RC" 0 "state '': requeue-stale ends"
is "$(sql "SELECT CAST(state AS CHAR), finished_at IS NOT NULL, last_error FROM mq_jobs WHERE payload = 'bogus'" | tr '\t' ' ')" \
  "dead 1 invalid state; buried by requeue-stale" "state '': buried with a note"
is "$(counted_jobs)" "$(finished_jobs)" "state '': and counted"

# a lease without deadline, or with a token no receipt can have
nocheck "$ins, state, attempts, lease_token, leased_by) VALUES ('l', 'no-deadline', 'leased', 1, '$TOK', NULL), ('l', 'no-deadline-last', 'leased', 3, '$TOK', 'h:1')"
nocheck "UPDATE mq_jobs SET max_attempts = 3 WHERE payload = 'no-deadline-last'"
nocheck "$ins, state, attempts, lease_token, leased_until) VALUES ('l', 'short-token', 'leased', 1, 'abc', UTC_TIMESTAMP() + INTERVAL 1 HOUR), ('l', 'null-token', 'leased', 1, NULL, UTC_TIMESTAMP() + INTERVAL 1 HOUR)"
run "$MQ" stats --json --queue l
like "$OUT" '*"queue":"l",*"leased":4,"stale":2,*' "leases without deadline count as stale"
id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'no-deadline'")
expect_status 0 "a lease without deadline: extend sets one" "$MQ" extend --lease 1h "$id.$TOK"
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), leased_until) BETWEEN 3500 AND 3600 FROM mq_jobs WHERE id = $id")" 1 \
  "(an hour from now)"
nocheck "UPDATE mq_jobs SET leased_until = NULL WHERE id = $id"
run timeout 20 "$MQ" requeue-stale --queue l
is "$RC:$(echo $OUT)" "0:requeued 1 dead 1" "requeue-stale ends: the lease without deadline back, the used-up one dead"
is "$(sql "SELECT payload, CAST(state AS CHAR) FROM mq_jobs WHERE queue = 'l' ORDER BY id" | tr '\t\n' ' ,')" \
  "no-deadline ready,no-deadline-last dead,short-token leased,null-token leased," "rows as designed"
run timeout 20 "$MQ" requeue-stale --queue l
is "$RC:$(echo $OUT)" "0:requeued 0 dead 0" "a second run finds nothing"
id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'null-token'")
expect_status 2 "a lease with a NULL token: no receipt acks it" "$MQ" ack "$id.$TOK"
nocheck "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP() - INTERVAL 1 SECOND WHERE queue = 'l' AND state = 'leased'"
run timeout 20 "$MQ" requeue-stale --queue l
is "$RC:$(echo $OUT)" "0:requeued 2 dead 0" "leases with bad tokens expire and are requeued"
popped --queue l --count 5
is "$RC:$OUT" "0:no-deadline,short-token,null-token," "and claimed again"
is "$(counted_jobs)" "$(finished_jobs)" "leases: counted"

# attempts at the column's top: a claim must not fail on it (both ways)
for how in skip-locked update; do
  nocheck "DELETE FROM mq_jobs WHERE queue = 'a'"
  nocheck "$ins, attempts, max_attempts) VALUES ('a', 'top', 4294967295, 10)"
  push_ok a behind-top
  popped --claim=$how --queue a --count 2
  is "$RC:$OUT" "0:top,behind-top," "attempts 4294967295 ($how): claimed, and the job behind it"
  is "$(sql "SELECT attempts FROM mq_jobs WHERE payload = 'top'")" 4294967295 "($how) attempts stays at the top"
done
tok=$(sql "SELECT lease_token FROM mq_jobs WHERE payload = 'top'")
id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'top'")
run "$MQ" fail "$id.$tok"
is "$RC:$(sql "SELECT CAST(state AS CHAR) FROM mq_jobs WHERE id = $id")" "0:dead" \
  "attempts beyond max_attempts: fail buries it"

# max_attempts 0: one delivery, then dead
nocheck "$ins, max_attempts) VALUES ('m', 'zero', 0)"
run "$MQ" pop --queue m --receipt-file "$T_TMP/r"
is "$RC:$OUT" "0:zero" "max_attempts 0: claimed"
run "$MQ" fail "$(cat "$T_TMP/r")"
is "$RC:$(sql "SELECT CAST(state AS CHAR) FROM mq_jobs WHERE payload = 'zero'")" "0:dead" \
  "max_attempts 0: fail buries it"

# zero dates: due (the oldest), claimed first; the job behind still runs
nocheck "$ins, available_at, created_at) VALUES ('z', 'zero-date', '0000-00-00', '0000-00-00')"
push_ok z behind-zero
expect_status 0 "available_at 0000-00-00: stats works" "$MQ" stats --queue z
# a zero date is as old as the date it reads as (0000-01-01) wherever an
# age is shown: show, ls and ls --json as stats (on 6eb561e: "created:
# 0000-00-00T00:00:00Z (in 0ms)", AGE 0ms, created_at_from_now_us 0)
zid=$(sql "SELECT id FROM mq_jobs WHERE payload = 'zero-date'")
stats_age=$(echo "$OUT" | awk 'NR == 2 { print $11 }')
like "$stats_age" "7403??d*" "zero date: stats' oldest ready is 740,000 days"
run "$MQ" show "$zid"
like "$OUT" "*created: 0000-00-00T00:00:00Z ($stats_age ago)*due: 0000-00-00T00:00:00Z ($stats_age ago)*" \
  "zero dates: show gives them the age stats gives"
run "$MQ" ls --queue z
like "$(echo "$OUT" | awk -v id="$zid" '$1 == id { print $6 }')" "$stats_age" "ls: the same age"
run "$MQ" ls --json --queue z
# (the age against the server's of 0000-01-01, within a minute: a fixed
# prefix of it, -639630, stopped matching on 2026-11-29 as time went by)
us=$(printf '%s\n' "$OUT" | grep "\"id\":$zid," | sed -n 's/.*"created_at":"0000-00-00T00:00:00Z","created_at_from_now_us":\(-[0-9]*\),.*/\1/p')
want=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '0000-01-01 00:00:00')")
check "ls --json: the same age, in microseconds ($us)" \
  awk -v a="${us:-x}" -v b="$want" 'BEGIN { d = a - b; exit !(a ~ /^-[0-9]+$/ && d < 60e6 && d > -60e6) }'
nocheck "$ins, created_at, available_at) VALUES ('z0', 'zero-day', '2020-00-05 01:02:03', '2020-03-00')"
run "$MQ" show "$(sql "SELECT id FROM mq_jobs WHERE payload = 'zero-day'")"
# (an age of whole days shows no hours: "2465d ago" from 00:00 to 00:59)
like "$OUT" "*created: 2020-00-05T01:02:03Z (*d* ago)*due: 2020-03-00T00:00:00Z (*d* ago)*" \
  "a zero month or day: an age too (read as the 1st)"
sql "DELETE FROM mq_jobs WHERE queue = 'z0'"
popped --queue z --count 2
is "$RC:$OUT" "0:zero-date,behind-zero," "available_at 0000-00-00: claimed, and the job behind it"

# finished jobs without finished_at: archived, not left for ever
nocheck "$ins, state, finished_at) VALUES ('f', 'done-no-time', 'done', NULL), ('f', 'dead-no-time', 'dead', NULL)"
sql "INSERT INTO mq_jobs_counts (queue, state, slot, n) VALUES ('f', 'done', 0, 1), ('f', 'dead', 0, 1)"
run timeout 20 "$MQ" archive --dead --older-than 1d
is "$RC" 0 "finished_at NULL: archive ends"
is "$(sql "SELECT payload FROM mq_jobs_archive WHERE queue = 'f' ORDER BY id" | tr '\n' ,)" \
  "done-no-time,dead-no-time," "finished_at NULL: archived"
is "$(counted_jobs)" "$(finished_jobs)" "finished_at NULL: counted"

# recurring jobs with a period no ack can use: done, not a division by
# zero, not due again at once for ever
n=0
for every in "0, UTC_TIMESTAMP()" "-1, UTC_TIMESTAMP()" "1000000, NULL" \
    "9000000000000000000, UTC_TIMESTAMP()" "1000000, '0000-00-00'" \
    "1000000, '2020-00-00'"; do
  n=$((n + 1))
  nocheck "$ins, state, attempts, lease_token, leased_until, every_us, every_anchor) VALUES ('p', 'every$n', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, $every)"
  id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'every$n'")
  run timeout 20 "$MQ" ack "$id.$TOK"
  is "$RC:$ERR:$(sql "SELECT CAST(state AS CHAR), finished_at IS NOT NULL, leased_until IS NULL FROM mq_jobs WHERE id = $id" | tr '\t' ' ')" \
    "0::done 1 1" "every_us, every_anchor = $every: ack makes the job done"
done
# anchors that schema 6's CHECK lets through (checks on) but that are
# no date: done too, acked in one call with a job that is not recurring
# (the next due time was NULL: the ack failed, 1292, and mq work
# retried it for ever, its other jobs leased until run again)
sql "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ALLOW_INVALID_DATES');
  $ins, state, attempts, lease_token, leased_until, every_us, every_anchor) VALUES
  ('p', 'feb31', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, 1000000, '2021-02-31'),
  ('p', 'may0', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, 1000000, '2021-05-00'),
  ('p', 'once', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, NULL, NULL)"
is "$(sql "SELECT GROUP_CONCAT(every_anchor ORDER BY id) FROM mq_jobs WHERE payload IN ('feb31', 'may0')")" \
  "2021-02-31 00:00:00.000000,2021-05-00 00:00:00.000000" "anchors 2021-02-31 and 2021-05-00 written, checks on"
ids=$(sql "SELECT id FROM mq_jobs WHERE payload IN ('feb31', 'may0', 'once')")
# shellcheck disable=SC2046
run timeout 20 "$MQ" ack $(for i in $ids; do printf '%s.%s ' "$i" "$TOK"; done)
is "$RC:$ERR:$(sql "SELECT GROUP_CONCAT(CONCAT(payload, ' ', CAST(state AS CHAR), ' ', every_us IS NULL) ORDER BY id) FROM mq_jobs WHERE payload IN ('feb31', 'may0', 'once')")" \
  "0::feb31 done 1,may0 done 1,once done 1" "anchors that are no date: acked in one call with another job, all done"
# created_at and available_at with a zero month: ls gives them the age
# of the date they read as (2020-01-01, 15 digits of microseconds), not
# the figures of the row before (the buffers kept those), nor 0 (now)
sql "INSERT INTO mq_jobs (queue, payload, available_at, created_at) VALUES ('nz', 'valid', '2026-01-01', '2026-01-01')"
nocheck "$ins, available_at, created_at) VALUES ('nz', 'zero', '2020-00-00', '2020-00-00')"
"$MQ" ls --queue nz --json >"$T_TMP/nz"
is "$(grep -c . "$T_TMP/nz"):$(grep '"created_at":"2020-00-00' "$T_TMP/nz" | grep -Ec '"created_at_from_now_us":-2[0-9]{14},.*"available_at_from_now_us":-2[0-9]{14},')" "2:1" \
  "ls --json: the zero-month row's ages are its date's, not the row's before"
sql "DELETE FROM mq_jobs WHERE queue = 'nz'"
# a sound one next to them still recurs
nocheck "$ins, state, attempts, lease_token, leased_until, every_us, every_anchor) VALUES ('p', 'sound', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, 3600000000, UTC_TIMESTAMP())"
id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'sound'")
run "$MQ" ack "$id.$TOK"
is "$RC:$(sql "SELECT CAST(state AS CHAR), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), available_at) BETWEEN 3500 AND 3600, every_us FROM mq_jobs WHERE id = $id" | tr '\t' ' ')" \
  "0:ready 1 3600000000" "a sound recurring job is due again one period later"
is "$(counted_jobs)" "$(finished_jobs)" "recurring: counted"

# a queue name mq does not accept: counted by stats, reaped like any other
nocheck "$ins, state, attempts, lease_token, leased_until) VALUES ('bad queue', 'bq', 'leased', 1, '$TOK', UTC_TIMESTAMP() - INTERVAL 1 SECOND)"
run "$MQ" stats --json
like "$OUT" '*"queue":"bad queue",*"leased":1,"stale":1,*' "a queue name mq does not accept: counted by stats"
run timeout 20 "$MQ" requeue-stale
is "$RC:$(sql "SELECT CAST(state AS CHAR) FROM mq_jobs WHERE payload = 'bq'")" "0:ready" "and its expired lease is requeued"

# a finished job's dedup key is free: dedup_live is generated from state
nocheck "$ins, state, finished_at, dedup_key) VALUES ('d', 'done-key', 'done', UTC_TIMESTAMP(), 'k')"
sql "SET SESSION sql_mode = ''; UPDATE mq_jobs SET dedup_live = 'k' WHERE payload = 'done-key'" 2>/dev/null
is "$(sql "SELECT dedup_live IS NULL FROM mq_jobs WHERE payload = 'done-key'")" 1 "a done job's dedup key is never live"
run "$MQ" push --queue d --dedup k again
is "$RC:$(sql "SELECT payload FROM mq_jobs WHERE id = '$OUT'")" "0:again" "and a push with the key makes a new job"

# a queue name with a '/' makes queue '/' key ambiguous: a row of queue
# "mail/nightly" with key "report" holds the unique slot of queue "mail"
# with key "nightly/report". A push with that key is refused, not
# answered with the foreign row's id (before: status 0 and that id, and
# the job never ran)
nocheck "INSERT INTO mq_jobs (queue, payload, dedup_key) VALUES ('mail/nightly', 'squat', 'report')"
squat=$(sql "SELECT id FROM mq_jobs WHERE queue = 'mail/nightly'")
expect_status 70 "a dedup key held by another queue's row: refused" \
  "$MQ" push --queue mail --dedup nightly/report 'real job'
is "$OUT" "" "no id printed"
like "$ERR" "mq push: the dedup key is held by job $squat, which is not of queue 'mail' (a row mq did not write: its queue name has a '/')" \
  "the message names the holder"
run "$MQ" push --queue mail --dedup other 'real job'
is "$RC:$(sql "SELECT queue, payload FROM mq_jobs WHERE id = '$OUT'")" \
  "$(printf '0:mail\treal job')" "another key in that queue is pushed"

# queue names with bytes outside the column's ascii (and no CHECK):
# counted by their own bytes, shown escaped (before: read back as '?',
# they counted nothing: 0 ready, and mq check stayed OK)
nocheck "INSERT INTO mq_jobs (queue, payload) VALUES (0x6dc3a96c, 'h1'), (0x6dc3a96c, 'h2'), (0x6de280ae6c, 'h3'), (0x6dc3, 'h4')"
run "$MQ" stats --json
like "$OUT" '*"queue":"mél","ready":2,*' "stats: a UTF-8 name's 2 ready jobs counted"
like "$OUT" '*"queue":"m\\u202el","ready":1,*' "stats: a name with a bidi control: its job counted"
like "$OUT" '*"queue":"m\\ufffd","ready":1,*' "stats: a name cut mid-character: its job counted"
run "$MQ" stats
like "$OUT" '*m\\xe2\\x80\\xael *' "the bidi control is escaped on a terminal's table"
like "$OUT" '*m\\xc3 *' "and the cut character"
run "$MQ" check --max-ready 1
is "$RC" 2 "check --max-ready 1 sees the 2 ready in one of them: CRITICAL"
run "$MQ" why "$(sql "SELECT id FROM mq_jobs WHERE payload = 'h2'")"
like "$OUT" "*(1 job ahead of it)*" "why counts the job ahead in that queue"
sql "DELETE FROM mq_jobs WHERE payload IN ('h1', 'h2', 'h3', 'h4')"

# cancel and stats over all of it
nocheck "$ins, state) VALUES ('x', 'bogus', 'bogus')"
id=$(sql "SELECT id FROM mq_jobs WHERE queue = 'x'")
expect_status 1 "cancel of a row in no state: nothing to do" "$MQ" cancel "$id"
expect_status 0 "stats over every queue" "$MQ" stats
expect_status 0 "stats --json over every queue" "$MQ" stats --json

# ---- CHECKs on, rows written with them turned off ----
# mq's own writes leave such rows valid where they can (the claim raises
# max_attempts, the ack clears a period it cannot use)
sql_root "SET GLOBAL check_constraint_checks = 1"
sql "DELETE FROM mq_jobs"
nocheck "$ins, max_attempts) VALUES ('k', 'zero-max', 0)"
nocheck "$ins, attempts, max_attempts) VALUES ('k', 'used-up', 7, 3)"
popped --queue k --count 2
is "$RC:$OUT" "0:zero-max,used-up," "checks on: a claim of rows with attempts used up works"
is "$(sql "SELECT attempts, max_attempts FROM mq_jobs WHERE queue = 'k' ORDER BY id" | tr '\t\n' ' ,')" \
  "1 1,8 8," "(max_attempts raised to the delivery)"
nocheck "$ins, state, attempts, lease_token, leased_until, every_us, every_anchor) VALUES ('k', 'every0', 'leased', 1, '$TOK', UTC_TIMESTAMP() + INTERVAL 1 HOUR, 0, NULL)"
id=$(sql "SELECT id FROM mq_jobs WHERE payload = 'every0'")
run "$MQ" ack "$id.$TOK"
is "$RC:$(sql "SELECT CAST(state AS CHAR), every_us IS NULL FROM mq_jobs WHERE id = $id" | tr '\t' ' ')" \
  "0:done 1" "checks on: ack of every_us 0 makes it done"
# a zero date mq does not rewrite: mq's sessions run without the checks
# (mq(1) SESSIONS), so the claim goes through instead of stalling the
# queue on the constraint
nocheck "$ins, available_at) VALUES ('k2', 'zero-date', '0000-00-00')"
expect_status 0 "checks on: a zero-date row is claimed all the same" "$MQ" pop --queue k2
is "$OUT" zero-date "(the job)"
is "$(sql "SELECT CAST(state AS CHAR) FROM mq_jobs WHERE queue = 'k2'")" leased "and leased"
# the counts table edited by hand, its sum for a queue above 2^63: mq
# check must not take it for a negative that passes every threshold (on
# 6f40b45: "MQ OK", status 0, with the dead count over --max-dead)
sql "INSERT INTO mq_jobs_counts (queue, state, slot, n) VALUES ('huge', 'dead', 1, 9223372036854775807), ('huge', 'dead', 2, 9223372036854775807)"
run "$MQ" check --queue huge --max-dead 1
is "$RC" 2 "counts summing above 2^63: mq check --max-dead 1 is CRITICAL (2)"
like "$OUT" "MQ CRITICAL - huge: 9223372036854775807 dead > 1 (critical) |*" "and names the queue"
sql "DELETE FROM mq_jobs_counts WHERE queue = 'huge'"
# a done or dead row without finished_at: mq why, show and ls say the
# time is unknown, not an empty one (on 6eb561e: "is dead since  (in
# 0ms)", "is done (finished at )")
sql "DELETE FROM mq_jobs"
nocheck "$ins, state, last_error) VALUES ('fin', 'p', 'dead', 'boom'), ('fin', 'p', 'done', NULL)"
dead_id=$(sql "SELECT id FROM mq_jobs WHERE queue = 'fin' AND state = 'dead'")
done_id=$(sql "SELECT id FROM mq_jobs WHERE queue = 'fin' AND state = 'done'")
run "$MQ" why "$dead_id"
is "$RC:$(echo "$OUT" | head -1)" "14:job $dead_id is dead since an unknown time, with error: boom" \
  "why: a dead row without finished_at is dead since an unknown time"
like "$OUT" "*finished: unknown (the row has no finished_at)*" "(and its facts say so)"
run "$MQ" why "$done_id"
is "$RC:$(echo "$OUT" | head -1)" "15:job $done_id is done (finished at an unknown time)" \
  "why: a done row without finished_at finished at an unknown time"
run "$MQ" show "$done_id"
like "$OUT" "*finished: unknown (the row has no finished_at)*" "show: the same"
run "$MQ" why --json "$done_id"
like "$OUT" '*"finished_at":null,"finished_at_from_now_us":null,*' "why --json: null"
sql "DELETE FROM mq_jobs"

# a dead row whose finished_at another program set in the future is dead
# like any other: retry --queue Q --all (and --dry-run) takes it, as
# retry ID and ls --state dead do (on /work/main's binary it was left
# dead, silently: 'retried 1 job')
nocheck "$ins, state, last_error, finished_at) VALUES ('fut', 'p1', 'dead', 'e', UTC_TIMESTAMP(6) + INTERVAL 1 DAY), ('fut', 'p2', 'dead', 'e', UTC_TIMESTAMP(6) + INTERVAL 10 YEAR), ('fut', 'p3', 'dead', 'e', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
fut=$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM mq_jobs WHERE queue = 'fut'")
run "$MQ" ls --state dead --queue fut --ids
is "$RC:$(echo $OUT)" "0:$fut" "ls --state dead: the three dead rows"
run "$MQ" retry --queue fut --all --dry-run
is "$RC:$(echo $OUT)" "0:$fut" "retry --all --dry-run: every dead job, those finished in the future too"
run "$MQ" retry --queue fut --before 1m --dry-run
is "$RC:$(echo $OUT)" "0:${fut##* }" "retry --before 1m: only the one dead an hour ago (the others are too recent)"
run "$MQ" retry --queue fut --since 1d --dry-run
is "$RC:$(echo $OUT)" "0:$fut" "retry --since 1d: all three (a time in the future is within it)"
run "$MQ" retry --queue fut --all
is "$RC:$OUT" "0:retried 3 jobs" "retry --all: retries the three"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fut' AND state = 'ready' AND finished_at IS NULL")" 3 \
  "  all three ready again"
sql "DELETE FROM mq_jobs"

# archived rows whose state is neither done nor dead (another program's,
# written by SQL): finished, as why and show see them (archived), so
# wait reports them, with the state they were archived in (it said 'no
# job 901 in table mq_jobs nor in its archive', status 1, on /work/main)
nocheck "INSERT INTO mq_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at) VALUES (900, 'ar', '', 0, '', 1, 1, UTC_TIMESTAMP(), UTC_TIMESTAMP()), (901, 'ar', 'ready', 0, '', 0, 1, UTC_TIMESTAMP(), UTC_TIMESTAMP()), (902, 'ar', 'leased', 0, '', 1, 1, UTC_TIMESTAMP(), UTC_TIMESTAMP()), (903, 'ar', 'done', 0, '', 1, 1, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE id BETWEEN 900 AND 903")" 4 "four archived rows planted"
for id in 900 901 902; do
  run "$MQ" why "$id"
  like "$RC:$OUT" "16:job $id is archived*" "why $id: archived (16)"
  run "$MQ" wait --timeout 5s "$id"
  is "$RC:$ERR" "1:" "wait $id: finished, not done (1), nothing on stderr"
done
run "$MQ" wait --timeout 5s 900 901 902 903
is "$RC:$(printf '%s\n' "$OUT" | sort | tr '\n' '|')" "1:900 archived (state '')|901 archived (ready)|902 archived (leased)|903 done|" \
  "wait: each archived row finished, with the state it was archived in"
is "$ERR" "" "wait: none said missing"
run "$MQ" wait --timeout 0 903
is "$RC:$OUT" "0:903 done" "wait: an archived done row is done (0)"
# an empty state said as one, not as '()' ('archived ( at an unknown
# time)', 'state: archived ()' on /work/main)
run "$MQ" why 900
is "$RC:$(echo "$OUT" | head -1)" "16:job 900 is archived (state '' at an unknown time)" "why: an empty archived state said as state ''"
run "$MQ" show 900
is "$(echo "$OUT" | grep '^state:')" "state: archived (state '')" "show: the same"
run "$MQ" show 901
is "$(echo "$OUT" | grep '^state:')" "state: archived (ready)" "show: another state as it is"
sql "DELETE FROM mq_jobs_archive WHERE id BETWEEN 900 AND 903"
done_testing
