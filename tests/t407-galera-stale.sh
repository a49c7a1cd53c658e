#!/bin/sh
# Stale reads on a 3-node Galera cluster (issue 34's audit, mq-galera(7)
# WHAT EACH STATEMENT RESTS ON): a node reads what it has applied, and
# another node's commit of an instant ago may not be applied yet. A
# write set from one node that the others apply slowly (an UPDATE of a
# table without a primary key: a full scan per row there) holds them
# behind for a second or more, and in that time:
# - mq retry of a dependent on node 2, then mq archive --dead on node 1:
#   the archive keeps the dead parent the dependent waits for again
#   (before, it archived it, and the dependent waited for ever);
# - mq push --dedup on node 2 after an ack of the key's job on node 1
#   had returned: the job is pushed (before, the done job's id was
#   printed and nothing pushed).
# A round where the node had caught up before the command (the lag too
# short on a busy machine) is run again with a longer lag.
. "$(dirname "$0")/lib.sh"
galera_cluster
gmq 1 init >/dev/null
LAG=${T_DB}_lag
gsql 1 "DROP DATABASE IF EXISTS \`$LAG\`; CREATE DATABASE \`$LAG\`;
  CREATE TABLE \`$LAG\`.nopk (a INT, b INT);
  INSERT INTO \`$LAG\`.nopk SELECT seq, 0 FROM seq_1_to_20000"
# nsql N STATEMENT: on node N as it is now (no wait for the cluster)
nsql() {
  mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root -N -B \
    "$T_DB" -e "$2"
}
# lag N ROWS: a write set of node N that the other nodes apply slowly
lag() { nsql "$1" "UPDATE \`$LAG\`.nopk SET b = b + 1 WHERE a <= $2"; }
mark() { nsql "$1" "SELECT b FROM \`$LAG\`.nopk WHERE a = 1"; }

# ---- mq retry of a dependent on node 2, then mq archive on node 1
round=0 rows=1500 behind=0
while [ $round -lt 3 ] && [ $behind = 0 ]; do
  round=$((round + 1)) q=ar$round
  p=$(gmq 1 push --queue $q --max-attempts 1 P)
  c=$(gmq 1 push --queue ${q}kid --after "$p" C)
  gmq 1 cancel "$p" >/dev/null      # dead; its dependent cancelled
  sleep 5
  gmq 1 retry "$c" >/dev/null 2>&1
  gmq 1 cancel "$c" >/dev/null      # dead again, 5 s after its parent
  gsql 2 "SELECT 1" >/dev/null       # node 2 has it
  m=$(mark 1)
  lag 2 $rows
  gmq 2 retry "$c" >/dev/null 2>&1  # waits again for its parent
  [ "$(mark 1)" = "$m" ] && behind=1   # node 1 has not applied the retry
  # the parent, dead 5 s ago, not the dependent, dead again 1 s ago
  # (and no job done: a batch of those first, then a pause while the
  # node's applier writes, would let it catch up)
  gmq 1 archive --dead --older-than 3s >"$T_TMP/archive.out" 2>&1
  st=$?
  rows=$((rows * 2))
done
check "node 1 was behind node 2 when it archived ($round rounds)" [ $behind = 1 ]
is "$st" 0 "  mq archive on node 1: status 0 (no conflict reached it)"
is "$(gsql 1 "SELECT state FROM mq_jobs WHERE id = $p")" dead \
  "  the dead parent stays in the job table"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs_archive WHERE id = $p")" 0 "  not in the archive"
is "$(gsql 3 "SELECT CONCAT(state, ':', parent_shards) FROM mq_jobs WHERE id = $c")" "ready:1" \
  "  the dependent waits for it, which can be retried"

# ---- push --dedup after the key's job finished on another node
round=0 rows=1500 behind=0
while [ $round -lt 3 ] && [ $behind = 0 ]; do
  round=$((round + 1)) q=dd$round
  x=$(gmq 1 push --queue $q --dedup K first)
  r=$(gmq 1 pop --queue $q -o /dev/null)
  m=$(mark 1)
  lag 1 $rows
  gmq 1 ack "$r"
  [ "$(mark 2)" = "$m" ] && behind=1   # node 2 has not applied the ack
  y=$(gmq 2 push --queue $q --dedup K second)
  rows=$((rows * 2))
done
check "node 2 was behind node 1 when it pushed ($round rounds)" [ $behind = 1 ]
check "  push --dedup after the key's job was done on node 1: a new id ($x, then $y)" [ "$y" != "$x" ]
is "$(gsql 2 "SELECT GROUP_CONCAT(CONCAT(state, ':', CAST(payload AS CHAR)) ORDER BY id) FROM mq_jobs WHERE queue = '$q'")" \
  "done:first,ready:second" "  the second job pushed, the first done"

gsql 1 "DROP DATABASE \`$LAG\`"
done_testing
