#!/bin/sh
# server.sh: a private, throw-away MariaDB for tests and the demo.
#   server.sh start DIR            install a datadir in DIR, start mariadbd
#                                  on DIR/sock (no TCP), wait until it answers
#   server.sh stop DIR             stop it and remove DIR
#   server.sh restart DIR [--crash] stop it (kill -9 with --crash) and
#                                  start it again on the same data
# Works as root (mariadbd then needs --user=root) and as an ordinary user.
# MQ_SERVER_ARGS, if set, holds more mariadbd options, split at blanks
# (so none may contain one), e.g. for TLS. With --port=N among them the
# server also listens on TCP: add --bind-address=127.0.0.1 to keep it local.
set -eu

PATH=$PATH:/usr/sbin:/usr/local/sbin
cmd=${1:?usage: server.sh start|stop|restart DIR [--crash]}
dir=${2:?usage: server.sh start|stop|restart DIR [--crash]}

as_user=
[ "$(id -u)" -eq 0 ] && as_user=--user=root

ping_server() {
  mariadb-admin --no-defaults --socket="$dir/sock" --user=root \
    --connect-timeout=2 ping >/dev/null 2>&1
}

run_server() {
  net=--skip-networking
  case " ${MQ_SERVER_ARGS:-}" in *" --port="*) net= ;; esac
  # small and quick: tests need correctness, not throughput. Its own
  # directory for the internal temporary tables, not the /tmp every
  # other server and test shares (a CI run once saw one of this
  # server's files there gone under it: "Error on delete of
  # '/tmp/#sql-temptable-...MAD' (Errcode: 2)")
  mkdir -p "$dir/tmp"
  # shellcheck disable=SC2086
  mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/sock" \
    --tmpdir="$dir/tmp" \
    $net --pid-file="$dir/pid" --log-error="$dir/error.log" \
    --innodb-buffer-pool-size=256M --innodb-log-file-size=64M \
    --max-connections=500 --default-time-zone=+00:00 $as_user ${MQ_SERVER_ARGS:-} >/dev/null 2>&1 &
  echo $! >"$dir/mariadbd.pid"
  i=0
  until ping_server; do
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 "$(cat "$dir/mariadbd.pid")" 2>/dev/null; then
      echo "server.sh: mariadbd did not start:" >&2
      tail -n 30 "$dir/error.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

stop_server() { # stop_server SIGNAL
  [ -f "$dir/mariadbd.pid" ] || return 0
  pid=$(cat "$dir/mariadbd.pid")
  kill "-$1" "$pid" 2>/dev/null || true
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  kill -9 "$pid" 2>/dev/null || true
}

case $cmd in
start)
  mkdir -p "$dir"
  # --force: skip install-db's check that the host name resolves, which
  # fails on a minimal system without /etc/hosts; we use a socket only
  # tried up to three times: under load it has failed now and then
  # (a few times a day on 2 cores, cause not found: the lines that say
  # it are kept in DIR/install-failed.log and shown if all three fail)
  tries=0
  until mariadb-install-db --no-defaults --datadir="$dir/data" $as_user \
    --auth-root-authentication-method=normal --skip-test-db \
    --skip-name-resolve --force >"$dir/install.log" 2>&1; do
    tries=$((tries + 1))
    { echo "--- try $tries"; grep -v '^$' "$dir/install.log" | head -n 40
      cat "$dir/data"/*.err 2>/dev/null | tail -n 20; } \
      >>"$dir/install-failed.log"
    if [ $tries -ge 3 ]; then
      echo "server.sh: mariadb-install-db failed:" >&2
      cat "$dir/install-failed.log" >&2
      exit 1
    fi
    rm -rf "$dir/data"
    sleep 1
  done
  run_server
  ;;
restart)
  if [ "${3:-}" = --crash ]; then stop_server KILL; else stop_server TERM; fi
  run_server
  ;;
stop)
  stop_server TERM
  rm -rf "$dir"
  ;;
*)
  echo "usage: server.sh start|stop|restart DIR [--crash]" >&2
  exit 64
  ;;
esac
