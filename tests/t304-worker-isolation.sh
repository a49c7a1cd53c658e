#!/bin/sh
# mq work keeps its jobs apart from each other and from the server's
# troubles: a row lock held on one job does not hold up the heartbeats of
# the others (no job runs twice at once); a hung server (SIGSTOP) does not
# hold up --timeout, nor a stop signal beyond its bound; a server that
# refuses writes (read_only) gets a backoff, and --exit-when-empty gives
# up; mq pop --wait returns within D plus its bound when the server hangs.
# The hung and read-only servers are a private server of this test's own.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

ms() { date +%s%N | cut -c1-13; }
until_grep() { # until_grep PATTERN FILE [TENTHS]: waits until a line matches
  i=0
  while ! grep -q "$1" "$2" 2>/dev/null && [ $i -lt "${3:-200}" ]; do
    sleep 0.1
    i=$((i + 1))
  done
}
# gone PID TENTHS: waits up to TENTHS/10 s for PID to end; its status in
# $WRC (or "running" if it did not end: it is killed then)
gone() {
  i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt "$2" ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    WRC=running
  else
    wait "$1"
    WRC=$?
  fi
}

# The job: logs its start (with its receipt) and its end, also when
# stopped by SIGTERM; sleeps as long as the payload says, on its first
# delivery only.
cat >"$T_TMP/job.sh" <<'SH'
#!/bin/sh
echo "start $MQ_ID $MQ_RECEIPT $(date +%s%N | cut -c1-13)" >>"$LOG"
trap 'echo "end $MQ_ID $(date +%s%N | cut -c1-13)" >>"$LOG"; exit 143' TERM
p=$(cat)
[ "$MQ_ATTEMPT" -gt 1 ] && p=0
sleep "$p" &
wait $!
echo "end $MQ_ID $(date +%s%N | cut -c1-13)" >>"$LOG"
SH
chmod +x "$T_TMP/job.sh"
export LOG="$T_TMP/log"
# runs of a job that overlapped another run of the same job
overlaps() {
  awk '$1 == "start" { if (open[$2]) n++; open[$2] = 1 }
       $1 == "end" { open[$2] = 0 } END { print n + 0 }' "$LOG"
}
starts() { grep -c "^start $1 " "$LOG"; }

# ---- a row lock on job 1 does not hold up job 2's heartbeat ----
a=$("$MQ" push --queue rl 8)
b=$("$MQ" push --queue rl 8)
"$MQ" work --queue rl --concurrency 2 --lease 3s --exit-when-empty \
  -- "$T_TMP/job.sh" 2>"$T_TMP/w1.err" &
w1=$!
until_grep "^start $b " "$LOG"
until_grep "^start $a " "$LOG"
token_b=$(grep "^start $b " "$LOG" | cut -d' ' -f3 | cut -d. -f2)
# another session holds job 1's row for 8 s
mariadb --no-defaults --socket="$MQ_TEST_SOCKET" --user=root "$T_DB" -e \
  "START TRANSACTION; SELECT id FROM mq_jobs WHERE id = $a FOR UPDATE;
   DO SLEEP(8); COMMIT" >/dev/null &
locker=$!
# a second consumer and a reaper, ready to take any lease that runs out
"$MQ" work --queue rl --lease 3s --wait 10s -- "$T_TMP/job.sh" 2>"$T_TMP/w2.err" &
w2=$!
reap() { # reap MS: requeue-stale every 0.3 s for MS milliseconds
  t0=$(ms)
  while [ $(($(ms) - t0)) -lt "$1" ]; do
    "$MQ" requeue-stale --queue rl >/dev/null 2>&1
    sleep 0.3
  done
}
reap 5000
is "$(sql "SELECT CONCAT(lease_token = '$token_b', ',', leased_until > UTC_TIMESTAMP(6)) FROM mq_jobs WHERE id = $b")" \
  "1,1" "job 2 keeps its lease, extended, while job 1's row is locked"
reap 2000
wait $locker
gone "$w1" 200
is "$WRC" 0 "the worker exits when empty"
gone "$w2" 300
is "$(starts "$b")" 1 "job 2 ran once"
is "$(sql "SELECT CONCAT(state, attempts) FROM mq_jobs WHERE id = $b")" "done1" "job 2 acked, on its first delivery"
is "$(overlaps)" 0 "no job ran twice at once"
like "$(cat "$T_TMP/w1.err")" "*job $a: lease ran out before it could be extended; stopping it*" \
  "job 1, whose lease could not be extended, was stopped, and the worker says so"

# ---- a private server, to hang and to make read-only ----
S2=$T_TMP/srv2
S2PID=
t304_cleanup() {
  [ -n "$S2PID" ] && kill -CONT "$S2PID" 2>/dev/null
  [ -d "$S2" ] && sh "$TESTS_DIR/server.sh" stop "$S2" >/dev/null 2>&1
  t_cleanup
}
trap t304_cleanup EXIT
sh "$TESTS_DIR/server.sh" start "$S2" >&2 || {
  echo "Bail out! cannot start a second private MariaDB"
  exit 1
}
S2PID=$(cat "$S2/mariadbd.pid")
sql2() { mariadb --no-defaults --socket="$S2/sock" --user=root -N -B -e "$1"; }
sql2 "CREATE DATABASE t304"
# a script, not a function: "mq2 work &" is then mq itself, for kill
printf '#!/bin/sh\nMQ_SOCKET=%s/sock MQ_DATABASE=t304 exec "%s" "$@"\n' "$S2" "$MQ" >"$T_TMP/mq2"
chmod +x "$T_TMP/mq2"
mq2() { "$T_TMP/mq2" "$@"; }
mq2 init >/dev/null
: >"$LOG"

# ---- --timeout while the server hangs ----
id=$(mq2 push --queue to 60)
"$T_TMP/mq2" work --queue to --lease 3s --timeout 2s --exit-when-empty \
  -- "$T_TMP/job.sh" 2>"$T_TMP/to.err" &
wpid=$!
until_grep "^start $id " "$LOG"
kill -STOP "$S2PID"
until_grep "^end $id " "$LOG" 60
t_start=$(grep "^start $id " "$LOG" | cut -d' ' -f4)
t_end=$(grep "^end $id " "$LOG" | cut -d' ' -f3)
like "$t_end:$([ -n "$t_end" ] && [ $((t_end - t_start)) -le 4000 ] && echo in-time)" "*:in-time" \
  "the server hung: --timeout 2s still stops the job within 4 s"
sleep 1
check "the worker waits for the server, holding the job" kill -0 "$wpid"
kill -CONT "$S2PID"
gone "$wpid" 300
is "$WRC" 0 "once the server answers, the worker fails the job and exits when empty"
like "$(sql2 "SELECT CONCAT(state, ',', attempts, ',', last_error) FROM t304.mq_jobs WHERE id = $id")" \
  "ready,1,timed out after 2.0s*" "the job was failed as timed out, not acked"

# ---- SIGTERM while the server hangs ----
id=$(mq2 push --queue st 1)
"$T_TMP/mq2" work --queue st --lease 10s -- "$T_TMP/job.sh" 2>"$T_TMP/st.err" &
wpid=$!
until_grep "^start $id " "$LOG"
kill -STOP "$S2PID"
t0=$(ms)
kill -TERM "$wpid"
gone "$wpid" 200
t1=$(ms)
kill -CONT "$S2PID"
is "$WRC" 69 "SIGTERM, the server hung: exit status 69"
like "$(($(ms) - t0)):$([ $((t1 - t0)) -le 14000 ] && echo in-time)" "*:in-time" \
  "within the job's time plus 10 s (and some slack)"
like "$(cat "$T_TMP/st.err")" "*job $id: * the server did not answer in 10s*" "the worker says what it could not do"
is "$(grep -c "^end $id " "$LOG")" 1 "the job itself ran to its end"

# ---- a server that refuses writes: back off, then give up ----
sql2 "CREATE USER 'mq_ro'@'localhost'; GRANT ALL ON t304.* TO 'mq_ro'@'localhost'"
mq2 push --queue ro x >/dev/null
sql2 "SET GLOBAL read_only = 1"
c0=$(sql2 "SHOW GLOBAL STATUS LIKE 'Connections'" | cut -f2)
t0=$(ms)
MQ_USER=mq_ro "$T_TMP/mq2" work --queue ro --exit-when-empty -- true 2>"$T_TMP/ro.err" &
wpid=$!
gone "$wpid" 200
t1=$(ms)
c1=$(sql2 "SHOW GLOBAL STATUS LIKE 'Connections'" | cut -f2)
sql2 "SET GLOBAL read_only = 0"
is "$WRC" 70 "read-only server, --exit-when-empty: gives up with status 70"
like "$((t1 - t0)):$([ $((t1 - t0)) -ge 4000 ] && [ $((t1 - t0)) -le 15000 ] && echo in-range)" "*:in-range" \
  "after backing off (4 to 15 s: 0.5 + 1 + 2 + 4 s, with jitter)"
like "$((c1 - c0 - 2)):$([ $((c1 - c0 - 2)) -le 6 ] && echo few)" "*:few" \
  "few connections meanwhile (a start and 4 retries)"
is "$(grep -c '(error 1290' "$T_TMP/ro.err"):$(grep -c 'reconnecting in' "$T_TMP/ro.err")" "5:4" \
  "each refusal reported, 4 pauses"
pauses=$(sed -n 's/^mq work: reconnecting in \(.*\)s$/\1/p' "$T_TMP/ro.err" | tr '\n' ' ')
is "$(echo "$pauses" | awk '{ for (i = 1; i <= 4; i++) { lo = 0.5 * 2 ^ (i - 1) * 0.75 - 0.05; hi = 0.5 * 2 ^ (i - 1) * 1.25 + 0.05
  if ($i < lo || $i > hi) bad = bad " " $i } print bad ? "off:" bad : "doubling" }')" doubling \
  "the pauses double: 0.5, 1, 2, 4 s, times 0.75 to 1.25 ($pauses)"
like "$(tail -n 1 "$T_TMP/ro.err")" "mq work: giving up after 5 failures in a row" "then it gives up, and says so"
is "$(sql2 "SELECT CONCAT(state, attempts) FROM t304.mq_jobs WHERE queue = 'ro'")" "ready0" "the job untouched"

# ---- mq pop --wait 5s while the server hangs mid-wait ----
t0=$(ms)
"$T_TMP/mq2" pop --queue empty --wait 5s >/dev/null 2>"$T_TMP/pop.err" &
ppid=$!
sleep 1
kill -STOP "$S2PID"
gone "$ppid" 250
t1=$(ms)
kill -CONT "$S2PID"
is "$WRC" 69 "pop --wait 5s, the server hung: exit status 69"
like "$((t1 - t0)):$([ $((t1 - t0)) -le 16000 ] && echo in-time)" "*:in-time" \
  "within 5 s plus the 10 s bound"
like "$(cat "$T_TMP/pop.err")" "mq pop: *" "and says why, in one line"

# ---- mq work whose stderr takes no write (a log reader that stalls) ----
# The heartbeats go on: the leases (3 s) are extended while the jobs'
# output waits in their pipes, and all of it comes out once read (on
# 6f40b45 the loop blocked writing it: at 6 s both leases had run out,
# and requeue-stale put both jobs back while they ran)
"$MQ" push --queue stall a >/dev/null
"$MQ" push --queue stall b >/dev/null
mkfifo "$T_TMP/stall.fifo"
"$MQ" work --queue stall --lease 3s --concurrency 2 --exit-when-empty -- \
  sh -c 'head -c 300000 /dev/zero >&2; sleep 4' 2>"$T_TMP/stall.fifo" &
wpid=$!
exec 7<"$T_TMP/stall.fifo"	# the reader: opened, not read for 7 s
sleep 7
is "$(sql "SELECT GROUP_CONCAT(state, leased_until > UTC_TIMESTAMP(6) ORDER BY id) FROM mq_jobs WHERE queue = 'stall'")" \
  "leased1,leased1" "stderr not read for 7 s: both leases (3 s) still extended"
run "$MQ" requeue-stale --queue stall
is "$(echo $OUT)" "requeued 0 dead 0" "requeue-stale finds nothing stale"
is "$(wc -c <&7 | tr -d ' ')" 600000 "the jobs' output, read at last, is whole"
exec 7<&-
gone "$wpid" 200
is "$WRC $(sql "SELECT GROUP_CONCAT(state, attempts ORDER BY id) FROM mq_jobs WHERE queue = 'stall'")" \
  "0 done1,done1" "both jobs done, once each"

done_testing
