#!/bin/sh
# What each command that changes the table prints on success (mq(1),
# OUTPUT): one line per change on standard output, nothing on standard
# error; --quiet, where a command has it, silences them; ack and extend
# (run inside jobs) print nothing. Every command of mq -h is classified
# here: a new one must say what it prints.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# says NAME ARGS...: status 0, a line (or more) on stdout, stderr empty
says() {
  _n=$1
  shift
  run "$@"
  if [ "$RC" -eq 0 ] && [ -n "$OUT" ] && [ -z "$ERR" ]; then
    ok "$_n: says what it did on standard output, nothing on standard error"
  else
    not_ok "$_n: says what it did on standard output, nothing on standard error" \
      "status $RC; out: $OUT; err: $ERR"
  fi
}
# silent NAME ARGS...: status 0, nothing on stdout nor stderr
silent() {
  _n=$1
  shift
  run "$@"
  is "$RC:$OUT:$ERR" "0::" "$_n: status 0, nothing on stdout nor stderr"
}
# receipt QUEUE: a claimed job's receipt
receipt() { "$MQ" pop --queue "$1" -o /dev/null; }

cmds=$("$MQ" -h | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }')
for c in $cmds; do
  case $c in
  # only read (or print a script), or claim and print jobs
  check | completion | ls | show | stats | top | wait | why | pop | help)
    ok "$c: reads, or prints what it read" ;;
  # its standard output is its jobs' (mq-work(1))
  work)
    "$MQ" push --queue w x >/dev/null
    silent "work (its job prints nothing)" "$MQ" work --queue w --max-jobs 1 -- true ;;
  ack) "$MQ" push --queue a x >/dev/null
    silent ack "$MQ" ack "$(receipt a)" ;;
  extend) "$MQ" push --queue e x >/dev/null
    silent extend "$MQ" extend --lease 1m "$(receipt e)" ;;
  init) run "$MQ" init
    is "$RC:$OUT" "0:table mq_jobs is up to date (schema $(sed -n 's/^#define MQ_SCHEMA_VERSION //p' "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/lib/mq.h"))" \
      "init: says what it did on standard output" ;;
  push) says push "$MQ" push --queue p x
    like "$OUT" "[0-9]*" "  the id" ;;
  fail) "$MQ" push --queue f x >/dev/null
    says fail "$MQ" fail "$(receipt f)"
    like "$OUT" "job *: due again in *" "  when it is due again" ;;
  cancel) id=$("$MQ" push --queue c --delay 1h x)
    says cancel "$MQ" cancel "$id"
    is "$OUT" "job $id cancelled" "  which job" ;;
  pause) says pause "$MQ" pause q
    is "$OUT" "queue 'q' paused" "  which queue" ;;
  resume) "$MQ" pause r >/dev/null
    says resume "$MQ" resume r
    is "$OUT" "queue 'r' resumed" "  which queue" ;;
  purge) "$MQ" push --queue pu x >/dev/null
    says purge "$MQ" purge --queue pu --yes
    is "$OUT" "purged 1 job from queue 'pu'" "  how many, from which queue" ;;
  limit) says limit "$MQ" limit --concurrency 2 l
    is "$OUT" "concurrency 2" "  the limits now" ;;
  retry) "$MQ" push --queue rt --max-attempts 1 x >/dev/null
    "$MQ" push --queue rt --max-attempts 1 y >/dev/null
    "$MQ" fail "$(receipt rt)" >/dev/null
    "$MQ" fail "$(receipt rt)" >/dev/null
    ids=$("$MQ" ls --queue rt --state dead --ids)
    says retry "$MQ" retry $(printf '%s\n' "$ids" | sed -n 1p)
    is "$OUT" "retried 1 job" "  how many"
    silent "retry --quiet" "$MQ" retry --quiet $(printf '%s\n' "$ids" | sed -n 2p)
    is "$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE queue = 'rt'")" "ready,ready" "  (both retried)" ;;
  requeue-stale) "$MQ" push --queue s x >/dev/null
    receipt s >/dev/null
    sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE queue = 's'"
    says requeue-stale "$MQ" requeue-stale --queue s
    is "$OUT" "requeued 1
dead 0" "  how many"
    "$MQ" push --queue s y >/dev/null
    receipt s >/dev/null
    sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE queue = 's' AND state = 'leased'"
    silent "requeue-stale --quiet" "$MQ" requeue-stale --queue s --quiet
    is "$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE queue = 's'")" "ready,ready" "  (both requeued)" ;;
  archive) "$MQ" push --queue ar x >/dev/null
    "$MQ" ack "$(receipt ar)"
    says archive "$MQ" archive --older-than 0s
    like "$OUT" "archived * job*" "  how many"
    "$MQ" push --queue ar y >/dev/null
    "$MQ" ack "$(receipt ar)"
    silent "archive --quiet" "$MQ" archive --older-than 0s --quiet
    is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'ar'")" 0 "  (both archived)" ;;
  schedule) printf '[t327]\ncron = @daily\nqueue = sc\n' >"$T_TMP/s.conf"
    says "schedule apply" "$MQ" schedule apply "$T_TMP/s.conf"
    like "$OUT" "added t327 (next * UTC)" "  what it did"
    says "schedule run" "$MQ" schedule run t327
    like "$OUT" "[0-9]*" "  the run's id"
    says "schedule fire" "$MQ" schedule fire
    like "$OUT" "fired 0 schedules: 0 runs pushed, 0 missed instants skipped*" "  what it fired"
    says "schedule rm" "$MQ" schedule rm t327
    is "$OUT" "removed t327" "  which schedule" ;;
  *) not_ok "$c: what it prints on success is checked here" ;;
  esac
done
says "stats --recount" "$MQ" stats --recount
done_testing
