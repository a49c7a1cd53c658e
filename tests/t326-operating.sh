#!/bin/sh
# The README's "An operator's session", run as written: a queue backs
# up with dead jobs; top, ls and show find them and the cause; retry puts
# them back (a dry run first, then at a rate); check reports the queue.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T_TMP/bin" "$T_TMP/work"
ln -s "$MQ" "$T_TMP/bin/mq"
PATH=$T_TMP/bin:$PATH
cd "$T_TMP/work" || exit 1
"$MQ" init >/dev/null

run_example operating
is "$RC" 0 "the session runs to its end"
# the night's work: 10 of the 40 died (user10..user19), 30 are done
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done'), SUM(state = 'ready'), SUM(state = 'dead')) FROM mq_jobs WHERE queue = 'mail'")" \
  "40,30,10,0" "30 done, the 10 dead ones ready again"
is "$(sql "SELECT GROUP_CONCAT(DISTINCT payload ORDER BY payload) FROM mq_jobs WHERE queue = 'mail' AND state = 'ready'")" \
  "to=user10@example.com,to=user11@example.com,to=user12@example.com,to=user13@example.com,to=user14@example.com,to=user15@example.com,to=user16@example.com,to=user17@example.com,to=user18@example.com,to=user19@example.com" \
  "exactly the refused recipients"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(event = 'failed' AND error LIKE '%smtp 550 mailbox unavailable%'), SUM(event = 'retried')) FROM mq_jobs_history")" \
  "20,10,10" "their history: the failed attempt with its error, then the retry"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'mail' AND state = 'ready' AND attempts = 0")" 10 "attempts reset"
is "$(counters mail)" "40 30 0 10 0 10 0 0" "counters: 40 pushed, 30 done, 10 dead, 10 retried"
is "$(counted_jobs)" "$(finished_jobs)" "the counts equal the table"

# what each step printed
like "$OUT" "*mail *" "top names the queue"
like "$OUT" "*exit status 1; smtp 550 mailbox unavailable*" "ls shows the last error"
like "$OUT" "*retried 10 jobs*" "retry says how many it put back"
like "$OUT" "*MQ OK - *" "check: OK once the jobs are back"
is "$(printf '%s\n' "$OUT" | grep -c 'mq check says')" 0 "(so the session's || branch did not run)"
done_testing
