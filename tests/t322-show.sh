#!/bin/sh
# mq show: a job whole in every state, its payload (escaped preview, raw
# to -o, JSON string or base64) and its history (failed, expired, kept in
# the archive); text from the table never reaches stdout raw; several
# ids in order, a missing one 1, bad usage 64; nothing written.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
ESC=$(printf '\033')

# claim QUEUE: claims one job of QUEUE, sets RECEIPT
claim() {
  eval "$("$MQ" pop --queue "$1" --shell)"
  RECEIPT=$MQ_RECEIPT
}
# due ID: makes a job given back with a backoff due now
due() {
  sql "UPDATE mq_jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $1"
}
# field OUT KEY: the value of the first "KEY: value" line
field() {
  printf '%s\n' "$1" | sed -n "s/^$2: //p" | sed -n 1p
}

# ---- a job in every state ----
# archived (first: archive takes every finished job), with its history
arch=$("$MQ" push --queue qarch --max-attempts 1 archived)
claim qarch; "$MQ" fail --error 'arch boom' "$RECEIPT" >/dev/null
"$MQ" archive --older-than 0s --dead --quiet >/dev/null 2>&1
ready=$("$MQ" push --queue qready ready)
sched=$("$MQ" push --queue qsched --delay 1h scheduled)
leased=$("$MQ" push --queue qlease leased)
claim qlease
stale=$("$MQ" push --queue qstale stale)
claim qstale
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE id = $stale"
done_id=$("$MQ" push --queue qdone --dedup k1 done)
claim qdone; "$MQ" ack "$RECEIPT"
rec=$("$MQ" push --queue qrec --every 1h recurring)
# failed twice, then dead (max attempts 2)
twice=$("$MQ" push --queue qtwice --max-attempts 2 twice)
claim qtwice
"$MQ" fail --error 'first boom' "$RECEIPT" >/dev/null
due "$twice"
claim qtwice
"$MQ" fail --error 'second boom' "$RECEIPT" >/dev/null
# a lease that ran out, taken back by requeue-stale
exp=$("$MQ" push --queue qexp expiring)
claim qexp
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE id = $exp"
"$MQ" requeue-stale --queue qexp --quiet >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE id = $arch")" 1 \
  "the archived job is in the archive"

# show_state ID STATE DESCRIPTION
show_state() {
  run "$MQ" show "$1"
  if [ "$RC" -eq 0 ] && [ "$(printf '%s\n' "$OUT" | sed -n 1p)" = "job $1" ] &&
    [ "$(field "$OUT" state)" = "$2" ]; then
    ok "$3"
  else
    not_ok "$3" "status $RC; out: $OUT; err: $ERR"
  fi
}
show_state "$ready" ready "a ready job: state ready, status 0"
show_state "$sched" scheduled "a scheduled job: state scheduled"
show_state "$leased" leased "a leased job: state leased"
show_state "$stale" stale "a stale lease: state stale"
show_state "$done_id" done "a done job: state done"
show_state "$twice" dead "a dead job: state dead"
show_state "$arch" "archived (dead)" "an archived job: state archived, and what it was"
show_state "$rec" ready "a recurring job: state ready"

run "$MQ" show "$ready"
is "$(field "$OUT" queue):$(field "$OUT" priority):$(field "$OUT" attempts)" \
  "qready:0:0/10" "show: queue, priority, attempts"
is "$(printf '%s\n' "$OUT" | grep -c '^lease\|^leased\|^last held')" 0 \
  "show: a job never claimed: no lease line, no holder"
like "$(field "$OUT" created)" "20*Z (*ago)" "show: created, with its age"
like "$OUT" "*
payload: 5 bytes
  ready
history:
  none" "show: the payload and an empty history"
run "$MQ" show "$sched"
like "$(field "$OUT" due)" "20*Z (in 59m*)" "show: due in an hour"
run "$MQ" show "$leased"
like "$(field "$OUT" 'leased until')" "20*Z (in 4m*)" "show: leased until"
like "$(field "$OUT" 'leased by')" "?*:[0-9]*" "show: leased by host:pid"
is "$(field "$OUT" 'lease token')" "set" "show: the lease token is set, not shown"
tok=$(sql "SELECT lease_token FROM mq_jobs WHERE id = $leased")
case "$OUT" in ""|*"$tok"*) not_ok "show: the token itself is not printed" ;;
  *) ok "show: the token itself is not printed" ;; esac
run "$MQ" show "$stale"
like "$(field "$OUT" 'leased by')" "?*:[0-9]*" "show: a stale lease: leased by host:pid"
is "$(field "$OUT" 'lease token')" "set" "show: a stale lease: its token is still set"
# a job whose lease ended (given back for later, dead, done) is held by
# nobody: its last holder shown as such, no lease nor token (issue 35)
back=$("$MQ" push --queue qback back)
claim qback
"$MQ" fail --retry-in 1h --error later "$RECEIPT" >/dev/null
is "$(sql "SELECT CONCAT_WS(',', state, lease_token IS NOT NULL, leased_by IS NOT NULL) FROM mq_jobs WHERE id = $back")" \
  "ready,1,1" "table: a job given back keeps its token and last holder"
for id in "$back" "$twice" "$done_id"; do
  run "$MQ" show "$id"
  st=$(field "$OUT" state)
  like "$(field "$OUT" 'last held by')" "?*:[0-9]*" "show: a $st job: last held by host:pid"
  is "$(printf '%s\n' "$OUT" | grep -c '^lease token\|^leased by\|^leased until')" 0 \
    "show: a $st job: no leased by, leased until nor lease token"
done
is "$(field "$("$MQ" show "$back")" state)" scheduled "  (the job given back is scheduled)"
run "$MQ" show --json "$back" "$twice" "$leased" "$stale" "$ready"
is "$(printf '%s\n' "$OUT" | jq -r '[.state, (.leased_by != null), (.last_held_by != null), .has_lease_token, (.leased_until != null)] | map(tostring) | join(",")' | tr '\n' ' ')" \
  "scheduled,false,true,false,false dead,false,true,false,false leased,true,true,true,true stale,true,true,true,true ready,false,false,false,false " \
  "json: leased_by, leased_until and has_lease_token for a held job only; last_held_by whenever one claimed it"
is "$(printf '%s\n' "$OUT" | sed -n 2p | jq -r .last_held_by)" \
  "$(sql "SELECT leased_by FROM mq_jobs WHERE id = $twice")" "json: last_held_by is the table's leased_by"
run "$MQ" show "$done_id"
like "$(field "$OUT" finished)" "20*Z (*ago)" "show: finished at"
is "$(field "$OUT" 'dedup key')" "k1" "show: the dedup key"
run "$MQ" show "$rec"
like "$(field "$OUT" every)" "1h* (from 20*Z)" "show: a recurring job's period and anchor"

# ---- the history ----
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history WHERE job_id = $twice")" 2 \
  "table: two history rows for the job that failed twice"
run "$MQ" show "$twice"
hist=$(printf '%s\n' "$OUT" | sed -n '/^history:$/,$p' | sed 1d)
is "$(printf '%s\n' "$hist" | wc -l | tr -d ' ')" 2 "show: two history lines"
like "$(printf '%s\n' "$hist" | sed -n 1p)" \
  "  20*Z failed, attempt 1, then ready, worker ?*:[0-9]*, error: first boom" \
  "show: the first failure, its attempt, worker and error"
like "$(printf '%s\n' "$hist" | sed -n 2p)" \
  "  20*Z failed, attempt 2, then dead, worker ?*:[0-9]*, error: second boom" \
  "show: the second failure left it dead"
is "$(field "$OUT" error)" "second boom" "show: the last error"
is "$(field "$OUT" attempts)" "2/2" "show: attempts used up"
workers=$(sql "SELECT GROUP_CONCAT(worker ORDER BY seq SEPARATOR ' ') FROM mq_jobs_history WHERE job_id = $twice")
is "$(printf '%s\n' "$hist" | sed 's/.*worker \([^,]*\),.*/\1/' | tr '\n' ' ' | sed 's/ $//')" \
  "$workers" "show: the workers are the table's"
run "$MQ" show "$exp"
like "$OUT" "*
history:
  20*Z expired, attempt 1, then ready, worker ?*:[0-9]*" \
  "show: requeue-stale's expired event"
run "$MQ" show "$arch"
like "$OUT" "*
history:
  20*Z failed, attempt 1, then dead, worker *, error: arch boom" \
  "show: an archived job keeps its history"
like "$(field "$OUT" archived)" "20*Z" "show: when it was archived"

# ---- JSON ----
run "$MQ" show --json "$twice" "$arch" "$ready"
is "$RC" 0 "json: status 0"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 3 "json: one line per job"
if [ -n "$OUT" ] && printf '%s\n' "$OUT" | jq -e . >/dev/null 2>&1; then
  ok "json: every line is valid JSON"
else
  not_ok "json: every line is valid JSON" "$OUT"
fi
is "$(printf '%s\n' "$OUT" | jq -r '[.id, .state, (.history | length)] | @tsv' | tr '\t\n' ', ')" \
  "$twice,dead,2 $arch,archived,1 $ready,ready,0 " \
  "json: in the order given, with their histories"
is "$(printf '%s\n' "$OUT" | sed -n 1p | jq -r '.history | map(.event + ":" + .state + ":" + (.attempt | tostring) + ":" + .error) | join(" ")')" \
  "failed:ready:1:first boom failed:dead:2:second boom" "json: the history's events"
is "$(printf '%s\n' "$OUT" | sed -n 3p | jq -r '[.payload_encoding, .payload, .payload_size, .stored_state] | @tsv')" \
  "utf8	ready	5	ready" "json: a UTF-8 payload as a string"

# ---- payloads: NUL, ESC, invalid UTF-8 ----
printf 'a\000b\033[31m\377c\n' >"$T_TMP/bin"
bin=$(printf 'a\000b\033[31m\377c\n' | "$MQ" push --queue qbin)
is "$(sql "SELECT HEX(payload) FROM mq_jobs WHERE id = $bin")" \
  "$(od -An -tx1 "$T_TMP/bin" | tr -d ' \n' | tr a-f A-F)" "the binary payload is stored whole"
run "$MQ" show "$bin"
like "$OUT" "*
payload: 11 bytes
  a\\\\x00b\\\\x1b[31m\\\\xffc\\\\x0a
*" "terminal: the payload preview escaped"
case "$OUT" in ""|*"$ESC"*) not_ok "terminal: no raw ESC on stdout" ;;
  *) ok "terminal: no raw ESC on stdout" ;; esac
rm -f "$T_TMP/o"
run "$MQ" show -o "$T_TMP/o" "$bin"
is "$RC" 0 "-o FILE: status 0"
check "-o FILE: byte-identical payload" cmp -s "$T_TMP/o" "$T_TMP/bin"
like "$OUT" "job $bin*payload: 11 bytes, written to *" "-o FILE: the job still shown"
"$MQ" show -o - "$bin" >"$T_TMP/o2"
check "-o -: the raw payload alone on stdout" cmp -s "$T_TMP/o2" "$T_TMP/bin"
run "$MQ" show --json "$bin"
is "$(printf '%s\n' "$OUT" | jq -r .payload_encoding)" base64 "json: base64 for a payload not UTF-8"
printf '%s\n' "$OUT" | jq -r .payload | base64 -d >"$T_TMP/o3"
check "json: the base64 round-trips" cmp -s "$T_TMP/o3" "$T_TMP/bin"
if printf '%s\n' "$OUT" | python3 -m json.tool >/dev/null 2>&1; then
  ok "json: valid for python3 -m json.tool"
else
  not_ok "json: valid for python3 -m json.tool" "$OUT"
fi
# a UTF-8 payload with control characters: a JSON string, exact
printf 'caf\303\251 \033[0m\ttab' >"$T_TMP/u8"
u8=$("$MQ" push --queue qbin <"$T_TMP/u8")
"$MQ" show --json "$u8" | jq -j .payload >"$T_TMP/o4"
check "json: a UTF-8 payload with controls round-trips as a string" cmp -s "$T_TMP/o4" "$T_TMP/u8"
# a long payload: a preview, its size
head -c 3000 /dev/zero | tr '\0' 'x' >"$T_TMP/long"
long=$("$MQ" push --queue qbin <"$T_TMP/long")
run "$MQ" show "$long"
like "$OUT" "*
payload: 3000 bytes
  $(head -c 1024 "$T_TMP/long")... (1976 more bytes)
*" "terminal: a long payload cut to 1 KiB, the rest counted"
"$MQ" show -o "$T_TMP/o5" "$long" >/dev/null
check "-o FILE: a long payload whole" cmp -s "$T_TMP/o5" "$T_TMP/long"

# ---- hostile rows, written by other programs ----
h=$(printf "x\033]0;pwn\007")
sql "SET SESSION check_constraint_checks=0;
  INSERT INTO mq_jobs (queue, state, payload, leased_until, lease_token, leased_by, last_error, dedup_key)
  VALUES ('q$h', 'leased', 'p', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, REPEAT('a', 32), 'w$h', 'e$h', 'd$h')"
hid=$(sql "SELECT MAX(id) FROM mq_jobs")
sql "INSERT INTO mq_jobs_history (job_id, event, state, attempt, worker, error)
  VALUES ($hid, 'failed', 'ready', 1, 'hw$h', 'he$h')"
run "$MQ" show "$hid"
is "$RC" 0 "hostile: shown, status 0"
case "$OUT" in ""|*"$ESC"*|*"$(printf '\007')"*) not_ok "hostile: no raw ESC nor BEL on stdout" "$OUT" ;;
  *) ok "hostile: no raw ESC nor BEL on stdout" ;; esac
is "$(field "$OUT" queue):$(field "$OUT" 'leased by'):$(field "$OUT" error):$(field "$OUT" 'dedup key')" \
  'qx\x1b]0;pwn\x07:wx\x1b]0;pwn\x07:ex\x1b]0;pwn\x07:dx\x1b]0;pwn\x07' \
  "hostile: queue, leased by, error, dedup key escaped"
like "$OUT" '*, worker hwx\\x1b]0;pwn\\x07, error: hex\\x1b]0;pwn\\x07' \
  "hostile: the history's worker and error escaped"
run "$MQ" show --json "$hid"
case "$OUT" in ""|*"$ESC"*) not_ok "hostile json: no raw ESC" ;;
  *) ok "hostile json: no raw ESC" ;; esac
is "$(printf '%s\n' "$OUT" | jq -r '[.queue, .leased_by, .error, .dedup_key, .history[0].worker, .history[0].error] | join("|")')" \
  "q$h|w$h|e$h|d$h|hw$h|he$h" "hostile json: the values round-trip"

# ---- several ids, missing ones, usage ----
before=$(sql "CHECKSUM TABLE mq_jobs, mq_jobs_archive, mq_jobs_history" | cut -f2 | tr '\n' ' ')
run "$MQ" show "$done_id" 999999 "$ready"
is "$RC" 1 "missing id: status 1"
is "$ERR" "mq show: job 999999: no such job" "missing id: one line on stderr"
is "$(printf '%s\n' "$OUT" | grep '^job ' | tr '\n' ' ')" "job $done_id job $ready " \
  "missing id: the others shown, in order, a blank line between"
like "$OUT" "*

job $ready*" "several: a blank line between jobs"
run "$MQ" show 999999 "$ready"
is "$(printf '%s\n' "$OUT" | sed -n 1p)" "job $ready" "a missing first id: no blank line before the first job shown"
run "$MQ" show 999998 999999
is "$RC:$OUT" "1:" "only missing ids: status 1, nothing on stdout"
is "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" 2 "only missing ids: a line per id"
rm -f "$T_TMP/none"
run "$MQ" show -o "$T_TMP/none" 999999
check "missing id with -o: no file written" test "$RC" = 1 -a ! -e "$T_TMP/none"
expect_status 64 "usage: no id" "$MQ" show
expect_status 64 "usage: a bad id" "$MQ" show "$ready" abc
expect_status 64 "usage: id 0" "$MQ" show 0
expect_status 64 "usage: -o with two ids" "$MQ" show -o "$T_TMP/x" "$ready" "$done_id"
check "usage: -o with two ids writes no file" test ! -e "$T_TMP/x"
expect_status 64 "usage: -o - with --json" "$MQ" show --json -o - "$ready"
expect_status 64 "usage: an unknown option" "$MQ" show --bogus "$ready"
is "$OUT" "" "usage: nothing on stdout"
expect_status 69 "no server: 69" env MQ_SOCKET=/nonexistent "$MQ" show "$ready"
expect_status 73 "-o into a missing directory: 73" "$MQ" show -o "$T_TMP/no/such" "$ready"
is "$(sql "CHECKSUM TABLE mq_jobs, mq_jobs_archive, mq_jobs_history" | cut -f2 | tr '\n' ' ')" \
  "$before" "show changes nothing in the tables"
"$MQ" show --json "$ready" "$twice" | head -c 10 >/dev/null 2>"$T_TMP/pipe-err"
is "$(cat "$T_TMP/pipe-err")" "" "a closed pipe: quiet"

done_testing
