#!/bin/sh
# mq top: --once prints a header and one line per queue with the figures
# of the table (depth, workers: distinct leased_by), rates from the
# monotonic counters between its two samples; names from the table
# escaped, no escape sequence at all when not a terminal; plain
# snapshots until a signal; on a terminal (a pty), the alternate screen
# is left, the cursor shown and the terminal's settings given back on q,
# SIGINT, SIGTERM and SIGHUP; SIGWINCH redraws to the new width; Ctrl-Z
# gives the terminal back, and takes it again after.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# $1 is mq top's output (a header) without an ESC byte
no_esc() {
  case $1 in "mq top "*) ;; *) return 1 ;; esac
  [ "$(printf '%s' "$1" | tr -d -c '\033' | wc -c)" -eq 0 ]
}
# the fields of queue $1's line in $OUT (fields $2.. of awk)
fields() {
  printf '%s\n' "$OUT" | Q=$1 awk -v f="$2" '
    $1 == ENVIRON["Q"] { n = split(f, k, ","); s = ""
      for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") $k[i]; print s }'
}

# queue a: 7 due jobs and one for later; 4 claimed, held by w1 and w2,
# the one of w2 stale; one cancelled (dead): 2 ready
seq 1 7 | "$MQ" push --lines --queue a >/dev/null 2>&1
"$MQ" push --queue a --delay 1h later >/dev/null
"$MQ" pop --queue a --count 4 --lease 1h --json >/dev/null
sql "UPDATE mq_jobs SET leased_by = 'w1:1' WHERE state = 'leased'"
sql "UPDATE mq_jobs SET leased_by = 'w2:2', leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE state = 'leased' ORDER BY id DESC LIMIT 1"
"$MQ" cancel "$(sql "SELECT MIN(id) FROM mq_jobs WHERE queue = 'a' AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)")" >/dev/null
"$MQ" push --queue b x >/dev/null

# ---- --once: the figures ----
run "$MQ" top --once --interval 200ms
is "$RC" 0 "--once exits 0"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 4 \
  "--once: a header, the column names, one line per queue"
like "$(printf '%s\n' "$OUT" | sed -n 1p)" \
  "mq top 20*Z table mq_jobs: 2 queues, 3 ready, 1 scheduled, 0 waiting, 4 leased, 1 stale, 1 dead; in */s, out */s over 200ms" \
  "the header: time, table, totals, rates"
is "$(printf '%s\n' "$OUT" | sed -n 2p | tr -s ' ')" \
  "QUEUE READY SCHED WAIT LEASED STALE DEAD IN/S OUT/S IN/S(1M) OUT/S(1M) ETA OLDEST WORKERS HELD HISTORY" \
  "the column names"
is "$(fields a 2,3,5,6,7,14)" "2 1 4 1 1 2" \
  "queue a: 2 ready, 1 scheduled, 4 leased, 1 stale, 1 dead, 2 workers"
is "$(fields b 2,3,5,6,7,14)" "1 0 0 0 0 0" "queue b: 1 ready, no worker"
like "$(fields a 13)" "[0-9]*s" "queue a: the oldest ready job's age"
is "$(fields b 12)" "-" "no rate of draining: no ETA"
check "--once on a pipe: no escape sequence" no_esc "$OUT"
is "$ERR" "" "nothing on stderr"
run "$MQ" top --once --interval 100ms --queue b
is "$(printf '%s\n' "$OUT" | awk 'NR > 2 { print $1 }')" "b" \
  "--queue b: b's line only"

# ---- rates: pushes and acks between the two samples ----
"$MQ" top --once --interval 3s --queue r >"$T_TMP/rates" 2>&1 &
pid=$!
sleep 1
seq 1 40 | "$MQ" push --lines --queue r >/dev/null 2>&1
receipts=$("$MQ" pop --queue r --count 40 --json | sed 's/.*"receipt":"\([^"]*\)".*/\1/')
# shellcheck disable=SC2086
"$MQ" ack $receipts >/dev/null
wait $pid
is "$?" 0 "--once with pushes and acks between its samples exits 0"
OUT=$(cat "$T_TMP/rates")
r=$(fields r 8,9 | awk '$1 + 0 > 0 && $2 + 0 > 0 { print "both" }')
is "$r" "both" "IN/S and OUT/S above 0 ($(fields r 8,9))"
r=$(fields r 10,11 | awk '$1 + 0 > 0 && $2 + 0 > 0 { print "both" }')
is "$r" "both" "the minute's rates too ($(fields r 10,11))"
like "$(printf '%s\n' "$OUT" | sed -n 1p)" "*; in [0-9]*/s, out [0-9]*/s over 3s" \
  "the header's rates are figures"
is "$(fields r 2,5,7)" "0 0 0" "queue r drained: 0 ready, 0 leased, 0 dead"

# ---- names and holders from the table, escaped ----
"$MQ" push --queue h x >/dev/null
"$MQ" pop --queue h --lease 1h >/dev/null 2>&1
sql "SET SESSION check_constraint_checks=0; UPDATE mq_jobs SET queue = CONCAT('h', CHAR(27), '[2J', CHAR(10), 'x', CHAR(7)), leased_by = CONCAT('w', CHAR(27), ']0;pwn', CHAR(7)) WHERE queue = 'h'"
run "$MQ" top --once --interval 100ms
is "$RC" 0 "hostile names: exits 0"
check "hostile names: no ESC byte" no_esc "$OUT"
is "$(printf '%s' "$OUT" | tr -d -c '\007' | wc -c | tr -d ' '):${OUT%% *}" \
  "0:mq" "hostile names: no BEL byte"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 6 \
  "a newline in a name ends no line (4 queues, 6 lines)"
is "$(fields 'h\x1b[2J\x0ax\x07' 5,14)" "1 1" \
  "the name shown escaped, its leased job and its 1 worker"

# ---- plain snapshots until a signal ----
"$MQ" top --interval 200ms >"$T_TMP/plain" 2>&1 &
pid=$!
sleep 1.5
kill -TERM $pid
wait $pid
is "$?" 143 "plain output: SIGTERM ends it, 128 + 15"
OUT=$(cat "$T_TMP/plain")
n=$(printf '%s\n' "$OUT" | grep -c '^mq top ')
check "plain output: a snapshot every interval ($n)" [ "$n" -ge 2 ]
check "plain output: no escape sequence" no_esc "$OUT"
like "$(printf '%s\n' "$OUT" | grep '^mq top ' | sed -n 2p)" \
  "*; in [0-9]*/s, out [0-9]*/s over 200ms" "the second snapshot has rates"
python3 -c "$AS_FOREGROUND" "$MQ" top --interval 200ms >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
is "$?" 130 "plain output: SIGINT ends it, 128 + 2"

# ---- usage ----
expect_status 64 "--interval below 100ms: usage error" "$MQ" top --interval 10ms
like "$ERR" "mq top: --interval must be 100ms to 1d, not '10ms'" "it says why"
expect_status 64 "an operand: usage error" "$MQ" top extra
like "$ERR" "mq top: unexpected argument 'extra'" "it names the operand"
expect_status 64 "a bad duration: usage error" "$MQ" top --interval soon
like "$ERR" "mq top: invalid duration for --interval: 'soon'*" \
  "it names the option"
MQ_TABLE=missing expect_status 78 "no such table: 78" "$MQ" top --once

# ---- on a terminal ----
# pty ACTION: runs mq top on a new pty (100x30), waits for its first
# frame (the end of its drawing, ESC [J), then: q (the key), INT, TERM,
# HUP (the signal), WINCH (the window 40 columns wide and the signal,
# then q) or TSTP (the signal, then q). Prints the exit status; whether
# the alternate screen was entered; whether the output ends leaving it
# and showing the cursor; whether the pty's settings are as before;
# whether it ran on after SIGWINCH (after SIGTSTP: and took the screen
# again); the widest line after SIGWINCH.
pty() {
  python3 - "$MQ" "$1" <<'PY'
import fcntl, os, select, signal, struct, subprocess, sys, termios, time
mq, action = sys.argv[1], sys.argv[2]
m, s = os.openpty()
def size(cols):
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 30, cols, 0, 0))
size(100)
before = termios.tcgetattr(s)
p = subprocess.Popen([mq, 'top', '--interval', '200ms'], stdin=s, stdout=s,
                     stderr=s, start_new_session=True)
out = b''
def drain(until, want=None):
    global out
    while time.time() < until:
        r, _, _ = select.select([m], [], [], 0.05)
        if r:
            try:
                out += os.read(m, 65536)
            except OSError:
                return
            if want is not None and want(out):
                return
        elif want is None and p.poll() is not None:
            return
drain(time.time() + 10, lambda o: b'\x1b[J' in o)
alive = 1
mark = len(out)
if action == 'q':
    os.write(m, b'q')
elif action == 'WINCH':
    size(40)
    os.kill(p.pid, signal.SIGWINCH)
    drain(time.time() + 1)
    alive = int(p.poll() is None)
    mark = len(out)
    drain(time.time() + 10, lambda o: o.count(b'\x1b[J', mark) > 0)
    os.write(m, b'q')
elif action == 'TSTP':
    # a process group without a parent in the session is orphaned: the
    # kernel does not stop it, it goes on at once, as after SIGCONT
    os.kill(p.pid, signal.SIGTSTP)
    drain(time.time() + 10, lambda o: o.find(b'\x1b[?1049l\x1b[?25h', mark) >= 0
          and o.find(b'\x1b[?1049h', o.find(b'\x1b[?1049l', mark)) >= 0)
    alive = int(p.poll() is None and
                out.find(b'\x1b[?1049h', out.find(b'\x1b[?1049l', mark)) >= 0)
    os.write(m, b'q')
else:
    os.kill(p.pid, getattr(signal, 'SIG' + action))
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
drain(time.time() + 0.5)
after = termios.tcgetattr(s)
entered = int(b'\x1b[?1049h' in out and b'\x1b[?25l' in out)
ends = int(out.endswith(b'\x1b[?1049l\x1b[?25h'))
# the widest line of the frame drawn after the resize, escapes removed
import re
# (every whole frame: the read that ended the wait may also hold the
# start of the next one, cut short)
frames = re.findall(rb'\x1b\[H(.*?)\x1b\[J', out[mark:], re.S)
lines = [re.sub(rb'\x1b\[[0-9;?]*[A-Za-z]', b'', l).decode('utf-8', 'replace')
         for f in frames for l in f.split(b'\r\n')]
widest = max([len(l) for l in lines] or [0]) if action == 'WINCH' else 0
print(rc, entered, ends, int(before == after), alive, widest)
PY
}
for action in q INT TERM HUP; do
  case $action in
  q | INT) want=0 ;;
  TERM) want=143 ;;
  HUP) want=129 ;;
  esac
  set -- $(pty $action)
  is "${1:-}" "$want" "terminal, $action: exit status $want"
  is "${2:-} ${3:-}" "1 1" \
    "terminal, $action: alternate screen entered, then left, cursor shown"
  is "${2:-} ${4:-}" "1 1" \
    "terminal, $action: the terminal's settings given back"
done
# hang SIGNAL: mq top on a pty while its refresh waits for the server
# (the job table locked by another session for 8 s), then SIGNAL: it
# ends at once (it waited for the server before, up to its read
# timeout), the terminal given back. Prints the exit status, whether it
# ended within 3 s, and whether the output ends leaving the screen.
hang() {
  python3 - "$MQ" "$1" "$MQ_TEST_SOCKET" "$T_DB" <<'PY'
import os, select, signal, subprocess, sys, time
mq, sig, sock, db = sys.argv[1:5]
m, s = os.openpty()
p = subprocess.Popen([mq, 'top', '--interval', '200ms'], stdin=s, stdout=s,
                     stderr=s, start_new_session=True)
out = b''
def drain(until, want):
    global out
    while time.time() < until:
        r, _, _ = select.select([m], [], [], 0.05)
        if r:
            try:
                out += os.read(m, 65536)
            except OSError:
                return
            if want(out):
                return
drain(time.time() + 10, lambda o: b'\x1b[J' in o)
lock = subprocess.Popen(['mariadb', '--no-defaults', '-S', sock, '-uroot', db,
    '-e', 'LOCK TABLES mq_jobs WRITE; SELECT SLEEP(30) /* t324 lock */'],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def sql(q):
    return subprocess.run(['mariadb', '--no-defaults', '-S', sock, '-uroot',
        '-N', '-B', '-e', q], capture_output=True, text=True).stdout.strip()
# the refresh waits for the lock (else the signal would come in the
# wait between refreshes, and prove nothing)
blocked = 0
for _ in range(100):
    if sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '%s'"
           " AND STATE LIKE 'Waiting for table metadata lock%%'" % db) not in ('', '0'):
        blocked = 1
        break
    time.sleep(0.1)
t0 = time.time()
os.kill(p.pid, getattr(signal, 'SIG' + sig))
try:
    rc = p.wait(timeout=6)
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
quick = int(time.time() - t0 < 3)
drain(time.time() + 0.5, lambda o: False)
for i in sql("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE"
             " '%t324 lock%' AND INFO NOT LIKE '%PROCESSLIST%'").split():
    sql('KILL %s' % i)
lock.wait()
print(rc, quick * blocked, int(out.endswith(b'\x1b[?1049l\x1b[?25h')))
PY
}
for sig in TERM INT HUP; do
  case $sig in TERM) want=143 ;; INT) want=0 ;; HUP) want=129 ;; esac
  is "$(hang $sig)" "$want 1 1" "terminal, the server not answering, $sig: ends at once ($want), screen left"
done
set -- $(pty WINCH)
is "${5:-}" 1 "terminal: SIGWINCH does not end it"
is "${1:-} ${3:-} ${4:-}" "0 1 1" \
  "terminal: after SIGWINCH, q ends it, terminal restored"
check "terminal: redrawn to 40 columns (widest line ${6:-})" \
  [ "${6:-99}" -le 40 -a "${6:-0}" -gt 30 ]
set -- $(pty TSTP)
is "${5:-}" 1 \
  "terminal: Ctrl-Z (SIGTSTP) gives the terminal back, then takes it again"
is "${1:-} ${3:-} ${4:-}" "0 1 1" \
  "terminal: after SIGTSTP, q ends it, terminal restored"
done_testing
