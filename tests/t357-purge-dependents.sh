#!/bin/sh
# mq purge and the dependents of the jobs it deletes (a review's defect):
# the dependents passed over were "those of the purged queue", which the
# purge was to delete itself; but a batch deletes only what it picked
# (SKIP LOCKED passes over a locked row) and an interrupted purge runs no
# more batches, so a dependent locked at that moment, or left to a later
# batch, waited for ever for a parent that was gone. Now the purge
# passes over only the dependents it deleted in the same transaction:
# every other one gets its policy (cancelled, run, or cancelled for
# wait), and no dependent waits for a job that is not there.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

W='9999-12-31 23:59:59.999999'
st() { sql "SELECT CONCAT(state, IF(state = 'ready' AND available_at = '$W', ':waiting', '')) FROM mq_jobs WHERE id = $1"; }
err_of() { sql "SELECT IFNULL(last_error, '') FROM mq_jobs WHERE id = $1"; }
# stranded: waiting dependents (any queue) with a parent not met that
# is not in the job table (nothing can ever release them)
stranded() {
  sql "SELECT COUNT(DISTINCT d.child) FROM mq_jobs_deps d
    JOIN mq_jobs j ON j.id = d.child LEFT JOIN mq_jobs p ON p.id = d.parent
    WHERE d.met = 0 AND p.id IS NULL AND j.state = 'ready'
    AND j.parent_shards > 0"
}
counts_exact() { is "$(counted_jobs)" "$(finished_jobs)" "$1: the counts are exact (a recount finds nothing)"; }

# ---- a dependent of the purged queue locked while the purge runs: the
# batch does not take it (SKIP LOCKED); it is cancelled, not passed over
p=$("$MQ" push --queue q P)
x=$("$MQ" push --queue q --after "$p" X)
w=$("$MQ" push --queue q --after "$p" --if-parent-dies wait W)
r=$("$MQ" push --queue q --after "$p" --if-parent-dies run R)
mariadb --no-defaults --socket="$MQ_TEST_SOCKET" --user=root -N -B "$T_DB" \
  -e "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN;
      SELECT id FROM mq_jobs WHERE id = $x FOR UPDATE;
      SELECT id FROM mq_jobs WHERE id = $w FOR UPDATE;
      SELECT id FROM mq_jobs WHERE id = $r FOR UPDATE;
      SELECT SLEEP(2); COMMIT;" >/dev/null &
locker=$!
# the locker holds the three rows (only them: each by its key, read
# committed) once its SLEEP runs
for _ in $(seq 100); do
  [ "$(sql_root "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(2)%'")" = 1 ] && break
  sleep 0.05
done
expect_status 0 "purge while the dependents' rows are locked" "$MQ" purge --queue q --yes
is "$OUT" "purged 1 job from queue 'q'" "  the parent deleted, the locked dependents passed over by the pick"
wait "$locker"
is "$(st "$x"):$(err_of "$x")" "dead:cancelled: parent $p was purged" "cancel: a locked dependent of the purged queue is cancelled"
is "$(st "$w"):$(err_of "$w")" "dead:cancelled: parent $p was purged" "wait: cancelled too"
is "$(st "$r")" "ready" "run: due (its parent counts as done)"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE parent = $p AND met = 0 AND child IN (SELECT id FROM mq_jobs WHERE state = 'ready')")" 0 \
  "no edge of the purged parent left unmet for a live dependent"
is "$(stranded)" 0 "no dependent waits for a job that is gone"
"$MQ" why "$x" >"$T_TMP/why" 2>&1
like "$(cat "$T_TMP/why")" "*dead*cancelled: parent $p was purged*" "  mq why says it is dead, and why"
counts_exact "locked"

# ---- the same purge, nothing locked: the dependents the batch deletes
# with their parent go (not cancelled, not counted dead)
sql "DELETE FROM mq_jobs_counts WHERE queue = 'pq'"
p=$("$MQ" push --queue pq P)
c=$("$MQ" push --queue pq --after "$p" C)
expect_status 0 "purge of a parent and its dependent in one batch" "$MQ" purge --queue pq --yes
is "$OUT" "purged 2 jobs from queue 'pq'" "  both deleted"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'pq'"):$(sql "SELECT COUNT(*) FROM mq_jobs_deps WHERE parent = $p OR child = $c")" \
  "0:0" "  gone, and their edges"
counts_exact "one batch"

# ---- a dependent in a later batch than its parent: the batch that
# deletes the parent cancels it (a batch never run, the purge stopped,
# must not leave it waiting)
seq 600 | "$MQ" push --lines --quiet --queue big >/dev/null
p=$(sql "SELECT MIN(id) FROM mq_jobs WHERE queue = 'big'")
c=$("$MQ" push --queue big --after "$p" C)
expect_status 0 "purge of 601 jobs, the dependent after its parent's batch" "$MQ" purge --queue big --yes
is "$OUT" "purged 600 jobs from queue 'big'" "  the 600 deleted"
is "$(st "$c"):$(err_of "$c")" "dead:cancelled: parent $p was purged" "  the dependent cancelled by its parent's batch, left dead"
counts_exact "two batches"

# ---- a purge killed once it deleted the parent: its dependents are
# cancelled already (before: 50 left waiting for the deleted parent 1)
seq 100000 | "$MQ" push --lines --quiet --queue kq >/dev/null
p=$(sql "SELECT MIN(id) FROM mq_jobs WHERE queue = 'kq'")
seq 50 | "$MQ" push --lines --quiet --queue kq --after "$p" >/dev/null
"$MQ" purge --queue kq --yes >/dev/null 2>&1 &
purger=$!
for _ in $(seq 400); do
  [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE id = $p")" = 0 ] && break
  sleep 0.01
done
kill -KILL "$purger" 2>/dev/null
wait "$purger" 2>/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE id = $p")" 0 "killed after the parent's batch committed"
is "$(stranded)" 0 "  no dependent left waiting for it"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'kq' AND state = 'dead' AND last_error = 'cancelled: parent $p was purged'")" 50 \
  "  its 50 dependents cancelled"
counts_exact "killed"

done_testing
