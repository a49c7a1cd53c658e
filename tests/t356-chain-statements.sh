#!/bin/sh
# A chain's link (mq push --after, issue 32) costs the server one
# transaction and 7 statements under mq work --concurrency 4: counted by
# the server's global counters, so this test runs alone
# (tests/meson.build).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# chain QUEUE COUNTER: a chain of 20 in QUEUE drained by mq work -c 4;
# prints how much the server's global status COUNTER grew meanwhile
# (this test runs alone: tests/meson.build), and checks every link done
chain() {
  _prev=$("$MQ" push --queue "$1" 1)
  for _i in $(seq 2 20); do _prev=$("$MQ" push --queue "$1" --after "$_prev" "$_i"); done
  _c0=$(sql_root "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2)
  "$MQ" work --queue "$1" --concurrency 4 --exit-when-empty -- \
    sh -c 'sleep 0.05' >/dev/null 2>&1
  echo $(($(sql_root "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2) - _c0))
}
# one transaction a link: the ack of one and the claim of the next. A
# claim that took fewer jobs than free process slots leaves them to the
# park, not to another claim at once (which found nothing, and made the
# next ack wait behind it: about 1.5 transactions a link before)
n=$(chain chain2 Com_commit)
check "a chain of 20 under mq work -c 4: one transaction a link ($n commits; 25 at most)" [ "$n" -le 25 ]
# and 7 statements a link: the ack of a parent of one dependent (after
# the try for a job without any), its count, the one statement that
# meets a dependent's last parent, the read of the queues it made due,
# the claim's two (11 before: the four statements of the meet, the ack
# without children = 1, the read of the queue's settings after a claim
# that took fewer jobs than it had room for)
n=$(chain chain3 Com_stmt_execute)
check "a chain of 20 under mq work -c 4: 7 statements a link ($n executed; 150 at most)" [ "$n" -le 150 ]
is "$(sql "SELECT queue, COUNT(*), SUM(state = 'done') FROM mq_jobs GROUP BY queue" | tr '\t\n' '  ')" "chain2 20 20 chain3 20 20 " "every link of both done"

done_testing
