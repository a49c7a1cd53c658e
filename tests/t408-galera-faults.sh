#!/bin/sh
# The cluster under faults (issue 34; FAULTS in mq-galera(7)): a
# fixed-seed run of tests/galera-faults.sh on the 3-node cluster, one
# fault of each kind (kill -9 of one node, of two within a second, a
# SIGSTOP past the suspect timeout, a node isolated by gmcast.isolate),
# while producers push (some with --dedup) and consumers of both claim
# strategies (pop/ack loops, mq work) drain on all nodes; then
# tests/galera-check.py decides from the logs and the tables, one line
# per property: every push that printed an id is there, every job done
# once, no two executions of a job at once unless the first lost its
# lease and its ack was refused, counts equal the tables, nothing left
# leased. MQ_FAULT_SEED=N runs another schedule (the seed is printed).
# A run whose checker finds a violation is kept, its directory named.
. "$(dirname "$0")/lib.sh"
if [ ! -e /usr/lib/galera/libgalera_smm.so ]; then
  echo "1..0 # SKIP galera-4 is not installed (tests/deps.sh installs it)"
  exit 0
fi
# the checker finds what is planted in a made-up run (the fixture's
# README says what), and names the loss the settings allow
cp -r "$TESTS_DIR/fixtures/faults" "$T_TMP/planted"
python3 "$TESTS_DIR/galera-check.py" "$T_TMP/planted" >"$T_TMP/planted.out"
is "$?:$(tr '\t\n' '= ' <"$T_TMP/planted/verdict")" \
  "1:pushed=2 once=2 overlap=1 counts=2 leases=1 " \
  "checker, a run with violations planted: each found, status 1"
like "$(cat "$T_TMP/planted.out")" "*push p1 #5 printed id 5 (status 0) and the job is gone*push p1 #7 printed id 2, whose payload is p1-2-1, not p1-7-1*job 1 acked 2 times*job 3 is leased, not done*job 1: attempt 1 (c1, port 31903, ack yes) and attempt 2 (w1, port 31923, ack yes) ran at once*_counts says 2 done, the tables 3*job tables differ*job 3 leased until*" \
  "  each violation named"
like "$(cat "$T_TMP/planted.out")" "# allowed loss: job 6 (push p1 #4): innodb_flush_log_at_trx_commit=0 on node1, coordinated crash (kill3*" \
  "  the loss the settings allow is named, not counted"
# what the whole cluster's crash at innodb_flush_log_at_trx_commit=0 may
# lose is counted, and no more (tests/fixtures/faults-lossy/README)
cp -r "$TESTS_DIR/fixtures/faults-lossy" "$T_TMP/lossy"
python3 "$TESTS_DIR/galera-check.py" "$T_TMP/lossy" >"$T_TMP/lossy.out"
is "$?:$(tr '\t\n' '= ' <"$T_TMP/lossy/verdict"):$(tr '\t\n' '= ' <"$T_TMP/lossy/lost" 2>/dev/null)" \
  "1:pushed=0 once=1 overlap=1 counts=0 leases=0 :pushes=1 acks=1 claims=1 " \
  "checker, a crash the settings allow: a push, an ack, a claim lost, counted; a double ack before it still a violation"
like "$(cat "$T_TMP/lossy.out")" "*allowed loss: job 2 (push p1 #2)*allowed loss: job 1: the ack of token aaaa*allowed loss: job 4: the claim of token ffff*job 3 acked 2 times*" \
  "  each named"
like "$(cat "$T_TMP/planted.out")" "*exec w1 attempt 1 on port 31923 pid 202 token ffff: 5000-? ms*" \
  "  with the job's history"

galera_cluster
RUN=$T_TMP/run
JOBS=200
[ -n "${MQ_SANITIZED:-}" ] && JOBS=80
MQ_FAULT_SEED=${MQ_FAULT_SEED:-408} MQ_FAULT_JOBS=$JOBS MQ_DATABASE=$T_DB \
  MQ_FAULT_FAULTS=kill1,kill2,stop,isolate \
  sh "$TESTS_DIR/galera-faults.sh" "$G_DIR" "$RUN" 2>"$T_TMP/run.err"
is "$?" 0 "the run ended (seed $(cat "$RUN/seed" 2>/dev/null))"
sed 's/^/# /' "$T_TMP/run.err"
for k in kill1 kill2 stop isolate; do
  like "$(grep -c " $k .*begin" "$RUN/faults.log")" "[1-9]*" "fault injected: $k"
done
python3 "$TESTS_DIR/galera-check.py" "$RUN" >"$T_TMP/check.out"
st=$?
grep '^#' "$T_TMP/check.out"
for p in pushed once overlap counts leases; do
  v=$(awk -F '\t' -v p=$p '$1 == p { print $2 }' "$RUN/verdict" 2>/dev/null)
  if [ "$v" = 0 ]; then
    ok "checker: $p: no violation"
  else
    not_ok "checker: $p: ${v:-no verdict} violations" \
      "$(sed -n "/^$p:/,/^[a-z]*: /p" "$T_TMP/check.out")"
  fi
done
is "$st" 0 "the checker's status is 0"
jobs=$(wc -l <"$RUN/jobs.tsv" | tr -d ' ')
check "the run had jobs ($jobs) and executions of both consumers" \
  grep -q '^E' "$RUN/c1.log" "$RUN/w1.log"
if [ "$T_FAILED" -gt 0 ]; then
  keep=${TMPDIR:-/tmp}/mq-faults.$(cat "$RUN/seed").$$
  cp -r "$RUN" "$keep"
  echo "# the run is kept in $keep (tests/galera-check.py $keep)"
fi
for n in 1 2 3; do
  is "$(sh "$TESTS_DIR/galera.sh" status "$G_DIR" $n)" Synced "node $n Synced at the end"
done
done_testing
