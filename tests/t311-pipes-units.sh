#!/bin/sh
# Output as Unix users expect it (issue 16): a read-only command writing
# into a closed pipe ends quietly, killed by SIGPIPE (141), as coreutils
# do; human tables size their columns to their content and show
# durations in human units (--json and --prometheus keep raw numbers);
# long work (push --lines/-0, archive, requeue-stale) ends with a summary
# on stderr and shows progress on a terminal; --quiet silences them.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# ---- closed pipes ----
# 2000 queues with long names: every format is larger than a pipe's
# 64 KiB, so the writer meets the closed pipe mid-output
sql "INSERT INTO mq_jobs (queue, payload) SELECT CONCAT('queue_with_a_name_longer_than_twenty_four_', seq), '' FROM seq_1_to_2000"
big=$("$MQ" stats | wc -c)
check "the table is larger than a pipe ($big bytes)" test "$big" -gt 65536

# pipe_to READER CMD...: runs CMD into | READER; "RC:STDERR:OUT" of it
pipe_to() {
  _r=$1
  shift
  { "$@" 2>"$T_TMP/perr"; echo "$?" >"$T_TMP/prc"; } | $_r >"$T_TMP/pout"
  printf '%s:%s:%s' "$(cat "$T_TMP/prc")" "$(cat "$T_TMP/perr")" \
    "$(cat "$T_TMP/pout")"
}
is "$(pipe_to "head -1" "$MQ" stats | tr -s ' ')" \
  "141::QUEUE READY SCHEDULED WAITING LEASED STALE DONE DEAD RECURRING PAUSED OLDEST_READY CONCURRENCY PER_KEY RATE KEY_RATE HELD" \
  "stats | head -1: the header, nothing on stderr, SIGPIPE's status"
like "$(pipe_to "head -1" "$MQ" stats --prometheus)" "141::# HELP mq_jobs *" \
  "stats --prometheus | head -1: quiet, SIGPIPE"
is "$(pipe_to "head -c1" "$MQ" stats --json)" "141::{" \
  "stats --json | head -c1: quiet, SIGPIPE"
# a reader gone before anything was written: a small output too
gone() { sleep 0.3; "$@"; }
is "$(pipe_to true gone "$MQ" stats --queue queue_with_a_name_longer_than_twenty_four_1)" \
  "141::" "stats into a pipe nobody reads: quiet, SIGPIPE"
like "$(pipe_to "head -1" "$MQ" -h)" "0::usage: mq *" "mq -h | head -1: quiet"
is "$(pipe_to true gone "$MQ" -h)" "141::" "mq -h into a pipe nobody reads"
like "$(pipe_to "head -1" "$MQ" pop -h)" "0::usage: mq pop *" \
  "mq pop -h | head -1: quiet"
is "$(pipe_to true gone "$MQ" pop -h)" "141::" \
  "mq pop -h into a pipe nobody reads"
# started with SIGPIPE ignored: help into a pipe nobody reads ends with
# status 0 and says nothing (mq(1) OUTPUT; it was 74, "write failure")
ignpipe() { python3 -c 'import signal, subprocess, sys, time
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    restore_signals=False)
p.stdout.close()
err = p.stderr.read().decode()
print("%d:%s" % (p.wait(), err.strip()))' "$@"; }
is "$(ignpipe "$MQ" -h)" "0:" "mq -h, SIGPIPE ignored, into a pipe nobody reads: 0, quiet"
is "$(ignpipe "$MQ" pop -h)" "0:" "mq pop -h, the same"
is "$(ignpipe "$MQ" --version)" "0:" "mq --version, the same"
# not a closed pipe: a full disk is still an error that says so
expect_status 74 "stats >/dev/full: exit 74" sh -c '"$0" stats >/dev/full' "$MQ"
is "$ERR" "mq stats: write failure on standard output: No space left on device" "and says so, with the cause"
sql "DELETE FROM mq_jobs"
"$MQ" stats --recount >/dev/null

# ---- columns sized to their content ----
long=a_queue_name_of_more_than_twenty_four_characters_x
echo x | "$MQ" push --queue "$long" >/dev/null
echo x | "$MQ" push --queue s >/dev/null
run "$MQ" stats
is "$RC" 0 "stats"
is "$(printf '%s\n' "$OUT" | grep -v '^archive:' | awk '{ print length($0) }' | sort -u)" \
  "$(printf '%s\n' "$OUT" | head -1 | awk '{ print length($0) }')" \
  "every row as long as the header: columns line up under a long name"
is "$(printf '%s\n' "$OUT" | head -1 | awk '{ print index($0, "READY") }')" \
  "$(( ${#long} + 2 ))" "the queue column is as wide as its widest name"
is "$(printf '%s\n' "$OUT" | awk '$1 == "s" { print index($0, " 1 ") }')" \
  "$(printf '%s\n' "$OUT" | awk -v q="$long" '$1 == q { print index($0, " 1 ") }')" \
  "a short name's counts sit under a long name's"

# ---- human units ----
# oldest ready ages: 300 ms, 42 s, 3m12s, 2h05m, 3d4h; none ready: "-"
age() { # age QUEUE MICROSECONDS: one ready job of that age
  id=$(echo x | "$MQ" push --queue "$1")
  sql "UPDATE mq_jobs SET available_at = NOW(6) - INTERVAL $2 MICROSECOND WHERE id = $id"
}
echo x | "$MQ" push --queue u6 --delay 1h >/dev/null
age u5 273600000000
age u4 7500000000
age u3 192000000
age u2 42000000
age u1 300000
run "$MQ" stats
oldest() { printf '%s\n' "$OUT" | awk -v q="$1" '$1 == q { print $11 }'; }
like "$(oldest u1)" "[3-9][0-9][0-9]ms" "under a second: milliseconds"
like "$(oldest u2)" "4[2-4]s" "under a minute: seconds"
like "$(oldest u3)" "3m1[2-4]s" "minutes and seconds, seconds two digits"
is "$(oldest u4)" "2h05m" "hours and minutes, minutes two digits"
is "$(oldest u5)" "3d4h" "days and hours"
is "$(oldest u6)" "-" "no ready job: -"
like "$(printf '%s\n' "$OUT" | awk '$1 == "u5" { print $2, $3, $4 }')" "1 0 0" \
  "counts stay plain integers"
run "$MQ" stats --queue u4 --json
like "$OUT" '*"oldest_ready_seconds":750[0-9].[0-9][0-9][0-9],*' \
  "--json keeps raw seconds"
run "$MQ" stats --queue u4 --prometheus
like "$OUT" '*mq_oldest_ready_age_seconds{table="mq_jobs",queue="u4"} 750[0-9].[0-9][0-9][0-9]
*' "--prometheus keeps raw seconds"
r=$("$MQ" pop --queue u1 -o /dev/null)
expect_status 0 "fail --retry-in 3m07s" "$MQ" fail --retry-in 3m07s "$r"
is "$OUT" "job ${r%%.*}: due again in 3m07s (after attempt 1)" \
  "fail says the delay in human units"
sql "DELETE FROM mq_jobs"
"$MQ" stats --recount >/dev/null

# ---- summary and --quiet ----
run sh -c 'seq 1 2500 | "$0" push --lines --queue p' "$MQ"
is "$RC" 0 "push --lines"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 2500 "ids on stdout, one per job"
is "$(printf '%s\n' "$OUT" | sort -n | uniq | wc -l | tr -d ' ')" 2500 "each once"
like "$ERR" "mq push: pushed 2500 jobs in *[0-9]*s (*[0-9]/s)" \
  "a summary line on stderr: count, time, rate"
is "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" 1 "one line"
run sh -c 'printf "a\0b\0" | "$0" push -0 --queue p' "$MQ"
like "$RC:$ERR" "0:mq push: pushed 2 jobs in *" "push -0 ends with the summary"
run sh -c 'seq 1 3 | "$0" push --lines --queue p --quiet' "$MQ"
is "$RC:$ERR" "0:" "--quiet: nothing on stderr"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 3 "--quiet: the ids as without it"
run "$MQ" push --queue p one
like "$RC:$OUT:$ERR" "0:[0-9]*:" "a single push prints its id only"

"$MQ" pop --queue p --count 40 --json >/dev/null
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE state = 'leased'"
expect_status 0 "requeue-stale --dry-run --quiet" "$MQ" requeue-stale --dry-run --quiet
is "$OUT:$ERR" "requeued 40 (dry run)
dead 0 (dry run):" "a dry run prints its counts even with --quiet"
expect_status 0 "requeue-stale --batch 7" "$MQ" requeue-stale --batch 7 --queue p
is "$OUT:$ERR" "requeued 40
dead 0:" "requeue-stale: stdout as it was, nothing on stderr"
"$MQ" pop --queue p --count 5 --json >/dev/null
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE state = 'leased'"
expect_status 0 "requeue-stale --quiet" "$MQ" requeue-stale --quiet
is "$OUT:$ERR" ":" "requeue-stale --quiet: no output"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")" 0 "and it did its work"

sql "UPDATE mq_jobs SET state = 'done', finished_at = NOW(6) - INTERVAL 2 HOUR, leased_until = NULL, lease_token = NULL WHERE id % 2 = 0"
"$MQ" stats --recount >/dev/null
done_n=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state = 'done'")
expect_status 0 "archive --older-than 1h --batch 100 --quiet" \
  "$MQ" archive --older-than 1h --batch 100 --quiet
is "$OUT:$ERR" ":" "archive --quiet: no output"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive")" "$done_n" "and it archived them"
expect_status 0 "archive" "$MQ" archive --older-than 1h
is "$OUT:$ERR" "archived 0 jobs:" "archive: stdout as it was, nothing on stderr"

# ---- progress on a terminal (script(1) gives mq a pty for stderr) ----
if command -v script >/dev/null 2>&1; then
  export MQ T_TMP
  script -qc 'sh -c "{ seq 1 1000; sleep 1; seq 1 1000; } | \"\$MQ\" push --lines --queue t >\"$T_TMP/ids\""' \
    /dev/null >"$T_TMP/tty" 2>&1
  is "$(wc -l <"$T_TMP/ids" | tr -d ' ')" 2000 "on a terminal: the ids as ever"
  check "a progress line, rewritten in place with a carriage return" \
    grep -q "$(printf '\r')mq push: 1000 jobs pushed in [0-9]*m*s, [0-9]*/s" "$T_TMP/tty"
  check "then the summary" grep -q "mq push: pushed 2000 jobs in" "$T_TMP/tty"
  script -qc 'sh -c "{ seq 1 1000; sleep 1; seq 1 1000; } | \"\$MQ\" push --lines --quiet --queue t >/dev/null"' \
    /dev/null >"$T_TMP/tty" 2>&1
  is "$(cat "$T_TMP/tty")" "" "--quiet: no progress either"
  # archive in batches of 2, one pty for both outputs: the progress line,
  # erased, then the count on stdout as ever
  sql "INSERT INTO mq_jobs (queue, state, payload, attempts, finished_at) SELECT 'arch', 'done', '', 1, NOW(6) - INTERVAL 1 DAY FROM seq_1_to_600"
  "$MQ" stats --recount >/dev/null
  script -qc '"$MQ" archive --older-than 1h --batch 2' /dev/null >"$T_TMP/tty" 2>&1
  check "archive on a terminal: a progress line" \
    grep -q "$(printf '\r')mq archive: [0-9]* jobs archived in [0-9]*m*s, [0-9]*/s" "$T_TMP/tty"
  is "$(tr '\r' '\n' <"$T_TMP/tty" | tail -3 | sed 's/^  *$/(blank)/' | tr '\n' '|')" \
    "(blank)|archived 600 jobs||" "the line blanked, then the count"
else
  ok "# SKIP script(1) not installed"
fi

done_testing
