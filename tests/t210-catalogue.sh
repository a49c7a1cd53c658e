#!/bin/sh
# The bad-input catalogue: each entry is refused with one line on stderr
# and its documented status, and no row of any mq table changes (checksums
# before and after). Values a user types that are valid (payloads, dedup
# keys, error texts) are stored byte for byte: nothing becomes SQL.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
"$MQ" push --queue q keep >/dev/null
a=$("$MQ" push --queue q job-a)
b=$("$MQ" push --queue q job-b)
ra=$("$MQ" pop --queue q -o /dev/null)   # leases "keep"
ra=$("$MQ" pop --queue q -o /dev/null)   # job-a
rb=$("$MQ" pop --queue q -o /dev/null)   # job-b
"$MQ" pause paused-q >/dev/null
printf '[ok]\ncron = 0 * * * *\n' >"$T_TMP/ok.conf"
"$MQ" schedule apply "$T_TMP/ok.conf" >/dev/null    # a schedule to keep

db_sum() { # loud when a query fails: an error never equals an error
  table_sum mq_jobs mq_jobs_archive mq_jobs_queues mq_jobs_counts \
    mq_jobs_schedules mq_jobs_fired
}
BEFORE=$(db_sum)
START=$BEFORE
N=0
refuse() { # refuse STATUS WHAT CMD...: refused, one line, nothing changed
  want=$1 what=$2
  shift 2
  N=$((N + 1))
  expect_status "$want" "$what: status $want, one line" "$@"
  now=$(db_sum)
  if [ "$now" = "$BEFORE" ]; then
    ok "$what: no row changed"
  else
    not_ok "$what: no row changed" "checksums before: $BEFORE, after: $now"
    BEFORE=$now
  fi
}

# mq check speaks the plugin guidelines: a usage error is UNKNOWN (3),
# one status line on stdout saying what the stderr line says, nothing
# else on it, and no row changed
refuse_check() { # refuse_check WHAT ARGS...
  cwhat=$1
  shift
  refuse 3 "$cwhat (check)" "$MQ" check "$@"
  # a value echoed back is escaped (shown as \xHH) the same on both
  # lines; a bar, which would start the performance data, as \x7c, and
  # on stdout a byte above ASCII (UTF-8 text stderr shows) as \xHH
  if [ "$(printf '%s\n' "$OUT" | wc -l)" -ne 1 ] ||
    [ -n "$(printf '%s' "$OUT" | LC_ALL=C tr -d '\040-\176')" ]; then
    not_ok "$cwhat: one printable UNKNOWN line on stdout" "stdout: $OUT"
  else
    is "$OUT" "MQ UNKNOWN - usage error: $(printf '%s' "${ERR#mq check: }" |
      LC_ALL=C perl -pe 's/([|\x80-\xff])/sprintf("\\x%02x", ord $1)/ge')" \
      "$cwhat: the UNKNOWN line on stdout says what stderr says"
  fi
}

# names: quotes, backticks, semicolons, spaces, non-ASCII, empty, too long
long64=$(printf '%065d' 0 | tr 0 q)
for name in "a'b" 'a`b' 'a;b' 'a b' "$(printf 'caf\303\251')" '' "$long64" \
  "mq_jobs\`; DROP TABLE mq_jobs; --" "x' OR '1'='1" "$(printf 'a\nb')"; do
  shown=$(printf '%s' "$name" | tr '\n' '?' | cut -c1-20)
  refuse 64 "table '$shown' (push)" "$MQ" push --table "$name" x
  refuse 64 "table '$shown' (MQ_TABLE, pop)" env MQ_TABLE="${name:-x y}" "$MQ" pop
  refuse 64 "queue '$shown' (push)" "$MQ" push --queue "$name" x
  refuse 64 "queue '$shown' (pop)" "$MQ" pop --queue "$name"
  refuse 64 "queue '$shown' (stats)" "$MQ" stats --queue "$name"
  refuse 64 "queue '$shown' (pause)" "$MQ" pause "$name"
  refuse 64 "queue '$shown' (purge)" "$MQ" purge --queue "$name" --yes
  refuse 64 "queue '$shown' (work)" "$MQ" work --queue "$name" -- true
  refuse 64 "queue list 'a,$shown' (pop)" "$MQ" pop --queue "a,$name"
  refuse 64 "queue list '$shown,a' (work)" "$MQ" work --queue "$name,a" -- true
  refuse 64 "table '$shown' (cancel)" "$MQ" cancel --table "$name" 1
  refuse 64 "job id '$shown' (cancel)" "$MQ" cancel "$name"
  refuse 64 "job id '$shown' (why)" "$MQ" why "$name"
  refuse 64 "job id '$shown' (show)" "$MQ" show 1 "$name"
  refuse 64 "table '$shown' (show)" "$MQ" show --table "$name" 1
  refuse 64 "queue '$shown' (ls)" "$MQ" ls --queue "$name"
  refuse 64 "state '$shown' (ls)" "$MQ" ls --state "ready,$name"
  refuse 64 "id '$shown' (ls --after)" "$MQ" ls --after "$name"
  refuse 64 "schedule '$shown' (ls)" "$MQ" ls --schedule "$name"
  refuse 64 "queue '$shown' (retry)" "$MQ" retry --queue "$name" --all
  refuse 64 "queue '$shown' (retry --to-queue)" "$MQ" retry --to-queue "$name" "$a"
  refuse 64 "job id '$shown' (retry)" "$MQ" retry "$name"
  refuse_check "queue '$shown'" --queue "$name"
  refuse_check "table '$shown'" --table "$name"
  refuse 64 "queue '$shown' (top)" "$MQ" top --once --queue "$name"
  refuse 64 "table '$shown' (top)" "$MQ" top --once --table "$name"
done
refuse_check "a queue list" --queue a,b
refuse 64 "a queue list (top)" "$MQ" top --once --queue a,b
refuse 64 "table of 51 characters (its _queues_limits would not fit)" \
  "$MQ" push --table "$(printf '%051d' 0 | tr 0 t)" x

# durations: negative, overflowing, garbage
# (not $d: expect_status sets d to its description)
for dur in -1s -5 99999999999999999999s 36601d 1e9 soon 1h30 '' '5 s' 0x10; do
  refuse 64 "duration '$dur' (push --delay)" "$MQ" push --delay "$dur" x
  refuse 64 "duration '$dur' (pop --lease)" "$MQ" pop --lease "$dur"
  refuse 64 "duration '$dur' (pop --wait)" "$MQ" pop --wait "$dur"
  refuse 64 "duration '$dur' (extend --lease)" "$MQ" extend --lease "$dur" "$rb"
  refuse 64 "duration '$dur' (fail --retry-in)" "$MQ" fail --retry-in "$dur" "$rb"
  refuse 64 "duration '$dur' (archive --older-than)" "$MQ" archive --older-than "$dur"
  refuse 64 "duration '$dur' (work --timeout)" "$MQ" work --timeout "$dur" -- true
  refuse 64 "duration '$dur' (push --every)" "$MQ" push --every "$dur" x
  refuse 64 "duration '$dur' (retry --since)" "$MQ" retry --queue q --since "$dur"
  refuse_check "duration '$dur' (--max-age)" --max-age "$dur"
  refuse 64 "duration '$dur' (top --interval)" "$MQ" top --once --interval "$dur"
done
# a duration with a line break and ESC in it: echoed back escaped
dur=$(printf '1s\nMQ OK - \033[2J')
refuse_check "duration with a line break and ESC (--max-age)" --max-age "$dur"
refuse_check "duration with a line break and ESC (--warn-age)" --queue q --warn-age "$dur"
# (on 72dbc31 the UNKNOWN line doubled the backslashes of the escapes)
refuse_check "duration with a bar and a backslash (--max-age)" --max-age '1s|x\y'
is "$OUT" "MQ UNKNOWN - usage error: invalid duration for --max-age: '1s\\x7cx\\\\y' (examples: 30s, 5m, 1h30m, 500ms, 2d)" \
  "check: the bar as x7c escaped, the backslash doubled as on stderr"
refuse 64 "duration with a line break and ESC (top --interval)" \
  "$MQ" top --once --interval "$dur"
is "$(printf '%s' "$ERR" | LC_ALL=C tr -d '\040-\176' | wc -c | tr -d ' ')" 0 \
  "top: the refused duration comes back escaped (printable stderr)"
# mq top refreshes from 100ms to 1d
for dur in 0s 99ms 1d1ms 2d; do
  refuse 64 "interval '$dur' out of range (top)" "$MQ" top --once --interval "$dur"
done
refuse 64 "an operand (top)" "$MQ" top --once q
refuse 64 "unknown option (top)" "$MQ" top --once --bogus
# thresholds: integers from 0 to 999999999999999 (int_arg, shared by every
# command: digits only, not the leading blank or plus sign strtoll takes)
for v in -1 abc 1000000000000000 99999999999999999999 1.5 '' 0x10 '5 ' ' 5' +5 1e3 \
  "1' OR '1'='1" "$(printf '1\n\033[2J')"; do
  shown=$(printf '%s' "$v" | tr '\n\033' '??')
  refuse_check "threshold '$shown' (--max-dead)" --max-dead "$v"
done
for o in --warn-dead --max-stale --warn-stale --max-ready --warn-ready; do
  for v in 1000000000000000 "$(printf '1\n\033[2J')"; do
    refuse_check "threshold '$(printf '%s' "$v" | tr '\n\033' '??')' ($o)" "$o" "$v"
  done
done
refuse_check "an operand" q
refuse_check "unknown option" --bogus
refuse_check "a threshold without its value" --max-dead
for t in '2026-13-01 00:00' "2026-01-01 00:00'; DROP TABLE mq_jobs; --" now @-1; do
  refuse 64 "time '$(printf '%s' "$t" | cut -c1-20)' (push --at)" "$MQ" push --at "$t" x
done
for v in -1 0 abc 99999999999999999999 1.5 ' 5' +5 '	5'; do
  refuse 64 "count '$v' (pop --count)" "$MQ" pop --count "$v"
done
refuse 64 "priority 40000" "$MQ" push --priority 40000 x
# mq retry: a selection it can trust, a rate it can keep
for v in 0 -1 abc 10/x 1/s/s 1e3 '' 2000000/s 5/0s '5 /h' 5/36601d; do
  refuse 64 "rate '$v' (retry --rate)" "$MQ" retry --queue q --all --rate "$v"
done
refuse 64 "retry --queue without a filter or --all" "$MQ" retry --queue q
refuse 64 "retry of nothing (no id, no --queue)" "$MQ" retry
refuse 64 "retry of ids and a filter" "$MQ" retry --queue q --error x "$a"
refuse 64 "retry --all without --queue" "$MQ" retry --all
refuse 64 "retry --batch 0" "$MQ" retry --queue q --all --batch 0
refuse 64 "a receipt that looks like an option" "$MQ" ack "-1.$(printf '%032d' 0)"

# receipts: malformed, forged, another job's
for r in x 1. "$a." "$a.ZZZZ" "$a.$(printf '%032d' 0)X" "1' OR '1'='1" "-1.$(printf '%032d' 0)"; do
  # after --: a receipt that starts with '-' is a receipt, not an option
  refuse 65 "malformed receipt '$(printf '%s' "$r" | cut -c1-20)' (ack)" "$MQ" ack -- "$r"
  refuse 65 "malformed receipt '$(printf '%s' "$r" | cut -c1-20)' (fail)" "$MQ" fail -- "$r"
  refuse 65 "malformed receipt '$(printf '%s' "$r" | cut -c1-20)' (extend)" "$MQ" extend --lease 1m -- "$r"
done
forged="$a.0123456789abcdef0123456789abcdef"
other="$b.${ra#*.}"      # job b's id with job a's token
for r in "$forged" "$other" "999999.${ra#*.}"; do
  refuse 2 "forged receipt $r (ack)" "$MQ" ack "$r"
  refuse 2 "forged receipt $r (fail)" "$MQ" fail "$r"
  refuse 2 "forged receipt $r (extend)" "$MQ" extend --lease 1m "$r"
done

# payload over max_allowed_packet
head -c $((16 * 1024 * 1024 + 1)) /dev/zero >"$T_TMP/huge"
refuse 65 "payload over max_allowed_packet" sh -c '"$0" push <"$1"' "$MQ" "$T_TMP/huge"
refuse 65 "a line over max_allowed_packet (push --lines)" sh -c '"$0" push --lines <"$1"' "$MQ" "$T_TMP/huge"

# surroundings: option file, password, server, tables
refuse 78 "option file that does not exist" "$MQ" --defaults-file "$T_TMP/none.cnf" pop
if [ "$(id -u)" -ne 0 ]; then
  printf '[client]\n' >"$T_TMP/locked.cnf"
  chmod 000 "$T_TMP/locked.cnf"
  refuse 78 "option file that cannot be read" "$MQ" --defaults-file "$T_TMP/locked.cnf" pop
else
  ok "# SKIP an unreadable option file: root reads every file"
  ok "# SKIP (its no-change check)"
fi
sql_root "DROP USER IF EXISTS 'mq_t210'@'localhost'; CREATE USER 'mq_t210'@'localhost' IDENTIFIED BY 'right'"
printf '[mq]\nuser=mq_t210\npassword=wrong\n' >"$T_TMP/wrong.cnf"
refuse 77 "wrong password" env -u MQ_USER "$MQ" --defaults-file "$T_TMP/wrong.cnf" push x
sql_root "DROP USER 'mq_t210'@'localhost'"
refuse 69 "server down" "$MQ" push --socket "$T_TMP/nothing.sock" x
refuse 78 "table missing" "$MQ" push --table missing x
sql "CREATE TABLE other_shape (id INT PRIMARY KEY, payload BLOB)"
refuse 78 "a table of another shape" "$MQ" push --table other_shape x
sql "CREATE TABLE future LIKE mq_jobs; ALTER TABLE future COMMENT 'mq schema 99'"
refuse 78 "schema newer than this mq" "$MQ" pop --table future
refuse 64 "unknown option" "$MQ" push --drop-table x
refuse 64 "unknown command" "$MQ" "drop"
# mq schedule (mq-schedule(1)): a bad file changes nothing (all or
# nothing, its line named); bad operands and names are usage errors
printf '[ok]\ncron = 5 * * * *\n[new]\ncron = 0 24 * * *\n' >"$T_TMP/bad.conf"
refuse 65 "a schedule file with an error (its 2nd schedule)" "$MQ" schedule apply --prune "$T_TMP/bad.conf"
printf '[x]\ncron = * * * * *\ntz = No/Such_Zone\n' >"$T_TMP/bad.conf"
refuse 65 "a schedule file with an unknown zone" "$MQ" schedule apply "$T_TMP/bad.conf"
refuse 66 "a schedule file that is not there" "$MQ" schedule apply "$T_TMP/nothere.conf"
refuse 64 "mq schedule of no subcommand" "$MQ" schedule
refuse 64 "mq schedule run of an invalid name" "$MQ" schedule run "'; DROP TABLE mq_jobs; --"
refuse 64 "mq schedule rm of two names" "$MQ" schedule rm a b
# each check above compares with the one before it; over the whole run too
is "$(db_sum)" "$START" "catalogue: after $N refusals the tables are as before the first"

# what is valid is stored verbatim: nothing a user types becomes SQL
evil="'); DROP TABLE mq_jobs; -- \`x\` \"y\" \\ $(printf '\001\377')"
id=$("$MQ" push --queue q --dedup "$evil" "$evil")
is "$(sql "SELECT HEX(payload) = HEX(dedup_key) AND payload = '$(printf '%s' "$evil" | sed "s/'/''/g; s/\\\\/\\\\\\\\/g")' FROM mq_jobs WHERE id = $id")" 1 \
  "a payload and dedup key full of SQL are stored byte for byte"
is "$("$MQ" push --queue q --dedup "$evil" again)" "$id" "and the key matches itself, as a value"
r=$("$MQ" pop --queue q --json | sed 's/.*"receipt":"\([^"]*\)".*/\1/')
"$MQ" fail --error "$evil" "$r" >/dev/null
is "$(sql "SELECT HEX(last_error) = HEX(dedup_key) FROM mq_jobs WHERE id = $id")" 1 \
  "so is an error text"
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'mq_jobs'")" 1 \
  "and mq_jobs is still there"
printf 'ok\377' | "$MQ" push --queue utf >/dev/null
like "$("$MQ" pop --queue utf --json)" '*"payload_base64":"b2v/"*' "invalid UTF-8 comes base64-encoded in --json"
done_testing
