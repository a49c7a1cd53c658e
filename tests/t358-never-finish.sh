#!/bin/sh
# A dependent is never left waiting for a job that can never finish (a
# review's defect): a dead job a parent of which (not met) is gone,
# purged or archived dead, can never be retried; nor can a dead job
# below it. Those that wait for such a job (--if-parent-dies wait, or
# made to wait again by mq retry) are cancelled when it becomes so, as
# below a purged job, and mq retry refuses to make one wait for it.
# Before: the --if-parent-dies wait grandchild of a purged job, or of a
# dead job then archived, waited for ever, and kept its dead parent in
# the job table for ever.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

W='9999-12-31 23:59:59.999999'
st() { sql "SELECT CONCAT(state, IF(state = 'ready' AND available_at = '$W', ':waiting', '')) FROM mq_jobs WHERE id = $1"; }
err_of() { sql "SELECT IFNULL(last_error, '') FROM mq_jobs WHERE id = $1"; }
# stranded: waiting jobs with an ancestor not met, up through dead jobs,
# that is not in the job table
stranded() {
  sql "WITH RECURSIVE a (child, id) AS (
      SELECT d.child, d.parent FROM mq_jobs_deps d JOIN mq_jobs j ON j.id = d.child
       WHERE d.met = 0 AND j.state = 'ready' AND j.parent_shards > 0
      UNION SELECT a.child, d.parent FROM a JOIN mq_jobs p ON p.id = a.id
       AND p.state = 'dead' JOIN mq_jobs_deps d ON d.child = a.id AND d.met = 0)
    SELECT COUNT(DISTINCT a.child) FROM a LEFT JOIN mq_jobs p ON p.id = a.id
     WHERE p.id IS NULL"
}
counts_exact() { is "$(counted_jobs)" "$(finished_jobs)" "$1: the counts are exact (a recount finds nothing)"; }

# ---- a purged parent's dependent cancelled: its --if-parent-dies wait
# dependent is cancelled too (it waited for ever)
p=$("$MQ" push --queue A P)
x=$("$MQ" push --queue B --after "$p" X)
y=$("$MQ" push --queue B --after "$x" --if-parent-dies wait Y)
expect_status 0 "purge of the grandparent" "$MQ" purge --queue A --yes
is "$(st "$x"):$(err_of "$x")" "dead:cancelled: parent $p was purged" "the dependent cancelled"
is "$(st "$y"):$(err_of "$y")" "dead:cancelled: parent $x is dead" "its wait dependent cancelled: its parent can never be retried"
expect_status 1 "retry of the dependent" "$MQ" retry "$x"
expect_status 1 "retry of the grandchild" "$MQ" retry "$y"
like "$ERR" "*1 job left dead: a parent of theirs can never finish*: $y" "  refused: its parent can never finish, though in the job table"
is "$(st "$y")" "dead" "  and left dead"
expect_status 0 "archive --dead" "$MQ" archive --dead --older-than 0s
is "$OUT" "archived 2 jobs" "  nothing keeps them"
is "$(stranded)" 0 "no job waits for a job that can never finish"
counts_exact "purge"

# ---- a dead parent archived: the dependent it cancelled can never be
# retried; the wait dependent of that one is cancelled by the archive
p=$("$MQ" push --queue c P)
x=$("$MQ" push --queue c --after "$p" X)
y=$("$MQ" push --queue c --after "$x" --if-parent-dies wait Y)
"$MQ" cancel "$p" >/dev/null
is "$(st "$x"):$(st "$y")" "dead:ready:waiting" "cancel: the dependent dead, the wait one waits (its parent may be retried)"
expect_status 0 "archive --dead" "$MQ" archive --dead --older-than 0s
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE id = $p")" 1 "  the dead parent archived"
is "$(st "$y"):$(err_of "$y")" "dead:cancelled: parent $x is dead" "  the wait dependent of the job it cancelled cancelled with it"
expect_status 1 "retry of that job" "$MQ" retry "$x"
is "$(stranded)" 0 "no job waits for a job that can never finish"
counts_exact "archive"

# ---- deeper: P dead, X1 and X2 cancelled with it, Y (wait) waits for
# X2; the archive of P cancels Y, and a retry of X2 is refused
p=$("$MQ" push --queue d P)
x1=$("$MQ" push --queue d --after "$p" X1)
x2=$("$MQ" push --queue d --after "$x1" X2)
y=$("$MQ" push --queue d --after "$x2" --if-parent-dies wait Y)
"$MQ" cancel "$p" >/dev/null
is "$(st "$x2"):$(st "$y")" "dead:ready:waiting" "a chain cancelled, its wait tail waiting"
sql "UPDATE mq_jobs SET finished_at = finished_at - INTERVAL 1 HOUR WHERE id = $p"
"$MQ" archive --dead --older-than 30m >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_archive WHERE id = $p"):$(st "$x1"):$(st "$x2")" "1:dead:dead" "  only the head archived"
is "$(st "$y"):$(err_of "$y")" "dead:cancelled: parent $x2 is dead" "  the tail cancelled (two dead jobs between)"
expect_status 1 "retry of the middle of the chain" "$MQ" retry "$x2"
like "$ERR" "*can never finish*: $x2" "  refused: a grandparent is gone"
is "$(stranded)" 0 "no job waits for a job that can never finish"

# ---- a live parent purged whose dead dependent (cancelled by another
# parent) has a waiting dependent: that one is cancelled
q=$("$MQ" push --queue e Q)
l=$("$MQ" push --queue e2 L)
x=$("$MQ" push --queue e --after "$q,$l" X)
y=$("$MQ" push --queue e --after "$x" --if-parent-dies wait Y)
"$MQ" cancel "$q" >/dev/null
is "$(st "$x"):$(st "$y")" "dead:ready:waiting" "a dependent dead by one parent, its wait dependent waiting"
expect_status 0 "purge of its other, live, parent" "$MQ" purge --queue e2 --yes
is "$(st "$y"):$(err_of "$y")" "dead:cancelled: parent $x is dead" "  the wait dependent cancelled"
is "$(stranded)" 0 "no job waits for a job that can never finish"
counts_exact "purge of a live parent"

# ---- what stays as it was: a dead parent's wait dependent still waits,
# and the parent stays in the job table to be retried
p=$("$MQ" push --queue f --max-attempts 1 P)
y=$("$MQ" push --queue f --after "$p" --if-parent-dies wait Y)
"$MQ" cancel "$p" >/dev/null
"$MQ" archive --dead --older-than 0s >/dev/null
is "$(st "$p"):$(st "$y")" "dead:ready:waiting" "a dead parent a dependent waits for stays"
expect_status 0 "and can be retried" "$MQ" retry "$p"

# ---- a push that would wait for a dead job that can never be retried
# (its parent purged): refused, as after one dead in the archive
# (before: pushed, and waited for ever); run takes it as done
p=$("$MQ" push --queue g P)
x=$("$MQ" push --queue g2 --after "$p" X)
"$MQ" purge --queue g --yes >/dev/null
is "$(st "$x")" "dead" "a dependent cancelled by its purged parent"
before=$(sql "SELECT COUNT(*) FROM mq_jobs")
expect_status 66 "push --after it --if-parent-dies wait: refused" \
  "$MQ" push --queue g2 --after "$x" --if-parent-dies wait Y
is "$ERR" "mq push: parent $x is dead and can never be retried: a job above it was purged or archived dead (--if-parent-dies wait)" "  in one line"
is "$(sql "SELECT COUNT(*) FROM mq_jobs")" "$before" "  nothing pushed"
y=$("$MQ" push --queue g2 --after "$x" --if-parent-dies run Y)
is "$(st "$y")" "ready" "  --if-parent-dies run: due at once"
is "$(stranded)" 0 "no job waits for a job that can never finish"

done_testing
