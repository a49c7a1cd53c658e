#!/bin/sh
# 16 consumer processes, 8 `mq work` and 8 shell loops of `mq pop` +
# `mq ack`, drain 5,000 jobs, under each claim strategy: every job is done
# exactly once (the table and each consumer's own log agree), and no
# deadlock (1213) or lock wait timeout (1205) reaches a consumer: the
# library retries them.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
# 5,000 jobs per strategy: each of the 16 consumers claims about 300 of
# them, racing the 15 others (MQ_TEST_BIG_JOBS for more). The sanitized
# run checks memory, not races: it drains fewer.
JOBS=${MQ_TEST_BIG_JOBS:-5000}
[ -n "${MQ_SANITIZED:-}" ] && JOBS=${MQ_TEST_BIG_JOBS:-1000}

loop() { # loop QUEUE LOG: pop + ack until empty; logs each acked payload
  while :; do
    r=$("$MQ" pop --queue "$1" -o "$2.payload" 2>>"$2.err")
    st=$?
    [ $st -eq 1 ] && return 0
    if [ $st -ne 0 ]; then
      echo "pop exit $st" >>"$2.err"
      return 1
    fi
    if "$MQ" ack "$r" 2>>"$2.err"; then
      cat "$2.payload" >>"$2"
    else
      echo "ack exit $?" >>"$2.err"
    fi
  done
}

for strategy in skip-locked update; do
  q=big_$(printf '%s' "$strategy" | tr -c 'a-z' _)
  nsl=
  [ $strategy = update ] && nsl=1
  export MQ_NO_SKIP_LOCKED=$nsl
  # payloads "N\n", so that each consumer's log is one line per job
  seq 1 "$JOBS" | awk '{ printf "%d\n%c", $1, 0 }' |
    "$MQ" push -0 --queue "$q" >/dev/null
  pids=
  for i in 1 2 3 4 5 6 7 8; do
    : >"$T_TMP/$q.w$i"
    "$MQ" work --queue "$q" --exit-when-empty -- tee -a "$T_TMP/$q.w$i" \
      >/dev/null 2>"$T_TMP/$q.w$i.err" &
    pids="$pids $!"
    : >"$T_TMP/$q.l$i"
    loop "$q" "$T_TMP/$q.l$i" &
    pids="$pids $!"
  done
  failed=0
  for p in $pids; do wait "$p" || failed=$((failed + 1)); done
  unset MQ_NO_SKIP_LOCKED
  is "$failed" 0 "$strategy: all 16 consumers ended with status 0"
  cat "$T_TMP/$q".w?.err "$T_TMP/$q".l?.err 2>/dev/null >"$T_TMP/$q.errors"
  is "$(sort "$T_TMP/$q.errors" | uniq -c | sort -rn | head -n 8)" "" \
    "$strategy: no consumer wrote an error"
  is "$(grep -ci 'deadlock\|lock wait\|1213\|1205' "$T_TMP/$q.errors")" 0 \
    "$strategy: no deadlock or lock wait timeout reached a consumer"
  cat "$T_TMP/$q".w? "$T_TMP/$q".l? >"$T_TMP/$q.all"
  is "$(wc -l <"$T_TMP/$q.all" | tr -d ' ')" "$JOBS" "$strategy: the consumers' logs hold $JOBS jobs"
  is "$(sort -n "$T_TMP/$q.all" | uniq -d | wc -l | tr -d ' ')" 0 "$strategy: no job ran twice"
  is "$(sort -n "$T_TMP/$q.all" | md5sum)" "$(seq 1 "$JOBS" | md5sum)" "$strategy: none lost"
  is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done'), SUM(attempts = 1)) FROM mq_jobs WHERE queue = '$q'")" \
    "$JOBS,$JOBS,$JOBS" "$strategy: the table: all done, each delivered once"
  is "$(counted_jobs | tr ',' '\n' | grep "^$q ")" "$q done $JOBS" "$strategy: counted once each"
  is "$(counters "$q")" "$JOBS $JOBS 0 0 0 0 0 0" "$strategy: the counters: $JOBS pushed, $JOBS done, nothing else"
  w=$(cat "$T_TMP/$q".w? | wc -l | tr -d ' ')
  l=$(cat "$T_TMP/$q".l? | wc -l | tr -d ' ')
  check "$strategy: both kinds of consumer worked (mq work $w, loops $l)" test "$w" -gt 0 -a "$l" -gt 0
done
done_testing
