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
trap 'unproxy; [ -z "${T_OWN_GALERA:-}" ] || sh "$TESTS_DIR/galera.sh" stop "$T_OWN_GALERA"; t_cleanup' EXIT

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

# and the cluster agrees: no job left leased
is "$(gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE state = 'leased'")" 0 \
  "node 3: no job left leased"
done_testing
