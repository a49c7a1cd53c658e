#!/bin/sh
# A transaction that ends behind mq's back is not committed in pieces.
# On a Galera node a brute-force abort that lands while the server
# prepares a statement rolls the transaction back and loses its error:
# the statements after it ran outside any transaction, each committing
# by itself, and the COMMIT committed nothing (t401: two workers ran one
# job). A relay (fault-proxy.py, FP_ROLLBACK) does the same here: it
# rolls the session's transaction back just before a read's prepare
# reaches the server. mq reads the server's status in each answer, sees
# the transaction gone, and runs it again: no ack is lost, no job leased
# twice. A write prepared in a transaction waits for a ping that says
# the transaction is open on a Galera node only, the one server that
# loses the error (t400-galera: that case): one server reports every
# rollback it makes, and the ping would cost each ack a round trip.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

PROXY=
proxy() { # proxy TRIGGER NTH: a relay that rolls back before the NTH match
  rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
  FP_ROLLBACK=1 FP_NTH=$2 python3 "$TESTS_DIR/fault-proxy.py" \
    "$T_TMP/proxy.sock" "$MQ_TEST_SOCKET" "$1" "$T_TMP/fired" &
  PROXY=$!
  i=0
  while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unproxy() { [ -z "$PROXY" ] || { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; }; PROXY=; }
trap 'unproxy; t_cleanup' EXIT
jobs_of() { # jobs_of QUEUE: state and attempts of each job, by id
  sql "SELECT GROUP_CONCAT(CONCAT(state, attempts) ORDER BY id) FROM mq_jobs WHERE queue = '$1'"
}

# 1. mq work acks a job in the transaction of its next claim: the
# relay rolls that transaction back before the claim's read is prepared
# (after the ack's UPDATE ran). The read then ran outside it; the lease
# after it would have committed alone, and the ack was gone: the first
# job stayed leased while mq work exited 0.
printf 'w1\nw2\nw3\n' | "$MQ" push --lines --queue w >/dev/null 2>&1
proxy '\x16SELECT id, queue, priority, attempts, payload FROM' 2
run env MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" work --queue w \
  --exit-when-empty -- true
check "the relay rolled back the second claim's transaction" test -f "$T_TMP/fired"
is "$RC:$ERR" "0:" "mq work: status 0, nothing on stderr"
is "$(jobs_of w)" "done1,done1,done1" "each job done, one attempt each"
is "$(sql "SELECT CONCAT_WS(',', SUM(n), SUM(total)) FROM mq_jobs_counts WHERE queue = 'w' AND state = 'done'")" \
  "3,3" "and counted once"
unproxy

done_testing
