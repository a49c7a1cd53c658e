#!/bin/sh
# mq why and mq ls: a job in every state, each explained (first line and
# exit status, --json), listed by state, queue, error text and time,
# paged by id exactly once; text from the table escaped; a closed pipe
# quiet.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# claim QUEUE: claims one job of QUEUE, sets RECEIPT
claim() {
  eval "$("$MQ" pop --queue "$1" --shell)"
  RECEIPT=$MQ_RECEIPT
}

# ---- a job in every state, each in a queue of its own ----
arch=$("$MQ" push --queue qarch archived)
claim qarch; "$MQ" ack "$RECEIPT"
"$MQ" archive --older-than 0s >/dev/null 2>&1
done_id=$("$MQ" push --queue qdone done)
claim qdone; "$MQ" ack "$RECEIPT"
dead=$("$MQ" push --queue qdead dead)
claim qdead; "$MQ" fail --no-retry --error 'disk 50%_full: boom' "$RECEIPT" >/dev/null
used=$("$MQ" push --queue qused --max-attempts 1 used)
claim qused; "$MQ" fail --error 'timed out' "$RECEIPT" >/dev/null
paused=$("$MQ" push --queue qpaused paused)
"$MQ" pause qpaused >/dev/null
sched=$("$MQ" push --queue qsched --delay 1h scheduled)
leased=$("$MQ" push --queue qlease leased)
claim qlease
stale=$("$MQ" push --queue qstale stale)
claim qstale
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE id = $stale"
first=$("$MQ" push --queue qready first)
ready=$("$MQ" push --queue qready ready)
rec=$("$MQ" push --queue qrec --every 1h recurring)
hostile_err=$(printf 'bad\033[31m\nline\342\200\256rev 100%%')
host=$("$MQ" push --queue qhost hostile)
claim qhost; "$MQ" fail --no-retry --error "$hostile_err" "$RECEIPT" >/dev/null

# ---- mq why: first line and status of each ----
# why_is ID STATUS GLOB DESCRIPTION
why_is() {
  run "$MQ" why "$1"
  first_line=$(printf '%s\n' "$OUT" | sed -n 1p)
  case "$RC:$first_line" in
  $2:$3) ok "$4" ;;
  *) not_ok "$4" "status $RC, first line: $first_line; stderr: $ERR" ;;
  esac
}
why_is "$ready" 0 "job $ready is ready and due: it is waiting for a consumer (1 job ahead of it)" \
  "why: ready and due, one job ahead (0)"
why_is "$paused" 10 "job $paused waits: its queue 'qpaused' is paused*" \
  "why: a paused queue (10)"
why_is "$sched" 11 "job $sched is scheduled: it is due at 20*Z (in 59m*)" \
  "why: scheduled, due in an hour (11)"
why_is "$leased" 12 "job $leased is running: it is leased by *:* until 20*Z (in 4m*)" \
  "why: leased, by host:pid, until (12)"
why_is "$stale" 13 "job $stale has a stale lease: *; the worker is gone: mq requeue-stale will take it" \
  "why: a stale lease, requeue-stale will take it (13)"
why_is "$dead" 14 "job $dead is dead since 20*Z (*ago), with error: disk 50%_full: boom" \
  "why: dead, since when, with its error (14)"
why_is "$used" 14 "job $used is dead since *: its attempts are used up, with error: timed out" \
  "why: dead, attempts used up (14)"
why_is "$done_id" 15 "job $done_id is done (finished at 20*Z)" "why: done (15)"
why_is "$arch" 16 "job $arch is archived (done at 20*Z)" "why: archived (16)"
why_is "$rec" 0 "job $rec is ready and due: *; it is recurring, next due at 20*" \
  "why: recurring, next due at"
why_is "$host" 14 "job $host is dead since *, with error: bad\\\\x1b[31m\\\\x0aline\\\\xe2\\\\x80\\\\xaerev 100%" \
  "why: a hostile error text comes out escaped"
run "$MQ" why "$stale"
like "$OUT" "*
leased by: *:*" "why: the facts follow, key: value lines (leased by)"
like "$OUT" "*
attempts: 1/10
*" "why: attempts in the facts"
run "$MQ" why "$paused"
like "$OUT" "*
paused: yes*" "why: the fact that the queue is paused"

expect_status 1 "why: no such job: status 1" "$MQ" why 99999
like "$ERR" "mq why: no job 99999 *" "why: no such job: one line naming it"
expect_status 64 "why: a bad id: 64" "$MQ" why 12x
expect_status 64 "why: no id: 64" "$MQ" why
expect_status 64 "why: two ids: 64" "$MQ" why 1 2

# --json: parseable, the fields raw
json_field() { # JSON FIELD: the field's value, as Python prints it
  printf '%s' "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
run "$MQ" why --json "$leased"
is "$RC" 12 "why --json: the same status"
is "$(json_field "$OUT" answer)" leased "why --json: answer"
is "$(json_field "$OUT" status)" 12 "why --json: status"
is "$(json_field "$OUT" queue)" qlease "why --json: queue"
like "$(json_field "$OUT" leased_by)" "*:*" "why --json: leased_by"
like "$(json_field "$OUT" leased_until_from_now_us)" "2[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]" \
  "why --json: the lease's end in raw microseconds from now"
run "$MQ" why --json "$host"
is "$(json_field "$OUT" error)" "$hostile_err" "why --json: the hostile error, exact through JSON"
run "$MQ" why --json "$ready"
is "$(json_field "$OUT" ahead)" 1 "why --json: jobs ahead"
run "$MQ" why --json 99999
is "$RC:$(json_field "$OUT" answer)" "1:missing" "why --json: a missing job"

# ---- mq ls ----
ids() { "$MQ" ls --ids "$@" | tr '\n' ' '; }
is "$(ids --state ready)" "$paused $first $ready $rec " \
  "ls --state ready (in a paused queue too)"
is "$(ids --state scheduled)" "$sched " "ls --state scheduled"
is "$(ids --state leased)" "$leased " "ls --state leased (a live lease)"
is "$(ids --state stale)" "$stale " "ls --state stale"
is "$(ids --state done)" "$done_id " "ls --state done"
is "$(ids --state dead)" "$dead $used $host " "ls --state dead"
is "$(ids --state archived)" "$arch " "ls --state archived"
is "$(ids --state done,archived)" "$arch $done_id " "ls: two states, both tables, by id"
is "$(ids)" "$done_id $dead $used $paused $sched $leased $stale $first $ready $rec $host " \
  "ls: every job but the archived ones"
is "$(ids --queue qready)" "$first $ready " "ls --queue"
is "$(ids --queue qstale --state leased)" "" "ls --queue --state: nothing"
expect_status 1 "ls: nothing matched: status 1" "$MQ" ls --queue nosuch
is "$(ids --error '50%_full')" "$dead " "ls --error: % and _ as plain text"
is "$(ids --error '5_%')" "" "ls --error: % and _ are not wildcards"
is "$(ids --error 'timed')" "$used " "ls --error: a substring"
sql "UPDATE mq_jobs SET created_at = UTC_TIMESTAMP(6) - INTERVAL 2 DAY WHERE id = $sched"
is "$(ids --before 1d)" "$sched " "ls --before: made over a day ago"
is "$(ids --since 1d --queue qsched)" "" "ls --since: not within a day"
is "$(ids --since 1d --queue qready)" "$first $ready " "ls --since: within a day"
expect_status 64 "ls: an unknown state: 64" "$MQ" ls --state ready,nope
expect_status 64 "ls: --limit 0: 64" "$MQ" ls --limit 0
expect_status 64 "ls: --limit 10001: 64" "$MQ" ls --limit 10001
expect_status 64 "ls: --json with --ids: 64" "$MQ" ls --json --ids
expect_status 64 "ls: an operand: 64" "$MQ" ls foo

# the table: a header, a line per job, the error escaped and cut
run env COLUMNS=72 "$MQ" ls --state dead
like "$OUT" "ID *QUEUE *STATE *PRIO *ATTEMPT *AGE *DUE/LEASE *WORKER *ERROR*" "ls: the table's header"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 4 "ls: one line per job, hostile text included"
like "$OUT" "*bad\\\\x1b[31m\\\\x0a*" "ls: the error escaped"
printf '%s\n' "$OUT" >"$T_TMP/table"
check "ls: only printable ASCII (no ESC, no bidi override)" \
  test "$(LC_ALL=C tr -d '\n\040-\176' <"$T_TMP/table" | wc -c)" -eq 0
check "ls: lines cut to \$COLUMNS (72)" test "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T_TMP/table")" -le 72
like "$(printf '%s\n' "$OUT" | grep "^ *$host ")" "*..." "ls: a long error cut with ..."
run env COLUMNS=1000 "$MQ" ls --state dead
like "$OUT" "*rev 100%*" "ls: the whole error when it fits"
run "$MQ" ls --state leased
like "$OUT" "*qlease *leased * 0 * 1/10 * 4m[0-5][0-9]s left *:* *" "ls: the lease left and its holder"

# --json: one object per line, parseable
run "$MQ" ls --json
printf '%s\n' "$OUT" >"$T_TMP/json"
is "$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    j = json.loads(line)
    n += 1
print(n)' "$T_TMP/json")" 11 "ls --json: every line a JSON object"
is "$(grep "\"id\":$host," "$T_TMP/json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["error"])')" \
  "$hostile_err" "ls --json: the hostile error exact"

# paging: limit + after covers every job exactly once
sql "INSERT INTO mq_jobs (queue, payload) SELECT 'bulk', '' FROM seq_1_to_250"
after=0 pages=0
: >"$T_TMP/paged"
while :; do
  "$MQ" ls --ids --queue bulk --state ready --limit 60 --after "$after" >"$T_TMP/page" 2>"$T_TMP/more" || break
  cat "$T_TMP/page" >>"$T_TMP/paged"
  pages=$((pages + 1))
  grep -q "^mq ls: more: --after $(tail -n 1 "$T_TMP/page")\$" "$T_TMP/more" || break
  after=$(tail -n 1 "$T_TMP/page")
done
is "$pages" 5 "paging: 250 jobs in 5 pages of 60"
is "$(sort -n "$T_TMP/paged" | uniq | wc -l | tr -d ' '):$(wc -l <"$T_TMP/paged" | tr -d ' ')" \
  "250:250" "paging: every job exactly once"
is "$(sql "SELECT id FROM mq_jobs WHERE queue = 'bulk' ORDER BY id" | tr '\n' ' ')" \
  "$(tr '\n' ' ' <"$T_TMP/paged")" "paging: the table's ids, in order"
run "$MQ" ls --queue bulk --limit 250
is "$ERR" "" "ls: no 'more' line when all fit"

# a closed pipe: quiet, SIGPIPE's status
sql "INSERT INTO mq_jobs (queue, payload) SELECT 'bulk', '' FROM seq_1_to_3000"
{ "$MQ" ls --limit 10000 2>"$T_TMP/perr"; echo "$?" >"$T_TMP/prc"; } | head -1 >/dev/null
is "$(cat "$T_TMP/prc"):$(cat "$T_TMP/perr")" "141:" "ls | head -1: quiet, SIGPIPE"
{ "$MQ" ls --json --limit 10000 2>"$T_TMP/perr"; echo "$?" >"$T_TMP/prc"; } | head -c1 >/dev/null
is "$(cat "$T_TMP/prc"):$(cat "$T_TMP/perr")" "141:" "ls --json | head -c1: quiet, SIGPIPE"

# the error is cut by display width: a wide (CJK) character takes two
# columns, so a line of them stays within $COLUMNS (on 6eb561e, cut by
# characters: lines of 64 columns for COLUMNS=60)
sql "SET SESSION check_constraint_checks = 0; INSERT INTO mq_jobs (queue, state, payload, last_error, finished_at) VALUES ('MB', 'dead', 'p', REPEAT('é漢', 30), UTC_TIMESTAMP()), ('MB', 'dead', 'p', CONCAT('a', REPEAT('漢', 40)), UTC_TIMESTAMP())"
run env COLUMNS=60 "$MQ" ls --queue MB
head=$(echo "$OUT" | head -1)
prefix=$(( ${#head} - 5 ))	# up to ERROR, all ASCII, as each row's
avail=$((60 - prefix))
fit() { # fit CHAR1 WIDTH1 CHAR2 WIDTH2 [FIRST FIRSTW]: the cut cell
  e=${5-} w=${6-0} k=0
  while :; do
    if [ $((k % 2)) = 0 ]; then c=$1 cw=$2; else c=$3 cw=$4; fi
    [ $((w + cw + 3)) -le "$avail" ] || break
    e=$e$c w=$((w + cw)) k=$((k + 1))
  done
  printf '%s...' "$e"
}
row1=$(echo "$OUT" | sed -n 2p | tail -c +$((prefix + 1)))
row2=$(echo "$OUT" | sed -n 3p | tail -c +$((prefix + 1)))
is "$row1" "$(fit é 1 漢 2)" "ls: an error of wide characters cut to \$COLUMNS by display width"
is "$row2" "$(fit 漢 2 漢 2 a 1)" "(a wide character that does not fit is left out whole)"
sql "DELETE FROM mq_jobs WHERE queue = 'MB'"

# the table keeps of each error what the terminal's width can show: 500
# errors of 64 KiB in 40 MB of address space (a900bf0 kept them whole:
# out of memory, 71; 10,000 of them took 650 MB)
if [ -z "${MQ_SANITIZED:-}" ]; then
  sql "INSERT INTO mq_jobs (queue, payload, state, finished_at, last_error)
       SELECT 'longerr', 'x', 'dead', UTC_TIMESTAMP(6), REPEAT('y', 65535) FROM seq_1_to_500"
  expect_status 0 "ls of 500 errors of 64 KiB, COLUMNS=80, in 40 MB" sh -c 'ulimit -v 40000; COLUMNS=80 "$0" ls --queue longerr --limit 500' "$MQ"
  is "$(printf '%s\n' "$OUT" | sed -n 2p | awk '{ print length($0) }'):$(printf '%s\n' "$OUT" | sed -n 2p | sed 's/.*y//')" "80:..." "  each row cut to the 80 columns"
  sql "DELETE FROM mq_jobs WHERE queue = 'longerr'"
else
  ok "ls of 500 errors of 64 KiB in 40 MB # SKIP address space limits and sanitizers"
  ok "  each cut to the width # SKIP"
fi

done_testing
