#!/bin/sh
# valgrind finds no error and no leak on the main paths: init, push (one,
# stream, --every, a fan-out: stream --after), pop (both strategies, every form, a queue list), ack
# (recurring too), cancel, stats, the error exits, and the operator's
# commands: ls, why, show, check, retry, top --once, stats --json; mq
# wait woken by an ack, and the ack that wakes it; mq schedule's apply
# (add, unchanged, change, prune, a bad file; over pages of rows and of
# the ledger's heads), ls (over pages too), fire, run, rm. Leaks
# "possibly lost" count too (valgrind's default: mq work's threads, alive
# at its exit, were).
. "$(dirname "$0")/lib.sh"
if [ -n "${MQ_SANITIZED:-}" ]; then
  ok "# SKIP valgrind does not run sanitized binaries"
  done_testing
fi
VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible
  --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99"

vg() { # vg STATUS DESCRIPTION ARGS...: mq under valgrind exits STATUS
  want=$1 d=$2
  shift 2
  # shellcheck disable=SC2086
  run $VG "$MQ" "$@"
  if [ "$RC" -eq "$want" ]; then ok "$d"; else not_ok "$d" "status $RC: $ERR"; fi
}

vg 0 "init" init
vg 0 "push" push hello
seq 1 2500 >"$T_TMP/lines"
# shellcheck disable=SC2086
run sh -c '"$@" <"$0"' "$T_TMP/lines" $VG "$MQ" push --lines
is "$RC" 0 "push --lines"
# a fan-out (t353): the stream after a parent, and refused by one
fp=$("$MQ" push --queue fdad P)
# shellcheck disable=SC2086
run sh -c '"$@" <"$0"' "$T_TMP/lines" $VG "$MQ" push --queue fkid --lines --after "$fp,$fp"
is "$RC" 0 "push --lines --after"
# shellcheck disable=SC2086
run sh -c '"$@" <"$0"' "$T_TMP/lines" $VG "$MQ" push --queue fkid --lines --after 424242
is "$RC" 66 "push --lines --after a parent that does not exist"
vg 0 "push --dedup" push --dedup k x
vg 0 "push --dedup again" push --dedup k y
vg 0 "pop --json --count 5" pop --json --count 5
vg 0 "pop --shell --claim update" pop --shell --claim update
vg 0 "pop -o" pop -o "$T_TMP/p"
r=$OUT
vg 0 "ack" ack "$r"
vg 2 "ack of a lost lease" ack "$r"
vg 65 "malformed receipt" ack nope
vg 64 "bad option" pop --bogus
vg 69 "server down" pop --socket "$T_TMP/none"
vg 78 "missing table" pop --table nosuch
vg 0 "init --print" init --print
vg 1 "pop on an empty queue" pop --queue empty
vg 1 "pop --wait on an empty queue" pop --queue empty --wait 1500ms
vg 0 "push --every --dedup" push --queue cron --every 1h --dedup c x
rid=$OUT
"$MQ" push --queue low l >/dev/null
vg 0 "pop from a preference list, --count spanning queues" \
  pop --queue nothing,cron,low --count 2 --json
vg 0 "ack of a recurring job" ack "$(printf '%s\n' "$OUT" | head -1 | sed 's/.*"receipt":"\([^"]*\)".*/\1/')"
vg 1 "pop --wait on a list" pop --queue empty1,empty2 --wait 1200ms
vg 0 "cancel" cancel "$rid"
vg 1 "cancel of a dead job" cancel "$rid"
vg 0 "stats" stats
seq 1 20 | "$MQ" push --lines --queue work >/dev/null
"$MQ" push --queue work fail >/dev/null
vg 0 "work (acks, a failure, prefetch, an idle wait)" work --queue work \
  --concurrency 3 --wait 1500ms -- sh -c '[ "$(cat)" != fail ]'
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(state = 'ready')) FROM mq_jobs WHERE queue = 'work'")" \
  "20,1" "work under valgrind did the jobs"
# the operator's commands, on a dead job with a history, a ready one, a
# leased one and an archived one
d1=$("$MQ" push --queue ops --dedup dk dead-one)
d2=$("$MQ" push --queue ops dead-two)
"$MQ" fail --retry-in 0s --error "first try" "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
"$MQ" fail --no-retry --error "boom one" "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
"$MQ" fail --no-retry --error "boom two" "$("$MQ" pop --queue ops -o /dev/null)" >/dev/null
r3=$("$MQ" push --queue ops ready-three)
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'ops'")" \
  "dead,dead,ready" "two dead jobs, one ready"
vg 0 "ls" ls
vg 0 "ls --json --state dead,ready --queue ops" ls --json --state dead,ready --queue ops
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 3 "ls --json: three lines"
vg 0 "ls --ids --error boom --limit 1 (a next page)" ls --ids --queue ops --error boom --limit 1
is "$OUT:$ERR" "$d1:mq ls: more: --after $d1" "ls --ids: the first page and how to get the next"
"$MQ" archive --older-than 0s >/dev/null
vg 0 "ls --state archived" ls --state archived --limit 3
vg 14 "why of a dead job" why "$d1"
vg 0 "why --json of a ready job" why --json "$r3"
like "$OUT" '*"answer":"ready",*' "why --json: ready"
vg 1 "why of a missing job" why 999999
vg 0 "show of two jobs (history, dedup key)" show "$d1" "$r3"
like "$OUT" '*history:*failed, attempt 1, then ready*first try*failed, attempt 2, then dead*boom two*' \
  "show: the history of both attempts"
vg 0 "show --json" show --json "$d1" "$d2"
is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(str(len(json.loads(l)["history"])) for l in sys.stdin))')" "2 1" \
  "show --json: valid JSON, the history of each job"
vg 0 "show -o" show -o "$T_TMP/shown" "$d2"
is "$(cat "$T_TMP/shown")" dead-two "show -o wrote the payload"
vg 1 "show of a missing job" show "$d1" 999999
# a calendar schedule's runs (t363): show, why, ls, and the names that
# completion reads
printf '[vg]\ncron = * * * * *\ntz = Europe/Berlin\nqueue = vgs\n' >"$T_TMP/vg.conf"
"$MQ" schedule apply "$T_TMP/vg.conf" >/dev/null
sql "UPDATE mq_jobs_schedules SET next_at = DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:00') - INTERVAL 2 MINUTE"
"$MQ" schedule fire >/dev/null
sr=$(sql "SELECT MAX(job) FROM mq_jobs_fired")
vg 0 "show of a schedule's run" show "$sr"
like "$OUT" "*schedule: vg*last runs:*job $sr, ready*" "show: its schedule and runs"
vg 0 "show --json of a schedule's run" show --json "$sr"
is "$(printf '%s\n' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["schedule"]["name"])')" vg \
  "show --json: valid JSON, its schedule"
vg 0 "why of a schedule's run" why "$sr"
like "$OUT" "*next run: *, by cron * * * * * in Europe/Berlin" "why: the next run"
vg 0 "ls --schedule" ls --schedule vg --ids
vg 0 "ls --recurring --state ready,archived" ls --recurring --state ready,archived --ids
vg 0 "completion --schedules" completion --schedules
is "$OUT" vg "completion --schedules: the names"
vg 64 "show -o of two jobs" show -o "$T_TMP/x" "$d1" "$d2"
vg 0 "check" check --queue ops
vg 2 "check, critical" check --max-dead 0 --warn-age 1s
like "$OUT" 'MQ CRITICAL - *ops: 2 dead > 0 (critical)*' "check: the crossing named"
vg 3 "check, a usage error" check --max-dead x
vg 0 "retry --dry-run" retry --queue ops --error boom --dry-run
is "$(printf '%s\n' "$OUT" | sort -n | tr '\n' ' ')" "$d1 $d2 " "retry --dry-run: the two dead ids"
vg 0 "retry by id" retry "$d1"
vg 1 "retry of a job that is not dead" retry "$d1" "$r3"
vg 0 "retry by filter --to-queue" retry --queue ops --all --to-queue ops2
is "$(sql "SELECT GROUP_CONCAT(CONCAT(queue, ':', state) ORDER BY id) FROM mq_jobs WHERE id IN ($d1, $d2, $r3)")" \
  "ops:ready,ops2:ready,ops:ready" "retry: both back to ready, one in ops2"
"$MQ" pop --queue ops -o /dev/null >/dev/null
vg 0 "top --once" top --once --interval 200ms
like "$OUT" '*QUEUE*ops *ops2 *' "top --once: a line per queue"
vg 0 "top --once --queue" top --once --queue ops --interval 100ms
vg 64 "top, a usage error" top --once --interval 1ms
vg 0 "stats --json" stats --json
is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
for q in json.load(sys.stdin)["queues"]:
    if q["queue"].startswith("ops"):
        print(q["queue"], " ".join(str(v) for v in q["counters"].values()))' | tr '\n' ,)" \
  "ops 3 0 1 2 0 1 0 0,ops2 1 0 0 0 0 0 0 0," "stats --json: the counters of ops and ops2"
# mq wait woken by an ack (it parks, the ack's KILL ends the park), and
# an ack that wakes a waiter
wj=$("$MQ" push --queue vw one)
( sleep 2; "$MQ" ack "$("$MQ" pop --queue vw -o /dev/null)" ) &
vg 0 "wait, woken by an ack" wait "$wj"
wait $!
wj=$("$MQ" push --queue vw two)
"$MQ" wait --timeout 20s "$wj" >/dev/null &
wp=$!
sleep 2
r=$("$MQ" pop --queue vw -o /dev/null)
vg 0 "ack that wakes a waiting mq wait" ack "$r"
wait "$wp"
is "$?" 0 "  which ends"
printf '[vs]\ncron = 30 2 * * *\ntz = Europe/Berlin\nqueue = vs\npayload = v\\x00s\n[vt]\ncron = @hourly\n' >"$T_TMP/vs.conf"
vg 0 "schedule apply (add)" schedule apply "$T_TMP/vs.conf"
vg 0 "schedule apply (unchanged)" schedule apply "$T_TMP/vs.conf"
printf '[vs]\ncron = 45 2 * * *\ntz = Europe/Berlin\nqueue = vs\n' >"$T_TMP/vs.conf"
vg 0 "schedule apply --prune (change, remove)" schedule apply --prune "$T_TMP/vs.conf"
printf '[vs]\ncron = 61 * * * *\n' >"$T_TMP/bad.conf"
vg 65 "schedule apply of a bad file" schedule apply "$T_TMP/bad.conf"
sql "UPDATE mq_jobs_schedules SET next_at = '2026-03-28 00:00:00' WHERE name = 'vs'"
vg 0 "schedule fire" schedule fire
vg 0 "schedule run" schedule run vs
vg 0 "schedule ls" schedule ls
vg 0 "schedule ls --json" schedule ls --json -n 5
vg 0 "schedule rm" schedule rm vs
vg 1 "schedule rm of no such schedule" schedule rm vs
# over pages (MQ_SCHEDULE_PAGE rows; a MiB of payloads): apply, a
# re-apply with --prune (rows between and after the file's removed),
# an apply that reads the ledger's heads (more than a page), ls
head -c 700000 /dev/zero >"$T_TMP/vp.bin"
awk 'BEGIN { for (i = 0; i < 600; i++) printf "[vp-%03d]\ncron = %d * * * *\n", i, i % 60
  print "[vp-300x]\ncron = @daily\npayload-file = vp.bin\n[vp-301x]\ncron = @daily\npayload-file = vp.bin" }' >"$T_TMP/vp.conf"
vg 0 "schedule apply over pages" schedule apply "$T_TMP/vp.conf"
awk 'BEGIN { for (i = 0; i < 500; i += 2) printf "[vp-%03d]\ncron = 7 * * * *\n", i }' >"$T_TMP/vq.conf"
vg 0 "schedule apply --dry-run --prune over pages" schedule apply --dry-run --prune "$T_TMP/vq.conf"
vg 0 "schedule apply --prune over pages" schedule apply --prune "$T_TMP/vq.conf"
is "$(printf '%s\n' "$OUT" | grep -c '^removed'):$(sql "SELECT COUNT(*) FROM mq_jobs_schedules")" "352:250" \
  "  which removes the rows between and after the file's names"
sql "INSERT INTO mq_jobs_fired (schedule, manual, instant)
  SELECT CONCAT('vp-', LPAD(seq DIV 3, 3, '0'), IF(seq % 3 = 0, '', CHAR(96 + seq % 3))),
    0, '2030-01-01' FROM seq_0_to_1799"
vg 0 "schedule apply over pages (the ledger's heads)" schedule apply "$T_TMP/vp.conf"
is "$(printf '%s\n' "$OUT" | grep -c '(next 2030-01-01 ')" 600 \
  "  each due after its name's last instant in the ledger"
vg 0 "schedule ls over pages" schedule ls -n 1
done_testing
