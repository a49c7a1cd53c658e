#!/bin/sh
# --queue high,default,low on pop and work: claims follow the list's
# order, one claim may span queues, an empty queue in front costs one
# index probe, waits and wakeups cover every listed queue.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

fill() { # three jobs in each queue, pushed low first, priorities mixed
  for q in low default high; do
    "$MQ" push --queue "$q" --priority 5 "$q-b" >/dev/null
    "$MQ" push --queue "$q" --priority 1 "$q-a" >/dev/null
    "$MQ" push --queue "$q" --priority 9 "$q-c" >/dev/null
  done
}
drain() { # drain OPTS...: payloads in the order pop hands them out
  while p=$("$MQ" pop "$@" -o "$T_TMP/p" 2>/dev/null); do
    cat "$T_TMP/p"; echo
    "$MQ" ack "$p"
  done
}
ORDER="high-a high-b high-c default-a default-b default-c low-a low-b low-c"

for how in skip-locked update; do
  fill
  is "$(drain --queue high,default,low --claim "$how" | tr '\n' ' ')" "$ORDER " \
    "$how: one at a time, the list's order (priority order within a queue)"
  fill
  run "$MQ" pop --queue high,default,low --claim "$how" --count 5 --json
  is "$RC" 0 "$how: --count 5 over the list"
  is "$(printf '%s\n' "$OUT" | sed 's/.*"queue":"\([^"]*\)".*"payload":"\([^"]*\)".*/\1:\2/' | tr '\n' ' ')" \
    "high:high-a high:high-b high:high-c default:default-a default:default-b " \
    "$how: one claim spans queues, in order, each job names its queue"
  printf '%s\n' "$OUT" | sed 's/.*"receipt":"\([^"]*\)".*/\1/' | xargs "$MQ" ack
  run "$MQ" pop --queue low,high,default --claim "$how" --count 9 --shell
  is "$(printf '%s\n' "$OUT" | grep -c '^MQ_QUEUE_[0-9]*=low$'):$(printf '%s\n' "$OUT" | grep -c '^MQ_QUEUE_[0-9]*=default$')" \
    "3:1" "$how: the rest, low first as that list says"
  is "$(printf '%s\n' "$OUT" | sed -n 's/^MQ_QUEUE_\([0-9]*\)=.*/\1/p' | tr '\n' ' ')" \
    "1 2 3 4 " "$how: numbered in claim order"
  sql "UPDATE mq_jobs SET state = 'done', finished_at = UTC_TIMESTAMP(6) WHERE state = 'leased'"
done

# a queue with nothing due in front (none at all, only finished jobs, or
# only jobs scheduled for later) costs a probe of the due index, of the
# claim index and of the queue settings, whichever strategy: rows read
# counted by the server. (Without the due index, the claim walked over
# every scheduled job's entry: they lie in the 'ready' range of the claim
# index; see mq-queue(7), THE CLAIM INDEX.)
reads() {
  sql_root "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_next', 'Handler_read_key', 'Handler_read_first', 'Handler_read_rnd_next', 'Handler_read_prev', 'Handler_icp_attempts')" |
    awk '{ s += $2 } END { print s }'
}
sql "INSERT INTO mq_jobs (queue, state, payload, finished_at) SELECT 'finished', 'done', 'x', UTC_TIMESTAMP(6) FROM seq_1_to_20000;
  INSERT INTO mq_jobs (queue, payload, available_at) SELECT 'later', 'x', UTC_TIMESTAMP(6) + INTERVAL seq MINUTE FROM seq_1_to_5000;
  INSERT INTO mq_jobs (queue, payload, priority) SELECT 'full', 'x', 1 FROM seq_1_to_200"
for how in skip-locked update; do
  r0=$(reads); "$MQ" pop --queue full --claim "$how" -o /dev/null >/dev/null; r1=$(reads)
  "$MQ" pop --queue nothing,finished,later,full --claim "$how" -o /dev/null >/dev/null; r2=$(reads)
  extra=$(( (r2 - r1) - (r1 - r0) ))
  # 3 queues in front x (due probe + claim probe + settings probe + 1 to spare)
  if [ "$extra" -le 12 ]; then
    ok "$how: three queues with nothing due in front cost $extra reads more (<= 12)"
  else
    not_ok "$how: three queues with nothing due in front cost $extra reads more (<= 12)" \
      "alone: $((r1 - r0)), behind them: $((r2 - r1))"
  fi
done
sql "DELETE FROM mq_jobs WHERE queue IN ('finished', 'later', 'full')"

# paused queues are passed over; all paused: exit 1, said once
"$MQ" push --queue high h >/dev/null
"$MQ" push --queue low l >/dev/null
"$MQ" pause high >/dev/null
run "$MQ" pop --queue high,low
is "$RC:$(cat "$T_TMP/out" | head -c 1)" "0:l" "a paused queue in the list is passed over"
"$MQ" pause low >/dev/null
sum=$(table_sum)
expect_status 1 "every listed queue paused: exit 1" "$MQ" pop --queue high,low
is "$ERR" "mq pop: queues 'high,low' are all paused" "and says so"
"$MQ" resume low >/dev/null
expect_status 1 "one paused, one empty: exit 1" "$MQ" pop --queue high,low
is "$ERR" "" "quietly: nothing is due"
is "$(table_sum)" "$sum" "nothing changed"
"$MQ" resume high >/dev/null
sql "UPDATE mq_jobs SET state = 'done', finished_at = UTC_TIMESTAMP(6) WHERE state <> 'done'"

# mq work takes the list too: one job at a time, in the list's order
fill
run "$MQ" work --queue high,default,low --exit-when-empty -- \
  sh -c 'printf "%s:%s " "$MQ_QUEUE" "$(cat)"'
is "$RC" 0 "work over a list runs until all are empty"
is "$OUT" "high:high-a high:high-b high:high-c default:default-a default:default-b default:default-c low:low-a low:low-b low:low-c " \
  "work took the jobs in the list's order, MQ_QUEUE naming each job's queue"

# MQ_QUEUE may hold a list for pop and work, not for the others
"$MQ" push --queue b bee >/dev/null
run env MQ_QUEUE=a,b "$MQ" pop -o /dev/null
is "$RC" 0 "MQ_QUEUE=a,b works for pop"
sql "UPDATE mq_jobs SET state = 'done', finished_at = UTC_TIMESTAMP(6) WHERE state <> 'done'"
sum=$(table_sum)
expect_status 64 "MQ_QUEUE=a,b is refused by push" env MQ_QUEUE=a,b "$MQ" push x
is "$ERR" "mq push: MQ_QUEUE takes one queue here (a list of queues only for pop, work and schedule fire)" \
  "which says why"
for cmd in "push x" "stats" "purge --yes" "pause" "requeue-stale"; do
  # shellcheck disable=SC2086
  expect_status 64 "mq $cmd refuses a list" "$MQ" $cmd --queue a,b
done
like "$ERR" "mq requeue-stale: --queue takes one queue here*" "naming the option"

# lists that are not lists
many=$(seq 1 17 | sed 's/^/q/' | tr '\n' , | sed 's/,$//')
for bad in 'a,,b' 'a,a' ',a' 'a,' ',' 'a, b' 'a,b;c' "a,$(printf 'x%.0s' $(seq 65))" "$many"; do
  expect_status 64 "pop refuses the list '$bad'" "$MQ" pop --queue "$bad"
  expect_status 64 "work refuses the list '$bad'" "$MQ" work --queue "$bad" -- true
done
like "$ERR" "mq work: invalid queue list '*' in --queue: 1 to 16 queue names*none twice" "message says what a list is"
expect_status 1 "16 queues are fine (none has a job)" "$MQ" pop --queue "$(seq 1 16 | sed 's/^/q/' | tr '\n' , | sed 's/,$//')" --wait 0
is "$(table_sum)" "$sum" "refusals changed nothing"

# a waiter on a list wakes for a push to any of its queues (pushed in
# fresh_waiters' window; a loaded machine can still miss it: three tries)
sleeper="FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%' AND DB = '$T_DB'"
try=0
while :; do
  try=$((try + 1))
  "$MQ" pop --queue x,y,z --wait 60s --json >"$T_TMP/waited" 2>&1 &
  pid=$!
  fresh_waiters z
  info=$(sql_root "SELECT INFO $sleeper")
  kills=$(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2)
  "$MQ" push --queue z "zed$try" >/dev/null
  wait $pid
  st=$?
  woken=$(( $(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2) - kills ))
  [ "$woken" = 1 ] || [ $try -ge 3 ] || continue
  break
done
like "$info" '*mq-wait `mq_jobs` x */*mq-wait `mq_jobs` y */*mq-wait `mq_jobs` z */*' "the waiter is marked for each queue"
is "$st" 0 "the waiter got a job"
like "$(cat "$T_TMP/waited")" "*\"queue\":\"z\"*\"payload\":\"zed$try\"*" "the one pushed to its third queue"
is "$woken" 1 "woken by the pusher (one KILL QUERY)"
echo "# woken on try $try"
done_testing
