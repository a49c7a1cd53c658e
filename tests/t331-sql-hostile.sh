#!/bin/sh
# The examples of mq-sql(7) under t300's hostile server (issue 28): in a
# time zone east of UTC, with autocommit off, sql_mode ORACLE then ANSI,
# COMMIT that disconnects, read-only transactions by default, one-row
# select limits, unique checks off, idle connections dropped after 3 s,
# and, for an ordinary account, an init_connect that turns autocommit off
# and fixes the clock and the next id. Each language's producer and
# consumer, as root (the globals) and as that account (init_connect too),
# runs every sequence of the page: its pushes (plain, delayed, dedup,
# recurring) land in the table, committed, due in UTC, and mq takes them;
# its consumer claims mq's jobs both ways, fails, retries, buries,
# extends and acks them, a recurring job too, with the history and the
# counts exact. On the code before the fix, PHP's and Perl's pushes
# printed an id and were rolled back at disconnect (Python's too for the
# account), and the consumers' writes likewise. Then binlog_format
# STATEMENT: the examples log rows where the account may, else refuse
# (78) before writing anything, as mq does. And where mq keeps its
# guarantees the examples once did not (the review of issue 28, class 1):
# an init_connect that hides mq's tables behind temporary ones, or runs
# USE another database; a row that breaks a CHECK (written with the
# checks off) at a queue's head, which mq pop claims; a non-ASCII host
# name (unshare --uts), which mq writes as '?' in the ASCII leased_by.
. "$(dirname "$0")/lib.sh"
# (as t330: glibc's perturbation makes perl far slower, for nothing here)
unset MALLOC_PERTURB_
examples_env

# t300's hostile server: its globals and init_connect (lib.sh)
hostile_server
all_bytes "$T_TMP/bytes"
hex=$(od -An -v -tx1 "$T_TMP/bytes" | tr -d ' \n' | tr a-f A-F)

# col WHAT ID: columns of job ID of the round's table
col() { hsql "SELECT $1 FROM $MQ_DATABASE.$MQ_TABLE WHERE id = $2" | tr '\t' ' '; }
# the finished jobs per queue and state, as the table and as the counts
# say (the counts are exact: every finish counted once, in its commit)
finished() {
  hsql "SELECT queue, state, COUNT(*) FROM h.$MQ_TABLE WHERE state IN ('done', 'dead')
    GROUP BY queue, state ORDER BY 1, CAST(state AS CHAR)" | tr '\t\n' ' ,'
}
counted() {
  hsql "SELECT queue, CAST(state AS CHAR), SUM(n) FROM h.${MQ_TABLE}_counts
    WHERE state IN ('done', 'dead') GROUP BY queue, state HAVING SUM(n) <> 0
    ORDER BY 1, 2" | tr '\t\n' ' ,'
}
# waiting ID: "state due|waiting parent_shards" of job ID (a dependent
# waits at the end of time)
waiting() {
  hsql "SELECT CONCAT(state, ' ', IF(available_at = '9999-12-31 23:59:59.999999', 'waiting',
    IF(available_at <= UTC_TIMESTAMP(6), 'due', 'later')), ' ', parent_shards)
    FROM $MQ_DATABASE.$MQ_TABLE WHERE id = $1"
}
# dependents LANG QUEUE WHAT: mq pushes two parents into QUEUE and
# dependents of them (mq push --after); LANG's consumer acks the first,
# whose dependent is then due, and buries the second, whose 'cancel'
# dependent is cancelled (and that one's own, in turn) and whose 'run'
# one is due; the due ones are claimed once: "$w consumer: ..."
dependents() {
  _pa=$("$MQ" push --queue "$2" DA)
  _pb=$("$MQ" push --queue "$2" --priority 1 --max-attempts 1 DB)
  _ka=$("$MQ" push --queue "$2-kid" --after "$_pa" KA)
  _kc=$("$MQ" push --queue "$2-kid" --after "$_pb" KC)
  _kg=$("$MQ" push --queue "$2-kid" --after "$_kc" KG)
  _kr=$("$MQ" push --queue "$2-kid" --after "$_pb" --if-parent-dies run KR)
  run consume "$1" --queue "$2" --output /dev/null
  is "$RC:$(waiting "${_ka:-0}"):$(waiting "${_kr:-0}")" "0:ready due 0:ready waiting 1" \
    "$w consumer: acks a parent, its dependent is due ($3)"
  run consume "$1" --queue "$2" --claim update --fail "gone $1"
  is "$RC:$(col "state, CAST(last_error AS CHAR)" "${_kc:-0}"):$(col "state, CAST(last_error AS CHAR)" "${_kg:-0}"):$(waiting "${_kr:-0}")" \
    "0:dead cancelled: parent $_pb is dead:dead cancelled: parent $_kc is dead:ready due 0" \
    "$w consumer: buries a parent: its 'cancel' dependent cancelled, in cascade, its 'run' one due ($3)"
  _got=$(for _i in 1 2 3; do "$MQ" pop --queue "$2-kid" -o /dev/null; done 2>/dev/null | sed 's/[.].*//' | sort -n | tr '\n' ' ')
  is "$_got" "$_ka $_kr " "$w the due dependents are claimed, once each ($3)"
}
history() { # history ID: "event state attempt error," of its rows
  hsql "SELECT event, state, attempt, COALESCE(error, '-') FROM $MQ_DATABASE.${MQ_TABLE}_history
    WHERE job_id = $1 ORDER BY seq" | tr '\t\n' ' ,'
}

export MQ_SOCKET="$H/sock"

# -- autocommit off alone, as the issue found it: globally (root), then
# by the account's init_connect. On the code before the fix, PHP's and
# Perl's producers printed an id and the job was never there (rolled
# back at disconnect), and Python's too for the account; the consumers'
# acks likewise. --
hsql "CREATE DATABASE a; GRANT ALL ON a.* TO app@localhost"
export MQ_DATABASE=a MQ_TABLE=mq_jobs
MQ_USER=root "$MQ" init >/dev/null
hsql "SET GLOBAL autocommit = 0"
for u in root app; do
  [ $u = app ] && hsql "SET GLOBAL autocommit = 1, GLOBAL init_connect = 'SET autocommit=0'"
  why="autocommit=0 globally"
  [ $u = app ] && why="init_connect 'SET autocommit=0'"
  for l in py php pl; do
    MQ_USER=$u expect_status 0 "[$why, $u, $l] producer: a push" produce $l --queue "$u-$l" --file "$T_TMP/bytes"
    p=$OUT
    is "$(col "queue, state, HEX(payload) = '$hex'" "${p:-0}")" "$u-$l ready 1" \
      "[$why, $u, $l] producer: the job it printed is in the table, committed"
    j=$(MQ_USER=root "$MQ" push --queue "$u-$l-c" "for $l")
    for claim in skip-locked update; do
      MQ_USER=$u run consume $l --queue "$u-$l-c" --claim $claim --output "$T_TMP/got"
      is "$RC:$(cat "$T_TMP/got"):$(col "state, attempts" "$j")" "0:for $l:done 1" \
        "[$why, $u, $l, $claim] consumer: claims mq's job and acks it, committed"
      j=$(MQ_USER=root "$MQ" push --queue "$u-$l-c" "for $l")
    done
    MQ_USER=$u run consume $l --queue "$u-$l-c" --fail "no $l" --no-retry
    is "$RC:$(col "state, attempts, CAST(last_error AS CHAR)" "$j")" "0:dead 1 no $l" \
      "[$why, $u, $l] consumer: buries mq's job, committed"
  done
done
hsql "SET GLOBAL autocommit = 1, GLOBAL init_connect = ''"

# -- an init_connect that makes temporary tables hiding mq's (CREATE
# TEMPORARY TABLE ... LIKE, renamed to mq's name): mq drops them first
# (DROP TEMPORARY TABLE IF EXISTS, THE SESSION). On the code before the
# fix, the producers printed an id and the job vanished at disconnect,
# the consumers found nothing to claim while a job was ready, claimed
# from a paused queue, and lost the history and counts of a fail. --
hide() { # hide TABLE...: the account's sessions see empty copies instead
  s=
  for t in "$@"; do
    s="${s}CREATE TEMPORARY TABLE a.tmpx LIKE a.$t; ALTER TABLE a.tmpx RENAME TO a.$t; "
  done
  hsql "SET GLOBAL init_connect = '$s'"
}
# claims_and_acks LANG QUEUE WHAT: mq pushes a job into QUEUE as root,
# twice; LANG's consumer claims each (skip-locked, then update), writes
# its payload and acks it: "$w consumer (CLAIM): WHAT"
claims_and_acks() {
  for claim in skip-locked update; do
    j=$(MQ_USER=root "$MQ" push --queue "$2" "for $1")
    run consume "$1" --queue "$2" --claim $claim --output "$T_TMP/got"
    is "$RC:$(cat "$T_TMP/got" 2>/dev/null):$(col "state, attempts" "$j")" "0:for $1:done 1" \
      "$w consumer ($claim): $3"
    rm -f "$T_TMP/got"
  done
}
export MQ_USER=app
hide mq_jobs
expect_status 0 "[temporary mq_jobs] mq push as the account" "$MQ" push --queue tmp-mq x
is "$(col queue "${OUT:-0}")" tmp-mq "[temporary mq_jobs] mq's push is in the table"
for l in py php pl; do
  w="[temporary mq_jobs, $l]"
  expect_status 0 "$w producer: a push" produce $l --queue "tmp-$l" --file "$T_TMP/bytes"
  is "$(col "queue, state, HEX(payload) = '$hex'" "${OUT:-0}")" "tmp-$l ready 1" \
    "$w producer: the job it printed is in mq's table, not in a temporary one"
  claims_and_acks $l "tmp-$l-c" "claims the ready job of mq's table and acks it"
done
hide mq_jobs_counts mq_jobs_history
for l in py php pl; do
  w="[temporary mq_jobs_counts and mq_jobs_history, $l]"
  q=tmpc-$l
  j=$(MQ_USER=root "$MQ" push --queue "$q" --max-attempts 2 "for $l")
  run consume $l --queue "$q" --fail "once $l" --retry-in 0
  is "$RC:$(col state "$j"):$(history "$j")" "0:ready:failed ready 1 once $l," \
    "$w consumer: a fail's history row is in mq's history"
  run consume $l --queue "$q" --claim update --fail "twice $l"
  is "$RC:$(col state "$j"):$(history "$j")" "0:dead:failed ready 1 once $l,failed dead 2 twice $l," \
    "$w consumer: the burial's too"
  is "$(hsql "SELECT CONCAT(CAST(state AS CHAR), ' ', SUM(n)) FROM a.mq_jobs_counts
      WHERE queue = '$q' GROUP BY state ORDER BY CAST(state AS CHAR)" | tr '\n' ,)" "dead 1,failed 1," \
    "$w consumer: and the counts, in mq's counts"
done
hide mq_jobs_deps mq_jobs_waits
for l in py php pl; do
  w="[temporary mq_jobs_deps and mq_jobs_waits, $l]"
  dependents $l "tmpd-$l" "in mq's tables"
done
MQ_USER=root "$MQ" pause tmpq >/dev/null || not_ok "mq pause tmpq"
hide mq_jobs_queues
for l in py php pl; do
  j=$(MQ_USER=root "$MQ" push --queue tmpq "paused $l")
  for claim in skip-locked update; do
    expect_status 1 "[temporary mq_jobs_queues, $l] consumer ($claim): a paused queue stays paused" \
      consume $l --queue tmpq --claim $claim
  done
  is "$(col state "$j")" ready "[temporary mq_jobs_queues, $l] its job is not claimed"
done
hsql "SET GLOBAL init_connect = ''"

# -- an init_connect that runs USE another database: mq selects the one
# asked for again, and where none is asked for uses the current one. On
# the code before the fix, the examples pushed into the other database's
# table and claimed from it (nothing there: status 1). --
hsql "CREATE DATABASE o; GRANT ALL ON o.* TO app@localhost"
MQ_USER=root MQ_DATABASE=o "$MQ" init >/dev/null
hsql "SET GLOBAL init_connect = 'USE o'"
ocount() { hsql "SELECT COUNT(*) FROM o.mq_jobs WHERE queue LIKE '$1%'"; }
expect_status 0 "[USE o, a asked for] mq push" "$MQ" push --queue use-mq x
is "$(col queue "${OUT:-0}"):$(ocount use-mq)" use-mq:0 "[USE o, a asked for] mq's push is in a"
for l in py php pl; do
  w="[init_connect USE o, a asked for, $l]"
  expect_status 0 "$w producer: a push" produce $l --queue "use-$l" </dev/null
  is "$(col "queue, state" "${OUT:-0}"):$(ocount "use-$l")" "use-$l ready:0" \
    "$w producer: the job is in the database asked for, none in o"
  claims_and_acks $l "use-$l-c" "claims the job of the database asked for and acks it"
  j=$(MQ_USER=root "$MQ" push --queue "use-$l-f" "for $l")
  run consume $l --queue "use-$l-f" --fail "no $l" --no-retry
  is "$RC:$(col state "$j"):$(history "$j")" "0:dead:failed dead 1 no $l," \
    "$w consumer: buries it, its history in the database asked for"
done
# none asked for: the current database, whichever the init_connect chose
m=$(env -u MQ_DATABASE "$MQ" push --queue use-none x)
is "$(hsql "SELECT queue FROM o.mq_jobs WHERE id = ${m:-0}")" use-none "[USE o, none asked for] mq push uses o"
for l in py php pl; do
  w="[init_connect USE o, none asked for, $l]"
  p=$(env -u MQ_DATABASE $(lang_cmd $l producer) --queue "use-none-$l" </dev/null)
  is "$(hsql "SELECT queue FROM o.mq_jobs WHERE id = ${p:-0}")" "use-none-$l" \
    "$w producer: the job is in o, as mq push's"
  run env -u MQ_DATABASE $(lang_cmd $l consumer) --queue "use-none-$l" --output /dev/null
  is "$RC:$(hsql "SELECT CAST(state AS CHAR) FROM o.mq_jobs WHERE id = ${p:-0}")" 0:done \
    "$w consumer: claims it there, and acks it"
done
hsql "SET GLOBAL init_connect = ''"
for l in py php pl; do
  for side in producer consumer; do
    run env -u MQ_DATABASE $(lang_cmd $l $side) --queue none </dev/null
    like "$RC:$ERR" "78:*no database selected*" "[no database at all, $l] $side: 78, as mq, saying so"
  done
done
expect_status 78 "[no database at all] (mq)" env -u MQ_DATABASE "$MQ" push --queue none x

# -- a row that breaks a CHECK, written with the checks off, at the head
# of a queue: mq's session turns the checks off (check_constraint_checks,
# MariaDB), so mq pop claims it and the jobs behind it run. On the code
# before the fix, the examples' claim failed on it (4025) every time:
# the queue stalled. --
export MQ_USER=root
bad() { # bad QUEUE: a due row from before year 1000, first in its queue
  hsql "SET SESSION check_constraint_checks = 0;
    INSERT INTO a.mq_jobs (queue, priority, payload, created_at, available_at)
    VALUES ('$1', -1, 'bad', '0999-01-01', '0999-01-01')"
}
bad chk-mq
"$MQ" push --queue chk-mq good >/dev/null
is "$("$MQ" pop --queue chk-mq --claim update 2>/dev/null):$("$MQ" pop --queue chk-mq --claim skip-locked 2>/dev/null)" bad:good \
  "[a row breaking a CHECK at the head] mq pop claims it, then the job behind"
for l in py php pl; do
  for claim in skip-locked update; do
    w="[a row breaking a CHECK at the head, $l, $claim]"
    q=chk-$l-$claim
    bad "$q"
    g=$("$MQ" push --queue "$q" good)
    b=$(hsql "SELECT id FROM a.mq_jobs WHERE queue = '$q' AND payload = 'bad'")
    if [ $claim = skip-locked ]; then
      run consume $l --queue "$q" --claim $claim
      is "$RC:$OUT:$(col state "$b")" 0:bad:done "$w consumer: claims it, as mq pop, and acks it"
    else
      run consume $l --queue "$q" --claim $claim --fail "bad row" --no-retry
      is "$RC:$(col "state, CAST(last_error AS CHAR)" "$b"):$(history "$b")" \
        "0:dead bad row:failed dead 1 bad row," "$w consumer: claims it, as mq pop, and buries it"
    fi
    run consume $l --queue "$q" --claim $claim
    is "$RC:$OUT:$(col state "$g")" 0:good:done "$w consumer: then the job behind it"
  done
done

# -- a host name that is not ASCII: mq writes each byte outside ! to ~ of
# it as '?' in leased_by (an ASCII column). On the code before the fix,
# every claim of the examples' consumers failed with 1366. --
cat >"$T_TMP/ashost.py" <<'PY'
import os, socket, sys
socket.sethostname("h\u00f4te".encode())
os.execvp(sys.argv[1], sys.argv[1:])
PY
if unshare --uts true 2>/dev/null; then
  ashost() { unshare --uts "$PY" "$T_TMP/ashost.py" "$@"; }
elif unshare -r --uts true 2>/dev/null; then
  ashost() { unshare -r --uts "$PY" "$T_TMP/ashost.py" "$@"; }
else
  ashost=
fi
if [ -n "$(command -v ashost)" ] && [ "$(ashost hostname 2>/dev/null)" = "hôte" ]; then
  j=$("$MQ" push --queue host-mq x)
  r=$(ashost "$MQ" pop --queue host-mq -o /dev/null)
  like "$(col leased_by "$j")" "h??te:[0-9]*" "[host name hôte] mq pop: leased_by h??te:PID"
  "$MQ" ack "$r"
  for l in py php pl; do
    for claim in skip-locked update; do
      w="[host name hôte, $l, $claim]"
      j=$("$MQ" push --queue "host-$l" "for $l")
      run ashost $(lang_cmd $l consumer) --queue "host-$l" --claim $claim
      is "$RC:$OUT:$(col state "$j")" "0:for $l:done" "$w consumer: claims and acks"
      like "$(col leased_by "$j")" "h??te:[1-9]*" "$w consumer: leased_by as mq writes it"
      j=$("$MQ" push --queue "host-$l" "for $l")
      run ashost $(lang_cmd $l consumer) --queue "host-$l" --claim $claim --fail "f $l" --no-retry
      like "$RC:$(hsql "SELECT worker FROM a.mq_jobs_history WHERE job_id = $j")" "0:h??te:[1-9]*" \
        "$w consumer: fails, the history's worker as mq writes it"
    done
  done
else
  T_N=$((T_N + 1))
  echo "ok $T_N - non-ASCII host name # SKIP unshare --uts is not permitted here"
fi

export MQ_DATABASE=h
round() { # round USER SQL_MODE TABLE
  export MQ_USER=$1 MQ_TABLE=$3
  hostile "$2"
  "$MQ" init >/dev/null || not_ok "[$1, $2] mq init"
  for l in py php pl; do
    w="[$1, $2, $l]"
    # -- the producer's pushes land, committed, due in UTC --
    expect_status 0 "$w producer: a push" produce $l --queue "$l" --file "$T_TMP/bytes"
    a=$OUT
    like "$a" "[1-9]*" "$w producer: it printed an id"
    is "$(col "state, attempts, HEX(payload) = '$hex',
        ABS(TIMESTAMPDIFF(SECOND, created_at, UTC_TIMESTAMP(6))) < 60,
        available_at = created_at" "$a")" "ready 0 1 1 1" \
      "$w producer: the job is in the table (committed), every byte, made now in UTC, due now"
    expect_status 0 "$w mq pop takes it" "$MQ" pop --queue "$l" -o "$T_TMP/popped"
    check "$w mq pop wrote every byte" cmp -s "$T_TMP/bytes" "$T_TMP/popped"
    like "$OUT" "$a.*" "$w mq pop claimed the job the producer pushed"
    "$MQ" ack "$OUT"
    expect_status 0 "$w producer: --delay 3600" produce $l --queue "$l-later" --delay 3600 </dev/null
    is "$(col "TIMESTAMPDIFF(MICROSECOND, created_at, available_at),
        ABS(TIMESTAMPDIFF(SECOND, created_at, UTC_TIMESTAMP(6))) < 60" "$OUT")" "3600000000 1" \
      "$w producer: the delayed job is there, due in an hour (UTC)"
    expect_status 0 "$w producer: --dedup" produce $l --queue "$l" --dedup "k-$l" </dev/null
    k=$OUT
    expect_status 0 "$w producer: --dedup again" produce $l --queue "$l" --dedup "k-$l" </dev/null
    is "$OUT:$("$MQ" push --queue "$l" --dedup "k-$l" x)" "$k:$k" \
      "$w producer: one job holds the key (unique_checks off globally), mq push finds it"
    expect_status 0 "$w producer: --every 3600" produce $l --queue "$l-every" --every 3600 --dedup "e-$l" </dev/null
    e=$OUT
    is "$(col "state, every_us, every_anchor = available_at,
        ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP(6))) < 60" "$e")" "ready 3600000000 1 1" \
      "$w producer: the recurring job, anchored now (UTC)"
    is "$(hsql "SELECT COUNT(*) FROM h.$3 WHERE queue LIKE '$l%'")" 4 \
      "$w producer: every push committed, none more (autocommit off globally)"

    # -- the consumer, both claims, on mq's jobs --
    for claim in skip-locked update; do
      q=$l-$claim
      w="[$1, $2, $l, $claim]"
      id=$("$MQ" push --queue "$q" --max-attempts 3 <"$T_TMP/bytes")
      run consume $l --queue "$q" --claim $claim --fail "boom $l" --retry-in 0
      like "$RC:$ERR" "0:*claimed job $id, attempt 1, receipt $id.*job $id: due again in 0.000s*" \
        "$w consumer: claims mq's job and fails it"
      is "$(col "state, attempts, CAST(last_error AS CHAR), leased_until IS NULL" "$id")$(history "$id")" \
        "ready 1 boom $l 1failed ready 1 boom $l," "$w consumer: the fail committed, its history row too"
      run consume $l --queue "$q" --claim $claim --extend 60 --output "$T_TMP/got"
      like "$RC:$ERR" "0:*claimed job $id, attempt 2,*job $id: acked*" "$w consumer: claims the retry, extends, acks"
      check "$w consumer: every byte of mq push's payload" cmp -s "$T_TMP/bytes" "$T_TMP/got"
      is "$(col "state, attempts, ABS(TIMESTAMPDIFF(SECOND, finished_at, UTC_TIMESTAMP(6))) < 60" "$id")" \
        "done 2 1" "$w consumer: the ack committed, finished now (UTC)"
      d=$("$MQ" push --queue "$q" --max-attempts 1 x)
      run consume $l --queue "$q" --claim $claim --fail "fatal $l"
      like "$RC:$ERR" "0:*job $d: dead after attempt 1*" "$w consumer: buries a job, its attempts used up"
      is "$(col "state, CAST(last_error AS CHAR)" "$d")$(history "$d")" "dead fatal ${l}failed dead 1 fatal $l," \
        "$w consumer: the burial committed, its history row too"
      expect_status 1 "$w consumer: nothing left to claim" consume $l --queue "$q" --claim $claim
    done
    w="[$1, $2, $l]"
    # -- dependencies: the consumer's ack and burial meet and cancel --
    dependents $l "$l-deps" "committed"
    # -- the recurring job the producer pushed: acked, due at the next slot --
    run consume $l --queue "$l-every" --output /dev/null
    like "$RC:$ERR" "0:*claimed job $e, attempt 1,*job $e: acked*" "$w consumer: acks the recurring job"
    is "$(col "state, attempts, TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(6), available_at) BETWEEN 58 AND 60" "$e")" \
      "ready 0 1" "$w consumer: the recurring job is due again in an hour (UTC)"
    # -- a consumer whose work outlasts the idle timeouts (wait_timeout 3 s) --
    j=$("$MQ" push --queue "$l-slow" slow)
    rm -f "$T_TMP/go"
    consume $l --queue "$l-slow" --wait-file "$T_TMP/go" >"$T_TMP/slow.out" 2>"$T_TMP/slow.err" &
    pid=$!
    sleep 3.5
    : >"$T_TMP/go"
    wait $pid
    is "$?:$(cat "$T_TMP/slow.out"):$(col "state, attempts" "$j")" "0:slow:done 1" \
      "$w consumer: acks after 3.5 s of work (idle timeouts 1 s and 3 s globally)"
  done
  is "$(counted)" "$(finished)" "[$1, $2] the counts are what the table holds"
}
round root ORACLE t_oracle
round root "ANSI,NO_BACKSLASH_ESCAPES,PAD_CHAR_TO_FULL_LENGTH" t_ansi
round app ORACLE t_app

# -- binlog_format STATEMENT: InnoDB refuses READ COMMITTED writes --
hsql "SET GLOBAL binlog_format = 'STATEMENT'; CREATE DATABASE hb;
  GRANT ALL ON hb.* TO app@localhost"
export MQ_DATABASE=hb MQ_TABLE=mq_jobs
MQ_USER=root "$MQ" init >/dev/null
for l in py php pl; do
  MQ_USER=root expect_status 0 "[binlog STATEMENT, root, $l] producer: a push" produce $l --queue "$l" </dev/null
  MQ_USER=root expect_status 0 "[binlog STATEMENT, root, $l] consumer: claim and ack" consume $l --queue "$l" --output /dev/null
  MQ_USER=app expect_status 78 "[binlog STATEMENT, an account that cannot log rows, $l] producer: refused" \
    produce $l --queue "$l-app" </dev/null
  like "$ERR" "*binlog_format=STATEMENT*" "[binlog STATEMENT, $l] producer: says why"
  MQ_USER=app expect_status 78 "[binlog STATEMENT, an account that cannot log rows, $l] consumer: refused" \
    consume $l --queue "$l"
done
is "$(hsql "SELECT GROUP_CONCAT(queue, ' ', state ORDER BY id) FROM hb.mq_jobs")" "py done,php done,pl done" \
  "the root's jobs done, none of the account's written"
hsql "SET GLOBAL binlog_format = 'MIXED'"
done_testing
