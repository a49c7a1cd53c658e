#!/bin/sh
# 4 consumer processes drain 1,000 jobs, one `mq pop` + `mq ack` per job,
# under each claim strategy: every job is acked exactly once, as the table
# and the consumers' own logs both show.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
# The sanitized run checks memory, not races: it drains fewer.
JOBS=${MQ_TEST_JOBS:-1000}
[ -n "${MQ_SANITIZED:-}" ] && JOBS=${MQ_TEST_JOBS:-150}

consumer() { # consumer CLAIM QUEUE LOG
  while :; do
    r=$("$MQ" pop --claim "$1" --queue "$2" -o "$3.payload")
    st=$?
    [ $st -eq 1 ] && break   # the queue is empty: done
    if [ $st -ne 0 ]; then
      echo "pop failed with status $st" >>"$3.err"
      break
    fi
    if "$MQ" ack "$r"; then
      printf '%s %s\n' "${r%%.*}" "$(cat "$3.payload")" >>"$3"
    else
      echo "ack failed for $r" >>"$3.err"
    fi
  done
}

for claim in skip-locked update; do
  q=c_$(printf '%s' "$claim" | tr -c 'a-z' _)
  seq 1 "$JOBS" | "$MQ" push --lines --queue "$q" >/dev/null
  for i in 1 2 3 4; do
    : >"$T_TMP/$q.$i"
    consumer "$claim" "$q" "$T_TMP/$q.$i" &
  done
  wait
  cat "$T_TMP/$q".[1-4] >"$T_TMP/$q.all"
  is "$(cat "$T_TMP/$q".*.err 2>/dev/null)" "" "$claim: no consumer saw an error"
  is "$(wc -l <"$T_TMP/$q.all" | tr -d ' ')" "$JOBS" "$claim: consumers logged $JOBS acks"
  is "$(cut -d' ' -f1 "$T_TMP/$q.all" | sort | uniq -d | wc -l | tr -d ' ')" 0 \
    "$claim: no job acked twice in the logs"
  is "$(cut -d' ' -f2 "$T_TMP/$q.all" | sort -n | md5sum)" "$(seq 1 "$JOBS" | md5sum)" \
    "$claim: every payload processed once"
  is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done'), SUM(attempts = 1), COUNT(DISTINCT lease_token) > 1) FROM mq_jobs WHERE queue = '$q'")" \
    "$JOBS,$JOBS,$JOBS,1" "$claim: table: all done, each delivered exactly once"
  busy=0
  for i in 1 2 3 4; do
    [ "$(wc -l <"$T_TMP/$q.$i")" -gt 0 ] && busy=$((busy + 1))
  done
  is "$busy" 4 "$claim: all 4 consumers did work"
done
done_testing
