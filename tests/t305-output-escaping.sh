#!/bin/sh
# Table data is untrusted in output: rows that a producer with INSERT
# alone could write (queue names full of ESC, quotes, backslashes,
# newlines, NUL; payloads of any bytes, invalid UTF-8 included) reach
# neither a terminal raw nor break a machine format: mq stats (table,
# --json, --prometheus), mq pop (--json, --shell), the error line, and
# the commands that only count (requeue-stale --dry-run, archive, work),
# and the operator's commands (ls, why, show, check, top, retry): errors,
# leased_by, dedup keys and the history's workers and errors too.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

# only printable ASCII and newlines in file $1: no ESC, no other control
# byte, nothing above 0x7e
printable() {
  [ "$(LC_ALL=C tr -d '\n\040-\176' <"$1" | wc -c)" -eq 0 ]
}
# has_line FILE LINE DESCRIPTION: FILE has LINE, byte for byte
has_line() {
  if grep -Fxq -e "$2" "$1"; then ok "$3"; else not_ok "$3" "no line: $2"; fi
}
# the bytes of stdin in hex, one line
hex() {
  od -An -v -tx1 | tr -d ' \n'
}

# ---- hostile queue names, as rows an older server lets in ----
# The CHECK constraints of newer schemas would refuse them: switched off
# for the session, as an old server has none.
esc=$(printf 'e\033[2Jx\033]0;pwn\007')
forge=$(printf 'q"} 1\nmq_jobs{table="mq_jobs",queue="forged",state="ready"} 99\n#')
long=$(printf 'L%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30)
plant() { # plant QUEUE-SQL-EXPR N: N ready jobs in that queue
  i=0
  while [ "$i" -lt "$2" ]; do
    sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs (queue, payload) VALUES ($1, 'x')" ||
      echo "# cannot plant $1" >&2
    i=$((i + 1))
  done
}
# hex literals: the bytes exactly, whatever the client's quoting
qhex() { printf '%s' "$1" | hex; }
plant "0x$(qhex "$esc")" 1
plant "0x$(qhex "$forge")" 1
plant "0x$(qhex "$(printf 'back\\slash\\x1b')")" 1
plant "0x$(qhex "$(printf 'tab\tcr\rdel\177')")" 1
plant "CONCAT('nul', 0x00, 'x')" 1
plant "'nul'" 2
plant "0x$(qhex "$long$(printf '\033[31m')")" 3
is "$(sql "SELECT COUNT(DISTINCT queue) FROM mq_jobs")" 7 "7 hostile queues planted"

# ---- mq stats: the table ----
expect_status 0 "stats with hostile queue names" "$MQ" stats
"$MQ" stats >"$T_TMP/stats" 2>&1
check "stats: only printable ASCII reaches the terminal" printable "$T_TMP/stats"
is "$(grep -c '' "$T_TMP/stats")" 9 "stats: a header, 7 queues, the archive: no name broke a line"
row() { # row PREFIX: the READY count of the row starting with PREFIX
  P=$1 awk 'BEGIN { p = ENVIRON["P"] }
    index($0, p) == 1 { print substr($0, length(p) + 1) }' "$T_TMP/stats" |
    awk '{ print $1 }'
}
is "$(row 'e\x1b[2Jx\x1b]0;pwn\x07 ')" 1 "ESC and BEL shown in hex (x1b, x07)"
is "$(row 'q"} 1\x0amq_jobs{table="mq_jobs",queue="forged",state="ready"} 99\x0a# ')" 1 \
  "newlines shown in hex, the row on one line"
is "$(row 'back\\slash\\x1b ')" 1 "a backslash shown doubled"
is "$(row 'tab\x09cr\x0ddel\x7f ')" 1 "tab, CR and DEL shown in hex"
is "$(row 'nul\x00x ')" 1 "a name with NUL is shown whole, the NUL in hex"
is "$(row 'nul ')" 2 "and is not counted as queue 'nul'"
is "$(row "$long\\x1b[31m ")" 3 "a name longer than the column: escaped, counted"
is "$(grep -v '^archive:' "$T_TMP/stats" | awk '{ print length($0) }' | sort -u | wc -l | tr -d ' ')" 1 \
  "the queue column widens to the longest shown name: every line as long"

# ---- mq stats --json ----
expect_status 0 "stats --json" "$MQ" stats --json
printf '%s\n' "$OUT" >"$T_TMP/stats.json"
check "stats --json: only printable ASCII" printable "$T_TMP/stats.json"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for q in d["queues"]:
    print(q["queue"].encode("latin-1").hex(), q["ready"])' "$T_TMP/stats.json" | sort | tr '\n' ' ')" \
  "$( { printf '%s 1\n' "$(qhex "$esc")" "$(qhex "$forge")" \
        "$(qhex "$(printf 'back\\slash\\x1b')")" "$(qhex "$(printf 'tab\tcr\rdel\177')")" \
        "$(printf 'nul\000x' | hex)"
      printf '%s 2\n' "$(qhex nul)"
      printf '%s 3\n' "$(qhex "$long$(printf '\033[31m')")"; } | sort | tr '\n' ' ')" \
  "stats --json: valid JSON, every name decodes to its stored bytes"

# ---- mq stats --prometheus ----
expect_status 0 "stats --prometheus" "$MQ" stats --prometheus
printf '%s\n' "$OUT" >"$T_TMP/metrics.prom"
check "prometheus: only printable ASCII" printable "$T_TMP/metrics.prom"
is "$(grep -c 'queue="forged"' "$T_TMP/metrics.prom")" 0 "prometheus: no forged sample line"
is "$(grep -vc '^#' "$T_TMP/metrics.prom")" 134 "prometheus: 11 gauges (6 states of mq_jobs, held back included) and 8 counters per queue (7 queues) and the archive's, no more"
is "$(grep -c '^mq_jobs{table="mq_jobs",queue="' "$T_TMP/metrics.prom")" 42 \
  "prometheus: every mq_jobs sample line starts as one"
has_line "$T_TMP/metrics.prom" \
  'mq_jobs{table="mq_jobs",queue="q\"} 1\\x0amq_jobs{table=\"mq_jobs\",queue=\"forged\",state=\"ready\"} 99\\x0a#",state="ready"} 1' \
  'prometheus: a quote escaped, a newline as the table shows it (\x0a), escaped'
has_line "$T_TMP/metrics.prom" \
  'mq_jobs{table="mq_jobs",queue="back\\\\slash\\\\x1b",state="ready"} 1' \
  'prometheus: a backslash as the table shows it (doubled), escaped'
has_line "$T_TMP/metrics.prom" \
  'mq_jobs{table="mq_jobs",queue="e\\x1b[2Jx\\x1b]0;pwn\\x07",state="ready"} 1' \
  'prometheus: other control characters as hex text'
has_line "$T_TMP/metrics.prom" \
  'mq_jobs{table="mq_jobs",queue="nul\\x00x",state="ready"} 1' \
  'prometheus: NUL as hex text'
promtool_check "$T_TMP/metrics.prom" "promtool check metrics passes"

# Two names the old label form merged: ESC, and a real backslash then
# x1b (the table shows them as q\x1b[31mevil and q\\x1b[31mevil): two
# series, each label value decoding to the name as the table shows it.
"$MQ" init --table t305p >/dev/null
sql "SET SESSION check_constraint_checks=0; INSERT INTO t305p (queue, payload) VALUES (CONCAT('q', CHAR(27), '[31mevil'), 'x'), (CONCAT('q', CHAR(92), 'x1b[31mevil'), 'x'), (CONCAT('q', CHAR(92), 'x1b[31mevil'), 'x')"
expect_status 0 "stats --prometheus, ESC and backslash names" "$MQ" --table t305p stats --prometheus
printf '%s\n' "$OUT" >"$T_TMP/esc.prom"
has_line "$T_TMP/esc.prom" 'mq_jobs{table="t305p",queue="q\\x1b[31mevil",state="ready"} 1' \
  'prometheus: ESC as \x1b, escaped'
has_line "$T_TMP/esc.prom" 'mq_jobs{table="t305p",queue="q\\\\x1b[31mevil",state="ready"} 2' \
  'prometheus: a backslash then x1b as \\x1b, escaped: another series'
is "$(grep -v '^#' "$T_TMP/esc.prom" | sed 's/} .*//' | sort | uniq -d | wc -l | tr -d ' ')" 0 \
  "prometheus: no two samples with the same name and labels"
is "$(python3 -c '
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"mq_jobs\{table=\"t305p\",queue=\"((?:[^\"\\]|\\.)*)\",state=\"ready\"\}", line)
    if m:
        print(re.sub(r"\\(.)", lambda c: {"n": "\n"}.get(c.group(1), c.group(1)), m.group(1)))' "$T_TMP/esc.prom" | LC_ALL=C sort | tr '\n' ' ')" \
  'q\\x1b[31mevil q\x1b[31mevil ' "prometheus: the label values decode to the names as the table shows them"
expect_status 0 "stats, ESC and backslash names" "$MQ" --table t305p stats
is "$(printf '%s\n' "$OUT" | awk '/^q/ { print $1 }' | LC_ALL=C sort | tr '\n' ' ')" \
  'q\\x1b[31mevil q\x1b[31mevil ' "stats: the table shows the two names as the labels carry them"
promtool_check "$T_TMP/esc.prom" "promtool check metrics passes (two queues)"

# ---- counting commands: nothing of the names reaches their output ----
sql "SET SESSION check_constraint_checks=0; UPDATE mq_jobs SET state = 'leased', leased_until = NOW(6) - INTERVAL 1 SECOND, lease_token = 0x0123456789abcdef0123456789abcdef, attempts = 1 WHERE queue <> 'nul'"
"$MQ" requeue-stale --dry-run >"$T_TMP/rq" 2>&1
is "$(cat "$T_TMP/rq")" "requeued 8 (dry run)
dead 0 (dry run)" "requeue-stale --dry-run counts the stale hostile jobs"
"$MQ" requeue-stale >"$T_TMP/rq" 2>&1
check "requeue-stale: only printable ASCII" printable "$T_TMP/rq"
sql "SET SESSION check_constraint_checks=0; UPDATE mq_jobs SET state = 'done', finished_at = NOW(6) - INTERVAL 1 DAY, leased_until = NULL, lease_token = NULL WHERE queue = 0x$(qhex "$esc")"
"$MQ" stats --recount >/dev/null 2>&1
"$MQ" archive --older-than 1h >"$T_TMP/ar" 2>&1
is "$(cat "$T_TMP/ar")" "archived 1 job" "archive moves the hostile done job, says only how many"
"$MQ" stats >"$T_TMP/stats" 2>&1
check "stats after archive: only printable ASCII" printable "$T_TMP/stats"

# ---- the error line: a name the server gives back ----
db=$(printf 't305\033[2J\033]0;x\007')
sql_root "CREATE DATABASE \`$db\`"
run "$MQ" stats --database "$db"
printf '%s\n' "$OUT$ERR" >"$T_TMP/err"
check "an error naming a database with ESC: only printable ASCII" printable "$T_TMP/err"
check "the name is shown with ESC in hex" grep -Fq \
  "'t305\\x1b[2J\\x1b]0;x\\x07.mq_jobs' does not exist" "$T_TMP/err"
is "$RC" 78 "and the status is still the schema's"
sql_root "DROP DATABASE \`$db\`"
# a server message with table data in it (here a trigger's): one line,
# nothing raw
sql "$(printf "CREATE TRIGGER t305_no BEFORE UPDATE ON mq_jobs FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no \033[2J\\\\\\\\ \\\\n\\\\r end'")"
"$MQ" push --queue s x >/dev/null
run "$MQ" pop --queue s
printf '%s\n' "$ERR" >"$T_TMP/err"
is "$RC" 70 "pop fails on the trigger's message"
check "a server message with ESC, CR, newline: only printable ASCII" printable "$T_TMP/err"
is "$(grep -c '' "$T_TMP/err")" 1 "and one line"
sql "DROP TRIGGER t305_no"

# ---- mq pop: payloads of any bytes, and a queue name as the row has it ----
sql "DELETE FROM mq_jobs"
set -- \
  "$(printf 'color \033[31mred\033[0m and a title \033]0;x\007')" \
  "$(printf 'quotes '"'"'single'"'"' "double" `tick` $(id) ${x} \\ \\\\ end')" \
  "$(printf 'lines\nand\r\ncr\n\nx')" \
  "$(printf 'bad \377 utf8')" \
  "$(printf 'overlong \300\200 nul')" \
  "$(printf 'lone \342\202 end')" \
  "$(printf 'del \177 c1 \302\233 ok \342\202\254')"
n=$#
for p in "$@"; do
  printf '%s' "$p" | "$MQ" push --queue p >/dev/null
done
printf 'with\000nul\000\377' | "$MQ" push --queue p >/dev/null
sql "SET SESSION check_constraint_checks=0; INSERT INTO mq_jobs (queue, payload, priority) VALUES ('p  ', 'spaces', 1)"
"$MQ" pop --queue p --count 20 --shell >"$T_TMP/shell"
is "$(sed -n 1p "$T_TMP/shell")" "MQ_COUNT=$((n + 2))" "pop --shell claimed them all"
for sh in sh bash; do
  command -v "$sh" >/dev/null 2>&1 || continue
  got=$("$sh" -c '
    eval "$(cat "$1")"
    i=1
    while [ "$i" -le "$MQ_COUNT" ]; do
      eval "p=\${MQ_PAYLOAD_$i-}"
      eval "b=\${MQ_PAYLOAD_BASE64_$i-}"
      if [ -n "$b" ]; then
        printf "b64:%s\n" "$(printf "%s" "$b" | base64 -d | od -An -v -tx1 | tr -d " \n")"
      else
        printf "%s\n" "$(printf "%s" "$p" | od -An -v -tx1 | tr -d " \n")"
      fi
      i=$((i + 1))
    done
    printf "queue:%s\n" "$(printf "%s" "$MQ_QUEUE_'"$((n + 2))"'" | od -An -v -tx1 | tr -d " \n")"
  ' sh "$T_TMP/shell" 2>&1)
  want=$(for p in "$@"; do printf '%s' "$p" | hex; echo; done
    printf 'b64:'; printf 'with\000nul\000\377' | hex; echo
    printf '%s' spaces | hex; echo
    printf 'queue:'; printf 'p  ' | hex; echo)
  is "$got" "$want" "pop --shell: $sh's eval gives back every payload and the queue byte for byte"
done

sql "SET SESSION check_constraint_checks=0; UPDATE mq_jobs SET state = 'ready', lease_token = NULL, leased_until = NULL"
"$MQ" pop --queue p --count 20 --json >"$T_TMP/json"
is "$(python3 -c '
import base64, json, sys
for line in open(sys.argv[1], "rb"):
    d = json.loads(line)
    p = base64.b64decode(d["payload_base64"]) if "payload_base64" in d else d["payload"].encode("utf-8")
    print(p.hex(), d["queue"].encode("utf-8").hex())' "$T_TMP/json")" \
  "$(for p in "$@"; do printf '%s %s\n' "$(printf '%s' "$p" | hex)" "$(qhex p)"; done
     printf '%s %s\n' "$(printf 'with\000nul\000\377' | hex)" "$(qhex p)"
     printf '%s %s\n' "$(qhex spaces)" "$(qhex 'p  ')")" \
  "pop --json: every line is JSON, every payload and queue exact"
check "pop --json: only printable ASCII and UTF-8 text" python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
sys.exit(any(c < 0x20 and c != 0x0a or c == 0x7f for c in b))' "$T_TMP/json"

# ---- mq work: its own lines name no payload byte ----
sql "SET SESSION check_constraint_checks=0; UPDATE mq_jobs SET state = 'ready', lease_token = NULL, leased_until = NULL"
"$MQ" work --queue p --exit-when-empty --max-jobs 3 -- sh -c 'cat >/dev/null; exit 3' \
  >"$T_TMP/work" 2>&1
check "work: only printable ASCII on its output" printable "$T_TMP/work"
is "$(grep -c 'failed (non-zero exit)' "$T_TMP/work")" 3 "work ran and failed 3 of them"

# ---- the operator's commands: ls, why, show, check, top, retry ----
# clean FILE: valid UTF-8, no C0 control but the line feed, no DEL, no C1
# control, no bidirectional override or isolate
clean() {
  python3 -c '
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
bad = [c for c in t if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0
       or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
sys.exit(1 if bad else 0)' "$1"
}
oq=$(printf 'o\033[2J|x')                       # a queue with ESC and a bar
oerr=$(printf 'err \033]0;t\007 \342\200\256rev\nline2\r\377 end')
olb=$(printf 'host\033[31m:1\n2')
odk=$(printf 'dk\033[H\nk')
owk=$(printf 'w\033[1m:9\r')
oherr=$(printf 'h \033[2J\n\342\201\246 \300')
opl=$(printf 'pay \033[2J\n\377')
sql "SET SESSION check_constraint_checks=0; DELETE FROM mq_jobs; DELETE FROM mq_jobs_history;
  INSERT INTO mq_jobs (id, queue, state, attempts, payload, last_error, finished_at, dedup_key, leased_by)
    VALUES (501, 0x$(qhex "$oq"), 'dead', 1, 0x$(qhex "$opl"), 0x$(qhex "$oerr"), UTC_TIMESTAMP(6), 0x$(qhex "$odk"), 0x$(qhex "$olb"));
  INSERT INTO mq_jobs (id, queue, state, attempts, payload, leased_until, lease_token, leased_by)
    VALUES (502, 0x$(qhex "$oq"), 'leased', 1, 'x', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, '0123456789abcdef0123456789abcdef', 0x$(qhex "$olb"));
  INSERT INTO mq_jobs (id, queue, state, attempts, payload, last_error, finished_at, leased_by)
    VALUES (503, 'ok', 'dead', 1, 'y', 0x$(qhex "$oerr"), UTC_TIMESTAMP(6), 0x$(qhex "$olb"));
  INSERT INTO mq_jobs_history (job_id, event, state, attempt, worker, error)
    VALUES (501, 'failed', 'dead', 1, 0x$(qhex "$owk"), 0x$(qhex "$oherr")),
           (503, 'failed', 'dead', 1, 0x$(qhex "$owk"), 0x$(qhex "$oherr"))"
"$MQ" stats --recount >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM mq_jobs") $(sql "SELECT COUNT(*) FROM mq_jobs_history")" "3 2" \
  "three hostile jobs and two history rows planted"
# outputs OUT ERR NAME: both streams clean (stdout in $T_TMP/o-NAME)
outputs() {
  printf '%s\n' "$1" >"$T_TMP/o-$3"
  printf '%s\n' "$2" >"$T_TMP/e-$3"
  if clean "$T_TMP/o-$3" && clean "$T_TMP/e-$3"; then
    ok "$3: no raw control byte on stdout nor stderr"
  else
    not_ok "$3: no raw control byte on stdout nor stderr" "$(od -c "$T_TMP/o-$3" "$T_TMP/e-$3" | head -20)"
  fi
}
# the JSON lines of file $1: every string decodes to the stored bytes, as
# the bytes given (invalid UTF-8 as U+FFFD each)
json_is() { # json_is FILE PYTHON-EXPR-PER-LINE WANT DESCRIPTION
  is "$(python3 -c '
import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(l)
    print(ascii(eval(sys.argv[2])))' "$1" "$2" 2>&1)" "$3" "$4"
}
pyq() { # the Python ascii() of bytes $1 decoded with U+FFFD for invalid ones
  printf '%s' "$1" | python3 -c 'import sys; print(ascii(sys.stdin.buffer.read().decode("utf-8", "replace")))'
}

COLUMNS=200 expect_status 0 "ls with hostile queue, error and leased_by" "$MQ" ls
outputs "$OUT" "$ERR" ls
is "$(grep -c '' "$T_TMP/o-ls")" 4 "ls: a header and three lines: no field broke a line"
is "$(grep '^ *501 ' "$T_TMP/o-ls" | awk '{ $6 = "AGE"; print }')" \
  '501 o\x1b[2J|x dead 0 1/10 AGE - host\x1b[31m:1\x0a2 err \x1b]0;t\x07 \xe2\x80\xaerev\x0aline2\x0d\xff end' \
  "ls: queue, leased_by and error escaped as \\xHH"
expect_status 0 "ls --json" "$MQ" ls --json
printf '%s\n' "$OUT" >"$T_TMP/ls.json"
json_is "$T_TMP/ls.json" '(d["id"], d["queue"], d["leased_by"], d["last_held_by"], d["error"])' \
  "$(printf '(501, %s, None, %s, %s)\n' "$(pyq "$oq")" "$(pyq "$olb")" "$(pyq "$oerr")"
     printf '(502, %s, %s, %s, None)\n' "$(pyq "$oq")" "$(pyq "$olb")" "$(pyq "$olb")"
     printf "(503, 'ok', None, %s, %s)\n" "$(pyq "$olb")" "$(pyq "$oerr")")" \
  "ls --json: valid JSON, each string the stored text"
outputs "$OUT" "$ERR" "ls --json"

answers 14 "why of the hostile dead job" "$MQ" why 501
outputs "$OUT" "$ERR" "why (dead)"
is "$(printf '%s\n' "$OUT" | sed -n 1p | sed 's/since [^,]*,/since T,/')" \
  'job 501 is dead since T, with error: err \x1b]0;t\x07 \xe2\x80\xaerev\x0aline2\x0d\xff end' \
  "why: the sentence on one line, the error escaped"
has_line "$T_TMP/o-why (dead)" 'queue: o\x1b[2J|x' "why: the queue escaped"
has_line "$T_TMP/o-why (dead)" 'last held by: host\x1b[31m:1\x0a2' "why: a dead job's last holder, escaped"
answers 12 "why of the leased job" "$MQ" why 502
outputs "$OUT" "$ERR" "why (leased)"
has_line "$T_TMP/o-why (leased)" 'leased by: host\x1b[31m:1\x0a2' "why: leased by, escaped"
answers 14 "why --json" "$MQ" why --json 501
printf '%s\n' "$OUT" >"$T_TMP/why.json"
json_is "$T_TMP/why.json" '(d["queue"], d["leased_by"], d["last_held_by"], d["error"])' \
  "($(pyq "$oq"), None, $(pyq "$olb"), $(pyq "$oerr"))" "why --json: valid, the stored text"

expect_status 0 "show of the hostile jobs" "$MQ" show 501 502 503
outputs "$OUT" "$ERR" show
has_line "$T_TMP/o-show" 'dedup key: dk\x1b[H\x0ak' "show: the dedup key escaped"
has_line "$T_TMP/o-show" 'leased by: host\x1b[31m:1\x0a2' "show: leased by escaped"
has_line "$T_TMP/o-show" 'last held by: host\x1b[31m:1\x0a2' "show: a dead job's last holder escaped"
is "$(grep -c 'worker w\\x1b\[1m:9\\x0d, error: h \\x1b\[2J\\x0a\\xe2\\x81\\xa6 \\xc0$' "$T_TMP/o-show")" 2 \
  "show: the history's worker and error escaped, each event on one line"
expect_status 0 "show --json" "$MQ" show --json 501 503
printf '%s\n' "$OUT" >"$T_TMP/show.json"
json_is "$T_TMP/show.json" '(d["queue"], d["dedup_key"], d["payload_encoding"], d["payload"], [(h["worker"], h["error"]) for h in d["history"]])' \
  "$(printf '(%s, %s, %s, %s, [(%s, %s)])\n' "$(pyq "$oq")" "$(pyq "$odk")" "'base64'" "'$(printf '%s' "$opl" | base64 | tr -d '\n')'" "$(pyq "$owk")" "$(pyq "$oherr")"
     printf "('ok', None, 'utf8', 'y', [(%s, %s)])\n" "$(pyq "$owk")" "$(pyq "$oherr")")" \
  "show --json: valid, queue, dedup key, payload (base64) and history as stored"
outputs "$OUT" "$ERR" "show --json"
expect_status 0 "show -o" "$MQ" show -o "$T_TMP/raw" 501
is "$(hex <"$T_TMP/raw")" "$(qhex "$opl")" "show -o: the payload raw, in the file"
outputs "$OUT" "$ERR" "show -o"

expect_status 0 "check with a hostile queue" "$MQ" check
outputs "$OUT" "$ERR" check
like "$OUT" 'MQ OK - * queues: 0 ready, 0 stale, 2 dead | *' "check: OK, the totals"
is "$(printf '%s' "$OUT" | tr -cd '|' | wc -c | tr -d ' ')" 1 \
  "check: one bar, the one before the performance data"
answers 2 "check, critical on the hostile queue" "$MQ" check --max-dead 0
outputs "$OUT" "$ERR" "check (critical)"
is "${OUT%% | *}" 'MQ CRITICAL - o\x1b[2J\x7cx: 1 dead > 0 (critical); ok: 1 dead > 0 (critical)' \
  "check: the name escaped, its bar as \\x7c"
is "$(printf '%s' "$OUT" | tr -cd '|' | wc -c | tr -d ' ') $(printf '%s' "$OUT" | grep -o "'[^']*'=" | grep -cv "^'[A-Za-z0-9_.-]*'=$") $(printf '%s' "$OUT" | grep -c "'ok.dead'=1;;0;0")" \
  "1 0 1" "check: one bar, performance data only for the plain name"

expect_status 0 "top --once with hostile names and workers" "$MQ" top --once --interval 100ms
outputs "$OUT" "$ERR" top
is "$(printf '%s\n' "$OUT" | awk '$1 == "o\\x1b[2J|x" { print $2, $3, $4, $5, $6, $7, $(NF - 2) }')" \
  "0 0 0 1 0 1 1" "top: the hostile queue escaped on one line, its worker counted (WORKERS, before HELD)"

expect_status 0 "retry --dry-run by id" "$MQ" retry --dry-run 501 503
outputs "$OUT" "$ERR" "retry --dry-run"
is "$(echo $OUT)" "501 503" "retry --dry-run: the ids"
expect_status 0 "retry --dry-run by filter on the error" "$MQ" retry --dry-run --queue ok --error "$(printf '\033]0;t\007')"
outputs "$OUT" "$ERR" "retry --dry-run --error"
is "$OUT" 503 "retry --dry-run --error: a pattern of control bytes matches byte for byte"
expect_status 1 "retry of a leased job (not dead)" "$MQ" retry 501 502
outputs "$OUT" "$ERR" retry
is "$OUT|$ERR" "retried 1 job|mq retry: 1 job not dead (or no such job): 502" "retry: the count, the id left"

# a server message with a hostile name in it, through every new command
db=$(printf 't305o\033[2J\033]0;x\007')
sql_root "CREATE DATABASE \`$db\`"
for c in ls "why 1" "show 1" "top --once" "retry 1"; do
  # shellcheck disable=SC2086
  expect_status 78 "$c: a database named with ESC" "$MQ" $c --database "$db"
  outputs "$OUT" "$ERR" "$c (the error line)"
done
answers 3 "check: a database named with ESC" "$MQ" check --database "$db"
outputs "$OUT" "$ERR" "check (the UNKNOWN line)"
is "$OUT" "MQ UNKNOWN - table 't305o\\x1b[2J\\x1b]0;x\\x07.mq_jobs' does not exist: run 'mq init' to create it" \
  "check: the name in the UNKNOWN line escaped"
sql_root "DROP DATABASE \`$db\`"

done_testing
