#!/bin/sh
# Issue 33's guarantee 4, every run is visible: mq show of a schedule's
# run names its schedule and instant (UTC and the schedule's zone, by
# hand or not) and lists that schedule's last runs with their outcomes
# (ready, leased, done, dead, archived, gone once purged, skipped);
# mq why of a run says which schedule and instant, and when and why the
# next run comes; mq ls --recurring and --schedule select the runs (and
# --every jobs); all in text and JSON, the table's odd bytes escaped.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

F=$T_TMP/sched.conf
cat >"$F" <<'EOF2'
[ticks]
cron = * * * * *
tz = Asia/Kolkata
queue = vis
payload = tick\x00\x1b[31m
missed = all
missed-max = 3
max-attempts = 1

[other]
cron = 0 0 1 1 *
queue = vis
payload = other
EOF2
expect_status 0 "apply two schedules" "$MQ" schedule apply "$F"

# firing must not cross a minute: start early in one
while [ "$(sql "SELECT SECOND(UTC_TIMESTAMP())")" -ge 45 ]; do sleep 1; done
M=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:00')")
# minute M - k: its UTC text, its Kolkata (+05:30) text, its epoch
utc() { sql "SELECT DATE_FORMAT('$M' - INTERVAL $1 MINUTE, '%Y-%m-%d %H:%i:%s UTC')"; }
ist() { sql "SELECT DATE_FORMAT('$M' - INTERVAL $1 MINUTE + INTERVAL 330 MINUTE, '%Y-%m-%d %H:%i:%s IST')"; }
epoch() { sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', '$M' - INTERVAL $1 MINUTE)"; }
at() { echo "$(ist "$1") ($(utc "$1"))"; }
jt() { echo "{\"utc\":\"$(utc "$1")\",\"local\":\"$(ist "$1")\",\"epoch\":$(epoch "$1")}"; }
job_at() { sql "SELECT job FROM mq_jobs_fired WHERE schedule = 'ticks' AND manual = 0 AND instant = '$M' - INTERVAL $1 MINUTE"; }

# due five minutes ago: M-5 .. M-1 late (all, at most 3: M-3 .. M-1 run,
# M-5 and M-4 skipped), M on time
sql "UPDATE mq_jobs_schedules SET next_at = '$M' - INTERVAL 5 MINUTE WHERE name = 'ticks'"
expect_status 0 "fire" "$MQ" schedule fire
like "$OUT" "fired 1 schedule: 4 runs pushed, 2 missed instants skipped;*" "  4 runs, 2 skipped"
is "$(sql "SELECT next_at FROM mq_jobs_schedules WHERE name = 'ticks'")" "$(sql "SELECT '$M' + INTERVAL 1 MINUTE")".000000 "  next run: the next minute"
expect_status 0 "a run by hand" "$MQ" schedule run ticks
manual=$OUT
man_utc=$(sql "SELECT DATE_FORMAT(instant, '%Y-%m-%d %H:%i:%s UTC') FROM mq_jobs_fired WHERE manual = 1")
man_ist=$(sql "SELECT DATE_FORMAT(instant + INTERVAL 330 MINUTE, '%Y-%m-%d %H:%i:%s IST') FROM mq_jobs_fired WHERE manual = 1")
man_epoch=$(sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', instant) FROM mq_jobs_fired WHERE manual = 1")
j3=$(job_at 3) j2=$(job_at 2) j1=$(job_at 1) j0=$(job_at 0)
# before the archive prunes them: the skipped instants are listed
expect_status 0 "show of a run before any archive" "$MQ" show "$j0"
is "$(printf '%s\n' "$OUT" | sed -n '/^last runs:/,$p' | tail -2)" "  $(at 4): skipped (missed)
  $(at 5): skipped (missed)" "  the skipped instants, last"
expect_status 0 "show --json of it" "$MQ" show --json "$j0"
like "$OUT" "*{\"at\":$(jt 5),\"manual\":false,\"job\":null,\"state\":\"skipped\",\"archived\":false}]}}" \
  "  in JSON too"

# outcomes: M-3 done and archived, M-2 dead and archived, M-1 done and
# purged, M leased, the manual run ready
run "$MQ" pop --queue vis --receipt-file "$T_TMP/r"
is "$(cut -d. -f1 "$T_TMP/r")" "$j3" "pop takes the oldest run (M-3)"
expect_status 0 "  acked" "$MQ" ack "$(cat "$T_TMP/r")"
run "$MQ" pop --queue vis --receipt-file "$T_TMP/r"
expect_status 0 "the next (M-2) fails for good" "$MQ" fail --no-retry --error 'boom' "$(cat "$T_TMP/r")"
expect_status 0 "archive them" "$MQ" archive --older-than 0s --dead --quiet
run "$MQ" pop --queue vis --receipt-file "$T_TMP/r"
expect_status 0 "M-1 acked" "$MQ" ack "$(cat "$T_TMP/r")"
expect_status 0 "and purged" "$MQ" archive --older-than 0s --purge --quiet
run "$MQ" pop --queue vis --receipt-file "$T_TMP/r"
is "$(cut -d. -f1 "$T_TMP/r")" "$j0" "M is leased"
is "$(sql "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM mq_jobs WHERE id IN ($j3, $j2, $j1)), (SELECT COUNT(*) FROM mq_jobs_archive WHERE id IN ($j3, $j2)))")" "0 2" \
  "  the first two are archived, the third purged"

runs_text="last runs:
  $man_ist ($man_utc) by hand: job $manual, ready
  $(at 0): job $j0, leased
  $(at 2): job $j2, dead (archived)
  $(at 3): job $j3, done (archived)"

# ---- mq show ----
expect_status 0 "show of the leased run" "$MQ" show "$j0"
is "$(printf '%s\n' "$OUT" | sed -n '/^schedule:/,$p')" "schedule: ticks
instant: $(at 0)
cron: * * * * *, tz Asia/Kolkata
next run: $(at -1)
$runs_text" "  its schedule, instant, next run and last runs"
like "$OUT" "*payload: 10 bytes
  tick\\\\x00\\\\x1b\\[31m
history:*" "  its payload escaped"
expect_status 0 "show of the manual run" "$MQ" show "$manual"
like "$OUT" "*
schedule: ticks
instant: $man_ist ($man_utc), by hand (mq schedule run)
cron: *" "  says by hand"
expect_status 0 "show of an archived run" "$MQ" show "$j2"
like "$OUT" "*state: archived (dead)*
schedule: ticks
instant: $(at 2)
*" "  names its schedule too"

runs_json="[{\"at\":{\"utc\":\"$man_utc\",\"local\":\"$man_ist\",\"epoch\":$man_epoch},\"manual\":true,\"job\":$manual,\"state\":\"ready\",\"archived\":false},\
{\"at\":$(jt 0),\"manual\":false,\"job\":$j0,\"state\":\"leased\",\"archived\":false},\
{\"at\":$(jt 2),\"manual\":false,\"job\":$j2,\"state\":\"dead\",\"archived\":true},\
{\"at\":$(jt 3),\"manual\":false,\"job\":$j3,\"state\":\"done\",\"archived\":true}]"
sched_json="{\"name\":\"ticks\",\"instant\":$(jt 0),\"manual\":false,\"exists\":true,\"cron\":\"* * * * *\",\"tz\":\"Asia/Kolkata\",\"next\":$(jt -1)"
expect_status 0 "show --json" "$MQ" show --json "$j0"
is "$(printf '%s\n' "$OUT" | sed 's/.*,"schedule"://')" "$sched_json,\"runs\":$runs_json}}" \
  "  the member schedule: instant, cron, tz, next, runs"
like "$OUT" "{\"id\":$j0,*\"history\":\[*\],\"schedule\":{*" "  after history, in the job's object"

# ---- mq why ----
run "$MQ" why "$j0"
is "$RC:$ERR" "12:" "why of the leased run: 12 (running)"
like "$(printf '%s\n' "$OUT" | head -1)" "job $j0 is running: *; it is the run of schedule ticks at $(at 0)" \
  "  the sentence names its schedule and instant"
is "$(printf '%s\n' "$OUT" | tail -2)" "schedule: ticks
next run: $(at -1), by cron * * * * * in Asia/Kolkata" "  the next run and why"
expect_status 0 "why --json of the manual run" "$MQ" why --json "$manual"
is "$(printf '%s\n' "$OUT" | sed 's/.*,"schedule"://')" \
  "{\"name\":\"ticks\",\"instant\":{\"utc\":\"$man_utc\",\"local\":\"$man_ist\",\"epoch\":$man_epoch},\"manual\":true,\"exists\":true,\"cron\":\"* * * * *\",\"tz\":\"Asia/Kolkata\",\"next\":$(jt -1)}}" \
  "  the member schedule, without the runs"

# ---- a schedule removed: its runs still name it ----
expect_status 0 "a run by hand of other" "$MQ" schedule run other
other=$OUT
o_utc=$(sql "SELECT DATE_FORMAT(instant, '%Y-%m-%d %H:%i:%s UTC') FROM mq_jobs_fired WHERE schedule = 'other'")
expect_status 0 "other removed" "$MQ" schedule rm other
expect_status 0 "show of its run" "$MQ" show "$other"
is "$(printf '%s\n' "$OUT" | sed -n '/^schedule:/,$p')" "schedule: other
instant: $o_utc, by hand (mq schedule run)
cron: none (the schedule was removed)
last runs:
  $o_utc by hand: job $other, ready" "  names it, times in UTC (its zone is gone)"
run "$MQ" why "$other"
is "$RC" 0 "why of it: 0 (ready)"
like "$OUT" "job $other is ready and due*; it is the run of schedule other at $o_utc, by hand
*
schedule: other
next run: none (the schedule was removed)" "  says the schedule was removed"
expect_status 0 "why --json of it" "$MQ" why --json "$other"
like "$OUT" "*,\"schedule\":{\"name\":\"other\",\"instant\":{\"utc\":\"$o_utc\",\"local\":\"$o_utc\",*},\"manual\":true,\"exists\":false,\"cron\":null,\"tz\":null,\"next\":null}}" \
  "  exists false, cron, tz and next null"

# ---- rows another program wrote: shown escaped ----
"$MQ" push --queue vis odd >/dev/null
odd=$(sql "SELECT MAX(id) FROM mq_jobs")
sql "INSERT INTO mq_jobs_fired (schedule, manual, instant, job) VALUES (CONCAT('ev', CHAR(27), '[1m', CHAR(9)), 0, '2026-01-01 00:00:00', $odd)"
sql "INSERT INTO mq_jobs_schedules (name, expr, zone, queue, payload, next_at) VALUES (CONCAT('ev', CHAR(27), '[1m', CHAR(9)), CONCAT('* *', CHAR(10), ' * * *'), CONCAT('No/', CHAR(7)), 'vis', '', '2030-01-01 00:00:00')"
expect_status 0 "show of a run whose ledger and schedule rows hold control bytes" "$MQ" show "$odd"
is "$(printf '%s\n' "$OUT" | sed -n '/^schedule:/,$p')" 'schedule: ev\x1b[1m\x09
instant: 2026-01-01 00:00:00 UTC
cron: * *\x0a * * *, tz No/\x07
next run: 2030-01-01 00:00:00 UTC
last runs:
  2026-01-01 00:00:00 UTC: job '"$odd"', ready' "  escaped (the zone does not load: UTC)"
expect_status 0 "show --json of it" "$MQ" show --json "$odd"
is "$(printf '%s\n' "$OUT" | sed 's/.*,"schedule"://')" '{"name":"ev\u001b[1m\t","instant":{"utc":"2026-01-01 00:00:00 UTC","local":"2026-01-01 00:00:00 UTC","epoch":1767225600},"manual":false,"exists":true,"cron":"* *\n * * *","tz":"No/\u0007","next":{"utc":"2030-01-01 00:00:00 UTC","local":"2030-01-01 00:00:00 UTC","epoch":1893456000},"runs":[{"at":{"utc":"2026-01-01 00:00:00 UTC","local":"2026-01-01 00:00:00 UTC","epoch":1767225600},"manual":false,"job":'"$odd"',"state":"ready","archived":false}]}}' \
  "  JSON-escaped"
run "$MQ" why "$odd"
is "$(printf '%s\n' "$OUT" | tail -2)" 'schedule: ev\x1b[1m\x09
next run: 2030-01-01 00:00:00 UTC, by cron * *\x0a * * * in No/\x07' "  why escapes them too"
like "$(printf '%s\n' "$OUT" | head -1)" "*; it is the run of schedule ev\\\\x1b\\[1m\\\\x09 at 2026-01-01 00:00:00 UTC" "  in its sentence too"
sql "DELETE FROM mq_jobs_fired WHERE job = $odd; DELETE FROM mq_jobs_schedules WHERE name <> 'ticks'"

# ---- a job that is no run ----
"$MQ" push --queue vis plain >/dev/null
plain=$(sql "SELECT MAX(id) FROM mq_jobs")
expect_status 0 "show of a job that is no run" "$MQ" show "$plain"
is "$(printf '%s\n' "$OUT" | grep -c '^schedule:')" 0 "  has no schedule section"
expect_status 0 "show --json of it" "$MQ" show --json "$plain"
like "$OUT" '*\],"schedule":null}' "  schedule null"
expect_status 0 "why --json of it" "$MQ" why --json "$plain"
like "$OUT" '*,"schedule":null}' "  schedule null"

# ---- mq ls --recurring, --schedule ----
"$MQ" push --queue vis --every 1h every >/dev/null
every=$(sql "SELECT MAX(id) FROM mq_jobs")
ids() { printf '%s\n' "$@" | sort -n | tr '\n' ' '; }
expect_status 0 "ls --recurring" "$MQ" ls --recurring --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j0" "$manual" "$other" "$every")" \
  "  the runs (of schedules removed too) and the --every job, not the others"
expect_status 0 "ls --recurring --state archived" "$MQ" ls --recurring --state archived --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j3" "$j2")" "  the archived runs"
expect_status 0 "ls --schedule ticks --state ready,leased,archived" "$MQ" ls --schedule ticks --state ready,leased,archived --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j3" "$j2" "$j0" "$manual")" "  its runs, from the archive too"
expect_status 0 "ls --schedule ticks --queue vis --state leased" "$MQ" ls --schedule ticks --queue vis --state leased --ids
is "$OUT" "$j0" "  with the other filters"
expect_status 0 "ls --schedule other (removed)" "$MQ" ls --schedule other --ids
is "$OUT" "$other" "  the runs of a removed schedule"
expect_status 0 "ls --schedule ticks --json" "$MQ" ls --schedule ticks --json
is "$(printf '%s\n' "$OUT" | sed 's/^{"id":\([0-9]*\),"queue":"vis".*/\1/' | tr '\n' ' ')" "$(ids "$j0" "$manual")" "  JSON lines"
expect_status 0 "ls --schedule ticks --recurring" "$MQ" ls --schedule ticks --recurring --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j0" "$manual")" "  both filters: the schedule's"
expect_status 0 "ls --recurring --queue vis --state ready" "$MQ" ls --recurring --queue vis --state ready --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$manual" "$other" "$every")" "  a queue's ready ones (the list index)"
expect_status 0 "ls --recurring --state done,dead,archived" "$MQ" ls --recurring --state done,dead,archived --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j3" "$j2")" "  the finished ones"
expect_status 0 "ls --recurring --error boom --state archived" "$MQ" ls --recurring --error boom --state archived --ids
is "$OUT" "$j2" "  with --error"
expect_status 0 "ls --schedule ticks --state archived,leased,ready --limit 2" "$MQ" ls --schedule ticks --state archived,leased,ready --limit 2 --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' '):$ERR" "$(ids "$j3" "$j2"):mq ls: more: --after $j2" "  a page, and the next one's --after"
expect_status 0 "ls --schedule ticks ... --after" "$MQ" ls --schedule ticks --state archived,leased,ready --limit 2 --after "$j2" --ids
is "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "$(ids "$j0" "$manual")" "  the next page"
expect_status 0 "ls --schedule ticks (the table)" "$MQ" ls --schedule ticks
is "$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1, $3 }' | tr '\n' ' ')" "$j0 leased $manual ready " "  the table: ids and states"
expect_status 1 "ls --schedule nosuch: 1" "$MQ" ls --schedule nosuch --ids
is "$OUT" "" "  lists nothing"
expect_status 64 "ls --schedule with a bad name: 64" "$MQ" ls --schedule 'a b'
is "$ERR" "mq ls: invalid schedule name 'a b' in --schedule: use 1 to 64 of A-Z a-z 0-9 _ . -" "  says why"
expect_status 64 "ls --schedule without its name: 64" "$MQ" ls --schedule

# ---- stop 46's review, findings 2-4 (each failed on 17b6853): rows
# another program wrote, in a table of their own
export MQ_TABLE=r46
"$MQ" init >/dev/null
sql "INSERT INTO r46_schedules (name, expr, zone, queue, payload, priority, job_key, next_at) VALUES
 ('bel', '0 0 * * *', CONCAT('UTC', CHAR(7)), 'q46', 'x', 0, NULL, '2030-01-01'),
 ('bin', '0 0 * * *', 'UTC', 'q46', UNHEX('FF00FE'), 0, NULL, '2030-01-01'),
 ('nulkey', '0 0 * * *', 'UTC', 'q46', 'x', 0, CONCAT('k', CHAR(0), 'z'), '2030-01-01'),
 ('prio', '0 0 * * *', 'UTC', 'q46', 'x', 100000, NULL, '2030-01-01')"
expect_status 0 "schedule ls of rows another program wrote" "$MQ" schedule ls -n 1
is "$OUT" "bel: cron 0 0 * * *, tz UTC\\x07, queue q46, missed once
  unusable: invalid time zone name 'UTC\\x07'
  last none
bin: cron 0 0 * * *, tz UTC, queue q46, missed once
  next 2030-01-01 00:00:00 UTC (2030-01-01 00:00:00 UTC)
  last none
nulkey: cron 0 0 * * *, tz UTC, queue q46, missed once
  unusable: its key holds a NUL byte
  last none
prio: cron 0 0 * * *, tz UTC, queue q46, missed once
  unusable: priority 100000 is out of range -32768 to 32767
  last none" "  each row fire sets aside says why, with no next instant; a zone's control byte as \\x07"
expect_status 0 "schedule ls --json of them" "$MQ" schedule ls --json -n 0
is "$(printf '%s\n' "$OUT" | sed -n 2p)" '{"name":"bin","cron":"0 0 * * *","tz":"UTC","queue":"q46","payload_base64":"/wD+","priority":0,"max_attempts":10,"key":null,"missed":"once","missed_max":10,"next":[],"unusable":null,"last":null}' \
  "  a payload not UTF-8 in base64, its bytes kept"
is "$(printf '%s\n' "$OUT" | sed -n 3p)" '{"name":"nulkey","cron":"0 0 * * *","tz":"UTC","queue":"q46","payload":"x","priority":0,"max_attempts":10,"key":"k\u0000z","missed":"once","missed_max":10,"next":[],"unusable":"its key holds a NUL byte","last":null}' \
  "  a key whole, and why it is unusable"
like "$(printf '%s\n' "$OUT" | sed -n 4p)" '*"next":[],"unusable":"priority 100000 is out of range -32768 to 32767",*' "  the priority's"
expect_status 65 "schedule run of the row whose key holds a NUL: 65" "$MQ" schedule run nulkey
is "$ERR" "mq schedule: schedule 'nulkey' is unusable: its key holds a NUL byte" "  says why"
is "$(sql "SELECT COUNT(*) FROM r46")" 0 "  no job (it pushed one with the key cut: 'k')"
sql "UPDATE r46_schedules SET next_at = '2020-01-01' WHERE name IN ('nulkey', 'prio')"
expect_status 0 "fire sets both aside" "$MQ" schedule fire
like "$OUT" "fired 2 schedules: 0 runs pushed, 0 missed instants skipped, 2 unusable (never fire)*" "  2 unusable"
expect_status 0 "ls after: still says why" "$MQ" schedule ls -n 1
is "$(printf '%s\n' "$OUT" | grep -A2 '^prio:' | sed 1d)" "  unusable: priority 100000 is out of range -32768 to 32767
  last none" "  (it said only 'last none')"
# finding 4: ls into a closed pipe dies of SIGPIPE, silently, as the
# other read-only commands do (it said 'write failure', 74)
awk 'BEGIN { for (i = 0; i < 8; i++) printf "[p%d]\ncron = * * * * *\nqueue = q46\n", i }' >"$T_TMP/p46.conf"
"$MQ" schedule apply "$T_TMP/p46.conf" >/dev/null
for form in "" --json; do
  { "$MQ" schedule --next 1000 ls $form 2>"$T_TMP/p.err"; echo $? >"$T_TMP/p.rc"; } | head -1 >/dev/null
  is "$(cat "$T_TMP/p.rc"):$(cat "$T_TMP/p.err")" "141:" "schedule ls $form into a closed pipe: SIGPIPE (141), nothing said"
done
unset MQ_TABLE

# ---- rows47's review, finding 2: an expression, zone or queue with a NUL
# byte (another program's row) shown whole, the NUL as \x00, JSON holding
# every byte: ls cut them at the NUL ('default', 'UT', '* * * * *'), and
# so did show and why of a run of such a schedule
export MQ_TABLE=r47
"$MQ" init >/dev/null
sql "SET SESSION sql_mode = ''; SET SESSION check_constraint_checks = 0; INSERT INTO r47_schedules (name, expr, zone, queue, payload, next_at) VALUES
 ('nulq', '* * * * *', 'UTC', CONCAT('default', CHAR(0), 'x'), 'p', '2026-01-01'),
 ('nulzone', '* * * * *', CONCAT('UT', CHAR(0), 'C'), 'default', 'p', '2026-01-01'),
 ('nulexpr', CONCAT('* * * * *', CHAR(0), ' junk'), 'UTC', 'default', 'p', '2026-01-01')"
expect_status 0 "schedule ls of expr, zone, queue with a NUL" "$MQ" schedule ls -n 1
is "$OUT" 'nulexpr: cron * * * * *\x00 junk, tz UTC, queue default, missed once
  unusable: its cron holds a NUL byte
  last none
nulq: cron * * * * *, tz UTC, queue default\x00x, missed once
  unusable: its queue holds a NUL byte
  last none
nulzone: cron * * * * *, tz UT\x00C, queue default, missed once
  unusable: its tz holds a NUL byte
  last none' "  each field whole, its NUL as \\x00"
expect_status 0 "schedule ls --json of them" "$MQ" schedule ls --json -n 0
is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d["name"], repr(d["cron"]), repr(d["tz"]), repr(d["queue"]))')" "nulexpr '* * * * *\\x00 junk' 'UTC' 'default'
nulq '* * * * *' 'UTC' 'default\\x00x'
nulzone '* * * * *' 'UT\\x00C' 'default'" "  cron, tz and queue hold every byte"
# a run of each (a ledger row and its job, as firing would have written)
for s in nulexpr nulzone; do
  id=$("$MQ" push --queue default "run of $s")
  sql "INSERT INTO r47_fired (schedule, manual, instant, job) VALUES ('$s', 0, '2025-12-31 23:59:00', $id)"
  expect_status 0 "show of a run of $s" "$MQ" show "$id"
  printf '%s\n' "$OUT" >"$T_TMP/show-$s"
  expect_status 0 "why of a run of $s" "$MQ" why "$id"
  printf '%s\n' "$OUT" >"$T_TMP/why-$s"
  expect_status 0 "show --json of a run of $s" "$MQ" show --json "$id"
  printf '%s\n' "$OUT" >"$T_TMP/show-$s.json"
done
# line FILE LINE: FILE has LINE, byte for byte (1) or not (0)
line() { grep -cFx -e "$2" "$1"; }
is "$(line "$T_TMP/show-nulexpr" 'cron: * * * * *\x00 junk, tz UTC')" 1 "  show: the expression whole"
is "$(line "$T_TMP/show-nulzone" 'cron: * * * * *, tz UT\x00C')" 1 "  show: the zone whole"
is "$(grep -c ', by cron \* \* \* \* \*\\x00 junk in UTC$' "$T_TMP/why-nulexpr")" 1 "  why: the expression whole"
is "$(grep -c ', by cron \* \* \* \* \* in UT\\x00C$' "$T_TMP/why-nulzone")" 1 "  why: the zone whole"
is "$(python3 -c '
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))["schedule"]
    print(repr(d["cron"]), repr(d["tz"]))' "$T_TMP/show-nulexpr.json" "$T_TMP/show-nulzone.json")" "'* * * * *\\x00 junk' 'UTC'
'* * * * *' 'UT\\x00C'" "  show --json: cron and tz hold every byte"
unset MQ_TABLE

done_testing
