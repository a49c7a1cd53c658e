#!/bin/sh
# The server's max_connections reached: every command fails with one line
# that names the setting (status 69), and mq work, whose connections are
# cut and cannot be made again meanwhile, backs off, says so once, keeps
# its jobs running and acks them once connections are free again: every
# job done once, none failed. A private server of its own (max_connections
# is global), an ordinary account for mq (root has one connection more),
# another one for the sessions that hold the connections.
. "$(dirname "$0")/lib.sh"

M=$T_TMP/mc
trap 'release; sh "$TESTS_DIR/server.sh" stop "$M" >/dev/null 2>&1; t_cleanup' EXIT
# 10 is MariaDB's smallest max_connections; the server starts with more,
# and the test lowers it once the slots it wants taken are held
MQ_SERVER_ARGS="--max-connections=40" sh "$TESTS_DIR/server.sh" start "$M" >&2 || {
  echo "Bail out! cannot start a private server"
  exit 1
}
msql() { # as root, in its extra connection if need be
  mariadb --no-defaults --socket="$M/sock" --user=root -N -B -e "$1"
}
msql "CREATE DATABASE m; CREATE USER app@localhost; GRANT ALL ON m.* TO app@localhost;
  CREATE USER holder@localhost"
export MQ_SOCKET="$M/sock" MQ_USER=app MQ_DATABASE=m
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

# hold N: N idle sessions of holder (a SLEEP), each a connection; waits (10 s
# at most) until the server has them all. release: ends them.
: >"$T_TMP/holders"
hold() {
  _i=0
  while [ $_i -lt "$1" ]; do
    mariadb --no-defaults --socket="$M/sock" --user=holder \
      -e "SELECT SLEEP(600) AS held" >/dev/null 2>&1 &
    echo $! >>"$T_TMP/holders"
    _i=$((_i + 1))
  done
  _i=0
  while [ "$(held)" -lt "$1" ] && [ $_i -lt 100 ]; do
    sleep 0.1; _i=$((_i + 1))
  done
}
held() {
  msql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(600) AS held'"
}
release() {
  for _id in $(msql "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(600) AS held'" 2>/dev/null); do
    msql "KILL CONNECTION $_id" 2>/dev/null
  done
  for _p in $(cat "$T_TMP/holders" 2>/dev/null); do
    kill "$_p" 2>/dev/null
  done
  : >"$T_TMP/holders"
}
app_conns() { # mq's connections
  msql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'app'"
}
refused() { # connections the server refused so far (max_connections
  # before the handshake, or after it for an account without the extra one)
  msql "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('CONNECTION_ERRORS_MAX_CONNECTIONS', 'ABORTED_CONNECTS')"
}

LIMIT_MSG="cannot connect: the server has no connection left (max_connections reached; each parked waiter and each mq work holds connections: see mq(1) CONNECTIONS) (error 1040, SQLSTATE 08004)"

# ---- every command: one line naming the setting, status 69 ----
hold 10
msql "SET GLOBAL max_connections = 10"
is "$(held)" 10 "10 sessions hold every connection"
s=$(msql "CHECKSUM TABLE m.mq_jobs EXTENDED" | cut -f2)
expect_status 69 "mq push refused: status 69" "$MQ" push hello
is "$ERR" "mq push: $LIMIT_MSG" "mq push: one line that names max_connections"
is "$OUT" "" "mq push: nothing on stdout"
expect_status 69 "mq pop refused: status 69" "$MQ" pop
is "$ERR" "mq pop: $LIMIT_MSG" "mq pop: the same line"
is "$OUT" "" "mq pop: nothing on stdout"
t0=$(date +%s)
expect_status 69 "mq pop --wait 30s refused at once: status 69" "$MQ" pop --wait 30s
is "$ERR" "mq pop: $LIMIT_MSG" "mq pop --wait: the same line"
is "$OUT" "" "mq pop --wait: nothing on stdout"
check "mq pop --wait did not wait ($(($(date +%s) - t0)) s)" test $(($(date +%s) - t0)) -lt 10
expect_status 69 "mq ack refused: status 69" "$MQ" ack 1.0123456789abcdef0123456789abcdef
is "$ERR" "mq ack: $LIMIT_MSG" "mq ack: the same line"
expect_status 69 "mq stats refused: status 69" "$MQ" stats
is "$ERR" "mq stats: $LIMIT_MSG" "mq stats: the same line"
is "$OUT" "" "mq stats: nothing on stdout"
expect_status 69 "mq work refused at start: status 69" "$MQ" work --exit-when-empty -- true
is "$ERR" "mq work: $LIMIT_MSG" "mq work at start: the same line"
run "$MQ" check
is "$RC:$OUT" "3:MQ UNKNOWN - ${LIMIT_MSG%, SQLSTATE 08004)})" "mq check: UNKNOWN, with the same cause"
is "$(msql "CHECKSUM TABLE m.mq_jobs EXTENDED" | cut -f2)" "$s" "nothing was written"
release
msql "SET GLOBAL max_connections = 40"

# ---- mq work: its connections cut, none to be had; then free again ----
# 4 jobs, 2 at a time, each sleeping its payload's seconds: job 2 (18 s)
# runs across the 8 s without connections, jobs 1, 3 and 4 (2 s) end in
# them (their acks wait), the first early enough that the work thread
# tries to connect again several times meanwhile. The lease (24 s,
# extended every 8 s: the first extension falls in them) outlasts them
# and the backoff after them.
for i in 2 18 2 2; do "$MQ" push "$i" >/dev/null; done
"$MQ" work --concurrency 2 --lease 24s --max-jobs 4 -- \
  sh -c 'echo "$MQ_ID" >>"$0"; sleep "$(cat)"' "$T_TMP/runs" \
  >"$T_TMP/w.out" 2>"$T_TMP/w.err" &
wpid=$!
_i=0
while [ "$(msql "SELECT COUNT(*) FROM m.mq_jobs WHERE state = 'leased'")" -lt 4 ] && [ $_i -lt 100 ]; do
  sleep 0.1; _i=$((_i + 1))
done
is "$(msql "SELECT COUNT(*) FROM m.mq_jobs WHERE state = 'leased'")" 4 "mq work claimed the 4 jobs"
until2=$(msql "SELECT leased_until FROM m.mq_jobs WHERE id = 2")
# every connection taken: 10 held, max_connections 10, and mq work's
# own cut, in one go (root's extra connection)
hold 10
r0=$(refused)
msql "SET GLOBAL max_connections = 10; KILL CONNECTION USER app"
is "$(held):$(app_conns)" "10:0" "mq work's connections are cut; 10 held"
sleep 8
is "$(app_conns)" 0 "mq work could not connect meanwhile"
check "it tried more than once ($(($(refused) - r0)) refused)" test $(($(refused) - r0)) -ge 3
check "mq work still runs" kill -0 "$wpid"
is "$(msql "SELECT COUNT(*) FROM m.mq_jobs WHERE state = 'leased'")" 4 "its jobs are still leased to it (none failed)"
is "$(msql "SELECT state, leased_until = '$until2' FROM m.mq_jobs WHERE id = 2" | tr '\t' ' ')" "leased 1" \
  "job 2 runs on, its lease not extended meanwhile"
release
msql "SET GLOBAL max_connections = 40"
_i=0
while [ "$(msql "SELECT leased_until > '$until2' FROM m.mq_jobs WHERE id = 2 AND state = 'leased'")" != 1 ] && [ $_i -lt 150 ]; do
  sleep 0.1; _i=$((_i + 1))
done
is "$(msql "SELECT state, leased_until > '$until2' FROM m.mq_jobs WHERE id = 2" | tr '\t' ' ')" "leased 1" \
  "connected again, mq work extends job 2's lease while it runs"
_i=0
while kill -0 "$wpid" 2>/dev/null && [ $_i -lt 300 ]; do
  sleep 0.1; _i=$((_i + 1))
done
kill "$wpid" 2>/dev/null
wait "$wpid"
is "$?" 0 "mq work ended with status 0 once its 4 jobs were done"
is "$(msql "SELECT id, state, attempts FROM m.mq_jobs ORDER BY id" | tr '\t\n' ' ,')" \
  "1 done 1,2 done 1,3 done 1,4 done 1," "every job done, attempts 1: none failed or run again"
is "$(sort -n "$T_TMP/runs" | tr '\n' ' ')" "1 2 3 4 " "each job ran once"
is "$(msql "SELECT COUNT(*) FROM m.mq_jobs_history")" 0 \
  "no failure or expiry in the history"
err=$(cat "$T_TMP/w.err")
is "$(grep -c 'error 1040' "$T_TMP/w.err")" 1 "the refused connections are said once, not once per attempt"
like "$err" "*mq work: *$(echo "$LIMIT_MSG" | sed 's/SQLSTATE 08004/SQLSTATE */')*" "with the line that names max_connections"
is "$(grep -c 'backing off' "$T_TMP/w.err")" 1 "it says once that it backs off"
like "$err" "*mq work: backing off: reconnecting in *s, then less and less often until the server has a connection free; the jobs it holds run on*mq work: connected again*" \
  "mq work says it backs off, then that it connected again"
check "no job was failed or stopped" sh -c "! grep -q 'job [0-9]*:' '$T_TMP/w.err'"
[ "$T_FAILED" -eq 0 ] || sed 's/^/# w.err: /' "$T_TMP/w.err"
done_testing
