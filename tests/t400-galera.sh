#!/bin/sh
# mq on a 3-node Galera cluster (tests/galera.sh): mq init's checks;
# exactly-once drains with consumers on all three nodes under both claim
# strategies; no certification failure (1213) reaches a user; dedup and
# recounts across nodes; a cross-node ack right after the pop; kill -9 of
# one node's server mid-drain and its rejoin: nothing lost, redeliveries
# only for jobs whose lease it held, their late acks refused.
. "$(dirname "$0")/lib.sh"
galera_cluster
JOBS=300
[ -n "${MQ_SANITIZED:-}" ] && JOBS=60

gsql 1 "CREATE TABLE other_nopk (a INT)"
expect_status 0 "init on node 2" gmq 2 init
like "$OUT" "*galera: node ? of 3 (Synced); binlog_format ROW, innodb_autoinc_lock_mode 2" \
  "init reports the node, the cluster and what mq needs of it"
like "$ERR" "*1 table of this database without a primary key*other_nopk" \
  "and warns of a table without a primary key"
gsql 3 "SELECT 1" >/dev/null   # node 3 has applied the DDL
expect_status 0 "init on node 3: up to date" gmq 3 init
like "$OUT" "table mq_jobs is up to date (schema $(sed -n "s/^#define MQ_SCHEMA_VERSION //p" "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/lib/mq.h"))*" "the tables replicated"
is "$(printf '%s' "$ERR" | grep -c innodb_flush_log_at_trx_commit)" 0 \
  "innodb_flush_log_at_trx_commit 1: no durability warning"
gsql 3 "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
expect_status 0 "innodb_flush_log_at_trx_commit 2 (Galera's usual advice): init on node 3" gmq 3 init
gsql 3 "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
like "$ERR" "*mq init: warning: innodb_flush_log_at_trx_commit is 2: a crash of the nodes within a short time of each other can lose transactions the server said were committed (jobs pushed, acks); set it to 1*" \
  "  warns of the coordinated crash (mq-init(1), DURABILITY)"

# a node whose innodb_autoinc_lock_mode is not 2 (a one-node cluster of
# its own, on a port next to the cluster's): mq init refuses it
one=$T_TMP/one
as_root=
[ "$(id -u)" -eq 0 ] && as_root=--user=root
PATH=$PATH:/usr/sbin
mariadb-install-db --no-defaults --datadir="$one/data" $as_root \
  --auth-root-authentication-method=normal --skip-test-db --force >/dev/null 2>&1
mariadbd --no-defaults --datadir="$one/data" --socket="$one/sock" \
  --skip-networking --pid-file="$one/pid" --log-error="$one/error.log" \
  --binlog-format=ROW --innodb-autoinc-lock-mode=1 --wsrep-on=ON \
  --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
  --wsrep-cluster-address=gcomm:// \
  --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(($(cat "$G_DIR/base") + 5))" \
  $as_root >/dev/null 2>&1 &
onepid=$!
i=0
until mariadb --no-defaults --socket="$one/sock" --user=root -e "CREATE DATABASE IF NOT EXISTS o" 2>/dev/null ||
  [ $i -ge 300 ]; do
  sleep 0.1; i=$((i + 1))
done
is "$(mariadb --no-defaults --socket="$one/sock" --user=root -N -B -e "SELECT 1" 2>&1)" 1 \
  "a one-node cluster with innodb_autoinc_lock_mode 1 started (its log: $one/error.log; port $(($(cat "$G_DIR/base") + 5)))"
expect_status 78 "init on a node with innodb_autoinc_lock_mode 1 is refused" \
  env MQ_SOCKET="$one/sock" MQ_DATABASE=o "$MQ" init
like "$ERR" "mq init: this Galera node has binlog_format=ROW and innodb_autoinc_lock_mode=1; mq needs*" \
  "and says what it needs"
kill "$onepid"
wait "$onepid"

# a session with wsrep_on off would write on its node alone
printf '[client]\ninit-command=SET SESSION wsrep_on=OFF\n' >"$T_TMP/off.cnf"
expect_status 78 "a session with wsrep_on off is refused" \
  env MQ_DEFAULTS_FILE="$T_TMP/off.cnf" MQ_SOCKET="$G_DIR/n1/sock" "$MQ" push x
like "$ERR" "*wsrep_on is OFF in this session*" "and says why"
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs")" 0 "nothing was pushed"

finished_on() { # finished_on NODE: the job table's finished jobs
  gsql "$1" "SELECT queue, state, COUNT(*) FROM mq_jobs WHERE state IN ('done', 'dead') GROUP BY queue, state ORDER BY 1, 2" | tr '\t\n' ' ,'
}
counted_on() { # counted_on NODE: what the counts say of them
  gsql "$1" "SELECT queue, state, SUM(n) FROM mq_jobs_counts WHERE state IN ('done', 'dead') GROUP BY queue, state HAVING SUM(n) <> 0 ORDER BY 1, CAST(state AS CHAR)" | tr '\t\n' ' ,'
}

certs() { # certification failures and brute-force aborts, all nodes
  _t=0
  for _n in 1 2 3; do
    _t=$((_t + $(gstatus $_n wsrep_local_cert_failures) + $(gstatus $_n wsrep_local_bf_aborts)))
  done
  echo $_t
}

# The schema has no hot certification key: 1800 one-row UPDATEs of
# disjoint job rows, 6 clients (2 per node, each its own 300 rows, one
# transaction each), get no certification failure and no brute-force
# abort (with the dedup key of schema 7, which was one key per queue
# while a job had none, about half of them failed)
seq 1 1800 | awk '{ printf "%d\n%c", $1, 0 }' | gmq 1 push -0 --queue disjoint >/dev/null
gsql 3 "SELECT 1" >/dev/null
before=$(certs)
pids=
for k in 0 1 2 3 4 5; do
  gsql 1 "SELECT id FROM mq_jobs WHERE queue = 'disjoint' ORDER BY id LIMIT $((k * 300)), 300" |
    awk '{ printf "UPDATE mq_jobs SET attempts = attempts + 1, last_error = '"'"'d'"'"' WHERE id = %s;\n", $1 }' >"$T_TMP/disjoint.$k"
  mariadb --no-defaults --socket="$G_DIR/n$((k % 3 + 1))/sock" --user=root \
    "$T_DB" <"$T_TMP/disjoint.$k" 2>>"$T_TMP/disjoint.err" &
  pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
is "$(($(certs) - before)):$(cat "$T_TMP/disjoint.err")" "0:" \
  "1800 UPDATEs of disjoint rows from 6 clients on 3 nodes: no conflict"
is "$(gsql 2 "SELECT CONCAT(COUNT(*), ' ', SUM(attempts)) FROM mq_jobs WHERE queue = 'disjoint'")" \
  "1800 1800" "each row updated once, on every node"
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'disjoint'"

consumer() { # consumer NODE CLAIM QUEUE LOG
  while :; do
    r=$(gmq "$1" pop --claim "$2" --queue "$3" -o "$4.payload" 2>>"$4.err")
    st=$?
    [ $st -eq 1 ] && break
    if [ $st -ne 0 ]; then
      echo "pop failed with status $st" >>"$4.err"
      break
    fi
    # the ack goes to the next node: right after the claim, elsewhere
    if gmq $(($1 % 3 + 1)) ack "$r" 2>>"$4.err"; then
      printf '%s %s\n' "${r%%.*}" "$(cat "$4.payload")" >>"$4"
    else
      echo "ack failed for $r" >>"$4.err"
    fi
  done
}

for claim in skip-locked update; do
  q=g_$(printf '%s' "$claim" | tr -c 'a-z' _)
  seq 1 "$JOBS" | gmq 1 push --lines --queue "$q" >/dev/null
  c0=$(certs)
  for i in 1 2 3 4 5 6; do
    : >"$T_TMP/$q.$i"
    consumer $((i % 3 + 1)) "$claim" "$q" "$T_TMP/$q.$i" &
  done
  wait
  c1=$(certs)
  cat "$T_TMP/$q".[1-6] >"$T_TMP/$q.all"
  is "$(cat "$T_TMP/$q".*.err 2>/dev/null)" "" "$claim: no consumer saw an error (no 1213 surfaced)"
  is "$(cut -d' ' -f1 "$T_TMP/$q.all" | sort | uniq -d | wc -l | tr -d ' ')" 0 \
    "$claim: no job acked twice"
  is "$(cut -d' ' -f2 "$T_TMP/$q.all" | sort -n | md5sum)" "$(seq 1 "$JOBS" | md5sum)" \
    "$claim: every payload processed once, by consumers on 3 nodes"
  for n in 1 2 3; do
    is "$(gsql $n "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done'), SUM(attempts = 1)) FROM mq_jobs WHERE queue = '$q'")" \
      "$JOBS,$JOBS,$JOBS" "$claim: node $n: all done, each delivered once"
  done
  conflicts=$((c1 - c0))
  check "$claim: $conflicts certification failures or BF aborts for $JOBS jobs (goal: 1 per 100; the test allows 1 per 50, plus 2)" \
    [ "$conflicts" -le $((JOBS / 50 + 2)) ]
done

# mq work on all three nodes
seq 1 "$JOBS" | gmq 2 push --lines --queue w >/dev/null
for n in 1 2 3 1 2 3; do
  gmq $n work --queue w --exit-when-empty -- sh -c 'printf "%s\n" "$(cat)" >>"$0"' "$T_TMP/w.out" 2>>"$T_TMP/w.err" &
done
wait
is "$(cat "$T_TMP/w.err")" "" "mq work on 3 nodes: no error"
is "$(grep -c . "$T_TMP/w.out")" "$JOBS" "mq work: $JOBS jobs run"
is "$(sort -n "$T_TMP/w.out" | uniq | wc -l | tr -d ' ')" "$JOBS" "mq work: each once"

# a node's share never holds back a more urgent job, nor a queue earlier
# in a preference list, whatever share it is in
for n in 1 2 3; do
  seq 1 20 | gmq 1 push --lines --queue "low$n" --priority 5 >/dev/null
  gmq 1 push --queue "low$n" --priority -100 urgent >/dev/null
  gmq 1 push --queue "high$n" first >/dev/null
done
gsql 1 "SELECT 1" >/dev/null
for n in 1 2 3; do
  is "$(gsql $n "SET SESSION wsrep_sync_wait = 15; SELECT COUNT(*) FROM mq_jobs WHERE queue = 'low$n'")" 21 "node $n has the jobs"
  is "$(gmq $n pop --queue "low$n" 2>/dev/null)" urgent "node $n: the urgent job first, whatever its share"
  is "$(gmq $n pop --queue "high$n,low$n" 2>/dev/null)" first "node $n: the first queue of a preference list first"
done

# fail and extend right after the claim, on other nodes, 20 times: a
# receipt that looks lost there is tried again once the node caught up
bad=0
for i in $(seq 1 20); do
  gmq 1 push --queue fx "job $i" >/dev/null
  r=$(gmq 1 pop --queue fx -o /dev/null) || bad=$((bad + 1))
  gmq 2 extend "$r" --lease 5m 2>>"$T_TMP/fx.err" || bad=$((bad + 1))
  gmq 3 fail "$r" --error "e$i" --retry-in 1h >/dev/null 2>>"$T_TMP/fx.err" || bad=$((bad + 1))
done
is "$bad:$(cat "$T_TMP/fx.err")" "0:" "pop on node 1, extend on node 2, fail on node 3: all 20 went through"
is "$(gsql 2 "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'ready' AND attempts = 1), SUM(last_error LIKE 'e%')) FROM mq_jobs WHERE queue = 'fx'")" \
  "20,20,20" "each failed once, back to ready"
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs_history WHERE event = 'failed' AND job_id IN (SELECT id FROM mq_jobs WHERE queue = 'fx')")" \
  20 "one history row each: nothing applied twice"

# dedup across nodes: one live job per key and queue, whichever node
id1=$(gmq 1 push --queue d --dedup k1 a)
is "$(gmq 2 push --queue d --dedup k1 b)" "$id1" "dedup: node 2 finds node 1's live job"
is "$(gmq 3 push --queue d --dedup k1 c)" "$id1" "dedup: node 3 too"
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'd'")" 1 "dedup: one job"

# recounts at once on two nodes (GET_LOCK is per node): each round a
# queue whose count rows are wrong by 50 and that has no row in slot 0
# yet, where both recounts add their difference (a new row: READ
# COMMITTED's locks did not keep the other node's insert out, and the
# difference was added twice)
for i in 1 2 3 4 5 6 7 8; do
  for j in 1 2 3; do gmq 2 push --queue "rc$i" x >/dev/null; done
  for j in 1 2 3; do r=$(gmq 2 pop --queue "rc$i" -o /dev/null) && gmq 2 ack "$r"; done
  gsql 1 "UPDATE mq_jobs_counts SET n = n + 50 WHERE queue = 'rc$i' AND state = 'done' LIMIT 1"
  gmq 1 stats --recount >/dev/null 2>>"$T_TMP/rc" &
  gmq 3 stats --recount >/dev/null 2>>"$T_TMP/rc" &
  wait
  [ "$(counted_on 2)" = "$(finished_on 2)" ] || break
done
is "$(counted_on 2)$(cat "$T_TMP/rc")" "$(finished_on 2)" "two recounts at once on nodes 1 and 3, 8 times: the counts equal the table"

# a node whose share has nothing due (its consumers took it first, or
# every consumer is on that node) reads a window of the queue's head
# per claim, not every due job of the queue: 6,000 jobs, node 1's share
# deleted; the index entries node 1 reads for one pop (the server's
# counters; no other test uses the cluster meanwhile)
# (a node's share: k = id DIV 3, the step of ids on 3 nodes;
# (k MOD 3 + CRC32(k DIV 3)) MOD 3 = its wsrep_local_index)
is "$(gsql 1 "SELECT @@auto_increment_increment")" 3 "ids step by 3"
seq 1 6000 | gmq 2 push --lines --queue win >/dev/null 2>&1
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'win' AND
  ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $(gstatus 1 wsrep_local_index)"
left=$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'win'")
entries() { gsql 1 "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_next', 'Handler_read_key', 'Handler_icp_attempts')" | awk '{ s += $2 } END { print s }'; }
check "4,000 jobs left in the other shares ($left)" [ "$left" -ge 3900 ]
e0=$(entries)
gmq 1 pop --queue win -o /dev/null >/dev/null 2>>"$T_TMP/win.err" ||
  echo "pop failed: $?" >>"$T_TMP/win.err"
read=$(($(entries) - e0))
is "$([ "$read" -lt 1000 ] && echo fewer)$(cat "$T_TMP/win.err")" fewer \
  "a pop on a node with an empty share gets a job and reads $read index entries (< 1,000)"
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'win' AND state = 'ready'"
gsql 2 "SELECT 1" >/dev/null && gsql 3 "SELECT 1" >/dev/null	# applied

# A claim stays in its node's share while the share has jobs in the
# window: it never takes the head of the queue, where the other nodes'
# consumers take theirs (each job taken there is a certification
# conflict). Two ways it did: another consumer of the node had locked
# the share's first candidates, and the claim went to the head instead
# of to the share's next jobs (about 1 claim in 5 of 6 mq work over 3
# nodes: 47 conflicts per 3,000 jobs); and one claim in 64, at random,
# took the head anyway.
share1=$(gstatus 1 wsrep_local_index)
in_share() { # in_share ID...: the ids outside node 1's share (or no job's)
  _l=
  for _id; do
    case $_id in
    ''|*[!0-9]*) printf 'not an id: %s ' "$_id" ;;
    *) _l="$_l${_l:+,}$_id" ;;
    esac
  done
  [ -z "$_l" ] || gsql 1 "SELECT CONCAT_WS(' ', (SELECT GROUP_CONCAT(id ORDER BY id
    SEPARATOR ' ') FROM mq_jobs WHERE id IN ($_l) AND ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 <> $share1),
    IF((SELECT COUNT(*) FROM mq_jobs WHERE id IN ($_l)) = $#, NULL, 'not all jobs'))"
}
seq 1 300 | gmq 2 push --lines --queue own >/dev/null
gsql 1 "SELECT 1" >/dev/null
first=$(gsql 1 "SELECT GROUP_CONCAT(id ORDER BY priority, available_at, id)
  FROM (SELECT id, priority, available_at FROM mq_jobs WHERE queue = 'own'
  AND ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $share1 ORDER BY priority, available_at, id LIMIT 12) f")
# another consumer of node 1 holds the share's first 12 jobs
mariadb --no-defaults --socket="$G_DIR/n1/sock" --user=root -N -B "$T_DB" \
  -e "START TRANSACTION; SELECT id FROM mq_jobs WHERE id IN ($first) FOR UPDATE;
  DO GET_LOCK('$T_DB.holder', 0); DO SLEEP(6); ROLLBACK" >/dev/null 2>"$T_TMP/holder.err" &
holder=$!
i=0
# (the holder says it holds them by a named lock: INNODB_TRX's
# trx_rows_locked was seen at 0 for seconds while it held them)
until [ "$(gsql 1 "SELECT IS_USED_LOCK('$T_DB.holder') IS NOT NULL")" = 1 ] ||
    [ $i -ge 80 ]; do
  sleep 0.05; i=$((i + 1))
done
is "$([ $i -lt 80 ] && echo held)$(cat "$T_TMP/holder.err")" held \
  "the holder holds the share's first 12 jobs"
ids=$(gmq 1 pop --queue own --count 4 --json 2>&1 | sed -n 's/^{"id":\([0-9]*\),.*/\1/p' | tr '\n' ' ')
wait $holder
held=
for id in $ids; do
  case ",$first," in *",$id,"*) held="$held $id" ;; esac
done
is "$(echo "$ids" | wc -w | tr -d ' '):$(in_share $ids):$held" "4::" \
  "a pop on node 1 whose share's first jobs another consumer holds takes the share's next ones ($ids)"
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'own'"
# 6 rounds of 60 pops on node 1, each round's share about 100 of 300
# jobs (its first 70 or so in a window of 216): every job from the share
# (the claim in 64 at random: 2 in 3 of them from another share; passed
# with 1 chance in 40)
out=
for round in 1 2 3 4 5 6; do
  seq 1 300 | gmq 2 push --lines --queue own$round >/dev/null
  gsql 1 "SELECT 1" >/dev/null
  i=0 ids=
  while [ $i -lt 60 ]; do
    r=$(gmq 1 pop --queue own$round -o /dev/null 2>&1) || { out="$out pop failed: $r"; break; }
    ids="$ids ${r%%.*}"
    i=$((i + 1))
  done
  [ "$(echo $ids | wc -w)" = 60 ] || out="$out round $round: $(echo $ids | wc -w) ids"
  # shellcheck disable=SC2086
  out="$out$(in_share $ids)"
done
is "$out" "" "360 pops on node 1, its share not empty: every job from its share"
# ... unless another share is behind: its jobs at the head that waited a
# second longer than the node's own first job are taken first (a share
# whose node has no consumers, or whose jobs are too few to fill a busy
# node's window, would wait for ever otherwise)
for p in a b c d e f g h i; do gmq 2 push --queue lag $p >/dev/null; done
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'lag' AND ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $share1"
left=$(gsql 1 "SELECT GROUP_CONCAT(payload ORDER BY id SEPARATOR ' ') FROM
  (SELECT id, payload FROM mq_jobs WHERE queue = 'lag' ORDER BY id LIMIT 2) f")
sleep 1.2
seq 1 30 | gmq 2 push --lines --queue lag >/dev/null
gsql 1 "SELECT 1" >/dev/null
got=$(gmq 1 pop --queue lag 2>/dev/null) && got="$got $(gmq 1 pop --queue lag 2>/dev/null)"
is "$got" "$left" "a pop on node 1 takes the jobs of the shares behind it first ($left)"
# a job due before 2000 behind too (its time counted from 1000-01-01; it
# counted as unknown from 2000-01-01, and was jumped over)
for p in 1 2 3 4 5 6 7 8 9; do gmq 2 push --queue old --at @0 "e$p" >/dev/null; done
gsql 1 "DELETE FROM mq_jobs WHERE queue = 'old' AND ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $share1"
left=$(gsql 1 "SELECT payload FROM mq_jobs WHERE queue = 'old' ORDER BY id LIMIT 1")
seq 1 30 | gmq 2 push --lines --queue old >/dev/null
gsql 1 "SELECT 1" >/dev/null
is "$(gmq 1 pop --queue old 2>/dev/null)" "$left" "a job of another share due in 1970 is behind: taken first"
# a producer pushing to three queues in turn (one statement: the ids
# step by 3 within each node's, 9 within a queue's): node 1's share of
# each queue is its third, not all or nothing (with id DIV 3 MOD 3 each
# queue was one share: the other nodes' claims took its head)
gsql 2 "INSERT INTO mq_jobs (queue, payload)
  SELECT CONCAT('rr', seq MOD 3), 'x' FROM seq_0_to_899"
gsql 1 "SELECT 1" >/dev/null
out=
for q in rr0 rr1 rr2; do
  ids=$(gmq 1 pop --queue $q --count 5 --json 2>&1 | sed -n 's/^{"id":\([0-9]*\),.*/\1/p' | tr '\n' ' ')
  # shellcheck disable=SC2086
  out="$out$(echo $ids | wc -w | tr -d ' '):$(in_share $ids) "
done
is "$out" "5: 5: 5: " "three queues pushed in turn: node 1 takes 5 jobs of each from its share"
# a node whose share is empty at a drain's end takes the other shares'
# last jobs, which their nodes, each taking its own from the front,
# reach last (it took the head, their next jobs: a certification
# conflict each, every drain's last second); with more than its window
# left in them (they are far behind), the head
for q in end:30 far:700; do
  gsql 2 "INSERT INTO mq_jobs (queue, payload) SELECT '${q%:*}', 'x' FROM seq_1_to_${q#*:}"
  gsql 1 "DELETE FROM mq_jobs WHERE queue = '${q%:*}' AND ((id DIV 3) MOD 3 + CRC32(id DIV 9)) MOD 3 = $share1"
done
last=$(gsql 1 "SELECT GROUP_CONCAT(id ORDER BY id DESC SEPARATOR ' ') FROM (SELECT id FROM mq_jobs WHERE queue = 'end' ORDER BY id DESC LIMIT 2) l")
ids=$(gmq 1 pop --queue end --count 2 --json 2>&1 | sed -n 's/^{"id":\([0-9]*\),.*/\1/p' | sort -rn | tr '\n' ' ')
is "$ids" "$last " "node 1's share empty, 30 jobs pushed: a pop takes the last two"
first=$(gsql 1 "SELECT MIN(id) FROM mq_jobs WHERE queue = 'far'")
ids=$(gmq 1 pop --queue far --json 2>&1 | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
is "$ids" "$first" "node 1's share empty, 700 jobs pushed (more than its window of 216 left): a pop takes the head"

# the operator's commands by id, on another node than the push, at once:
# they see what the cluster committed before them (a cancel on node 2
# right after 2,000 pushes on node 1 said "no job", status 1, 4 times in
# 6, and the job ran; why and retry said the same)
out=
for i in 1 2 3 4 5; do
  last=$(seq 1 2000 | gmq 1 push --lines --queue opx 2>/dev/null | tail -1)
  gmq 2 cancel "$last" >/dev/null 2>&1
  c=$?
  last2=$(seq 1 2000 | gmq 1 push --lines --queue opx 2>/dev/null | tail -1)
  gmq 3 why "$last2" >/dev/null 2>&1
  out="$out$c$? "
done
is "$out" "00 00 00 00 00 " "cancel on node 2 and why on node 3 right after a push on node 1: each finds the job"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'opx' AND state = 'dead'")" 5 "the 5 jobs cancelled"

# The sanitized build's run stops here: the rest is the cluster's
# behaviour (t206 checks mq's reconnects under it), and 50 s of waits.
[ -z "${MQ_SANITIZED:-}" ] || done_testing

# kill -9 of node 3's server mid-drain. Leases of 8 s: the cluster
# stalls its commits for a few seconds until it declares node 3 gone
# (tests/galera.sh: evs.suspect_timeout 3 s)
seq 1 "$JOBS" | gmq 1 push --lines --queue k >/dev/null
gsql 3 "SELECT 1" >/dev/null	# node 3 has applied the push
late=$(gmq 3 pop --queue k --lease 3s -o /dev/null)
on3=
for n in 1 2 3 1 2 3; do
  # a simple command in the background: $! is mq itself
  MQ_SOCKET="$G_DIR/n$n/sock" "$MQ" work --queue k --lease 8s --exit-when-empty -- sh -c 'sleep 0.1; printf "%s\n" "$(cat)" >>"$0"' "$T_TMP/k.out" 2>>"$T_TMP/k.err.$n" &
  [ $n -eq 3 ] && on3="$on3 $!"
done
set -- $on3
by3="leased_by LIKE '%:$1' OR leased_by LIKE '%:$2'"
# mid-drain: node 3's workers hold leases
i=0
while [ "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k' AND state = 'leased' AND ($by3)")" = 0 ] && [ $i -lt 600 ]; do
  sleep 0.05
  i=$((i + 1))
done
sh "$TESTS_DIR/galera.sh" kill "$G_DIR" 3
# node 3's workers would reconnect to it forever: their operator stops
# them; the jobs they held are leased to nobody now
kill -TERM $on3 2>/dev/null
wait
is "$(cat "$T_TMP/k.err.1" "$T_TMP/k.err.2")" "" "the workers on nodes 1 and 2 saw no error"
held=$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k' AND state = 'leased' AND ($by3)")
check "node 3's workers held leases when it was killed ($held)" [ "$held" -ge 1 ]
# until those leases (8 s) have run out
i=0
while [ "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k' AND state = 'leased' AND leased_until > UTC_TIMESTAMP(6)")" != 0 ] && [ $i -lt 300 ]; do
  sleep 0.1
  i=$((i + 1))
done
expect_status 0 "requeue-stale on node 1 takes back node 3's leases" gmq 1 requeue-stale
gmq 2 work --queue k --exit-when-empty -- sh -c 'printf "%s\n" "$(cat)" >>"$0"' "$T_TMP/k.out" 2>>"$T_TMP/k.err.2"
is "$(gsql 1 "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'k'")" \
  "$JOBS,$JOBS" "after the kill: every job done on node 1"
is "$(sort -n "$T_TMP/k.out" | uniq | wc -l | tr -d ' ')" "$JOBS" "every job run once (the one popped by hand too: redelivered)"
redelivered=$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k' AND attempts > 1")
expired=$(gsql 1 "SELECT COUNT(DISTINCT job_id) FROM mq_jobs_history WHERE event = 'expired' AND job_id IN (SELECT id FROM mq_jobs WHERE queue = 'k')")
is "$redelivered" "$expired" "redeliveries only for jobs whose lease expired ($redelivered)"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs_history WHERE event = 'expired' AND job_id IN (SELECT id FROM mq_jobs WHERE queue = 'k') AND NOT (worker LIKE '%:$1' OR worker LIKE '%:$2' OR job_id = ${late%%.*})")" \
  0 "and only for jobs leased on the killed node"
expect_status 2 "the late ack of a job leased on the killed node is refused" gmq 2 ack "$late"
is "$(gsql 2 "SELECT attempts > 1 AND state = 'done' FROM mq_jobs WHERE id = ${late%%.*}")" 1 \
  "and that job was redelivered and done"
expect_status 0 "node 3 rejoins" sh "$TESTS_DIR/galera.sh" rejoin "$G_DIR" 3
is "$(gsql 3 "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'k'")" \
  "$JOBS,$JOBS" "the rejoined node has every job done"
is "$(counted_on 3)" "$(finished_on 3)" "and counts that equal its table"

# A preference list's claim through a relay to node 1 (fault-proxy.py)
# that loses one answer. The UPDATE claim: ga's statements gave jobs,
# and the first statement that takes node 1's share of gb lost its
# answer (found by its binary parameters: host:pid, then the queue
# twice): that job stayed leased to nobody, an attempt spent, while mq
# work exited 0 (the claim as a whole had returned ga's job). SKIP
# LOCKED: the COMMIT of the claim of both queues lost: mq pop gives
# their jobs back (it exited 3 with them leased).
PROXY=
proxy() { # proxy TRIGGER: a fresh relay to node 1 that fires on TRIGGER
  unproxy
  rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
  python3 "$TESTS_DIR/fault-proxy.py" "$T_TMP/proxy.sock" "$G_DIR/n1/sock" \
    "$1" "$T_TMP/fired" &
  PROXY=$!
  i=0
  while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unproxy() { [ -z "$PROXY" ] || { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; }; PROXY=; }
trap 'unproxy; [ -z "${T_OWN_GALERA:-}" ] || sh "$TESTS_DIR/galera.sh" stop "$T_OWN_GALERA"; t_cleanup' EXIT
list_jobs() {
  gsql 1 "SELECT GROUP_CONCAT(CONCAT(queue, ':', state, attempts) ORDER BY id) FROM mq_jobs WHERE queue IN ('ga', 'gb')"
}
gmq 1 push --queue ga a1 >/dev/null
seq 1 3 | gmq 1 push --lines --queue gb >/dev/null
proxy 're:[0-9]\x02gb\x02gb'
run timeout 120 sh -c 'MQ_SOCKET="$1" "$0" work --queue ga,gb --claim update --lease 10m --exit-when-empty -- true' \
  "$MQ" "$T_TMP/proxy.sock"
check "the relay lost the answer of a share statement of gb" test -f "$T_TMP/fired"
like "$ERR" "*gave back 1 job of the claim whose outcome was unknown*" \
  "mq work --claim update, list, Galera: gave gb's job back"
is "$RC:$(list_jobs)" "0:ga:done1,gb:done1,gb:done1,gb:done1" \
  "then ran each job once: done, one attempt each"
gsql 1 "DELETE FROM mq_jobs WHERE queue IN ('ga', 'gb')"
gmq 1 push --queue ga a1 >/dev/null
gmq 1 push --queue gb b1 >/dev/null
proxy '\x03COMMIT'
run env MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" pop --queue ga,gb --claim skip-locked --count 5 --json
check "the relay lost the answer of the claim's COMMIT" test -f "$T_TMP/fired"
like "$RC:$ERR" "69:mq pop: nothing claimed: the 2 jobs its claim leased were given back: outcome unknown: cannot commit: *" \
  "mq pop --claim skip-locked, list, Galera: both jobs given back, status 69"
is "$(list_jobs)" "ga:ready0,gb:ready0" "both ready, no attempt counted"
unproxy

# An ack whose transaction a brute-force abort ends while the server
# prepares its count statement, the error lost (t308-silent-rollback;
# the relay, FP_ROLLBACK, rolls the transaction back just before that
# prepare): the count's INSERT ran alone and committed, the ack's UPDATE
# was gone, and mq ack said nothing and exited 0. A write that follows
# a prepare in a transaction on a Galera node waits for an answer that
# says the transaction is open: the ack runs again, whole.
gmq 1 push --queue sr s1 >/dev/null
r=$(gmq 1 pop --queue sr --shell | sed -n 's/^MQ_RECEIPT=//p')
unproxy
rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
FP_ROLLBACK=1 python3 "$TESTS_DIR/fault-proxy.py" "$T_TMP/proxy.sock" \
  "$G_DIR/n1/sock" '\x16INSERT INTO `mq_jobs_counts`' "$T_TMP/fired" &
PROXY=$!
i=0
while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
run env MQ_SOCKET="$T_TMP/proxy.sock" "$MQ" ack "$r"
check "the relay rolled back the ack's transaction before its count" \
  test -f "$T_TMP/fired"
is "$RC:$ERR" "0:" "mq ack: status 0, nothing on stderr"
is "$(gsql 1 "SELECT CONCAT(state, attempts) FROM mq_jobs WHERE queue = 'sr'"):$(gsql 1 "SELECT SUM(n) FROM mq_jobs_counts WHERE queue = 'sr' AND state = 'done'")" \
  "done1:1" "the job is done, and counted once"
unproxy
done_testing
