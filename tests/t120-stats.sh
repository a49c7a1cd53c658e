#!/bin/sh
# mq stats: the counts per queue and state match the table; JSON parses;
# the Prometheus form passes promtool.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# queue a: 3 ready (one 100 s old), 2 scheduled, 2 leased (1 stale), 4 done, 1 dead
seq 1 3 | "$MQ" push --lines --queue a >/dev/null
sql "UPDATE mq_jobs SET available_at = NOW(6) - INTERVAL 100 SECOND WHERE queue = 'a' ORDER BY id LIMIT 1"
seq 1 2 | "$MQ" push --lines --queue a --delay 1h >/dev/null
seq 1 7 | "$MQ" push --lines --queue a --priority -1 >/dev/null
"$MQ" pop --queue a --count 7 --json >"$T_TMP/claimed"
sed 's/.*"receipt":"\([^"]*\)".*/\1/' "$T_TMP/claimed" | head -4 | xargs "$MQ" ack
r=$(sed -n 5p "$T_TMP/claimed" | sed 's/.*"receipt":"\([^"]*\)".*/\1/')
"$MQ" fail --no-retry "$r" >/dev/null
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE queue = 'a' AND state = 'leased' ORDER BY id LIMIT 1"
# queue b: paused, 1 ready; queue c: paused, no jobs
"$MQ" push --queue b x >/dev/null
"$MQ" pause b >/dev/null
"$MQ" pause c >/dev/null
# queue r: 2 recurring (one due, one later), one cancelled, one ordinary
"$MQ" push --queue r --every 1h x >/dev/null
"$MQ" push --queue r --every 1h --delay 1h y >/dev/null
"$MQ" cancel "$("$MQ" push --queue r --every 1h z)" >/dev/null
"$MQ" push --queue r w >/dev/null
# archive: 2 rows, put there by hand: counted by --recount only
sql "INSERT INTO mq_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at) VALUES (1000001, 'a', 'done', 0, '', 1, 1, NOW(), NOW()), (1000002, 'a', 'done', 0, '', 1, 1, NOW(), NOW())"
expect_status 0 "stats before a recount" "$MQ" stats
like "$OUT" "*archive: 0 jobs" "rows put in the archive by hand are not counted"
expect_status 0 "stats --recount" "$MQ" stats --recount
like "$OUT" "*archive: 2 jobs" "until a recount"
is "$(sql "SELECT state, slot, n FROM mq_jobs_counts WHERE state = 'archived'" | tr '\t\n' ' ,')" \
  "archived 0 2," "the recount added the difference, in slot 0"
is "$(counted_jobs)" "$(finished_jobs)" "and nothing else"

expect_status 0 "stats" "$MQ" stats
is "$(printf '%s\n' "$OUT" | awk 'NR > 1 && $1 != "archive:" { print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }')" \
  "a 3 2 0 2 1 4 1 0 no
b 1 0 0 0 0 0 0 0 yes
c 0 0 0 0 0 0 0 0 yes
r 2 1 0 0 0 0 1 2 no" "counts per queue: ready scheduled waiting leased stale done dead recurring paused"
like "$(printf '%s\n' "$OUT" | awk '$1 == "a" { print $11 }')" "1m[45][0-9]s" "oldest ready job of a is ~100 s old, in minutes and seconds"
like "$OUT" "*archive: 2 jobs" "archive row count"
is "$(printf '%s\n' "$OUT" | head -1 | tr -s ' ')" \
  "QUEUE READY SCHEDULED WAITING LEASED STALE DONE DEAD RECURRING PAUSED OLDEST_READY CONCURRENCY PER_KEY RATE KEY_RATE HELD" "header"

expect_status 0 "stats --json" "$MQ" stats --json
is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
a = [q for q in d["queues"] if q["queue"] == "a"][0]
r = [q for q in d["queues"] if q["queue"] == "r"][0]
print(d["table"], d["archive"], [q["queue"] for q in d["queues"]],
      a["ready"], a["scheduled"], a["leased"], a["stale"], a["done"], a["dead"],
      a["recurring"], a["paused"], 99 < a["oldest_ready_seconds"] < 130, r["recurring"])')" \
  "mq_jobs 2 ['a', 'b', 'c', 'r'] 3 2 2 1 4 1 0 False True 2" "--json has the same numbers"

expect_status 0 "stats --queue b" "$MQ" stats --queue b --json
like "$OUT" '{"table":"mq_jobs","queues":\[{"queue":"b","ready":1,*"paused":true,*}\],"archive":2}' \
  "--queue b shows b only"
expect_status 0 "stats of an unknown queue" "$MQ" stats --queue nobody --json
like "$OUT" '*"queue":"nobody","ready":0,"scheduled":0,"waiting":0,"leased":0,"stale":0,"done":0,"dead":0,"recurring":0,"paused":false*' \
  "an unknown queue shows zeros"

expect_status 0 "stats --prometheus" "$MQ" stats --prometheus
printf '%s\n' "$OUT" >"$T_TMP/metrics.prom"
like "$OUT" '*mq_jobs{table="mq_jobs",queue="a",state="ready"} 3
*' "ready gauge"
like "$OUT" '*mq_stale_leases{table="mq_jobs",queue="a"} 1
*' "stale gauge"
like "$OUT" '*mq_recurring_jobs{table="mq_jobs",queue="r"} 2
*' "recurring gauge"
like "$OUT" '*mq_queue_paused{table="mq_jobs",queue="b"} 1
*' "paused gauge"
like "$OUT" '*mq_archive_jobs{table="mq_jobs"} 2' "archive gauge"
promtool_check "$T_TMP/metrics.prom" "promtool check metrics passes"

# The counts of done, dead and archived jobs are kept by the writes that
# make them, not read from the table: after each kind of write they must
# equal the table's own counts.
"$MQ" init --table k >/dev/null
export MQ_TABLE=k
seq 1 20 | "$MQ" push --lines --queue x >/dev/null
seq 1 6 | "$MQ" push --lines --queue y --max-attempts 1 >/dev/null
"$MQ" push --queue x --every 1h every >/dev/null
"$MQ" pop --queue y,x --count 27 --json >"$T_TMP/k"
rcpt() { sed -n "$1p" "$T_TMP/k" | sed 's/.*"receipt":"\([^"]*\)".*/\1/'; }
"$MQ" ack "$(rcpt 1)" >/dev/null                         # one receipt
"$MQ" ack $(for i in 7 8 9 10 11 12 27; do rcpt $i; done) # several, and the recurring job
"$MQ" ack "$(rcpt 7)" 2>/dev/null                        # lost: counts nothing
"$MQ" fail --no-retry "$(rcpt 2)" >/dev/null             # dead
"$MQ" fail "$(rcpt 13)" >/dev/null                       # retried: not counted
"$MQ" cancel "$("$MQ" push --queue x --delay 1h later)" >/dev/null
sql "UPDATE k SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE queue = 'y' AND state = 'leased'"
"$MQ" requeue-stale >/dev/null                           # y's attempts are used up: dead
is "$(counted_jobs k)" "$(finished_jobs k)" "counts = the table after ack, fail, cancel, requeue-stale"
is "$(finished_jobs k)" "x dead 1,x done 6,y dead 5,y done 1," "(which holds what the steps made)"
expect_status 0 "stats of the counted table" "$MQ" stats --json
like "$OUT" '*"queue":"x",*"done":6,"dead":1,*"queue":"y",*"done":1,"dead":5,*"archive":0}' "stats shows them"
seq 1 8 | "$MQ" push --lines --queue w >/dev/null
"$MQ" push --queue w --max-attempts 1 fails >/dev/null
"$MQ" work --queue w --concurrency 4 --exit-when-empty -- sh -c '[ "$(cat)" != fails ]' 2>/dev/null
is "$(counted_jobs k)" "$(finished_jobs k)" "counts = the table after mq work"
like "$(finished_jobs k)" "*w dead 1,w done 8,*" "(whose jobs ran)"
# 70 receipts in one ack (two batches, counted together at the end), and
# a leased job cancelled with --force
seq 1 71 | "$MQ" push --lines --queue v >/dev/null
"$MQ" pop --queue v --count 71 --json >"$T_TMP/v"
expect_status 0 "an ack of 70 receipts" sh -c 'sed -n 1,70p "$1" | sed "s/.*\"receipt\":\"\([^\"]*\)\".*/\1/" | xargs "$0" ack' "$MQ" "$T_TMP/v"
expect_status 0 "cancel --force of a leased job" "$MQ" cancel --force "$(sed -n 71p "$T_TMP/v" | sed 's/.*"id":\([0-9]*\).*/\1/')"
is "$(counted_jobs k)" "$(finished_jobs k)" "counts = the table after both"
like "$(finished_jobs k)" "*v dead 1,v done 70,*" "(which finished all 71)"
"$MQ" archive --older-than 0s --batch 3 >/dev/null
is "$(counted_jobs k)" "$(finished_jobs k)" "counts = the table after archive (done)"
"$MQ" archive --older-than 0s --dead --purge >/dev/null
is "$(counted_jobs k)" "$(finished_jobs k)" "counts = the table after archive --dead --purge"
is "$(finished_jobs k)" "v archived 70,w archived 8,x archived 6,y archived 1," "(which moved and deleted what it should)"
expect_status 0 "stats after the archive" "$MQ" stats --json
like "$OUT" '*"queue":"x",*"done":0,"dead":0,*"archive":85}' "the archive's count"
# hand edits are not counted; --recount mends them, also while writers run
sql "UPDATE k SET state = 'done', finished_at = NOW(6) WHERE queue = 'x' AND state = 'ready' ORDER BY id LIMIT 2"
sql "DELETE FROM k_archive WHERE queue = 'y'"
is "$(counted_jobs k)" "v archived 70,w archived 8,x archived 6,y archived 1," "a hand edit leaves the counts behind"
# two recounts at once (one waits for the other, then adds nothing) while
# a loop acks
( i=0; while [ $i -lt 30 ]; do "$MQ" push --queue z j >/dev/null; r=$("$MQ" pop --queue z --json | sed 's/.*"receipt":"\([^"]*\)".*/\1/'); "$MQ" ack "$r" || echo "ack failed"; i=$((i + 1)); done ) >"$T_TMP/loop" 2>&1 &
pid=$!
"$MQ" stats --recount >/dev/null 2>"$T_TMP/rc1" &
p1=$!
expect_status 0 "stats --recount while jobs are acked" "$MQ" stats --recount
wait $p1
is "$?:$(cat "$T_TMP/rc1")" "0:" "and a second one at the same time"
wait $pid
is "$(cat "$T_TMP/loop")" "" "the loop acked its 30 jobs"
is "$(counted_jobs k)" "$(finished_jobs k)" "the recounts mend the counts once, and later acks add to them"
before=$(sql "CHECKSUM TABLE k_counts EXTENDED" | cut -f2)
expect_status 0 "a second recount" "$MQ" stats --recount
is "$(sql "CHECKSUM TABLE k_counts EXTENDED" | cut -f2)" "$before" "changes nothing"
unset MQ_TABLE

# an empty table
expect_status 78 "stats on a missing table" "$MQ" stats --table empty_q
"$MQ" init --table empty_q >/dev/null
expect_status 0 "stats on an empty table" "$MQ" stats --table empty_q --prometheus
printf '%s\n' "$OUT" >"$T_TMP/empty.prom"
promtool_check "$T_TMP/empty.prom" "promtool accepts the empty table's metrics"

expect_status 64 "--json with --prometheus" "$MQ" stats --json --prometheus
expect_status 64 "bad --queue" "$MQ" stats --queue ''
expect_status 64 "a list of queues" "$MQ" stats --queue a,b
like "$ERR" "mq stats: --queue takes one queue here (a list of queues only for pop, work and schedule fire)" "says stats takes one"
expect_status 64 "an operand" "$MQ" stats a
# many queues, each listed once (the client finds a queue by a hash of
# its name since 1df7b14, not by a scan of those found so far: 6 s of
# CPU for 40,000 queues before, 0.5 s after; doc/performance-history.md);
# a settings row 'q7 ' (a trailing blank) is still queue q7's
"$MQ" init --table manyq >/dev/null
sql "INSERT INTO manyq (queue, payload) SELECT CONCAT('q', seq), 'p' FROM seq_1_to_3000;
     INSERT INTO manyq_queues (queue, paused) SELECT CONCAT('q', seq), 0 FROM seq_1_to_3000 WHERE seq % 2 = 0;
     UPDATE manyq_queues SET queue = 'q7 ', paused = 1 WHERE queue = 'q8'"
"$MQ" stats --table manyq --json >"$T_TMP/many.json"
is "$(grep -o '"queue":"' "$T_TMP/many.json" | wc -l)" 3000 "3,000 queues: each once"
like "$(cat "$T_TMP/many.json")" '*{"queue":"q7","ready":1,*"paused":true,*' \
  "a settings row 'q7 ' is queue q7's"
# jobs of one queue spelled 'blank' and 'blank ' (another program's row,
# which the server takes for the same queue): one queue, under the name
# mq takes, whichever spelling the index gives first (the spelling with
# the blank moved the series and left check's perfdata and completion)
"$MQ" init --table padq >/dev/null
sql "SET SESSION check_constraint_checks=0;
     INSERT INTO padq (queue, payload, available_at) VALUES
       ('blank ', 'a', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR), ('blank', 'b', UTC_TIMESTAMP(6)),
       ('only  ', 'c', UTC_TIMESTAMP(6))"
"$MQ" stats --table padq --prometheus >"$T_TMP/pad.prom"
like "$(cat "$T_TMP/pad.prom")" '*mq_jobs{table="padq",queue="blank",state="ready"} 2*' \
  "rows 'blank' and 'blank ': one queue blank in the metrics"
case $(cat "$T_TMP/pad.prom") in *queue="blank "*) not_ok "and no series of 'blank '" ;; *) ok "and no series of 'blank '" ;; esac
like "$(cat "$T_TMP/pad.prom")" '*queue="only",state="ready"} 1*' "a queue spelled 'only  ' alone: only"
is "$("$MQ" stats --table padq --json | grep -o '"queue":"[^"]*"' | tr '\n' ' ')" \
  '"queue":"blank" "queue":"only" ' "the JSON names them so"
expect_status 0 "check of that table" "$MQ" check --table padq
like "$OUT" "*'blank.ready'=2;;;0*'only.ready'=1;;;0*" "check gives their perfdata"
is "$("$MQ" completion --queues --table padq | tr '\n' ' ')" "blank only " "completion offers them"
done_testing
