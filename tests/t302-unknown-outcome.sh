#!/bin/sh
# No ambiguous outcomes. A relay (fault-proxy.py) loses the connection
# just after a write or its COMMIT reached the server: mq says "outcome
# unknown" with status 3, never "nothing happened" (69), and the table
# shows what the server did. A connection lost before any write is 69,
# and nothing was written. SIGTERM during push --lines: the batch in
# flight is finished and its ids printed before mq exits. SIGTERM
# during mq pop: the jobs claimed but not printed are given back.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

PROXY=
proxy() { # proxy TRIGGER [N]: a fresh relay that fires on TRIGGER
  [ -z "$PROXY" ] || unproxy
  rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
  # shellcheck disable=SC2086
  python3 "$TESTS_DIR/fault-proxy.py" "$T_TMP/proxy.sock" "$MQ_TEST_SOCKET" \
    "$1" "$T_TMP/fired" ${2:-} &
  PROXY=$!
  i=0
  while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unproxy() { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; PROXY=; }
trap 'unproxy; t_cleanup' EXIT
via() { MQ_SOCKET="$T_TMP/proxy.sock" "$@"; }
fired() { test -f "$T_TMP/fired"; }
# Waits until the proxy has fired (N tries, D seconds apart, at most),
# then ends the mq started last ($wpid) with SIGTERM; returns its status.
term_when_fired() {
  i=0
  while ! fired && [ $i -lt $1 ]; do sleep $2; i=$((i + 1)); done
  kill -TERM $wpid
  wait $wpid
}

# 1. a push whose INSERT committed, its answer lost
proxy "INSERT INTO"
expect_status 3 "push: answer of its INSERT lost: status 3" via "$MQ" push p1
check "the relay fired" fired
is "$OUT" "" "no id printed"
like "$ERR" "mq push: outcome unknown: cannot push: * (error 2013, SQLSTATE HY000)" \
  "the message says the outcome is unknown, with the error"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'p1'")" 1 \
  "the server did push it"

# 1b. the same with a dedup key: pushed again on a new connection, which
# finds the job the lost answer had pushed: one job, its id, status 0
proxy "INSERT INTO"
expect_status 0 "push --dedup: answer of its INSERT lost: pushed again with its key" \
  via "$MQ" push --dedup dk1 pd1
check "the relay fired" fired
is "$OUT" "$(sql "SELECT id FROM mq_jobs WHERE payload = 'pd1'")" "  the id of the job pushed"
like "$ERR" "mq push: outcome unknown: cannot push: *; pushing again with its dedup key" \
  "  it says why it pushed again"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'pd1'")" 1 \
  "  one job, not two"
unproxy

# 2. push --lines: the batch in flight
proxy "INSERT INTO"
printf 'l1\nl2\nl3\n' >"$T_TMP/lines"
expect_status 3 "push --lines: answer of its batch lost: status 3" \
  via "$MQ" push --lines --queue lines <"$T_TMP/lines"
is "$OUT" "" "no ids printed"
like "$ERR" "mq push: stopped after reading 3 records (the ids printed are pushed; the last batch, not printed, may be too): outcome unknown: cannot push: * (error 2013, SQLSTATE HY000)" \
  "naming the batch in flight"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'lines'")" 3 \
  "the server did push the batch"

# 3. an ack whose COMMIT's answer is lost
"$MQ" push a1 >/dev/null
r=$("$MQ" pop --queue default --shell | sed -n 's/^MQ_RECEIPT=//p')
proxy "\\x03COMMIT"
expect_status 3 "ack: answer of its COMMIT lost: status 3" via "$MQ" ack "$r"
like "$ERR" "mq ack: *outcome unknown: cannot commit: * (error 2013, SQLSTATE HY000)" \
  "the message says the outcome is unknown"
is "$(sql "SELECT state FROM mq_jobs WHERE id = ${r%%.*}")" done \
  "the server did ack it"

# 3b. the server committed, and answered with an error: a Galera node
# that lost its primary component while it replicated the transaction
# answers 1180 ("Error while appending streaming replication fragment
# (provider status: Not connected to Primary Component)"), the other
# nodes having committed it (tests/galera-faults.sh, seed 3405: an ack
# refused with status 70 had been done). Outcome unknown, status 3.
export FP_ERROR=1180
"$MQ" push a2 >/dev/null
r=$("$MQ" pop --queue default --shell | sed -n 's/^MQ_RECEIPT=//p')
proxy "\\x03COMMIT"
expect_status 3 "ack: its COMMIT done and answered with error 1180: status 3" via "$MQ" ack "$r"
check "the relay fired" fired
like "$ERR" "mq ack: *outcome unknown: cannot commit: Error while appending streaming replication fragment(provider status: Not connected to Primary Component) (error 1180, SQLSTATE HY000)" \
  "  the message says the outcome is unknown, with the error"
is "$(sql "SELECT state FROM mq_jobs WHERE id = ${r%%.*}")" done "  the server did ack it"
proxy "INSERT INTO"
expect_status 3 "push: its INSERT done and answered with error 1180: status 3" via "$MQ" push p1180
is "$OUT" "" "  no id printed"
like "$ERR" "mq push: outcome unknown: cannot push: * (error 1180, SQLSTATE HY000)" \
  "  the message says the outcome is unknown (a producer would push again after 70)"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'p1180'")" 1 "  the server did push it"
proxy "INSERT INTO"
expect_status 0 "push --dedup: INSERT answered with error 1180: pushed again with its key" \
  via "$MQ" push --dedup dk1180 pd1180
is "$OUT" "$(sql "SELECT id FROM mq_jobs WHERE payload = 'pd1180'")" "  the id of the job pushed"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'pd1180'")" 1 "  one job, not two"
unproxy
unset FP_ERROR

# 4. claims: the UPDATE claim (autocommitted) and the SKIP LOCKED claim
# (its COMMIT). The server claimed the job; pop, connected again, gives
# it back (it stayed leased to nobody until its lease ended, status 3):
# nothing is claimed, as if the connection had been lost before (69)
sql "DELETE FROM mq_jobs"
"$MQ" push --queue u u1 >/dev/null
proxy "UPDATE"
expect_status 69 "pop --claim update: answer lost, the job given back: status 69" \
  via "$MQ" pop --queue u --claim update
check "the relay fired" fired
is "$OUT" "" "nothing printed"
like "$ERR" "mq pop: nothing claimed: the 1 job its claim leased was given back: outcome unknown: * (error 2013, SQLSTATE HY000)" \
  "said so, in one line"
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'u'" | tr '\t' ' ')" \
  "ready 0" "the server claimed it, and it was given back, its attempt not counted"
"$MQ" push --queue s s1 >/dev/null
proxy "\\x03COMMIT"
expect_status 69 "pop --claim skip-locked: answer of its COMMIT lost, the job given back: status 69" \
  via "$MQ" pop --queue s --claim skip-locked
like "$ERR" "mq pop: nothing claimed: the 1 job its claim leased was given back: outcome unknown: cannot commit: * (error 2013, SQLSTATE HY000)" \
  "said so"
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 's'" | tr '\t' ' ')" \
  "ready 0" "the server claimed it, and it was given back"
# the give-back cannot be made (the server cannot be reached again):
# the job stays leased until its lease ends, status 3, and it says so
export FAULT_PROXY_EXIT=1
proxy "\\x03COMMIT"
unset FAULT_PROXY_EXIT
run via "$MQ" pop --queue s --claim skip-locked
check "the relay fired" fired
is "$RC" 3 "pop: COMMIT's answer lost and no connection for the give-back: status 3"
like "$ERR" "mq pop: the jobs its claim may have leased stay leased until their lease ends (not given back: *): outcome unknown: cannot commit: *" \
  "said so"
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 's'" | tr '\t' ' ')" \
  "leased 1" "the job stays leased"
PROXY=
sql "UPDATE mq_jobs SET state = 'ready', attempts = 0, lease_token = NULL, leased_until = NULL, leased_by = NULL WHERE queue = 's'"

# 5. lost before any write: 69, and nothing happened
proxy "@@max_allowed_packet"
expect_status 69 "push: connection lost in the probe: status 69" via "$MQ" push --queue n n1
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'n'")" 0 "nothing pushed"
"$MQ" push --queue f f1 >/dev/null
r=$("$MQ" pop --queue f --shell | sed -n 's/^MQ_RECEIPT=//p')
proxy "FOR UPDATE"
expect_status 69 "fail: lost inside its transaction, before COMMIT: status 69" \
  via "$MQ" fail "$r"
check "the relay fired" fired
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'f'" | tr '\t' ' ')" "leased 1" \
  "rolled back: the job is still leased to its consumer"
expect_status 0 "and the consumer's fail then goes through" "$MQ" fail "$r"
unproxy

# 6. SIGTERM during push --lines, at random moments: the ids printed are
# exactly the jobs pushed, every time
i=0
while [ $i -lt 5 ]; do
  i=$((i + 1))
  sql "DELETE FROM mq_jobs WHERE queue = 'sig'"
  (n=0; while [ $n -lt 400 ]; do n=$((n + 1)); echo "s$n"; [ $((n % 50)) -eq 0 ] && sleep 0.05; done; sleep 2) |
    "$MQ" push --lines --queue sig >"$T_TMP/ids" 2>"$T_TMP/sig.err" &
  pid=$!
  sleep "0.$((i * 7 % 10))"
  pkill -TERM -f "push --lines --queue sig" 2>/dev/null
  wait $pid
  st=$?
  rows=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'sig'")
  printed=$(wc -l <"$T_TMP/ids" | tr -d ' ')
  if [ "$st" -eq 143 ] && [ "$rows" = "$printed" ] &&
     grep -q "^mq push: stopped by signal 15 after reading [0-9]* records (the ids printed are the jobs pushed)$" "$T_TMP/sig.err"; then
    ok "SIGTERM #$i: status 143, $printed ids printed, $rows rows"
  else
    not_ok "SIGTERM #$i: status 143, ids printed = rows" \
      "status $st, $printed ids printed, $rows rows; $(cat "$T_TMP/sig.err")"
  fi
done

# 7. SIGTERM while the input never makes push wait (a file): pselect lets
# a signal in only when it waits, so push must look for one itself
sql "DELETE FROM mq_jobs WHERE queue = 'sigf'"
seq 1 300000 >"$T_TMP/lines"
"$MQ" push --lines --queue sigf <"$T_TMP/lines" >"$T_TMP/ids" 2>"$T_TMP/sig.err" &
pid=$!
i=0
while [ "$(wc -l <"$T_TMP/ids")" -lt 2000 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $pid
wait $pid
st=$?
rows=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'sigf'")
printed=$(wc -l <"$T_TMP/ids" | tr -d ' ')
is "$st:$([ "$rows" -lt 300000 ] && echo stopped-early)" "143:stopped-early" \
  "SIGTERM, input from a file: status 143, stopped before the end ($rows of 300000 rows)"
is "$printed" "$rows" "the ids printed are the jobs pushed"
like "$(cat "$T_TMP/sig.err")" "mq push: stopped by signal 15 after reading * records (the ids printed are the jobs pushed)" \
  "and it says so"

# 8. SIGTERM during mq pop's claim (held up by a row lock another
# session keeps for 2 s): the claim finishes, and the job goes back at
# once instead of staying leased to nobody (on 6f40b45 it stayed leased,
# attempt counted, until its lease ended)
sig_pop() { # sig_pop DESCRIPTION MESSAGE POP-OPTION...
  _d=$1 _m=$2
  shift 2
  sql "DELETE FROM mq_jobs WHERE queue = 'sigpop'"
  "$MQ" push --queue sigpop j >/dev/null
  _id=$(sql "SELECT id FROM mq_jobs WHERE queue = 'sigpop'")
  sql "BEGIN; SELECT id FROM mq_jobs WHERE id = $_id FOR UPDATE; DO SLEEP(2); COMMIT" >/dev/null &
  _l=$!
  sleep 0.5
  "$MQ" pop --queue sigpop --claim update --json "$@" >"$T_TMP/pop.out" 2>"$T_TMP/pop.err" &
  _p=$!
  sleep 0.7
  kill -TERM $_p
  wait $_p
  _st=$?
  wait $_l
  is "$_st $(cat "$T_TMP/pop.out")" "143 " "$_d: status 143, nothing printed"
  like "$(cat "$T_TMP/pop.err")" "$_m" "$_d: it says so"
  is "$(sql "SELECT state, attempts, leased_until IS NULL FROM mq_jobs WHERE id = $_id" | tr '\t' ' ')" \
    "ready 0 1" "$_d: the job is ready, its attempt not counted"
}
sig_pop "SIGTERM during pop's claim" \
  "mq pop: stopped by signal 15: the job was given back"
# under --wait a lock wait lasts 1 s: it ends first, and is not retried
sig_pop "SIGTERM during pop --wait's claim" \
  "mq pop: stopped by signal 15 before a claim succeeded: cannot claim: Lock wait timeout exceeded*" \
  --wait 10s
# a claim that keeps meeting lock waits (the table locked by another
# session for 30 s: 2 s waits under --wait) stops retrying once SIGTERM
# is held: status 143, nothing claimed (before: it retried on, then
# exited 75)
sql "DELETE FROM mq_jobs WHERE queue = 'sigmdl'"
"$MQ" push --queue sigmdl j >/dev/null
sql "LOCK TABLES mq_jobs WRITE; DO SLEEP(40); UNLOCK TABLES" >/dev/null &
locker=$!
i=0
until [ "$(sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND INFO LIKE 'DO SLEEP(40)%'")" = 1 ] || [ $i -ge 100 ]; do
  sleep 0.1; i=$((i + 1))
done
# and pop --wait D keeps its bound, D plus 10 s, through those retries
# (before: --wait 1s took 16.5 s)
t0=$(date +%s)
expect_status 75 "pop --wait 1s against a locked table: status 75" \
  "$MQ" pop --queue sigmdl --wait 1s -o /dev/null
check "within 1 s plus 10 s ($(( $(date +%s) - t0 )) s)" test $(( $(date +%s) - t0 )) -le 11
"$MQ" pop --queue sigmdl --wait 20s -o /dev/null >/dev/null 2>"$T_TMP/mdl.err" &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
is "$?" 143 "SIGTERM while the claim meets lock waits: its retries end, status 143"
like "$(cat "$T_TMP/mdl.err")" "mq pop: stopped by signal 15 before a claim succeeded: cannot claim: Lock wait timeout exceeded*(error 1205, SQLSTATE HY000)" \
  "and the last lock wait is said"
# the locker's session ends, and its table lock with it
lid=$(sql_root "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND INFO LIKE 'DO SLEEP(40)%' LIMIT 1")
[ -z "$lid" ] || sql_root "KILL $lid"
wait $locker 2>/dev/null
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'sigmdl'" | tr '\t' ' ')" \
  "ready 0" "the job was not claimed"

# parked in --wait, a stop signal still ends pop at once (nothing claimed)
"$MQ" pop --queue sigempty --wait 30s >/dev/null 2>&1 &
pid=$!
fresh_waiters sigempty
kill -HUP $pid
t0=$(date +%s)
wait $pid
st=$?
is "$st $(( $(date +%s) - t0 < 3 ))" "129 1" "SIGHUP while parked in --wait: ends at once, status 129"
# SIGTERM at random moments of pop --count 50: every job leased was
# printed (handed over), none is left leased and unprinted
sql "DELETE FROM mq_jobs WHERE queue = 'sigc'"
seq 1 1000 | "$MQ" push --lines --queue sigc >/dev/null 2>&1
lost=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  "$MQ" pop --queue sigc --count 50 --shell >"$T_TMP/pc.out" 2>/dev/null &
  pid=$!
  sleep "0.0$i"
  kill -TERM $pid 2>/dev/null
  wait $pid
  printed=$(grep -c '^MQ_ID_' "$T_TMP/pc.out")
  leased=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'sigc' AND state = 'leased'")
  [ "$printed" = "$leased" ] || lost="$lost $i:$printed/$leased"
  sql "UPDATE mq_jobs SET state = 'done', finished_at = UTC_TIMESTAMP(6), lease_token = NULL WHERE queue = 'sigc' AND state = 'leased'"
done
is "$lost" 0 "SIGTERM during pop --count 50, 12 times: the jobs leased are those printed"

# -h and -V into a full disk: no success (on 6f40b45 they exited 0
# having written nothing)
for a in -h -V "help" "push -h" "help ls"; do
  expect_status 74 "mq $a >/dev/full: status 74" sh -c "\"\$0\" $a >/dev/full" "$MQ"
done

# 9. a claim's COMMIT and then its ROLLBACK interrupted (as a late
# wakeup's KILL QUERY does): the transaction stayed open, and the retry's
# START TRANSACTION committed it, leasing the job to nobody while pop said
# "no job" (before: status 1, the job leased). The ROLLBACK is sent again;
# interrupted again, the connection is cut, and the server rolls back.
# interrupted_pop QUEUE TRIGGER N WHAT: a job pushed to QUEUE, popped
# through a relay that interrupts TRIGGER N times: it gets the job
interrupted_pop() {
  "$MQ" push --queue "$1" once >/dev/null
  proxy "$2" "$3"
  run via "$MQ" pop --queue "$1" -o "$T_TMP/$1.out"
  is "$RC:$(cat "$T_TMP/$1.out" 2>/dev/null)" "0:once" "$4"
  is "$(grep -c interrupted "$T_TMP/fired")" "$3" "the relay interrupted it $3 times"
}
interrupted_pop rb '\x03COMMIT|\x03ROLLBACK' 2 \
  "COMMIT, then ROLLBACK interrupted: the claim runs again and gets the job"
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'rb'")" \
  "$(printf 'leased\t1')" "leased once, to this pop"
"$MQ" push --queue rc twice >/dev/null
proxy '\x03COMMIT|\x03ROLLBACK' 3
expect_status 75 "COMMIT and two ROLLBACKs interrupted: status 75" \
  via "$MQ" pop --queue rc
like "$ERR" "mq pop: cannot commit: Query execution was interrupted (error 1317, SQLSTATE 70100)" \
  "the message names the interrupted COMMIT"
unproxy
i=0
while [ "$(sql "SELECT state FROM mq_jobs WHERE queue = 'rc'")" != ready ] && [ $i -lt 100 ]; do
  sleep 0.05; i=$((i + 1))
done
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'rc'")" \
  "$(printf 'ready\t0')" "the connection cut: the server rolled the claim back"

# 10. a claim's START TRANSACTION interrupted (a late wakeup's KILL QUERY
# hit it in t300's run, 2026-11-27: pop --wait said "cannot start
# transaction", status 75, with the job there): it did nothing, and is
# sent once more
interrupted_pop st '\x03START TRANSACTION' 1 \
  "START TRANSACTION interrupted: sent again, the claim gets the job"
unproxy

# 11. the session's setup and probe interrupted (a KILL QUERY for a
# statement the connection no longer runs): it writes nothing, and is
# run again (it was status 75, "cannot set up the session")
proxy '\x03ROLLBACK AND NO CHAIN NO RELEASE;SET SESSION *' 2
run via "$MQ" pop --queue st2
is "$RC:$ERR" "1:" "the probe interrupted twice: run again, then the claim (queue empty: 1)"
is "$(grep -c interrupted "$T_TMP/fired")" 2 "the relay interrupted it twice"
unproxy

# 12. mq work: its claim's COMMIT reached the server, the answer lost:
# the jobs it may have leased are given back once it is connected again
# (they stayed leased to nobody until their lease ended, an attempt
# spent each, and mq work --exit-when-empty ended with them leased)
seq 1 5 | "$MQ" push --lines --queue ow >/dev/null
proxy "\\x03COMMIT"
run timeout 60 sh -c 'MQ_SOCKET="$1" "$0" work --queue ow --lease 10m --exit-when-empty -- true' \
  "$MQ" "$T_TMP/proxy.sock"
check "the relay lost the answer of the claim's COMMIT" fired
like "$ERR" "*outcome unknown*gave back [12] job* of the claim whose outcome was unknown*" \
  "mq work says it gave the jobs of that claim back"
is "$RC:$(sql "SELECT GROUP_CONCAT(CONCAT(state, attempts) ORDER BY id) FROM mq_jobs WHERE queue = 'ow'")" \
  "0:done1,done1,done1,done1,done1" "then ran each once: done, one attempt each"
unproxy

# 13. a preference list whose first queue's claim succeeded and whose
# second queue's lost its answer (the UPDATE claim: one autocommitted
# UPDATE per queue; the relay fires on lqb's, found by its binary
# parameters: host:pid, then the queue twice). The claim as a whole
# returned lqa's jobs, and lqb's job stayed leased to nobody until its
# lease ended, an attempt spent (mq work exited 0 with it leased; mq pop
# printed lqa's and said nothing): both give it back once connected
# again, and give back none of lqa's they hold.
list_jobs() { # list_jobs: state and attempts of lqa's and lqb's jobs
  sql "SELECT GROUP_CONCAT(CONCAT(queue, ':', state, attempts) ORDER BY id) FROM mq_jobs WHERE queue IN ('lqa', 'lqb')"
}
sql "DELETE FROM mq_jobs"
"$MQ" push --queue lqa a1 >/dev/null
"$MQ" push --queue lqb b1 >/dev/null
"$MQ" push --queue lqb b2 >/dev/null
proxy 're:[0-9]\x03lqb\x03lqb'
run timeout 60 sh -c 'MQ_SOCKET="$1" "$0" work --queue lqa,lqb --claim update --lease 10m --exit-when-empty -- true' \
  "$MQ" "$T_TMP/proxy.sock"
check "the relay lost the answer of lqb's UPDATE" fired
like "$ERR" "*gave back 1 job of the claim whose outcome was unknown*" \
  "mq work --claim update, list: gave lqb's job back"
is "$RC:$(list_jobs)" "0:lqa:done1,lqb:done1,lqb:done1" \
  "then ran each job once: done, one attempt each"
unproxy
sql "DELETE FROM mq_jobs"
"$MQ" push --queue lqa a1 >/dev/null
"$MQ" push --queue lqb b1 >/dev/null
proxy 're:[0-9]\x03lqb\x03lqb'
run via "$MQ" pop --queue lqa,lqb --claim update --count 5 --json
check "the relay fired" fired
is "$RC:$(printf '%s\n' "$OUT" | grep -c '"queue":"lqa"')" "0:1" \
  "mq pop --claim update, list: lqa's job printed, status 0"
is "$ERR" "mq pop: the claim of 'lqb' lost its answer (outcome unknown): 1 job it leased given back" \
  "and lqb's claim is said, its job given back"
is "$(list_jobs)" "lqa:leased1,lqb:ready0" \
  "lqa's job leased to pop, lqb's ready, its attempt not counted"
unproxy

# 14. SKIP LOCKED, a list: one transaction for every queue, and its
# COMMIT's answer lost. mq pop gives back the jobs of each queue (69);
# mq work stopped (SIGTERM) before it could connect again gives them
# back before it exits (it exited with them leased, status 0)
sql "DELETE FROM mq_jobs"
"$MQ" push --queue lqa a1 >/dev/null
"$MQ" push --queue lqb b1 >/dev/null
proxy "\\x03COMMIT"
expect_status 69 "mq pop --claim skip-locked, list: COMMIT's answer lost, jobs given back: status 69" \
  via "$MQ" pop --queue lqa,lqb --claim skip-locked --count 5 --json
like "$ERR" "mq pop: nothing claimed: the 2 jobs its claim leased were given back: outcome unknown: cannot commit: *" \
  "said so"
is "$(list_jobs)" "lqa:ready0,lqb:ready0" "both jobs ready, no attempt counted"
proxy "\\x03COMMIT"
MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" work --queue lqa,lqb --claim skip-locked \
  --lease 10m -- sleep 30 >/dev/null 2>"$T_TMP/w14.err" &
wpid=$!
term_when_fired 200 0.01
is "$?" 0 "mq work --claim skip-locked, list: SIGTERM in its reconnect pause: status 0"
like "$(cat "$T_TMP/w14.err")" "*gave back 2 jobs of the claim whose outcome was unknown*" \
  "it gave the claim's jobs back before exiting"
is "$(list_jobs)" "lqa:ready0,lqb:ready0" "both jobs ready, no attempt counted"
unproxy

# 15. a lost claim still running when it is given back: another
# session holds the job's row (3 s), and the relay cuts the connection
# 1 s into the UPDATE claim, which waits on that lock. The give-back's
# search by token found nothing, and the claim, going on without its
# client, leased the job once the lock ended, to nobody (mq pop said
# "given back", status 69; mq work exited 0): the claim's session is now
# ended (KILL) and waited for before the search
lock_row() { # lock_row QUEUE: its job's row locked for 3 s, in the background
  _id=$(sql "SELECT id FROM mq_jobs WHERE queue = '$1'")
  sql "BEGIN; SELECT id FROM mq_jobs WHERE id = $_id FOR UPDATE; DO SLEEP(3); COMMIT" >/dev/null &
  LOCKER=$!
  sleep 0.3
}
sql "DELETE FROM mq_jobs"
"$MQ" push --queue kp k1 >/dev/null
lock_row kp
FP_CUT_MS=1000 proxy "UPDATE"
run via "$MQ" pop --queue kp --claim update --json
check "the relay cut the claim's connection" fired
wait $LOCKER
is "$RC:$OUT" "69:" "mq pop --claim update, lost while its UPDATE waited on a lock: status 69, nothing printed"
like "$ERR" "mq pop: nothing claimed: its claim leased no job: outcome unknown: *" "said so"
is "$(sql "SELECT state, attempts, lease_token IS NULL FROM mq_jobs WHERE queue = 'kp'" | tr '\t' ' ')" \
  "ready 0 1" "once the lock ended, the job is still ready: the claim's session was ended"
unproxy
"$MQ" push --queue kw k1 >/dev/null
lock_row kw
FP_CUT_MS=1000 proxy "UPDATE"
run timeout 60 sh -c 'MQ_SOCKET="$1" "$0" work --queue kw --claim update --lease 10m --exit-when-empty -- true' \
  "$MQ" "$T_TMP/proxy.sock"
check "the relay cut the claim's connection" fired
wait $LOCKER
is "$RC:$(sql "SELECT CONCAT(state, attempts) FROM mq_jobs WHERE queue = 'kw'")" "0:done1" \
  "mq work --claim update, the same: status 0, the job run once (done)"
unproxy

# 16. mq work gives up with the jobs of a lost claim not given back
# (the relay exits once it lost the COMMIT's answer: no new connection):
# status 3, as mq-work(1) says, not 69; after 5 failures in a row
# (--exit-when-empty), and after SIGTERM with the server unreachable
sql "DELETE FROM mq_jobs"
"$MQ" push --queue gu g1 >/dev/null
FAULT_PROXY_EXIT=1 proxy "\\x03COMMIT"
run timeout 60 sh -c 'MQ_SOCKET="$1" "$0" work --queue gu --claim skip-locked --lease 10m --exit-when-empty -- true' \
  "$MQ" "$T_TMP/proxy.sock"
check "the relay lost the answer of the claim's COMMIT" fired
is "$RC" 3 "mq work giving up after 5 failures, a lost claim's jobs left: status 3"
like "$ERR" "*giving up after 5 failures in a row*the jobs of queue 'gu' that a claim whose outcome was unknown may have leased were not given back*" \
  "and it says what stays leased"
PROXY=
sql "UPDATE mq_jobs SET state = 'ready', attempts = 0, lease_token = NULL, leased_until = NULL, leased_by = NULL WHERE queue = 'gu'"
FAULT_PROXY_EXIT=1 proxy "\\x03COMMIT"
MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" work --queue gu --claim skip-locked \
  --lease 10m -- sleep 30 >/dev/null 2>"$T_TMP/w16.err" &
wpid=$!
term_when_fired 300 0.02
is "$?" 3 "mq work, SIGTERM with the server unreachable, a lost claim's jobs left: status 3"
like "$(cat "$T_TMP/w16.err")" "*the jobs of queue 'gu' that a claim whose outcome was unknown may have leased were not given back*" \
  "and it says so"
PROXY=
sql "UPDATE mq_jobs SET state = 'ready', attempts = 0, lease_token = NULL, leased_until = NULL, leased_by = NULL WHERE queue = 'gu'"

# 17. mq pop's give-back of a lost claim loses its own answer once (the
# search by token): a new connection is made and the search made again
# (it gave up: status 3, both jobs leased)
sql "DELETE FROM mq_jobs"
"$MQ" push --queue lqa a1 >/dev/null
"$MQ" push --queue lqb b1 >/dev/null
FP_TIMES=2 proxy 're:\x03COMMIT|LIMIT 256'
run via "$MQ" pop --queue lqa,lqb --claim skip-locked --count 5 --json
is "$RC" 69 "mq pop: the give-back's answer lost once: made again on a new connection, status 69"
like "$ERR" "mq pop: nothing claimed: the 2 jobs its claim leased were given back: outcome unknown: cannot commit: *" \
  "said so"
is "$(list_jobs)" "lqa:ready0,lqb:ready0" "both jobs ready, no attempt counted"
unproxy

# 18. a claim made of several writes that commit by themselves, the
# answer of a later one lost: its give-back (by queue and token) took
# back the jobs an earlier write had leased and handed out too, the
# same token: printed (status 0) and ready again, or run twice by mq
# work. Now each such write leases with a token of its own.
# The UPDATE claim: the head's UPDATE autocommits, the short claim's
# limited transaction after it loses its COMMIT's answer
sql "DELETE FROM mq_jobs"
"$MQ" push --queue uq Q1 >/dev/null
proxy "\\x03COMMIT"
run via "$MQ" pop --queue uq --count 5 --json --claim update
check "the relay fired" fired
is "$RC:$(printf '%s\n' "$OUT" | grep -c '"queue":"uq"')" "0:1" \
  "pop --claim update: the job leased by the head's UPDATE printed, status 0"
is "$(sql "SELECT CONCAT(state, attempts) FROM mq_jobs WHERE queue = 'uq'")" "leased1" \
  "and still leased to it, not given back"
receipt=$(printf '%s\n' "$OUT" | sed -n 's/.*"receipt":"\([^"]*\)".*/\1/p')
expect_status 0 "its receipt acks" "$MQ" ack "$receipt"
unproxy
# SKIP LOCKED: a limited queue first in the list takes the claim's
# gates, so the second, limited too (its plain claim in the first
# transaction passes over its jobs), is claimed in a transaction of its
# own after the commit, whose COMMIT's answer is lost: that claim's job
# given back, the first's printed and still leased. (Before e7b66d7 the
# second queue was not limited: its plain claim took its job in the
# first transaction, and the second read its settings for nothing.)
sql "DELETE FROM mq_jobs"
"$MQ" limit lq --concurrency 5 >/dev/null
"$MQ" limit uq --concurrency 5 >/dev/null
"$MQ" push --queue lq L1 >/dev/null
"$MQ" push --queue uq Q1 >/dev/null
FP_NTH=2 proxy "\\x03COMMIT"; unset FP_NTH
run via "$MQ" pop --queue lq,uq --count 5 --json --claim skip-locked
check "the relay fired on the second COMMIT" fired
is "$RC:$(printf '%s\n' "$OUT" | grep -c '"queue":"lq"'):$(printf '%s\n' "$OUT" | grep -c '"queue":"uq"')" "0:1:0" \
  "pop --claim skip-locked: the first transaction's job printed, status 0"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(queue, ':', state, attempts) ORDER BY id) FROM mq_jobs")" \
  "lq:leased1,uq:ready0" "it still leased to it; the second's given back, its attempt not counted"
unproxy
# mq work: the job it runs is not given back under it (it ran twice)
sql "DELETE FROM mq_jobs"
"$MQ" limit lq --clear >/dev/null
"$MQ" limit uq --clear >/dev/null
"$MQ" push --queue uq Q1 >/dev/null
proxy "\\x03COMMIT"
run timeout 60 sh -c 'MQ_SOCKET="$1" "$0" work --queue uq --claim update --exit-when-empty -- sh -c "echo run >>\"\$1\"; sleep 1" sh "$2"' \
  "$MQ" "$T_TMP/proxy.sock" "$T_TMP/runs18"
check "the relay fired" fired
is "$RC:$(wc -l <"$T_TMP/runs18" | tr -d ' ')" "0:1" "mq work --claim update: the job ran once, status 0"
is "$(sql "SELECT CONCAT(state, attempts) FROM mq_jobs WHERE queue = 'uq'")" "done1" \
  "done, one attempt"
unproxy

done_testing
