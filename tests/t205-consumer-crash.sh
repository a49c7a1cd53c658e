#!/bin/sh
# Consumer crashes: 20 `mq work` consumers, 2 of them (10%, drawn at
# random) killed -9 mid-job. Once their leases expire and
# `mq requeue-stale` runs, every job is done, none acked twice, the
# attempts show the redeliveries, and a killed consumer's late ack is
# refused.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
JOBS=400
cat >"$T_TMP/job.sh" <<'SH'
#!/bin/sh
# one job: note what runs where, work a little, log it as done
read -r n
echo "$MQ_ID $MQ_RECEIPT" >"$LOGDIR/current.$WORKER"
sleep 0.1
echo "$n" >>"$LOGDIR/done.$WORKER"
SH
chmod +x "$T_TMP/job.sh"
export LOGDIR="$T_TMP"

seq 1 "$JOBS" | awk '{ printf "%d\n%c", $1, 0 }' | "$MQ" push -0 --queue c >/dev/null
pids=
for i in $(seq 1 20); do
  WORKER=$i "$MQ" work --queue c --lease 3s --exit-when-empty -- "$T_TMP/job.sh" \
    >/dev/null 2>"$T_TMP/w$i.err" &
  pids="$pids $!"
  eval "pid_$i=\$!"
done
# two consumers, drawn at random among those with a job going, killed
# mid-job (a consumer may get no job at all: the first claims prefetch)
i=0
while [ "$(find "$T_TMP" -name 'current.*' -size +0 | wc -l)" -lt 2 ] &&
  [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
victims=$(find "$T_TMP" -name 'current.*' -size +0 | sed 's/.*current\.//' |
  shuf -n 2 | tr '\n' ' ')
for v in $victims; do
  eval "kill -9 \$pid_$v"
  # what it was doing when it died
  cp "$T_TMP/current.$v" "$T_TMP/killed.$v"
done
ok "killed consumers $victims mid-job"
for p in $pids; do wait "$p" 2>/dev/null; done

stuck=$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND state = 'leased'")
check "the killed consumers' jobs are left leased ($stuck)" test "$stuck" -ge 2
# their leases expire; the reaper (cron's job) puts them back
sleep 3.5
run "$MQ" requeue-stale
like "$OUT" "requeued [1-9]*
dead 0" "requeue-stale puts them back"
run "$MQ" work --queue c --exit-when-empty -- "$T_TMP/job.sh"
is "$RC" 0 "a new consumer finishes them"

is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'c'")" \
  "$JOBS,$JOBS" "every job is done"
is "$(counted_jobs)" "c done $JOBS," "and counted once"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND attempts = 2")" "$stuck" \
  "attempts show one redelivery for each job the killed consumers held"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'c' AND attempts NOT IN (1, 2)")" 0 \
  "no other redelivery"
cat "$T_TMP"/done.* >"$T_TMP/done.all"
# a job whose process finished after its worker died ran twice (at least
# once delivery), but it was acked once: done once in the table
is "$(sort -n "$T_TMP/done.all" | uniq | wc -l | tr -d ' ')" "$JOBS" "every job ran"
for v in $victims; do
  read -r id receipt <"$T_TMP/killed.$v"
  sum=$(table_sum)
  expect_status 2 "consumer $v's late ack of job $id is refused" "$MQ" ack "$receipt"
  is "$(table_sum)" "$sum" "and changes nothing"
done
done_testing
