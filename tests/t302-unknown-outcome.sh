#!/bin/sh
# No ambiguous outcomes. A relay (fault-proxy.py) loses the connection
# just after a write or its COMMIT reached the server: mq says "outcome
# unknown" with status 3, never "nothing happened" (69), and the table
# shows what the server did. A connection lost before any write is 69,
# and nothing was written. SIGTERM during push --lines: the batch in
# flight is finished and its ids printed before mq exits.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

PROXY=
proxy() { # proxy TRIGGER: a fresh relay that fires on TRIGGER
  [ -z "$PROXY" ] || unproxy
  rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
  python3 "$TESTS_DIR/fault-proxy.py" "$T_TMP/proxy.sock" "$MQ_TEST_SOCKET" \
    "$1" "$T_TMP/fired" &
  PROXY=$!
  i=0
  while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unproxy() { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; PROXY=; }
trap 'unproxy; t_cleanup' EXIT
via() { MQ_SOCKET="$T_TMP/proxy.sock" "$@"; }
fired() { test -f "$T_TMP/fired"; }

# 1. a push whose INSERT committed, its answer lost
proxy "INSERT INTO"
expect_status 3 "push: answer of its INSERT lost: status 3" via "$MQ" push p1
check "the relay fired" fired
is "$OUT" "" "no id printed"
like "$ERR" "mq push: outcome unknown: cannot push: * (error 2013, SQLSTATE HY000)" \
  "the message says the outcome is unknown, with the error"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'p1'")" 1 \
  "the server did push it"

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

# 4. claims: the UPDATE claim (autocommitted) and the SKIP LOCKED claim
# (its COMMIT)
sql "DELETE FROM mq_jobs"
"$MQ" push --queue u u1 >/dev/null
proxy "UPDATE"
expect_status 3 "pop --claim update: answer lost: status 3" \
  via "$MQ" pop --queue u --claim update
like "$ERR" "mq pop: outcome unknown: * (error 2013, SQLSTATE HY000)" "said so"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'u'")" leased \
  "the server claimed it (it comes back when its lease ends)"
"$MQ" push --queue s s1 >/dev/null
proxy "\\x03COMMIT"
expect_status 3 "pop --claim skip-locked: answer of its COMMIT lost: status 3" \
  via "$MQ" pop --queue s --claim skip-locked
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 's'")" leased \
  "the server claimed it"

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

done_testing
