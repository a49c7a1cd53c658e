#!/bin/sh
# fleet.sh: waiters at fleet scale (issue 30), on a private server of its
# own with max_connections raised: W parked `mq pop --wait` over Q
# queues, then pushes; for each job, the time from its push's commit to
# its claim (the server's clock: created_at of the push's last row,
# leased_until minus the lease), and how long the pushes took (their
# wakeups included). Prints one line; tests/bench/bench.sh (full) makes
# its rows of it.
#   usage: sh tests/bench/fleet.sh [W] [Q] [IDLE]
# W waiters (200), Q queues (1: one push of W jobs; more: pushes of 1,
# 2, 4, ... jobs round-robin until each queue got its share), IDLE
# idle connections of another program beside them (0).
#
# FLEET_FLOOR=1: the floor, what W processes claiming at once cost this
# machine whatever wakes them: the W jobs are pushed first (W/Q to each
# queue), then W shells blocked on one FIFO are released at once, and
# each runs a plain `mq pop` (no --wait: it starts, connects and claims);
# the time from the release to each claim (the same clock: the server
# runs here). Prints `fleet-floor waiters=...`. A woken waiter is already
# started and connected, so this floor is above what W claims alone
# cost: FLEET_FLOOR=connected is the other end, W mariadb clients,
# connected first, sent mq's claim (in one round trip) at once, then
# exit (`fleet-floor-connected waiters=...`).
#
# FLEET_GALERA=1: on a private 3-node Galera cluster (tests/galera.sh, in
# FLEET_GALERA_DIR or a temporary directory; stopped at the end, also on
# failure) instead: the waiters round-robin over the three nodes, the
# pushes on node 1; the claims read on node 1 (every node has the rows;
# one machine, one clock). Prints `fleet-galera waiters=...`, with the
# nodes' certification failures and brute-force aborts meanwhile.
set -u
W=${1:-200} Q=${2:-1} IDLE=${3:-0}
FLOOR=${FLEET_FLOOR:-} GALERA=${FLEET_GALERA:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
MQ_TESTS_DIR=$top/tests
MQ_SERVER_ARGS="${MQ_SERVER_ARGS:-} --max-connections=$((W + IDLE + 100))"
export MQ_SERVER_ARGS
unset MQ_TEST_SOCKET
NODES=1
if [ -n "$GALERA" ]; then
  NODES=3
  G_DIR=${FLEET_GALERA_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mq-gal.XXXXXX")}
  g_stop() { sh "$top/tests/galera.sh" stop "$G_DIR"; }
  trap g_stop EXIT
  trap 'exit 130' INT TERM
  sh "$top/tests/galera.sh" start "$G_DIR" >&2 || {
    echo "fleet.sh: cannot start a Galera cluster in $G_DIR" >&2
    exit 1
  }
  # lib.sh then uses node 1 and starts no server of its own
  MQ_TEST_SOCKET=$G_DIR/n1/sock
fi
. "$top/tests/lib.sh"
# (lib.sh set its own trap: the cluster's stop goes with it)
[ -z "$GALERA" ] || trap 'g_stop; t_cleanup' EXIT
sock() { # sock N: node N's socket (the one server's, off Galera)
  if [ -n "$GALERA" ]; then echo "$G_DIR/n$1/sock"; else echo "$MQ_TEST_SOCKET"; fi
}
# mysqlc [-n N] ARGS...: on node N (1); on Galera after it caught up
mysqlc() {
  _n=1
  [ "$1" != -n ] || { _n=$2; shift 2; }
  if [ -n "$GALERA" ]; then
    mariadb --no-defaults --skip-ssl --socket="$(sock $_n)" --user=root -N -B \
      --init-command="SET SESSION wsrep_sync_wait = 15" "$T_DB" "$@"
  else
    mariadb --no-defaults --skip-ssl --socket="$(sock $_n)" --user=root -N -B "$T_DB" "$@"
  fi
}
# allnodes STATEMENT: its number summed over the nodes
allnodes() {
  _s=0
  for _n in $(seq 1 $NODES); do
    _s=$((_s + $(mysqlc -n "$_n" -e "$1")))
  done
  echo $_s
}
"$MQ" init >/dev/null
# every node has the table before its waiters come
[ -z "$GALERA" ] || { mysqlc -n 2 -e "SELECT 1 FROM mq_jobs LIMIT 1" && mysqlc -n 3 -e "SELECT 1 FROM mq_jobs LIMIT 1"; } >/dev/null
LEASE=600
# the claims' times, summed up in one line: LABEL, then the times in µs
# (one a line) on standard input
summary() {
  sort -n | awk -v label="$1" -v w="$W" -v q="$Q" -v i="$IDLE" -v c="$2" \
      -v p="$3" -v idle="$4" '{ v[NR] = $1 / 1000 } END {
    n = NR; printf "%s waiters=%d queues=%d idle_conns=%d claimed=%d median_ms=%.1f p90_ms=%.1f max_ms=%.1f", label,
    w, q, i, c, v[int((n + 1) / 2)], v[int(n * 0.9)], v[n]
    if (p != "") printf " push_ms=%d", p
    if (idle != "") printf " idle_stmts_per_s=%.2f", idle
    printf "\n" }'
}

if [ -n "$FLOOR" ]; then
  i=0
  while [ $i -lt "$Q" ]; do
    n=$((W / Q)); [ $i -lt $((W % Q)) ] && n=$((n + 1))
    seq 1 $n | "$MQ" push --lines --queue "f$i" >/dev/null 2>&1
    i=$((i + 1))
  done
  if [ "$FLOOR" = connected ]; then
    # W mariadb clients, connected first, each reading its claim from
    # a FIFO of its own; a writer opens them all, waits until the W
    # sessions are there, then writes the W claims one after the other
    # (each one text round trip: the per call row's of
    # tests/bench/bench.sh, mq's claim as plain SQL) and prints when it
    # began
    pids=
    i=0
    while [ $i -lt "$W" ]; do
      mkfifo "$T_TMP/c$i"
      mariadb --no-defaults --skip-ssl --socket="$MQ_TEST_SOCKET" --user=root \
        -N -B "$T_DB" <"$T_TMP/c$i" >/dev/null 2>>"$T_TMP/errs" &
      pids="$pids $!"
      i=$((i + 1))
    done
    r0=$(python3 - "$T_TMP" "$W" "$Q" "$LEASE" "$MQ_TEST_SOCKET" "$T_DB" <<'PY'
import os, subprocess, sys, time
tmp, w, q, lease, sock, db = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
fds = [os.open("%s/c%d" % (tmp, i), os.O_WRONLY) for i in range(w)]
def sessions():
    return int(subprocess.run(["mariadb", "--no-defaults", "--skip-ssl", "--socket=" + sock,
        "--user=root", "-N", "-B", "-e", "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '%s'" % db],
        capture_output=True, text=True).stdout)
for _ in range(300):
    if sessions() >= w:
        break
    time.sleep(0.2)
time.sleep(3)
claims = [("START TRANSACTION; SELECT id INTO @id FROM mq_jobs FORCE INDEX (claim) WHERE queue = 'f%d'"
    " AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6) ORDER BY priority, available_at, id"
    " LIMIT 1 FOR UPDATE SKIP LOCKED; UPDATE mq_jobs SET state = 'leased', attempts = attempts + 1,"
    " lease_token = MD5(CONCAT(RAND(), CONNECTION_ID())), leased_until = UTC_TIMESTAMP(6) + INTERVAL %s SECOND"
    " WHERE id = @id; SELECT id, payload FROM mq_jobs WHERE id = @id; COMMIT;\n" % (i % q, lease)).encode()
    for i in range(w)]
t0 = time.time_ns() // 1000
for fd, c in zip(fds, claims):
    os.write(fd, c)
    os.close(fd)
print(t0)
PY
)
    # shellcheck disable=SC2086
    wait $pids
    claimed=$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")
    mysqlc -e "SELECT ROUND(UNIX_TIMESTAMP(leased_until - INTERVAL $LEASE SECOND) * 1000000) - $r0
      FROM mq_jobs WHERE state = 'leased'" | summary fleet-floor-connected "$claimed" "" ""
    [ ! -s "$T_TMP/errs" ] || { echo "stderr of the clients:"; sort "$T_TMP/errs" | uniq -c | head -5; }
    exit 0
  fi
  mkfifo "$T_TMP/go"
  : >"$T_TMP/ready"
  pids=
  i=0
  while [ $i -lt "$W" ]; do
    # a shell that says it is there, blocks in the FIFO's open until a
    # writer opens it, then becomes the pop
    sh -c 'echo >>"$1"; : <"$2"; exec "$3" pop --queue "$4" --lease "$5" -o /dev/null' \
      sh "$T_TMP/ready" "$T_TMP/go" "$MQ" f$((i % Q)) ${LEASE}s >/dev/null 2>>"$T_TMP/errs" &
    pids="$pids $!"
    i=$((i + 1))
  done
  i=0
  until [ "$(wc -l <"$T_TMP/ready")" -ge "$W" ] || [ $i -ge 300 ]; do
    sleep 0.2; i=$((i + 1))
  done
  # into their open (and the machine quiet after W starts)
  sleep 3
  r0=$(($(date +%s%N) / 1000))
  # the writer's open releases them all; it stays open until they are
  # done, so that one late to its open (none should be) passes too
  exec 8>"$T_TMP/go"
  # shellcheck disable=SC2086
  wait $pids
  exec 8>&-
  claimed=$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")
  mysqlc -e "SELECT ROUND(UNIX_TIMESTAMP(leased_until - INTERVAL $LEASE SECOND) * 1000000) - $r0
    FROM mq_jobs WHERE state = 'leased'" | summary fleet-floor "$claimed" "" ""
  [ ! -s "$T_TMP/errs" ] || { echo "stderr of the pops:"; sort "$T_TMP/errs" | uniq -c | head -5; }
  exit 0
fi

idlers=
if [ "$IDLE" -gt 0 ]; then
  # idle sessions: connected, running nothing (a client blocked on its
  # standard input)
  mkfifo "$T_TMP/hold"
  i=0
  while [ $i -lt "$IDLE" ]; do
    mariadb --no-defaults --skip-ssl --socket="$MQ_TEST_SOCKET" --user=root \
      <"$T_TMP/hold" >/dev/null 2>&1 &
    idlers="$idlers $!"
    i=$((i + 1))
  done
  exec 9>"$T_TMP/hold"
  i=0
  until [ "$(mysqlc -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Sleep'")" -ge "$IDLE" ] ||
      [ $i -ge 300 ]; do
    sleep 0.2; i=$((i + 1))
  done
fi
pids=
i=0
while [ $i -lt "$W" ]; do
  q=f$((i % Q))
  # on Galera round-robin over the nodes
  MQ_SOCKET=$(sock $((i % NODES + 1))) \
    "$MQ" pop --queue "$q" --wait 60s --lease ${LEASE}s -o /dev/null >/dev/null 2>>"$T_TMP/errs" &
  pids="$pids $!"
  i=$((i + 1))
done
# all parked: each has its rows, and has sat through its first parks
# (on Galera every node has every node's rows)
i=0
until [ "$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs_waiters")" -ge "$W" ] ||
    [ "$(allnodes "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%SLEEP%' AND INFO NOT LIKE '%PROCESSLIST%'")" -ge "$W" ] ||
    [ $i -ge 300 ]; do
  sleep 0.2; i=$((i + 1))
done
echo "parked: $(mysqlc -e "SELECT COUNT(*) FROM mq_jobs_waiters") rows, $(allnodes "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%mq-wait%' AND INFO NOT LIKE '%PROCESSLIST%'") parked, $(allnodes "SELECT COUNT(*) FROM information_schema.PROCESSLIST") sessions" >&2
sleep 3
questions() { allnodes "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'"; }
q0=$(questions)
sleep 2
q1=$(questions)
idle=$(awk -v d="$((q1 - q0))" -v w="$W" 'BEGIN { printf "%.2f", d / 2 / w }')
gstat() { allnodes "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '$1'"; }
[ -z "$GALERA" ] || { c0=$(gstat WSREP_LOCAL_CERT_FAILURES); b0=$(gstat WSREP_LOCAL_BF_ABORTS); }
k=0 size=1
p0=$(date +%s%N)
if [ "$Q" -eq 1 ]; then
  seq 1 "$W" | "$MQ" push --lines --queue f0 >/dev/null 2>&1
else
  while [ $k -lt "$W" ]; do
    for q in $(seq 0 $((Q - 1))); do
      left=$((W / Q - $(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'f$q'")))
      n=$size; [ $n -gt $left ] && n=$left
      [ $n -gt 0 ] || continue
      seq 1 $n | "$MQ" push --lines --queue "f$q" >/dev/null 2>&1
      k=$((k + n))
      sleep 0.2
    done
    size=$((size * 2))
  done
fi
push_ms=$((($(date +%s%N) - p0) / 1000000))
# shellcheck disable=SC2086
wait $pids
# per job: its claim after its push's commit (the last row of its
# batch: one transaction, rows of one created_at order)
mysqlc -e "SELECT TIMESTAMPDIFF(MICROSECOND, (SELECT MAX(b.created_at) FROM mq_jobs b WHERE b.queue = j.queue AND b.created_at <= j.created_at + INTERVAL 0.05 SECOND AND b.created_at >= j.created_at - INTERVAL 0.05 SECOND), j.leased_until - INTERVAL $LEASE SECOND) FROM mq_jobs j" >"$T_TMP/lat"
claimed=$(mysqlc -e "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")
label=fleet
[ -z "$GALERA" ] || label=fleet-galera
if [ -n "$GALERA" ]; then
  # the claims' conflicts between nodes (certification failures, each
  # retried in mq) and the brute-force aborts (the wakeups of the other
  # nodes' waiters among them), summed over the nodes
  summary $label "$claimed" "$push_ms" "$idle" <"$T_TMP/lat" |
    sed "s/\$/ cert_failures=$(($(gstat WSREP_LOCAL_CERT_FAILURES) - c0)) bf_aborts=$(($(gstat WSREP_LOCAL_BF_ABORTS) - b0))/"
else
  summary $label "$claimed" "$push_ms" "$idle" <"$T_TMP/lat"
fi
[ ! -s "$T_TMP/errs" ] || { echo "stderr of the waiters:"; sort "$T_TMP/errs" | uniq -c | head -5; }
exec 9>&-
# shellcheck disable=SC2086
[ -z "$idlers" ] || wait $idlers
exit 0
