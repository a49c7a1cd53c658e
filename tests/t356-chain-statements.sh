#!/bin/sh
# A chain's link (mq push --after, issue 32) costs the server one
# transaction and 7 statements under mq work --concurrency 4: counted by
# the server's global counters, so this test runs alone
# (tests/meson.build).
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# one transaction a link: the ack of one and the claim of the next. A
# claim that took fewer jobs than free process slots leaves them to the
# park, not to another claim at once (which found nothing, and made the
# next ack wait behind it: about 1.5 transactions a link before). The
# server's COMMITs, global: this test runs alone (tests/meson.build)
commits() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_commit'" | cut -f2; }
prev=$("$MQ" push --queue chain2 1)
for i in $(seq 2 20); do prev=$("$MQ" push --queue chain2 --after "$prev" "$i"); done
c0=$(commits)
"$MQ" work --queue chain2 --concurrency 4 --exit-when-empty -- \
  sh -c 'sleep 0.05' >/dev/null 2>&1
n=$(($(commits) - c0))
check "a chain of 20 under mq work -c 4: one transaction a link ($n commits; 25 at most)" [ "$n" -le 25 ]
is "$(sql "SELECT COUNT(*), SUM(state = 'done') FROM mq_jobs WHERE queue = 'chain2'" | tr '\t' ' ')" "20 20" "  every link done"
# and 7 statements a link: the ack of a parent of one dependent (after
# the try for a job without any), its count, the one statement that
# meets a dependent's last parent, the read of the queues it made due,
# the claim's two (11 before: the four statements of the meet, the ack
# without children = 1, the read of the queue's settings after a claim
# that took fewer jobs than it had room for)
executes() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'" | cut -f2; }
prev=$("$MQ" push --queue chain3 1)
for i in $(seq 2 20); do prev=$("$MQ" push --queue chain3 --after "$prev" "$i"); done
e0=$(executes)
"$MQ" work --queue chain3 --concurrency 4 --exit-when-empty -- \
  sh -c 'sleep 0.05' >/dev/null 2>&1
n=$(($(executes) - e0))
check "a chain of 20 under mq work -c 4: 7 statements a link ($n executed; 150 at most)" [ "$n" -le 150 ]
is "$(sql "SELECT COUNT(*), SUM(state = 'done') FROM mq_jobs WHERE queue = 'chain3'" | tr '\t' ' ')" "20 20" "  every link done"

done_testing
