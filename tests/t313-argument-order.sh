#!/bin/sh
# GNU argument order: options may follow operands, "--" ends the options,
# mq work's command after "--" is left as it is; an option error is one
# line quoting the option as typed, status 64.
. "$(dirname "$0")/lib.sh"

"$MQ" init >/dev/null

# options after operands
run "$MQ" push --queue later payload --delay 1m
is "$RC" 0 "push --queue q PAYLOAD --delay 1m: accepted"
is "$(sql "SELECT CONCAT(queue, ' ', payload, ' ', available_at > UTC_TIMESTAMP(6)) FROM mq_jobs WHERE id = '$OUT'")" \
  "later payload 1" "the payload pushed to its queue, with the delay"
run "$MQ" push -- -x
is "$RC:$(sql "SELECT payload FROM mq_jobs WHERE id = '$OUT'")" "0:-x" \
  "push -- -x: the payload -x"
run "$MQ" push --queue dd -- --delay
is "$RC:$(sql "SELECT payload FROM mq_jobs WHERE id = '$OUT'")" "0:--delay" \
  "an option's name after -- is a payload"
run "$MQ" push --priority -5 neg
is "$RC:$(sql "SELECT priority FROM mq_jobs WHERE id = '$OUT'")" "0:-5" \
  "a value may begin with -"
run "$MQ" push x --queue=eq
is "$RC:$(sql "SELECT queue FROM mq_jobs WHERE id = '$OUT'")" "0:eq" \
  "--queue=Q after the payload"

"$MQ" push --queue r one >/dev/null
"$MQ" push --queue r two >/dev/null
"$MQ" push --queue r three >/dev/null
eval "$("$MQ" pop --queue r --shell)"
run "$MQ" fail "$MQ_RECEIPT" --no-retry
is "$RC" 0 "fail RECEIPT --no-retry: accepted"
is "$(sql "SELECT state FROM mq_jobs WHERE id = $MQ_ID")" "dead" \
  "and --no-retry applied"
eval "$("$MQ" pop --count 2 --queue r --shell)"
run "$MQ" ack "$MQ_RECEIPT_1" "$MQ_RECEIPT_2" --table mq_jobs
is "$RC" 0 "ack R1 R2 --table t: accepted"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'r' AND state = 'done'")" \
  2 "both acked"

# global options before the command name; the command name ends them
"$MQ" --table t2 init >/dev/null
run "$MQ" --table t2 push --queue g2 x
is "$RC:$(sql "SELECT COUNT(*) FROM t2 WHERE queue = 'g2'")" "0:1" \
  "mq --table T push: the table named before the command"

# mq work: its command after -- (or its first operand) keeps its options
"$MQ" push --queue w hello >/dev/null
run "$MQ" work --queue w --exit-when-empty -- sh -c \
  'cat >>"$0"; echo " $MQ_QUEUE" >>"$0"' "$T_TMP/ran"
is "$RC:$(cat "$T_TMP/ran" 2>/dev/null)" "0:hello w" \
  "work -- sh -c SCRIPT ARG: the command's options left alone"
"$MQ" push --queue w again >/dev/null
run "$MQ" work --queue w --exit-when-empty sh -c 'cat >"$0"' "$T_TMP/ran2"
is "$RC:$(cat "$T_TMP/ran2" 2>/dev/null)" "0:again" \
  "work CMD -c ...: the first operand ends work's options"

# abbreviations: a unique beginning, as getopt_long took them
run "$MQ" stats --que r --js
like "$RC:$OUT" '0:{"table":"mq_jobs","queues":[{"queue":"r"*' \
  "stats --que r --js: unique abbreviations accepted"

# option errors: one line, the option as typed, status 64
err_is() { # err_is WANT DESCRIPTION COMMAND...
  e_want=$1 e_d=$2
  shift 2
  expect_status 64 "$e_d: status 64, one line" "$@"
  is "$ERR" "$e_want" "$e_d: the message"
}
err_is "mq purge: option '--yes' takes no value (see 'mq purge -h')" \
  "purge --yes=1" "$MQ" purge --queue r --yes=1
err_is "mq pop: unknown option '--bogus' (see 'mq pop -h')" \
  "pop --bogus" "$MQ" pop --bogus
err_is "mq pop: unknown option '-x' (see 'mq pop -h')" \
  "pop -x" "$MQ" pop -x
err_is "mq pop: option '--lease' needs a value (see 'mq pop -h')" \
  "pop --lease" "$MQ" pop --lease
err_is "mq pop: option '-o' needs a value (see 'mq pop -h')" \
  "pop -o" "$MQ" pop -o
err_is "mq pop: ambiguous option '--s' (see 'mq pop -h')" \
  "pop --s" "$MQ" pop --s
err_is "mq pop: unknown option '--bogus=1' (see 'mq pop -h')" \
  "pop --bogus=1" "$MQ" pop --bogus=1
err_is "mq: unknown option '--bogus' (see 'mq -h')" \
  "mq --bogus pop" "$MQ" --bogus pop
err_is "mq fail: unknown option '--no-retyr' (see 'mq fail -h')" \
  "an option after the operand, misspelt" "$MQ" fail 1.x --no-retyr
err_is "mq pop: unknown option '--a\\x1b[31mb' (see 'mq pop -h')" \
  "an option with a control character: escaped" \
  "$MQ" pop "--a$(printf '\033')[31mb"
err_is "mq fail: one RECEIPT expected" "two operands around an option" \
  "$MQ" fail 1.x --no-retry 2.y
# refused before anything is pushed or claimed (a job waits to be claimed)
"$MQ" push waiting >/dev/null
sum=$(table_sum)
err_is "mq push: --lines and -0 exclude each other" "--lines with -0" \
  sh -c 'printf "a\n" | "$0" push --lines -0' "$MQ"
err_is "mq pop: -o and --receipt-file need a file name" "pop -o ''" \
  "$MQ" pop -o ''
err_is "mq pop: -o and --receipt-file need a file name" \
  "pop --receipt-file ''" "$MQ" pop --receipt-file ''
err_is "mq pop: -o and --receipt-file name the same file" \
  "pop -o F --receipt-file F" "$MQ" pop -o "$T_TMP/f" --receipt-file "$T_TMP/f"
# the same file by another name: the receipt would overwrite the payload
# of a job handed over (before: status 0, the payload lost)
err_is "mq pop: -o and --receipt-file name the same file" \
  "pop -o F --receipt-file DIR/../F (F not there yet)" \
  "$MQ" pop -o "$T_TMP/g" --receipt-file "$T_TMP/../$(basename "$T_TMP")/g"
: >"$T_TMP/h"
ln -s "$T_TMP/h" "$T_TMP/h.link"
err_is "mq pop: -o and --receipt-file name the same file" \
  "pop -o F --receipt-file LINK-TO-F" "$MQ" pop -o "$T_TMP/h" --receipt-file "$T_TMP/h.link"
# the file standard output goes to, named: the receipt over the payload
# (before: status 0, the payload lost, the job leased)
err_is "mq pop: --receipt-file names the file standard output goes to" \
  "pop --receipt-file F > F" sh -c '"$0" pop --receipt-file "$1" >"$1"' "$MQ" "$T_TMP/rf"
err_is "mq pop: -o names the file standard output goes to" \
  "pop -o /dev/stdout > F" sh -c '"$0" pop -o /dev/stdout >"$1"' "$MQ" "$T_TMP/of"
is "$(table_sum)" "$sum" "none of them pushed or claimed anything"
done_testing
