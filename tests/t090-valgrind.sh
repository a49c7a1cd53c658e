#!/bin/sh
# valgrind finds no error and no leak on the main paths: init, push (one,
# stream, --every), pop (both strategies, every form, a queue list), ack
# (recurring too), cancel, stats, and the error exits.
. "$(dirname "$0")/lib.sh"
if [ -n "${MQ_SANITIZED:-}" ]; then
  ok "# SKIP valgrind does not run sanitized binaries"
  done_testing
fi
VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
  --errors-for-leak-kinds=definite,indirect --error-exitcode=99"

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
done_testing
