#!/bin/sh
# Limits enforced at claim time (issue 31; mq-limit(1), lib/limits.c):
# at most per_key jobs of a key, concurrency jobs of a queue, hold a live
# lease at once, with both ways of claiming; a job over its key's limit
# is skipped, not in the way of other keys' jobs behind it; a slot is the
# lease (ack, fail, release and expiry end it; nothing else to free); an
# expired lease of a limited queue is not extended; limits changed while
# jobs run; 16 consumers of both ways never over the limit (the server's
# leases sampled, and the jobs' own start and end times).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# limits QUEUE CONCURRENCY PER_KEY (NULL: none), by mq-limit(1) (its
# own tests: t341)
limits() {
  _l=$1
  if [ "$2" = NULL ]; then set -- "$3" --clear-concurrency; else set -- "$3" --concurrency "$2"; fi
  if [ "$1" = NULL ]; then shift; set -- "$@" --clear-per-key; else _k=$1; shift; set -- "$@" --per-key "$_k"; fi
  "$MQ" limit "$_l" "$@" >/dev/null || not_ok "mq limit $_l $*"
}
# payloads PAYLOADS...: of pop --json's jobs (in claim order)
payloads() { printf '%s\n' "$OUT" | grep -o '"payload":"[^"]*"' | sed 's/"payload":"//; s/"$//' | tr '\n' ' ' | sed 's/ $//'; }
# keyed QUEUE KEY PAYLOAD [PRIORITY]: a job with a key (mq push --key)
keyed() {
  "$MQ" push --queue "$1" --key "$2" --priority "${4:-0}" "$3" >/dev/null
}
live() { # live QUEUE [KEY]: jobs whose lease is live
  sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1' AND state = 'leased'
       AND leased_until >= UTC_TIMESTAMP(6) ${2:+AND job_key = '$2'}"
}

for claim in skip-locked update; do
  q=pk-$claim
  # per key 1: the second job of key a is skipped, b's behind it taken
  keyed $q a a1; keyed $q a a2; keyed $q b b1; keyed $q a a3
  sql "INSERT INTO mq_jobs (queue, payload) VALUES ('$q', 'nokey')"
  limits $q NULL 1
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --receipt-file "$T_TMP/r.a1"
  is "$RC:$OUT" "0:a1" "$claim: the head, a1"
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --receipt-file "$T_TMP/r.b1"
  is "$RC:$OUT" "0:b1" "$claim: a is full: its a2 is skipped, b1 behind it taken"
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --receipt-file "$T_TMP/r.nokey"
  is "$RC:$OUT" "0:nokey" "$claim: a job without a key is not limited by a key"
  expect_status 1 "$claim: then nothing (a and b full)" \
    "$MQ" pop --queue $q --claim=$claim --lease 1m
  is "$(live $q a):$(live $q b)" "1:1" "$claim: one live lease per key"
  "$MQ" ack "$(cat "$T_TMP/r.a1")"
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --receipt-file "$T_TMP/r.a2"
  is "$RC:$OUT" "0:a2" "$claim: the ack ended a's slot: a2 now"
  "$MQ" fail --error x "$(cat "$T_TMP/r.a2")" >/dev/null
  sql "UPDATE mq_jobs SET available_at = UTC_TIMESTAMP(6) WHERE payload = 'a2'"
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --count 5 --json
  is "$RC:$(payloads)" "0:a3" "$claim: a fail ends it too (a3, due before a2 again; --count 5 takes one of a)"
  # pop --count takes up to N that may run: per key 2, a3 and a second
  limits $q NULL 3
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --count 5 --json
  is "$RC:$(payloads)" "0:a2" "$claim: per key raised to 3: a2 (a3 holds one; b1 has b's only job)"
  is "$(live $q a)" 2 "$claim: a's two live leases"

  # the queue's concurrency: 2 at once, whatever the keys
  q=cc-$claim
  for i in 1 2 3 4; do keyed $q k$i j$i; done
  limits $q 2 NULL
  run "$MQ" pop --queue $q --claim=$claim --lease 1s --count 4 --json
  is "$RC:$(payloads)" "0:j1 j2" "$claim: concurrency 2: --count 4 gets 2"
  expect_status 1 "$claim: a third claim gets nothing" "$MQ" pop --queue $q --claim=$claim --lease 1m
  # expiry ends a slot: no sweeper, no repair (a consumer killed -9)
  sleep 1.2
  run "$MQ" pop --queue $q --claim=$claim --lease 1m --count 4 --json
  is "$RC:$(payloads)" "0:j3 j4" "$claim: the leases expired: two more"
  is "$(live $q)" 2 "$claim: two live leases"
done

# priority holds among the jobs that may run
keyed pr a low 5; keyed pr b high 1; keyed pr a urgent 0
limits pr NULL 1
run "$MQ" pop --queue pr --lease 1m
is "$OUT" urgent "priority first"
run "$MQ" pop --queue pr --lease 1m
is "$OUT" high "then the next that may run (a is full)"

# an expired lease of a limited queue is not extended (its slot may be
# another job's); in a queue without limits it is, as before
keyed ex a e1; keyed ex a e2
limits ex NULL 1
"$MQ" pop --queue ex --lease 1s --receipt-file "$T_TMP/r.e1" >/dev/null
sleep 1.2
run "$MQ" pop --queue ex --lease 1m
is "$OUT" e2 "the expired lease's slot went to e2"
expect_status 2 "extend of the expired lease: lease lost" \
  "$MQ" extend --lease 1m "$(cat "$T_TMP/r.e1")"
like "$ERR" "mq extend: job * lease expired, and its queue has limits: its slot may be another job's" \
  "and says why"
is "$(live ex a)" 1 "still one live lease of a"
"$MQ" push --queue free x >/dev/null
"$MQ" pop --queue free --lease 1s --receipt-file "$T_TMP/r.free" >/dev/null
sleep 1.2
expect_status 0 "without limits, an expired lease nobody took is extended" \
  "$MQ" extend --lease 1m "$(cat "$T_TMP/r.free")"

# a limit lowered while jobs run: no new claim until fewer hold leases
for i in 1 2 3 4 5; do keyed lo k$i l$i; done
limits lo 3 NULL
"$MQ" pop --queue lo --lease 1m --count 3 --json >/dev/null
limits lo 1 NULL
expect_status 1 "lowered to 1 under 3 live leases: nothing" "$MQ" pop --queue lo --lease 1m
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE queue = 'lo' AND payload IN ('l1', 'l2')"
expect_status 1 "still 1 live: nothing" "$MQ" pop --queue lo --lease 1m
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE queue = 'lo' AND payload = 'l3'"
run "$MQ" pop --queue lo --lease 1m
is "$RC:$OUT" "0:l4" "none live: one more"
"$MQ" limit lo --clear >/dev/null
run "$MQ" pop --queue lo --lease 1m
is "$RC:$OUT" "0:l5" "limit cleared: claimed as any queue"

# 16 consumers, both ways of claiming, 3 keys at per key 1 and the
# queue at 2: the server's live leases are sampled while they run, and
# each job logs its start and end
Q=fleet
for i in $(seq 1 30); do keyed $Q k$((i % 3)) "k$((i % 3)) $i"; done
limits $Q 2 1
cat >"$T_TMP/job.sh" <<'EOF'
read -r key n
echo "$(date +%s%N) 1 $key" >>"$LOG"
sleep 0.1
echo "$(date +%s%N) -1 $key" >>"$LOG"
EOF
LOG=$T_TMP/runs.log
export LOG
: >"$LOG"
pids=
for i in $(seq 1 16); do
  [ $((i % 2)) = 0 ] && how=skip-locked || how=update
  "$MQ" work --queue $Q --claim=$how --lease 30s --wait 3s -- sh "$T_TMP/job.sh" \
    2>>"$T_TMP/work.err" &
  pids="$pids $!"
done
maxq=0 maxk=0
for i in $(seq 1 300); do
  s=$(sql "SELECT COUNT(*), COALESCE(MAX(n), 0) FROM (SELECT job_key, COUNT(*) AS n FROM mq_jobs
           WHERE queue = '$Q' AND state = 'leased' AND leased_until >= UTC_TIMESTAMP(6)
           GROUP BY job_key) AS k" | awk '{print $1 + 0, $2 + 0}')
  # the first count is keys; the total is their sum: read it apart
  t=$(live $Q)
  k=${s#* }
  [ "$t" -gt "$maxq" ] && maxq=$t
  [ "$k" -gt "$maxk" ] && maxk=$k
  [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$Q' AND state <> 'done'")" = 0 ] && break
done
for p in $pids; do wait "$p"; done
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$Q' AND state = 'done'")" 30 "the 16 consumers did all 30 jobs"
check "the server never showed more than 2 live leases in the queue ($maxq)" test "$maxq" -le 2
check "nor more than 1 of a key ($maxk)" test "$maxk" -le 1
# the jobs' own times: the most running at once, in all and per key
over=$(sort -n "$LOG" | awk '{ q += $2; k[$3] += $2; if (q > mq) mq = q; if (k[$3] > mk) mk = k[$3] } END { print mq + 0, mk + 0 }')
is "$over" "2 1" "the jobs' own start and end times: at most 2 at once, 1 per key (and the limits were used)"
is "$(sort -n "$LOG" | wc -l | tr -d ' ')" 60 "each job started and ended once"
is "$(grep -v '^$' "$T_TMP/work.err" | grep -cv 'nothing to do\|no job' || true)" 0 "nothing on the workers' stderr"

# one hot key at per key 1: every claim of 16 consumers competes for its
# one slot (without the gate's write, two claims each counted none live
# and both took one)
: >"$LOG"
for i in $(seq 1 30); do keyed hot h "h $i"; done
limits hot NULL 1
pids=
for i in $(seq 1 16); do
  [ $((i % 2)) = 0 ] && how=skip-locked || how=update
  "$MQ" work --queue hot --claim=$how --lease 30s --wait 2s -- sh "$T_TMP/job.sh" \
    2>>"$T_TMP/work.err" &
  pids="$pids $!"
done
for p in $pids; do wait "$p"; done
is "$(sort -n "$LOG" | awk '{ k += $2; if (k > m) m = k } END { print m + 0 }')" 1 "one hot key, 16 consumers: one at a time"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue = 'hot' AND state = 'done'")" "30,30" \
  "all 30 done, each claimed once"
is "$(grep -v '^$' "$T_TMP/work.err" | grep -cv 'nothing to do\|no job' || true)" 0 "nothing on the workers' stderr"
# rates: at most N claims in any window of D (sliding: a claim's time is
# its tick's, a moment before its lease's, a round trip or two on a busy
# machine, so the lease times are checked over windows 100 ms shorter)
# windows MS: the most claims of rq (leased for 600 s) in a window of MS
windows() {
  sql "SELECT TIMESTAMPDIFF(MICROSECOND, '2026-01-01', leased_until - INTERVAL 600 SECOND)
       FROM mq_jobs WHERE queue = '$1' ${3:+AND job_key = '$3'} AND state = 'leased' ORDER BY 1" |
    awk -v w="$2" '{ t[NR] = $1 } END { m = 0; j = 1
      for (i = 1; i <= NR; i++) { while (t[i] - t[j] >= w * 1000) j++; if (i - j + 1 > m) m = i - j + 1 }
      print m }'
}
"$MQ" limit rq --rate 10/s >/dev/null
seq 1 100 | "$MQ" push --lines --queue rq >/dev/null 2>&1
end=$(($(date +%s) + 3))
consume() { # pops of rq until $end
  while [ "$(date +%s)" -lt "$end" ]; do
    "$MQ" pop --queue rq --wait 1s --lease 600s --receipt-file /dev/null >/dev/null 2>>"$T_TMP/rate.err"
    [ $? -le 1 ] || echo "pop failed" >>"$T_TMP/rate.err"
  done
}
for i in 1 2 3 4; do consume & done
wait
n=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'rq' AND state = 'leased'")
is "$(windows rq 900)" 10 "rate 10/s, 4 consumers: at most 10 claims in any window (and the limit was reached)"
check "and they kept claiming ($n in about 3 s)" test "$n" -ge 20
is "$(cat "$T_TMP/rate.err" 2>/dev/null)" "" "nothing on their stderr"
# claims of many jobs at once take their ticks together (two statements
# a claim): still at most N in any window, over a queue rate and a key
# rate, and no more than N ticks kept a gate
"$MQ" limit rb --rate 10/s --key-rate 4/s >/dev/null
i=0
while [ $i -lt 120 ]; do printf 'k%d\n' $((i % 3)); i=$((i + 1)); done | while read -r k; do
  "$MQ" push --queue rb --key "$k" "$k" >/dev/null
done
end=$(($(date +%s) + 3))
consume_many() { # pops of up to 7 jobs of rb until $end
  while [ "$(date +%s)" -lt "$end" ]; do
    "$MQ" pop --queue rb --count 7 --json --wait 1s --lease 600s >/dev/null 2>>"$T_TMP/rate.err"
    [ $? -le 1 ] || echo "pop failed" >>"$T_TMP/rate.err"
  done
}
for i in 1 2 3; do consume_many & done
wait
n=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'rb' AND state = 'leased'")
is "$(windows rb 900)" 10 "rate 10/s, claims of 7: at most 10 in any window (and reached)"
is "$(windows rb 900 k0):$(windows rb 900 k1):$(windows rb 900 k2)" "4:4:4" "key rate 4/s over 3 keys: at most 4 of a key in any window (and reached)"
check "and they kept claiming ($n in about 3 s)" test "$n" -ge 20
is "$(sql "SELECT CONCAT_WS(',', MAX(n), COUNT(*)) FROM mq_jobs_ticks WHERE queue = 'rb' GROUP BY gate_key ORDER BY gate_key")" \
  "$(printf '9,10\n3,4\n3,4\n3,4')" "10 ticks kept for the queue, 4 a key, numbered from 0"
is "$(cat "$T_TMP/rate.err" 2>/dev/null)" "" "nothing on their stderr"
# a waiter held back by a rate parks until its window has room, no longer
"$MQ" limit rw --rate 1/2s >/dev/null
"$MQ" push --queue rw a >/dev/null; "$MQ" push --queue rw b >/dev/null
"$MQ" pop --queue rw --lease 1m >/dev/null
t0=$(date +%s%N)
run "$MQ" pop --queue rw --wait 10s --lease 1m
ms=$((($(date +%s%N) - t0) / 1000000))
is "$RC:$OUT" "0:b" "pop --wait behind rate 1/2s gets the next job"
check "when the window has room: after $ms ms (1,500 to 3,500)" test "$ms" -ge 1500 -a "$ms" -le 3500
# per key: 2 claims of a key in any second, other keys meanwhile
"$MQ" limit kq --key-rate 2/s >/dev/null
for k in a b; do seq 1 6 | "$MQ" push --lines --queue kq --key "$k" >/dev/null 2>&1; done
run "$MQ" pop --queue kq --count 10 --json --lease 600s
is "$(printf '%s\n' "$OUT" | grep -c '"payload"')" 4 "key rate 2/s: 2 of each of 2 keys at once"
expect_status 1 "then nothing within the second" "$MQ" pop --queue kq --lease 600s
sleep 1.1
run "$MQ" pop --queue kq --count 10 --json --lease 600s
is "$(printf '%s\n' "$OUT" | grep -c '"payload"')" 4 "a second later, 2 more of each"
is "$(windows kq 900 a):$(windows kq 900 b)" "2:2" "never more than 2 of a key in a window"
# bad rates: one line, status 64, nothing changed
before=$(sql "SELECT CONCAT_WS(',', rate, rate_us) FROM mq_jobs_queues WHERE queue = 'rq'")
for bad in 0/s '10 /s' 10/0s 10/x -1/s 4294967296/s /s 10/; do
  expect_status 64 "--rate $bad refused" "$MQ" limit rq --rate "$bad"
done
like "$ERR" "mq limit: invalid *" "with one line"
is "$(sql "SELECT CONCAT_WS(',', rate, rate_us) FROM mq_jobs_queues WHERE queue = 'rq'")" "$before" "and nothing changed"
run "$MQ" limit rq --rate 600/5min --key-rate 3/min
is "$OUT" "$(printf 'rate 600/5m00s\nkey-rate 3/1m00s')" "N/5min and N/min read and shown"
# a waiter held back by a limit is woken when a slot ends (ack, fail,
# give-back), not at its next look (each second once it has waited a
# while): three times, each under 400 ms
"$MQ" limit wk --per-key 1 >/dev/null
fast=0
for end in ack fail ack; do
  "$MQ" push --queue wk --key k held >/dev/null; "$MQ" push --queue wk --key k next >/dev/null
  "$MQ" pop --queue wk --lease 1m --receipt-file "$T_TMP/r.wk" >/dev/null
  "$MQ" pop --queue wk --wait 20s --lease 1m --receipt-file "$T_TMP/r.wk2" >"$T_TMP/wk.out" &
  w=$!
  sleep 3
  t0=$(date +%s%N)
  if [ $end = ack ]; then "$MQ" ack "$(cat "$T_TMP/r.wk")"; else "$MQ" fail --no-retry "$(cat "$T_TMP/r.wk")" >/dev/null; fi
  wait $w
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$(cat "$T_TMP/wk.out")" = next ] && [ "$ms" -lt 400 ] && fast=$((fast + 1))
  echo "# $end: the waiter had its job $ms ms after"
  "$MQ" ack "$(cat "$T_TMP/r.wk2")"
done
is "$fast" 3 "a waiter held back by per key 1 gets the job at once when the slot ends (3 of 3)"
# and when the slot ends while the waiter is between its claim (held
# back) and its next park: the wakeup's KILL QUERY finds no statement
# to end, and the park must see that it was woken all the same (it
# slept on for its second: 2,500 ms here). A relay (fault-proxy.py,
# FP_DELAY_MS) holds the waiter's 10th wait statement 1 s: its waits
# alternate a look (a due job: claim) and a park (the claim was held
# back), so the 10th is a park, by then of a whole second.
"$MQ" limit wr --per-key 1 >/dev/null
"$MQ" push --queue wr --key k held >/dev/null; "$MQ" push --queue wr --key k next >/dev/null
"$MQ" pop --queue wr --lease 1m --receipt-file "$T_TMP/r.wr" >/dev/null
rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
FP_DELAY_MS=1000 FP_NTH=10 python3 "$TESTS_DIR/fault-proxy.py" \
  "$T_TMP/proxy.sock" "$MQ_TEST_SOCKET" 'mq-wait' "$T_TMP/fired" &
proxy=$!
i=0
while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" pop --queue wr --wait 30s --lease 1m >"$T_TMP/wr.out" &
w=$!
i=0
while [ ! -f "$T_TMP/fired" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i + 1)); done
t0=$(date +%s%N)
"$MQ" ack "$(cat "$T_TMP/r.wr")"
wait $w
ms=$((($(date +%s%N) - t0) / 1000000))
kill $proxy 2>/dev/null; wait $proxy 2>/dev/null
is "$(cat "$T_TMP/wr.out")" next "the slot freed between a held waiter's claim and its park: the waiter gets the job"
check "as soon as its park reaches the server: after $ms ms, 1,000 of them the relay's (under 1,500)" test "$ms" -lt 1500
# the same, the ack's count of the wake held 1.5 s by a second relay
# (its KILL found the waiter between statements): the waker counts the
# wake before its KILL, so the park that began before the count is
# ended by the KILL after it (before: the KILL went first, the count
# came after the park had read the sum, and the park slept on: 2,000 ms)
"$MQ" push --queue wr --key k2 held2 >/dev/null; "$MQ" push --queue wr --key k2 next2 >/dev/null
"$MQ" pop --queue wr --lease 1m --receipt-file "$T_TMP/r.wr" >/dev/null
rm -f "$T_TMP/fired" "$T_TMP/fired2" "$T_TMP/proxy.sock" "$T_TMP/proxy2.sock"
FP_DELAY_MS=1000 FP_NTH=10 python3 "$TESTS_DIR/fault-proxy.py" \
  "$T_TMP/proxy.sock" "$MQ_TEST_SOCKET" 'mq-wait' "$T_TMP/fired" &
proxy=$!
FP_DELAY_MS=1500 python3 "$TESTS_DIR/fault-proxy.py" \
  "$T_TMP/proxy2.sock" "$MQ_TEST_SOCKET" 'SET wakes = wakes + 1' "$T_TMP/fired2" &
proxy2=$!
i=0
while { [ ! -S "$T_TMP/proxy.sock" ] || [ ! -S "$T_TMP/proxy2.sock" ]; } && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" pop --queue wr --wait 30s --lease 1m >"$T_TMP/wr.out" &
w=$!
i=0
while [ ! -f "$T_TMP/fired" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i + 1)); done
t0=$(date +%s%N)
MQ_SOCKET="$T_TMP/proxy2.sock" "$MQ" ack "$(cat "$T_TMP/r.wr")" &
a=$!
wait $w
ms=$((($(date +%s%N) - t0) / 1000000))
wait $a
kill $proxy $proxy2 2>/dev/null; wait $proxy $proxy2 2>/dev/null
is "$(cat "$T_TMP/wr.out"):$(test -f "$T_TMP/fired2" && echo counted)" next2:counted "the wake's count held: the waiter gets the job"
check "when the count and its KILL come: after $ms ms, 1,500 of them the relay's (under 1,800)" test "$ms" -lt 1800
# mq work --exit-when-empty drains a queue a rate holds back, and exits
# once it is empty (before: it exited with jobs left, or parked for ever
# once the window was full and the queue empty)
"$MQ" limit dr --rate 10/s >/dev/null
seq 1 25 | "$MQ" push --lines --queue dr >/dev/null 2>&1
t0=$(date +%s%N)
expect_status 0 "mq work --exit-when-empty on a queue at 10/s" timeout 60 "$MQ" work --queue dr --exit-when-empty -- true
ms=$((($(date +%s%N) - t0) / 1000000))
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'dr' AND state = 'done'")" 25 "all 25 done"
check "in no less than the rate allows ($ms ms, at least 1,400)" test "$ms" -ge 1400
# mq why says what rate holds a job back, and when the window has room
"$MQ" limit wy --rate 2/10s --key-rate 1/1m >/dev/null
"$MQ" push --queue wy --key a a1 >/dev/null; "$MQ" push --queue wy --key b b1 >/dev/null
"$MQ" push --queue wy --key c c1 >/dev/null
a2=$("$MQ" push --queue wy --key a a2)
"$MQ" pop --queue wy --lease 1m --count 2 --json >/dev/null
c1=$(sql "SELECT id FROM mq_jobs WHERE queue = 'wy' AND payload = 'c1'")
run "$MQ" why "$c1"
is "$RC" 17 "why: a job held back by the queue's rate: 17"
like "$(printf '%s\n' "$OUT" | head -1)" "job $c1 is ready but held back: queue 'wy' rate 2/10s reached (2 claims in the window), next slot in ?s" \
  "the sentence: the rate, the claims in the window, when the next slot comes"
like "$OUT" "*rate: 2 of 2 claims in 10s*" "the facts: the queue's window"
run "$MQ" why "$a2"
is "$RC" 17 "why: a job held back by both rates: 17"
like "$(printf '%s\n' "$OUT" | head -1)" "*queue 'wy' rate 2/10s reached (2 claims in the window), next slot in ?s; key 'a' rate 1/1m00s reached (1 claim in the window), next slot in ??s" \
  "both rates, the key's last"
run "$MQ" why --json "$a2"
is "$RC" 17 "why --json: 17"
like "$OUT" '*"rates":{"queue":{"rate":2,"window_us":10000000,"used":2,"full":true,"next_slot_us":*},"key":{"rate":1,"window_us":60000000,"used":1,"full":true,"next_slot_us":*}},"parents":null,"schedule":null}' \
  "the rates in JSON"
# a key whose rate window is full is passed over like a full key: its
# 30 jobs at the head do not hold the others back (before: the claim
# read 20 candidates, all of that key, each refused)
"$MQ" limit kh --key-rate 1/1min >/dev/null
seq 1 30 | "$MQ" push --lines --queue kh --key hot >/dev/null 2>&1
"$MQ" push --queue kh --key other other1 >/dev/null; "$MQ" push --queue kh --key more more1 >/dev/null
run "$MQ" pop --queue kh --lease 1m
is "$RC:$OUT" "0:1" "key rate 1/min: the hot key's first"
run "$MQ" pop --queue kh --lease 1m
is "$RC:$OUT" "0:other1" "then another key's job behind its 29 others (skip-locked)"
run "$MQ" pop --queue kh --lease 1m --claim=update
is "$RC:$OUT" "0:more1" "and with the update claim"

# a row of impossible limits (0, half a rate: what a server without
# CHECKs, or with checks off, lets in) is no limit, not a queue that
# nothing claims (before: plain claims passed over it, the limited
# claim found no limit: exit 1 for ever)
sql "SET SESSION check_constraint_checks = 0; INSERT INTO mq_jobs_queues (queue, concurrency, rate) VALUES ('zq', 0, 5)"
"$MQ" push --queue zq z1 >/dev/null
run "$MQ" pop --queue zq --lease 1m
is "$RC:$OUT" "0:z1" "concurrency 0 and a rate without its window: claimed as without limits"

# preference lists crossing two limited queues (xa,xb and xb,xa), both
# ways of claiming: no deadlock reaches a worker (before: error 1213 on
# stderr, then 'reconnecting', in every run), every job done once
for q in xa xb; do
  "$MQ" limit $q --concurrency 3 --per-key 1 >/dev/null
  for i in $(seq 1 60); do printf 'k%d\n' $((i % 6)) ; done | while read -r k; do
    "$MQ" push --queue $q --key "$k" "$q $k" >/dev/null
  done
done
: >"$T_TMP/cross.err"
pids=
for i in $(seq 1 16); do
  [ $((i % 2)) = 0 ] && list=xa,xb || list=xb,xa
  [ $((i % 4)) -lt 2 ] && how=skip-locked || how=update
  "$MQ" work --queue $list --claim=$how --concurrency 2 --lease 30s --exit-when-empty -- sh -c 'cat >/dev/null; sleep 0.02' \
    2>>"$T_TMP/cross.err" &
  pids="$pids $!"
done
for p in $pids; do wait "$p"; done
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(attempts)) FROM mq_jobs WHERE queue IN ('xa', 'xb') AND state = 'done'")" "120,120" \
  "crossed preference lists, 16 workers: all 120 done, each claimed once"
is "$(cat "$T_TMP/cross.err")" "" "and nothing on the workers' stderr"
done_testing
