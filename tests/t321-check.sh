#!/bin/sh
# mq check: the Monitoring Plugins' conventions: exit 0 OK, 1 WARNING,
# 2 CRITICAL, 3 UNKNOWN (usage errors too); one status line on stdout
# naming what crossed which threshold, perfdata after one '|'; nothing on
# stderr but a usage error's line; queue names from the table escaped.
# Every way out is so: bad settings and option files (missing, a directory,
# unreadable, over 1 MiB, a pipe nobody writes to), usage errors before the
# command name, signals, the overall time limit, a closed or full stdout.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# An option file that includes a pipe nobody writes to holds mq check
# up where nothing but its overall limit (50 s) ends it: started now, it
# runs alongside the rest, and is looked at near the end.
mkfifo "$T_TMP/included-fifo"
printf '[client]\n!include %s\n' "$T_TMP/included-fifo" >"$T_TMP/includes-fifo.cnf"
t_inc=$(date +%s)
(timeout -s KILL 60 "$MQ" check --defaults-file "$T_TMP/includes-fifo.cnf" >"$T_TMP/inc.out" \
  2>"$T_TMP/inc.err"; echo $? >"$T_TMP/inc.rc"; date +%s >"$T_TMP/inc.end") &
inc_pid=$!
# ... and with SIGALRM blocked by its parent (the limit's clock)
block_alrm='import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
os.execvp(sys.argv[1], sys.argv[1:])'
(timeout -s KILL 60 python3 -c "$block_alrm" "$MQ" check --defaults-file "$T_TMP/includes-fifo.cnf" \
  >"$T_TMP/inc2.out" 2>"$T_TMP/inc2.err"; echo $? >"$T_TMP/inc2.rc") &
inc2_pid=$!

# check_is STATUS DESCRIPTION ARG...: runs mq check ARG..., expects that
# exit status, exactly one line on stdout, and stderr empty (one line
# for a usage error: STATUS 3 with a "usage error" line)
check_is() {
  want=$1 d=$2
  shift 2
  run "$MQ" check "$@"
  lines=$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')
  if [ "$RC" -ne "$want" ]; then
    not_ok "$d" "exit status $RC, expected $want; stdout: $OUT; stderr: $ERR"
  elif [ "$lines" -ne 1 ] || [ -z "$OUT" ]; then
    not_ok "$d" "stdout is not one line: $OUT"
  elif [ -n "$ERR" ] && ! case $OUT in "MQ UNKNOWN - usage error: "*) true ;; *) false ;; esac; then
    not_ok "$d" "stderr not empty: $ERR"
  else
    ok "$d"
  fi
}
perf() { printf '%s\n' "$OUT" | sed 's/^[^|]*|//'; }
text() { printf '%s\n' "$OUT" | sed 's/ |.*//'; }
# perf_ok QUEUE: the eight items of QUEUE, each in the guidelines' form
# 'label'=value[UOM];[warn];[crit];[min];[max]
perf_ok() {
  for item in ready scheduled waiting leased stale dead held_back; do
    printf '%s\n' "$OUT" | grep -Eq " '$1\\.$item'=[0-9]+;[0-9]*;[0-9]*;0( |\$)" ||
      { echo "no $item item of $1"; return 1; }
  done
  printf '%s\n' "$OUT" | grep -Eq " '$1\\.oldest_ready'=[0-9]+\\.[0-9]{3}s;[0-9.]*;[0-9.]*;0( |\$)" ||
    { echo "no oldest_ready item of $1"; return 1; }
}
# every item after the '|' has the form, and there are N of them
perf_all() {
  n=0
  for item in $(perf); do
    n=$((n + 1))
    printf '%s\n' "$item" | grep -Eq "^'[A-Za-z0-9_.-]+'=[0-9]+(\\.[0-9]+s)?;[0-9.]*;[0-9.]*;0\$" ||
      { echo "malformed: $item"; return 1; }
  done
  [ "$n" -eq "$1" ] || { echo "$n items, expected $1"; return 1; }
}

# ---- no threshold: the table answers ----
check_is 0 "an empty table: OK"
like "$OUT" "MQ OK - 0 queues: 0 ready, 0 stale, 0 dead" "it says so, no perfdata"
seq 1 3 | "$MQ" push --lines --queue a >/dev/null 2>&1
"$MQ" push --queue b x >/dev/null
check_is 0 "no threshold: OK"
like "$(text)" "MQ OK - 2 queues: 4 ready, 0 stale, 0 dead, oldest ready *" \
  "the totals"
r=$(perf_ok a 2>&1 && perf_ok b 2>&1 && perf_all 16 2>&1)
is "$r" "" "perfdata: eight items per queue, each well-formed"
# mq-check(1) says how many items a queue has and shows them in order
man=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/man/mq-check.1.scd
said=$(sed -n 's/^\([a-z]*\) per queue, in the order of the queues:$/\1/p' "$man")
n=0
for w in one two three four five six seven eight nine ten eleven twelve; do
  n=$((n + 1))
  [ "$w" = "$said" ] && break
done
[ "$w" = "$said" ] || n="'$said'"
is "$n" "$(perf | tr ' ' '\n' | grep -c "^'a\.")" \
  "mq-check(1): as many items per queue as it prints ($said)"
is "$(grep "^'mail\.ready'" "$man" | tr ' ' '\n' | sed -n "s/^'mail\.\([a-z_]*\)'=.*/\1/p" | tr '\n' ' ')" \
  "$(perf | tr ' ' '\n' | sed -n "s/^'a\.\([a-z_]*\)'=.*/\1/p" | tr '\n' ' ')" \
  "mq-check(1): its example's items, in the order printed"

# ---- ready (depth) ----
check_is 1 "--warn-ready 2: WARNING" --warn-ready 2
like "$(text)" "MQ WARNING - a: 3 ready > 2 (warning)" "names the queue, value and threshold"
like "$OUT" "* 'a.ready'=3;2;;0 *" "the threshold in a's perfdata"
check_is 2 "--max-ready 2: CRITICAL" --max-ready 2
like "$(text)" "MQ CRITICAL - a: 3 ready > 2 (critical)" "critical, by name"
like "$OUT" "* 'a.ready'=3;;2;0 *" "the threshold in a's perfdata"
check_is 2 "--warn-ready 1 --max-ready 2: critical wins" --warn-ready 1 --max-ready 2
is "$(text)" "MQ CRITICAL - a: 3 ready > 2 (critical)" "a is critical, not also warning; b (1) is neither"
check_is 2 "--warn-ready 0 --max-ready 2: every queue, the worst wins" --warn-ready 0 --max-ready 2
is "$(text)" "MQ CRITICAL - a: 3 ready > 2 (critical); b: 1 ready > 0 (warning)" \
  "the critical queue first, then the warning one"
check_is 0 "--max-ready 3: at the threshold is OK (above it trips)" --max-ready 3
check_is 0 "--queue b --max-ready 2: only b counts" --queue b --max-ready 2
like "$(text)" "MQ OK - queue b: 1 ready, 0 stale, 0 dead, oldest ready *" "one queue's totals"
r=$(perf_ok b 2>&1 && perf_all 8 2>&1)
is "$r" "" "perfdata of b only"
check_is 1 "--queue b --warn-ready 0: WARNING" --queue b --warn-ready 0
check_is 2 "--queue a --max-ready 2: CRITICAL" --queue a --max-ready 2

# ---- the oldest ready job's age ----
sql "UPDATE mq_jobs SET available_at = NOW(6) - INTERVAL 10 MINUTE WHERE queue = 'a' ORDER BY id LIMIT 1"
check_is 1 "--warn-age 5m: WARNING" --warn-age 5m
like "$(text)" "MQ WARNING - a: oldest ready 10m* > 5m00s (warning)" "the age and the threshold, in human units"
check_is 2 "--max-age 5m: CRITICAL" --max-age 5m
like "$(text)" "MQ CRITICAL - a: oldest ready 10m* > 5m00s (critical)" "critical"
check_is 2 "--warn-age 1m --max-age 5m: critical wins" --warn-age 1m --max-age 5m
like "$OUT" "* 'a.oldest_ready'=6[0-9][0-9].[0-9][0-9][0-9]s;60;300;0 *" \
  "perfdata: seconds, UOM s, thresholds in seconds"
check_is 0 "--max-age 1h: OK" --max-age 1h
check_is 0 "--queue b --max-age 5m: b's jobs are young" --queue b --max-age 5m
check_is 1 "--warn-age 500ms: WARNING for both queues" --warn-age 500ms
like "$OUT" "* 'a.oldest_ready'=*;0.5;;0 *" "a fraction of a second as such"

# ---- stale leases ----
"$MQ" push --queue c y >/dev/null
"$MQ" pop --queue c --lease 1h >/dev/null 2>&1
check_is 0 "a live lease: --max-stale 0 is OK" --max-stale 0
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE queue = 'c'"
check_is 1 "--warn-stale 0: WARNING" --warn-stale 0
is "$(text)" "MQ WARNING - c: 1 stale > 0 (warning)" "names c"
check_is 2 "--max-stale 0: CRITICAL" --max-stale 0
like "$OUT" "* 'c.leased'=1;;;0 'c.stale'=1;;0;0 *" "perfdata: leased and stale"
check_is 0 "--queue a --max-stale 0: OK" --queue a --max-stale 0

# ---- dead jobs ----
seq 1 2 | "$MQ" push --lines --queue d >/dev/null 2>&1
"$MQ" pop --queue d --count 2 --json | sed 's/.*"receipt":"\([^"]*\)".*/\1/' |
  while read -r rc; do "$MQ" fail --no-retry "$rc" >/dev/null; done
check_is 1 "--warn-dead 1: WARNING" --warn-dead 1
is "$(text)" "MQ WARNING - d: 2 dead > 1 (warning)" "names d"
check_is 2 "--max-dead 1: CRITICAL" --max-dead 1
check_is 2 "--warn-dead 0 --max-dead 1: critical wins" --warn-dead 0 --max-dead 1
check_is 0 "--max-dead 2: OK" --max-dead 2
like "$OUT" "* 'd.dead'=2;;2;0 *" "perfdata: dead"
check_is 0 "--queue a --max-dead 0: OK" --queue a --max-dead 0

# ---- all at once ----
check_is 2 "several thresholds, several queues: the worst wins" \
  --max-dead 1 --warn-stale 0 --warn-age 5m --max-ready 100
is "$(text)" "MQ CRITICAL - d: 2 dead > 1 (critical); a: oldest ready $(text | sed 's/.*a: oldest ready \([^ ]*\) .*/\1/') > 5m00s (warning); c: 1 stale > 0 (warning)" \
  "every crossing, critical first"
r=$(perf_all 32 2>&1)
is "$r" "" "perfdata of all four queues well-formed"

# ---- a paused queue ----
"$MQ" pause b >/dev/null
check_is 0 "a paused queue alone is OK" --queue b
like "$(text)" "MQ OK - queue b: *; paused: b" "the text says it is paused"
check_is 1 "a paused queue with a tripped threshold" --warn-ready 0 --queue b
like "$(text)" "MQ WARNING - b: 1 ready > 0 (warning); paused: b" "tripped and paused"

# ---- UNKNOWN ----
run env MQ_SOCKET=/nonexistent "$MQ" check --max-dead 1
is "$RC" 3 "no server: UNKNOWN (3)"
like "$OUT" "MQ UNKNOWN - *nonexistent*" "the status line says why"
is "$ERR" "" "nothing on stderr"
check_is 3 "no such table: UNKNOWN" --table nope
like "$OUT" "MQ UNKNOWN - *nope*mq init*" "the status line names the table"
sql "CREATE TABLE notmq (x INT)"
check_is 3 "a table that is not an mq table: UNKNOWN" --table notmq
check_is 3 "access denied: UNKNOWN" --user t321_nobody
like "$OUT" "MQ UNKNOWN - cannot connect: Access denied*(error 1045)" "the status line says why"
check_is 3 "no such database: UNKNOWN" --database t321_no_such_db
run env -u MQ_DATABASE "$MQ" check
is "$RC:$ERR" "3:" "no database chosen: UNKNOWN, stderr empty"
like "$OUT" "MQ UNKNOWN - no database selected*" "the status line says why"
check_is 3 "TLS required, the server has none: UNKNOWN" --ssl-verify-server-cert
check_is 3 "a bad number: UNKNOWN (usage error)" --max-dead x
like "$OUT" "MQ UNKNOWN - usage error: *--max-dead*" "a status line on stdout"
like "$ERR" "mq check: *--max-dead*" "and the usual line on stderr"
check_is 3 "a bad duration: UNKNOWN" --warn-age soon
check_is 3 "an operand: UNKNOWN" extra
check_is 3 "an unknown option: UNKNOWN" --max-depth 3
check_is 3 "a bad queue name: UNKNOWN" --queue 'a|b'
run "$MQ" check -h
is "$RC" 0 "-h: 0, as every mq command"

# ---- every way out is the guidelines': settings, signals, output ----
# usage errors before the command name are check's too
check_is 3 "mq check --port 0: UNKNOWN (usage error)" --port 0
for pre in "--port 0" "--table bad-name" "--bogus" "--queue mail" "--bogus x" \
    "-q x" "--max-age 5m"; do
  # shellcheck disable=SC2086
  run "$MQ" $pre check
  lines=$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')
  case $RC:$lines:$OUT in
  "3:1:MQ UNKNOWN - usage error: "*) ok "mq $pre check: UNKNOWN (3), one status line" ;;
  *) not_ok "mq $pre check: UNKNOWN (3), one status line" "status $RC; stdout: $OUT; stderr: $ERR" ;;
  esac
  like "$ERR" "mq: *" "mq $pre check: the usage error's line on stderr too"
done
run env MQ_PORT=0 "$MQ" check
is "$RC:$OUT" "3:MQ UNKNOWN - usage error: invalid value for MQ_PORT: '0' (an integer from 1 to 65535)" \
  "MQ_PORT=0: UNKNOWN (usage error)"
run env MQ_TABLE=bad-name "$MQ" check
like "$RC:$OUT" "3:MQ UNKNOWN - usage error: *MQ_TABLE*" "MQ_TABLE=bad-name: UNKNOWN (usage error)"

# option files that cannot be read: UNKNOWN, on stdout only
check_is 3 "a missing option file: UNKNOWN" --defaults-file "$T_TMP/nothing-here.cnf"
like "$OUT" "MQ UNKNOWN - cannot read option file '*nothing-here.cnf': No such file or directory" "it says why"
check_is 3 "a directory as option file: UNKNOWN" --defaults-file "$T_TMP"
like "$OUT" "MQ UNKNOWN - *Is a directory" "it says why"
check_is 3 "a device as option file: UNKNOWN" --defaults-file /dev/zero
printf '[client]\n' >"$T_TMP/unreadable.cnf"
chmod 000 "$T_TMP/unreadable.cnf"
if [ "$(id -u)" -ne 0 ]; then
  check_is 3 "an unreadable option file: UNKNOWN" --defaults-file "$T_TMP/unreadable.cnf"
  like "$OUT" "MQ UNKNOWN - *Permission denied" "it says why"
elif setpriv --bounding-set=-dac_override,-dac_read_search true 2>/dev/null; then
  # root reads any file: without the capabilities that let it
  run setpriv --bounding-set=-dac_override,-dac_read_search "$MQ" check \
    --defaults-file "$T_TMP/unreadable.cnf"
  is "$RC:$OUT:$ERR" "3:MQ UNKNOWN - cannot read option file '$T_TMP/unreadable.cnf': Permission denied:" \
    "an unreadable option file: UNKNOWN (root without CAP_DAC_OVERRIDE)"
  ok "it says why"
else
  ok "an unreadable option file: UNKNOWN # SKIP root, and setpriv cannot drop CAP_DAC_OVERRIDE"
  ok "it says why # SKIP root"
fi
# over 1 MiB: a file, and a pipe
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "# a comment line of sixty characters or so .........\n" }' \
  >"$T_TMP/big.cnf"
check_is 3 "an option file over 1 MiB: UNKNOWN" --defaults-file "$T_TMP/big.cnf"
like "$OUT" "MQ UNKNOWN - cannot read option file '*big.cnf': larger than 1 MiB" "it says why"
mkfifo "$T_TMP/big-pipe"
cat "$T_TMP/big.cnf" >"$T_TMP/big-pipe" 2>/dev/null &
check_is 3 "a piped option file over 1 MiB: UNKNOWN" --defaults-file "$T_TMP/big-pipe"
like "$OUT" "MQ UNKNOWN - cannot read option file '*big-pipe': larger than 1 MiB" "it says why"
wait $!
# where the other commands exit 78 with their line on stderr
run "$MQ" stats --defaults-file "$T_TMP/big.cnf"
like "$RC:$OUT:$ERR" "78::mq stats: cannot read option file '*big.cnf': larger than 1 MiB" \
  "mq stats with it: 78, as mq(1) says"
# a pipe read whole is fine
mkfifo "$T_TMP/small-pipe"
printf '[client]\n' >"$T_TMP/small-pipe" &
check_is 0 "a piped option file written and closed: OK" --defaults-file "$T_TMP/small-pipe" --queue a
wait $!
# a pipe nobody writes to: UNKNOWN after 10 s, not for ever
mkfifo "$T_TMP/fifo"
t0=$(date +%s)
check_is 3 "a pipe nobody writes to as option file: UNKNOWN" --defaults-file "$T_TMP/fifo"
t1=$(date +%s)
like "$OUT" "MQ UNKNOWN - cannot read option file '*fifo': nothing written to it in 10 s" "it says why"
check "... after 10 s ($((t1 - t0)) s)" test $((t1 - t0)) -ge 9 -a $((t1 - t0)) -le 13
# a pipe whose writer never ends: the same, it is not read for ever
mkfifo "$T_TMP/slow-pipe"
(printf '[client]\n'; exec sleep 13) >"$T_TMP/slow-pipe" &
slow=$!
check_is 3 "a pipe written but never closed: UNKNOWN" --defaults-file "$T_TMP/slow-pipe"
like "$OUT" "MQ UNKNOWN - cannot read option file '*slow-pipe': not written to its end in 10 s" "it says why"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
(printf '[client]\n'; exec sleep 13) >"$T_TMP/slow-pipe" &
slow=$!
run "$MQ" stats --defaults-file "$T_TMP/slow-pipe"
like "$RC:$OUT:$ERR" "78::mq stats: cannot read option file '*slow-pipe': not written to its end in 10 s" \
  "mq stats with it: 78, as mq(1) says"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null

# signals: SIGTERM, SIGINT, SIGHUP while it waits (on a pipe nobody
# writes to) are UNKNOWN too; SIGINT at its default, as in a terminal
# (and SIGQUIT, SIGUSR1, SIGUSR2, which would end it with no line; a
# background job of this shell starts with SIGQUIT ignored too, which
# mq leaves so: at its default here, as in a terminal)
as_terminal='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
for sig in TERM INT HUP QUIT USR1 USR2; do
  python3 -c "$as_terminal" "$MQ" check --defaults-file "$T_TMP/fifo" \
    >"$T_TMP/sig.out" 2>"$T_TMP/sig.err" &
  pid=$!
  sleep 1
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  case $sig in
  USR*) line="MQ UNKNOWN - stopped by SIGUSR1 or SIGUSR2" ;;
  *) line="MQ UNKNOWN - stopped by SIG$sig" ;;
  esac
  is "$rc:$(cat "$T_TMP/sig.out"):$(cat "$T_TMP/sig.err")" \
    "3:$line:" "SIG$sig: UNKNOWN (3), one line, stderr empty"
done

# its own output: a reader gone is 3, not death by SIGPIPE (141); a
# full disk is 3, with the line on stderr (nowhere else to say it)
closed_stdout='import os, subprocess, sys
r, w = os.pipe()
os.close(r)
print(subprocess.run(sys.argv[1:], stdout=w).returncode)'
run python3 -c "$closed_stdout" "$MQ" check
is "$OUT:$ERR" "3:" "stdout a pipe nobody reads: 3, nothing on stderr"
run python3 -c "$closed_stdout" "$MQ" check --max-dead x
is "$OUT" "3" "... a usage error too"
run python3 -c "$closed_stdout" "$MQ" --port 0 check
is "$OUT" "3" "... one before the command name too"
"$MQ" check >/dev/full 2>"$T_TMP/full.err"
is "$?:$(cat "$T_TMP/full.err")" "3:mq check: write failure on standard output: No space left on device" \
  "stdout a full disk: 3, the line on stderr"

# the include of a pipe nobody writes (started at the top): the overall
# limit ends it, UNKNOWN
wait "$inc_pid"
is "$(cat "$T_TMP/inc.rc"):$(cat "$T_TMP/inc.out"):$(cat "$T_TMP/inc.err")" \
  "3:MQ UNKNOWN - timed out after 50 s:" "an included pipe nobody writes to: UNKNOWN after 50 s"
check "... ended by the limit ($(($(cat "$T_TMP/inc.end") - t_inc)) s)" \
  test $(($(cat "$T_TMP/inc.end") - t_inc)) -ge 49 -a $(($(cat "$T_TMP/inc.end") - t_inc)) -le 53
wait "$inc2_pid"
is "$(cat "$T_TMP/inc2.rc"):$(cat "$T_TMP/inc2.out"):$(cat "$T_TMP/inc2.err")" \
  "3:MQ UNKNOWN - timed out after 50 s:" "... SIGALRM blocked by its parent: the same"

# ---- a hostile queue name: ESC, quote, |, =, newline ----
sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs (queue, payload) VALUES (CONCAT('h', CHAR(27), '[31m''|x=1;', CHAR(10), 'MQ OK - y'), 'z')"
check_is 1 "a hostile queue name: one status line, WARNING" --warn-ready 2
is "$(printf '%s\n' "$OUT" | tr -cd '|' | wc -c | tr -d ' ')" 1 "exactly one '|' in the line"
case $OUT in
*"$(printf '\033')"*) not_ok "no ESC in the output" "$OUT" ;;
*) ok "no ESC in the output" ;;
esac
like "$(text)" "MQ WARNING - a: 3 ready > 2 (warning); paused: b" "the hostile name trips nothing"
check_is 1 "its threshold trips" --warn-ready 0
like "$(text)" "*; h\\\\x1b[31m'\\\\x7cx=1;\\\\x0aMQ OK - y: 1 ready > 0 (warning)*" \
  "named escaped: \\x1b, \\x7c for '|', \\x0a"
is "$(printf '%s\n' "$OUT" | tr -cd '|' | wc -c | tr -d ' ')" 1 "still one '|'"
r=$(perf_all 32 2>&1)
is "$r" "" "its perfdata is left out; the others' well-formed"
# a queue the table never knew: a typo must not pass for ever
check_is 3 "--queue nosuch (never known): UNKNOWN" --queue nosuch --max-ready 5
is "$OUT" "MQ UNKNOWN - queue nosuch: no such queue (no job, count or setting; --allow-unknown takes it as empty)" \
  "  the line names it, and the option"
check_is 0 "--queue nosuch --allow-unknown: OK with zeros" --queue nosuch --allow-unknown
like "$OUT" "MQ OK - queue nosuch: 0 ready, 0 stale, 0 dead | *" "  its zeros"
check_is 0 "--allow-unknown without --queue changes nothing" --allow-unknown
"$MQ" pause known0 >/dev/null
check_is 0 "a queue known by its setting only (paused, no job): OK" --queue known0
"$MQ" resume known0 >/dev/null
"$MQ" push --queue gone0 x >/dev/null
"$MQ" pop --queue gone0 --receipt-file "$T_TMP/r0" >/dev/null
"$MQ" ack "$(cat "$T_TMP/r0")"
"$MQ" archive --older-than 0s --quiet
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'gone0'")" 0 "  (gone0's job archived)"
check_is 0 "a queue whose every job finished and was archived: known, OK" --queue gone0
done_testing
