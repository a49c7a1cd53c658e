#!/bin/sh
# mq init: creates, is idempotent, prints its SQL without a server, warns
# on statement-based binlogs, refuses tables it does not own.
. "$(dirname "$0")/lib.sh"

expect_status 0 "init creates the tables" "$MQ" init
like "$OUT" "created table mq_jobs and mq_jobs_archive (schema 1)" \
  "init says what it created"
is "$(sql "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME" | tr '\n' ,)" \
  "mq schema 1,mq archive 1," "schema version recorded on both tables"

"$MQ" push x >/dev/null
before=$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive")
sum=$(table_sum)
expect_status 0 "second init succeeds" "$MQ" init
is "$OUT" "table mq_jobs is up to date (schema 1)" "second init says up to date"
is "$(sql "SHOW CREATE TABLE mq_jobs; SHOW CREATE TABLE mq_jobs_archive")" \
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
  "mq schema 1" "table made from --print is an mq table"
expect_status 0 "init accepts a table made from --print" "$MQ" init --table printed_q
is "$OUT" "table printed_q is up to date (schema 1)" "and finds it up to date"

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
like "$ERR" "*schema version 99, newer than this mq knows (1)*" "message names both versions"

expect_status 64 "init refuses an invalid table name" "$MQ" init --table 'x;drop'
expect_status 64 "init refuses an operand" "$MQ" init extra
expect_status 64 "init refuses an unknown option" "$MQ" init --bogus
done_testing
