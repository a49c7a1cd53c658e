#!/bin/sh
# The producer's and the operator's side of limits (issue 31): mq push
# --key stores the job's key (one job, --lines, -0, with --dedup, --every
# and --delay), refuses a bad key with one line and status 64 and writes
# nothing; mq show, mq ls --key and the JSON of show, ls and why show it,
# escaped. mq limit shows, sets and clears a queue's limits in its row of
# <table>_queues (text and JSON), keeps its pause, makes no row to clear,
# and refuses bad input with one line and status 64, changing nothing.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

# has ACTUAL TEXT DESCRIPTION: ACTUAL contains TEXT, as it is
has() {
  case $1 in
  *"$2"*) ok "$3" ;;
  *) not_ok "$3" "got: '$1'
expected to contain: '$2'" ;;
  esac
}
key_of() { sql "SELECT IFNULL(HEX(job_key), 'NULL') FROM mq_jobs WHERE id = $1"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; }

# ---- push --key ----
run "$MQ" push --queue k --key customer:42 one
a=$OUT
is "$RC:$(key_of "$a")" "0:$(hex customer:42)" "push --key stores the key in job_key"
run "$MQ" push --queue k none
is "$RC:$(key_of "$OUT")" "0:NULL" "a push without --key leaves job_key NULL"
printf 'l1\nl2\nl3\n' >"$T_TMP/lines"
run "$MQ" push --lines --quiet --queue k --key repo/web <"$T_TMP/lines"
lines=$(printf '%s\n' "$OUT" | tr '\n' ,)
is "$RC:$(sql "SELECT GROUP_CONCAT(payload, '=', job_key ORDER BY id) FROM mq_jobs WHERE id IN (${lines%,})")" \
  "0:l1=repo/web,l2=repo/web,l3=repo/web" "push --lines --key: every job of the stream has the key"
printf 'z1\0z2\0' | "$MQ" push -0 --quiet --queue k --key 'z key' >"$T_TMP/ids0"
is "$(sql "SELECT GROUP_CONCAT(payload, '=', job_key ORDER BY id) FROM mq_jobs WHERE job_key = 'z key'")" \
  "z1=z key,z2=z key" "push -0 --key: every record's job has the key"
dd=$("$MQ" push --queue k --dedup d1 --key kd dedup)
is "$(sql "SELECT CONCAT(dedup_key, '/', job_key) FROM mq_jobs WHERE id = $dd")" "d1/kd" \
  "--dedup with --key: both keys stored"
is "$("$MQ" push --queue k --dedup d1 --key other again)" "$dd" \
  "--dedup still finds the live job (the key is not part of it)"
e=$("$MQ" push --queue k --every 1h --key ke recurring)
is "$(sql "SELECT CONCAT(every_us, '/', job_key) FROM mq_jobs WHERE id = $e")" "3600000000/ke" \
  "--every with --key"
e2=$("$MQ" push --queue k --every 1h --dedup de --key ke2 both)
is "$(sql "SELECT CONCAT(every_us, '/', dedup_key, '/', job_key) FROM mq_jobs WHERE id = $e2")" \
  "3600000000/de/ke2" "--every, --dedup and --key together"
l=$("$MQ" push --queue k --delay 1h --key kl later)
is "$(sql "SELECT CONCAT(available_at > UTC_TIMESTAMP(6) + INTERVAL 59 MINUTE, '/', job_key) FROM mq_jobs WHERE id = $l")" \
  "1/kl" "--delay with --key"
at=$(printf '%s\n' "4f" | "$MQ" push --queue k --at @2000000000 --key kat)
is "$(key_of "$at")" "$(hex kat)" "--at with --key (payload from stdin)"
k255=$(head -c 255 /dev/zero | tr '\0' k)
run "$MQ" push --queue k --key "$k255" long
is "$RC:$(sql "SELECT LENGTH(job_key) FROM mq_jobs WHERE id = ${OUT:-0}")" "0:255" \
  "a key of 255 bytes is taken"
# any byte but control bytes: UTF-8, quotes, a backslash, a byte that is
# no UTF-8
odd=$(printf 'cl\303\251 "q" a\\b \377')
run "$MQ" push --queue k --key "$odd" odd
o=$OUT
is "$RC:$(key_of "$o")" "0:$(hex "$odd")" "a key of UTF-8, quotes, a backslash and a byte 0xff is stored as given"

# ---- bad keys: one line, 64, nothing written ----
sum=$(table_sum)
k256=$(head -c 256 /dev/zero | tr '\0' k)
msg="1 to 255 bytes, no control characters"
expect_status 64 "push --key '' is refused" "$MQ" push --queue k --key '' x
is "$ERR" "mq push: invalid --key '': $msg" "  its message"
expect_status 64 "push --key of 256 bytes is refused" "$MQ" push --queue k --key "$k256" x
like "$ERR" "mq push: invalid --key 'kkkk*...': $msg" "  its message"
expect_status 64 "push --key with a tab is refused" "$MQ" push --queue k --key "$(printf 'a\tb')" x
is "$ERR" "mq push: invalid --key 'a\\x09b': $msg" "  its message shows the byte escaped"
expect_status 64 "push --key with a newline is refused" "$MQ" push --queue k --key "$(printf 'a\nb')" x
is "$ERR" "mq push: invalid --key 'a\\x0ab': $msg" "  its message"
expect_status 64 "push --key with DEL (0x7f) is refused" "$MQ" push --queue k --key "$(printf 'a\177')" x
is "$ERR" "mq push: invalid --key 'a\\x7f': $msg" "  its message"
expect_status 64 "push --key with ESC is refused" "$MQ" push --queue k --key "$(printf '\033[31m')" x
is "$ERR" "mq push: invalid --key '\\x1b[31m': $msg" "  its message"
expect_status 64 "push --lines --key '' is refused" sh -c '"$0" push --lines --queue k --key "" <"$1"' "$MQ" "$T_TMP/lines"
is "$ERR" "mq push: invalid --key '': $msg" "  its message"
expect_status 64 "push -0 --key of 256 bytes is refused" sh -c 'printf "a\0" | "$0" push -0 --queue k --key "$1"' "$MQ" "$k256"
expect_status 64 "push --lines --key with a control byte is refused" sh -c '"$0" push --lines --queue k --key "$1" <"$2"' "$MQ" "$(printf 'x\001')" "$T_TMP/lines"
is "$ERR" "mq push: invalid --key 'x\\x01': $msg" "  its message"
is "$OUT" "" "  no id printed"
expect_status 64 "push --key without a value" "$MQ" push --queue k x --key
is "$(table_sum)" "$sum" "the refused pushes wrote nothing"

# ---- show ----
run "$MQ" show "$a"
like "$RC:$OUT" "0:*
key: customer:42
*" "mq show has a key line"
run "$MQ" show "$o"
is "$(printf '%s\n' "$OUT" | grep '^key: ')" 'key: clé "q" a\\b \xff' \
  "mq show: the key escaped (UTF-8 as is, a backslash doubled, an invalid byte as \\xHH)"
run "$MQ" show --json "$o"
has "$OUT" ',"key":"clé \"q\" a\\b \ufffd",' "mq show --json: the key JSON-escaped"
run "$MQ" show "$(sql "SELECT id FROM mq_jobs WHERE job_key IS NULL LIMIT 1")"
is "$RC:$(printf '%s\n' "$OUT" | grep -c '^key: ')" "0:0" "mq show: no key line for a job without a key"
run "$MQ" show --json "$(sql "SELECT id FROM mq_jobs WHERE job_key IS NULL LIMIT 1")"
like "$OUT" '*,"key":null,*' "mq show --json: key null for a job without one"
run "$MQ" show "$dd"
like "$OUT" "*
key: kd
dedup key: d1
*" "mq show: the key beside the dedup key"

# ---- why --json ----
run "$MQ" why --json "$a"
like "$OUT" '*,"key":"customer:42",*' "mq why --json has the key"

# ---- ls --key ----
run "$MQ" ls --key repo/web --ids
is "$RC:$(printf '%s\n' "$OUT" | tr '\n' ,)" "0:$lines" "mq ls --key: the jobs of that key, no other"
run "$MQ" ls --key repo/web --queue k --state ready --ids
is "$RC:$(printf '%s\n' "$OUT" | tr '\n' ,)" "0:$lines" "mq ls --key with --queue and --state"
run "$MQ" ls --key repo/web --queue other --ids
is "$RC:$OUT" "1:" "mq ls --key of another queue: none (status 1)"
run "$MQ" ls --key nobody
is "$RC" 1 "mq ls --key with no job: status 1"
run "$MQ" ls --key "$odd" --json
like "$RC:$OUT" "0:{\"id\":$o,*" "mq ls --key with odd bytes finds the job"
has "$OUT" ',"key":"clé \"q\" a\\b \ufffd","if_parent_dies":null}' "  its JSON key escaped"
is "$(printf '%s\n' "$OUT" | wc -l)" 1 "  that job alone"
run "$MQ" ls --queue k --limit 1 --json
like "$OUT" '*,"key":"customer:42","if_parent_dies":null}' "mq ls --json has the key"
run "$MQ" ls --key "$k255" --ids
is "$RC:$(printf '%s\n' "$OUT" | wc -l)" "0:1" "mq ls --key of 255 bytes"
expect_status 64 "mq ls --key '' is refused" "$MQ" ls --key ''
is "$ERR" "mq ls: invalid --key '': $msg" "  its message"
expect_status 64 "mq ls --key of 256 bytes is refused" "$MQ" ls --key "$k256"
expect_status 64 "mq ls --key with a control byte is refused" "$MQ" ls --key "$(printf 'a\tb')"
is "$ERR" "mq ls: invalid --key 'a\\x09b': $msg" "  its message"

# ---- archived jobs keep their key ----
ar=$("$MQ" push --queue arch --key customer:42 archived)
rcpt=$("$MQ" pop --queue arch -o /dev/null)
"$MQ" ack "$rcpt"
"$MQ" archive --older-than 0s --quiet >/dev/null 2>&1
is "$(sql "SELECT HEX(job_key) FROM mq_jobs_archive WHERE id = $ar")" "$(hex customer:42)" \
  "mq archive copies the key"
run "$MQ" ls --state archived --key customer:42 --ids
is "$RC:$OUT" "0:$ar" "mq ls --state archived --key finds the archived job"
run "$MQ" ls --state done,archived --key customer:42 --ids
is "$RC:$(printf '%s\n' "$OUT" | tr '\n' ,)" "0:$ar," "mq ls over both tables with --key"
run "$MQ" show --json "$ar"
like "$OUT" '*"state":"archived",*"key":"customer:42",*' "mq show of an archived job has its key"
# ---- mq limit ----
limits() { sql "SELECT CONCAT_WS(' ', IFNULL(concurrency, '-'), IFNULL(per_key, '-'), IFNULL(rate, '-'), IFNULL(rate_us, '-'), IFNULL(key_rate, '-'), IFNULL(key_rate_us, '-'), paused) FROM mq_jobs_queues WHERE queue = '$1'"; }
rows() { sql "SELECT COUNT(*) FROM mq_jobs_queues"; }
run "$MQ" limit deploy
is "$RC:$OUT" "0:no limits" "mq limit QUEUE without limits: no limits"
run "$MQ" limit deploy --json
is "$RC:$OUT" '0:{"queue":"deploy","concurrency":null,"per_key":null,"rate":null,"rate_us":null,"key_rate":null,"key_rate_us":null}' \
  "mq limit --json without limits: nulls"
is "$(rows)" 0 "showing makes no row"
run "$MQ" limit deploy --per-key 1
is "$RC:$OUT" "0:per-key 1" "mq limit --per-key 1: sets it, shows it"
is "$(limits deploy)" "- 1 - - - - 0" "  the row: per_key 1, nothing else"
run "$MQ" limit --concurrency 3 deploy
is "$RC:$OUT" "0:concurrency 3
per-key 1" "mq limit --concurrency 3 (before the queue): per-key stays"
is "$(limits deploy)" "3 1 - - - - 0" "  the row: both"
run "$MQ" limit deploy --concurrency 5 --per-key 2 --json
is "$RC:$OUT" '0:{"queue":"deploy","concurrency":5,"per_key":2,"rate":null,"rate_us":null,"key_rate":null,"key_rate_us":null}' \
  "both in one call, JSON"
is "$(limits deploy)" "5 2 - - - - 0" "  the row"
run "$MQ" limit deploy --concurrency 4294967295
is "$RC:$OUT" "0:concurrency 4294967295
per-key 2" "the largest limit, 4294967295"
run "$MQ" limit deploy --clear-per-key
is "$RC:$OUT" "0:concurrency 4294967295" "--clear-per-key removes that one"
is "$(limits deploy)" "4294967295 - - - - - 0" "  the row"
run "$MQ" limit deploy --clear-concurrency --per-key 7
is "$RC:$OUT" "0:per-key 7" "--clear-concurrency with --per-key"
"$MQ" pause deploy >/dev/null
run "$MQ" limit deploy --concurrency 2
is "$RC:$(limits deploy)" "0:2 7 - - - - 1" "a paused queue stays paused when its limits change"
"$MQ" resume deploy >/dev/null
sql "UPDATE mq_jobs_queues SET rate = 10, rate_us = 1000000, key_rate = 2, key_rate_us = 60000000 WHERE queue = 'deploy'"
run "$MQ" limit deploy
is "$RC:$OUT" "0:concurrency 2
per-key 7
rate 10/1s
key-rate 2/1m00s" "rates another program wrote are shown"
run "$MQ" limit deploy --json
is "$OUT" '{"queue":"deploy","concurrency":2,"per_key":7,"rate":10,"rate_us":1000000,"key_rate":2,"key_rate_us":60000000}' \
  "  and in JSON"
run "$MQ" limit deploy --per-key 3
is "$(limits deploy)" "2 3 10 1000000 2 60000000 0" "setting one limit keeps the rates"
"$MQ" pause deploy >/dev/null
run "$MQ" limit deploy --clear
is "$RC:$OUT" "0:no limits" "--clear: no limits"
is "$(limits deploy)" "- - - - - - 1" "  every limit NULL, the rates too, the pause kept"
"$MQ" resume deploy >/dev/null
run "$MQ" limit never-limited --clear
is "$RC:$OUT:$(sql "SELECT COUNT(*) FROM mq_jobs_queues WHERE queue = 'never-limited'")" \
  "0:no limits:0" "--clear of a queue without a row makes none"
run "$MQ" limit never-limited --clear-per-key --json
is "$RC:$(sql "SELECT COUNT(*) FROM mq_jobs_queues WHERE queue = 'never-limited'")" \
  "0:0" "--clear-per-key of a queue without a row makes none"
run "$MQ" limit new.q-1 --per-key 1
is "$RC:$(limits new.q-1)" "0:- 1 - - - - 0" "a queue without jobs nor row gets its row"

# bad input: one line, 64, nothing changed
"$MQ" limit deploy --concurrency 3 --per-key 1 >/dev/null
sum=$(table_sum mq_jobs_queues)
for opt in --concurrency --per-key; do
  for v in 0 -1 x '' 4294967296 99999999999999999999 1.5 ' 1' 1e3 +1; do
    expect_status 64 "$opt '$v' is refused" "$MQ" limit deploy $opt "$v"
    is "$ERR" "mq limit: invalid value for $opt: '$v' (an integer from 1 to 4294967295)" \
      "  its message"
  done
done
expect_status 64 "an invalid queue name" "$MQ" limit 'a b' --per-key 1
is "$ERR" "mq limit: invalid queue name 'a b': use 1 to 64 of A-Z a-z 0-9 _ . -" "  its message"
expect_status 64 "a queue name with a backquote" "$MQ" limit 'x`' --clear
expect_status 64 "a queue name of 65 characters" "$MQ" limit "$(head -c 65 /dev/zero | tr '\0' q)"
expect_status 64 "no queue" "$MQ" limit --per-key 1
is "$ERR" "mq limit: one QUEUE expected" "  its message"
expect_status 64 "two queues" "$MQ" limit a b --per-key 1
expect_status 64 "--clear with --per-key" "$MQ" limit deploy --clear --per-key 2
is "$ERR" "mq limit: --clear removes every limit: no other limit option with it" "  its message"
expect_status 64 "--clear with --clear-concurrency" "$MQ" limit deploy --clear-concurrency --clear
expect_status 64 "--per-key with --clear-per-key" "$MQ" limit deploy --per-key 2 --clear-per-key
is "$ERR" "mq limit: --per-key and --clear-per-key exclude each other" "  its message"
expect_status 64 "--concurrency with --clear-concurrency" "$MQ" limit deploy --clear-concurrency --concurrency 2
is "$ERR" "mq limit: --concurrency and --clear-concurrency exclude each other" "  its message"
expect_status 64 "--rate with --clear-rate" "$MQ" limit deploy --rate 10/s --clear-rate
is "$ERR" "mq limit: --rate and --clear-rate exclude each other" "  its message"
expect_status 64 "--key-rate with --clear-key-rate" "$MQ" limit deploy --key-rate 1/s --clear-key-rate
is "$ERR" "mq limit: --key-rate and --clear-key-rate exclude each other" "  its message"
expect_status 64 "--rate with a blank" "$MQ" limit deploy --rate '10 /s'
is "$ERR" "mq limit: invalid --rate '10 /s': N/D expected (N a second alone), e.g. 10/s, 600/5m, 10/1h30m" "  its message quotes the whole value"
for r in 5/ 1/0s 1/36601d; do
  expect_status 64 "--rate $r: 64" "$MQ" limit deploy --rate "$r"
  expect_status 64 "--key-rate $r: 64" "$MQ" limit deploy --key-rate "$r"
done
is "$ERR" "mq limit: invalid --key-rate '1/36601d': the window D must be a duration from 1ms to 36600d, or a unit alone (ms, s, m or min, h, d)" \
  "  its message says the bounds"
expect_status 64 "--queue is not an option" "$MQ" limit --queue deploy
is "$(table_sum mq_jobs_queues):$(limits deploy)" "$sum:3 1 - - - - 0" \
  "the refused calls changed nothing"
expect_status 78 "a missing table: 78" "$MQ" limit --table nosuch deploy

# a stop signal while the change waits for a lock: the change is made
# and said, then 143 (a900bf0 died at once, 143 and nothing said, and
# the change was made after it had gone); the same for pause
"$MQ" limit held --concurrency 5 >/dev/null
"$MQ" resume held >/dev/null
for cmd in "limit held --concurrency 21" "pause held"; do
  sql "BEGIN; SELECT * FROM mq_jobs_queues WHERE queue = 'held' FOR UPDATE; SELECT SLEEP(3); COMMIT" >/dev/null &
  locker=$!
  sleep 0.5
  # shellcheck disable=SC2086
  "$MQ" $cmd >"$T_TMP/held.out" 2>"$T_TMP/held.err" &
  p=$!
  sleep 1
  kill -TERM "$p"
  wait "$p"
  rc=$?
  wait "$locker"
  is "$rc:$(cat "$T_TMP/held.err")" "143:" "mq $cmd, SIGTERM in a lock wait: 143 once done"
  case $cmd in
    limit*) is "$(cat "$T_TMP/held.out"):$(limits held)" "concurrency 21:21 - - - - - 0" "  the change said and made" ;;
    *) is "$(cat "$T_TMP/held.out"):$(sql "SELECT paused FROM mq_jobs_queues WHERE queue = 'held'")" "queue 'held' paused:1" "  the change said and made" ;;
  esac
done
# a stop signal ends mq cancel's list: the jobs before it cancelled and
# said, those after it not touched (on a900bf0 killed at once, the lines
# of the jobs it had cancelled lost; then, holding the signal, it
# cancelled the whole list)
seq 1 3000 | "$MQ" push --queue clist --lines --quiet >"$T_TMP/clist.ids"
# shellcheck disable=SC2046
"$MQ" cancel $(cat "$T_TMP/clist.ids") >"$T_TMP/clist.out" 2>/dev/null &
p=$!
sleep 0.5
kill -TERM "$p"
wait "$p"
rc=$?
dead=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'clist' AND state = 'dead'")
is "$rc:$(grep -c ' cancelled$' "$T_TMP/clist.out")" "143:$dead" "mq cancel of 3,000 ids, SIGTERM: 143, each job it cancelled said"
check "  and the list ended there ($dead of 3000)" test "$dead" -lt 3000
done_testing
