#!/bin/sh
# galera.sh: a private, throw-away 3-node MariaDB Galera cluster on this
# machine, for tests and benchmarks.
#   galera.sh start DIR          three nodes in DIR/n1..n3, sockets
#                                DIR/n1/sock..DIR/n3/sock, replicating
#                                on 127.0.0.1 only; waits until all three
#                                are synced
#   galera.sh stop DIR           stop them all and remove DIR
#   galera.sh kill DIR N         kill -9 node N's server (a crash)
#   galera.sh rejoin DIR N       start node N again; waits until synced
#   galera.sh bootstrap DIR N    start node N (down) as the primary
#                                component from its own data, when no
#                                node is one (an operator's recovery after
#                                the nodes crashed, or were cut off,
#                                together: run it on the node that has
#                                committed most); waits until synced
#   galera.sh recovered DIR N    node N (down) its recovered position:
#                                the last write set its data holds
#                                (mariadbd --wsrep-recover), a seqno;
#                                after the whole cluster crashed, the
#                                node to bootstrap is the one with most
#   galera.sh status DIR N       node N's wsrep_local_state_comment
#   galera.sh missing            what a cluster needs that is not here,
#                                one a line (nothing: all there)
# Ports: DIR/base holds a free base port P (20000-32000); node N uses P+10N (group
# communication), +1 (IST), +2 (SST) and +3 (clients, 127.0.0.1).
# Needs Debian's galera-4 and rsync, and the SST scripts that ship only
# in mariadb-server: tests/deps.sh takes them out of that package into
# .deps/bin without installing its service. Works as root and as an
# ordinary user.
set -eu

PATH=$PATH:/usr/sbin:/usr/local/sbin
top=$(cd "$(dirname "$0")/.." && pwd)
PATH=$top/.deps/bin:$PATH
export PATH
usage="usage: galera.sh start|stop|kill|rejoin|bootstrap|recovered|status DIR [N] | missing"
cmd=${1:?$usage}
provider=/usr/lib/galera/libgalera_smm.so

# what is not here: the provider (galera-4), rsync, and the SST scripts
# (downloaded by tests/deps.sh: a build without network has none, and
# the Galera tests skip)
missing() {
  [ -e "$provider" ] || echo "$provider (galera-4)"
  command -v rsync >/dev/null 2>&1 || echo "rsync"
  for f in wsrep_sst_rsync wsrep_sst_common; do
    command -v $f >/dev/null 2>&1 || echo "$f (tests/deps.sh takes it out of mariadb-server)"
  done
}
if [ "$cmd" = missing ]; then
  missing
  exit 0
fi
dir=${2:?$usage}

as_user=
[ "$(id -u)" -eq 0 ] && as_user=--user=root

port_free() { # port_free PORT
  ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .
}

pick_base() {
  i=0
  while [ $i -lt 50 ]; do
    # a random base in 20000..32000, below the kernel's ephemeral ports
    # (from 32768): an outgoing connection cannot take a node's port
    # before it binds it; every port of the three nodes free
    base=$(( ($(od -An -N2 -tu2 /dev/urandom) % 1200) * 10 + 20000 ))
    ok=1
    for n in 1 2 3; do
      for k in 0 1 2 3; do
        port_free $((base + 10 * n + k)) || ok=0
      done
    done
    [ $ok -eq 1 ] && { echo "$base"; return 0; }
    i=$((i + 1))
  done
  echo "galera.sh: no free ports" >&2
  exit 1
}

sql_node() { # sql_node N STATEMENT
  mariadb --no-defaults --socket="$dir/n$1/sock" --user=root \
    --connect-timeout=2 -N -B -e "$2" 2>/dev/null
}

node_state() { # node_state N: Synced, Donor/Desynced, Joining, ...
  sql_node "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" |
    cut -f2
}

run_node() { # run_node N [--wsrep-new-cluster]
  n=$1
  shift
  base=$(cat "$dir/base")
  addr="gcomm://127.0.0.1:$((base + 10)),127.0.0.1:$((base + 20)),127.0.0.1:$((base + 30))"
  p=$((base + 10 * n))
  nd=$dir/n$n
  # rsync's daemon, started as root, drops to nobody before it writes
  # the joiner's datadir: let nobody reach and write it (mariadbd runs
  # as root and reads it all the same); again at a rejoin, for the
  # files mariadbd made since
  if [ -n "$as_user" ]; then
    chmod 711 "$dir"
    chown -R nobody "$nd/data"
  fi
  # shellcheck disable=SC2086
  mariadbd --no-defaults --datadir="$nd/data" --socket="$nd/sock" \
    --port=$((p + 3)) --bind-address=127.0.0.1 \
    --pid-file="$nd/pid" --log-error="$nd/error.log" \
    --innodb-buffer-pool-size=128M --innodb-log-file-size=48M \
    --max-connections=300 --default-time-zone=+00:00 \
    --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
    --wsrep-on=ON --wsrep-provider=$provider \
    --wsrep-cluster-name=mq-test --wsrep-node-name=node$n \
    --wsrep-cluster-address="$addr" --wsrep-node-address=127.0.0.1:$p \
    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$p;ist.recv_addr=127.0.0.1:$((p + 1));gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S" \
    --wsrep-sst-method=rsync --wsrep-sst-receive-address=127.0.0.1:$((p + 2)) \
    $as_user "$@" ${MQ_SERVER_ARGS:-} >/dev/null 2>&1 &
  echo $! >"$nd/mariadbd.pid"
}

wait_synced() { # wait_synced N
  i=0
  until [ "$(node_state "$1")" = Synced ]; do
    i=$((i + 1))
    if [ $i -gt 1200 ] || ! kill -0 "$(cat "$dir/n$1/mariadbd.pid")" 2>/dev/null; then
      echo "galera.sh: node $1 did not reach Synced:" >&2
      tail -n 30 "$dir/n$1/error.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

stop_node() { # stop_node N SIGNAL
  f=$dir/n$1/mariadbd.pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  kill "-$2" "$pid" 2>/dev/null || true
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

case $cmd in
start)
  mkdir -p "$dir/n1" "$dir/n2" "$dir/n3"
  m=$(missing)
  if [ -n "$m" ]; then
    echo "galera.sh: missing $(echo "$m" | paste -sd, - | sed 's/,/, /g'): run tests/deps.sh" >&2
    exit 1
  fi
  pick_base >"$dir/base"
  mariadb-install-db --no-defaults --datadir="$dir/n1/data" $as_user \
    --auth-root-authentication-method=normal --skip-test-db \
    --skip-name-resolve --force >"$dir/install.log" 2>&1 || {
    echo "galera.sh: mariadb-install-db failed:" >&2
    tail -n 30 "$dir/install.log" >&2
    exit 1
  }
  # Node 1 starts the cluster once and stops cleanly: its datadir then
  # holds the cluster's state (grastate.dat), and the joiners start
  # from copies of it, so that they need no state transfer. (An rsync
  # SST from node 1 at every start made it a donor under FLUSH TABLES
  # WITH READ LOCK, and once it lost the group meanwhile and stayed
  # Donor/Desynced, refusing clients, for good.)
  run_node 1 --wsrep-new-cluster
  wait_synced 1
  stop_node 1 TERM
  cp -a "$dir/n1/data" "$dir/n2/data"
  cp -a "$dir/n1/data" "$dir/n3/data"
  run_node 1 --wsrep-new-cluster
  wait_synced 1
  run_node 2
  wait_synced 2
  run_node 3
  wait_synced 3
  wait_synced 1
  ;;
stop)
  for n in 3 2 1; do stop_node $n TERM; done
  rm -rf "$dir"
  ;;
kill)
  stop_node "${3:?$usage}" KILL
  ;;
rejoin)
  if [ -n "$(node_state "${3:?$usage}")" ]; then
    echo "galera.sh: node $3 is running" >&2
    exit 1
  fi
  run_node "$3"
  wait_synced "$3"
  ;;
bootstrap)
  if [ -n "$(node_state "${3:?$usage}")" ]; then
    echo "galera.sh: node $3 is running" >&2
    exit 1
  fi
  # Galera refuses a new cluster from a node that did not stop last and
  # cleanly unless told that it is safe: the caller chose this node
  sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 1/' "$dir/n$3/data/grastate.dat"
  run_node "$3" --wsrep-new-cluster
  wait_synced "$3"
  ;;
recovered)
  if [ -n "$(node_state "${3:?$usage}")" ]; then
    echo "galera.sh: node $3 is running" >&2
    exit 1
  fi
  nd=$dir/n$3
  rm -f "$nd/recover.log"
  [ -z "$as_user" ] || chown -R nobody "$nd/data"
  # shellcheck disable=SC2086
  mariadbd --no-defaults --datadir="$nd/data" --socket="$nd/recover.sock" \
    --skip-networking --log-error="$nd/recover.log" \
    --innodb-buffer-pool-size=128M --innodb-log-file-size=48M \
    --binlog-format=ROW --wsrep-on=ON --wsrep-provider=$provider \
    --wsrep-cluster-address="gcomm://127.0.0.1:$(( $(cat "$dir/base") + 10 * $3 ))" \
    --wsrep-recover $as_user ${MQ_SERVER_ARGS:-} >/dev/null 2>&1 || :
  pos=$(sed -n 's/.*WSREP: Recovered position: *[^:]*:\(-\{0,1\}[0-9][0-9]*\).*/\1/p' \
    "$nd/recover.log" | tail -n 1)
  if [ -z "$pos" ]; then
    echo "galera.sh: node $3: no recovered position:" >&2
    tail -n 20 "$nd/recover.log" >&2
    exit 1
  fi
  echo "$pos"
  ;;
status)
  node_state "${3:?$usage}"
  ;;
*)
  echo "$usage" >&2
  exit 64
  ;;
esac
