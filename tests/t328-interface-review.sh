#!/bin/sh
# t328: the interface's rules kept by every command (a review's findings):
# names every derived identifier can carry, repeated output forms, exit
# statuses, write failures, closed pipes, --rate, quoted values.
. "$(dirname "$0")/lib.sh"

# ---- table names: the longest allowed works, one more is refused before
# anything is made (at 51-56 mq init made T and T_archive, then failed on
# T_queues_limits with 1059, and every command asked for mq init)
long=$(printf '%050d' 0 | tr 0 t)
"$MQ" init >/dev/null 2>&1
expect_status 0 "init --table of 50 characters" "$MQ" init --table "$long"
expect_status 0 "push into it" "$MQ" push --table "$long" job50
run "$MQ" pop --table "$long"
is "$RC:$OUT" "0:job50" "pop from it"
run "$MQ" stats --table "$long" --json
like "$RC:$OUT" '0:*"queue":"default"*' "stats of it"
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '${long}%'")" \
  "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'mq\_jobs%'")" \
  "as many tables as a default init's"
for n in 51 54 56; do
  name=$(printf "%0${n}d" 0 | tr 0 u)
  expect_status 64 "init --table of $n characters: 64" "$MQ" init --table "$name"
  like "$ERR" "*invalid table name*1 to 50*" "its message says 1 to 50 ($n)"
  expect_status 64 "MQ_TABLE of $n characters: 64" env MQ_TABLE="$name" "$MQ" init
  expect_status 64 "push --table of $n characters: 64" "$MQ" push --table "$name" x
done
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'uuu%'")" \
  0 "nothing made for a name too long"

done_testing
