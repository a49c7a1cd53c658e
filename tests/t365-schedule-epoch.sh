#!/bin/sh
# A schedule whose next_at is the epoch itself (1970-01-01 00:00:00, a
# row another program wrote: "due at once") is due like any other past
# instant: firing read MIN(next_at) as 0 microseconds, which it took for
# "no schedule", and fired nothing at all, that schedule nor any other
# (review rev-lim). mq schedule fire, and a consumer's firing (pop --wait).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

F=$T_TMP/sched.conf
cat >"$F" <<'CONF'
[epoch]
cron = 0 * * * *
queue = q
payload = from-epoch

[other]
cron = * * * * *
queue = q
payload = other
CONF
expect_status 0 "apply" "$MQ" schedule apply "$F"
sql "UPDATE mq_jobs_schedules SET next_at = '1970-01-01 00:00:00' WHERE name = 'epoch'"
# other: due at this minute's instant (not late: it runs)
due_now="DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:00')"
sql "UPDATE mq_jobs_schedules SET next_at = $due_now WHERE name = 'other'"
run "$MQ" schedule fire
is "$RC" 0 "fire: status 0"
like "$OUT" "fired 2 schedules: * runs pushed, *" "fire: both due schedules fired (the epoch's too: its latest instant, missed = once)"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_schedules WHERE next_at <= UTC_TIMESTAMP()")" 0 \
  "no schedule left due"
is "$(sql "SELECT GROUP_CONCAT(DISTINCT payload ORDER BY payload) FROM mq_jobs WHERE queue = 'q'")" \
  "from-epoch,other" "a run of each"

# the same through a consumer's firing: pop --wait of the queue
sql "UPDATE mq_jobs_schedules SET next_at = '1970-01-01 00:00:00' WHERE name = 'epoch'"
sql "UPDATE mq_jobs_schedules SET next_at = $due_now WHERE name = 'other'"
sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_fired"
run "$MQ" pop --queue q --count 2 --json --wait 3s
is "$RC" 0 "pop --wait: a run"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_schedules WHERE next_at <= UTC_TIMESTAMP()")" 0 \
  "pop --wait fired both"
done_testing
