#!/bin/sh
# mq pause / resume / purge: a paused queue hands out nothing while pushes
# land; purge is guarded and deletes only what it says.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

"$MQ" push --queue p one >/dev/null
expect_status 0 "pause" "$MQ" pause p
is "$OUT" "queue 'p' paused" "says paused"
expect_status 0 "pause again" "$MQ" pause p
is "$OUT" "queue 'p' was already paused" "says already paused"
for claim in skip-locked update; do
  expect_status 1 "$claim: a paused queue hands out nothing" "$MQ" pop --claim $claim --queue p
  is "$ERR" "mq pop: queue 'p' is paused" "$claim: pop says paused"
done
expect_status 0 "push to a paused queue lands" "$MQ" push --queue p two
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'p' AND state = 'ready'")" 2 "both jobs wait"
"$MQ" push --queue other x >/dev/null
expect_status 0 "other queues still work" "$MQ" pop --queue other -o /dev/null
like "$("$MQ" stats --queue p --json)" '*"paused":true*' "stats shows it"
expect_status 0 "resume" "$MQ" resume p
is "$OUT" "queue 'p' resumed" "says resumed"
expect_status 0 "resume again" "$MQ" resume p
is "$OUT" "queue 'p' was not paused" "says not paused"
run "$MQ" pop --queue p
is "$RC:$OUT" "0:one" "a resumed queue hands out its jobs"
expect_status 0 "pause a queue with no jobs" "$MQ" pause nothing-here
expect_status 1 "pop on an empty paused queue" "$MQ" pop --queue nothing-here
is "$ERR" "mq pop: queue 'nothing-here' is paused" "still says paused"

# purge
sql "DELETE FROM mq_jobs"
seq 1 3 | "$MQ" push --lines --queue doomed >/dev/null
"$MQ" push --queue doomed --delay 1h later >/dev/null
seq 1 2 | "$MQ" push --lines --queue doomed >/dev/null
"$MQ" pop --queue doomed -o /dev/null >/dev/null                   # 1 leased
r=$("$MQ" pop --queue doomed -o /dev/null); "$MQ" ack "$r"         # 1 done
"$MQ" push --queue keep x >/dev/null
sum=$(table_sum)
expect_status 64 "purge without --yes" "$MQ" purge --queue doomed
like "$ERR" "mq purge: this deletes the waiting jobs of queue 'doomed': add --yes*" "asks for --yes"
expect_status 64 "purge without --queue" "$MQ" purge --yes
expect_status 64 "MQ_QUEUE is not enough for purge" env MQ_QUEUE=doomed "$MQ" purge --yes
is "$(table_sum)" "$sum" "refused purges deleted nothing"
expect_status 0 "purge --yes" "$MQ" purge --queue doomed --yes
is "$OUT" "purged 4 jobs from queue 'doomed'" "deletes the 3 ready and 1 scheduled"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(queue, ':', state) ORDER BY queue, state) FROM mq_jobs")" \
  "doomed:leased,doomed:done,keep:ready" "leased, done and other queues' jobs stay"
expect_status 0 "purge --leased" "$MQ" purge --queue doomed --yes --leased
is "$OUT" "purged 1 job from queue 'doomed'" "deletes the leased one too"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(queue, ':', state) ORDER BY queue, state) FROM mq_jobs")" \
  "doomed:done,keep:ready" "done jobs are archive's business"

sum=$(table_sum)
expect_status 64 "pause without a queue" "$MQ" pause
expect_status 64 "pause: bad queue name" "$MQ" pause 'a b'
expect_status 64 "resume: two queues" "$MQ" resume a b
expect_status 64 "purge: bad queue" "$MQ" purge --queue 'x`' --yes
is "$(table_sum)" "$sum" "refusals changed nothing"
done_testing
