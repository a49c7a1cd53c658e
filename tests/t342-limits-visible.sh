#!/bin/sh
# What limits hold back, shown (issue 31, "Visible"): real jobs pushed
# with --key, limits set by mq limit, slots held by mq pop --lease 1m.
# mq why of a ready job that a limit holds back says which (the queue's
# concurrency, its key's per-key, both), how many of how many slots are
# held and by whom (ids; for a key, the worker and when the lease ends;
# 10 at most, then "and N more"), status 17, and --json's slots; a job
# its limits leave room for, or whose holder's lease ended (ack, expiry),
# is ready (0) as before; a paused queue stays 10. The key, and the
# worker, from the table, are escaped (UTF-8 as it is, a quote, a
# backslash doubled, an invalid byte \xHH; JSON-escaped in --json).
# mq stats (table, --json, --prometheus), top and check: the limits,
# rates included, and the due jobs they hold back: by slots, by a full
# rate window of the queue or of a key, a key full both ways once.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

first() { printf '%s\n' "$OUT" | sed -n 1p; }
# json EXPR: EXPR of the JSON object in $OUT, as python prints it (d)
json() { printf '%s' "$OUT" | python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }
# worker ID W: the job's lease is held by W (the pop's host:pid made
# known)
worker() { sql "UPDATE mq_jobs SET leased_by = '$2' WHERE id = $1"; }
# claim QUEUE [N]: claims N jobs (1) of QUEUE for a minute; ids in $IDS
claim() {
  IDS=$("$MQ" pop --queue "$1" --count "${2:-1}" --lease 1m --json |
    python3 -c 'import json, sys
print(" ".join(str(json.loads(l)["id"]) for l in sys.stdin if l.strip()))')
}

# ---- per key: a full key's job is held, others are not ----
a1=$("$MQ" push --queue api --key customer:42 a1)
a2=$("$MQ" push --queue api --key customer:42 a2)
a3=$("$MQ" push --queue api --key customer:7 a3)
a4=$("$MQ" push --queue api a4)
"$MQ" limit api --per-key 1 >/dev/null
run "$MQ" why "$a2"
is "$RC:$(first)" "0:job $a2 is ready and due: it is waiting for a consumer (1 job ahead of it)" \
  "before any claim, a job of a limited queue is ready (0)"
claim api
is "$IDS" "$a1" "the claim took the key's first job"
worker "$a1" web1:4242
run "$MQ" why "$a2"
like "$RC:$(first)" "17:job $a2 is ready but held back: key 'customer:42' has 1 of 1 slot, held by job $a1 (worker web1:4242, lease ends in [45][0-9]s)" \
  "why: the key's slot is held: by which job, worker, lease end (17)"
is "$(printf '%s\n' "$OUT" | grep -E '^(key|per key|concurrency):')" "key: customer:42
per key: 1 of 1 slot held" "why: the key and its slots in the facts"
run "$MQ" why "$a3"
is "$RC:$(first)" "0:job $a3 is ready and due: it is waiting for a consumer (1 job ahead of it)" \
  "why: another key's job, behind the held one, is ready (0)"
like "$OUT" "*
per key: 0 of 1 slot held*" "why: its key holds no slot"
run "$MQ" why "$a4"
is "$RC:$(first)" "0:job $a4 is ready and due: it is waiting for a consumer (2 jobs ahead of it)" \
  "why: a job without a key is not held by per-key (0)"
case $OUT in *"per key"*) not_ok "no per-key line for a job without a key" "$OUT" ;;
*) ok "no per-key line for a job without a key" ;; esac
run "$MQ" why --json "$a2"
is "$RC:$(json 'd["answer"], d["status"], d["ahead"], d["key"], d["slots"]["concurrency"], [(s["limit"], s["held"], s["full"], [(h["id"], h["leased_by"], 40e6 < h["leased_until_from_now_us"] <= 60e6, len(h["leased_until"])) for h in s["holders"]]) for s in [d["slots"]["per_key"]]]')" \
  "17:held 17 None customer:42 None [(1, 1, True, [($a1, 'web1:4242', True, 20)])]" \
  "why --json: answer held, status 17, slots of the key with the holder"
run "$MQ" why --json "$a3"
is "$RC:$(json 'd["answer"], d["status"], d["ahead"], d["slots"]')" \
  "0:ready 0 1 {'concurrency': None, 'per_key': {'limit': 1, 'held': 0, 'full': False, 'holders': []}}" \
  "why --json: a ready job of a limited queue: its slots, not full"
run "$MQ" why --json "$a1"
is "$RC:$(json 'd["answer"], d["slots"]')" "12:leased None" \
  "why --json: a leased job has no slots (null)"

# the slot ends with the holder's ack: the job is ready again
"$MQ" ack "$(sql "SELECT CONCAT(id, '.', lease_token) FROM mq_jobs WHERE id = $a1")"
run "$MQ" why "$a2"
is "$RC:$(first)" "0:job $a2 is ready and due: it is waiting for a consumer (0 jobs ahead of it)" \
  "why: the holder acked, the key's job is ready (0)"
# and with its lease's expiry (a stale lease holds no slot)
claim api
is "$IDS" "$a2" "the key's next job is claimed"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'api' AND job_key = 'customer:42' AND state = 'ready'")" 0 \
  "(no other job of that key waits)"
a5=$("$MQ" push --queue api --key customer:42 a5)
run "$MQ" why "$a5"
like "$RC:$(first)" "17:job $a5 is ready but held back: key 'customer:42' has 1 of 1 slot, held by job $a2 (worker *:*, lease ends in *s)" \
  "why: a new job of the key is held by the new holder (its own host:pid)"
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = $a2"
run "$MQ" why "$a5"
is "$RC:$(first)" "0:job $a5 is ready and due: it is waiting for a consumer (2 jobs ahead of it)" \
  "why: the holder's lease expired (stale): the job is ready (0)"
run "$MQ" why "$a2"
is "$RC" 13 "(the holder is stale: 13)"

# ---- concurrency: every job of a full queue is held ----
d1=$("$MQ" push --queue deploy --key repo/web d1)
d2=$("$MQ" push --queue deploy --key repo/api d2)
d3=$("$MQ" push --queue deploy --key repo/db d3)
d4=$("$MQ" push --queue deploy d4)
"$MQ" limit deploy --concurrency 2 >/dev/null
claim deploy 2
is "$IDS" "$d1 $d2" "two jobs claimed at concurrency 2"
sql "UPDATE mq_jobs SET leased_until = leased_until + INTERVAL 10 SECOND WHERE id = $d1"
for j in "$d3" "$d4"; do
  run "$MQ" why "$j"
  is "$RC:$(first)" "17:job $j is ready but held back: queue 'deploy' has 2 of 2 slots (jobs $d2, $d1)" \
    "why: the queue's slots are held: by which jobs, the first to end first (17)"
done
like "$OUT" "*
concurrency: 2 of 2 slots held" "why: the queue's slots in the facts, no per-key line"
run "$MQ" why --json "$d3"
is "$RC:$(json 'd["answer"], d["slots"]["per_key"], d["slots"]["concurrency"]["limit"], d["slots"]["concurrency"]["held"], d["slots"]["concurrency"]["full"], [h["id"] for h in d["slots"]["concurrency"]["holders"]]')" \
  "17:held None 2 2 True [$d2, $d1]" "why --json: the queue's slots and holders"
# a limit lowered under the leases held: more held than slots
"$MQ" limit deploy --concurrency 1 >/dev/null
run "$MQ" why "$d3"
is "$RC:$(first)" "17:job $d3 is ready but held back: queue 'deploy' has 2 of 1 slot (jobs $d2, $d1)" \
  "why: a limit lowered under the leases: 2 of 1 slot"
# raised: room again
"$MQ" limit deploy --concurrency 3 >/dev/null
run "$MQ" why "$d3"
is "$RC:$(first)" "0:job $d3 is ready and due: it is waiting for a consumer (0 jobs ahead of it)" \
  "why: the limit raised, the job is ready (0)"
like "$OUT" "*
key: repo/db
concurrency: 2 of 3 slots held" "why: 2 of 3 slots held"
# a paused queue is paused first
"$MQ" limit deploy --concurrency 2 >/dev/null
"$MQ" pause deploy >/dev/null
run "$MQ" why "$d3"
like "$RC:$(first)" "10:job $d3 waits: its queue 'deploy' is paused*" \
  "why: a paused limited queue says paused (10)"
"$MQ" resume deploy >/dev/null

# ---- both full; more than 10 holders ----
b1=$("$MQ" push --queue both --key k b1)
b2=$("$MQ" push --queue both --key k b2)
"$MQ" limit both --concurrency 1 --per-key 1 >/dev/null
claim both
worker "$b1" 'w:1'
run "$MQ" why "$b2"
like "$RC:$(first)" "17:job $b2 is ready but held back: queue 'both' has 1 of 1 slot (job $b1); key 'k' has 1 of 1 slot, held by job $b1 (worker w:1, lease ends in *s)" \
  "why: both limits full, both said"
seq 1 13 | "$MQ" push --lines --queue many >/dev/null
"$MQ" limit many --concurrency 12 >/dev/null
claim many 12
m=$(sql "SELECT MAX(id) FROM mq_jobs WHERE queue = 'many'")
list=$(sql "SELECT GROUP_CONCAT(id ORDER BY leased_until, id SEPARATOR ', ') FROM (SELECT id, leased_until FROM mq_jobs WHERE queue = 'many' AND state = 'leased' ORDER BY leased_until, id LIMIT 10) x")
run "$MQ" why "$m"
is "$RC:$(first)" "17:job $m is ready but held back: queue 'many' has 12 of 12 slots (jobs $list and 2 more)" \
  "why: 10 holders at most, then how many more"
run "$MQ" why --json "$m"
is "$(json 'd["slots"]["concurrency"]["held"], len(d["slots"]["concurrency"]["holders"])')" \
  "12 10" "why --json: 12 held, 10 holders listed"

# ---- the key and the worker from the table, escaped ----
hk=$(printf 'k\303\251y'"'"'"\\x\377')
h1=$("$MQ" push --queue hq --key "$hk" h1)
h2=$("$MQ" push --queue hq --key "$hk" h2)
"$MQ" limit hq --per-key 1 >/dev/null
claim hq
sql "UPDATE mq_jobs SET leased_by = CONCAT('w', CHAR(27), '[2J\\\\', CHAR(10)) WHERE id = $h1"
run "$MQ" why "$h2"
cat >"$T_TMP/exp" <<'EOF'
17:job H2 is ready but held back: key 'kéy'"\\x\xff' has 1 of 1 slot, held by job H1 (worker w\x1b[2J\\\x0a, lease ends in Ns)
EOF
is "$RC:$(first | sed 's/lease ends in [0-9]*s)$/lease ends in Ns)/')" \
  "$(sed "s/H2/$h2/; s/H1/$h1/" "$T_TMP/exp")" \
  "why: a hostile key and worker escaped (UTF-8 kept, backslash doubled, bytes \\xHH)"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 10 "why: no line broken by the worker's newline"
is "$(printf '%s' "$OUT" | tr -d -c '\033' | wc -c | tr -d ' ')" 0 "why: no ESC byte"
run "$MQ" why --json "$h2"
is "$(json 'd["key"] == "k\u00e9y\x27\"\\x\ufffd" or ascii(d["key"]), ascii(d["slots"]["per_key"]["holders"][0]["leased_by"])')" \
  "True 'w\\x1b[2J\\\\\\n'" "why --json: the key and worker JSON-escaped"

# ---- mq stats, top, check: the limits and the jobs held back ----
# sk, per key 1: x1 and y1 claimed; x2, x3 and y2 held (their keys
# full), n1 (no key) not, x4 due later not; sc, concurrency 2: two
# claimed, the 3 due ones held, one due later not; sn: no limits
for p in x1 x2 x3; do "$MQ" push --queue sk --key x "$p" >/dev/null; done
"$MQ" push --queue sk --key x --delay 1h x4 >/dev/null
for p in y1 y2; do "$MQ" push --queue sk --key y "$p" >/dev/null; done
"$MQ" push --queue sk n1 >/dev/null
sql "UPDATE mq_jobs SET priority = -1 WHERE queue = 'sk' AND payload IN ('x1', 'y1')"
"$MQ" limit sk --per-key 1 >/dev/null
claim sk 2
is "$(sql "SELECT GROUP_CONCAT(payload ORDER BY id) FROM mq_jobs WHERE queue = 'sk' AND state = 'leased'")" \
  "x1,y1" "sk: x1 and y1 hold their keys' slots"
seq 1 5 | "$MQ" push --lines --queue sc >/dev/null 2>&1
"$MQ" push --queue sc --delay 1h later >/dev/null
"$MQ" limit sc --concurrency 2 >/dev/null
claim sc 2
"$MQ" push --queue sn plain >/dev/null
run "$MQ" stats
is "$RC:$(printf '%s\n' "$OUT" | head -1 | tr -s ' ')" \
  "0:QUEUE READY SCHEDULED WAITING LEASED STALE DONE DEAD RECURRING PAUSED OLDEST_READY CONCURRENCY PER_KEY RATE KEY_RATE HELD" \
  "stats: the limits and the held back jobs, last columns"
is "$(printf '%s\n' "$OUT" | awk '$1 == "sk" || $1 == "sc" || $1 == "sn" { print $1, $2, $3, $5, $12, $13, $14, $15, $16 }')" \
  "sc 3 1 2 2 - - - 3
sk 4 1 2 - 1 - - 3
sn 1 0 0 - - - - 0" "stats: per queue, ready, scheduled, leased, concurrency, per key, rates, held"
run "$MQ" stats --json
is "$RC:$(json '[(q["queue"], q["ready"], q["concurrency"], q["per_key"], q["held_back"]) for q in d["queues"] if q["queue"] in ("sc", "sk", "sn")]')" \
  "0:[('sc', 3, 2, None, 3), ('sk', 4, None, 1, 3), ('sn', 1, None, None, 0)]" \
  "stats --json: concurrency, per_key (null: none) and held_back"
run "$MQ" stats --json --queue sk
like "$OUT" '{"table":"mq_jobs","queues":\[{"queue":"sk",*,"oldest_ready_seconds":*,"concurrency":null,"per_key":1,"rate":null,"rate_us":null,"key_rate":null,"key_rate_us":null,"held_back":3,"counters":{*}}\],"archive":0}' \
  "stats --json --queue: the members in their place"

# a hostile queue name another program gave a limit: its label escaped
sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs_queues (queue, paused, concurrency) VALUES (CONCAT('h\"', CHAR(92), CHAR(10), 'x'), 0, 4)"
run "$MQ" stats --prometheus
is "$RC:$(printf '%s\n' "$OUT" | grep -E '^(# (HELP|TYPE) )?mq_(jobs_held_back|queue_limit)' | grep -v 'queue="[a-h]"')" \
  "0:# HELP mq_jobs_held_back Jobs due and waiting that a limit of the queue holds back now (its concurrency or their key's slots all held, or the rate window of the queue or of their key full).
# TYPE mq_jobs_held_back gauge
mq_jobs_held_back{table=\"mq_jobs\",queue=\"api\"} 0
mq_jobs_held_back{table=\"mq_jobs\",queue=\"both\"} 1
mq_jobs_held_back{table=\"mq_jobs\",queue=\"deploy\"} 2
mq_jobs_held_back{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\"} 0
mq_jobs_held_back{table=\"mq_jobs\",queue=\"hq\"} 1
mq_jobs_held_back{table=\"mq_jobs\",queue=\"many\"} 1
mq_jobs_held_back{table=\"mq_jobs\",queue=\"sc\"} 3
mq_jobs_held_back{table=\"mq_jobs\",queue=\"sk\"} 3
mq_jobs_held_back{table=\"mq_jobs\",queue=\"sn\"} 0
# HELP mq_queue_limit The queue's limits (mq limit): at most that many jobs leased at once, of the queue (concurrency) or of one key (per_key); at most that many claims in any window (mq_queue_limit_window_seconds), of the queue (rate) or of one key (key_rate); no sample for a limit not set.
# TYPE mq_queue_limit gauge
mq_queue_limit{table=\"mq_jobs\",queue=\"api\",limit=\"per_key\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"both\",limit=\"concurrency\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"both\",limit=\"per_key\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"deploy\",limit=\"concurrency\"} 2
mq_queue_limit{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\",limit=\"concurrency\"} 4
mq_queue_limit{table=\"mq_jobs\",queue=\"hq\",limit=\"per_key\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"many\",limit=\"concurrency\"} 12
mq_queue_limit{table=\"mq_jobs\",queue=\"sc\",limit=\"concurrency\"} 2
mq_queue_limit{table=\"mq_jobs\",queue=\"sk\",limit=\"per_key\"} 1
# HELP mq_queue_limit_window_seconds The window of the queue's rate limits (mq limit): of the queue (rate) or of one key (key_rate); no sample for a limit not set.
# TYPE mq_queue_limit_window_seconds gauge" \
  "stats --prometheus: held back per queue, the limits set, labels escaped"
printf '%s\n' "$OUT" >"$T_TMP/metrics"
promtool_check "$T_TMP/metrics" "promtool check metrics passes"
sql "DELETE FROM mq_jobs_queues WHERE queue LIKE 'h\"%'"

run "$MQ" top --once --interval 100ms --queue sk
is "$RC:$(printf '%s\n' "$OUT" | sed -n 2p | tr -s ' ')" \
  "0:QUEUE READY SCHED WAIT LEASED STALE DEAD IN/S OUT/S IN/S(1M) OUT/S(1M) ETA OLDEST WORKERS HELD HISTORY" \
  "top --once: a HELD column"
is "$(printf '%s\n' "$OUT" | awk '$1 == "sk" { print $2, $3, $5, $14, $15 }')" "4 1 2 1 3" \
  "top --once: sk's 4 ready, 1 scheduled, 2 leased, 1 worker, 3 held"

run "$MQ" check --queue sk --warn-held 3
like "$RC:$OUT" "0:MQ OK - queue sk: 4 ready, 0 stale, 0 dead, 3 held back, oldest ready * | 'sk.ready'=4;;;0 'sk.scheduled'=1;;;0 'sk.waiting'=0;;;0 'sk.leased'=2;;;0 'sk.stale'=0;;;0 'sk.dead'=0;;;0 'sk.oldest_ready'=*s;;;0 'sk.held_back'=3;3;;0" \
  "check --warn-held 3: 3 held back is OK, said, and in the perfdata"
run "$MQ" check --queue sk --warn-held 2
like "$RC:$OUT" "1:MQ WARNING - sk: 3 held back > 2 (warning) | * 'sk.held_back'=3;2;;0" \
  "check --warn-held 2: WARNING"
run "$MQ" check --queue sc --warn-held 0 --max-held 2
like "$RC:$OUT" "2:MQ CRITICAL - sc: 3 held back > 2 (critical) | * 'sc.held_back'=3;0;2;0" \
  "check --max-held 2: CRITICAL wins"
run "$MQ" check --queue sn --max-held 0
like "$RC:$OUT" "0:MQ OK - queue sn: 1 ready, 0 stale, 0 dead, oldest ready * 'sn.held_back'=0;;0;0" \
  "check: a queue without limits holds nothing back"
run "$MQ" check --max-held x
like "$RC:$OUT" "3:MQ UNKNOWN - usage error: *--max-held*" "check --max-held x: UNKNOWN (usage)"

# x1's lease expires: key x is free, only y2 is held
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE queue = 'sk' AND payload = 'x1'"
run "$MQ" stats --json --queue sk
is "$(json 'd["queues"][0]["held_back"], d["queues"][0]["stale"]')" "1 1" \
  "stats: a stale lease holds no slot: 1 held back (y2)"
# sc's concurrency raised to 3: none held; paused: still counted
"$MQ" limit sc --concurrency 3 >/dev/null
run "$MQ" stats --json --queue sc
is "$(json 'd["queues"][0]["held_back"]')" "0" "stats: room in the queue: nothing held"
"$MQ" limit sc --concurrency 2 >/dev/null
"$MQ" pause sc >/dev/null
run "$MQ" stats --json --queue sc
is "$(json 'd["queues"][0]["paused"], d["queues"][0]["held_back"]')" "True 3" \
  "stats: a paused queue's held back jobs are counted too"

# ---- rates: shown beside the other limits, and what they hold back ----
# ack_all Q: acks Q's leased jobs (their rate ticks stay in the window)
ack_all() {
  for r in $(sql "SELECT CONCAT(id, '.', lease_token) FROM mq_jobs WHERE queue = '$1' AND state = 'leased'"); do
    "$MQ" ack "$r" >/dev/null
  done
}
# held Q: Q's held back jobs, as stats --json gives them
held() { OUT=$("$MQ" stats --json --queue "$1"); json 'd["queues"][0]["held_back"]'; }

# rr, rate 2/1h: two claims fill the window, the 3 jobs left are held
# (with and without a key), whatever the keys; none are leased
for p in r1 r2 r3 r4; do "$MQ" push --queue rr "$p" >/dev/null; done
"$MQ" push --queue rr --key k r5 >/dev/null
"$MQ" limit rr --rate 2/1h >/dev/null
claim rr 4
is "$IDS" "$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM mq_jobs WHERE queue = 'rr' AND payload IN ('r1', 'r2')")" \
  "rr: 2 claimed of 4 asked at rate 2/1h"
ack_all rr
is "$(held rr)" 3 "stats: the queue's rate window full: its 3 due jobs held back"
# kr, key rate 1/1h: a and b claimed once each; a2, a3, b2 held, c1 and
# n1 (no key) not
for p in a1 a2 a3; do "$MQ" push --queue kr --key a "$p" >/dev/null; done
for p in b1 b2; do "$MQ" push --queue kr --key b "$p" >/dev/null; done
"$MQ" push --queue kr --key c c1 >/dev/null
"$MQ" push --queue kr n1 >/dev/null
sql "UPDATE mq_jobs SET priority = -1 WHERE queue = 'kr' AND payload IN ('a1', 'b1')"
"$MQ" limit kr --key-rate 1/1h >/dev/null
claim kr 2
ack_all kr
is "$(sql "SELECT GROUP_CONCAT(payload ORDER BY payload) FROM mq_jobs WHERE queue = 'kr' AND state = 'done'")" "a1,b1" \
  "kr: a1 and b1 claimed and acked (their keys' windows full)"
is "$(held kr)" 3 "stats: keys whose rate window is full: their 3 due jobs held back"
# kb, per key 1 and key rate 1/1h: x1, y1, z1 claimed; y1 acked (y: its
# rate only), z1's tick older than the window (z: its slot only), x1
# held (x: both); x2, x3, y2, z2 held, each once; w1, w2, n1 not
for p in x1 x2 x3; do "$MQ" push --queue kb --key x "$p" >/dev/null; done
for p in y1 y2; do "$MQ" push --queue kb --key y "$p" >/dev/null; done
for p in z1 z2; do "$MQ" push --queue kb --key z "$p" >/dev/null; done
for p in w1 w2; do "$MQ" push --queue kb --key "w$p" "$p" >/dev/null; done
"$MQ" push --queue kb n1 >/dev/null
sql "UPDATE mq_jobs SET priority = -1 WHERE queue = 'kb' AND payload IN ('x1', 'y1', 'z1')"
"$MQ" limit kb --per-key 1 --key-rate 1/1h >/dev/null
claim kb 3
"$MQ" ack "$(sql "SELECT CONCAT(id, '.', lease_token) FROM mq_jobs WHERE queue = 'kb' AND payload = 'y1'")"
sql "UPDATE mq_jobs_ticks SET at = at - INTERVAL 2 HOUR WHERE queue = 'kb' AND gate_key = 'z'"
is "$(sql "SELECT GROUP_CONCAT(payload ORDER BY payload) FROM mq_jobs WHERE queue = 'kb' AND state <> 'ready'")" "x1,y1,z1" \
  "kb: x1, y1, z1 claimed"
is "$(held kb)" 4 "stats: keys full by per key, by key rate, or both: 4 held back, each once"
# the limits shown: rr and kr above, a window in milliseconds, a rate
# without its window and a window without its rate (a row another
# program wrote: no limit, as for the claims)
"$MQ" limit rm --rate 3/1500ms --key-rate 10/s >/dev/null
sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs_queues (queue, paused, rate, key_rate, key_rate_us) VALUES ('rh', 0, 5, 0, 7000)"
run "$MQ" stats
is "$RC:$(printf '%s\n' "$OUT" | awk '$1 ~ /^(rr|kr|kb|rm|rh|sn)$/ { print $1, $2, $12, $13, $14, $15, $16 }')" \
  "0:kb 7 - 1 - 1/1h00m 4
kr 5 - - - 1/1h00m 3
rh 0 - - - - 0
rm 0 - - 3/1500ms 10/1s 0
rr 3 - - 2/1h00m - 3
sn 1 - - - - 0" "stats: ready, the limits (rates as mq limit shows them; a half rate none) and held"
run "$MQ" limit rm
is "$RC:$OUT" "0:rate 3/1500ms
key-rate 10/1s" "limit: the same forms"
run "$MQ" stats --json
is "$RC:$(json '[(q["queue"], q["concurrency"], q["per_key"], q["rate"], q["rate_us"], q["key_rate"], q["key_rate_us"], q["held_back"]) for q in d["queues"] if q["queue"] in ("kb", "kr", "rh", "rm", "rr", "sn")]')" \
  "0:[('kb', None, 1, None, None, 1, 3600000000, 4), ('kr', None, None, None, None, 1, 3600000000, 3), ('rh', None, None, None, None, None, None, 0), ('rm', None, None, 3, 1500000, 10, 1000000, 0), ('rr', None, None, 2, 3600000000, None, None, 3), ('sn', None, None, None, None, None, None, 0)]" \
  "stats --json: rate, rate_us, key_rate, key_rate_us as mq limit --json names them (null: none)"
run "$MQ" limit --json rm
like "$OUT" '*,"rate":3,"rate_us":1500000,"key_rate":10,"key_rate_us":1000000}' "(limit --json: the same members)"
# a hostile queue name with rates, from SQL: its labels escaped
sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs_queues (queue, paused, rate, rate_us, key_rate, key_rate_us) VALUES (CONCAT('h\"', CHAR(92), CHAR(10), 'x'), 0, 7, 250000, 1, 86400000000)"
run "$MQ" stats --prometheus
is "$RC:$(printf '%s\n' "$OUT" | grep -E '^mq_(jobs_held_back|queue_limit)' | grep -E 'queue="(rr|kr|kb|rm|rh|h\\)')" \
  "0:mq_jobs_held_back{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\"} 0
mq_jobs_held_back{table=\"mq_jobs\",queue=\"kb\"} 4
mq_jobs_held_back{table=\"mq_jobs\",queue=\"kr\"} 3
mq_jobs_held_back{table=\"mq_jobs\",queue=\"rh\"} 0
mq_jobs_held_back{table=\"mq_jobs\",queue=\"rm\"} 0
mq_jobs_held_back{table=\"mq_jobs\",queue=\"rr\"} 3
mq_queue_limit{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\",limit=\"rate\"} 7
mq_queue_limit{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\",limit=\"key_rate\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"kb\",limit=\"per_key\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"kb\",limit=\"key_rate\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"kr\",limit=\"key_rate\"} 1
mq_queue_limit{table=\"mq_jobs\",queue=\"rm\",limit=\"rate\"} 3
mq_queue_limit{table=\"mq_jobs\",queue=\"rm\",limit=\"key_rate\"} 10
mq_queue_limit{table=\"mq_jobs\",queue=\"rr\",limit=\"rate\"} 2
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\",limit=\"rate\"} 0.25
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"h\\\"\\\\\\\\\\\\x0ax\",limit=\"key_rate\"} 86400
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"kb\",limit=\"key_rate\"} 3600
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"kr\",limit=\"key_rate\"} 3600
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"rm\",limit=\"rate\"} 1.5
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"rm\",limit=\"key_rate\"} 1
mq_queue_limit_window_seconds{table=\"mq_jobs\",queue=\"rr\",limit=\"rate\"} 3600" \
  "stats --prometheus: the rates (claims, and windows in seconds), held back by rates, labels escaped"
printf '%s\n' "$OUT" >"$T_TMP/metrics"
promtool_check "$T_TMP/metrics" "promtool check metrics passes, with the rates"
sql "DELETE FROM mq_jobs_queues WHERE queue LIKE 'h\"%'"
# a window that is no whole number of milliseconds (another program's)
sql "INSERT INTO mq_jobs_queues (queue, paused, rate, rate_us) VALUES ('ru', 0, 1, 1500500)"
run "$MQ" stats --queue ru
is "$RC:$(printf '%s\n' "$OUT" | awk '$1 == "ru" { print $14 }')" "0:1/1500500us" \
  "stats: a window in microseconds when milliseconds cannot say it"
run "$MQ" stats --prometheus --queue ru
is "$(printf '%s\n' "$OUT" | grep '^mq_queue_limit_window_seconds')" \
  'mq_queue_limit_window_seconds{table="mq_jobs",queue="ru",limit="rate"} 1.5005' \
  "stats --prometheus: the window's seconds exact"
sql "DELETE FROM mq_jobs_queues WHERE queue = 'ru'"
run "$MQ" top --once --interval 100ms --queue kb
is "$RC:$(printf '%s\n' "$OUT" | awk '$1 == "kb" { print $2, $15 }')" "0:7 4" \
  "top --once: HELD counts the jobs held back by rates"
run "$MQ" check --queue rr --max-held 2
like "$RC:$OUT" "2:MQ CRITICAL - rr: 3 held back > 2 (critical) | * 'rr.held_back'=3;;2;0" \
  "check --max-held 2: the jobs a full rate window holds back trip it"
run "$MQ" check --queue kb --warn-held 3
like "$RC:$OUT" "1:MQ WARNING - kb: 4 held back > 3 (warning) | * 'kb.held_back'=4;3;;0" \
  "check --warn-held 3: the jobs of keys full by rate or slots, each once"
# the window has room again: nothing held
"$MQ" limit rr --rate 3/1h >/dev/null
is "$(held rr)" 0 "stats: room in the queue's rate window: nothing held"
"$MQ" limit kr --clear-key-rate >/dev/null
is "$(held kr)" 0 "stats: the key rate cleared: nothing held"

# a settings row another program wrote with trailing blanks ('pb '): the
# server takes it for queue pb's (the claims obey it), and so do stats,
# check and Prometheus: one queue, its limit and what it holds back (two
# rows of pb before, the limit on one, nothing held on the other)
sql "INSERT INTO mq_jobs_queues (queue, concurrency) VALUES ('pb ', 2)"
for i in 1 2 3 4 5; do "$MQ" push --queue pb "b$i" >/dev/null; done
claim pb 5
is "$(echo $IDS | wc -w)" 2 "a settings row 'pb ': the claims obey its concurrency 2"
expect_status 0 "stats --queue pb" "$MQ" stats --queue pb
is "$(printf '%s\n' "$OUT" | grep -c '^pb ')" 1 "  one row for pb"
like "$(printf '%s\n' "$OUT" | grep '^pb ')" "pb * 3 * 2 * 2 * - * - * - * 3" "  3 ready, 2 leased, concurrency 2, 3 held back"
expect_status 0 "stats --json" "$MQ" stats --json
is "$(printf '%s\n' "$OUT" | grep -c '"queue":"pb *"')" 1 "  one object for pb"
run "$MQ" check --queue pb --max-held 0
is "$RC" 2 "check --queue pb --max-held 0: critical (2)"
like "$OUT" "MQ CRITICAL - pb: 3 held back*" "  it counts what the limit holds back"
expect_status 0 "stats --prometheus" "$MQ" stats --prometheus
is "$(printf '%s\n' "$OUT" | grep -c 'queue="pb *",state="ready"')" 1 "  one ready series for pb"

# a rate window longer than mq takes (100 years), written by SQL: the
# server's date arithmetic went out of range, no claim counted in it,
# and every job was claimed; it is held to 36600d
sql "INSERT INTO mq_jobs_queues (queue, rate, rate_us) VALUES ('wl', 1, 18446744073709551615)"
for i in 1 2 3; do "$MQ" push --queue wl "w$i" >/dev/null; done
n=0
for i in 1 2 3; do "$MQ" pop --queue wl --lease 1m >/dev/null 2>&1 && n=$((n + 1)); done
is "$n" 1 "a rate 1 in a window of 2^64-1 us: one claim of three pops"
wid=$(sql "SELECT MIN(id) FROM mq_jobs WHERE queue = 'wl' AND state = 'ready'")
run "$MQ" why "$wid"
is "$RC" 17 "  why of a job left: held back (17)"
like "$OUT" "*rate: 1 of 1 claim in 36600d*" "  by the rate, its window shown as held"
# the longest rate mq limit takes is shown whole by stats (its cell cut
# it to 23 bytes: "4294967295/316223999999")
"$MQ" limit lq --rate 4294967295/36599d23h59m59s999ms >/dev/null
expect_status 0 "stats of the longest rate" "$MQ" stats --queue lq
like "$(printf '%s\n' "$OUT" | grep '^lq ')" "* 4294967295/3162239999999ms *" "  its cell whole, as mq limit shows it"

# half a rate, written with the CHECK off (a rate without its window, a
# window without its rate, a key rate with a window of 0): no limit, as
# claims take it, and every command says so alike (limit's text said
# 'rate -' for hr3 and 'no limits' for hr4 while its JSON gave the half)
sql "SET SESSION check_constraint_checks = 0; INSERT INTO mq_jobs_queues (queue, rate, rate_us) VALUES ('hr3', 1, NULL), ('hr4', NULL, 1000000000); INSERT INTO mq_jobs_queues (queue, concurrency, key_rate, key_rate_us) VALUES ('hr5', 2, 3, 0)"
for q in hr3 hr4; do
  expect_status 0 "limit $q (half a rate)" "$MQ" limit "$q"
  is "$OUT" "no limits" "  text: no limits"
  expect_status 0 "limit --json $q" "$MQ" limit --json "$q"
  is "$OUT" "{\"queue\":\"$q\",\"concurrency\":null,\"per_key\":null,\"rate\":null,\"rate_us\":null,\"key_rate\":null,\"key_rate_us\":null}" \
    "  JSON: rate and rate_us null, as the text says"
done
expect_status 0 "limit hr5 (a key rate of window 0)" "$MQ" limit hr5
is "$OUT" "concurrency 2" "  text: the concurrency only"
expect_status 0 "limit --json hr5" "$MQ" limit --json hr5
like "$OUT" '*"concurrency":2,*"key_rate":null,"key_rate_us":null}' "  JSON: key_rate and key_rate_us null"
"$MQ" push --queue hr3 a >/dev/null; "$MQ" push --queue hr3 b >/dev/null
expect_status 0 "stats --json of hr3, hr4, hr5" "$MQ" stats --json
is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for q in json.load(sys.stdin)["queues"]:
    if q["queue"] in ("hr3", "hr4", "hr5"):
        print(q["queue"], q["rate"], q["rate_us"], q["key_rate"], q["key_rate_us"], q["held_back"])')" "hr3 None None None None 0
hr4 None None None None 0
hr5 None None None None 0" "  stats: the same, nothing held back"
n=0
for i in 1 2; do "$MQ" pop --queue hr3 --lease 1m >/dev/null 2>&1 && n=$((n + 1)); done
is "$n" 2 "  claims ignore hr3's half rate: two pops, two jobs"

done_testing
