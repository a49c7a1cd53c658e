#!/bin/sh
# mq push --lines --after (issue 32, fan-out): every job of a stream is
# pushed after the same parents, in the stream's batches, each batch one
# transaction that writes each parent once (children + the batch's rows)
# before it reads it: a parent finished (done, dead, cancelled) while the
# stream is pushed is met by the batches before, and read by the batches
# after; a parent that cannot be one refuses the stream before any line
# is read (66, nothing pushed), or, when it dies in the middle under
# --if-parent-dies cancel, stops it at the next batch as any failed batch
# stops a stream (66, the ids printed are the jobs pushed). Memory stays
# bounded: 100,000 lines take no more than 10,000.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

W='9999-12-31 23:59:59.999999'
njobs() { sql "SELECT COUNT(*) FROM mq_jobs"; }
children() { sql "SELECT IFNULL(children, 'none') FROM mq_jobs WHERE id = $1"; }
# states QUEUE: "state[:waiting] count" lines of the queue's jobs
states() {
  sql "SELECT CONCAT(s, ' ', COUNT(*)) FROM (SELECT CONCAT(state, IF(state = 'ready' AND available_at = '$W', ':waiting', '')) AS s FROM mq_jobs WHERE queue = '$1') x GROUP BY s ORDER BY s" | tr '\n' ' ' | sed 's/ $//'
}
# edges PARENT: "edges met-edges waits-rows sum-of-waits" of its dependents
edges() {
  sql "SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM(met), 0)) FROM mq_jobs_deps WHERE parent = $1" | tr '\n' ' '
  sql "SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM(w.parents), 0)) FROM mq_jobs_waits w JOIN mq_jobs_deps d ON d.child = w.child WHERE d.parent = $1"
}

# ---- bad combinations: 64, one line, nothing pushed
p=$("$MQ" push --queue bad P)
n0=$(njobs)
expect_status 64 "--lines with --after-file -" sh -c 'echo 1 | "$0" push --queue bad --lines --after-file -' "$MQ"
is "$ERR" "mq push: --after-file - reads standard input, as --lines and -0 do: give the parents in a file" "  said so"
expect_status 64 "-0 with --after-file -" sh -c 'printf "1\n" | "$0" push --queue bad -0 --after-file -' "$MQ"
for o in "--delay 1m" "--at 2030-01-01T00:00" "--at @1893456000"; do
  # shellcheck disable=SC2086
  expect_status 64 "--lines --after with $o" sh -c 'seq 3 | "$0" push --queue bad --lines --after "$1" $2' "$MQ" "$p" "$o"
  like "$ERR" "*--after excludes --every, --delay and --at*" "  said so"
done
expect_status 64 "--lines --after with --every" sh -c 'seq 3 | "$0" push --queue bad --lines --after "$1" --every 1m' "$MQ" "$p"
expect_status 64 "--lines --after with --dedup" sh -c 'seq 3 | "$0" push --queue bad --lines --after "$1" --dedup k' "$MQ" "$p"
expect_status 64 "--lines --after with --wait" sh -c 'seq 3 | "$0" push --queue bad --lines --after "$1" --wait' "$MQ" "$p"
expect_status 64 "--lines --if-parent-dies without --after" sh -c 'seq 3 | "$0" push --queue bad --lines --if-parent-dies run' "$MQ"
expect_status 64 "--lines --after with a bad id" sh -c 'seq 3 | "$0" push --queue bad --lines --after "$1,x"' "$MQ" "$p"
expect_status 74 "--lines --after with standard input closed" sh -c '"$0" push --queue bad --lines --after "$1" <&-' "$MQ" "$p"
is "$ERR" "mq push: standard input is closed: nothing done" "  said so"
is "$(njobs):$(children "$p")" "$n0:none" "nothing pushed by any of them, the parent untouched"

# ---- parents that cannot be: refused before a line is read (66, one
# line, nothing pushed), even with no line at all
expect_status 66 "--lines after a parent that does not exist" sh -c 'seq 5 | "$0" push --queue bad --lines --after "$1,424242"' "$MQ" "$p"
is "$ERR:$OUT" "mq push: parent 424242 does not exist:" "  one line naming it, no id printed"
expect_status 66 "  with empty input too" sh -c '"$0" push --queue bad --lines --after 424242 </dev/null' "$MQ"
r=$("$MQ" push --queue bad --every 1h tick)
expect_status 66 "-0 after a recurring parent" sh -c 'printf "a\0b\0" | "$0" push --queue bad -0 --after "$1"' "$MQ" "$r"
is "$ERR" "mq push: parent $r is recurring: it never finishes" "  one line naming it"
dp=$("$MQ" push --queue dead --max-attempts 1 gone)
"$MQ" fail --no-retry "$("$MQ" pop --queue dead -o /dev/null)" >/dev/null
expect_status 66 "--lines after a dead parent (cancel)" sh -c 'seq 5 | "$0" push --queue bad --lines --after "$1"' "$MQ" "$dp"
is "$ERR" "mq push: parent $dp is dead (--if-parent-dies cancel)" "  one line naming it"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'bad'"):$(children "$p"):$(children "$dp")" "2:none:none" \
  "nothing pushed (the parent and the recurring one), no parent's count touched"
expect_status 0 "--lines after a dead parent, --if-parent-dies run" sh -c 'seq 5 | "$0" push --queue run1 --lines --quiet --after "$1" --if-parent-dies run' "$MQ" "$dp"
is "$(states run1):$(children "$dp")" "ready 5:5" "  pushed, due at once"
# a fan-out after a fan-in of zero jobs (--after-file of no ids: a
# careful script gives its policy always): due at once, every policy,
# as without --after-file (on 6eb561e 64, "--if-parent-dies goes with
# --after or --after-file"); --delay refused as with ids (taken there)
: >"$T_TMP/noids"
for pol in cancel run wait; do
  expect_status 0 "--lines --after-file of no ids --if-parent-dies $pol" sh -c 'seq 3 | "$0" push --queue zero_'"$pol"' --lines --quiet --after-file "$1" --if-parent-dies '"$pol" "$MQ" "$T_TMP/noids"
  is "$(states "zero_$pol"):$(sql "SELECT COUNT(*) FROM mq_jobs_deps d JOIN mq_jobs j ON j.id = d.child WHERE j.queue = 'zero_$pol'")" "ready 3:0" "  pushed, due at once, no edge"
done
expect_status 64 "-0 --after-file of no ids with --delay: refused as with ids" sh -c 'printf "a\0" | "$0" push --queue zero_delay -0 --after-file "$1" --delay 1m' "$MQ" "$T_TMP/noids"
like "$ERR" "*--after excludes --every, --delay and --at*" "  said so"
is "$(states zero_delay)" "" "  nothing pushed"

# ---- the simple case: 2500 lines after a live parent, in 3 batches;
# the parent's row written once a batch (a trigger counts its writes)
sql "CREATE TABLE touches (id BIGINT UNSIGNED, n INT UNSIGNED);
CREATE TRIGGER count_touches AFTER UPDATE ON mq_jobs FOR EACH ROW
  INSERT INTO touches VALUES (NEW.id, IFNULL(NEW.children, 0) - IFNULL(OLD.children, 0))"
p=$("$MQ" push --queue dad P)
expect_status 0 "2500 lines after a live parent" sh -c 'seq 2500 | "$0" push --queue kid --lines --after "$1" >"$2"' "$MQ" "$p" "$T_TMP/ids"
like "$ERR" "mq push: pushed 2500 jobs in *" "  the summary as without --after"
is "$(wc -l <"$T_TMP/ids" | tr -d ' ')" 2500 "  2500 ids printed"
is "$(sql "SELECT GROUP_CONCAT(n ORDER BY n DESC) FROM touches WHERE id = $p")" "1000,1000,500" \
  "the parent's row written once a batch: children + 1000, + 1000, + 500"
sql "DROP TRIGGER count_touches; DROP TABLE touches"
is "$(states kid):$(children "$p")" "ready:waiting 2500:2500" "every job waits; the parent counts 2500"
is "$(edges "$p")" "2500 0 2500 2500" "2500 edges not met, one shard of one parent each"
is "$(sql "SELECT CONCAT(MIN(parent_shards), MAX(parent_shards), MIN(if_parent_dies), MAX(if_parent_dies)) FROM mq_jobs WHERE queue = 'kid'")" "11cancelcancel" \
  "each counts one shard, cancel by default"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM mq_jobs WHERE queue = 'kid'")" "$(tr '\n' ' ' <"$T_TMP/ids" | sed 's/ $//')" \
  "the ids printed are the jobs pushed"
is "$(sql "SELECT COUNT(*) FROM mq_jobs j JOIN mq_jobs_deps d ON d.child = j.id WHERE j.queue = 'kid' AND d.parent = $p AND j.payload = j.id - $(head -1 "$T_TMP/ids") + 1")" 2500 \
  "each job its line, each linked to the parent"
expect_status 1 "none claimable while they wait" "$MQ" pop --queue kid
"$MQ" ack "$("$MQ" pop --queue dad -o /dev/null)" >/dev/null
is "$(states kid)" "ready 2500" "the parent done: all 2500 due, in its ack"
is "$(edges "$p")" "2500 2500 2500 0" "  every edge met, every shard emptied"
sql "DELETE FROM mq_jobs WHERE queue = 'kid'"

# several parents, one done: edges per parent, shards per live parent
a=$("$MQ" push --queue dad A)
b=$("$MQ" push --queue dad B)
d=$("$MQ" push --queue dad2 D)
"$MQ" ack "$("$MQ" pop --queue dad2 -o /dev/null)" >/dev/null
seq 1200 | "$MQ" push --queue kid --lines --quiet --after "$a,$b" --after "$d,$a" >/dev/null
is "$(sql "SELECT CONCAT(COUNT(*), ' ', SUM(met)) FROM mq_jobs_deps d JOIN mq_jobs j ON j.id = d.child WHERE j.queue = 'kid'")" "3600 1200" \
  "3 parents (one named twice): 3600 edges, those of the done one met"
is "$(children "$a"):$(children "$b"):$(children "$d")" "1200:1200:1200" "each parent counts 1200"
is "$(sql "SELECT CONCAT(COUNT(DISTINCT parent_shards), ':', MIN(parent_shards)) FROM mq_jobs WHERE queue = 'kid'"):$(sql "SELECT COUNT(*) FROM mq_jobs_waits w JOIN mq_jobs j ON j.id = w.child WHERE j.queue = 'kid'")" "1:2:2400" \
  "two shards each (the live parents)"
"$MQ" ack "$("$MQ" pop --queue dad -o /dev/null)" >/dev/null
is "$(states kid)" "ready:waiting 1200" "one live parent done: still waiting"
"$MQ" ack "$("$MQ" pop --queue dad -o /dev/null)" >/dev/null
is "$(states kid)" "ready 1200" "both: due"
sql "DELETE FROM mq_jobs WHERE queue = 'kid'"

# -0, after a parent done and archived: due at once
a=$("$MQ" push --queue dad A)
"$MQ" ack "$("$MQ" pop --queue dad -o /dev/null)" >/dev/null
"$MQ" archive --older-than 0s >/dev/null
expect_status 0 "-0 after an archived parent" sh -c 'printf "x\0y y\0z" | "$0" push --queue kid -0 --quiet --after "$1"' "$MQ" "$a"
is "$(states kid):$(sql "SELECT GROUP_CONCAT(payload ORDER BY id) FROM mq_jobs WHERE queue = 'kid'")" "ready 3:x,y y,z" "  due at once, each record a job"
sql "DELETE FROM mq_jobs WHERE queue = 'kid'"

# ---- concurrent pushers after the same parent: each batch waits for
# the parent's row in turn; every job linked, the count exact
p=$("$MQ" push --queue dad P)
for i in 1 2 3; do
  seq 1500 | "$MQ" push --queue kid --lines --quiet --after "$p" >"$T_TMP/c$i" &
done
wait
is "$(cat "$T_TMP/c1" "$T_TMP/c2" "$T_TMP/c3" | sort -u | wc -l | tr -d ' '):$(children "$p"):$(states kid)" "4500:4500:ready:waiting 4500" \
  "3 pushers at once: 4500 jobs, counted 4500"
is "$(edges "$p")" "4500 0 4500 4500" "  4500 edges, 4500 shards"
"$MQ" ack "$("$MQ" pop --queue dad -o /dev/null)" >/dev/null
is "$(states kid)" "ready 4500" "  all due with the parent's ack"
sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_deps; DELETE FROM mq_jobs_waits"

# ---- the parent finished while the stream is pushed, 4 consumers of
# both claims running: 1500 lines, the first 1000 committed, then the
# parent acked, failed or cancelled, then 1500 more
# midpush CASE QUEUE EVENT POLICY: pushes, runs EVENT on the parent after
# the first batch; $RC, $OUT (ids), $ERR; the parent's id in $P
midpush() {
  _q=$2
  P=$("$MQ" push --queue "dad$1" --max-attempts 1 P)
  [ "$3" = cancel ] || _r=$("$MQ" pop --queue "dad$1" -o /dev/null)
  : >"$T_TMP/runs$1"
  for _how in skip-locked update skip-locked update; do
    "$MQ" work --queue "$_q" --claim "$_how" --wait 3s -- \
      sh -c 'echo "$MQ_ID" >>"$0"' "$T_TMP/runs$1" >/dev/null 2>&1 &
  done
  rm -f "$T_TMP/in$1"; mkfifo "$T_TMP/in$1"
  # (the ids' file made first: the wait for its first 1000 lines below
  # could read it before the push's redirection made it, fail, and let
  # the event come before the first batch)
  : >"$T_TMP/ids$1"
  "$MQ" push --queue "$_q" --lines --after "$P" --if-parent-dies "$4" <"$T_TMP/in$1" >"$T_TMP/ids$1" 2>"$T_TMP/err$1" &
  _push=$!
  exec 3>"$T_TMP/in$1"
  seq 1 1500 >&3
  _i=0
  # (up to 2 minutes: a loaded machine has taken more than 30 s)
  while [ "$(wc -l <"$T_TMP/ids$1")" -lt 1000 ] && [ $_i -lt 1200 ]; do sleep 0.1; _i=$((_i + 1)); done
  case $3 in
    ack) "$MQ" ack "$_r" >/dev/null ;;
    fail) "$MQ" fail --no-retry "$_r" >/dev/null ;;
    cancel) "$MQ" cancel "$P" >/dev/null ;;
  esac
  seq 1501 3000 >&3
  exec 3>&-
  wait $_push
  RC=$?
  OUT=$(cat "$T_TMP/ids$1")
  ERR=$(cat "$T_TMP/err$1")
  wait
}
# runs CASE: "jobs that ran, distinct"
runs() { printf '%s %s' "$(wc -l <"$T_TMP/runs$1" | tr -d ' ')" "$(sort -u "$T_TMP/runs$1" | wc -l | tr -d ' ')"; }

midpush 1 k1 ack cancel
is "$RC:$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "0:3000" "acked mid-push: all 3000 pushed"
is "$(children "$P"):$(states k1)" "3000:done 3000" "  counted 3000, each ran (the first batch due with the ack, the others at once)"
is "$(runs 1)" "3000 3000" "  each once"
is "$(edges "$P")" "3000 3000 1000 0" "  every edge met; shards for the first batch only, emptied"

midpush 2 k2 fail cancel
is "$RC:$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "66:1000" "failed for good mid-push, cancel: stops at the next batch (66), 1000 pushed"
is "$ERR" "mq push: stopped after reading 2001 records (the ids printed are the jobs pushed): parent $P is dead (--if-parent-dies cancel)" \
  "  one line: how far, the parent named"
is "$(children "$P"):$(states k2)" "1000:dead 1000" "  counted 1000 (the refused batch rolled back), all cancelled"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k2' AND last_error = 'cancelled: parent $P is dead'"):$(runs 2)" "1000:0 0" \
  "  cancelled with the parent named, none ran"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM mq_jobs WHERE queue = 'k2'")" "$(printf '%s\n' "$OUT" | tr '\n' ' ' | sed 's/ $//')" \
  "  the ids printed are the jobs pushed"
is "$(edges "$P")" "1000 0 1000 1000" "  1000 edges, not met (cancelled)"

midpush 3 k3 fail run
is "$RC:$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "0:3000" "failed for good mid-push, run: all 3000 pushed"
is "$(children "$P"):$(states k3):$(runs 3)" "3000:done 3000:3000 3000" "  counted 3000, each ran once"
is "$(edges "$P")" "3000 3000 1000 0" "  every edge met"

midpush 4 k4 fail wait
is "$RC:$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "0:3000" "failed for good mid-push, wait: all 3000 pushed"
is "$(children "$P"):$(states k4):$(runs 4)" "3000:ready:waiting 3000:0 0" "  counted 3000, all waiting, none ran"
is "$(edges "$P")" "3000 0 3000 3000" "  3000 edges, 3000 shards not met"
"$MQ" retry "$P" >/dev/null 2>&1
"$MQ" ack "$("$MQ" pop --queue dad4 -o /dev/null)" >/dev/null
"$MQ" work --queue k4 --concurrency 4 --exit-when-empty -- sh -c 'echo "$MQ_ID" >>"$0"' "$T_TMP/runs4" >/dev/null 2>&1
is "$(states k4):$(runs 4)" "done 3000:3000 3000" "  the parent retried and done: each ran once"

midpush 5 k5 cancel cancel
is "$RC:$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "66:1000" "cancelled mid-push, cancel: 66, 1000 pushed"
is "$ERR" "mq push: stopped after reading 2001 records (the ids printed are the jobs pushed): parent $P is dead (--if-parent-dies cancel)" "  said so"
is "$(children "$P"):$(states k5):$(runs 5)" "1000:dead 1000:0 0" "  the 1000 cancelled with it"

midpush 6 k6 cancel run
is "$RC:$(children "$P"):$(states k6):$(runs 6)" "0:3000:done 3000:3000 3000" "cancelled mid-push, run: 3000 pushed, each ran once"

midpush 7 k7 cancel wait
is "$RC:$(children "$P"):$(states k7):$(runs 7)" "0:3000:ready:waiting 3000:0 0" "cancelled mid-push, wait: 3000 pushed, waiting"
is "$(edges "$P")" "3000 0 3000 3000" "  3000 edges, 3000 shards not met"

# ---- README's example, as written: the build first, then its 20 tests
mkdir -p "$T_TMP/bin" "$T_TMP/ex"
ln -s "$MQ" "$T_TMP/bin/mq"
(
  cd "$T_TMP/ex" || exit 1
  PATH=$T_TMP/bin:$PATH
  run_example fan-out
  echo "$RC" >"$T_TMP/ex.rc"
  printf '%s\n' "$OUT" >"$T_TMP/ex.out"
)
is "$(cat "$T_TMP/ex.rc"):$(cat "$T_TMP/ex.out")" "0:make" "the README's example runs: the build first"
is "$(grep -c '^test-' "$T_TMP/ex/ran"):$(sort -u "$T_TMP/ex/ran" | wc -l | tr -d ' ')" "20:21" "  then its 20 tests, each once"

# ---- bounded memory: 100,000 lines take no more than 10,000 (the
# parents read once, the lines streamed, the edges a batch at a time)
rss() { # rss N: the push's peak RSS in KiB; its status in $T_TMP/rss.rc
  "$MQ" push --queue mdad P >"$T_TMP/rss.p"
  seq "$1" | /usr/bin/time -f %M -o "$T_TMP/rss" "$MQ" push --queue mem --lines --quiet --after "$(cat "$T_TMP/rss.p")" >/dev/null
  echo $? >"$T_TMP/rss.rc"
  tail -n 1 "$T_TMP/rss"
}
small=$(rss 10000)
is "$(cat "$T_TMP/rss.rc")" 0 "10,000 lines after a parent"
big=$(rss 100000)
p=$(cat "$T_TMP/rss.p")
is "$(cat "$T_TMP/rss.rc"):$(children "$p"):$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE parent = $p")" "0:100000:100000" \
  "100,000 lines after a parent: counted, linked"
echo "# peak RSS: 10,000 lines $small KiB, 100,000 lines $big KiB"
if [ -n "${MQ_SANITIZED:-}" ]; then	# ASan's quarantine grows with the frees
  ok "# SKIP peak RSS of a sanitized binary"
else
  check "  in bounded memory ($big KiB, 10,000 lines $small KiB)" test "$big" -le "$((small + small / 4))"
fi

done_testing
