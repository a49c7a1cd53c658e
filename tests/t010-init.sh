#!/bin/sh
# mq init: creates, is idempotent, prints its SQL without a server, warns
# on statement-based binlogs, refuses tables it does not own.
. "$(dirname "$0")/lib.sh"

expect_status 0 "init creates the tables" "$MQ" init
is "$OUT" "created tables mq_jobs, mq_jobs_archive, mq_jobs_queues, mq_jobs_counts, mq_jobs_history, mq_jobs_waiters, mq_jobs_gates, mq_jobs_ticks, mq_jobs_deps, mq_jobs_waits, mq_jobs_schedules and mq_jobs_fired (schema 12)" \
  "init says what it created"
CREATED=$OUT
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 12,mq archive 1,mq counts 1,mq deps 1,mq fired 1,mq gates 1,mq history 1,mq queues 3,mq schedules 1,mq ticks 1,mq waiters 1,mq waits 1," "schema version recorded on the tables"

"$MQ" push x >/dev/null
before=$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive; SHOW CREATE TABLE mq_jobs_queues; SHOW CREATE TABLE mq_jobs_counts")
sum=$(table_sum)
expect_status 0 "second init succeeds" "$MQ" init
is "$OUT" "table mq_jobs is up to date (schema 12)" "second init says up to date"
is "$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive; SHOW CREATE TABLE mq_jobs_queues; SHOW CREATE TABLE mq_jobs_counts")" \
  "$before" "second init changes no table definition"
is "$(table_sum)" "$sum" "second init changes no row"

# mq-init(1) and mq-queue(7) describe the schema the code makes: the
# version of lib/mq.h, the lines init printed above, every upgrade in turn
SRC=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}
V=$(sed -n 's/^#define MQ_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$SRC/lib/mq.h")
like "$V" "[0-9]*" "lib/mq.h has the schema version"
is "$(grep -o '(\*mq schema [0-9]*\*' "$SRC/man/mq-init.1.scd")" "(*mq schema $V*" \
  "mq-init(1) names the current schema version, $V"
is "$(grep -o 'comment carries the schema version: \*mq schema [0-9]*\*' "$SRC/man/mq-queue.7.scd" | grep -o '[0-9]*')" "$V" \
  "mq-queue(7) names the current schema version, $V"
is "$(grep "^created tables mq_jobs, " "$SRC/man/mq-init.1.scd")" "$CREATED" \
  "mq-init(1) shows the line init prints when it creates the tables"
is "$(grep "^table mq_jobs is up to date" "$SRC/man/mq-init.1.scd")" "table mq_jobs is up to date (schema $V)" \
  "mq-init(1) shows the line init prints when the table is up to date"
is "$(grep -o 'Version [0-9]*' "$SRC/man/mq-init.1.scd" | uniq | tr '\n' ' ')" \
  "$(i=2; while [ $i -le "$V" ]; do printf 'Version %d ' $i; i=$((i + 1)); done)" \
  "mq-init(1) describes every upgrade, 2 to $V, in order"
is "$(grep -o 'schema [0-9]*' "$SRC/man/mq-init.1.scd" | awk -v v="$V" '$2 > v')" "" \
  "mq-init(1) names no schema after $V"

expect_status 0 "init --table makes another table" "$MQ" init --table other_q
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('other_q', 'other_q_archive')")" \
  2 "other table and its archive exist"
expect_status 0 "MQ_TABLE selects the table" env MQ_TABLE=third_q "$MQ" init
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'third_q'")" \
  1 "table from MQ_TABLE exists"

# --print needs no server: point it at nothing
run env MQ_SOCKET=/nonexistent/sock "$MQ" init --print --table printed_q
is "$RC" 0 "init --print works without a server"
like "$OUT" "*CREATE TABLE IF NOT EXISTS \`printed_q\` (*" "--print names the table"
like "$OUT" "*CREATE TABLE IF NOT EXISTS \`printed_q_archive\` (*" "--print has the archive"
like "$OUT" "*KEY claim (queue, state, priority, available_at, id)*" "--print has the claim index"
# and what it prints is what init runs
printf '%s\n' "$OUT" | sql "$(cat)" 2>"$T_TMP/print.err"
is "$?" 0 "--print output runs in the mysql client"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'printed_q'")" \
  "mq schema 12" "table made from --print is an mq table"
expect_status 0 "init accepts a table made from --print" "$MQ" init --table printed_q
is "$OUT" "table printed_q is up to date (schema 12)" "and finds it up to date"

# binlog_format STATEMENT without binary logging: nothing is logged,
# nothing to say (t300 runs a server that logs)
old=$(sql_root "SELECT @@GLOBAL.binlog_format")
sql_root "SET GLOBAL binlog_format = 'STATEMENT'"
run "$MQ" init
sql_root "SET GLOBAL binlog_format = '$old'"
is "$RC:$ERR" "0:" "init with STATEMENT binlog and no binary log: succeeds, says nothing"

# durability: a COMMIT answered before its redo is on disk (mq-init(1),
# DURABILITY) is warned of; the tables are made all the same
for f in 2 0; do
  sql_root "SET GLOBAL innodb_flush_log_at_trx_commit = $f"
  run "$MQ" init
  sql_root "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
  is "$RC:$OUT" "0:table mq_jobs is up to date (schema 12)" \
    "innodb_flush_log_at_trx_commit $f: init succeeds, its line unchanged"
  case $f in 2) who="the machine" ;; *) who="the server" ;; esac
  is "$ERR" "mq init: warning: innodb_flush_log_at_trx_commit is $f: a crash of $who can lose transactions the server said were committed (jobs pushed, acks); set it to 1" \
    "  and warns, naming the setting, the crash that loses and the safe value"
done
run "$MQ" init
is "$RC:$ERR" "0:" "innodb_flush_log_at_trx_commit 1 and no binary log: no warning"

# tables that are not mq's
sql "CREATE TABLE foreign_t (id INT PRIMARY KEY)"
sum=$(table_sum foreign_t)
expect_status 78 "init refuses a table that is not an mq table" "$MQ" init --table foreign_t
like "$ERR" "mq init: table '*.foreign_t' is not an mq table*mq init*" "message says so"
is "$(table_sum foreign_t)" "$sum" "foreign table unchanged"
sql "CREATE TABLE future_t (id INT PRIMARY KEY) COMMENT 'mq schema 99'"
expect_status 78 "init refuses a newer schema" "$MQ" init --table future_t
like "$ERR" "*schema version 99, newer than this mq knows (12)*" "message names both versions"

# upgrade: a version 1 table (as mq 0.1 made it) with jobs in it
sed 's/{{TABLE}}/v1_jobs/g' "$TESTS_DIR/fixtures/schema-v1.sql" | sql "$(cat)"
MQ_TABLE=v1_jobs "$MQ" push 2>/dev/null
is "$?" 78 "a version 1 table is refused by push"
sql "INSERT INTO v1_jobs (queue, payload) VALUES ('default', 'old job')"
expect_status 78 "and by pop" "$MQ" pop --table v1_jobs
like "$ERR" "*has schema version 1: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 1" "$MQ" init --table v1_jobs
is "$OUT" "upgraded table v1_jobs from schema 1 to 12" "init says it upgraded"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'v1\\_jobs%' ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 12,mq archive 1,mq counts 1,mq deps 1,mq fired 1,mq gates 1,mq history 1,mq queues 3,mq schedules 1,mq ticks 1,mq waiters 1,mq waits 1," "upgraded tables carry version 12"
run "$MQ" pop --table v1_jobs
is "$RC:$OUT" "0:old job" "the old job survives the upgrade and is claimed"
expect_status 0 "init after the upgrade" "$MQ" init --table v1_jobs
is "$OUT" "table v1_jobs is up to date (schema 12)" "and changes nothing more"
sql "DROP TABLE v1_jobs_queues"
expect_status 78 "a missing companion table is refused" "$MQ" pop --table v1_jobs
like "$ERR" "*table '*.v1_jobs_queues' is missing (or not readable): run 'mq init'*" "and named"
expect_status 0 "init recreates it" "$MQ" init --table v1_jobs
like "$OUT" "table v1_jobs is at schema 12; created the missing tables next to it" "and says so"
sql "DROP TABLE v1_jobs_archive"
expect_status 0 "init also remakes a missing archive" "$MQ" init --table v1_jobs
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v1_jobs_archive'")" \
  1 "the archive is back"

# upgrade: a version 2 table (as mq made it before recurring jobs) with a waiting job and a
# live dedup key
sed 's/{{TABLE}}/v2_jobs/g' "$TESTS_DIR/fixtures/schema-v2.sql" | sql "$(cat)"
sql "INSERT INTO v2_jobs (queue, payload, dedup_key) VALUES ('default', 'v2 job', 'k')"
expect_status 78 "a version 2 table is refused by pop" "$MQ" pop --table v2_jobs
like "$ERR" "*has schema version 2: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 2" "$MQ" init --table v2_jobs
is "$OUT" "upgraded table v2_jobs from schema 2 to 12" "init says it upgraded"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v2_jobs'")" \
  "mq schema 12" "the upgraded table carries version 12"
expect_status 0 "the upgraded table takes a recurring job" \
  "$MQ" push --table v2_jobs --every 1h --dedup r recurring
is "$(sql "SELECT COUNT(*) FROM v2_jobs WHERE every_us = 3600000000 AND every_anchor = available_at")" \
  1 "with its period and anchor"
expect_status 0 "the dedup key survives the upgrade" "$MQ" push --table v2_jobs --dedup k again
is "$OUT" 1 "(the old job's id)"
# the same columns and indexes as a table made at version 5 (column order
# and the table name aside)
cols() { sql "SELECT GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE, ' ', IS_NULLABLE, ' ', COALESCE(COLUMN_DEFAULT, '-') ORDER BY COLUMN_NAME) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"; }
# the CHECK constraints, named after the table
checks() { sql "SELECT GROUP_CONCAT(REPLACE(CONSTRAINT_NAME, '$1', 'T'), ' ', CHECK_CLAUSE ORDER BY CONSTRAINT_NAME SEPARATOR '; ') FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"; }
keys() { sql "SELECT GROUP_CONCAT(INDEX_NAME, ':', SEQ_IN_INDEX, ':', COLUMN_NAME ORDER BY INDEX_NAME, SEQ_IN_INDEX) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"; }
is "$(cols v2_jobs)" "$(cols mq_jobs)" "upgraded columns = created columns"
is "$(keys v2_jobs)" "$(keys mq_jobs)" "upgraded indexes = created indexes"
expect_status 0 "init after the upgrade changes nothing" "$MQ" init --table v2_jobs
is "$OUT" "table v2_jobs is up to date (schema 12)" "and says so"

# upgrade: a version 3 table (as mq made it before the due index) with a
# job due now and one scheduled for later
sed 's/{{TABLE}}/v3_jobs/g' "$TESTS_DIR/fixtures/schema-v3.sql" | sql "$(cat)"
sql "INSERT INTO v3_jobs (queue, payload, available_at) VALUES ('default', 'due', UTC_TIMESTAMP(6)), ('default', 'later', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"
expect_status 78 "a version 3 table is refused by pop" "$MQ" pop --table v3_jobs
like "$ERR" "*has schema version 3: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 3" "$MQ" init --table v3_jobs
is "$OUT" "upgraded table v3_jobs from schema 3 to 12" "init says it upgraded"
is "$(keys v3_jobs)" "$(keys mq_jobs)" "upgraded indexes = created indexes (the due index added)"
is "$(cols v3_jobs)" "$(cols mq_jobs)" "and the columns unchanged"
run "$MQ" pop --table v3_jobs
is "$RC:$OUT" "0:due" "the due job is claimed after the upgrade"
expect_status 1 "the one scheduled for later is not" "$MQ" pop --table v3_jobs

# upgrade: a version 4 table (as mq made it before the counts) with
# finished jobs of two queues, and an archive
sed 's/{{TABLE}}/v4_jobs/g' "$TESTS_DIR/fixtures/schema-v4.sql" | sql "$(cat)"
sql "INSERT INTO v4_jobs (queue, state, payload, finished_at) SELECT ELT(1 + seq % 2, 'a', 'b'), ELT(1 + seq % 3, 'ready', 'done', 'dead'), 'x', IF(seq % 3 = 0, NULL, NOW(6)) FROM seq_1_to_30"
sql "INSERT INTO v4_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at) SELECT 1000 + seq, 'a', 'done', 0, '', 1, 1, NOW(), NOW() FROM seq_1_to_4"
expect_status 78 "a version 4 table is refused by stats" "$MQ" stats --table v4_jobs
expect_status 0 "init upgrades version 4" "$MQ" init --table v4_jobs
is "$OUT" "upgraded table v4_jobs from schema 4 to 12" "init says it upgraded"
is "$(keys v4_jobs_counts)" "$(keys mq_jobs_counts)" "the counts table is made as init makes it"
is "$(cols v4_jobs_counts)" "$(cols mq_jobs_counts)" "(and its columns)"
is "$(sql "SELECT queue, state, SUM(n) FROM v4_jobs_counts GROUP BY queue, state" | tr '\t\n' ' ,')" \
  "a done 5,a dead 5,a archived 4,b done 5,b dead 5," "and filled from the tables"
expect_status 0 "stats on the upgraded table" "$MQ" stats --table v4_jobs --json
like "$OUT" '*"queue":"a","ready":5,*"done":5,"dead":5,*"queue":"b","ready":5,*"done":5,"dead":5,*"archive":4}' \
  "counts its finished jobs"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v4_jobs_counts'")" \
  "mq counts 1" "the counts table says it is filled"
# an upgrade cut short between the version and the filling: the next init
# fills the counts; once filled, init leaves them alone
sql "DELETE FROM v4_jobs_counts; ALTER TABLE v4_jobs_counts COMMENT = 'mq counts 1, to fill'"
expect_status 0 "init after a filling cut short" "$MQ" init --table v4_jobs
is "$(sql "SELECT queue, state, SUM(n) FROM v4_jobs_counts GROUP BY queue, state" | tr '\t\n' ' ,')" \
  "a done 5,a dead 5,a archived 4,b done 5,b dead 5," "fills the counts"
sql "INSERT INTO v4_jobs_counts (queue, state, slot, n) VALUES ('a', 'done', 3, 100)"
expect_status 0 "init on filled counts" "$MQ" init --table v4_jobs
is "$(sql "SELECT SUM(n) FROM v4_jobs_counts WHERE queue = 'a' AND state = 'done'")" 105 \
  "does not count again (only stats --recount does)"
sql "DROP TABLE v4_jobs_counts"
expect_status 0 "init remakes a dropped counts table" "$MQ" init --table v4_jobs
is "$OUT" "table v4_jobs is at schema 12; created the missing tables next to it" "and says so"
is "$(sql "SELECT queue, state, SUM(n) FROM v4_jobs_counts GROUP BY queue, state" | tr '\t\n' ' ,')" \
  "a done 5,a dead 5,a archived 4,b done 5,b dead 5," "and fills it again"

# upgrade: a version 5 table (as mq made it before the CHECK constraints)
# with jobs in every state, and rows that schema 6 refuses
sed 's/{{TABLE}}/v5_jobs/g' "$TESTS_DIR/fixtures/schema-v5.sql" | sql "$(cat)"
TOK=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
sql "SET SESSION sql_mode = '';
  INSERT INTO v5_jobs (queue, payload, state, attempts, max_attempts, available_at, leased_until, lease_token, leased_by, finished_at, last_error, dedup_key, every_us, every_anchor) VALUES
  ('a', 'ready',      'ready',  0, 10, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('a', 'scheduled',  'ready',  0, 10, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('a', 'leased',     'leased', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, '$TOK', 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('a', 'stale',      'leased', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, '$TOK', 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('a', 'done',       'done',   1, 10, UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('a', 'dead',       'dead',   3, 3,  UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', UTC_TIMESTAMP(6), 'boom', NULL, NULL, NULL),
  ('a', 'recurring',  'ready',  0, 10, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, 3600000000, UTC_TIMESTAMP(6)),
  ('a', 'dedup',      'ready',  0, 10, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, 'k', NULL, NULL),
  ('b', 'bad-state',  'bogus',  0, 10, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('b', 'no-deadline','leased', 1, 10, UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('b', 'no-token',   'leased', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('b', 'lost-last',  'leased', 2, 2,  UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('b', 'done-no-time','done',  1, 10, UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', NULL, NULL, NULL, NULL, NULL),
  ('b', 'max0',       'ready',  0, 0,  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('b', 'used-up',    'ready',  5, 3,  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('b', 'over',       'done',   5, 3,  UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('b', 'every0',     'ready',  0, 10, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, 0, UTC_TIMESTAMP(6)),
  ('b', 'no-anchor',  'ready',  0, 10, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, NULL, 60000000, NULL),
  ('b', 'zero-date',  'ready',  0, 10, '0000-00-00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
sql "INSERT INTO v5_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at, finished_at) VALUES (1000, 'a', 'done', 0, 'archived', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"
sql "INSERT INTO v5_jobs_counts VALUES ('a', 'done', 0, 1), ('a', 'dead', 0, 1), ('a', 'archived', 0, 1); ALTER TABLE v5_jobs_counts COMMENT = 'mq counts 1'"
expect_status 78 "a version 5 table is refused by pop" "$MQ" pop --table v5_jobs
like "$ERR" "*has schema version 5: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 5" "$MQ" init --table v5_jobs
is "$OUT" "upgraded table v5_jobs from schema 5 to 12" "init says it upgraded"
is "$(cols v5_jobs)" "$(cols mq_jobs)" "upgraded columns and defaults = created ones"
is "$(keys v5_jobs)" "$(keys mq_jobs)" "upgraded indexes = created indexes"
is "$(checks v5_jobs)" "$(checks mq_jobs)" "upgraded CHECK constraints = created ones"
like "$(checks v5_jobs)" "T_done *; T_every *; T_lease *; T_queue *; T_state *; T_times *; T_tries *" "(all seven)"
is "$(cols v5_jobs_archive)" "$(cols mq_jobs_archive)" "the archive's archived_at default is UTC too"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'v5\\_jobs%' ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 12,mq archive 1,mq counts 1,mq deps 1,mq fired 1,mq gates 1,mq history 1,mq queues 3,mq schedules 1,mq ticks 1,mq waiters 1,mq waits 1," "the upgraded tables carry version 12"
is "$(sql "SELECT payload, CAST(state AS CHAR), attempts, max_attempts, available_at > UTC_TIMESTAMP(6), leased_until IS NOT NULL, finished_at IS NOT NULL, COALESCE(every_us, '-'), every_anchor IS NOT NULL, COALESCE(dedup_live, '-') FROM v5_jobs ORDER BY id" | tr '\t' ' ')" \
"ready ready 0 10 0 0 0 - 0 -
scheduled ready 0 10 1 0 0 - 0 -
leased leased 1 10 0 1 0 - 0 -
stale leased 1 10 0 1 0 - 0 -
done done 1 10 0 0 1 - 0 -
dead dead 3 3 0 0 1 - 0 -
recurring ready 0 10 1 0 0 3600000000 1 -
dedup ready 0 10 1 0 0 - 0 k
bad-state dead 0 10 0 0 1 - 0 -
no-deadline ready 1 10 0 0 0 - 0 -
no-token ready 1 10 0 0 0 - 0 -
lost-last dead 2 2 0 0 1 - 0 -
done-no-time done 1 10 0 0 1 - 0 -
max0 ready 0 1 1 0 0 - 0 -
used-up ready 5 6 1 0 0 - 0 -
over done 5 5 0 0 1 - 0 -
every0 ready 0 10 1 0 0 - 0 -
no-anchor ready 0 10 1 0 0 60000000 1 -
zero-date ready 0 10 0 0 0 - 0 -" "every job survives with its state; the refused rows repaired as documented"
is "$(sql "SELECT last_error FROM v5_jobs WHERE payload IN ('bad-state', 'lost-last') ORDER BY id" | tr '\n' ,)" \
  "mq init: invalid state, buried,lease without deadline or token; attempts used up," "buried rows say why"
is "$(sql "SELECT ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP())) < 60 FROM v5_jobs WHERE payload = 'zero-date'")" 1 \
  "a zero due time becomes now"
is "$(counted_jobs v5_jobs)" "$(finished_jobs v5_jobs)" "the counts are recounted"
run "$MQ" pop --table v5_jobs --queue b --json --count 10
is "$RC:$(printf '%s\n' "$OUT" | sed -n 's/.*"payload":"\([^"]*\)".*/\1/p' | tr '\n' ,)" "0:zero-date,no-deadline,no-token," \
  "the repaired leases and the zero-date job are claimed"
run "$MQ" pop --table v5_jobs --queue a --json --count 10
is "$RC:$(printf '%s\n' "$OUT" | sed -n 's/.*"payload":"\([^"]*\)".*/\1/p' | tr '\n' ,)" "0:ready," "the ready job is claimed, none scheduled"
id=$(sql "SELECT id FROM v5_jobs WHERE payload = 'leased'")
expect_status 0 "the leased job's receipt still acks" "$MQ" ack --table v5_jobs "$id.$TOK"
run "$MQ" requeue-stale --table v5_jobs
is "$RC:$(echo $OUT)" "0:requeued 1 dead 0" "the stale job is requeued"
expect_status 0 "the dedup key survives the upgrade" "$MQ" push --table v5_jobs --queue a --dedup k again
is "$OUT" "$(sql "SELECT id FROM v5_jobs WHERE payload = 'dedup'")" "(the old job's id)"
sql "SET SESSION sql_mode = ''; INSERT INTO v5_jobs (queue, payload, every_us) VALUES ('a', 'x', 0)" 2>"$T_TMP/sql.err"
like "$(cat "$T_TMP/sql.err")" "*ERROR 4025 *v5_jobs_every*" "the upgraded table refuses every_us 0"
expect_status 0 "init after the upgrade" "$MQ" init --table v5_jobs
is "$OUT" "table v5_jobs is up to date (schema 12)" "changes nothing more"

# a queue name mq does not accept cannot be repaired: refused, naming the
# ids, before anything changes; renamed, the upgrade goes through
sed 's/{{TABLE}}/v5b/g' "$TESTS_DIR/fixtures/schema-v5.sql" | sql "$(cat)"
sql "INSERT INTO v5b (queue, payload) VALUES ('ok', 'x'), ('a b', 'y'), ('', 'z'); INSERT INTO v5b (queue, payload, state) VALUES ('ok', 'w', 'done')"
# refused_upgrade TABLE VERSION ERROR WHAT: mq init refuses TABLE (78)
# with ERROR, and changes nothing (its rows, its version)
refused_upgrade() {
  _sum=$(table_sum "$1")
  expect_status 78 "init refuses rows $4" "$MQ" init --table "$1"
  is "$ERR" "$3" "  naming the ids and what to do"
  is "$(table_sum "$1"):$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'")" \
    "$_sum:mq schema $2" "  and changes nothing"
}
refused_upgrade v5b 5 "mq init: cannot upgrade table 'v5b' to schema 6: 2 jobs have a queue name mq does not accept (ids 2, 3): rename their queue or delete them, then run 'mq init' again" \
  "with queue names mq does not accept"
sql "UPDATE v5b SET queue = 'renamed' WHERE id IN (2, 3)"
# cut short: the repairs ran, the ALTER did not; init runs it all again
sed -e 's/{{TABLE}}/v5b/g' -e '/^ALTER TABLE `{{TABLE}}`$/,$d' "$TESTS_DIR/../sql/upgrade-6.sql" | sql "$(cat)"
expect_status 0 "init upgrades after the rename, and after a run cut short" "$MQ" init --table v5b
is "$(checks v5b)" "$(checks mq_jobs)" "with every constraint"
is "$(sql "SELECT queue, payload, CAST(state AS CHAR) FROM v5b ORDER BY id" | tr '\t\n' ' ,')" \
  "ok x ready,renamed y ready,renamed z ready,ok w done," "and every job"

# 7 -> 8: queue a/b with dedup key c and queue a with key b/c are one
# entry of upgrade 8's unique key (a/b/c): refused before anything
# changes, naming the ids (a table whose CHECKs were off); renamed, it
# upgrades
sed 's/{{TABLE}}/v7d/g' "$TESTS_DIR/fixtures/schema-v7.sql" | sql "$(cat)"
sql "SET SESSION sql_mode = '', check_constraint_checks = 0; INSERT INTO v7d (id, queue, payload, state, dedup_key) VALUES (1, 'a', 'x', 'ready', 'b/c'), (2, 'a/b', 'y', 'ready', 'c'), (3, 'a/b', 'z', 'ready', NULL), (4, 'ok', 'w', 'ready', 'c')"
refused_upgrade v7d 7 "mq init: cannot upgrade table 'v7d' to schema 8: 1 jobs have a '/' in their queue name and a dedup key (upgrade 8's unique key, queue/key, could find two of them equal) (ids 2): rename their queue or delete them, then run 'mq init' again" \
  "upgrade 8's dedup key would find twice"
sql "SET SESSION check_constraint_checks = 0; UPDATE v7d SET queue = 'ab' WHERE queue = 'a/b'"
expect_status 0 "  renamed, init upgrades it" "$MQ" init --table v7d
is "$(sql "SELECT id, queue, dedup_key FROM v7d ORDER BY id" | tr '\t\n' ' ,')" \
  "1 a b/c,2 ab c,3 ab NULL,4 ok c," "  every job kept"

# 6 -> 7: the history table and the counters, with jobs in every state;
# the counts are kept, the counters start at 0; an upgrade cut short
# after the counts table's ALTER runs again
sed 's/{{TABLE}}/v6_jobs/g' "$TESTS_DIR/fixtures/schema-v6.sql" | sql "$(cat)"
sql "INSERT INTO v6_jobs (queue, payload, state, attempts, available_at, leased_until, lease_token, leased_by, finished_at, last_error) VALUES
  ('a', 'ready',  'ready',  0, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, NULL),
  ('a', 'leased', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, '$TOK', 'h:1', NULL, NULL),
  ('a', 'done',   'done',   1, UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', UTC_TIMESTAMP(6), NULL),
  ('a', 'dead',   'dead',   1, UTC_TIMESTAMP(6), NULL, '$TOK', 'h:1', UTC_TIMESTAMP(6), 'boom')"
sql "INSERT INTO v6_jobs_counts VALUES ('a', 'done', 0, 1), ('a', 'dead', 3, 1); ALTER TABLE v6_jobs_counts COMMENT = 'mq counts 1'"
sum=$(table_sum v6_jobs)
expect_status 78 "a version 6 table is refused by pop" "$MQ" pop --table v6_jobs
# cut short: the counts table altered, the version not yet recorded
sql "ALTER TABLE v6_jobs_counts ADD COLUMN total BIGINT UNSIGNED NOT NULL DEFAULT 0, MODIFY state ENUM('done', 'dead', 'archived', 'failed', 'requeued', 'retried', 'purged') NOT NULL"
expect_status 0 "init upgrades version 6 (after a run cut short)" "$MQ" init --table v6_jobs
is "$OUT" "upgraded table v6_jobs from schema 6 to 12" "init says it upgraded"
is "$(table_sum v6_jobs)" "$sum" "no job changed"
is "$(cols v6_jobs_counts)" "$(cols mq_jobs_counts)" "the counts table's columns = created ones"
is "$(cols v6_jobs_history):$(keys v6_jobs_history)" "$(cols mq_jobs_history):$(keys mq_jobs_history)" "the history table = a created one"
is "$(sql "SELECT queue, state, slot, n, total FROM v6_jobs_counts ORDER BY 1, 2, 3" | tr '\t\n' ' ,')" \
  "a done 0 1 1,a dead 3 1 1," "the counts kept; the done and dead counters start from them"
pushed_a() { "$MQ" stats --table v6_jobs --json | python3 -c 'import json, sys; print([q for q in json.load(sys.stdin)["queues"] if q["queue"] == "a"][0]["counters"]["pushed"])'; }
is "$(pushed_a)" 4 "pushed: the 4 jobs of queue a"
dead_id=$(sql "SELECT id FROM v6_jobs WHERE payload = 'dead'")
"$MQ" retry --table v6_jobs "$dead_id" >/dev/null
is "$(pushed_a)" 4 "a job dead before the upgrade, retried: pushed stays 4"
"$MQ" pop --table v6_jobs --queue a --receipt-file "$T_TMP/r6" >/dev/null
"$MQ" ack --table v6_jobs "$(cat "$T_TMP/r6")"
is "$(pushed_a)" 4 "and acked: pushed stays 4 (it never goes down)"
is "$(counted_jobs v6_jobs)" "$(finished_jobs v6_jobs)" "the counts equal the tables"
sed 's/{{TABLE}}/v6b/g' "$TESTS_DIR/fixtures/schema-v6.sql" | sql "$(cat)"
sql "ALTER TABLE v6b_counts COMMENT = 'mq counts 1'"
expect_status 0 "init upgrades a version 6 table in one run" "$MQ" init --table v6b
is "$(cols v6b_counts)" "$(cols mq_jobs_counts)" "(its counts table too)"
id=$(sql "SELECT id FROM v6_jobs WHERE payload = 'leased'")
expect_status 0 "the leased job's receipt fails it after the upgrade" "$MQ" fail --table v6_jobs "$id.$TOK" --error 'after upgrade'
is "$(sql "SELECT event, state, attempt, worker, error FROM v6_jobs_history WHERE job_id = $id" | tr '\t' ' ')" \
  "failed ready 1 h:1 after upgrade" "and the history records it"
expect_status 0 "init after the upgrade" "$MQ" init --table v6_jobs
is "$OUT" "table v6_jobs is up to date (schema 12)" "changes nothing more"
sql "DROP TABLE v6_jobs_history"
expect_status 0 "init remakes a dropped history table" "$MQ" init --table v6_jobs
is "$OUT" "table v6_jobs is at schema 12; created the missing tables next to it" "and says so"

# 7 -> 8: the dedup key unique over one column (one certification key per
# live key on Galera, none for jobs without one); jobs keep their keys
sed 's/{{TABLE}}/v7_jobs/g' "$TESTS_DIR/fixtures/schema-v7.sql" | sql "$(cat)"
sql "ALTER TABLE v7_jobs_counts COMMENT = 'mq counts 1'"
sql "INSERT INTO v7_jobs (queue, payload, state, dedup_key, finished_at) VALUES
  ('a', 'live', 'ready', 'k1', NULL), ('b', 'other queue', 'ready', 'k1', NULL),
  ('a', 'finished', 'done', 'k2', UTC_TIMESTAMP(6)), ('a', 'nokey', 'ready', NULL, NULL)"
sql "INSERT INTO v7_jobs_counts VALUES ('a', 'done', 0, 1, 1)"
sum=$(table_sum v7_jobs)
expect_status 78 "a version 7 table is refused by push" "$MQ" push --table v7_jobs x
expect_status 0 "init upgrades version 7" "$MQ" init --table v7_jobs
is "$OUT" "upgraded table v7_jobs from schema 7 to 12" "init says it upgraded"
is "$(table_sum v7_jobs)" "$sum" "no job changed"
is "$(cols v7_jobs):$(keys v7_jobs)" "$(cols mq_jobs):$(keys mq_jobs)" "the job table = a created one"
is "$(keys v7_jobs | tr ',' '\n' | grep '^dedup:')" "dedup:1:dedup_unique" "the dedup key is one column"
is "$(sql "SELECT payload, COALESCE(HEX(dedup_unique), '-') FROM v7_jobs ORDER BY id" | tr '\t\n' ' ,')" \
  "live 612F6B31,other queue 622F6B31,finished -,nokey -," "queue/key while live, NULL otherwise"
live=$(sql "SELECT id FROM v7_jobs WHERE payload = 'live'")
expect_status 0 "a push with a live key after the upgrade" "$MQ" push --table v7_jobs --queue a --dedup k1 again
is "$OUT" "$live" "finds the live job"
expect_status 0 "a push with a finished job's key" "$MQ" push --table v7_jobs --queue a --dedup k2 anew
is "$(sql "SELECT COUNT(*) FROM v7_jobs WHERE dedup_key = 'k2'")" 2 "makes a new job"
is "$(sql "SELECT COUNT(*) FROM v7_jobs WHERE dedup_key = 'k1'")" 2 "and the live key made none (one per queue)"

# 8 -> 9: the waiters table (Galera wakeups across nodes); no job changes
sed 's/{{TABLE}}/v8_jobs/g' "$TESTS_DIR/fixtures/schema-v8.sql" | sql "$(cat)"
sql "ALTER TABLE v8_jobs_counts COMMENT = 'mq counts 1'"
sql "INSERT INTO v8_jobs (queue, payload) VALUES ('a', 'old job')"
sum=$(table_sum v8_jobs v8_jobs_counts)
expect_status 78 "a version 8 table is refused by pop" "$MQ" pop --table v8_jobs
expect_status 0 "init upgrades version 8" "$MQ" init --table v8_jobs
is "$OUT" "upgraded table v8_jobs from schema 8 to 12" "init says it upgraded"
is "$(table_sum v8_jobs v8_jobs_counts)" "$sum" "no job nor count changed"
is "$(cols v8_jobs_waiters):$(keys v8_jobs_waiters)" "$(cols mq_jobs_waiters):$(keys mq_jobs_waiters)" \
  "the waiters table = a created one"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'v8\\_jobs%' ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 12,mq archive 1,mq counts 1,mq deps 1,mq fired 1,mq gates 1,mq history 1,mq queues 3,mq schedules 1,mq ticks 1,mq waiters 1,mq waits 1," "the upgraded tables carry their versions"
sql "DROP TABLE v8_jobs_waiters"
expect_status 0 "init remakes a dropped waiters table" "$MQ" init --table v8_jobs
is "$OUT" "table v8_jobs is at schema 12; created the missing tables next to it" "and says so"
run "$MQ" pop --table v8_jobs --queue a
is "$RC:$OUT" "0:old job" "the old job is claimed after the upgrade"

# 9 -> 10: limits (the job key, the held index, the limits of a queue,
# the gates and ticks tables, the key in the archive) on a table with
# jobs in every state: none changes, each goes on as before, and a
# script cut short after the queues' ALTER is run again
sed 's/{{TABLE}}/v9_jobs/g' "$TESTS_DIR/fixtures/schema-v9.sql" | sql "$(cat)"
sql "ALTER TABLE v9_jobs_counts COMMENT = 'mq counts 1'"
sql "INSERT INTO v9_jobs (queue, payload, state, attempts, available_at, leased_until, lease_token, leased_by, finished_at, dedup_key, every_us, every_anchor) VALUES
  ('a', 'ready', 'ready', 0, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, 'k1', NULL, NULL),
  ('a', 'scheduled', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 DAY, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('a', 'leased', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, REPEAT('ab', 16), 'h:1', NULL, NULL, NULL, NULL),
  ('a', 'stale', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, REPEAT('cd', 16), 'h:2', NULL, NULL, NULL, NULL),
  ('a', 'done', 'done', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL),
  ('a', 'dead', 'dead', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL),
  ('a', 'every', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, 3600000000, UTC_TIMESTAMP(6))"
sql "INSERT INTO v9_jobs_queues (queue, paused, paused_at) VALUES ('p', 1, UTC_TIMESTAMP(6))"
sql "INSERT INTO v9_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at, finished_at) VALUES (1000, 'a', 'done', 0, 'archived', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"
v9rows() { sql "SELECT CONCAT_WS(' ', id, queue, state, attempts, available_at, COALESCE(leased_until, '-'), COALESCE(lease_token, '-'), COALESCE(finished_at, '-'), COALESCE(dedup_unique, '-'), COALESCE(every_us, '-')) FROM v9_jobs ORDER BY id; SELECT CONCAT_WS(' ', queue, paused) FROM v9_jobs_queues; SELECT CONCAT_WS(' ', id, payload) FROM v9_jobs_archive" | tr '\n' ';'; }
before=$(v9rows)
expect_status 78 "a version 9 table is refused by pop" "$MQ" pop --table v9_jobs --queue a
# a cut after the queues' ALTER (one ALTER: all of it or nothing): its
# columns are there, the version is 9
sql "ALTER TABLE v9_jobs_queues ADD COLUMN concurrency INT UNSIGNED NULL, ADD COLUMN per_key INT UNSIGNED NULL, ADD COLUMN rate INT UNSIGNED NULL, ADD COLUMN rate_us BIGINT UNSIGNED NULL, ADD COLUMN key_rate INT UNSIGNED NULL, ADD COLUMN key_rate_us BIGINT UNSIGNED NULL, ADD CONSTRAINT v9_jobs_queues_limits CHECK ((concurrency IS NULL OR concurrency >= 1) AND (per_key IS NULL OR per_key >= 1) AND (rate IS NULL) = (rate_us IS NULL) AND (rate IS NULL OR (rate >= 1 AND rate_us >= 1)) AND (key_rate IS NULL) = (key_rate_us IS NULL) AND (key_rate IS NULL OR (key_rate >= 1 AND key_rate_us >= 1))), COMMENT='mq queues 3'"
expect_status 0 "init upgrades version 9 (its queues' ALTER done before)" "$MQ" init --table v9_jobs
is "$OUT" "upgraded table v9_jobs from schema 9 to 12" "init says it upgraded"
is "$(v9rows)" "$before" "no job, queue setting nor archived job changed"
is "$(sql "SELECT COUNT(*) FROM v9_jobs WHERE job_key IS NOT NULL")" 0 "no job has a key"
for t in '' _archive _queues _gates _ticks; do
  is "$(cols v9_jobs$t):$(keys v9_jobs$t)" "$(cols mq_jobs$t):$(keys mq_jobs$t)" "v9_jobs$t = a created one"
done
is "$(checks v9_jobs)" "$(checks mq_jobs)" "the job table's checks = a created one's"
is "$(checks v9_jobs_queues)" "$(checks mq_jobs_queues)" "the queues' checks = a created one's"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'v9\\_jobs%' ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 12,mq archive 1,mq counts 1,mq deps 1,mq fired 1,mq gates 1,mq history 1,mq queues 3,mq schedules 1,mq ticks 1,mq waiters 1,mq waits 1," "the upgraded tables carry their versions"
expect_status 0 "init again changes nothing" "$MQ" init --table v9_jobs
is "$OUT" "table v9_jobs is up to date (schema 12)" "and says so"
run "$MQ" pop --table v9_jobs --queue a
is "$RC:$OUT" "0:ready" "the ready job is claimed after the upgrade"
expect_status 0 "the leased job is acked with its old receipt" "$MQ" ack --table v9_jobs "$(sql "SELECT id FROM v9_jobs WHERE payload = 'leased'").abababababababababababababababab"
expect_status 0 "the stale one is requeued" "$MQ" requeue-stale --table v9_jobs --queue a
is "$(sql "SELECT state FROM v9_jobs WHERE payload = 'stale'")" ready "and is ready again"

# 10 -> 11: dependencies (three columns at the end of the job table,
# the deps and waits tables) on a table with jobs in every state: none
# changes, each goes on as before, and its jobs can be parents at once
sed 's/{{TABLE}}/v10_jobs/g' "$TESTS_DIR/fixtures/schema-v10.sql" | sql "$(cat)"
sql "ALTER TABLE v10_jobs_counts COMMENT = 'mq counts 1'"
sql "INSERT INTO v10_jobs (queue, payload, state, attempts, available_at, leased_until, lease_token, leased_by, finished_at, dedup_key, every_us, every_anchor, job_key) VALUES
  ('a', 'ready', 'ready', 0, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, 'k1', NULL, NULL, 'c1'),
  ('a', 'scheduled', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 DAY, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('a', 'leased', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, REPEAT('ab', 16), 'h:1', NULL, NULL, NULL, NULL, 'c1'),
  ('a', 'stale', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, REPEAT('cd', 16), 'h:2', NULL, NULL, NULL, NULL, NULL),
  ('a', 'done', 'done', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('a', 'dead', 'dead', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('a', 'every', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, 3600000000, UTC_TIMESTAMP(6), NULL)"
sql "INSERT INTO v10_jobs_queues (queue, paused, paused_at, concurrency, per_key) VALUES ('p', 1, UTC_TIMESTAMP(6), 3, 1)"
sql "INSERT INTO v10_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at, finished_at) VALUES (1000, 'a', 'done', 0, 'archived', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"
v10rows() { sql "SELECT CONCAT_WS(' ', id, queue, state, attempts, available_at, COALESCE(leased_until, '-'), COALESCE(lease_token, '-'), COALESCE(finished_at, '-'), COALESCE(dedup_unique, '-'), COALESCE(every_us, '-'), COALESCE(job_key, '-')) FROM v10_jobs ORDER BY id; SELECT CONCAT_WS(' ', queue, paused, concurrency, per_key) FROM v10_jobs_queues; SELECT CONCAT_WS(' ', id, payload) FROM v10_jobs_archive" | tr '\n' ';'; }
before=$(v10rows)
expect_status 78 "a version 10 table is refused by pop" "$MQ" pop --table v10_jobs --queue a
like "$ERR" "*has schema version 10: run 'mq init' to upgrade it" "  which says to run mq init"
expect_status 0 "init upgrades version 10" "$MQ" init --table v10_jobs
is "$OUT" "upgraded table v10_jobs from schema 10 to 12" "init says it upgraded"
is "$(v10rows)" "$before" "no job, queue setting nor archived job changed"
is "$(sql "SELECT CONCAT(COUNT(children), '/', COUNT(parent_shards), '/', COUNT(if_parent_dies)) FROM v10_jobs")" "0/0/0" \
  "no job has dependents nor parents"
for t in '' _deps _waits; do
  is "$(cols v10_jobs$t):$(keys v10_jobs$t)" "$(cols mq_jobs$t):$(keys mq_jobs$t)" "v10_jobs$t = a created one"
done
is "$(checks v10_jobs)" "$(checks mq_jobs)" "the job table's checks = a created one's"
expect_status 0 "init again changes nothing" "$MQ" init --table v10_jobs
is "$OUT" "table v10_jobs is up to date (schema 12)" "and says so"
ids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM v10_jobs WHERE payload IN ('ready', 'leased', 'done')")
archived_id=1000
kid=$("$MQ" push --table v10_jobs --queue k --after "$ids,$archived_id" kid)
is "$(sql "SELECT parent_shards FROM v10_jobs WHERE id = $kid")" 2 "a dependent of old jobs: waits for the two not done"
expect_status 0 "the leased job is acked with its old receipt" "$MQ" ack --table v10_jobs "$(sql "SELECT id FROM v10_jobs WHERE payload = 'leased'").abababababababababababababababab"
run "$MQ" pop --table v10_jobs --queue a -o /dev/null
expect_status 0 "the ready job claimed and acked" "$MQ" ack --table v10_jobs "$OUT"
run "$MQ" pop --table v10_jobs --queue k
is "$RC:$OUT" "0:kid" "then the dependent is due and claimed"
expect_status 0 "the stale one is requeued" "$MQ" requeue-stale --table v10_jobs --queue a
is "$(sql "SELECT state FROM v10_jobs WHERE payload = 'stale'")" ready "and is ready again"

# 11 -> 12: calendar schedules (two new tables, the version in the job
# table's comment) on a table with jobs in every state: none changes
sed 's/{{TABLE}}/v11_jobs/g' "$TESTS_DIR/fixtures/schema-v11.sql" | sql "$(cat)"
sql "ALTER TABLE v11_jobs_counts COMMENT = 'mq counts 1'"
sql "INSERT INTO v11_jobs (queue, payload, state, attempts, available_at, leased_until, lease_token, leased_by, finished_at, dedup_key, every_us, every_anchor, job_key) VALUES
  ('a', 'ready', 'ready', 0, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, 'k1', NULL, NULL, 'c1'),
  ('a', 'scheduled', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 DAY, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('a', 'leased', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, REPEAT('ab', 16), 'h:1', NULL, NULL, NULL, NULL, 'c1'),
  ('a', 'stale', 'leased', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, REPEAT('cd', 16), 'h:2', NULL, NULL, NULL, NULL, NULL),
  ('a', 'done', 'done', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('a', 'dead', 'dead', 1, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL),
  ('a', 'every', 'ready', 0, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL, NULL, NULL, NULL, NULL, 3600000000, UTC_TIMESTAMP(6), NULL)"
sql "INSERT INTO v11_jobs_queues (queue, paused, paused_at, concurrency, per_key) VALUES ('p', 1, UTC_TIMESTAMP(6), 3, 1)"
sql "INSERT INTO v11_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at, finished_at) VALUES (1000, 'a', 'done', 0, 'archived', 1, 10, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"
v11rows() { sql "SELECT CONCAT_WS(' ', id, queue, state, attempts, available_at, COALESCE(leased_until, '-'), COALESCE(lease_token, '-'), COALESCE(finished_at, '-'), COALESCE(dedup_unique, '-'), COALESCE(every_us, '-'), COALESCE(job_key, '-'), COALESCE(children, '-')) FROM v11_jobs ORDER BY id; SELECT CONCAT_WS(' ', queue, paused, concurrency, per_key) FROM v11_jobs_queues; SELECT CONCAT_WS(' ', id, payload) FROM v11_jobs_archive" | tr '\n' ';'; }
before=$(v11rows)
ddl_before=$(sql "SHOW CREATE TABLE v11_jobs" | sed "s/COMMENT='mq schema 11'//")
expect_status 78 "a version 11 table is refused by pop" "$MQ" pop --table v11_jobs --queue a
like "$ERR" "*has schema version 11: run 'mq init' to upgrade it" "  which says to run mq init"
expect_status 0 "init upgrades version 11" "$MQ" init --table v11_jobs
is "$OUT" "upgraded table v11_jobs from schema 11 to 12" "init says it upgraded"
is "$(v11rows)" "$before" "no job, queue setting nor archived job changed"
is "$(sql "SHOW CREATE TABLE v11_jobs" | sed "s/COMMENT='mq schema 12'//")" "$ddl_before" \
  "the job table is the same but for its version"
for t in _schedules _fired; do
  is "$(cols v11_jobs$t):$(keys v11_jobs$t):$(checks v11_jobs$t | sed 's/v11_jobs/T/g')" \
    "$(cols mq_jobs$t):$(keys mq_jobs$t):$(checks mq_jobs$t | sed 's/mq_jobs/T/g')" "v11_jobs$t = a created one"
  is "$(sql "SELECT CONCAT(ENGINE, ' ', TABLE_COLLATION, ' ', TABLE_COMMENT) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v11_jobs$t'")" \
    "$(sql "SELECT CONCAT(ENGINE, ' ', TABLE_COLLATION, ' ', TABLE_COMMENT) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'mq_jobs$t'")" \
    "  its engine, collation and comment too"
done
expect_status 0 "init again changes nothing" "$MQ" init --table v11_jobs
is "$OUT" "table v11_jobs is up to date (schema 12)" "and says so"
sql "DROP TABLE v11_jobs_fired"
expect_status 0 "init remakes a dropped ledger" "$MQ" init --table v11_jobs
is "$OUT" "table v11_jobs is at schema 12; created the missing tables next to it" "and says so"
expect_status 0 "the leased job is acked with its old receipt" "$MQ" ack --table v11_jobs "$(sql "SELECT id FROM v11_jobs WHERE payload = 'leased'").abababababababababababababababab"
expect_status 0 "the stale one is requeued" "$MQ" requeue-stale --table v11_jobs --queue a
is "$(sql "SELECT state FROM v11_jobs WHERE payload = 'stale'")" ready "and is ready again"
run "$MQ" pop --table v11_jobs --queue a
is "$RC:$OUT" "0:ready" "the ready job is claimed"

expect_status 64 "init refuses an invalid table name" "$MQ" init --table 'x;drop'
expect_status 64 "init refuses an operand" "$MQ" init extra
expect_status 64 "init refuses an unknown option" "$MQ" init --bogus
# a companion's name taken by another table: refused before anything is
# made (before: "created tables ...", and every archive of the new table
# failed on the other one's columns)
"$MQ" init --table cj_archive >/dev/null
expect_status 78 "init: the archive's name is another job table" "$MQ" init --table cj
is "$ERR" "mq init: table '$T_DB.cj_archive' exists and is not the archive table of cj: rename or drop it, or choose another --table" \
  "and says which and why"
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$T_DB' AND TABLE_NAME IN ('cj', 'cj_queues', 'cj_counts')")" 0 \
  "nothing was made"
sql "CREATE TABLE cw_waiters (conn INT PRIMARY KEY)"
expect_status 78 "init: a table of another shape under the waiters' name" "$MQ" init --table cw
done_testing
