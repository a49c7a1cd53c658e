#!/bin/sh
# t314-host-list.sh: --host with a list of servers (mq(1), --host and
# --host-order): the first entry that answers (and is ready: the
# Galera half is t406) is used, whatever the order or the source of the
# list (option, MQ_HOST, an option file's host=); none answering: 69,
# one line naming each entry; an entry that is not valid: 78; a bad
# --host-order or MQ_HOST_ORDER: 64. A second private server on a free
# loopback port; the dead entries are loopback ports nobody listens on.
. "$(dirname "$0")/lib.sh"

SRV=$T_TMP/srv
srv_cleanup() {
  [ ! -d "$SRV" ] || sh "$TESTS_DIR/server.sh" stop "$SRV"
  t_cleanup
}
trap srv_cleanup EXIT
free_port() { # a loopback port nobody listens on
  while :; do
    p=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000))
    ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
  done
}
if ! tcp_server "$SRV"; then
  echo "Bail out! cannot start the TCP server"
  exit 1
fi
mariadb --no-defaults --socket="$SRV/sock" --user=root -e "CREATE DATABASE l"
D1=$(free_port) D2=$(free_port)
export MQ_SOCKET='' MQ_DATABASE=l MQ_USER=root
LIVE=127.0.0.1:$PORT
expect_status 0 "a dead entry first, then the server: init" \
  "$MQ" init --host "127.0.0.1:$D1,$LIVE"
expect_status 0 "  push" "$MQ" push --host "127.0.0.1:$D1,$LIVE" a1
expect_status 0 "two dead entries, then the server, bracketed" \
  "$MQ" push --host "127.0.0.1:$D1,[127.0.0.1]:$D2,[127.0.0.1]:$PORT" a2
expect_status 0 "the server first" "$MQ" push --host "$LIVE,127.0.0.1:$D1" a3
expect_status 0 "one entry with its port (no list)" "$MQ" stats --host "$LIVE"
expect_status 0 "  bracketed" "$MQ" stats --host "[127.0.0.1]:$PORT"
expect_status 78 "  with a port not valid: 78" "$MQ" stats --host "127.0.0.1:99999"
expect_status 0 "an entry without a port takes --port" \
  "$MQ" push --host "127.0.0.1:$D1,127.0.0.1" --port "$PORT" a4
expect_status 0 "MQ_HOST alike" env MQ_HOST="127.0.0.1:$D1,$LIVE" "$MQ" push a5
printf '[client]\nhost=127.0.0.1:%s,%s\nuser=root\ndatabase=l\n' "$D1" "$LIVE" >"$T_TMP/list.cnf"
expect_status 0 "an option file's host= alike" \
  env MQ_DATABASE= MQ_USER= "$MQ" push --defaults-file "$T_TMP/list.cnf" a6
is "$(mariadb --no-defaults --socket="$SRV/sock" --user=root -N -B l \
  -e "SELECT GROUP_CONCAT(payload ORDER BY id) FROM mq_jobs")" "a1,a2,a3,a4,a5,a6" \
  "every push reached the server, once"
i=0 used=
while [ $i -lt 8 ]; do
  run "$MQ" push --host-order random --host "127.0.0.1:$D1,$LIVE,127.0.0.1:$D2" r
  [ "$RC" = 0 ] || used="$used fail:$RC:$ERR"
  i=$((i + 1))
done
is "$used" "" "--host-order random: 8 pushes, each on the live entry wherever it starts"
expect_status 0 "MQ_HOST_ORDER=random alike" \
  env MQ_HOST_ORDER=random "$MQ" push --host "127.0.0.1:$D1,$LIVE" r

expect_status 69 "no entry answers: 69" "$MQ" stats --host "127.0.0.1:$D1,127.0.0.1:$D2"
like "$ERR" "mq stats: cannot connect to any host of the list: 127.0.0.1:$D1: cannot connect: *; 127.0.0.1:$D2: cannot connect: * (error 2002, SQLSTATE HY000)" \
  "  one line naming each entry, and the last error's code"
for bad in ",$LIVE" "$LIVE," "127.0.0.1:0,$LIVE" "127.0.0.1:65536,$LIVE" \
    "127.0.0.1:x,$LIVE" "[127.0.0.1,$LIVE" "[]:1,$LIVE" "a b,$LIVE"; do
  expect_status 78 "an entry not valid ('$bad'): 78" "$MQ" stats --host "$bad"
done
is "$ERR" "mq stats: invalid host list 'a b,$LIVE': entry 1 is not HOST, HOST:PORT or [ADDRESS]:PORT" \
  "  the message names the list and the entry"
expect_status 64 "--host-order other than first or random: 64" \
  "$MQ" stats --host-order any --host "$LIVE"
is "$ERR" "mq stats: --host-order: 'any' is neither first nor random" "  it says so"
expect_status 64 "MQ_HOST_ORDER other than first or random: 64" \
  env MQ_HOST_ORDER=any "$MQ" stats --host "$LIVE"
like "$ERR" "mq stats: MQ_HOST_ORDER: 'any' is neither first nor random*" "  it says so"
expect_status 0 "--host-order overrides MQ_HOST_ORDER" \
  env MQ_HOST_ORDER=any "$MQ" stats --host-order first --host "$LIVE"

# ---- an option file's host= taken as --host takes it (the client
# library alone takes a single HOST:PORT for a host name, passes over
# entries that are not valid and names no entry when none answers)
cnf() { printf '[client]\nhost=%s\nuser=root\ndatabase=l\n' "$1" >"$T_TMP/h.cnf"; }
fstats() { env MQ_DATABASE= MQ_USER= "$MQ" stats --defaults-file "$T_TMP/h.cnf" "$@"; }
cnf "$LIVE"
expect_status 0 "an option file's single HOST:PORT" fstats
cnf "[127.0.0.1]:$PORT"
expect_status 0 "  bracketed" fstats
for bad in "127.0.0.1:65536,$LIVE" ",$LIVE" "127.0.0.1:0,$LIVE"; do
  cnf "$bad"
  expect_status 78 "an option file's entry not valid ('$bad'): 78" fstats
done
like "$ERR" "mq stats: invalid host list '127.0.0.1:0,$LIVE': entry 1 is not HOST, HOST:PORT or \[ADDRESS\]:PORT" \
  "  the message names the list and the entry"
cnf "127.0.0.1:$D1,127.0.0.1:$D2"
expect_status 69 "an option file's list, no entry answers: 69" fstats
like "$ERR" "mq stats: cannot connect to any host of the list: 127.0.0.1:$D1: cannot connect: *; 127.0.0.1:$D2: cannot connect: * (error 2002, SQLSTATE HY000)" \
  "  one line naming each entry"
# --host-order random spreads an option file's list too: two entries,
# the live server by TCP and by its socket (localhost), told apart by
# the server's Connections (each push: one connection to one of them)
printf '[client]\nhost=localhost,%s\nsocket=%s\nuser=root\ndatabase=l\n' "$LIVE" "$SRV/sock" >"$T_TMP/h.cnf"
conns_from() { mariadb --no-defaults --socket="$SRV/sock" --user=root -N -B -e \
  "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE HOST LIKE '$1' AND DB = 'l'"; }
i=0
while [ $i -lt 12 ]; do
  env MQ_DATABASE= MQ_USER= "$MQ" pop --defaults-file "$T_TMP/h.cnf" --host-order random --queue idle --wait 8s >/dev/null 2>&1 &
  i=$((i + 1))
done
i=0
while [ $(( $(conns_from '%:%') + $(conns_from 'localhost') )) -lt 12 ] && [ $i -lt 100 ]; do
  sleep 0.05; i=$((i + 1))
done
tcp=$(conns_from '%:%') sock=$(conns_from 'localhost')
seq 12 | "$MQ" push --host "$LIVE" --lines --queue idle >/dev/null
wait
if [ "$tcp" -ge 1 ] && [ "$sock" -ge 1 ]; then
  ok "  --host-order random: 12 waiters spread ($tcp connections by TCP, $sock by the socket)"
else
  not_ok "  --host-order random: 12 waiters spread" "$tcp connections by TCP, $sock by the socket"
fi
# the same misconfiguration has one status whatever the order: a server
# that answered and refused says more than an entry nobody listens on
for order in "127.0.0.1:$D1,$LIVE" "$LIVE,127.0.0.1:$D1"; do
  expect_status 78 "an unknown database through '$order': 78" \
    env MQ_DATABASE=nosuch "$MQ" stats --host "$order"
done
# mq work on a list whose node is lost tries the list again every 2 s
# at most (mq-work(1), SERVER FAILURES: a pause grown for one server,
# up to 30 s, kept it away from the nodes still up): the server stopped
# under it, its pauses are 0.5, 1, 2, 2, 2 s (times 0.75 to 1.25)
"$MQ" work --host "$LIVE,127.0.0.1:$D1" --queue bo -- true 2>"$T_TMP/bo.err" &
wpid=$!
i=0
while [ "$(conns_from '%:%')" -lt 1 ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1))
done
sh "$TESTS_DIR/server.sh" stop "$SRV"
i=0
while [ "$(grep -c 'reconnecting in' "$T_TMP/bo.err")" -lt 5 ] && [ $i -lt 400 ]; do
  sleep 0.05; i=$((i + 1))
done
kill -TERM $wpid
wait $wpid
is "$(grep 'reconnecting in' "$T_TMP/bo.err" | head -5 |
  awk '{ sub(/s$/, "", $NF); if ($NF + 0 > m) m = $NF + 0; n++ } END { print n, (m <= 2.5 ? "<= 2.5s" : m "s") }')" \
  "5 <= 2.5s" "mq work on a list of hosts, its server lost: tried again every 2.5 s at most"
done_testing
