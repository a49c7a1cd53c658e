#!/bin/sh
# mq init: creates, is idempotent, prints its SQL without a server, warns
# on statement-based binlogs, refuses tables it does not own.
. "$(dirname "$0")/lib.sh"

expect_status 0 "init creates the tables" "$MQ" init
is "$OUT" "created tables mq_jobs, mq_jobs_archive, mq_jobs_queues and mq_jobs_counts (schema 6)" \
  "init says what it created"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 6,mq archive 1,mq counts 1,mq queues 2," "schema version recorded on the tables"

"$MQ" push x >/dev/null
before=$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive; SHOW CREATE TABLE mq_jobs_queues; SHOW CREATE TABLE mq_jobs_counts")
sum=$(table_sum)
expect_status 0 "second init succeeds" "$MQ" init
is "$OUT" "table mq_jobs is up to date (schema 6)" "second init says up to date"
is "$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive; SHOW CREATE TABLE mq_jobs_queues; SHOW CREATE TABLE mq_jobs_counts")" \
  "$before" "second init changes no table definition"
is "$(table_sum)" "$sum" "second init changes no row"

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
  "mq schema 6" "table made from --print is an mq table"
expect_status 0 "init accepts a table made from --print" "$MQ" init --table printed_q
is "$OUT" "table printed_q is up to date (schema 6)" "and finds it up to date"

# binlog_format STATEMENT: unsafe for UPDATE ... LIMIT and SKIP LOCKED
old=$(sql_root "SELECT @@GLOBAL.binlog_format")
sql_root "SET GLOBAL binlog_format = 'STATEMENT'"
run "$MQ" init
sql_root "SET GLOBAL binlog_format = '$old'"
is "$RC" 0 "init succeeds with STATEMENT binlog"
like "$ERR" "mq init: warning: binlog_format is STATEMENT*" "and warns about it"
run "$MQ" init
is "$ERR" "" "no warning with $old binlog"

# tables that are not mq's
sql "CREATE TABLE foreign_t (id INT PRIMARY KEY)"
sum=$(table_sum foreign_t)
expect_status 78 "init refuses a table that is not an mq table" "$MQ" init --table foreign_t
like "$ERR" "mq init: table '*.foreign_t' is not an mq table*mq init*" "message says so"
is "$(table_sum foreign_t)" "$sum" "foreign table unchanged"
sql "CREATE TABLE future_t (id INT PRIMARY KEY) COMMENT 'mq schema 99'"
expect_status 78 "init refuses a newer schema" "$MQ" init --table future_t
like "$ERR" "*schema version 99, newer than this mq knows (6)*" "message names both versions"

# upgrade: a version 1 table (as mq 0.1 made it) with jobs in it
sed 's/{{TABLE}}/v1_jobs/g' "$TESTS_DIR/schema-v1.sql" | sql "$(cat)"
MQ_TABLE=v1_jobs "$MQ" push 2>/dev/null
is "$?" 78 "a version 1 table is refused by push"
sql "INSERT INTO v1_jobs (queue, payload) VALUES ('default', 'old job')"
expect_status 78 "and by pop" "$MQ" pop --table v1_jobs
like "$ERR" "*has schema version 1: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 1" "$MQ" init --table v1_jobs
is "$OUT" "upgraded table v1_jobs from schema 1 to 6" "init says it upgraded"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'v1\\_jobs%' ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 6,mq archive 1,mq counts 1,mq queues 2," "upgraded tables carry version 6"
run "$MQ" pop --table v1_jobs
is "$RC:$OUT" "0:old job" "the old job survives the upgrade and is claimed"
expect_status 0 "init after the upgrade" "$MQ" init --table v1_jobs
is "$OUT" "table v1_jobs is up to date (schema 6)" "and changes nothing more"
sql "DROP TABLE v1_jobs_queues"
expect_status 78 "a missing companion table is refused" "$MQ" pop --table v1_jobs
like "$ERR" "*table '*.v1_jobs_queues' is missing (or not readable): run 'mq init'*" "and named"
expect_status 0 "init recreates it" "$MQ" init --table v1_jobs
like "$OUT" "table v1_jobs is at schema 6; created the missing tables next to it" "and says so"
sql "DROP TABLE v1_jobs_archive"
expect_status 0 "init also remakes a missing archive" "$MQ" init --table v1_jobs
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v1_jobs_archive'")" \
  1 "the archive is back"

# upgrade: a version 2 table (as mq made it before recurring jobs) with a waiting job and a
# live dedup key
sed 's/{{TABLE}}/v2_jobs/g' "$TESTS_DIR/schema-v2.sql" | sql "$(cat)"
sql "INSERT INTO v2_jobs (queue, payload, dedup_key) VALUES ('default', 'v2 job', 'k')"
expect_status 78 "a version 2 table is refused by pop" "$MQ" pop --table v2_jobs
like "$ERR" "*has schema version 2: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 2" "$MQ" init --table v2_jobs
is "$OUT" "upgraded table v2_jobs from schema 2 to 6" "init says it upgraded"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'v2_jobs'")" \
  "mq schema 6" "the upgraded table carries version 6"
expect_status 0 "the upgraded table takes a recurring job" \
  "$MQ" push --table v2_jobs --every 1h --dedup r recurring
is "$(sql "SELECT COUNT(*) FROM v2_jobs WHERE every_us = 3600000000 AND every_anchor = available_at")" \
  1 "with its period and anchor"
expect_status 0 "the dedup key survives the upgrade" "$MQ" push --table v2_jobs --dedup k again
is "$OUT" 1 "(the old job's id)"
# the same columns and indexes as a table made at version 5 (column order
# and the table name aside)
cols() { sql "SELECT GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE, ' ', IS_NULLABLE ORDER BY COLUMN_NAME) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"; }
keys() { sql "SELECT GROUP_CONCAT(INDEX_NAME, ':', SEQ_IN_INDEX, ':', COLUMN_NAME ORDER BY INDEX_NAME, SEQ_IN_INDEX) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"; }
is "$(cols v2_jobs)" "$(cols mq_jobs)" "upgraded columns = created columns"
is "$(keys v2_jobs)" "$(keys mq_jobs)" "upgraded indexes = created indexes"
expect_status 0 "init after the upgrade changes nothing" "$MQ" init --table v2_jobs
is "$OUT" "table v2_jobs is up to date (schema 6)" "and says so"

# upgrade: a version 3 table (as mq made it before the due index) with a
# job due now and one scheduled for later
sed 's/{{TABLE}}/v3_jobs/g' "$TESTS_DIR/schema-v3.sql" | sql "$(cat)"
sql "INSERT INTO v3_jobs (queue, payload, available_at) VALUES ('default', 'due', UTC_TIMESTAMP(6)), ('default', 'later', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"
expect_status 78 "a version 3 table is refused by pop" "$MQ" pop --table v3_jobs
like "$ERR" "*has schema version 3: run 'mq init' to upgrade it" "which says to run mq init"
expect_status 0 "init upgrades version 3" "$MQ" init --table v3_jobs
is "$OUT" "upgraded table v3_jobs from schema 3 to 6" "init says it upgraded"
is "$(keys v3_jobs)" "$(keys mq_jobs)" "upgraded indexes = created indexes (the due index added)"
is "$(cols v3_jobs)" "$(cols mq_jobs)" "and the columns unchanged"
run "$MQ" pop --table v3_jobs
is "$RC:$OUT" "0:due" "the due job is claimed after the upgrade"
expect_status 1 "the one scheduled for later is not" "$MQ" pop --table v3_jobs

# upgrade: a version 4 table (as mq made it before the counts) with
# finished jobs of two queues, and an archive
sed 's/{{TABLE}}/v4_jobs/g' "$TESTS_DIR/schema-v4.sql" | sql "$(cat)"
sql "INSERT INTO v4_jobs (queue, state, payload, finished_at) SELECT ELT(1 + seq % 2, 'a', 'b'), ELT(1 + seq % 3, 'ready', 'done', 'dead'), 'x', IF(seq % 3 = 0, NULL, NOW(6)) FROM seq_1_to_30"
sql "INSERT INTO v4_jobs_archive (id, queue, state, priority, payload, attempts, max_attempts, available_at, created_at) SELECT 1000 + seq, 'a', 'done', 0, '', 1, 1, NOW(), NOW() FROM seq_1_to_4"
expect_status 78 "a version 4 table is refused by stats" "$MQ" stats --table v4_jobs
expect_status 0 "init upgrades version 4" "$MQ" init --table v4_jobs
is "$OUT" "upgraded table v4_jobs from schema 4 to 6" "init says it upgraded"
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
sql "INSERT INTO v4_jobs_counts VALUES ('a', 'done', 3, 100)"
expect_status 0 "init on filled counts" "$MQ" init --table v4_jobs
is "$(sql "SELECT SUM(n) FROM v4_jobs_counts WHERE queue = 'a' AND state = 'done'")" 105 \
  "does not count again (only stats --recount does)"
sql "DROP TABLE v4_jobs_counts"
expect_status 0 "init remakes a dropped counts table" "$MQ" init --table v4_jobs
is "$OUT" "table v4_jobs is at schema 6; created the missing tables next to it" "and says so"
is "$(sql "SELECT queue, state, SUM(n) FROM v4_jobs_counts GROUP BY queue, state" | tr '\t\n' ' ,')" \
  "a done 5,a dead 5,a archived 4,b done 5,b dead 5," "and fills it again"

expect_status 64 "init refuses an invalid table name" "$MQ" init --table 'x;drop'
expect_status 64 "init refuses an operand" "$MQ" init extra
expect_status 64 "init refuses an unknown option" "$MQ" init --bogus
done_testing
