#!/bin/sh
# mq retry: dead jobs back to ready by id or by filter (--error, --since,
# --before, --all), --to-queue, --dry-run, dedup keys live again, the
# counts and counters exact, the history, next to a consumer and a second
# retry, --rate, and SIGTERM between batches.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# dead_via_fail QUEUE ERROR [PUSH-OPTIONS...]: a job pushed, claimed and
# failed for good with ERROR; prints its id
dead_via_fail() {
  _q=$1 _e=$2
  shift 2
  _id=$("$MQ" push --queue "$_q" --max-attempts 1 "$@" "job-$_e")
  _r=$("$MQ" pop --queue "$_q" -o /dev/null)
  "$MQ" fail --error "$_e" "$_r" >/dev/null
  echo "$_id"
}
# many_dead QUEUE N: N dead jobs written by SQL, then counted again
many_dead() {
  sql "INSERT INTO mq_jobs (queue, state, payload, attempts, max_attempts,
       finished_at, last_error) SELECT '$1', 'dead', 'x', 1, 1,
       UTC_TIMESTAMP(6), 'boom' FROM seq_1_to_$2"
  "$MQ" stats --recount >/dev/null
}
state_of() { sql "SELECT state FROM mq_jobs WHERE id = $1"; }
dead_in() { sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1' AND state = 'dead'"; }
retried_counter() {
  sql "SELECT COALESCE(SUM(total), 0) FROM mq_jobs_counts WHERE state = 'retried' AND queue = '$1'"
}
counts_exact() { is "$(counted_jobs)" "$(finished_jobs)" "$1: the counts are exact"; }
sums() { table_sum mq_jobs mq_jobs_counts mq_jobs_history mq_jobs_queues; }

full=$(dead_via_fail a "disk full")
t1=$(dead_via_fail a "timeout 1")
t2=$(dead_via_fail a "timeout 2")

# the selection: a bare --queue must say --all; ids exclude filters
before=$(sums)
expect_status 64 "--queue alone is refused (64)" "$MQ" retry --queue a
like "$ERR" "*--all*" "and the refusal names --all"
expect_status 64 "no ids and no --queue is refused" "$MQ" retry
expect_status 64 "ids and --queue exclude each other" "$MQ" retry --queue a "$t1"
expect_status 64 "an invalid --rate is refused" "$MQ" retry --queue a --all --rate 0/s
is "$(sums)" "$before" "the refusals changed nothing"

# --dry-run: which, and nothing changes
run "$MQ" retry --queue a --error timeout --dry-run
is "$RC:$OUT" "0:$t1
$t2" "--dry-run --error lists the matching dead jobs' ids"
like "$ERR" "*2 jobs would be retried*" "and says how many"
run "$MQ" retry --queue a --all --dry-run
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 3 "--dry-run --all lists every dead job"
is "$(sums)" "$before" "--dry-run changes no table"

# by filter: --error
run "$MQ" retry --queue a --error timeout
is "$RC:$OUT" "0:retried 2 jobs" "--error: the two timeouts retried (status 0)"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(state, '/', attempts, '/', finished_at IS NULL, '/', leased_until IS NULL, '/', available_at <= UTC_TIMESTAMP(6), '/', last_error) ORDER BY id) FROM mq_jobs WHERE id IN ($t1, $t2)")" \
  "ready/0/1/1/1/timeout 1,ready/0/1/1/1/timeout 2" \
  "they are ready, due now, attempts 0, unleased, unfinished, the error kept"
is "$(state_of "$full")" dead "the job of another error is still dead"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(event, ':', state, ':', attempt) ORDER BY seq) FROM mq_jobs_history WHERE job_id = $t1")" \
  "failed:dead:1,retried:ready:0" "its history: the failed attempt, then retried"
is "$(retried_counter a)" 2 "the retried counter says 2"
counts_exact "after --error"
run "$MQ" retry --queue a --error nothing-like-this
is "$RC:$OUT" "0:retried 0 jobs" "a filter matching nothing: 0 jobs, status 0"

# a retried job is claimable, its attempts anew
r=$("$MQ" pop --queue a --json)
like "$r" "*\"attempt\":1,*" "a retried job is claimed again, its first attempt"
"$MQ" ack "$(printf '%s' "$r" | sed 's/.*"receipt":"\([^"]*\)".*/\1/')" >/dev/null
counts_exact "after the ack"

# by id: dead ones retried, the others reported, status 1
waiting=$("$MQ" push --queue a waiting)
run "$MQ" retry "$full" "$waiting" 999999
is "$RC:$OUT" "1:retried 1 job" "by id: the dead one retried, status 1 for the others"
like "$ERR" "*2 jobs not dead*$waiting 999999*" "the ids not dead are reported"
is "$(state_of "$full")" ready "the dead job given is ready"
counts_exact "by id"

# --since / --before on the time it died
old=$(dead_via_fail b "old")
new=$(dead_via_fail b "new")
sql "UPDATE mq_jobs SET finished_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR WHERE id = $old"
is "$("$MQ" retry --queue b --before 1h --dry-run 2>/dev/null)" "$old" "--before 1h selects the job dead for 2 hours"
is "$("$MQ" retry --queue b --since 1h --dry-run 2>/dev/null)" "$new" "--since 1h selects the job dead for a moment"
run "$MQ" retry --queue b --since 1h
is "$RC:$OUT:$(state_of "$new"):$(state_of "$old")" "0:retried 1 job:ready:dead" "--since retries only the recent one"

# --to-queue moves them: into queue c they came, as a push would
# (pushed, derived, counts them), not retried (which takes one off c's
# pushed); the source's counters keep the death
rb=$(retried_counter b)
run "$MQ" retry --queue b --all --to-queue c
is "$RC:$OUT" "0:retried 1 job" "--all --to-queue: retried"
is "$(sql "SELECT CONCAT(queue, ':', state) FROM mq_jobs WHERE id = $old")" "c:ready" "the job is ready in queue c"
is "$(retried_counter c):$(retried_counter b)" "0:$rb" "a moved job is not counted retried, in either queue"
is "$(counters c | cut -d' ' -f1)" 1 "queue c's pushed counts it"
"$MQ" pop --queue c --receipt-file "$T_TMP/rc" >/dev/null && "$MQ" ack "$(cat "$T_TMP/rc")"
is "$(counters c | cut -d' ' -f1,2)" "1 1" "acked there: pushed stays 1, done 1"
counts_exact "--to-queue"
expect_status 64 "an invalid --to-queue is refused" "$MQ" retry --queue b --all --to-queue "a b"
is "$ERR" "mq retry: invalid queue name 'a b' in --to-queue: use 1 to 64 of A-Z a-z 0-9 _ . -" "  worded as --queue's"

# dedup: a key live again stays dead, reported; so does the second of two
k1=$(dead_via_fail d "dup" --dedup key1)
k2=$(dead_via_fail d "dup2" --dedup key2)
k3=$(dead_via_fail d "dup3" --dedup key2)
plain=$(dead_via_fail d "plain")
live=$("$MQ" push --queue d --dedup key1 again)
run "$MQ" retry --queue d --all
is "$RC:$OUT" "1:retried 2 jobs" "dedup: the others retried, status 1"
like "$ERR" "*2 jobs left dead*dedup key*$k1 $k3*" "the jobs left dead are reported by id"
is "$(state_of "$k1"):$(state_of "$k2"):$(state_of "$k3"):$(state_of "$plain"):$(state_of "$live")" \
  "dead:ready:dead:ready:ready" "key1 (live again) and key2's second stay dead"
is "$(retried_counter d)" 2 "the counter counts only the two retried"
counts_exact "dedup conflicts"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history WHERE event = 'retried' AND job_id IN ($k1, $k3)")" 0 \
  "no history row for the jobs left dead"

# two retries at once of 2000 dead jobs: each job moved once
many_dead big 2000
counts_exact "2000 dead jobs made"
"$MQ" retry --queue big --all >"$T_TMP/r1" 2>/dev/null &
p1=$!
"$MQ" retry --queue big --all >"$T_TMP/r2" 2>/dev/null &
p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
n1=$(sed -n 's/^retried \([0-9]*\) jobs*$/\1/p' "$T_TMP/r1")
n2=$(sed -n 's/^retried \([0-9]*\) jobs*$/\1/p' "$T_TMP/r2")
is "$s1:$s2:$((${n1:-0} + ${n2:-0}))" "0:0:2000" "two concurrent retries: 2000 jobs between them"
is "$(retried_counter big)" 2000 "the retried counter says 2000"
is "$(sql "SELECT COUNT(*), COUNT(DISTINCT job_id) FROM mq_jobs_history WHERE event = 'retried' AND job_id IN (SELECT id FROM mq_jobs WHERE queue = 'big')")" \
  "2000	2000" "one retried history row per job"
is "$(dead_in big)" 0 "no dead job left"
counts_exact "concurrent retries"

# next to a consumer: everything finished exactly once
many_dead w 300
"$MQ" work --queue w --wait 3s -- sh -c 'echo "$MQ_ID" >>"$0"' "$T_TMP/ran" \
  >/dev/null 2>&1 &
pw=$!
"$MQ" retry --queue w --all --batch 25 >/dev/null 2>&1
wait $pw
is "$(sort "$T_TMP/ran" | uniq | wc -l | tr -d ' '):$(wc -l <"$T_TMP/ran" | tr -d ' ')" "300:300" \
  "a consumer ran each retried job exactly once"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'w' AND state = 'done'")" 300 "all 300 done"
counts_exact "retry next to a consumer"

# --rate trickles: 200 jobs at 100/s take over 1.5 s
many_dead r 200
t0=$(date +%s%N)
run "$MQ" retry --queue r --all --rate 100/s
t1ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$RC:$OUT" "0:retried 200 jobs" "--rate 100/s retried 200 jobs"
if [ "$t1ms" -ge 1500 ]; then ok "and took ${t1ms} ms (>= 1500): a trickle"
else not_ok "and took ${t1ms} ms (>= 1500): a trickle"; fi

# SIGTERM between batches: the batch in flight commits, counts exact
many_dead s 500
"$MQ" retry --queue s --all --rate 100/s >"$T_TMP/rs" 2>"$T_TMP/es" &
ps=$!
# once it is under way (a batch committed), and half a second more
i=0
while [ "$(dead_in s)" -eq 500 ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1))
done
sleep 0.5
kill -TERM $ps
wait $ps; st=$?
ns=$(sed -n 's/^retried \([0-9]*\) jobs*$/\1/p' "$T_TMP/rs")
is "$st" 143 "SIGTERM: exit 128+15"
like "$(cat "$T_TMP/es")" "*stopped by signal 15*" "and says so"
if [ "${ns:-0}" -gt 0 ] && [ "${ns:-0}" -lt 500 ]; then ok "it had retried $ns of 500"
else not_ok "it had retried some of 500" "retried: '${ns:-}'"; fi
is "$(dead_in s)" "$((500 - ${ns:-0}))" "the rest is still dead"
is "$(retried_counter s)" "${ns:-x}" "the counter says what it printed"
counts_exact "after SIGTERM"

# a consumer fails each retried job at once, dead again (max-attempts
# 1): the run retries the jobs dead when it started, each once, and
# ends (it went on for ever, the same jobs retried again and again)
seq 1 20 | "$MQ" push --lines --queue again --max-attempts 1 >/dev/null
"$MQ" work --queue again --exit-when-empty -- false 2>/dev/null
is "$(dead_in again)" 20 "20 jobs dead"
"$MQ" work --queue again -- false 2>/dev/null &
wpid=$!
run timeout 60 "$MQ" retry --queue again --all --rate 20/s
kill -TERM $wpid
wait $wpid
like "$RC:$OUT $ERR" "0:*retried 20 jobs*" "retry while a consumer fails them again: each retried once, then it ends"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_history h JOIN mq_jobs j ON j.id = h.job_id WHERE j.queue = 'again' AND h.event = 'retried'")" 20 \
  "the history has one retry per job"
counts_exact "after the retry of jobs that died again"

# ---- dependents (mq push --after) that stay dead, said once, exactly:
# those the jobs retried cancelled when they died (their error names
# them) and that are dead after the whole run, each once. Before, each
# batch counted the dead dependents of its own jobs: those a later
# batch retried, and a dependent of jobs in several batches again.
stay_line() { printf '%s\n' "$ERR" | sed -n 's/^mq retry: \([0-9]*\) dependents* cancelled when the jobs retried died stays* dead.*/\1/p'; }
waiting_in() { sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$1' AND state = 'ready' AND available_at = '9999-12-31 23:59:59.999999'"; }
# a parent and its 300 dependents, one queue, all retried in batches of
# 100: none stays dead (the parent first, in the claim index's order)
p=$("$MQ" push --queue dq P)
seq 300 | "$MQ" push --queue dq --lines --quiet --after "$p" >/dev/null
"$MQ" cancel "$p" >/dev/null
expect_status 0 "retry --all of a parent and the 300 dependents it cancelled" "$MQ" retry --queue dq --all
is "$OUT" "retried 301 jobs" "  all retried"
is "$(stay_line)" "" "  none said to stay dead (201 before: the batches after the first retried them)"
like "$ERR" "mq retry: 300 of the jobs retried wait again for their parents*" "  the 300 wait again, said"
is "$(dead_in dq):$(waiting_in dq)" "0:300" "  none dead, 300 waiting"
counts_exact "after the retry of a parent and its dependents"
# two parents retried one a batch, of queue da; their dependents in
# queue db stay dead: 1,500 of the first, and one of both (cancelled by
# the first, named so): 1,501. A dependent of the first cancelled by
# hand before it died is not one the parent cancelled; a dependent of
# the second that runs anyway, not dead.
p1=$("$MQ" push --queue da P1)
p2=$("$MQ" push --queue da P2)
seq 1500 | "$MQ" push --queue db --lines --quiet --after "$p1" >/dev/null
both=$("$MQ" push --queue db --after "$p1,$p2" B)
byhand=$("$MQ" push --queue db --after "$p1" H)
"$MQ" cancel "$byhand" >/dev/null
runs=$("$MQ" push --queue db --after "$p2" --if-parent-dies run R)
"$MQ" cancel "$p1" >/dev/null
"$MQ" cancel "$p2" >/dev/null
is "$(sql "SELECT last_error FROM mq_jobs WHERE id = $both")" "cancelled: parent $p1 is dead" "the dependent of both names the first"
expect_status 0 "retry --all of the two parents, a batch each" "$MQ" retry --queue da --all --batch 1
is "$OUT" "retried 2 jobs" "  both retried"
is "$(stay_line)" 1501 "  1,501 said to stay dead, each once (1,504 before: the one cancelled by hand too, and the one of both in each batch)"
is "$(dead_in db)" 1502 "  1,502 dead in their queue, one of them cancelled by hand"
is "$(sql "SELECT state FROM mq_jobs WHERE id = $runs")" ready "  the one that runs anyway is due"
counts_exact "after the retry of two parents"
# a dependent of 1,200 retried parents (past a list of 1,000): once
sql "DELETE FROM mq_jobs_counts WHERE queue IN ('dc', 'dd')"
seq 1200 | "$MQ" push --queue dc --lines --quiet >"$T_TMP/dc"
g=$("$MQ" push --queue dd --after-file "$T_TMP/dc" G)
"$MQ" cancel "$(tail -n 1 "$T_TMP/dc")" >/dev/null
xargs -n 200 "$MQ" cancel <"$T_TMP/dc" >/dev/null 2>&1
is "$(dead_in dc):$(dead_in dd)" "1200:1" "1,200 parents dead, their dependent cancelled"
expect_status 0 "retry of the 1,200 parents in one batch" "$MQ" retry --queue dc --all --batch 2000
is "$(stay_line)" 1 "  their dependent said to stay dead once"
counts_exact "after the retry of 1,200 parents"
done_testing
