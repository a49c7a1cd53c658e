#!/bin/sh
# The table as an SQL contract (mq-sql(7), issue 19), proven with client
# libraries nobody here wrote: the producer and consumer of examples/ in
# Python (pymysql), PHP (PDO) and Perl (DBI) use only the page's
# statements, and the page's statements are mq's own (the text in the mq
# binary). For each language and both claim strategies: jobs it pushes
# are run by mq work and mq pop; jobs mq push pushed are failed once
# (history, attempts, counters), retried and acked by it; its stale
# consumer is fenced as mq's own are; a session time zone other than UTC
# changes nothing; payloads of every byte value survive; dedup keys
# collide with mq push's; the counts and counters stay exact (a recount
# finds nothing to add); a lock wait timeout is retried. Then the same as
# the roles of sql/grants.sql.
. "$(dirname "$0")/lib.sh"
# meson sets MALLOC_PERTURB_ for every test: glibc then fills each block
# it hands out or takes back, which made perl (all malloc) seven times
# slower, past the timings of the stale-consumer checks. The clients are
# not what this test checks for memory errors (the ASan run checks mq).
unset MALLOC_PERTURB_
ROOT=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}
PAGE=$ROOT/man/mq-sql.7.scd
# $EX, $PY, lang_cmd, produce, consume, all_bytes (lib.sh)
examples_env
for c in "$PY -c 'import pymysql'" "php -r 'exit(extension_loaded(\"pdo_mysql\") ? 0 : 1);'" \
  "perl -MDBD::mysql -e 1"; do
  check "client library: $c (tests/deps.sh installs it)" sh -c "$c" 2>/dev/null
done

# ---- the statements: examples' = page's = mq's ----

# statements of SQL text on stdin, one a line: comments gone, blanks and
# line breaks collapsed, split at the ';' that end them
statements() {
  grep -v '^[[:space:]]*--' | tr '\n\t' '  ' | tr -s ' ' |
    sed 's/; */;\n/g' | sed 's/^ //; s/ *;$//' | grep .
}
# the SQL of the page's literal blocks (each block ends its last
# statement: the backoff rule's formula is not the start of the next)
awk '/^```/ { if (on) print ";"; on = !on; next } on' "$PAGE" | statements >"$T_TMP/page.sql"
like "$(wc -l <"$T_TMP/page.sql")" "*[1-9][0-9]" "the page shows statements"
# the SQL texts of an example and of the module of its language it loads
# (the session's statements): Python """ strings, PHP nowdocs, Perl
# here-documents, each named SQL_*
example_sql() {
  case $1 in
  *.py) module=mq_session.py ;;
  *.php) module=mq_session.php ;;
  *.pl) module=MqSession.pm ;;
  esac
  awk '/^SQL_[A-Z_]* = """$|^const SQL_[A-Z_]* = <<<.SQL.$|^use constant SQL_[A-Z_]* => <<.SQL.;$/ { on = 1; next }
    on && /^("""|SQL;?)$/ { on = 0; print ";"; next }
    on' "$EX/$module" "$EX/$1" | statements
}
for f in producer.py consumer.py producer.php consumer.php producer.pl \
  consumer.pl; do
  example_sql "$f" >"$T_TMP/ex.sql"
  n=$(wc -l <"$T_TMP/ex.sql")
  missing=$(while IFS= read -r s; do
    grep -qxF -- "$s" "$T_TMP/page.sql" || printf '%s\n' "$s"
  done <"$T_TMP/ex.sql")
  case $f in producer.*) want=14 ;; *) want=34 ;; esac
  is "$n:$missing" "$want:" "$f: its $want statements (with its module's) are mq-sql(7)'s, word for word"
done
# The page's statements on mq's tables are mq's: each is a string of the
# binary ({{TABLE}} for the table), or for one with an id list, its head
# up to "id IN (" (or "parent IN (", or a list of pairs "(d.parent,
# d.child) IN (") and its tail after the list, or for one mq sends first
# of several (the session's DROP TEMPORARY TABLE, the probe's head), the
# head of a string up to its ';'. Not there: the pushes, the waiter's
# statement and its rows' INSERT and DELETE, and a push's UPDATE of the
# rows it woke, which lib/push.c, lib/wakeup.c and lib/waiters.c put
# together at run time, SHOW CREATE TABLE, part of a longer text, and
# the page's own reads of a job.
if command -v strings >/dev/null 2>&1; then
  strings -n 8 "$MQ" | tr -s ' ' >"$T_TMP/binary.txt"
  notmq=$(grep '`mq_jobs' "$T_TMP/page.sql" |
    sed "s/\`mq_jobs/\`{{TABLE}}/g; s/'mq_jobs'/'{{TABLE}}'/g" |
    while IFS= read -r s; do
      case $s in
      *" IN (?)"* | *" IN ((?, ?))"*)
        case $s in
        *" IN (?)"*) head="${s%% IN (\?)*} IN (" tail=${s#* IN (\?} ;;
        *) head="${s%% IN ((\?, \?))*} IN (" tail=${s#* IN ((\?, \?)} ;;
        esac
        grep -qxF -- "$head" "$T_TMP/binary.txt" &&
          { [ "$tail" = ")" ] || grep -qxF -- "$tail" "$T_TMP/binary.txt"; } ||
          echo "$s" | cut -d' ' -f1-4 ;;
      *) grep -qxF -- "$s" "$T_TMP/binary.txt" ||
        S="$s;" awk 'index($0, ENVIRON["S"]) == 1 { found = 1; exit }
          END { exit !found }' "$T_TMP/binary.txt" ||
        echo "$s" | cut -d' ' -f1-4 ;;
      esac
    done | tr '\n' '|')
  ins='INSERT INTO `{{TABLE}}` (queue,|'
  is "$notmq" "SHOW CREATE TABLE \`{{TABLE}}\`|$ins$ins$ins${ins}SELECT id, queue, CASE|SELECT seq, event, state,|SELECT /* mq-wait \`{{TABLE}}\`|INSERT INTO \`{{TABLE}}_waiters\` (node,|DELETE FROM \`{{TABLE}}_waiters\` WHERE|UPDATE \`{{TABLE}}_waiters\` SET wakes|" \
    "every other statement of mq-sql(7) is a string of the mq binary"
else
  not_ok "strings (binutils) finds the statements in the mq binary"
fi

# ---- the runs ----
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

all_bytes "$T_TMP/bytes"

col() { sql "SELECT $1 FROM mq_jobs WHERE id = $2"; }
# claimed LANG ARGS...: its consumer claims in the background ($pid) and
# waits for $T_TMP/go before it finishes; $old is its receipt
claimed() {
  rm -f "$T_TMP/go"
  # emptied here: the background job's redirection may come late, and the
  # last claim's receipt must not be read for this one's
  : >"$T_TMP/stale.out"
  : >"$T_TMP/stale.err"
  consume "$@" --wait-file "$T_TMP/go" >"$T_TMP/stale.out" 2>"$T_TMP/stale.err" &
  pid=$!
  i=0
  old=
  until [ -n "$old" ] || [ $i -ge 500 ] || ! kill -0 $pid 2>/dev/null; do
    sleep 0.02; i=$((i + 1))
    old=$(sed -n 's/.*receipt \([0-9]*\.[0-9a-f]\{32\}\)$/\1/p' "$T_TMP/stale.err")
  done
}
# waiting ID: "state due|waiting parent_shards" of a job (a dependent
# waits at the end of time)
waiting() {
  sql "SELECT CONCAT(state, ' ', IF(available_at = '9999-12-31 23:59:59.999999', 'waiting',
    IF(available_at <= UTC_TIMESTAMP(6), 'due', 'later')), ' ', parent_shards) FROM mq_jobs WHERE id = $1"
}
# the exact counts: mq stats --recount adds nothing to them
recount_adds_nothing() {
  s=$(table_sum mq_jobs_counts)
  "$MQ" stats --recount >/dev/null
  is "$(table_sum mq_jobs_counts)" "$s" "$1: mq stats --recount finds the counts exact"
}

# The sanitized build's run checks mq's memory, which the language of
# the other side does not change: Python alone there.
LANGS="py php pl"
[ -n "${MQ_SANITIZED:-}" ] && LANGS=py
NLANGS=$(echo $LANGS | wc -w)
for l in $LANGS; do
  for claim in skip-locked update; do
    q=$l-$claim
    nsl=
    [ $claim = update ] && nsl=1
    # -- pushed by the language (in UTC-8), run by mq work and mq pop --
    a=$(MQ_EXAMPLE_TIME_ZONE=-08:00 produce $l --queue "$q" --file "$T_TMP/bytes")
    b=$(printf 'job from %s' $l | MQ_EXAMPLE_TIME_ZONE=-08:00 produce $l --queue "$q" --priority 1)
    mkdir -p "$T_TMP/out-$q"
    run env ${nsl:+MQ_NO_SKIP_LOCKED=1} "$MQ" work --queue "$q" --max-jobs 2 --wait 10s \
      -- sh -c 'cat >"$0/$MQ_ID"' "$T_TMP/out-$q"
    is "$RC:$(cat "$T_TMP/out-$q/$b" 2>&1)" "0:job from $l" "$q: mq work ran the job $l pushed"
    check "$q: every byte of its payload reached mq work's command" cmp -s "$T_TMP/bytes" "$T_TMP/out-$q/$a"
    is "$(col "state, attempts, created_at <= UTC_TIMESTAMP(6) - INTERVAL 1 HOUR" "$a") $(col state "$b")" \
      "done	1	0 done" "$q: both done, after one attempt, made now in UTC"
    c=$(MQ_EXAMPLE_TIME_ZONE=+09:00 produce $l --queue "$q" --file "$T_TMP/bytes")
    run "$MQ" pop --queue "$q" --claim $claim -o "$T_TMP/popped"
    is "$RC:$(col state "$c")" "0:leased" "$q: a job $l pushed from UTC+9 is claimed at once"
    check "$q: mq pop writes every byte of it" cmp -s "$T_TMP/bytes" "$T_TMP/popped"
    "$MQ" ack "$OUT"

    # -- pushed by mq, failed once, retried and acked by the language --
    id=$("$MQ" push --queue "$q" --max-attempts 3 <"$T_TMP/bytes")
    run env MQ_EXAMPLE_TIME_ZONE=+09:00 $(lang_cmd $l consumer) --queue "$q" \
      --claim $claim --fail "boom from $l" --retry-in 0
    like "$RC:$ERR" "0:*claimed job $id, attempt 1, receipt $id.*job $id: due again in 0.000s*" \
      "$q: $l claims mq's job and fails it"
    is "$(col "state, attempts, last_error, leased_until IS NULL" "$id")" "ready	1	boom from $l	1" \
      "$q: ready again, 1 attempt, the error kept"
    like "$(history_of "$id")" "failed ready 1 *:[0-9]* boom from $l," "$q: a history row for the failed attempt"
    run env MQ_EXAMPLE_TIME_ZONE=-08:00 $(lang_cmd $l consumer) --queue "$q" \
      --claim $claim --output "$T_TMP/got-$q"
    like "$RC:$ERR" "0:*claimed job $id, attempt 2,*job $id: acked*" "$q: $l claims the retry at once and acks it"
    check "$q: every byte of mq push's payload reached $l" cmp -s "$T_TMP/bytes" "$T_TMP/got-$q"
    is "$(col "state, attempts, finished_at IS NOT NULL" "$id")" "done	2	1" "$q: done after 2 attempts"
    # burying: attempts used up (skip-locked), --no-retry (update)
    if [ $claim = skip-locked ]; then
      d=$("$MQ" push --queue "$q" --max-attempts 1 x)
      set --
      why="its attempts used up"
    else
      d=$("$MQ" push --queue "$q" x)
      set -- --no-retry
      why="--no-retry"
    fi
    run consume $l --queue "$q" --claim $claim --fail "fatal $l" "$@"
    like "$RC:$ERR" "0:*job $d: dead after attempt 1*" "$q: $l buries a job: $why"
    like "$(col "state, last_error" "$d")$(history_of "$d")" "dead	fatal $l""failed dead 1 *fatal $l," \
      "$q: dead, with its error and history row"
    is "$(counters "$q" | cut -d' ' -f1-5)" "$(tallied "$q")" "$q: the counters are what the table and history hold"
    is "$(counted_jobs)" "$(finished_jobs)" "$q: the counts are what the table holds"

    # -- a stale consumer of the language is fenced --
    s=$("$MQ" push --queue "$q" stale)
    how=ack
    [ $claim = update ] && how=fail
    set --
    [ $how = fail ] && set -- --fail late
    claimed $l --queue "$q" --claim $claim --lease 0.3 "$@"
    sleep 0.4
    run "$MQ" requeue-stale --queue "$q"
    is "$RC:$OUT" "0:requeued 1
dead 0" "$q: the lease of $l's claim expired, the job is requeued"
    new=$("$MQ" pop --queue "$q" --claim $claim -o /dev/null)
    sum=$(table_sum mq_jobs mq_jobs_counts mq_jobs_history)
    : >"$T_TMP/go"
    wait $pid
    rc=$?
    like "$rc:$(cat "$T_TMP/stale.err")" "2:*job $s: lease lost*" \
      "$q: $l's $how after mq pop claimed the job again: lease lost, status 2"
    expect_status 2 "$q: as mq's own stale $how is" "$MQ" $how "$old"
    is "$(table_sum mq_jobs mq_jobs_counts mq_jobs_history)" "$sum" "$q: the stale ${how}s changed nothing"
    is "$(col "state, lease_token, attempts" "$s")" "leased	${new#*.}	2" "$q: the job is mq pop's delivery, not lost"
    expect_status 0 "$q: and mq pop's receipt acks it" "$MQ" ack "$new"
    recount_adds_nothing "$q"
  done

  # -- a delayed job, from a session 9 hours east: due at the right time --
  d=$(MQ_EXAMPLE_TIME_ZONE=+09:00 produce $l --queue "$l-delay" --delay 1.5 </dev/null)
  is "$(col "TIMESTAMPDIFF(MICROSECOND, created_at, available_at), ABS(TIMESTAMPDIFF(SECOND, created_at, UTC_TIMESTAMP(6))) < 60" "$d")" \
    "1500000	1" "$l: --delay 1.5 from UTC+9: due 1.5 s after now, in UTC"
  expect_status 1 "$l: not claimable before" "$MQ" pop --queue "$l-delay"

  # -- dedup keys collide with mq push's, both ways --
  k=$(produce $l --queue dd --dedup "key-$l" </dev/null)
  is "$("$MQ" push --queue dd --dedup "key-$l" again)" "$k" "$l: mq push finds the live job of $l's key"
  m=$("$MQ" push --queue dd --dedup "mq-key-$l" first)
  is "$(produce $l --queue dd --dedup "mq-key-$l" </dev/null)" "$m" "$l: $l finds the live job of mq push's key"
  r=$(produce $l --queue dd --dedup "every-$l" --every 3600 </dev/null)
  is "$(produce $l --queue dd --dedup "every-$l" --every 3600 </dev/null) $(col "every_us, every_anchor = available_at" "$r")" \
    "$r 3600000000	1" "$l: a recurring job, declared twice: one job, anchored at its due time"
  # a row with a '/' in its queue (checks off) holding queue sq's key
  sql "SET SESSION check_constraint_checks = 0; INSERT INTO mq_jobs (queue, payload, dedup_key) VALUES ('sq/$l', 'squat', 'k')"
  produce $l --queue sq --dedup "$l/k" </dev/null >"$T_TMP/sq.out" 2>"$T_TMP/sq.err"
  is "$?:$(cat "$T_TMP/sq.out")" 70: "$l: a key a foreign row of another queue holds: status 70, no id"
  like "$(cat "$T_TMP/sq.err")" "*the dedup key is held by job *, which is not of queue 'sq'*" "$l: and says why"

  # -- the optional wakeup: a waiting mq pop is woken by KILL QUERY --
  "$MQ" pop --queue "$l-wake" --wait 5s >"$T_TMP/woken" 2>/dev/null &
  pid=$!
  fresh_waiters "$l-wake"
  k0=$(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2)
  printf 'wake %s' $l | produce $l --queue "$l-wake" --wake >/dev/null
  wait $pid
  is "$?:$(cat "$T_TMP/woken"):$(($(sql_root "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2) - k0))" \
    "0:wake $l:1" "$l --wake: the waiter gets the job, woken by one KILL QUERY"
  # (the wait above took more than the 1.5 s)
  expect_status 0 "$l: the delayed job is claimable once due" "$MQ" pop --queue "$l-delay"

  # -- mq takes the receipts of the language's claims, and the other way --
  j=$("$MQ" push --queue "$l-mixed" "mixed $l")
  claimed $l --queue "$l-mixed"
  expect_status 0 "$l: mq extend takes the receipt of $l's claim" "$MQ" extend --lease 1m "$old"
  : >"$T_TMP/go"
  wait $pid
  is "$?:$(cat "$T_TMP/stale.out"):$(col "state, attempts" "$j")" "0:mixed $l:done	1" "$l: and $l acks it then"
  # -- an extend in a queue limited since the claim writes its gates,
  # as a claim does (mq-sql(7), EXTENDING A LEASE): else an extend that
  # commits after the lease ended and a claim that counted it ended
  # both hold the slot --
  j=$("$MQ" push --queue "$l-gated" --key k "gated $l")
  claimed $l --queue "$l-gated" --extend 60
  "$MQ" limit "$l-gated" --concurrency 5 --per-key 1 >/dev/null
  : >"$T_TMP/go"
  wait $pid
  is "$?:$(sql "SELECT GROUP_CONCAT(CONCAT('[', gate_key, ']', claims) ORDER BY gate_key) FROM mq_jobs_gates WHERE queue = '$l-gated'")" \
    "0:[]1,[k]1" "$l: its extend in a limited queue wrote the queue's gate and the key's"
  j=$(produce $l --queue "$l-mixed2" </dev/null)
  r=$("$MQ" pop --queue "$l-mixed2" -o /dev/null)
  expect_status 0 "$l: mq fails the job of $l's push" "$MQ" fail --error mq --no-retry "$r"
  like "$(col state "$j")$(history_of "$j")" "deadfailed dead 1 *:* mq," "$l: dead, with its history row"

  # -- dependencies (schema 11, mq-sql(7) DEPENDENCIES): the language's
  # ack of a parent makes a dependent of mq push --after due, once, with
  # its last parent; its burial of one cancels the dependents that die
  # with it (and theirs), makes due those that run anyway, and leaves
  # those that wait. On the examples before schema 11's statements, the
  # dependents waited for ever. --
  p1=$("$MQ" push --queue "$l-par" P1)
  p2=$("$MQ" push --queue "$l-par" --priority 1 P2)
  kid=$("$MQ" push --queue "$l-kid" --after "$p1,$p2" KID)
  run consume $l --queue "$l-par" --claim update --output /dev/null
  like "$RC:$ERR" "0:*claimed job $p1,*job $p1: acked*" "$l: acks a parent"
  is "$(waiting "$kid")" "ready waiting 1" "$l: its dependent waits for the other parent's shard"
  expect_status 1 "$l: and is not claimed" "$MQ" pop --queue "$l-kid"
  run consume $l --queue "$l-par" --output /dev/null
  like "$RC:$ERR" "0:*claimed job $p2,*job $p2: acked*" "$l: acks the last parent"
  is "$(waiting "$kid"):$(sql "SELECT SUM(parents) FROM mq_jobs_waits WHERE child = $kid")" "ready due 0:0" \
    "$l: the dependent is due, its parents all met"
  is "$(sql "SELECT GROUP_CONCAT(parent, ':', met ORDER BY parent) FROM mq_jobs_deps WHERE child = $kid")" \
    "$p1:1,$p2:1" "$l: its edges marked met"
  r=$("$MQ" pop --queue "$l-kid" -o "$T_TMP/kid")
  is "${r%%.*}:$(cat "$T_TMP/kid"):$("$MQ" pop --queue "$l-kid" -o /dev/null; echo $?)" \
    "$kid:KID:1" "$l: claimed once, and once only"
  # a parent buried by the language: cancel (and its own dependent),
  # run, wait; and an unrelated job's dependent is untouched
  pd=$("$MQ" push --queue "$l-die" --max-attempts 1 PD)
  po=$("$MQ" push --queue "$l-other" PO)
  kc=$("$MQ" push --queue "$l-kid" --after "$pd" KC)
  kg=$("$MQ" push --queue "$l-kid" --after "$kc" KG)
  kr=$("$MQ" push --queue "$l-kid" --after "$pd" --if-parent-dies run KR)
  kw=$("$MQ" push --queue "$l-kid" --after "$pd" --if-parent-dies wait KW)
  ko=$("$MQ" push --queue "$l-kid" --after "$pd,$po" --if-parent-dies run KO)
  run consume $l --queue "$l-die" --claim update --fail "gone $l"
  like "$RC:$ERR" "0:*job $pd: dead after attempt 1*" "$l: buries a parent"
  is "$(sql "SELECT CONCAT(id, ' ', state, ' ', IFNULL(last_error, '-')) FROM mq_jobs WHERE id IN ($kc, $kg) ORDER BY id" | tr '\n' ,)" \
    "$kc dead cancelled: parent $pd is dead,$kg dead cancelled: parent $kc is dead," \
    "$l: its 'cancel' dependent cancelled, and that one's in turn"
  is "$(waiting "$kr"):$(waiting "$kw"):$(waiting "$ko")" "ready due 0:ready waiting 1:ready waiting 1" \
    "$l: its 'run' dependent due, its 'wait' one waits, one with a live parent too"
  run consume $l --queue "$l-other" --output /dev/null
  is "$RC:$(waiting "$ko")" "0:ready due 0" "$l: which is due once that one is acked"
  is "$(counted_jobs)" "$(finished_jobs)" "$l: the cancelled jobs are counted"
  recount_adds_nothing "$l dependencies"
done

# ---- a lock wait timeout (1205) is rolled back and retried ----
# Each language's ack meets a row lock held 1.6 s, with a lock wait
# timeout of 1 s (--lock-wait 1, bound in the session's setup): it can
# only succeed by trying again.
ids=
for l in $LANGS; do
  ids="$ids${ids:+,}$("$MQ" push --queue "$l-locked" "locked $l")"
  rm -f "$T_TMP/go-$l"
  consume $l --queue "$l-locked" --lock-wait 1 --wait-file "$T_TMP/go-$l" \
    >"$T_TMP/locked-$l.out" 2>"$T_TMP/locked-$l.err" &
  eval "pid_$l=\$!"
done
i=0
until [ "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE id IN ($ids) AND state = 'leased'")" = "$NLANGS" ] ||
  [ $i -ge 500 ]; do
  sleep 0.02; i=$((i + 1))
done
sql "START TRANSACTION; SELECT id FROM mq_jobs WHERE id IN ($ids) FOR UPDATE;
  DO SLEEP(1.6); COMMIT" >/dev/null &
lock=$!
i=0
until [ "$(sql_root "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DO SLEEP(1.6)%'")" = 1 ] ||
  [ $i -ge 500 ]; do
  sleep 0.02; i=$((i + 1))
done
for l in $LANGS; do : >"$T_TMP/go-$l"; done
for l in $LANGS; do
  eval "wait \$pid_$l"
  is "$?:$(cat "$T_TMP/locked-$l.out")" "0:locked $l" \
    "$l: its ack outlived a lock wait timeout (1205) by trying again"
done
wait $lock
is "$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE id IN ($ids)")" "$(echo $LANGS | sed 's/[a-z]*/done/g; s/ /,/g')" "the jobs are done"

# ---- least privilege: the roles of sql/grants.sql are enough ----
sed -e "s/{{DATABASE}}/$T_DB/g" -e "s/{{TABLE}}/mq_jobs/g" "$ROOT/sql/grants.sql" >"$T_TMP/grants.sql"
sql_root "$(cat "$T_TMP/grants.sql")"
for role in producer consumer; do
  sql_root "DROP USER IF EXISTS 't330_$role'@'localhost';
    CREATE USER 't330_$role'@'localhost';
    GRANT mq_jobs_$role TO 't330_$role'@'localhost';
    SET DEFAULT ROLE mq_jobs_$role FOR 't330_$role'@'localhost'"
done
for l in $LANGS; do
  a=$(printf 'role %s' $l | MQ_USER=t330_producer produce $l --queue roles --dedup "r-$l")
  like "$a:$(printf x | MQ_USER=t330_producer produce $l --queue roles --dedup "r-$l")" \
    "[1-9]*:$a" "$l as mq_jobs_producer: push, and the dedup read"
  run env MQ_USER=t330_consumer $(lang_cmd $l consumer) --queue roles --claim update --fail no --retry-in 0
  is "$RC" 0 "$l as mq_jobs_consumer: claim (update) and fail"
  run env MQ_USER=t330_consumer $(lang_cmd $l consumer) --queue roles --extend 60
  is "$RC:$OUT" "0:role $l" "$l as mq_jobs_consumer: claim (skip-locked), extend and ack"
  run env MQ_USER=t330_producer $(lang_cmd $l consumer) --queue roles
  like "$RC:$ERR" "77:*denied*" "$l as mq_jobs_producer: no claim (access denied: 77, as mq)"
  # its ack and burial of parents (mq_jobs_deps, mq_jobs_waits)
  rp=$("$MQ" push --queue roles-par RP)
  rd=$("$MQ" push --queue roles-par --priority 1 --max-attempts 1 RD)
  rk=$("$MQ" push --queue roles-kid --after "$rp" RK)
  rx=$("$MQ" push --queue roles-kid --after "$rd" RX)
  run env MQ_USER=t330_consumer $(lang_cmd $l consumer) --queue roles-par --output /dev/null
  r1=$RC
  run env MQ_USER=t330_consumer $(lang_cmd $l consumer) --queue roles-par --fail x
  is "$r1:$RC:$(waiting "$rk"):$(col "state, last_error" "$rx")" "0:0:ready due 0:dead	cancelled: parent $rd is dead" \
    "$l as mq_jobs_consumer: its ack of a parent makes the dependent due, its burial cancels one"
done
is "$(counters roles | cut -d' ' -f1-5)" "$(tallied roles)" "roles: the counters are what the table and history hold"
for role in producer consumer; do
  sql_root "DROP USER IF EXISTS 't330_$role'@'localhost'"
done
recount_adds_nothing "at the end"
done_testing
