#!/bin/sh
# A claim the cluster lost is not run (issue 34; CLAIMS CONFIRMED in
# mq-galera(7)). Galera can lose a write set a node reported committed
# (the double run of issue 34: a claim committed on one node that the
# others never applied, the job claimed again there and run twice). A
# claim made through a list of hosts is handed out once another node of
# the list shows its jobs leased with the claim's token.
#
# The loss is made real on nodes 2 and 3: a trigger created there alone
# (wsrep_on off in its session) rewrites the token of job 'lost-me' as
# those nodes apply a claim of it (slave_run_triggers_for_rbr: the
# applier runs triggers), so that node 1, where the claim is made, holds
# it and the others do not, as after a lost write set. Without the
# confirmation mq pop printed the job and exited 0, and mq work ran it.
. "$(dirname "$0")/lib.sh"

galera_cluster
galera_hosts
LIST=$N1,$N2,$N3
expect_status 0 "init through the list" "$MQ" init --host "$LIST"

# on one node, not replicated: the node's own trigger, run by its applier
# alone (what the node applies from the others, not its own sessions'
# statements), and its applier running triggers (a global: set back at
# the end, whatever happens). A claim of 'lost-me' loses its token there;
# an ack of 'ack-lost' leaves it leased; a claim of 'slow' is applied a
# second late.
lose() { # lose N on|off
  if [ "$2" = on ]; then
    # (one query: the client would cut the trigger's body at its ';')
    mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root \
      --delimiter=// "$T_DB" -e "
      SET SESSION wsrep_on = OFF;
      CREATE TRIGGER lose_claim BEFORE UPDATE ON mq_jobs FOR EACH ROW
      BEGIN
        IF USER() LIKE '<wsrep_applier>%' THEN
          SET NEW.lease_token = IF(NEW.payload = 'lost-me' AND
            NEW.state = 'leased', REPEAT('0', 32), NEW.lease_token);
          SET NEW.state = IF(NEW.payload = 'ack-lost' AND
            NEW.state = 'done', 'leased', NEW.state);
          IF NEW.payload = 'slow' AND NEW.state = 'leased' THEN
            SET @slept = SLEEP(1);
          END IF;
        END IF;
      END;
      SET GLOBAL slave_run_triggers_for_rbr = YES"
  else
    mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root "$T_DB" -e "
      SET SESSION wsrep_on = OFF;
      DROP TRIGGER IF EXISTS lose_claim;
      SET GLOBAL slave_run_triggers_for_rbr = NO"
  fi
}
trap 'lose 2 off 2>/dev/null; lose 3 off 2>/dev/null; t_cleanup' EXIT
# node N's row of the job with payload P: state, token, attempts
row() {
  mariadb --no-defaults --socket="$G_DIR/n$1/sock" --user=root -N -B "$T_DB" \
    -e "SELECT state, lease_token, attempts FROM mq_jobs WHERE payload = '$2' AND queue = '$3'"
}

# work_until_lost QUEUE N RAN ERR: mq work in the background ($wp) on
# QUEUE for N jobs, each appending its payload to RAN (after 0.3 s: the
# next claim carries its ack), its stderr in ERR, until ERR says a claim
# was not handed out
work_until_lost() {
  timeout 120 "$MQ" work --host "$LIST" --queue "$1" --lease 3s --max-jobs "$2" \
    -- sh -c 'sleep 0.3; cat >>"$1"; echo >>"$1"' sh "$3" 2>"$4" &
  wp=$!
  _i=0
  while ! grep -q 'not handed out' "$4" && [ $_i -lt 300 ]; do
    sleep 0.1; _i=$((_i + 1))
  done
}

# ---- a healthy cluster: claims are read on another node, and handed out
"$MQ" push --host "$LIST" --queue ok one >/dev/null
c2=$(gstatus 2 Com_stmt_execute) c3=$(gstatus 3 Com_stmt_execute)
expect_status 0 "a claim through the list: handed out" "$MQ" pop --host "$LIST" --queue ok
is "$OUT" one "  the job printed"
n=$(( $(gstatus 2 Com_stmt_execute) + $(gstatus 3 Com_stmt_execute) - c2 - c3 ))
# (gstatus itself runs no prepared statement)
is "$n" 1 "  one read on another node confirmed it"

# ---- the claim lost: its job is not handed out
lose 2 on
lose 3 on
triggers() { gsql "$1" "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"; }
is "$(triggers 1):$(triggers 2):$(triggers 3)" "0:1:1" \
  "the loss set up: the triggers of nodes 2 and 3, not node 1's"
"$MQ" push --host "$LIST" --queue l1 lost-me >/dev/null
expect_status 3 "a claim the other nodes do not have: status 3 (unknown outcome)" \
  "$MQ" pop --host "$LIST" --queue l1 --lease 5s
is "$OUT" "" "  nothing printed"
like "$ERR" "mq pop: the claim of job [0-9]* is not seen on another node (*) once it caught up: the cluster lost it, or the lease was taken back; not handed out" \
  "  it says so, naming the job"
like "$(row 1 lost-me l1)" "leased	[0-9a-f]*	1" "  node 1 holds the claim"
is "$(row 2 lost-me l1 | cut -f2)" 00000000000000000000000000000000 "  node 2 does not"

# one job of two lost: the other is handed out, the lost one said
"$MQ" push --host "$LIST" --queue l2 lost-me >/dev/null
"$MQ" push --host "$LIST" --queue l2 kept >/dev/null
run "$MQ" pop --host "$LIST" --queue l2 --count 2 --json --lease 5s
is "$RC" 0 "two jobs claimed, one lost: status 0"
like "$OUT" '{"id":*,"payload":"kept"}' "  the kept job printed"
case $OUT in *lost-me*) not_ok "  the lost job not printed" "$OUT" ;; *) ok "  the lost job not printed" ;; esac
like "$ERR" "mq pop: the claim of job [0-9]* is not seen on another node*not handed out" \
  "  the lost one said"

# mq work: the lost claim is not run; once its lease ended (on node 1,
# which holds it) requeue-stale makes it due again, and the nodes apply
# its next claim (the triggers gone): it runs, once
printf 'a\nb\nlost-me\nc\n' | "$MQ" push --host "$LIST" --queue w --lines --quiet >/dev/null
: >"$T_TMP/ran"
work_until_lost w 4 "$T_TMP/ran" "$T_TMP/work.err"
like "$(cat "$T_TMP/work.err")" "*mq work: the claim of job [0-9]* is not seen on another node*not handed out*" \
  "mq work: the lost claim said"
case $(cat "$T_TMP/ran") in *lost-me*) not_ok "  and not run" "$(cat "$T_TMP/ran")" ;; *) ok "  and not run" ;; esac
lose 2 off
lose 3 off
sleep 3.5
expect_status 0 "its lease over, requeue-stale returns it" \
  "$MQ" requeue-stale --host "$LIST" --queue w
wait $wp
is "$?" 0 "mq work: 4 jobs run, exit 0"
is "$(sort "$T_TMP/ran" | paste -sd, -)" "a,b,c,lost-me" "  each once, the lost one after its lease"
is "$(gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'w' AND state = 'done'")" 4 "  all done (node 2)"

# the acks sent with a lost claim (mq work acks in its next claim's
# transaction): made again on the node that confirms. A limit of 1 makes
# the claim of 'lost-me' wait for the ack of 'ack-lost', in one
# transaction; nodes 2 and 3 lose both.
lose 2 on
lose 3 on
expect_status 0 "a queue limited to 1 job at a time" "$MQ" limit --host "$LIST" al --concurrency 1
"$MQ" push --host "$LIST" --queue al ack-lost >/dev/null
"$MQ" push --host "$LIST" --queue al lost-me >/dev/null
: >"$T_TMP/ran2"
work_until_lost al 2 "$T_TMP/ran2" "$T_TMP/work2.err"
like "$(cat "$T_TMP/work2.err")" "*mq work: the claim of job [0-9]* is not seen on another node*" \
  "an ack and a claim lost together: the claim said"
# the node that read the claim, named in the message by its port
cport=$(sed -n 's/.*not seen on another node ([^)]*:\([0-9]*\)).*/\1/p' "$T_TMP/work2.err" | head -n 1)
cnode=$(( (cport - _base - 3) / 10 ))
like "$cnode" "[23]" "  read on node 2 or 3"
is "$(row "$cnode" ack-lost al | cut -f1)" done \
  "  the ack made again there (its own copy of it lost)"
lose 2 off
lose 3 off
sleep 3.5
"$MQ" requeue-stale --host "$LIST" --queue al >/dev/null
wait $wp
is "$?:$(sort "$T_TMP/ran2" | paste -sd, -)" "0:ack-lost,lost-me" "  each job run once"
lose 2 on
lose 3 on

# claims of a list of queues on the UPDATE strategy: a token a queue's
# write, each read with its own
"$MQ" push --host "$LIST" --queue ua one >/dev/null
"$MQ" push --host "$LIST" --queue ub lost-me >/dev/null
"$MQ" push --host "$LIST" --queue ub two >/dev/null
run env MQ_NO_SKIP_LOCKED=1 "$MQ" pop --host "$LIST" --queue ua,ub --count 3 --json --lease 5s
is "$RC" 0 "UPDATE claims of two queues, one job lost: status 0"
is "$(printf '%s\n' "$OUT" | sed 's/.*"payload":"\([^"]*\)".*/\1/' | paste -sd, -)" "one,two" \
  "  the jobs of both tokens handed out, not the lost one"
like "$ERR" "mq pop: the claim of job [0-9]* is not seen*" "  the lost one said"

# a node that applies the claim late: the read waits for it
"$MQ" push --host "$LIST" --queue sl slow >/dev/null
expect_status 0 "a claim the other nodes apply a second late: handed out" \
  "$MQ" pop --host "$LIST" --queue sl
is "$OUT" slow "  the job printed (the read waited for the node to catch up)"

# ---- no other node can be asked: the claim fails, its job given back
"$MQ" push --host "$LIST" --queue u gone >/dev/null
expect_status 69 "the list's other entry dead, the cluster of 3: status 69" \
  "$MQ" pop --host "$N1,$DEAD" --queue u
is "$OUT" "" "  nothing printed"
like "$ERR" "mq pop: the claim cannot be confirmed on another node of the cluster: $DEAD: cannot connect*" \
  "  it says why, naming the entry"
is "$(gsql 1 "SELECT state, attempts FROM mq_jobs WHERE queue = 'u'")" "ready	0" \
  "  the job given back at once (ready, no attempt spent)"

# pop --wait: claimed again after a pause until its wait is over
t0=$(date +%s%N)
expect_status 69 "pop --wait, no other node to ask: 69 at the wait's end" \
  "$MQ" pop --host "$N1,$DEAD" --queue u --wait 2s
is "$(( ($(date +%s%N) - t0) / 1000000000 >= 2 ))" 1 "  after claiming again until its wait was over"
like "$ERR" "mq pop: the claim cannot be confirmed*" "  it says why"
is "$(gsql 1 "SELECT state FROM mq_jobs WHERE queue = 'u'")" ready "  the job given back"

# ---- one host (a proxy, say): no other node to read on, nothing read
"$MQ" push --host "$LIST" --queue s solo >/dev/null
c2=$(gstatus 2 Com_stmt_execute) c3=$(gstatus 3 Com_stmt_execute)
expect_status 0 "a single host: handed out" "$MQ" pop --host "$N1" --queue s
is "$(( $(gstatus 2 Com_stmt_execute) + $(gstatus 3 Com_stmt_execute) - c2 - c3 ))" 0 \
  "  nothing read on the other nodes"

# the confirming sessions are mq's own (autocommit, isolation): with
# autocommit off on the other nodes, a kept connection that read in an
# open transaction would see its first snapshot, and every later claim
# look lost
lose 2 off
lose 3 off
gsql 2 "SET GLOBAL autocommit = 0"
gsql 3 "SET GLOBAL autocommit = 0"
seq 1 20 | "$MQ" push --host "$LIST" --queue ac --lines --quiet >/dev/null
run "$MQ" work --host "$LIST" --queue ac --exit-when-empty -- true
gsql 2 "SET GLOBAL autocommit = 1"
gsql 3 "SET GLOBAL autocommit = 1"
is "$RC:$ERR" "0:" "autocommit off on the other nodes: 20 jobs, one claim at a time, none said lost"
is "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'ac' AND state = 'done'")" 20 "  all done"

done_testing
