#!/bin/sh
# galera-faults.sh: a fault-injection run on the 3-node cluster of
# tests/galera.sh, in the manner of Jepsen (FAULTS in mq-galera(7)).
#   galera-faults.sh DIR OUT     the cluster in DIR (started, all Synced),
#                                the run's logs and tables into OUT (made)
# A workload runs on all three nodes: producers (mq push, some with
# --dedup, every printed id and exit status logged), consumers of both
# claim strategies (pop/ack loops, mq work), a reaper (mq requeue-stale),
# while a seeded scheduler injects faults one after another: kill -9 of
# one node (then its rejoin), of two nodes within a second (the survivor,
# left without quorum, is bootstrapped, the two rejoin), SIGSTOP of a
# node past the suspect timeout then SIGCONT, isolation of a node
# (gmcast.isolate) then its heal, and (asked for only) kill -9 of all
# three within a second, the whole cluster's crash, after which the node
# whose data holds most is bootstrapped and the others rejoin it. Then
# it settles (all nodes Synced, the queue drained, consumers stopped, a
# last requeue-stale) and dumps the tables; tests/galera-check.py OUT
# decides.
# Every execution of a job logs a start and an end line (job, attempt,
# node, monotonic times, pid, receipt token, ack status) to its
# process's log, appended (O_APPEND, lines under PIPE_BUF).
# Environment:
#   MQ_FAULT_SEED=N       the seed (printed; the same seed replays the
#                         same schedule: faults, nodes, gaps, durations)
#   MQ_FAULT_FAULTS=LIST  kinds, in the seed's order: kill1,kill2,stop,
#                         isolate (default: these four once each), kill3
#                         (the whole cluster; not by default); with
#   MQ_FAULT_SECONDS=S    faults of kinds drawn from LIST go on until S
#                         seconds have passed (default: the list once)
#   MQ_FAULT_JOBS=N       jobs pushed (default 300), over the faults
#   MQ_FAULT_STOP_MS=M    how long a SIGSTOP lasts (default: 3500-5000,
#                         drawn; the suspect timeout is 3 s)
#   MQ_FAULT_LEASE=D      mq work's --lease (default 4s: a stopped node
#                         outlasts it)
#   MQ_FAULT_JOB_MS=M     a job runs up to M ms (default 400)
#   MQ_FAULT_NODE=N       every fault on node N (kill2: and another)
#   MQ_FAULT_FLUSH=V      innodb_flush_log_at_trx_commit on every node
#                         for the run (restarts too), 1 again after it:
#                         what a crash loses with each setting
#   MQ_DATABASE           the database (default mq_faults; made anew)
#   MQ                    the mq binary (default build/cmd/mq)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: galera-faults.sh DIR OUT}
out=${2:?usage: galera-faults.sh DIR OUT}
MQ=${MQ:-$top/build/cmd/mq}
CLOCK=${MQ_FAULT_CLOCK:-$top/build/tests/mq-test-clock}
[ -x "$CLOCK" ] || ninja -C "$top/build" tests/mq-test-clock >/dev/null ||
  { echo "galera-faults.sh: no $CLOCK" >&2; exit 1; }
SEED=${MQ_FAULT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
KINDS=${MQ_FAULT_FAULTS:-kill1,kill2,stop,isolate}
DURATION=${MQ_FAULT_SECONDS:-0}
JOBS=${MQ_FAULT_JOBS:-300}
LEASE=${MQ_FAULT_LEASE:-4s}
JOBMS=${MQ_FAULT_JOB_MS:-400}
export MQ_DATABASE=${MQ_DATABASE:-mq_faults}
export MQ_SOCKET='' MQ_USER=root MQ_CLOCK=$CLOCK
unset MQ_HOST MQ_QUEUE MQ_TABLE
mkdir -p "$out"
FLUSH=${MQ_FAULT_FLUSH:-}
case $FLUSH in ''|0|1|2) ;; *) echo "galera-faults.sh: MQ_FAULT_FLUSH: 0, 1 or 2" >&2; exit 64 ;; esac
# the nodes restarted by the run keep the setting
[ -z "$FLUSH" ] || export MQ_SERVER_ARGS="${MQ_SERVER_ARGS:-} --innodb-flush-log-at-trx-commit=$FLUSH"
base=$(cat "$dir/base")
P1=$((base + 13)) P2=$((base + 23)) P3=$((base + 33))
H1=127.0.0.1:$P1 H2=127.0.0.1:$P2 H3=127.0.0.1:$P3
echo "# galera-faults: seed $SEED (MQ_FAULT_SEED=$SEED replays it); faults $KINDS${DURATION:+ for ${DURATION}s}; $JOBS jobs" >&2
echo "$SEED" >"$out/seed"
now() { "$CLOCK"; }
T0=$(now)
flog() { echo "F $(now) $*" >>"$out/faults.log"; echo "# $(( ($(now) - T0) / 1000000 )) ms: $*" >&2; }

nsql() { # nsql N STATEMENT: node N as it is (no wait for the cluster)
  mariadb --no-defaults --socket="$dir/n$1/sock" --user=root \
    --connect-timeout=2 -N -B -e "$2" 2>/dev/null
}
state() { nsql "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2; }
prim() { nsql "$1" "SHOW STATUS LIKE 'wsrep_cluster_status'" | cut -f2; }
alive() { kill -0 "$(cat "$dir/n$1/mariadbd.pid" 2>/dev/null)" 2>/dev/null; }
gal() { sh "$top/tests/galera.sh" "$@" >>"$out/galera.log" 2>&1; }
# synced N [TENTHS]: wait until node N is Synced in the primary component
synced() {
  _i=0
  while [ "$(state "$1")" != Synced ] || [ "$(prim "$1")" != Primary ]; do
    _i=$((_i + 1))
    [ $_i -gt "${2:-600}" ] && return 1
    sleep 0.1
  done
}
size() { nsql "$1" "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2; }
# all_back: the three nodes Synced in one primary component of three (a
# node resumed or healed first says Synced in the view it had: its
# eviction comes after); when no node is in a primary component, one is
# made (bootstrap); a node that cannot get there is restarted
all_back() {
  sleep 1
  _j=0
  while [ $_j -lt 40 ]; do
    _ok=0
    for _n in 1 2 3; do
      [ "$(state $_n)" = Synced ] && [ "$(prim $_n)" = Primary ] &&
        [ "$(size $_n)" = 3 ] && _ok=$((_ok + 1))
    done
    [ $_ok = 3 ] && return 0
    [ $_j = 20 ] && bootstrap_if_none
    sleep 1
    _j=$((_j + 1))
  done
  bootstrap_if_none
  for _n in 1 2 3; do
    { synced $_n 200 && [ "$(size $_n)" = 3 ]; } || recover $_n
  done
}
# bootstrap_if_none: no node in a primary component (the survivors of a
# crash, or Galera's own failure: a node whose group communication threw
# and closed, the others left without quorum): the node that committed
# most (wsrep_last_committed) is made the primary component, as an
# operator would: pc.bootstrap where it still talks to the group, else
# restarted as a new cluster. Another choice would drop what it alone
# committed (seen: a run where node 1 had committed 5 write sets more
# than the two others when its group communication failed).
bootstrap_if_none() {
  _best='' _lc=-1
  for _n in 1 2 3; do
    [ "$(prim $_n)" = Primary ] && return 0
    _c=$(nsql $_n "SHOW STATUS LIKE 'wsrep_last_committed'" | cut -f2)
    if [ -n "$_c" ] && [ "$_c" -gt "$_lc" ]; then _best=$_n _lc=$_c; fi
  done
  [ -n "$_best" ] || { flog "note no node answers"; return 1; }
  flog "note no primary component: node $_best has committed most ($_lc; $(for _n in 1 2 3; do printf 'node %s %s %s, ' $_n "$(prim $_n)" "$(nsql $_n "SHOW STATUS LIKE 'wsrep_last_committed'" | cut -f2)"; done))"
  if [ "$(prim $_best)" = Disconnected ]; then
    gal kill "$dir" "$_best"
    gal bootstrap "$dir" "$_best"
    flog "note node $_best restarted as a new primary component"
  else
    nsql $_best "SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'"
    flog "note node $_best bootstrapped (pc.bootstrap)"
  fi
}
# recover N: node N back, Synced; restarted if it cannot get there
recover() {
  if alive "$1" && synced "$1"; then return 0; fi
  flog "note node $1 not Synced: killed and restarted"
  gal kill "$dir" "$1"
  gal rejoin "$dir" "$1" || { flog "note node $1 did not rejoin"; return 1; }
}

# ---- the schedule: one line per fault, drawn from the seed
#   KIND NODE NODE2 GAP_MS HOLD_MS
awk -v seed="$SEED" -v kinds="$KINDS" -v dur="$DURATION" \
    -v stopms="${MQ_FAULT_STOP_MS:-}" -v node="${MQ_FAULT_NODE:-}" 'BEGIN {
  srand(seed); nk = split(kinds, k, ",")
  # the list once, shuffled; with a duration, 200 drawn (enough)
  for (i = nk; i > 1; i--) { j = int(rand() * i) + 1; t = k[i]; k[i] = k[j]; k[j] = t }
  n = dur > 0 ? 200 : nk
  for (i = 1; i <= n; i++) {
    kind = dur > 0 && i > nk ? k[int(rand() * nk) + 1] : k[i]
    a = int(rand() * 3) + 1; b = (a + int(rand() * 2)) % 3 + 1
    if (node != "") { a = node; b = (a + int(rand() * 2)) % 3 + 1 }
    gap = 2000 + int(rand() * 4000)
    if (kind == "stop") hold = stopms != "" ? stopms : 3500 + int(rand() * 1500)
    else if (kind == "isolate") hold = 4000 + int(rand() * 4000)
    else if (kind == "kill2" || kind == "kill3") hold = int(rand() * 900)   # between the kills
    else hold = 1000 + int(rand() * 3000)                # down before rejoin
    print kind, a, b, gap, hold
  }
}' >"$out/schedule"

# ---- the workload
: >"$out/faults.log"
rm -f "$out/stop"
# a database of the run's own, made anew: jobs left by another run
# would come from no push of this one
# the setting back to 1 however the run ends: a cluster shared with
# other tests must not keep a lossy one
restore_flush() {
  for n in 1 2 3; do
    nsql $n "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
  done
}
[ -z "$FLUSH" ] || {
  trap restore_flush EXIT
  trap 'exit 130' INT TERM
  for n in 1 2 3; do
    nsql $n "SET GLOBAL innodb_flush_log_at_trx_commit = $FLUSH"
  done
}
nsql 1 "DROP DATABASE IF EXISTS \`$MQ_DATABASE\`; CREATE DATABASE \`$MQ_DATABASE\`"
"$MQ" init --host "$H1,$H2,$H3" >"$out/init.out" 2>&1 || {
  echo "galera-faults.sh: mq init failed: $(cat "$out/init.out")" >&2; exit 1; }
for n in 1 2 3; do
  echo "node$n $(nsql $n "SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog, @@log_bin, @@wsrep_sync_wait" | tr '\t' ' ')"
done >"$out/settings"
# the lists of hosts, each consumer its own order (spread over nodes)
L1=$H1,$H2,$H3 L2=$H2,$H3,$H1 L3=$H3,$H1,$H2
WORK=$(( DURATION > 0 ? DURATION : 40 ))

# producer NAME LIST: JOBS/2 pushes over the run; every 5th with a key,
# every 10th twice with the same key; every push logged:
#   P NAME SEQ KEY STATUS ID T0 T1 PAYLOAD
producer() {
  _n=$(( JOBS / 2 )) _i=0 _pause=$(awk -v w="$WORK" -v n="$_n" 'BEGIN { printf "%.3f", w / n / 1.5 }')
  while [ $_i -lt $_n ]; do
    _i=$((_i + 1)) _key=- _try=0
    [ $((_i % 5)) = 0 ] && _key=k$1-$_i
    while :; do
      _try=$((_try + 1)) _pl=$1-$_i-$_try _t0=$(now)
      if [ "$_key" = - ]; then
        _id=$("$MQ" push --host "$2" --queue fq "$_pl" 2>>"$out/$1.err"); _st=$?
      else
        _id=$("$MQ" push --host "$2" --queue fq --dedup "$_key" "$_pl" 2>>"$out/$1.err"); _st=$?
      fi
      echo "P $1 $_i $_key $_st ${_id:--} $_t0 $(now) $_pl" >>"$out/$1.log"
      # refused (no quorum, no node): pushed again, a new payload; an
      # unknown outcome (3) is not repeated (it may be in)
      case $_st in 0|3) break ;; esac
      [ $_try -ge 40 ] && break
      sleep 0.5
    done
    if [ "$_key" != - ] && [ $((_i % 10)) = 0 ]; then
      _t0=$(now)
      _id=$("$MQ" push --host "$2" --queue fq --dedup "$_key" "$1-$_i-dup" 2>>"$out/$1.err"); _st=$?
      echo "P $1 $_i $_key $_st ${_id:--} $_t0 $(now) $1-$_i-dup" >>"$out/$1.log"
    fi
    sleep "$_pause"
  done
}

# poploop NAME CLAIM H1 H2 H3: mq pop --wait / mq ack on one node at a
# time (so that the node of each claim is known), moving to the next when
# it fails; each execution logged:
#   S NAME ID ATTEMPT PORT T0 PID TOKEN
#   E NAME ID ATTEMPT PORT T0 T1 PID TOKEN ACKSTATUSES
poploop() {
  _name=$1 _claim=$2 _nodes="$3 $4 $5"
  _cur=1
  while :; do
    _h=$(echo "$_nodes" | cut -d' ' -f$_cur)
    _out=$("$MQ" pop --host "$_h" --queue fq --wait 2s --lease 10s \
      --claim "$_claim" --shell 2>>"$out/$_name.err")
    _st=$?
    case $_st in
    0) ;;
    1) [ -e "$out/stop" ] && return 0; continue ;;
    *) _cur=$((_cur % 3 + 1)); sleep 0.2; continue ;;
    esac
    eval "$_out"
    _t0=$(now)
    echo "S $_name $MQ_ID $MQ_ATTEMPT ${_h##*:} $_t0 $$ ${MQ_RECEIPT#*.}" >>"$out/$_name.log"
    _ms=$(( (MQ_ID * 7919) % JOBMS + 50 ))
    sleep "$((_ms / 1000)).$(printf %03d $((_ms % 1000)))"
    _t1=$(now) _acks='' _k=0 _ah=$_cur
    while [ $_k -lt 12 ]; do
      _a=$(echo "$_nodes" | cut -d' ' -f$_ah)
      "$MQ" ack --host "$_a" "$MQ_RECEIPT" 2>>"$out/$_name.err"
      _as=$?
      _acks=$_acks${_acks:+,}$_as@${_a##*:}
      case $_as in 0|2) break ;; esac
      # not reached, refused by a node out of the primary component, or
      # unknown: the receipt is good on any node
      _ah=$((_ah % 3 + 1)) _k=$((_k + 1))
      sleep 0.5
    done
    echo "E $_name $MQ_ID $MQ_ATTEMPT ${_h##*:} $_t0 $_t1 $$ ${MQ_RECEIPT#*.} $_acks" >>"$out/$_name.log"
  done
}

# the command of mq work: logs, sleeps, logs. The node: the peer port of
# the worker's (its parent's) connections to the cluster.
cat >"$out/job.sh" <<'EOF'
#!/bin/sh
log=$1 name=$2 ports=$3 jobms=$4
port=$(ss -Htnp state established 2>/dev/null | grep "pid=$PPID," |
  awk -v p="$ports" '{ n = split($4, a, ":"); if (index(p, "," a[n] ",")) s[a[n]] = 1 }
    END { for (k in s) o = o (o == "" ? "" : "+") k; print (o == "" ? "?" : o) }')
t0=$("$MQ_CLOCK")
tok=${MQ_RECEIPT#*.}
echo "S $name $MQ_ID $MQ_ATTEMPT $port $t0 $$ $tok" >>"$log"
trap 'echo "E $name $MQ_ID $MQ_ATTEMPT $port $t0 $("$MQ_CLOCK") $$ $tok killed" >>"$log"; exit 143' TERM
ms=$(( (MQ_ID * 7919) % jobms + 50 ))
sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))" &
wait $!
echo "E $name $MQ_ID $MQ_ATTEMPT $port $t0 $("$MQ_CLOCK") $$ $tok exit0" >>"$log"
EOF
# worker NAME CLAIM LIST: mq work, started again if it exits before the end
worker() {
  while [ ! -e "$out/stop" ]; do
    "$MQ" work --host "$3" --queue fq --lease "$LEASE" --concurrency 2 \
      --claim "$2" -- sh "$out/job.sh" "$out/$1.log" "$1" ",$P1,$P2,$P3," "$JOBMS" \
      2>>"$out/$1.err" &
    echo $! >"$out/$1.pid"
    wait $!
    echo "X $1 exit $? $(now)" >>"$out/$1.log"
    sleep 0.5
  done
}
reaper() {
  while [ ! -e "$out/stop" ]; do
    "$MQ" requeue-stale --host "$L1" >>"$out/reaper.out" 2>>"$out/reaper.err"
    sleep 2
  done
}

pids=
producer p1 "$L1" & pp1=$!
producer p2 "$L2" & pp2=$!
poploop c1 skip-locked "$H1" "$H2" "$H3" & pids="$pids $!"
poploop c2 update "$H2" "$H3" "$H1" & pids="$pids $!"
worker w1 skip-locked "$L3" & pids="$pids $!"
worker w2 update "$L2" & pids="$pids $!"
reaper & rpid=$!

# ---- the faults, one after another
tend=$(( T0 + DURATION * 1000000000 ))
while read -r kind a b gap hold; do
  sleep "$(awk -v g="$gap" 'BEGIN { printf "%.3f", g / 1000 }')"
  [ "$DURATION" -gt 0 ] && [ "$(now)" -gt "$tend" ] && break
  case $kind in
  kill1)
    flog "kill1 $a begin"
    gal kill "$dir" "$a"
    sleep "$(awk -v h="$hold" 'BEGIN { printf "%.3f", h / 1000 }')"
    gal rejoin "$dir" "$a" || recover "$a"
    flog "kill1 $a end"
    ;;
  kill2)
    c=$(( 6 - a - b ))
    flog "kill2 $a $b begin"
    kill -9 "$(cat "$dir/n$a/mariadbd.pid")"
    sleep "$(awk -v h="$hold" 'BEGIN { printf "%.3f", h / 1000 }')"
    kill -9 "$(cat "$dir/n$b/mariadbd.pid")"
    gal kill "$dir" "$a"; gal kill "$dir" "$b"
    flog "kill2 $a $b killed ($hold ms apart)"
    # the survivor loses quorum (1 of 3): non-Primary, it refuses
    # writes; it is made the primary component again (the operator's
    # pc.bootstrap), the two rejoin it by IST
    i=0
    while [ "$(prim $c)" = Primary ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
    flog "note node $c: $(prim $c)"
    bootstrap_if_none
    synced $c 300 || recover $c
    gal rejoin "$dir" "$a" || recover "$a"
    gal rejoin "$dir" "$b" || recover "$b"
    flog "kill2 $a $b end"
    ;;
  kill3)
    # the whole cluster crashes (Jepsen's coordinated crash): node a,
    # then the two others, all within a second; what each node's data
    # holds is what its last flushed commit left
    c=$(( 6 - a - b ))
    flog "kill3 $a $b $c begin"
    kill -9 "$(cat "$dir/n$a/mariadbd.pid")"
    sleep "$(awk -v h="$hold" 'BEGIN { printf "%.3f", h / 1000 }')"
    kill -9 "$(cat "$dir/n$b/mariadbd.pid")" "$(cat "$dir/n$c/mariadbd.pid")"
    for n in 1 2 3; do gal kill "$dir" $n; done
    flog "kill3 $a $b $c killed ($hold ms apart)"
    # the operator's recovery: each node's recovered position; the one
    # that holds most starts a new primary component, the others join it
    best='' lc=-2 seqs=''
    for n in 1 2 3; do
      _pos=$(sh "$top/tests/galera.sh" recovered "$dir" $n 2>>"$out/galera.log")
      seqs="$seqs${seqs:+, }node $n ${_pos:-?}"
      if [ -n "$_pos" ] && [ "$_pos" -gt "$lc" ]; then best=$n lc=$_pos; fi
    done
    [ -n "$best" ] || best=$a
    flog "note recovered positions: $seqs; node $best bootstrapped"
    # (no primary component to rejoin if it fails: bootstrapped again)
    gal bootstrap "$dir" "$best" ||
      { gal kill "$dir" "$best"; gal bootstrap "$dir" "$best"; } ||
      flog "note node $best did not start a primary component"
    for n in 1 2 3; do
      [ $n = "$best" ] || gal rejoin "$dir" $n || recover $n
    done
    flog "kill3 $a $b $c end"
    ;;
  stop)
    flog "stop $a begin ($hold ms)"
    kill -STOP "$(cat "$dir/n$a/mariadbd.pid")"
    sleep "$(awk -v h="$hold" 'BEGIN { printf "%.3f", h / 1000 }')"
    kill -CONT "$(cat "$dir/n$a/mariadbd.pid")"
    flog "stop $a cont"
    all_back
    flog "stop $a end"
    ;;
  isolate)
    flog "isolate $a begin ($hold ms)"
    nsql "$a" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate = 1'"
    sleep "$(awk -v h="$hold" 'BEGIN { printf "%.3f", h / 1000 }')"
    nsql "$a" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate = 0'"
    flog "isolate $a healed"
    all_back
    flog "isolate $a end"
    ;;
  esac
  # every node back before the next fault
  all_back
done <"$out/schedule"
flog "faults over"

# ---- settle: producers done, all nodes Synced, the queue drained
wait $pp1 $pp2
all_back
flog "settle: all nodes Synced"
left() {
  mariadb --no-defaults --socket="$dir/n1/sock" --user=root -N -B "$MQ_DATABASE" \
    -e "SET SESSION wsrep_sync_wait = 15; SELECT COUNT(*) FROM mq_jobs WHERE queue = 'fq' AND state IN ('ready', 'leased')" 2>/dev/null
}
i=0
while [ "$(left)" != 0 ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
flog "settle: $(left) jobs left after ${i}s"
touch "$out/stop"
for w in w1 w2; do kill -TERM "$(cat "$out/$w.pid")" 2>/dev/null; done
kill "$rpid" 2>/dev/null
# shellcheck disable=SC2086
wait $pids
wait "$rpid" 2>/dev/null
# the leases of the run's claims are 10 s at most: a reaper run after
# they all ended
sleep 1
"$MQ" requeue-stale --host "$L1" >>"$out/reaper.out" 2>>"$out/reaper.err"
echo "R $(now) $(nsql 1 "SELECT UTC_TIMESTAMP(6)")" >"$out/reaped"
flog "settle: consumers stopped, requeue-stale run"

# ---- the tables (node 1, caught up), and each node's digest of them
q() {
  mariadb --no-defaults --socket="$dir/n$1/sock" --user=root -N -B "$MQ_DATABASE" \
    -e "SET SESSION wsrep_sync_wait = 15; $2"
}
q 1 "SELECT id, state, attempts, COALESCE(lease_token, '-'), COALESCE(leased_until, '-'),
  COALESCE(CAST(dedup_key AS CHAR), '-'), CAST(payload AS CHAR) FROM mq_jobs WHERE queue = 'fq' ORDER BY id" |
  tr ' ' _ >"$out/jobs.tsv"
q 1 "SELECT id, state, attempts, COALESCE(lease_token, '-'), '-',
  COALESCE(CAST(dedup_key AS CHAR), '-'), CAST(payload AS CHAR) FROM mq_jobs_archive WHERE queue = 'fq' ORDER BY id" |
  tr ' ' _ >"$out/archive.tsv"
q 1 "SELECT job_id, seq, event, state, attempt, COALESCE(worker, '-'), at FROM mq_jobs_history ORDER BY seq" |
  tr ' ' _ >"$out/history.tsv"
q 1 "SELECT state, SUM(n) FROM mq_jobs_counts WHERE queue = 'fq' GROUP BY state" >"$out/counts.tsv"
"$MQ" stats --host "$H1" --json >"$out/stats.json" 2>>"$out/stats.err"
for n in 1 2 3; do
  echo "node$n $(q $n "SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(' ', id, state, attempts, lease_token))), 0) FROM mq_jobs")"
done >"$out/digests"
flog "done"
