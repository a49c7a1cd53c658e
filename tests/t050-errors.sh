#!/bin/sh
# Bad input and bad surroundings: each gets one line on stderr naming the
# command and the cause, its documented status, and changes nothing.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
"$MQ" push keep >/dev/null
sum=$(table_sum)

printf '[client]\nsocket=%s\n' "$T_TMP/from-file.sock" >"$T_TMP/sock.cnf"

# usage errors (64)
expect_status 64 "no command" "$MQ"
expect_status 64 "unknown command" "$MQ" frobnicate
like "$ERR" "mq: 'frobnicate' is not a command*" "unknown command named"
expect_status 64 "unknown global option" "$MQ" --bogus pop
expect_status 64 "unknown option" "$MQ" pop --bogus
like "$ERR" "mq pop: unknown option '--bogus' (see 'mq pop -h')" "unknown option named"
expect_status 64 "unknown short option" "$MQ" pop -x
expect_status 64 "option without its value" "$MQ" pop --lease
like "$ERR" "mq pop: option '--lease' needs a value*" "missing value named"
for d in 5x -1s 1.5s 99999999999999999999s '' 1h30 ' 5s'; do
  expect_status 64 "bad duration '$d'" "$MQ" pop --lease "$d"
done
like "$ERR" "mq pop: invalid duration for --lease*" "bad duration named"
for t in 'a b' 'x`y' "x'y" 'x;y' '' "$(printf 'j\303\251')" \
  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; do
  expect_status 64 "bad table name '$t'" "$MQ" push --table "$t" x
  [ -z "$t" ] || expect_status 64 "bad table name '$t' in MQ_TABLE" env MQ_TABLE="$t" "$MQ" push x
  expect_status 64 "bad queue name '$t'" "$MQ" push --queue "$t" x
  [ -z "$t" ] || expect_status 64 "bad queue name '$t' in MQ_QUEUE" env MQ_QUEUE="$t" "$MQ" push x
done
like "$ERR" "mq push: invalid queue name 'a*' in MQ_QUEUE*" "bad MQ_QUEUE named"
for v in MQ_TABLE MQ_QUEUE MQ_PORT; do
  expect_status 0 "mq -h works with a bad $v" env "$v=a b" "$MQ" -h
  expect_status 0 "mq pop -h works with a bad $v" env "$v=a b" "$MQ" pop -h
done
expect_status 0 "ack does not use MQ_QUEUE, so a bad one does not stop it" \
  env "MQ_QUEUE=a b" "$MQ" init
expect_status 64 "an empty --socket" "$MQ" pop --socket ''
run env MQ_SOCKET= MQ_DEFAULTS_FILE="$T_TMP/sock.cnf" "$MQ" pop
like "$ERR" "*from-file.sock*" "an empty MQ_SOCKET counts as unset"
expect_status 64 "table name of 51 characters (its _queues_limits would be 65)" \
  "$MQ" push --table "$(printf '%051d' 0 | tr 0 a)" x
expect_status 64 "bad port" "$MQ" pop --port 99999
expect_status 64 "bad port in MQ_PORT" env MQ_PORT=x "$MQ" pop
run "$MQ" pop --lease "$(printf 'a\nb')"
is "$(printf '%s\n' "$ERR" | wc -l)" 1 "a newline in a bad value stays one line"

# cannot connect (69): the message names the socket
expect_status 69 "server down: status 69" env MQ_SOCKET="$T_TMP/no.sock" "$MQ" pop
like "$ERR" "mq pop: cannot connect: *$T_TMP/no.sock* (error 2002, SQLSTATE HY000)" \
  "message names the socket and the error"
# the private server listens on no TCP port: a TCP connection fails
expect_status 69 "no server at the host: status 69" "$MQ" pop --host 127.0.0.1 --port 9
like "$ERR" "mq pop: cannot connect: *'127.0.0.1'* (error 2002, SQLSTATE HY000)" \
  "message names the host"
expect_status 69 "MQ_HOST names it too" env MQ_HOST=127.0.0.1 MQ_PORT=9 "$MQ" pop
expect_status 69 "push with the server down" "$MQ" push --socket "$T_TMP/no.sock" x
expect_status 69 "ack with the server down" "$MQ" ack --socket "$T_TMP/no.sock" \
  1.0123456789abcdef0123456789abcdef
expect_status 69 "init with the server down" "$MQ" init --socket "$T_TMP/no.sock"

# configuration (78)
expect_status 78 "missing option file" "$MQ" --defaults-file "$T_TMP/nope.cnf" pop
like "$ERR" "mq pop: cannot read option file '$T_TMP/nope.cnf'*" "message names the file"
# an option file that is not a file: /dev/zero would be read for ever
# (before: a hang), a directory passed over (before: status 0); a pipe
# (process substitution, /dev/stdin) is an option file
expect_status 78 "/dev/zero as option file" timeout 20 "$MQ" --defaults-file /dev/zero stats
like "$ERR" "mq stats: cannot read option file '/dev/zero': not a file or a pipe" "message says why"
# (read once into memory: the client library reads it twice, and before,
# the second read found the pipe empty: "no database selected")
printf '[client]\ndatabase=%s\n' "$T_DB" >"$T_TMP/pipe.cnf"
expect_status 0 "a pipe as option file (/dev/stdin): its database is used" sh -c \
  'cat "$1" | env -u MQ_DATABASE "$2" --defaults-file /dev/stdin stats' sh "$T_TMP/pipe.cnf" "$MQ"
expect_status 78 "a directory as option file" "$MQ" --defaults-file "$T_TMP" stats
like "$ERR" "*: Is a directory" "message says it is a directory"
expect_status 0 "/dev/null as option file: none" "$MQ" --defaults-file /dev/null stats
expect_status 78 "missing table" "$MQ" pop --table nosuch
like "$ERR" "mq pop: table '$T_DB.nosuch' does not exist: run 'mq init' to create it" \
  "message says to run mq init"
expect_status 78 "push to a missing table" "$MQ" push --table nosuch x
expect_status 78 "ack on a missing table" "$MQ" ack --table nosuch 1.0123456789abcdef0123456789abcdef
sql "CREATE TABLE other_shape (id INT PRIMARY KEY, queue TEXT)"
expect_status 78 "a table of another shape" "$MQ" pop --table other_shape
like "$ERR" "*'$T_DB.other_shape' is not an mq table*mq init*" "message says not an mq table"
sql "CREATE TABLE newer LIKE mq_jobs; ALTER TABLE newer COMMENT 'mq schema 99'"
expect_status 78 "a newer schema" "$MQ" push --table newer x
like "$ERR" "*schema version 99, newer than this mq knows ($(sed -n "s/^#define MQ_SCHEMA_VERSION //p" "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/lib/mq.h")): upgrade mq" "message says upgrade mq"
is "$(sql "SELECT COUNT(*) FROM newer")" 0 "nothing written to the newer table"
expect_status 78 "no database selected" env -u MQ_DATABASE "$MQ" pop
like "$ERR" "mq pop: no database selected*" "message says so"
expect_status 78 "unknown database" "$MQ" pop --database no_such_db
like "$ERR" "*Unknown database 'no_such_db' (error 1049, SQLSTATE 42000)" "server error quoted with its code"
# a name the server refuses is no database either (before: status 69,
# as if the server were down)
expect_status 78 "a database name with a trailing space" "$MQ" pop --database 'x '
like "$ERR" "*(error 1102, SQLSTATE 42000)" "the server's error quoted"
expect_status 78 "a database name that is not UTF-8" "$MQ" pop --database "$(printf 'x\377\376')"
like "$ERR" "*(error 1300, SQLSTATE HY000)" "the server's error quoted"

# access denied (77): credentials from an option file
sql_root "DROP USER IF EXISTS 'mq_t050'@'localhost'; CREATE USER 'mq_t050'@'localhost' IDENTIFIED BY 'right-pw'"
printf '[client]\nuser=mq_t050\npassword=wrong-pw\n' >"$T_TMP/wrong.cnf"
expect_status 77 "wrong password: status 77" env -u MQ_USER "$MQ" --defaults-file "$T_TMP/wrong.cnf" pop
like "$ERR" "mq pop: cannot connect: Access denied for user 'mq_t050'@'localhost'* (error 1045, SQLSTATE 28000)" \
  "message quotes the server"
printf '[mq]\nuser=mq_t050\npassword=right-pw\n' >"$T_TMP/right.cnf"
expect_status 77 "right password, no grant: status 77" env -u MQ_USER "$MQ" --defaults-file "$T_TMP/right.cnf" pop
like "$ERR" "mq pop: cannot connect: Access denied for user 'mq_t050'@'localhost' to database*" \
  "the [mq] group was read"
sql_root "GRANT SELECT, INSERT, UPDATE ON \`$T_DB\`.* TO 'mq_t050'@'localhost'"
expect_status 0 "the password from the [mq] group works" \
  env -u MQ_USER "$MQ" --defaults-file "$T_TMP/right.cnf" push --queue cred viafile
expect_status 0 "MQ_DEFAULTS_FILE names the option file" \
  env -u MQ_USER MQ_DEFAULTS_FILE="$T_TMP/right.cnf" "$MQ" pop --queue cred -o /dev/null
MYSQL_PWD=right-pw MQ_USER=mq_t050 "$MQ" push --queue cred viaenv >/dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE payload = 'viaenv'")" 1 "MYSQL_PWD with MQ_USER works"
sql "DELETE FROM mq_jobs WHERE queue = 'cred'"
sql_root "DROP USER 'mq_t050'@'localhost'"

# precedence: command line over environment over option files
run env -u MQ_SOCKET "$MQ" --defaults-file "$T_TMP/sock.cnf" pop
like "$ERR" "*from-file.sock*" "an option file's socket is used when nothing else says"
run "$MQ" --defaults-file "$T_TMP/sock.cnf" pop --queue none -o /dev/null
is "$RC" 1 "MQ_SOCKET wins over the option file"
run "$MQ" --defaults-file "$T_TMP/sock.cnf" pop --socket "$T_TMP/from-cli.sock"
like "$ERR" "*from-cli.sock*" "--socket wins over MQ_SOCKET"
run "$MQ" --socket "$T_TMP/global.sock" pop
like "$ERR" "*global.sock*" "a global option before the command is used"

# no option file named at all (--defaults-file, MQ_DEFAULTS_FILE): the
# client's own, ~/.my.cnf among them, as for a cron job or a login
mkdir -p "$T_TMP/home"
printf '[client]\nsocket=%s\nuser=root\n' "$MQ_TEST_SOCKET" >"$T_TMP/home/.my.cnf"
run env -u MQ_DEFAULTS_FILE -u MQ_SOCKET -u MQ_USER HOME="$T_TMP/home" \
  "$MQ" stats --json
is "$RC" 0 "no option file named: ~/.my.cnf is read, status 0 ($ERR)"
is "$ERR" "" "and nothing on stderr"
expect_status 0 "no option file named: mq check is OK" \
  env -u MQ_DEFAULTS_FILE -u MQ_SOCKET -u MQ_USER HOME="$T_TMP/home" \
  "$MQ" check
expect_status 0 "no option file named: completion offers queues" \
  env -u MQ_DEFAULTS_FILE -u MQ_SOCKET -u MQ_USER HOME="$T_TMP/home" \
  "$MQ" completion --queues

# an option file's !includedir holding a pipe nobody writes to: mq's
# own look for TLS settings reads regular files only (it waited on the
# pipe for ever); the client library reads the directory's my.cnf
mkdir -p "$T_TMP/incdir"
mkfifo "$T_TMP/incdir/x.cnf"
printf '[client]\nsocket=%s\nuser=root\n!includedir %s\n' "$MQ_TEST_SOCKET" \
  "$T_TMP/incdir" >"$T_TMP/incdir.cnf"
expect_status 0 "an !includedir holding a pipe: read past, status 0" \
  timeout -s KILL 15 "$MQ" --defaults-file "$T_TMP/incdir.cnf" stats --json
# completion's two seconds hold with SIGALRM blocked by its parent (it
# is unblocked with the signals mq uses): an !include of a pipe nobody
# writes to holds the client library, and the alarm ends it
printf '[client]\n!include %s\n' "$T_TMP/incdir/x.cnf" >"$T_TMP/incfifo.cnf"
block_alrm='import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
os.execvp(sys.argv[1], sys.argv[1:])'
t0=$(date +%s)
run timeout -s KILL 15 python3 -c "$block_alrm" "$MQ" \
  --defaults-file "$T_TMP/incfifo.cnf" completion --queues
t1=$(date +%s)
is "$RC:$OUT:$ERR" "0::" "completion, SIGALRM blocked, an included pipe: nothing, status 0"
check "... within its bound ($((t1 - t0)) s)" test $((t1 - t0)) -le 4

# stdout that cannot be written: 74
if [ -w /dev/full ]; then
  expect_status 74 "write failure on stdout" sh -c '"$0" init --print >/dev/full' "$MQ"
  expect_status 74 "push --lines to a full stdout: status 74, one line" \
    sh -c 'seq 1 10 | "$0" push --lines --queue full >/dev/full' "$MQ"
  sql "DELETE FROM mq_jobs WHERE queue = 'full'"
else
  ok "# SKIP no /dev/full"
fi

is "$(table_sum)" "$sum" "none of the above changed the table"

# an error line is written with one write(2): lines of processes sharing
# a log stay whole (a900bf0 wrote the server's message a byte a write:
# 83 writes, and 2 lines in 20 of parallel runs were cut into)
if command -v strace >/dev/null 2>&1 && [ -z "${MQ_SANITIZED:-}" ]; then
  strace -f -e trace=write -o "$T_TMP/w" env MQ_USER=nosuch "$MQ" limit q1 2>/dev/null
  is "$(grep -c 'write(2,' "$T_TMP/w")" 1 "a server's error: one write"
  printf 'x\ty\n' >"$T_TMP/bad.sched"
  strace -f -e trace=write -o "$T_TMP/w" "$MQ" schedule apply --dry-run "$T_TMP/bad.sched" 2>/dev/null
  is "$(grep -c 'write(2,' "$T_TMP/w")" 1 "a schedule file's error, escaped: one write"
else
  # (the sanitizers' runtime writes stderr its own way)
  ok "a server's error: one write # SKIP no strace, or sanitizers"
  ok "a schedule file's error, escaped: one write # SKIP no strace, or sanitizers"
fi
# what a command printed before the error stopped it comes first, also
# into a file (a900bf0: the error line, then "archived 0 jobs")
sql_root "DROP USER IF EXISTS 'mq_t050a'@'localhost'; CREATE USER 'mq_t050a'@'localhost';
  GRANT SELECT, UPDATE, DELETE ON \`$T_DB\`.* TO 'mq_t050a'@'localhost';
  GRANT INSERT ON \`$T_DB\`.\`mq_jobs_counts\` TO 'mq_t050a'@'localhost'"
"$MQ" push --queue arch x >/dev/null
"$MQ" ack "$("$MQ" pop --queue arch -o /dev/null)"
MQ_USER=mq_t050a "$MQ" archive --older-than 0s >"$T_TMP/arch.log" 2>&1
is "$?:$(sed -n 1p "$T_TMP/arch.log")" "77:archived 0 jobs" "archive refused the archive's INSERT: its summary, then the error line"
like "$(sed -n 2p "$T_TMP/arch.log")" "mq archive: cannot update jobs: INSERT command denied*(error 1142, SQLSTATE 42000)" "  the error line second"
sql_root "DROP USER 'mq_t050a'@'localhost'"
done_testing
