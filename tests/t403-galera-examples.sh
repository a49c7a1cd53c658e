#!/bin/sh
# t403-galera-examples.sh: the examples of mq-sql(7) keep mq's guarantee
# on a Galera node where a brute-force abort lands while the server
# prepares a statement of their transaction. That abort's deadlock error
# is lost (the prepare had answered): the statements after it ran
# outside any transaction, each committing by itself, and the COMMIT
# committed nothing (t308, t400: mq's own). A relay in front of node 1
# (fault-proxy.py, FP_ROLLBACK) does the same: it rolls the session's
# transaction back just before the prepare (COM_STMT_PREPARE, 0x16) of
# the consumer's claim's lease, or of its second write of an ack (its
# count) or of a fail (its history row). PHP (PDO without emulated
# prepares) and Perl (mysql_server_prepare) prepare on the server: on
# the examples before they read @@in_transaction after such a prepare,
# the ack or the burial was gone and its count or history row committed
# alone, the job still leased (Perl: status 0; PHP: 70, its commit found
# no transaction). Now they run the transaction again: done (or dead)
# with one attempt, counted once. Python's PyMySQL quotes values in the
# client (COM_QUERY only): the relay never fires.
#
# Then the consumers' confirming node (mq-sql(7), CLAIMING A JOB and
# EXAMPLES): a claim on node 1 is run once node 2 (or 3) shows it. A
# node that cannot be used (the claim's own node, a socket where no
# server listens, a server outside the cluster) fails the consumer with
# status 69, in one line, before it claims: the job stays ready, with no
# attempt spent. A claim the confirming node does not show (made real as
# t410 does: node 2's own trigger rewrites the token as it applies the
# claim) is neither run nor acked: status 3, the job leased until its
# lease ends; requeue-stale returns it, and it runs then.
. "$(dirname "$0")/lib.sh"
# (as t330: glibc's perturbation makes perl far slower, for nothing here)
unset MALLOC_PERTURB_
examples_env
galera_cluster

PROXY=
proxy() { # proxy TRIGGER: a relay to node 1 that rolls back before it
  rm -f "$T_TMP/fired" "$T_TMP/proxy.sock"
  FP_ROLLBACK=1 python3 "$TESTS_DIR/fault-proxy.py" "$T_TMP/proxy.sock" \
    "$G_DIR/n1/sock" "$1" "$T_TMP/fired" &
  PROXY=$!
  i=0
  while [ ! -S "$T_TMP/proxy.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unproxy() { [ -z "$PROXY" ] || { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; }; PROXY=; }
# lose on|off: node 2 alone (not replicated) rewrites the token of a job
# whose payload starts with "lost " as its applier applies the job's
# claim (slave_run_triggers_for_rbr, a global: set back at the end)
lose() {
  if [ "$1" = on ]; then
    mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root \
      --delimiter=// "$T_DB" -e "
      SET SESSION wsrep_on = OFF;
      CREATE TRIGGER lose_claim BEFORE UPDATE ON mq_jobs FOR EACH ROW
      BEGIN
        IF USER() LIKE '<wsrep_applier>%' AND NEW.payload LIKE 'lost %'
            AND NEW.state = 'leased' THEN
          SET NEW.lease_token = REPEAT('0', 32);
        END IF;
      END;
      SET GLOBAL slave_run_triggers_for_rbr = YES"
  else
    mariadb --no-defaults --socket="$G_DIR/n2/sock" --user=root "$T_DB" -e "
      SET SESSION wsrep_on = OFF;
      DROP TRIGGER IF EXISTS lose_claim;
      SET GLOBAL slave_run_triggers_for_rbr = NO"
  fi
}
trap 'unproxy; lose off 2>/dev/null; [ -z "${T_OWN_GALERA:-}" ] || sh "$TESTS_DIR/galera.sh" stop "$T_OWN_GALERA"; t_cleanup' EXIT

gmq 1 init >/dev/null
# state and attempts of the queue's jobs; what the counts say of it
jobs_of() {
  gsql 1 "SELECT GROUP_CONCAT(CONCAT(state, attempts) ORDER BY id) FROM mq_jobs WHERE queue = '$1'"
}
counted() { # counted QUEUE STATE
  gsql 1 "SELECT COALESCE(SUM(n), 0) FROM mq_jobs_counts WHERE queue = '$1' AND state = '$2'"
}
history() { # history QUEUE: "event state attempt error," of its jobs' rows
  gsql 1 "SELECT h.event, h.state, h.attempt, h.error FROM mq_jobs_history h
    JOIN mq_jobs j ON j.id = h.job_id WHERE j.queue = '$1' ORDER BY h.seq" |
    tr '\t\n' ' ,'
}
said() { # the consumer's standard error, its receipt's token as T
  printf '%s\n' "$ERR" | sed 's/receipt \([0-9]*\)\.[0-9a-f]*$/receipt \1.T/'
}
fired() { # fired LANG: whether the relay should have fired, and did
  if [ "$1" = py ]; then
    check "py: the relay never fired (PyMySQL sends no COM_STMT_PREPARE)" \
      test ! -e "$T_TMP/fired"
  else
    check "$1: the relay rolled the transaction back before that prepare" \
      test -f "$T_TMP/fired"
  fi
}

for l in php pl py; do
  # -- a claim (skip-locked): its SELECT ... FOR UPDATE ran, then the
  # relay rolls the transaction back before the lease's UPDATE is
  # prepared: its row lock is gone, the lease would commit alone (on the
  # code before, PHP's commit then found no transaction: status 70, the
  # job leased and not run; Perl's went on, the lock lost unseen) --
  id=$(gmq 1 push --queue "c-$l" "payload $l")
  proxy '\x16UPDATE `mq_jobs` SET state'
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$T_TMP/proxy.sock" $(lang_cmd $l consumer) \
    --queue "c-$l"
  fired $l
  is "$RC:$OUT" "0:payload $l" "$l: the consumer claimed through the relay: status 0, the payload"
  is "$(said)" "consumer.$l: claimed job $id, attempt 1, receipt $id.T
consumer.$l: job $id: acked" "$l: it said so, and nothing else"
  is "$(jobs_of "c-$l"):$(counted "c-$l" "done")" "done1:1" \
    "$l: the job is done, one attempt, counted once"
  unproxy

  # -- an ack: its UPDATE ran, then the relay rolls the transaction
  # back before the count's INSERT is prepared (on the code before:
  # exit 0, the job still leased1, not counted) --
  id=$(gmq 1 push --queue "a-$l" "payload $l")
  proxy '\x16INSERT INTO `mq_jobs_counts`'
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$T_TMP/proxy.sock" $(lang_cmd $l consumer) \
    --queue "a-$l"
  fired $l
  is "$RC:$OUT" "0:payload $l" "$l: the consumer acked through the relay: status 0, the payload"
  is "$(said)" "consumer.$l: claimed job $id, attempt 1, receipt $id.T
consumer.$l: job $id: acked" "$l: it said so, and nothing else"
  is "$(jobs_of "a-$l"):$(counted "a-$l" "done")" "done1:1" \
    "$l: the job is done, one attempt, counted once"
  unproxy

  # -- a burial (--fail --no-retry): its UPDATE ran, then the relay
  # rolls the transaction back before the history row's INSERT is
  # prepared (on the code before: exit 0, the job still leased1, its
  # history row committed alone, not counted) --
  id=$(gmq 1 push --queue "f-$l" "payload $l")
  proxy '\x16INSERT INTO `mq_jobs_history`'
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$T_TMP/proxy.sock" $(lang_cmd $l consumer) \
    --queue "f-$l" --fail "broken $l" --no-retry
  fired $l
  is "$RC" 0 "$l: the consumer buried the job through the relay: status 0"
  is "$(said)" "consumer.$l: claimed job $id, attempt 1, receipt $id.T
consumer.$l: job $id: dead after attempt 1" "$l: it said so, and nothing else"
  is "$(jobs_of "f-$l"):$(counted "f-$l" dead):$(history "f-$l")" \
    "dead1:1:failed dead 1 broken $l," \
    "$l: the job is dead, one attempt, counted once, one history row"
  unproxy

  # -- schema 11 (mq-sql(7) DEPENDENCIES): an ack of a parent whose
  # UPDATEs and count ran, rolled back before the first statement that
  # meets its edges is prepared; a burial of a parent, rolled back before
  # the cancellation of its dependent is prepared. Run again: the parent
  # finished and counted once, its dependent due (or cancelled) once --
  id=$(gmq 1 push --queue "d-$l" "payload $l")
  kid=$(gmq 1 push --queue "d-$l-kid" --after "$id" kid)
  proxy '\x16UPDATE (SELECT d.child, d.parent % 1024'
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$T_TMP/proxy.sock" $(lang_cmd $l consumer) \
    --queue "d-$l"
  fired $l
  is "$RC:$OUT" "0:payload $l" "$l: the consumer acked a parent through the relay: status 0, the payload"
  is "$(jobs_of "d-$l"):$(counted "d-$l" "done"):$(gsql 1 "SELECT CONCAT(state, ' ',
      available_at <= UTC_TIMESTAMP(6), ' ', parent_shards) FROM mq_jobs WHERE id = $kid")" \
    "done1:1:ready 1 0" "$l: the parent is done, counted once, its dependent due"
  unproxy
  id=$(gmq 1 push --queue "e-$l" "payload $l")
  kid=$(gmq 1 push --queue "e-$l-kid" --after "$id" kid)
  proxy '\x16UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY)\n  STRAIGHT_JOIN'
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$T_TMP/proxy.sock" $(lang_cmd $l consumer) \
    --queue "e-$l" --fail "broken $l" --no-retry
  fired $l
  is "$RC" 0 "$l: the consumer buried a parent through the relay: status 0"
  is "$(jobs_of "e-$l"):$(counted "e-$l" dead):$(jobs_of "e-$l-kid"):$(counted "e-$l-kid" dead)" \
    "dead1:1:dead0:1" "$l: the parent dead, its dependent cancelled, each counted once"
  unproxy
done

# ---- the confirming node ----
_base=$(cat "$G_DIR/base")
# a server outside the cluster (the private one), with mq's table
"$MQ" init >/dev/null
# one_line STATUS WHAT: the consumer's status, nothing on stdout, one
# line on stderr
one_line() {
  is "$RC:$OUT:$(printf '%s\n' "$ERR" | wc -l)" "$1::1" "$2: status $1, nothing output, one line on stderr"
}
for l in php pl py; do
  # -- node 2 confirms, named by its socket: the job run and acked --
  id=$(gmq 1 push --queue "k-$l" "payload $l")
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "k-$l" --confirm-socket "$G_DIR/n2/sock"
  is "$RC:$OUT" "0:payload $l" "$l: claimed on node 1, node 2 confirms (--confirm-socket): status 0, the payload"
  is "$(said)" "consumer.$l: claimed job $id, attempt 1, receipt $id.T
consumer.$l: job $id: acked" "$l: it said so, and nothing else"
  is "$(jobs_of "k-$l"):$(counted "k-$l" "done")" "done1:1" \
    "$l: the job is done, one attempt, counted once"

  # -- node 3 confirms, named by its address in MQ_CONFIRM_HOST and
  # MQ_CONFIRM_PORT --
  id=$(gmq 1 push --queue "m-$l" "payload $l")
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" MQ_CONFIRM_HOST=127.0.0.1 \
    MQ_CONFIRM_PORT=$((_base + 33)) $(lang_cmd $l consumer) --queue "m-$l"
  is "$RC:$OUT" "0:payload $l" "$l: node 3 confirms (MQ_CONFIRM_HOST, MQ_CONFIRM_PORT): status 0, the payload"
  is "$(jobs_of "m-$l"):$(counted "m-$l" "done")" "done1:1" \
    "$l: the job is done, one attempt, counted once"

  # -- the claim's own node: refused before the claim --
  id=$(gmq 1 push --queue "o-$l" "payload $l")
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "o-$l" --confirm-socket "$G_DIR/n1/sock"
  one_line 69 "$l: its own node as confirming node"
  like "$ERR" "consumer.$l: confirming node $G_DIR/n1/sock cannot be used: it is the claim's own node (wsrep_gcomm_uuid *)" \
    "$l: it says why"
  is "$(jobs_of "o-$l"):$(counted "o-$l" "done")" "ready0:0" \
    "$l: nothing claimed (ready, no attempt spent), nothing acked"

  # -- no server at the socket named --
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "o-$l" --confirm-socket "$T_TMP/no-such-socket"
  one_line 69 "$l: a confirming socket where no server listens"
  like "$ERR" "consumer.$l: confirming node $T_TMP/no-such-socket cannot be used: cannot connect*" \
    "$l: it says why"
  is "$(jobs_of "o-$l"):$(counted "o-$l" "done")" "ready0:0" \
    "$l: nothing claimed, nothing acked"

  # -- a server outside the cluster --
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "o-$l" --confirm-socket "$MQ_TEST_SOCKET"
  one_line 69 "$l: a confirming node that is not a Galera node"
  is "$ERR" "consumer.$l: confirming node $MQ_TEST_SOCKET cannot be used: not a Galera node" \
    "$l: it says why"
  is "$(jobs_of "o-$l"):$(counted "o-$l" "done")" "ready0:0" \
    "$l: nothing claimed, nothing acked"
done

# -- a claim node 2 does not show once it caught up: not run, not acked
lose on
is "$(gsql 1 "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"):$(gsql 2 "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()")" \
  "0:1" "the loss set up: node 2's trigger, not node 1's"
for l in php pl py; do
  id=$(gmq 1 push --queue "l-$l" "lost $l")
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "l-$l" --lease 1 --confirm-socket "$G_DIR/n2/sock"
  is "$RC:$OUT" "3:" "$l: a claim node 2 does not show: status 3, nothing output"
  is "$(said)" "consumer.$l: claimed job $id, attempt 1, receipt $id.T
consumer.$l: the claim of job $id is not seen on the confirming node ($G_DIR/n2/sock) once it caught up: the cluster lost it, or the lease was taken back; not run" \
    "$l: it says so"
  token=$(printf '%s\n' "$ERR" | sed -n 's/.*receipt [0-9]*\.\([0-9a-f]*\)$/\1/p')
  is "$(gsql 1 "SELECT CONCAT(state, attempts, ' ', lease_token = '$token') FROM mq_jobs WHERE id = $id"):$(counted "l-$l" "done")" \
    "leased1 1:0" "$l: node 1 holds the claim, not acked"
  is "$(gsql 2 "SELECT lease_token FROM mq_jobs WHERE id = $id")" \
    00000000000000000000000000000000 "$l: node 2 does not"
done
lose off
# their leases over, requeue-stale returns them; confirmed now, they run
sleep 1.2
expect_status 0 "requeue-stale returns the jobs whose claims were not seen" \
  gmq 1 requeue-stale --queue l-php
gmq 1 requeue-stale --queue l-pl >/dev/null
gmq 1 requeue-stale --queue l-py >/dev/null
for l in php pl py; do
  # shellcheck disable=SC2046
  run env MQ_SOCKET="$G_DIR/n1/sock" $(lang_cmd $l consumer) \
    --queue "l-$l" --confirm-socket "$G_DIR/n2/sock"
  is "$RC:$OUT:$(jobs_of "l-$l"):$(counted "l-$l" "done")" "0:lost $l:done2:1" \
    "$l: once returned, the job is run, confirmed: done at its second attempt, counted once"
done

# and the cluster agrees: no job left leased
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")" 0 \
  "node 3: no job left leased"
done_testing
