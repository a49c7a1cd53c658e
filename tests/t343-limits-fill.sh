#!/bin/sh
# A limited claim takes up to N jobs that may run, however many jobs of
# keys it cannot take are ahead of them (issue 31, guarantee 3; mq-limit(1)
# LIMITS; lib/candidates.c): a key at its limit, a key the claim itself
# fills, a key half used, a key whose rate window is full, several such
# keys one after another; both ways of claiming, pop --count and mq work.
# Before lib/candidates.c a claim read 4 jobs a job wanted (+16) past the
# keys already full, and took what those gave: one key's 100 jobs at the
# head gave one job to a claim of 5.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# many QUEUE KEY N [PRIORITY]: N due jobs of KEY (payloads KEY1..KEYN),
# due before those pushed after (their available_at an hour ago)
many() {
  sql "INSERT INTO mq_jobs (queue, payload, job_key, priority, available_at)
       SELECT '$1', CONCAT('$2', seq), '$2', ${4:-0},
       UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL seq MICROSECOND
       FROM seq_1_to_$3"
}
# one QUEUE KEY...: a job of each KEY (payload: the key), in that order
one() {
  _q=$1; shift
  for _k in "$@"; do "$MQ" push --queue "$_q" --key "$_k" "$_k" >/dev/null; done
}
payloads() { printf '%s\n' "$OUT" | grep -o '"payload":"[^"]*"' | sed 's/"payload":"//; s/"$//' | tr '\n' ' ' | sed 's/ $//'; }
live() {
  sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1' AND state = 'leased'
       AND leased_until >= UTC_TIMESTAMP(6) ${2:+AND job_key = '$2'}"
}

for claim in skip-locked update; do
  # a key the claim fills itself: 100 jobs of a, then b..e
  q=fills-$claim
  many $q a 100; one $q b c d e f
  "$MQ" limit $q --per-key 1 >/dev/null
  run "$MQ" pop --queue $q --claim=$claim --count 5 --json
  is "$RC:$(payloads)" "0:a1 b c d e" "$claim: 100 jobs of a at the head: one of a, then b, c, d, e"

  # a key at its limit already: 200 of a held back, one of a leased
  q=full-$claim
  many $q a 200; one $q b c
  "$MQ" limit $q --per-key 1 >/dev/null
  run "$MQ" pop --queue $q --claim=$claim
  is "$RC:$OUT" "0:a1" "$claim: a's first"
  run "$MQ" pop --queue $q --claim=$claim --count 3 --json
  is "$RC:$(payloads)" "0:b c" "$claim: a full: b and c past its 199 jobs"

  # a key half used: per key 2, one of a leased, 100 more of a ahead
  q=half-$claim
  many $q a 101; one $q b c
  "$MQ" limit $q --per-key 2 >/dev/null
  run "$MQ" pop --queue $q --claim=$claim
  is "$RC:$OUT" "0:a1" "$claim: a's first (a has room for one more)"
  run "$MQ" pop --queue $q --claim=$claim --count 3 --json
  is "$RC:$(payloads)" "0:a2 b c" "$claim: one more of a, then b and c"
  is "$(live $q a)" 2 "$claim: a at its 2"

  # keys used up one after another: 6 keys of 60 jobs each, then 4 keys
  q=rounds-$claim
  for k in a b c d e f; do many $q $k 60; done
  one $q g h i j
  "$MQ" limit $q --per-key 1 >/dev/null
  run "$MQ" pop --queue $q --claim=$claim --count 10 --json
  is "$RC:$(payloads)" "0:a1 b1 c1 d1 e1 f1 g h i j" \
    "$claim: six keys of 60 jobs, then four: one of each, in claim order"
  is "$(live $q)" 10 "$claim: ten leased"

  # a key whose rate window is full: 100 of a, a at 1 claim a minute
  q=rate-$claim
  many $q a 100; one $q b c
  "$MQ" limit $q --key-rate 1/min >/dev/null
  run "$MQ" pop --queue $q --claim=$claim
  is "$RC:$OUT" "0:a1" "$claim: a's first claim of the minute"
  "$MQ" ack "$(sql "SELECT CONCAT(id, '.', lease_token) FROM mq_jobs WHERE queue = '$q' AND payload = 'a1'")" >/dev/null
  run "$MQ" pop --queue $q --claim=$claim --count 3 --json
  is "$RC:$(payloads)" "0:b c" "$claim: a's window full (its slot free): b and c past its 99"

  # priority order holds among the jobs that may run: a's held-back jobs
  # first by priority, then x (priority 5), then y, z (priority 9)
  q=prio-$claim
  many $q a 50 0
  "$MQ" push --queue $q --key y --priority 9 y >/dev/null
  "$MQ" push --queue $q --key x --priority 5 x >/dev/null
  "$MQ" push --queue $q --key z --priority 9 z >/dev/null
  "$MQ" limit $q --per-key 1 >/dev/null
  run "$MQ" pop --queue $q --claim=$claim --count 4 --json
  is "$RC:$(payloads)" "0:a1 x y z" "$claim: one of a, then x (priority 5), y and z (9, in push order)"
done

# mq work: 8 at once past a's 299 held back
q=work
many $q a 300; one $q b c d e f g h
"$MQ" limit $q --per-key 1 >/dev/null
"$MQ" work --queue $q --concurrency 8 --exit-when-empty -- sleep 3 \
  >"$T_TMP/work.out" 2>"$T_TMP/work.err" &
wpid=$!
i=0
while [ "$(live $q)" -lt 8 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
is "$(live $q)" 8 "mq work --concurrency 8: a's first and b..h at once"
is "$(live $q a)" 1 "one of a"
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null

# a consumer that found its queue limited claims it by the limited claim
# first (lib/pop.c, seen_limited), both ways of claiming; limits cleared
# while it runs, it claims by the plain one again: 1 at a time, then 3
# (and the jobs its prefetch leases)
for claim in skip-locked update; do
  q=cleared-$claim
  many $q a 12
  "$MQ" limit $q --per-key 1 >/dev/null
  "$MQ" work --queue $q --claim $claim --concurrency 3 --exit-when-empty -- sleep 1 \
    >/dev/null 2>"$T_TMP/cleared.err" &
  wpid=$!
  i=0
  while [ "$(live $q)" -lt 1 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  most=0 i=0
  while [ $i -lt 12 ]; do
    n=$(live $q); [ "$n" -le "$most" ] || most=$n
    sleep 0.1; i=$((i + 1))
  done
  is "$most" 1 "$claim: mq work -c 3 at per key 1: one of a at a time"
  "$MQ" limit $q --clear-per-key >/dev/null
  i=0
  while [ "$(live $q)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  n=$(live $q)
  check "$claim: the limit cleared while it runs: three or more leased at once ($n, with mq work's prefetch)" test "$n" -ge 3
  wait $wpid
  is "$?:$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" "0:12" \
    "$claim: every job done, and mq work exits 0"
  is "$(cat "$T_TMP/cleared.err")" "" "$claim: nothing on stderr"
done

# mq work's prefetch is taken from the head of a limited queue only
# (lib/candidates.c, need): -c 1 at the head of 100 jobs of a, with b
# and c behind them, runs a's jobs one at a time and leases neither b
# nor c with them; -c 3 leases b and c for its free process slots
q=prefetch
many $q a 100; one $q b c
"$MQ" limit $q --per-key 1 >/dev/null
"$MQ" work --queue $q --max-jobs 3 -- true >/dev/null 2>&1
is "$(sql "SELECT GROUP_CONCAT(job_key ORDER BY id) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" \
  "a,a,a" "mq work -c 1: a's jobs from the head, one at a time, b and c not prefetched past them"
"$MQ" work --queue $q --concurrency 3 --max-jobs 3 -- true >/dev/null 2>&1
is "$(sql "SELECT GROUP_CONCAT(job_key ORDER BY job_key) FROM mq_jobs WHERE queue = '$q' AND job_key <> 'a' AND state = 'done'")" \
  "b,c" "mq work -c 3: b and c past the held-back a's, for its free process slots"

# an ack whose claim takes a job of the same key in its transaction
# frees no slot: it wakes none of the consumers waiting for one
# (lib/wakeup.c, mq__wake_after_claim). One mq work waits on a queue at per
# key 1 (early in a one-second park); 30 jobs of one key come, and a
# second mq work, which knows of the waiter, takes the first and the
# rest one after another: at most its last ack (no job left to take)
# wakes the waiter, not every ack (the binary before: a KILL QUERY each)
q=handover
"$MQ" limit $q --per-key 1 >/dev/null
"$MQ" work --queue $q -- true >/dev/null 2>&1 &
w1=$!
fresh_waiters $q
k0=$(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2)
many $q a 30
"$MQ" work --queue $q -- true >/dev/null 2>&1 &
w2=$!
i=0
while [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" -lt 30 ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1))
done
k1=$(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2)
kill $w1 $w2 2>/dev/null
wait $w1 $w2 2>/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" 30 "handover: the 30 jobs done"
check "handover: acks whose claim took the key's next job woke nobody ($((k1 - k0)) KILL QUERY for 30 jobs)" test $((k1 - k0)) -le 1

# settings changed while mq work runs: its claims take the settings its
# connection read last (lib/limits.c, limit_cache) only while the
# candidates' read says they still hold. Lowered from 3 to 1 a key: one
# of a at a time once the jobs leased before end; paused: none leased
q=lowered
many $q a 40
"$MQ" limit $q --per-key 3 >/dev/null
"$MQ" work --queue $q --concurrency 3 -- sleep 0.3 >/dev/null 2>"$T_TMP/lowered.err" &
wpid=$!
i=0
while [ "$(live $q)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
is "$(live $q a)" 3 "per key 3, mq work -c 3: three of a at once"
"$MQ" limit $q --per-key 1 >/dev/null
sleep 0.6
most=0 i=0
while [ $i -lt 15 ]; do
  n=$(live $q); [ "$n" -le "$most" ] || most=$n
  sleep 0.1; i=$((i + 1))
done
is "$most" 1 "lowered to per key 1 while mq work runs: one of a at a time"
"$MQ" pause $q >/dev/null
sleep 0.6
d1=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state <> 'ready'")
sleep 0.5
is "$(live $q):$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state <> 'ready'")" \
  "0:$d1" "paused while mq work runs: no job of it leased after"
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null
is "$(cat "$T_TMP/lowered.err")" "" "lowered and paused: nothing on stderr"

# the slots of jobs given back are free at once: a pop that cannot hand
# its job over (stdout read-only), mq work's prefetched jobs at SIGTERM
q=given
one $q a b c d e f g h
"$MQ" limit $q --per-key 1 --concurrency 8 >/dev/null
expect_status 74 "pop --json with stdout read-only: 74" sh -c '"$0" pop --queue given --json 1</dev/null' "$MQ"
is "$(live $q):$(sql "SELECT state FROM mq_jobs WHERE queue = '$q' AND payload = 'a'")" "0:ready" \
  "its job given back: ready, no slot held"
run "$MQ" pop --queue $q --json
is "$RC:$(payloads)" "0:a" "and the next claim takes it"
"$MQ" work --queue $q --exit-when-empty -- sleep 30 >/dev/null 2>"$T_TMP/term.err" &
wpid=$!
i=0
while [ "$(live $q)" -lt 8 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
n=$(live $q)
check "mq work took the rest: one running, the others prefetched ($n live with a's)" test "$n" -ge 3
kill -TERM $wpid
i=0
while [ "$(live $q)" -gt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
is "$(live $q)" 2 "SIGTERM: its prefetched jobs given back, their slots free (a's and the running one left)"
run "$MQ" pop --queue $q --count 8 --json
n=$(printf '%s\n' "$OUT" | grep -o '"payload"' | wc -l | tr -d ' ')
is "$RC:$n" "0:6" "another consumer takes the six given back at once"
kill -TERM $wpid 2>/dev/null
wait $wpid
is "$?" 0 "mq work exits 0 after a second SIGTERM"
is "$(live $q)" 7 "the second one gave back the running one too: a's and the six"

# a queue found limited whose limit is cleared, behind another limited
# queue of the list: its jobs are claimed (before, the claim deferred it
# as limited, found it was not, and took nothing: --exit-when-empty
# exited with 2 of its 3 jobs left)
"$MQ" limit lqa --per-key 1 >/dev/null
"$MQ" limit lqb --concurrency 1 >/dev/null
for i in 1 2 3; do "$MQ" push --queue lqb "b$i" >/dev/null; done
( sleep 1; "$MQ" limit lqb --clear >/dev/null ) &
clr=$!
"$MQ" work --queue lqa,lqb --concurrency 1 --exit-when-empty -- sh -c 'sleep 2' \
  >/dev/null 2>"$T_TMP/lqb.err"
st=$?
wait $clr
is "$st:$(sql "SELECT GROUP_CONCAT(payload, ':', state ORDER BY payload) FROM mq_jobs WHERE queue = 'lqb'")" \
  "0:b1:done,b2:done,b3:done" "lqb's limit cleared behind lqa's: all three done before mq work exits"
is "$(cat "$T_TMP/lqb.err")" "" "nothing on stderr"

# 8 consumers at once on a limited queue whose limit never binds: none
# exits while due jobs are left (before, a claim whose candidates the
# others all took while it waited for their gates came back empty,
# nothing held: 3 to 5 of 8 --exit-when-empty workers exited with 2,856
# jobs ready)
q=race
sql "INSERT INTO mq_jobs (queue, payload, job_key)
     SELECT '$q', 'x', CONCAT('k', seq % 500) FROM seq_1_to_3000"
"$MQ" limit $q --per-key 100 >/dev/null
racer() { # racer N: a worker, then the jobs ready when it exited
  "$MQ" work --queue race --concurrency 16 --exit-when-empty -- true \
    2>>"$T_TMP/race"
  sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'race' AND state = 'ready'" \
    >"$T_TMP/race.$1"
}
pids= i=0
while [ $i -lt 8 ]; do
  racer $i &
  pids="$pids $!"
  i=$((i + 1))
done
for p in $pids; do wait "$p"; done
left=$(cat "$T_TMP"/race.[0-9] | sort -n | tail -1)
check "8 workers: each exited with no due job left to take (at most $left ready then)" test "$left" -le 100
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" 3000 "all 3,000 done"
is "$(cat "$T_TMP/race" 2>/dev/null)" "" "nothing on their stderr"

# a worker held back by a key that another consumer drains, without a
# wakeup (it connected before anyone waited, so its acks wake nobody):
# it looks again at the end of each park, and exits once nothing is
# left (t340's crossed lists hung so, 16 workers held by contention,
# until a park that ended with a worker held back made it claim again)
q=drained
for i in 1 2 3; do "$MQ" push --queue $q --key a "a$i" >/dev/null; done
"$MQ" limit $q --per-key 1 >/dev/null
"$MQ" work --queue $q --exit-when-empty -- sleep 1 >/dev/null 2>"$T_TMP/w2.err" &
w2=$!
i=0
while [ "$(live $q)" -lt 1 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$MQ" work --queue $q --exit-when-empty -- sleep 1 >/dev/null 2>"$T_TMP/w1.err" &
w1=$!
wait $w2
t0=$(date +%s)
i=0
while kill -0 $w1 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $w1 2>/dev/null; then
  kill $w1; wait $w1
  not_ok "the held worker exits once the other drained the key (still running after 15 s)"
else
  wait $w1
  ok "the held worker exits once the other drained the key (within $(($(date +%s) - t0)) s, status $?)"
fi
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'done'")" 3 "all three done, one at a time"

# 30,000 keys at their limit ahead of 10 free keys' jobs: a claim leaves
# out 1,024 keys at most by name (a statement of some 27,000 parameters
# or more stalled until the server's net_write_timeout, 60 s, then
# failed: 'Write error: Broken pipe', status 69), and still finds them
q=manyfull
sql "INSERT INTO mq_jobs (queue, payload, job_key, state, leased_until, lease_token, attempts)
     SELECT '$q', 'L', CONCAT('k', seq), 'leased', UTC_TIMESTAMP(6) + INTERVAL 1 DAY, REPEAT('a', 32), 1
     FROM seq_1_to_30000;
     INSERT INTO mq_jobs (queue, payload, job_key, available_at)
     SELECT '$q', 'R', CONCAT('k', seq), UTC_TIMESTAMP(6) - INTERVAL 1 DAY + INTERVAL seq MICROSECOND
     FROM seq_1_to_30000;
     INSERT INTO mq_jobs (queue, payload, job_key, available_at)
     SELECT '$q', CONCAT('free', seq), CONCAT('f', seq), UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL seq SECOND
     FROM seq_1_to_10"
"$MQ" limit $q --per-key 1 >/dev/null
run timeout 50 "$MQ" pop --queue $q
is "$RC:$OUT" "0:free1" "past 30,000 full keys: the first free key's job"
run timeout 50 "$MQ" pop --queue $q --count 5 --json
is "$RC:$(payloads)" "0:free2 free3 free4 free5 free6" "and --count 5: the next five"

# a claim of one past 1,000 held back, and then none
q=one
many $q a 1000; one $q b
"$MQ" limit $q --per-key 1 >/dev/null
run "$MQ" pop --queue $q
is "$RC:$OUT" "0:a1" "a's first"
run "$MQ" pop --queue $q
is "$RC:$OUT" "0:b" "then b, past a's 999"
expect_status 1 "then nothing: a full" "$MQ" pop --queue $q
done_testing
