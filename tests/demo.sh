#!/bin/sh
# demo.sh: from a fresh Debian 12 checkout to a running queue: installs
# what is missing, builds, starts a private MariaDB in a temporary
# directory, pushes 1,000 jobs, lets 4 consumers drain them in parallel,
# prints what happened, and stops the server again.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh tests/deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build >/dev/null
PATH=$top/build/cmd:$PATH

srv=$(mktemp -d "${TMPDIR:-/tmp}/mq-demo.XXXXXX")
trap 'sh tests/server.sh stop "$srv"' EXIT
trap 'exit 130' INT TERM
echo "== starting a private MariaDB in $srv"
sh tests/server.sh start "$srv"
mariadb --no-defaults --socket="$srv/sock" --user=root \
  -e 'CREATE DATABASE demo'
: >"$srv/empty.cnf"
export MQ_DEFAULTS_FILE="$srv/empty.cnf" MQ_SOCKET="$srv/sock" \
  MQ_USER=root MQ_DATABASE=demo

echo "== mq init"
mq init

echo "== producer: mq push --lines (1,000 jobs)"
start=$(date +%s.%N)
seq 1 1000 | sed 's/^/resize image-/' | mq push --lines --queue images |
  tail -n 1 | sed 's/^/   last id: /'

echo "== 4 consumers: mq pop + mq ack, one job per loop"
consume() {
  n=0
  while receipt=$(mq pop --queue images -o "$srv/job.$1"); do
    # the work: here, just count the payload's bytes
    wc -c <"$srv/job.$1" >/dev/null
    mq ack "$receipt"
    n=$((n + 1))
  done
  echo "   consumer $1 processed $n jobs"
}
for i in 1 2 3 4; do consume "$i" & done
wait
end=$(date +%s.%N)

echo "== what the table says"
mariadb --no-defaults --socket="$srv/sock" --user=root demo -t -e "
  SELECT queue, state, COUNT(*) AS jobs, MAX(attempts) AS max_attempts
  FROM mq_jobs GROUP BY queue, state"
awk -v s="$start" -v e="$end" 'BEGIN {
  printf "== 1,000 jobs pushed and drained in %.1f s (%.0f jobs/s, one process per pop and per ack)\n", e - s, 1000 / (e - s) }'

echo "== the same with mq work: 1,000 more jobs, one worker running 4 at a time"
seq 1 1000 | sed 's/^/resize image-/' | mq push --lines --queue images >/dev/null
start=$(date +%s.%N)
mq work --queue images --concurrency 4 --exit-when-empty -- sh -c 'wc -c >/dev/null'
end=$(date +%s.%N)
mariadb --no-defaults --socket="$srv/sock" --user=root demo -t -e "
  SELECT queue, state, COUNT(*) AS jobs FROM mq_jobs GROUP BY queue, state"
awk -v s="$start" -v e="$end" 'BEGIN {
  printf "== 1,000 jobs drained by mq work in %.1f s (%.0f jobs/s)\n", e - s, 1000 / (e - s) }'
echo "== stopping the private MariaDB"
