#!/bin/sh
# mq push --after (issue 32, dependencies): a dependent becomes due
# exactly once, when its last parent is done, not before; a parent that
# dies cancels it (the default), lets it run, or keeps it waiting until
# it is retried and done; a parent that does not exist, recurs, or is
# dead under cancel refuses the push (66, nothing pushed); archive keeps
# what a dependent waits for; many parents finished at once by many
# consumers of both claims release it once; a chain runs in order.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

njobs() { sql "SELECT COUNT(*) FROM mq_jobs"; }
st() { sql "SELECT CONCAT(state, IF(state = 'ready' AND available_at = '9999-12-31 23:59:59.999999', ':waiting', '')) FROM mq_jobs WHERE id = $1"; }
err_of() { sql "SELECT IFNULL(last_error, '') FROM mq_jobs WHERE id = $1"; }
# done_one QUEUE: pops one job of QUEUE and acks it; its id on stdout
done_one() {
  _r=$("$MQ" pop --queue "$1" -o /dev/null) || return 1
  "$MQ" ack "$_r" >/dev/null && echo "${_r%%.*}"
}
# die_one QUEUE: pops one job of QUEUE and fails it for good
die_one() {
  _r=$("$MQ" pop --queue "$1" -o /dev/null) || return 1
  "$MQ" fail --no-retry --error "${2:-boom}" "$_r" >/dev/null && echo "${_r%%.*}"
}

# ---- bad input: one line, status 64 (66: no such file), nothing pushed
p=$("$MQ" push --queue bad parent)
n0=$(njobs)
for bad in x 0 -1 "1,,2" "1," ",1" "1.5" 18446744073709551616 "$p x"; do
  expect_status 64 "--after '$bad' is a usage error" "$MQ" push --queue bad --after "$bad" job
  like "$ERR" "mq push: invalid --after *" "  said so"
done
expect_status 64 "--if-parent-dies other" "$MQ" push --queue bad --after "$p" --if-parent-dies later job
is "$ERR" "mq push: invalid --if-parent-dies 'later': cancel, run or wait" "  said so"
expect_status 64 "--if-parent-dies without --after" "$MQ" push --queue bad --if-parent-dies run job
for o in "--every 1m" "--delay 1m" "--at 2030-01-01T00:00" ; do
  # shellcheck disable=SC2086
  expect_status 64 "--after with $o" "$MQ" push --queue bad --after "$p" $o job
  like "$ERR" "*--after excludes --every, --delay and --at*" "  said so"
done
# (--after with --lines or -0 is a fan-out: t353)
expect_status 64 "--after-file - with --lines" sh -c 'echo "$1" | "$0" push --queue bad --lines --after-file -' "$MQ" "$p"
expect_status 66 "--after-file that does not exist" "$MQ" push --queue bad --after-file "$T_TMP/none" job
like "$ERR" "mq push: cannot open --after-file *" "  said so"
printf '%s\n\nzz\n' "$p" >"$T_TMP/badfile"
expect_status 64 "--after-file with a bad line" "$MQ" push --queue bad --after-file "$T_TMP/badfile" job
like "$ERR" "*'zz' on line 3 of --after-file*" "  naming its line"
# a NUL in a line shown whole, escaped; a file that cannot be read
# names the cause (on 6eb561e: "invalid job id '1'", cut at the NUL;
# "cannot read --after-file '...' after line 0" with no reason)
printf '%s\n1\0002\n' "$p" >"$T_TMP/nulfile"
expect_status 64 "--after-file with a NUL in a line" "$MQ" push --queue bad --after-file "$T_TMP/nulfile" job
is "$ERR" "mq push: invalid job id '1\\x002' on line 2 of --after-file '$T_TMP/nulfile': a positive number, as push prints it" "  the line shown whole, escaped"
# a line of no end: said at once, in bounded memory (on a900bf0 /dev/zero
# ran out of memory, 71)
# (the address space bounded but under the sanitizers, whose shadow
# memory needs more than any bound: there the end alone is checked)
if [ -n "${MQ_SANITIZED:-}" ]; then LIMIT_AS=:; else LIMIT_AS='ulimit -v 200000'; fi
expect_status 64 "--after-file /dev/zero" sh -c "$LIMIT_AS"'; timeout -s KILL 20 "$0" push --queue bad --after-file /dev/zero job' "$MQ"
like "$ERR" "mq push: invalid job id '*...' on line 1 of --after-file '/dev/zero': a positive number, as push prints it" "  a usage error"
# --after takes the ids as --after-file does: leading zeros (on a900bf0 a
# usage error past 23 characters)
z=$("$MQ" push --queue lz parent)
expect_status 0 "--after with 40 leading zeros" "$MQ" push --queue lz --after "0000000000000000000000000000000000000000$z" kid
expect_status 64 "--after 2^64" "$MQ" push --queue lz --after 18446744073709551616 kid
expect_status 64 "--after with an empty item" "$MQ" push --queue lz --after "$z,,$z" kid
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'lz'")" 2 "  nothing more pushed"
sql "DELETE FROM mq_jobs_deps WHERE parent = $z; DELETE FROM mq_jobs_waits WHERE child IN (SELECT id FROM mq_jobs WHERE queue = 'lz');
     DELETE FROM mq_jobs WHERE queue = 'lz'"
expect_status 74 "--after-file a directory" "$MQ" push --queue bad --after-file "$T_TMP" job
is "$ERR" "mq push: cannot read --after-file '$T_TMP': Is a directory" "  the cause named"
expect_status 74 "--after-file - from a directory" sh -c '"$0" push --queue bad --after-file - job <"$1"' "$MQ" "$T_TMP"
is "$ERR" "mq push: cannot read --after-file '-': Is a directory" "  the cause named"
expect_status 74 "--lines with --after-file a directory" sh -c 'echo "$1" | "$0" push --queue bad --lines --after-file "$2"' "$MQ" "$p" "$T_TMP"
is "$ERR" "mq push: cannot read --after-file '$T_TMP': Is a directory" "  the cause named"
expect_status 74 "--after-file - with standard input closed" sh -c '"$0" push --queue bad --after-file - job <&-' "$MQ"
is "$ERR" "mq push: standard input is closed: nothing done" "  said so (it read no parent: a job due at once)"
expect_status 64 "--after-file - without a PAYLOAD argument" sh -c 'echo 1 | "$0" push --queue bad --after-file -' "$MQ"
is "$(njobs)" "$n0" "nothing pushed by any of them"

# ---- no parents in --after-file (an empty file, blank lines only: a
# fan-in of zero jobs): a job due at once, as after parents all done,
# whatever --if-parent-dies says; the rules of --after all the same (on
# 6eb561e a policy with it was 64, "--if-parent-dies goes with --after
# or --after-file", while --delay with it was taken)
: >"$T_TMP/none0"
printf '\n  \n\t\n' >"$T_TMP/blank0"
for f in none0 blank0; do
  for pol in "" cancel run wait; do
    expect_status 0 "--after-file $f${pol:+ --if-parent-dies $pol}: pushed" sh -c '"$0" push --queue zero --after-file "$1" ${2:+--if-parent-dies "$2"} job' "$MQ" "$T_TMP/$f" "$pol"
    is "$(st "$OUT"):$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $OUT")" "ready:0" "  due at once, no edge"
  done
done
expect_status 0 "--after-file - of no ids, --if-parent-dies run: pushed" sh -c '"$0" push --queue zero --after-file - --if-parent-dies run job </dev/null' "$MQ"
is "$(st "$OUT")" ready "  due at once"
for o in "--delay 1m" "--at 2030-01-01T00:00" "--every 1h"; do
  # shellcheck disable=SC2086
  expect_status 64 "--after-file of no ids with $o: refused as with ids" "$MQ" push --queue bad --after-file "$T_TMP/none0" $o job
  like "$ERR" "*--after excludes --every, --delay and --at*" "  said so"
done
expect_status 64 "--after-file of no ids with --cron: refused as with ids" "$MQ" push --queue bad --after-file "$T_TMP/none0" --cron '* * * * *' job
is "$(njobs)" "$((n0 + 9))" "nothing pushed by the refused ones"

# ---- parents that cannot be: 66, one line, nothing pushed
expect_status 66 "a parent that does not exist" "$MQ" push --queue bad --after "$p,424242" job
is "$ERR" "mq push: parent 424242 does not exist" "  one line naming it"
r=$("$MQ" push --queue bad --every 1h tick)
expect_status 66 "a recurring parent" "$MQ" push --queue bad --after "$r" job
is "$ERR" "mq push: parent $r is recurring: it never finishes" "  one line naming it"
dp=$("$MQ" push --queue dead --max-attempts 1 gone)
die_one dead >/dev/null
expect_status 66 "a dead parent, --if-parent-dies cancel (the default)" "$MQ" push --queue bad --after "$dp" job
is "$ERR" "mq push: parent $dp is dead (--if-parent-dies cancel)" "  one line naming it"
is "$(njobs)" "$((n0 + 11))" "nothing pushed (the recurring and the dead parent only)"
is "$(sql "SELECT IFNULL(children, 'none') FROM mq_jobs WHERE id = $p")" none "the parent's count of dependents untouched (rolled back)"
# a recurring job that is dead (cancelled) has stopped: a dead parent as
# any other, the dependent's policy at once; wait too is refused (retried,
# it would recur, never done)
"$MQ" cancel "$r" >/dev/null
expect_status 66 "a cancelled recurring parent, --if-parent-dies cancel" "$MQ" push --queue bad --after "$r" job
is "$ERR" "mq push: parent $r is dead (--if-parent-dies cancel)" "  refused as a dead parent"
expect_status 66 "a cancelled recurring parent, --if-parent-dies wait" "$MQ" push --queue bad --after "$r" --if-parent-dies wait job
is "$ERR" "mq push: parent $r is a recurring job, dead: retried, it would recur, never done (--if-parent-dies wait)" "  refused, saying why"
is "$(njobs)" "$((n0 + 11))" "  nothing pushed by either"
expect_status 0 "a cancelled recurring parent, --if-parent-dies run: pushed" "$MQ" push --queue rr --after "$r" --if-parent-dies run job
is "$(st "${OUT:-0}")" ready "  due at once: the dead parent counts as done"
is "$(sql "SELECT met FROM mq_jobs_deps WHERE parent = $r AND child = ${OUT:-0}")" 1 "  its edge met"

# ---- the simple case: after two parents, due once both are done
a=$("$MQ" push --queue fan A)
b=$("$MQ" push --queue fan B)
c=$("$MQ" push --queue kid --after "$a,$b" C)
is "$(st "$c")" "ready:waiting" "a dependent waits"
is "$(sql "SELECT CONCAT(IFNULL(children, '-'), '/', IFNULL(parent_shards, '-'), '/', IFNULL(if_parent_dies, '-')) FROM mq_jobs WHERE id IN ($a, $c) ORDER BY id")" \
  "$(printf '1/-/-\n-/2/cancel')" "the parent counts it, it counts two shards, cancel by default"
expect_status 1 "not claimable while it waits" "$MQ" pop --queue kid
done_one fan >/dev/null
is "$(st "$c")" "ready:waiting" "one parent done: still waiting"
expect_status 1 "  and still not claimable" "$MQ" pop --queue kid
done_one fan >/dev/null
is "$(st "$c")" "ready" "both done: due"
expect_status 0 "and claimed" "$MQ" pop --queue kid
is "$OUT" "C" "  its payload"

# repeats in the list and across options count once; --after-file
a=$("$MQ" push --queue fan A)
printf '%s\n%s\n' "$a" "$a" >"$T_TMP/parents"
c=$("$MQ" push --queue kid --after "$a" --after "$a,$a" --after-file "$T_TMP/parents" C)
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $c")" 1 "a parent named 4 times is one edge"
done_one fan >/dev/null
is "$(st "$c")" "ready" "and its done makes the dependent due"
sql "DELETE FROM mq_jobs WHERE queue = 'kid'"

# ---- parents finished before the push: done (in the table, in the
# archive): due at once
a=$("$MQ" push --queue fan A)
done_one fan >/dev/null
b=$("$MQ" push --queue fan B)
done_one fan >/dev/null
"$MQ" archive --older-than 0s >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE id = $b")" 1 "a parent archived"
c=$("$MQ" push --queue kid --after "$a,$b" C)
is "$(st "$c")" "ready" "after two done parents in the archive: due at once"
sql "DELETE FROM mq_jobs WHERE queue = 'kid'"

# ---- a parent that dies: cancel (and its dependents in turn), run, wait
p=$("$MQ" push --queue dad --max-attempts 1 P)
c1=$("$MQ" push --queue kid --after "$p" C1)
c2=$("$MQ" push --queue kid --after "$p" --if-parent-dies run C2)
c3=$("$MQ" push --queue kid --after "$p" --if-parent-dies wait C3)
g=$("$MQ" push --queue kid --after "$c1" G)
die_one dad >/dev/null
is "$(st "$c1"):$(err_of "$c1")" "dead:cancelled: parent $p is dead" "cancel: the dependent is dead, the parent named"
is "$(st "$g"):$(err_of "$g")" "dead:cancelled: parent $c1 is dead" "  and its own dependent with it"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE id IN ($c1, $g) AND available_at = finished_at")" 2 \
  "  both due when they died, not at the end of time (mq show, mq ls)"
is "$(st "$c2")" "ready" "run: due"
is "$(st "$c3")" "ready:waiting" "wait: still waiting"
is "$(sql "SELECT CONCAT(n, '/', total) FROM mq_jobs_counts WHERE queue = 'kid' AND state = 'dead'" | awk -F/ '{n += $1; t += $2} END {print n "/" t}')" "2/2" \
  "the two cancelled are counted dead"
# retry: the parent runs again; the cancelled dependent retried waits
# again for it; both wait's and the retried one's then run once it is done
expect_status 0 "retry of the cancelled dependent" "$MQ" retry "$c1"
is "$(st "$c1")" "ready:waiting" "  waits again: its parent is not done"
is "$ERR" "$(printf '%s\n' "mq retry: 1 of the jobs retried wait again for their parents (mq push --after): they run once those are done" \
  "mq retry: 1 dependent cancelled when the jobs retried died stays dead: mq retry it too, and it waits again for its parents")" \
  "  and says so, and that its own cancelled dependent stays dead"
expect_status 0 "retry of the dead parent" "$MQ" retry "$p"
is "$OUT" "retried 1 job" "  retried"
is "$ERR" "" "  its dependent retried already: nothing more said"
done_one dad >/dev/null
is "$(st "$c1"):$(st "$c3")" "ready:ready" "the parent done: both due"
is "$(st "$g")" "dead" "the grandchild stays dead (not retried)"
"$MQ" archive --older-than 0s >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child IN ($c1, $c3)"):$(st "$p")" "2:" \
  "the parent archived once done; its dependents' edges stay while they do"
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $g"):$(sql "SELECT COUNT(*) FROM mq_jobs_waits WHERE child = $g"):$(st "$g")" "0:0:" \
  "an archived dependent's edges and shards go with it"

# retry of a dead parent alone: its cancelled dependent stays dead, said
p=$("$MQ" push --queue dad --max-attempts 1 P)
c1=$("$MQ" push --queue kid --after "$p" C1)
die_one dad >/dev/null
expect_status 0 "retry of a parent whose dependent it cancelled" "$MQ" retry "$p"
is "$ERR" "mq retry: 1 dependent cancelled when the jobs retried died stays dead: mq retry it too, and it waits again for its parents" \
  "  says the dependent stays dead"
is "$(st "$c1")" "dead" "  and it does"
done_one dad >/dev/null

# ---- archive keeps a dead parent that a dependent waits for (it could
# not be retried from the archive); with no one waiting, it goes
p=$("$MQ" push --queue dad --max-attempts 1 P)
c3=$("$MQ" push --queue kid --after "$p" --if-parent-dies wait C3)
die_one dad >/dev/null
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(st "$p")" "dead" "archive --dead passes over a dead parent a dependent waits for"
"$MQ" archive --purge --dead --older-than 0s >/dev/null
is "$(st "$p")" "dead" "and so does archive --purge"
expect_status 0 "the dependent cancelled" "$MQ" cancel "$c3"
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(st "$p"):$(st "$c3")" ":" "then both are archived"

# ---- mq purge of live parents: nothing can release their dependents
# any more: those that run anyway are due, the others cancelled; a
# purged dependent's edges and shards go with it
p=$("$MQ" push --queue gone P)
q=$("$MQ" push --queue gone Q)
c1=$("$MQ" push --queue kid --after "$p" C1)
c2=$("$MQ" push --queue kid --after "$p,$q" --if-parent-dies run C2)
c3=$("$MQ" push --queue kid --after "$p" --if-parent-dies wait C3)
g=$("$MQ" push --queue kid --after "$c3" --if-parent-dies run G)
expect_status 0 "mq purge of the parents" "$MQ" purge --queue gone --yes
is "$(st "$c1"):$(err_of "$c1")" "dead:cancelled: parent $p was purged" "cancel: cancelled, the parent named"
is "$(st "$c3"):$(err_of "$c3")" "dead:cancelled: parent $p was purged" "wait: cancelled too (nothing can retry it)"
is "$(st "$c2")" "ready" "run: due (both parents purged)"
is "$(st "$g")" "ready" "a dependent of a cancelled one that runs anyway: due"
c4=$("$MQ" push --queue gone2 C4)
c5=$("$MQ" push --queue kid2 --after "$c4" C5)
expect_status 0 "mq purge of a waiting dependent" "$MQ" purge --queue kid2 --yes
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $c5"):$(sql "SELECT COUNT(*) FROM mq_jobs_waits WHERE child = $c5")" "0:0" \
  "its edges and shards are gone"
done_one gone2 >/dev/null
is "$(st "$c4")" "done" "and its parent finishes as usual"

# ---- a review's cases (each failed before its fix)
# mq purge of a queue that holds a parent and its waiting dependent:
# both deleted, counted once each as purged (the dependent was cancelled,
# counted dead and purged, and its edges gone: retried, it waited for
# ever)
sql "DELETE FROM mq_jobs_counts WHERE queue = 'pq'"
p=$("$MQ" push --queue pq P)
c=$("$MQ" push --queue pq --after "$p" C)
expect_status 0 "purge of a queue holding a parent and its dependent" "$MQ" purge --queue pq --yes
is "$OUT" "purged 2 jobs from queue 'pq'" "  both deleted"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'pq'"):$(sql "SELECT COALESCE(SUM(total), 0) FROM mq_jobs_counts WHERE queue = 'pq' AND state = 'purged'"):$(sql "SELECT COALESCE(SUM(n), 0) FROM mq_jobs_counts WHERE queue = 'pq' AND state = 'dead'")" \
  "0:2:0" "  counted purged once each, none dead"
# a dependent cancelled, then retried, waits for the dead parent again:
# archive leaves the parent (it could not be retried from the archive)
p=$("$MQ" push --queue q2 --max-attempts 1 P)
c=$("$MQ" push --queue q2kid --after "$p" C)
die_one q2 >/dev/null
"$MQ" retry "$c" >/dev/null 2>&1
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(st "$p"):$(st "$c")" "dead:ready:waiting" "archive keeps the dead parent a retried dependent waits for"
"$MQ" retry "$p" >/dev/null 2>&1
done_one q2 >/dev/null
is "$(st "$c")" "ready" "  retried and done, it makes the dependent due"
sql "DELETE FROM mq_jobs WHERE queue = 'q2kid'"
# retry of a dependent whose parent was purged: it would wait for ever
p=$("$MQ" push --queue q5 P)
c=$("$MQ" push --queue q5kid --after "$p" C)
"$MQ" purge --queue q5 --yes >/dev/null
is "$(st "$c")" "dead" "a dependent of a purged parent is cancelled"
# a dry run says what the real run does: not listed, left dead, status 1
expect_status 1 "its retry --dry-run, by id: 1, as the real run" "$MQ" retry --dry-run "$c"
is "$OUT" "" "  not listed"
is "$ERR" "$(printf '%s\n' "mq retry: 0 jobs would be retried (dry run)" \
  "mq retry: 1 job left dead: a parent of theirs can never finish (purged, dead in the archive, or dead below one): $c")" \
  "  none would be retried, and it says which is left dead, and why"
c2=$("$MQ" push --queue q5kid --max-attempts 1 C2)
die_one q5kid >/dev/null
expect_status 1 "retry --dry-run by filter: 1, as the real run" "$MQ" retry --dry-run --queue q5kid --all
is "$OUT" "$c2" "  lists the job a real run retries, not the other"
is "$ERR" "$(printf '%s\n' "mq retry: 1 job would be retried (dry run)" \
  "mq retry: 1 job left dead: a parent of theirs can never finish (purged, dead in the archive, or dead below one): $c")" \
  "  and reports the one left dead"
is "$(st "$c"):$(st "$c2")" "dead:dead" "  a dry run changes nothing"
expect_status 1 "its retry" "$MQ" retry "$c"
is "$ERR" "mq retry: 1 job left dead: a parent of theirs can never finish (purged, dead in the archive, or dead below one): $c" "  leaves it dead, and says why"
is "$(st "$c")" "dead" "  dead still"
# mq archive and mq retry of the parent's dependent at once (issue 34's
# audit): the archive read the dependent (dead: the parent not awaited)
# and deletes the parent; the retry read the parent (there) and made the
# dependent wait. Each decided on a row the other wrote: both committed,
# and the dependent waited for ever for a parent in the archive. Now the
# retry writes the parent before it reads it: one waits for the other
# (on Galera, certifies against it). The parent is itself a dependent
# (of a job done), and a lock on that edge holds the archive, for 3 s,
# between its read and its commit (at its delete of the parent's edges)
# while the retry runs.
g=$("$MQ" push --queue q6 G)
done_one q6 >/dev/null
p=$("$MQ" push --queue q6 --max-attempts 1 --after "$g" P)
c=$("$MQ" push --queue q6kid --after "$p" C)
die_one q6 >/dev/null
sleep 2
"$MQ" retry "$c" >/dev/null 2>&1
"$MQ" cancel "$c" >/dev/null    # dead again, 2 s after its parent
(sql "SET SESSION tx_isolation = 'READ-COMMITTED'; BEGIN;
  SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $p FOR UPDATE;
  SELECT SLEEP(3); ROLLBACK" >/dev/null &)
sleep 0.5
"$MQ" archive --dead --older-than 1s >"$T_TMP/race.out" 2>&1 &
apid=$!
i=0   # until the archive waits for that lock, the parent read and locked
while [ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
    WHERE DB = DATABASE() AND INFO LIKE 'DELETE FROM \`mq_jobs_deps\`%'")" = 0 ] &&
    [ $i -lt 150 ]; do
  sleep 0.02; i=$((i + 1))
done
check "  the archive holds the parent, held before its commit" [ $i -lt 150 ]
"$MQ" retry "$c" >/dev/null 2>&1
wait $apid
is "$(st "$p"):$(st "$c")" "$(if [ -z "$(st "$p")" ]; then echo ":dead"; else echo "dead:ready:waiting"; fi)" \
  "archive and retry of its dependent at once: the parent stays awaited, or the dependent dead"
check "  not a dependent waiting for a parent that left the table" \
  [ "$(sql "SELECT COUNT(*) FROM mq_jobs_deps d LEFT JOIN mq_jobs p ON p.id = d.parent
    JOIN mq_jobs j ON j.id = d.child WHERE d.child = $c AND d.met = 0
    AND p.id IS NULL AND j.state = 'ready'")" = 0 ]
# a job cannot wait for itself, nor for a job pushed after the check
n=$(sql "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'mq_jobs'")
expect_status 66 "push --after the id it would get" "$MQ" push --queue self --after "$n" selfdep
is "$ERR" "mq push: parent $n does not exist" "  refused: it does not exist yet"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'self'")" 0 "  nothing pushed"
# a dead parent in the archive cannot be retried: --if-parent-dies wait
# after it is refused (it would wait for ever), run runs
p=$("$MQ" push --queue q6 --max-attempts 1 P)
die_one q6 >/dev/null
"$MQ" archive --dead --older-than 0s >/dev/null
expect_status 66 "push --after a dead archived parent, --if-parent-dies wait" "$MQ" push --queue q6kid --after "$p" --if-parent-dies wait W
is "$ERR" "mq push: parent $p is dead and archived: it cannot be retried (--if-parent-dies wait)" "  refused"
expect_status 0 "  with run: pushed" "$MQ" push --queue q6kid --after "$p" --if-parent-dies run R
is "$(st "$OUT")" "ready" "  and due at once"
sql "DELETE FROM mq_jobs WHERE queue = 'q6kid'"
# an archived parent in neither state (another program's row): it never
# finishes, and is said to be what it is (it was called dead)
sql "SET SESSION sql_mode = '', check_constraint_checks = 0;
     INSERT INTO mq_jobs_archive (id, queue, state, payload, created_at, available_at)
     VALUES (900600, 'q6', 'zz', 'x', UTC_TIMESTAMP(), UTC_TIMESTAMP())"
expect_status 66 "push --after an archived parent in an invalid state" "$MQ" push --queue q6kid --after 900600 Z
is "$ERR" "mq push: parent 900600 is archived neither done nor dead (an invalid state): it never finishes (--if-parent-dies cancel)" "  refused, saying what it is"
expect_status 66 "  with wait: refused too" "$MQ" push --queue q6kid --after 900600 --if-parent-dies wait Z
expect_status 0 "  with run: pushed" "$MQ" push --queue q6kid --after 900600 --if-parent-dies run R
is "$(st "$OUT")" "ready" "  and due at once"
sql "DELETE FROM mq_jobs WHERE queue = 'q6kid'; DELETE FROM mq_jobs_archive WHERE id = 900600"

# ---- fan-in under 8 consumers of both claims: the dependent once, after all
sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_deps; DELETE FROM mq_jobs_waits"
seq 1 300 | "$MQ" push --queue many --lines --quiet >"$T_TMP/ids"
k=$("$MQ" push --queue many --after-file "$T_TMP/ids" last)
is "$(sql "SELECT CONCAT(parent_shards, '/', (SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $k)) FROM mq_jobs WHERE id = $k")" "300/300" \
  "300 parents in 300 shards"
: >"$T_TMP/runs"
i=0
for how in skip-locked update skip-locked update skip-locked update skip-locked update; do
  "$MQ" work --queue many --claim "$how" --exit-when-empty -- \
    sh -c 'read -r p; echo "$p $(date +%s%N) $MQ_JOB_ID" >>"$0"' "$T_TMP/runs" >/dev/null 2>&1 &
  i=$((i + 1))
done
wait
is "$(grep -c '^last ' "$T_TMP/runs")" 1 "the dependent ran once"
is "$(wc -l <"$T_TMP/runs" | tr -d ' ')" 301 "every job ran once"
lastt=$(awk '$1 == "last" { print $2 }' "$T_TMP/runs")
maxp=$(awk '$1 != "last" { if ($2 > m) m = $2 } END { print m }' "$T_TMP/runs")
check "after the last parent started" test "$lastt" -gt "$maxp"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE state <> 'done'")" 0 "all done"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE met = 0")" 0 "every edge met"

# ---- 16 consumers of both claims, 3 of them killed -9 mid-job: the
# parents they held run again once their lease ends (requeue-stale);
# the dependent, in a queue of its own, becomes due once, after the
# last parent's end, and runs once
sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_deps; DELETE FROM mq_jobs_waits"
seq 1 400 | "$MQ" push --queue k9 --lines --quiet >"$T_TMP/ids9"
k=$("$MQ" push --queue k9kid --after-file "$T_TMP/ids9" last)
cat >"$T_TMP/job9.sh" <<'SH'
read -r p
echo "$MQ_ID" >"$T_TMP9/cur.$W"
sleep 0.02
echo "$p $(date +%s%N)" >>"$T_TMP9/runs"
SH
export T_TMP9="$T_TMP"
: >"$T_TMP/runs"
pids=
for w in $(seq 1 16); do
  how=skip-locked; [ $((w % 2)) = 0 ] && how=update
  W=$w "$MQ" work --queue k9 --claim $how --lease 2s --exit-when-empty -- sh "$T_TMP/job9.sh" >/dev/null 2>&1 &
  pids="$pids $!"
  eval "p9_$w=\$!"
done
sleep 1
for w in 3 8 13; do eval "kill -9 \$p9_$w"; done
for p in $pids; do wait "$p" 2>/dev/null; done
# the killed ones' leases end; taken back and run to the end
sleep 2.2
"$MQ" requeue-stale >/dev/null
"$MQ" work --queue k9 --exit-when-empty -- sh "$T_TMP/job9.sh" >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'k9' AND state = 'done'")" 400 "every parent done despite 3 consumers killed -9"
is "$(sql "SELECT CONCAT(state, ' ', parent_shards, ' ', available_at < '9999-01-01') FROM mq_jobs WHERE id = $k")" "ready 0 1" \
  "the dependent due, its shards all met"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE child = $k AND met = 1"):$(sql "SELECT COALESCE(SUM(parents), 0) FROM mq_jobs_waits WHERE child = $k")" "400:0" \
  "each edge met once (no shard below 0)"
"$MQ" work --queue k9kid --exit-when-empty -- sh "$T_TMP/job9.sh" >/dev/null 2>&1
is "$(grep -c '^last ' "$T_TMP/runs")" 1 "the dependent ran once"
lastt=$(awk '$1 == "last" { print $2 }' "$T_TMP/runs")
maxp=$(awk '$1 != "last" { if ($2 > m) m = $2 } END { print m }' "$T_TMP/runs")
check "after every parent's last run" test "$lastt" -gt "$maxp"

# ---- a dependent's last parent, met in one statement (deps.c
# sql_last_parent), and the cases it must leave to the others: two
# parents in one shard (ids 1,024 apart), the second of them the last;
# two last parents acked together; a dependent cancelled while it
# waited; a dead last parent of one that runs anyway
shards() { sql "SELECT CONCAT(IFNULL(j.parent_shards, '-'), '/', IFNULL((SELECT GROUP_CONCAT(w.parents ORDER BY w.shard) FROM mq_jobs_waits w WHERE w.child = j.id), '-'), '/', (SELECT COUNT(*) FROM mq_jobs_deps d WHERE d.child = j.id AND d.met = 0)) FROM mq_jobs j WHERE j.id = $1"; }
a=$("$MQ" push --queue lp1 A)
seq 1 1023 | "$MQ" push --queue lpfill --lines --quiet >/dev/null
b=$("$MQ" push --queue lp2 B)
is "$((b - a))" 1024 "  (two parents 1024 apart: one shard)"
k=$("$MQ" push --queue lpkid --after "$a,$b" K)
is "$(shards "$k")" "1/2/2" "one shard of two parents: parent_shards 1, the shard's 2, 2 edges unmet"
done_one lp1 >/dev/null
is "$(st "$k")/$(shards "$k")" "ready:waiting/1/1/1" "  the first done: still waiting, the shard's 1"
done_one lp2 >/dev/null
is "$(st "$k")/$(shards "$k")" "ready/0/0/0" "  the second, its last: due, the shard emptied, every edge met"
a=$("$MQ" push --queue lp3 A) b=$("$MQ" push --queue lp3 B)
k=$("$MQ" push --queue lpkid2 --after "$a,$b" K)
ra=$("$MQ" pop --queue lp3 -o /dev/null) rb=$("$MQ" pop --queue lp3 -o /dev/null)
"$MQ" ack "$ra" "$rb" >/dev/null
is "$(st "$k")/$(shards "$k")" "ready/0/0,0/0" "two last parents acked together: due once, both shards emptied"
is "$("$MQ" pop --queue lpkid2 -o /dev/null >/dev/null; echo $?)/$("$MQ" pop --queue lpkid2 -o /dev/null >/dev/null; echo $?)" "0/1" "  claimed once, then none"
a=$("$MQ" push --queue lp4 A)
k=$("$MQ" push --queue lpkid3 --after "$a" K)
"$MQ" cancel "$k" >/dev/null
done_one lp4 >/dev/null
is "$(st "$k")/$(shards "$k")" "dead/0/0/0" "a dependent cancelled while it waited: its parent done, it stays dead, its counts met"
a=$("$MQ" push --queue lp5 --max-attempts 1 A)
k=$("$MQ" push --queue lpkid4 --if-parent-dies run --after "$a" K)
die_one lp5 >/dev/null
is "$(st "$k")/$(shards "$k")" "ready/0/0/0" "a dead last parent of one that runs anyway: due, met"

# ---- a chain: each after the one before, mq work -c 4 runs them in order
sql "DELETE FROM mq_jobs; DELETE FROM mq_jobs_deps; DELETE FROM mq_jobs_waits"
prev=$("$MQ" push --queue chain 1)
for i in $(seq 2 40); do prev=$("$MQ" push --queue chain --after "$prev" "$i"); done
: >"$T_TMP/chain"
"$MQ" work --queue chain --concurrency 4 --exit-when-empty -- \
  sh -c 'read -r p; echo "$p" >>"$0"' "$T_TMP/chain" >/dev/null 2>&1
is "$(tr '\n' ' ' <"$T_TMP/chain")" "$(seq 1 40 | tr '\n' ' ')" "40 links ran in order, once each"
# (its transactions and statements a link: t356, which runs alone)

# ---- README's example, as written: the index job runs last, once
mkdir -p "$T_TMP/bin" "$T_TMP/ex"
ln -s "$MQ" "$T_TMP/bin/mq"
(
  cd "$T_TMP/ex" || exit 1
  PATH=$T_TMP/bin:$PATH
  run_example after
  echo "$RC" >"$T_TMP/ex.rc"
  printf '%s\n' "$OUT" >"$T_TMP/ex.out"
)
is "$(cat "$T_TMP/ex.rc"):$(cat "$T_TMP/ex.out")" "0:index" "the README's example runs: the index job last"
is "$(grep -c . "$T_TMP/ex/ran")" 21 "  after the 20 images, each once"

# ---- archive racing what makes a dependent wait for a dead parent (a
# push --after with --if-parent-dies wait; a retry of a dependent it
# cancelled): the parent is archived, and the push or retry refused, or
# it stays; never both (the dependent waiting for ever for a parent in
# the archive, or gone with --purge: 37 and 31 of 60 before)
stranded() { sql "SELECT COUNT(*) FROM mq_jobs j JOIN mq_jobs_deps d ON d.child = j.id
  LEFT JOIN mq_jobs p ON p.id = d.parent WHERE j.state = 'ready' AND d.met = 0 AND p.id IS NULL"; }
for how in "" --purge; do
  i=0
  while [ $i -lt 30 ]; do
    a=$("$MQ" push --queue ra a); "$MQ" cancel "$a" >/dev/null
    "$MQ" archive --older-than 0s --dead --quiet $how &
    "$MQ" push --queue rc --if-parent-dies wait --after "$a" c >/dev/null 2>&1 &
    wait
    i=$((i + 1))
  done
  is "$(stranded)" 0 "archive $how --dead racing push --after a dead parent (wait): no dependent stranded"
done
i=0
while [ $i -lt 30 ]; do
  a=$("$MQ" push --queue ra a); c=$("$MQ" push --queue rc --after "$a" c)
  "$MQ" cancel "$a" >/dev/null
  sql "UPDATE mq_jobs SET finished_at = finished_at - INTERVAL 2 HOUR WHERE id = $a"
  "$MQ" archive --older-than 1h --dead --quiet &
  "$MQ" retry "$c" >/dev/null 2>&1 &
  wait
  i=$((i + 1))
done
is "$(stranded)" 0 "archive --dead racing retry of the dependent it cancelled: none stranded"

done_testing
