#!/bin/sh
# A dead parent's cascade (mq cancel, mq fail, requeue-stale's burials,
# mq purge) is set-based: the dependents of the dead parents of a wave
# are read and cancelled a round of 1000 edges at a time, not one parent
# at a time (before: one locking read or more per dead dependent that
# was a parent, one transaction of 15 s for 100,000 of them, and an ack
# of a job of another queue, a parent of the same fan-in, waiting for
# it). Outcomes: every dependent dead once, its error naming its parent
# (the least, of a dependent of several in one wave), the policies (run:
# due; wait: waiting), the counts exact; for a fan-out with
# grandchildren, a fan-in and a deep chain. What it costs: the server's
# statements (counted: runs alone), and no lock on an unrelated job.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

W='9999-12-31 23:59:59.999999'
st() { sql "SELECT CONCAT(state, IF(state = 'ready' AND available_at = '$W', ':waiting', '')) FROM mq_jobs WHERE id = $1"; }
err_of() { sql "SELECT IFNULL(last_error, '') FROM mq_jobs WHERE id = $1"; }
execs() { sql_root "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'" | cut -f2; }
counts_exact() { is "$(counted_jobs)" "$(finished_jobs)" "$1: the counts are exact (a recount finds nothing)"; }
# named QUEUE: "n" if every dependent of QUEUE is dead and names the
# parent it should (its least dead one), else the first that is not
named() {
  sql "SELECT IFNULL(MIN(j.id), 'n') FROM mq_jobs j WHERE j.queue = '$1'
    AND j.parent_shards IS NOT NULL AND
    (j.state <> 'dead' OR NOT j.last_error <=> CONCAT('cancelled: parent ',
    (SELECT MIN(d.parent) FROM mq_jobs_deps d JOIN mq_jobs p ON p.id = d.parent
     WHERE d.child = j.id AND p.state = 'dead' AND d.on_death = 'cancel'), ' is dead'))"
}

# ---- a fan-out with grandchildren, cancelled: X (another queue) and
# 2,000 dependents of P are the parents of a fan-in F; some dependents
# have their own (one after two of them, in one wave and in two; one
# that runs anyway; one that waits; a great-grandchild)
x=$("$MQ" push --queue xq X)
p=$("$MQ" push --queue fo P)
seq 2000 | "$MQ" push --queue fo --lines --quiet --after "$p" >"$T_TMP/kids"
kid() { sed -n "${1}p" "$T_TMP/kids"; }
run=$("$MQ" push --queue fo --after "$p" --if-parent-dies run RUN)
(echo "$x"; cat "$T_TMP/kids") >"$T_TMP/parents"
f=$("$MQ" push --queue fi --after-file "$T_TMP/parents" F)
: >"$T_TMP/gc"
for i in 1 2 999 1000 1001 2000; do
  echo "$(kid "$i") $("$MQ" push --queue gc --after "$(kid "$i")" "G$i")" >>"$T_TMP/gc"
done
g12=$("$MQ" push --queue gc --after "$(kid 12),$(kid 11)" G12)
g1500=$("$MQ" push --queue gc --after "$(kid 1500),$(kid 10)" G1500)
grun=$("$MQ" push --queue gr --after "$(kid 5)" --if-parent-dies run GRUN)
gwait=$("$MQ" push --queue gw --after "$(kid 6)" --if-parent-dies wait GWAIT)
g1=$(sed -n '1s/.* //p' "$T_TMP/gc")
gg=$("$MQ" push --queue gc --after "$g1" GG)
# X held: a consumer's lease; its ack must not wait for the cancel. The
# fan-in's row held by another session for 4 s stops the cancel there
# (its second wave); the ack of X meets its edge to F, in a shard of F
# that holds kids too (X's does not empty it: it writes no row of F).
# Before, the cancel's first wave locked every job of the table (meet's
# UPDATE planned as a scan of the job table), X's too
r=$("$MQ" pop --queue xq --lease 10m -o /dev/null)
check "X shares its shard of F with a dependent of P" \
  [ "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $f AND parent % 1024 = $x % 1024")" -gt 1 ]
sql "SET SESSION innodb_lock_wait_timeout = 30; BEGIN;
  SELECT id FROM mq_jobs WHERE id = $f FOR UPDATE; SELECT SLEEP(4); ROLLBACK" >/dev/null &
hold=$!
sleep 0.5
"$MQ" cancel "$p" >"$T_TMP/cancel.out" 2>&1 &
cpid=$!
sleep 1   # (its first wave takes some 0.1 s: it then waits for F's row)
"$MQ" ack "$r" >/dev/null
ack=$?
kill -0 "$cpid" 2>/dev/null
is "$ack:$?" "0:0" "the ack of X (another queue, a parent of the fan-in) ends while the cancel is held: it locked no row of X"
wait "$cpid"
is "$?:$(cat "$T_TMP/cancel.out")" "0:job $p cancelled" "the cancel of P then ends"
wait "$hold"
is "$(st "$p"):$(err_of "$p")" "dead:cancelled" "P dead"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fo' AND state = 'dead' AND last_error = 'cancelled: parent $p is dead'")" 2000 \
  "its 2,000 dependents dead, each naming it"
is "$(st "$run")" ready "its dependent that runs anyway: due"
is "$(st "$x"):$(st "$f"):$(err_of "$f")" "done:dead:cancelled: parent $(kid 1) is dead" "X done, the fan-in dead, naming the least of its dead parents"
while read -r k g; do
  is "$(st "$g"):$(err_of "$g")" "dead:cancelled: parent $k is dead" "  a grandchild dead, naming its parent $k"
done <"$T_TMP/gc"
is "$(err_of "$g12")" "cancelled: parent $(kid 11) is dead" "a grandchild after two dependents of one wave names the least"
is "$(err_of "$g1500")" "cancelled: parent $(kid 10) is dead" "a grandchild after two in different waves names the first wave's"
is "$(err_of "$gg")" "cancelled: parent $g1 is dead" "a great-grandchild dead, naming the grandchild"
is "$(st "$grun"):$(st "$gwait")" "ready:ready:waiting" "a grandchild that runs anyway: due; one that waits: waiting"
is "$(named gc):$(named fi)" "n:n" "every dependent of those queues dead, naming the least of its dead parents"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE met = 1 AND parent = $p"):$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE met = 0 AND parent = $p")" "1:2000" \
  "the edge of the one that runs met, those of the cancelled not"
counts_exact "the fan-out cancelled"

# ---- what it costs: a fan-out of 3,000, each a parent of a fan-in: a
# few dozen statements (before: more than one per dependent)
p=$("$MQ" push --queue co P)
seq 3000 | "$MQ" push --queue co --lines --quiet --after "$p" >"$T_TMP/kids2"
"$MQ" push --queue ci --after-file "$T_TMP/kids2" F >/dev/null
e0=$(execs)
expect_status 0 "cancel of a parent of 3,000 dependents, each a parent of a fan-in" "$MQ" cancel "$p"
n=$(($(execs) - e0))
check "  in $n statements (100 at most; 3,000 and more before)" [ "$n" -le 100 ]
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue IN ('co', 'ci') AND state = 'dead'")" 3002 "  P, the 3,000 and the fan-in dead"
is "$(named co):$(named ci)" "n:n" "  each naming its parent"
counts_exact "the fan-out of 3,000"

# ---- a chain of 400, its head cancelled: each link dead, naming the
# one before; 4 statements a link (7 before)
h=$("$MQ" push --queue ch H)
prev=$h
i=1
while [ $i -lt 400 ]; do prev=$("$MQ" push --queue ch --after "$prev" "L$i"); i=$((i + 1)); done
e0=$(execs)
expect_status 0 "cancel of a chain's head" "$MQ" cancel "$h"
n=$(($(execs) - e0))
check "  in $n statements (5 a link at most: 2,000; 7 a link before)" [ "$n" -le 2000 ]
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'ch' AND state = 'dead'")" 400 "  the 400 links dead"
is "$(sql "SELECT COUNT(*) FROM mq_jobs j JOIN mq_jobs_deps d ON d.child = j.id WHERE j.queue = 'ch' AND j.last_error = CONCAT('cancelled: parent ', d.parent, ' is dead')")" 399 \
  "  each after the head naming the one before"
counts_exact "the chain cancelled"

# ---- the other ways a parent dies go through the same cascade: a fail
# for good, requeue-stale's burial, a purge; 1,500 dependents each
# (two rounds), each with a grandchild fan-in
fanout() { # fanout QUEUE [PUSH-OPTIONS]: a parent, 1,500 dependents, a fan-in
  _p=$("$MQ" push --queue "$1" --max-attempts 1 P)
  seq 1500 | "$MQ" push --queue "$1k" --lines --quiet --after "$_p" >"$T_TMP/k.$1"
  "$MQ" push --queue "$1g" --after-file "$T_TMP/k.$1" G >/dev/null
  echo "$_p"
}
p=$(fanout fl)
"$MQ" fail --no-retry "$("$MQ" pop --queue fl -o /dev/null)" >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'flk' AND state = 'dead' AND last_error = 'cancelled: parent $p is dead'"):$(named flg)" "1500:n" \
  "a fail for good: its 1,500 dependents dead, the fan-in after them too"
p=$(fanout rs)
"$MQ" pop --queue rs --lease 1s -o /dev/null >/dev/null
sleep 1.2
"$MQ" requeue-stale >/dev/null
is "$(st "$p"):$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'rsk' AND state = 'dead' AND last_error = 'cancelled: parent $p is dead'"):$(named rsg)" "dead:1500:n" \
  "requeue-stale's burial: its 1,500 dependents dead, the fan-in after them too"
p=$(fanout pu)
expect_status 0 "purge of a parent of 1,500" "$MQ" purge --queue pu --yes
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'puk' AND state = 'dead' AND last_error = 'cancelled: parent $p was purged'"):$(named pug)" "1500:n" \
  "  its 1,500 dependents dead (was purged), the fan-in after them dead"
counts_exact "after the fail, the burial and the purge"

done_testing
