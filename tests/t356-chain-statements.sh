#!/bin/sh
# A chain's link (mq push --after, issue 32) costs the server one
# transaction and 7 statements under mq work --concurrency 4, and its
# claim does not walk the jobs due later in its queue: counted by
# the server's global counters, so this test runs alone
# (tests/meson.build).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# counted COUNTER...: the sum of the server's global status COUNTERs
counted() {
  _sum=0
  for _v in "$@"; do
    _sum=$((_sum + $(sql_root "SHOW GLOBAL STATUS LIKE '$_v'" | cut -f2)))
  done
  echo "$_sum"
}
# chain QUEUE COUNTER...: a chain of 20 in QUEUE drained by mq work -c 4;
# prints how much the server's global status COUNTERs grew meanwhile
# (this test runs alone: tests/meson.build), and checks every link done
chain() {
  _q=$1; shift
  _prev=$("$MQ" push --queue "$_q" 1)
  for _i in $(seq 2 20); do _prev=$("$MQ" push --queue "$_q" --after "$_prev" "$_i"); done
  _c0=$(counted "$@")
  "$MQ" work --queue "$_q" --concurrency 4 --exit-when-empty -- \
    sh -c 'sleep 0.05' >/dev/null 2>&1
  echo $(($(counted "$@") - _c0))
}
# one transaction a link: the ack of one and the claim of the next. A
# claim that took fewer jobs than free process slots leaves them to the
# park, not to another claim at once (which found nothing, and made the
# next ack wait behind it: about 1.5 transactions a link before)
n=$(chain chain2 Com_commit)
check "a chain of 20 under mq work -c 4: one transaction a link ($n commits; 25 at most)" [ "$n" -le 25 ]
# and 7 statements a link: the ack of a parent of one dependent (tried
# first after such an ack), its count, the one statement that meets a
# dependent's last parent, the read of the queues it made due, the
# claim's three (after a short claim: the priorities of the due jobs by
# the due index, the claim index's read of those, the lease). 11
# before 3a584fa: the four statements of the meet, the ack without
# children = 1, the read of the queue's settings after a claim that took
# fewer jobs than it had room for; 7 on 80b1af3 too, with the ack
# without children tried first and a claim that walked every job due
# later (below)
n=$(chain chain3 Com_stmt_execute)
check "a chain of 20 under mq work -c 4: 7 statements a link ($n executed; 150 at most)" [ "$n" -le 150 ]
# 3,000 jobs due in an hour in the chain's queue: each claim, short (one
# job due, room for more), reads after the first only the due jobs'
# priorities by the due index, then those priorities' due jobs by the
# claim index, not the claim index's 3,000 entries after the due one
# (about 60,000 entries looked at for the chain on 80b1af3: what the
# engine passes over by the pushed index condition, and what it reads)
seq 1 3000 | "$MQ" push --queue chain4 --lines --delay 1h --quiet >/dev/null
n=$(chain chain4 Handler_icp_attempts Handler_read_next Handler_read_key)
check "a chain of 20 beside 3,000 jobs due later: its claims do not walk them ($n index entries; 15,000 at most)" [ "$n" -le 15000 ]
is "$(sql "SELECT queue, COUNT(*), SUM(state = 'done') FROM mq_jobs GROUP BY queue" | tr '\t\n' '  ')" "chain2 20 20 chain3 20 20 chain4 3020 20 " "every link of the chains done"

done_testing
