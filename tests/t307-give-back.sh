#!/bin/sh
# A claimed job that could not be handed over (output file not writable,
# receipt file not writable, stdout full, the reader gone) is given back
# at once: due again, the delivery not counted, and mq says so in one
# line, instead of leaving it leased until its lease ends.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
"$MQ" push --lines >/dev/null <<'EOL'
j1
j2
j3
EOL
back() { # back DESCRIPTION: every job ready, no attempt counted
  is "$(sql "SELECT GROUP_CONCAT(state, attempts ORDER BY id) FROM mq_jobs")" \
    "ready0,ready0,ready0" "$1: every job ready again, no attempt counted"
}

expect_status 73 "pop -o into a missing directory" "$MQ" pop -o "$T_TMP/none/f"
like "$ERR" "mq pop: cannot write '*/none/f': No such file or directory: the job was given back" \
  "says the job was given back"
back "-o"
expect_status 73 "pop --receipt-file into a missing directory" \
  sh -c '"$0" pop --receipt-file "$1" >/dev/null' "$MQ" "$T_TMP/none/r"
like "$ERR" "mq pop: cannot write receipt to '*/none/r': No such file or directory: the job was given back" "said so"
back "--receipt-file"
expect_status 74 "pop --receipt-file /dev/full (created, not written)" \
  sh -c '"$0" pop --receipt-file /dev/full >/dev/null' "$MQ"
like "$ERR" "mq pop: write failure on '/dev/full' (the receipt): No space left on device: the job was given back" "said so"
back "--receipt-file /dev/full"
# the raw form's receipt goes to stderr: a receipt that cannot be
# written is a job not handed over
sh -c '"$0" pop 2>/dev/full; echo $? >"$1"' "$MQ" "$T_TMP/st" >/dev/null
is "$(cat "$T_TMP/st")" 74 "raw pop, stderr full (no receipt): status 74"
back "stderr full"
expect_status 74 "pop --json --count 3 into a full device" \
  sh -c '"$0" pop --json --count 3 >/dev/full' "$MQ"
like "$ERR" "mq pop: write failure on standard output: No space left on device: the jobs were given back" "said so"
back "/dev/full"
for form in --json --shell "-o /dev/stdout" ""; do
  # the reader is gone before mq writes
  { sleep 0.3; "$MQ" pop $form 2>"$T_TMP/err"; echo $? >"$T_TMP/st"; } |
    (exec 0<&-; sleep 1)
  is "$(cat "$T_TMP/st")" 74 "pop ${form:-(raw)} to a reader gone: status 74"
  like "$(cat "$T_TMP/err")" "mq pop: write failure on *: the job was given back" \
    "said so, in one line (no receipt shown)"
  back "reader gone (${form:-raw})"
done
expect_status 0 "the jobs are claimed at once afterwards" "$MQ" pop --json --count 3
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 3 "all three"

# a reader that takes 3 of 20 big jobs and goes: the jobs written before
# the failed write were handed over (they stay leased: the reader may
# run them), the others are given back
sql "DELETE FROM mq_jobs"
big=$(head -c 6000 /dev/zero | tr '\0' x)
i=0
while [ $i -lt 20 ]; do i=$((i + 1)); echo "$i$big"; done | "$MQ" push --lines --queue big >/dev/null
"$MQ" pop --queue big --json --count 20 2>"$T_TMP/err" | head -n 3 | cut -c1-20 >"$T_TMP/got"
handed=$(sed -n 's/^mq pop: write failure on standard output: Broken pipe: \([0-9]*\) jobs* w[ae][sr]e* handed over, the other \([0-9]*\) given back$/\1 \2/p' "$T_TMP/err")
like "$handed" "[0-9]* [0-9]*" "a reader gone after 3 of 20: some handed over, the rest given back ($(cat "$T_TMP/err"))"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'big' AND state = 'leased'") $(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'big' AND state = 'ready' AND attempts = 0")" \
  "$handed" "as many leased (handed over) and ready (given back, no attempt counted) as it says"
ids=$(sed 's/^{"id":\([0-9]*\),.*/\1/' "$T_TMP/got" | tr '\n' ',')
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE id IN (${ids%,}) AND state = 'leased'")" 3 \
  "the 3 jobs the reader got are among those handed over"

# SIGTERM while a write is blocked (a reader that has not read yet): the
# jobs given back must not reach the reader afterwards (stdio kept the
# rest of the job whose write the signal cut short, and wrote it at
# exit: the reader ran a job that was ready again for another consumer)
sql "DELETE FROM mq_jobs"
big=$(head -c 10000 /dev/zero | tr '\0' y)
i=0
while [ $i -lt 20 ]; do i=$((i + 1)); echo "$i$big"; done | "$MQ" push --lines --queue slow >/dev/null
python3 -c 'import os, signal, subprocess, sys, time
r, w = os.pipe()
p = subprocess.Popen(sys.argv[1:], stdout=w, stderr=subprocess.DEVNULL)
os.close(w)
time.sleep(1.5)
p.send_signal(signal.SIGTERM)
time.sleep(0.5)
data = b""
while True:
    b = os.read(r, 65536)
    if not b:
        break
    data += b
print(p.wait())
for line in data.split(b"\n")[:-1]:   # whole lines: whole jobs
    print(line[6:line.index(b",")].decode())' \
  "$MQ" pop --queue slow --json --count 20 >"$T_TMP/slow"
is "$(head -1 "$T_TMP/slow")" 143 "SIGTERM while the output is blocked: status 143"
is "$(sed 1d "$T_TMP/slow" | sort -n | paste -sd, -)" \
  "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM mq_jobs WHERE queue = 'slow' AND state = 'leased'")" \
  "the jobs the reader got whole are the ones left leased (handed over), none given back"
done_testing
