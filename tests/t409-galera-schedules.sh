#!/bin/sh
# Calendar schedules on a 3-node Galera cluster (issue 33): a file
# applied on one node is the schedules of every node; 20 due schedules
# fired at once by mq schedule fire and by consumers on all three nodes
# run once each per instant (the ledger's primary key is an insert that
# certification checks, the schedule's row a write: two nodes that fire
# one schedule conflict, and mq begins again, finding it moved); no
# certification failure reaches a user; an instant fired already is
# not fired again when next_at is moved back by hand; three applies of
# one file on three nodes at once end in the same schedules.
. "$(dirname "$0")/lib.sh"
galera_cluster
gmq 1 init >/dev/null

F=$T_TMP/sched.conf
: >"$F"
i=0
while [ $i -lt 20 ]; do
  printf '[s%d]\ncron = * * * * *\nqueue = q%d\npayload = run of s%d\n\n' \
    $i $((i % 3)) $i >>"$F"
  i=$((i + 1))
done
expect_status 0 "apply 20 schedules on node 1" gmq 1 schedule apply "$F"
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs_schedules")" 20 "node 3 has them"

# due: this minute's instant for all (less than a minute late)
due_all() {
  gsql 1 "UPDATE mq_jobs_schedules SET next_at = DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:00')"
  gsql 2 "SELECT 1" >/dev/null
  gsql 3 "SELECT 1" >/dev/null
}
certs() {
  echo $(($(gstatus 1 wsrep_local_cert_failures) + $(gstatus 2 wsrep_local_cert_failures) + $(gstatus 3 wsrep_local_cert_failures)))
}

# round: 2 mq schedule fire and one mq pop --wait per queue on each node
round() {
  : >"$T_TMP/err"
  pids=
  for n in 1 2 3; do
    for k in 1 2; do
      gmq $n schedule fire >/dev/null 2>>"$T_TMP/err" &
      pids="$pids $!"
    done
    for q in q0 q1 q2; do
      gmq $n pop --queue $q --wait 3s >>"$T_TMP/popped.$n" 2>/dev/null &
      pids="$pids $!"
    done
  done
  for p in $pids; do wait "$p"; done
}

c0=$(certs)
# not in the last 20 s of a minute: both rounds run before the next
# whole minute (every schedule fires again there)
while [ "$(date -u +%S)" -ge 40 ]; do sleep 1; done
due_all
instant=$(gsql 1 "SELECT DATE_FORMAT(MIN(next_at), '%Y-%m-%d %H:%i:%s') FROM mq_jobs_schedules")
round
is "$(cat "$T_TMP/err")" "" "9 fires and 9 consumers on 3 nodes at once: nothing on stderr"
is "$(gsql 2 "SELECT COUNT(*), COUNT(DISTINCT schedule), COUNT(job) FROM mq_jobs_fired WHERE instant = '$instant'" | tr '\t' ' ')" \
  "20 20 20" "one ledger row with its job per schedule for the instant"
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE payload LIKE 'run of s%'")" 20 \
  "20 runs, one a schedule"
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs_schedules WHERE next_at <= UTC_TIMESTAMP(6)")" 0 \
  "every schedule moved past now"
c1=$(certs)
echo "# certification failures in the round (retried inside mq): $((c1 - c0))"

# the instant again, by hand: the ledger says it ran
gsql 1 "UPDATE mq_jobs_schedules SET next_at = '$instant'"
gsql 3 "SELECT 1" >/dev/null
round
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs_fired WHERE instant = '$instant'")" 20 \
  "next_at moved back to a fired instant: no second run"
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE payload LIKE 'run of s%'")" 20 \
  "  still 20 runs"
is "$(cat "$T_TMP/err")" "" "  nothing on stderr"

# three applies of a changed file at once, one a node
sed 's/cron = \* \* \* \* \*/cron = 0 * * * */' "$F" >"$T_TMP/changed.conf"
pids=
for n in 1 2 3; do
  gmq $n schedule apply "$T_TMP/changed.conf" >"$T_TMP/apply.$n" 2>&1 &
  pids="$pids $!"
done
rcs=
for p in $pids; do wait "$p"; rcs="$rcs$?"; done
is "$rcs" 000 "three applies of one file on three nodes at once: all succeed"
is "$(gsql 1 "SELECT COUNT(*), COUNT(DISTINCT expr) FROM mq_jobs_schedules" | tr '\t' ' ')" "20 1" \
  "  20 schedules, all the new expression"
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs_schedules WHERE expr = '0 * * * *' AND MINUTE(next_at) = 0 AND SECOND(next_at) = 0")" 20 \
  "  every one due at a whole hour on node 3"
is "$(cat "$T_TMP"/apply.* | grep -c '^changed ')" 20 \
  "  each schedule changed once (the others found it changed already)"
done_testing
