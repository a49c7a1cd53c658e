#!/bin/sh
# Started with standard descriptors closed: no socket or file of mq ever
# takes 0, 1 or 2. Commands that must read stdin or hand something over
# on stdout refuse to start (74) before claiming or pushing anything;
# the others run with the closed ones on /dev/null.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

n_jobs() { sql "SELECT COUNT(*) FROM mq_jobs"; }

expect_status 74 "push with stdout closed: refused" timeout 20 sh -c '"$0" push x >&-' "$MQ"
like "$ERR" "mq push: standard output is closed: nothing done" "said so"
is "$(n_jobs)" 0 "nothing pushed"
expect_status 74 "push --lines with stdout closed: refused" \
  timeout 20 sh -c 'printf "a\nb\n" | "$0" push --lines >&-' "$MQ"
expect_status 74 "push --lines with stdin closed: refused" \
  timeout 20 sh -c '"$0" push --lines <&-' "$MQ"
like "$ERR" "mq push: standard input is closed: nothing done" "said so"
expect_status 74 "push from stdin, stdin closed: refused" timeout 20 sh -c '"$0" push <&-' "$MQ"
is "$(n_jobs)" 0 "nothing pushed by any of them"
expect_status 0 "push PAYLOAD with stdin closed works" timeout 20 sh -c '"$0" push one <&-' "$MQ"
is "$OUT" 1 "and prints its id"
expect_status 0 "push --lines with stderr closed works" \
  timeout 20 sh -c 'printf "two\nthree\n" | "$0" push --lines 2>&-' "$MQ"
is "$OUT" "2
3" "ids printed"

printf '[t303]\ncron = @daily\nqueue = s303\n' >"$T_TMP/s.conf"
"$MQ" schedule apply "$T_TMP/s.conf" >/dev/null
expect_status 74 "schedule run with stdout closed: refused" timeout 20 sh -c '"$0" schedule run t303 >&-' "$MQ"
like "$ERR" "mq schedule: standard output is closed: nothing done" "said so"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 's303'")" 0 "no run pushed"
expect_status 74 "push --cron with stdout closed: refused" timeout 20 sh -c '"$0" push --cron @daily --queue s303 x >&-' "$MQ"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_schedules")" 1 "no schedule made"

expect_status 74 "pop with stdout closed: refused" timeout 20 sh -c '"$0" pop --json >&-' "$MQ"
like "$ERR" "mq pop: standard output is closed: nothing done" "said so"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state = 'ready' AND attempts = 0")" 3 \
  "nothing claimed"
timeout 20 sh -c '"$0" pop 2>&-; echo $? >"$1"' "$MQ" "$T_TMP/st" >/dev/null
is "$(cat "$T_TMP/st")" 74 "raw pop with stderr (its receipt's way) closed: refused"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state = 'ready' AND attempts = 0")" 3 \
  "nothing claimed"
expect_status 0 "pop with stdin and stderr closed works" \
  timeout 20 sh -c '"$0" pop --json <&- 2>&-' "$MQ"
like "$OUT" '{"id":1,*"payload":"one"}' "and hands the job over"

# mq work with stderr closed: a job's stderr must not reach the server
# connection (on 5f2058a the job wrote a statement of its choosing there)
sql "DELETE FROM mq_jobs"
"$MQ" push --lines >/dev/null <<'EOL'
w1
w2
w3
EOL
cat >"$T_TMP/job.sh" <<'EOJ'
#!/bin/sh
cat >/dev/null
printf '\003\000\000\000\003UPDATE mq_jobs SET priority = 99' >&2
printf 'junk on stdout\n'
exit 0
EOJ
chmod +x "$T_TMP/job.sh"
for fd in 2 1 0; do
  sql "UPDATE mq_jobs SET state = 'ready', leased_until = NULL, attempts = 0, finished_at = NULL"
  expect_status 0 "work with fd $fd closed: exit 0" \
    timeout 20 sh -c "\"\$0\" work --exit-when-empty -- \"\$1\" $fd>&-" "$MQ" "$T_TMP/job.sh"
  is "$(sql "SELECT GROUP_CONCAT(state, priority ORDER BY id) FROM mq_jobs")" \
    "done0,done0,done0" "fd $fd closed: every job done, none changed by a job's output"
done

# stdin open but left non-blocking by the producer (a pipe whose writer
# is slow): mq push waits for its input (on 6f40b45 the single push
# failed at once, 74 "cannot read standard input")
cat >"$T_TMP/nonblock.py" <<'EOP'
import os, fcntl, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen(sys.argv[1:], stdin=r, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
os.close(r)
try:
    time.sleep(0.3)
    os.write(w, b"slow")
    time.sleep(0.3)
    os.write(w, b"-writer\n")
except BrokenPipeError:
    pass
os.close(w)
o, e = p.communicate()
sys.stdout.write("%d %s %s" % (p.returncode, o.decode().strip(), e.decode().strip()))
EOP
for form in "" --lines; do
  set -- $(python3 "$T_TMP/nonblock.py" "$MQ" push --quiet --queue nb $form)
  is "$# ${1:-}" "2 0" "push $form from a non-blocking stdin: status 0, one id ($*)"
  is "$(sql "SELECT CAST(payload AS CHAR) FROM mq_jobs WHERE id = '${2:-0}'")" \
    "slow-writer$([ -z "$form" ] && printf '\\n')" "push $form: the whole input"
done

# open the wrong way round: stdout read-only (1<&0, 1</dev/null), stdin
# write-only. Nothing is pushed or claimed (on 6f40b45 push inserted the
# jobs and then failed to print their ids, 74: a producer that retries
# pushes them twice)
sql "DELETE FROM mq_jobs WHERE queue = 'ro'"
expect_status 74 "push with stdout read-only: 74" sh -c '"$0" push --queue ro x 1</dev/null' "$MQ"
is "$ERR" "mq push: standard output is not open for writing: nothing done" "it says so"
expect_status 74 "push --lines with stdout read-only (1<&0): 74" sh -c 'printf "a\nb\n" | "$0" push --queue ro --lines 1<&0' "$MQ"
expect_status 74 "push with stdin write-only: 74" sh -c '"$0" push --queue ro 0>"$1"' "$MQ" "$T_TMP/wo"
is "$ERR" "mq push: standard input is not open for reading: nothing done" "it says so"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'ro'")" 0 "nothing was pushed"
"$MQ" push --queue ro y >/dev/null
expect_status 74 "pop --json with stdout read-only: 74" sh -c '"$0" pop --queue ro --json 1</dev/null' "$MQ"
run sh -c '"$0" pop --queue ro 2</dev/null' "$MQ"
is "$RC $OUT" "74 " "pop (raw) with stderr read-only (its receipt's place): 74, no payload"
is "$(sql "SELECT state, attempts FROM mq_jobs WHERE queue = 'ro'" | tr '\t' ' ')" "ready 0" \
  "the job was never claimed"

done_testing
