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
# mid-job (a consumer may get no job at all: the first claims prefetch).
# Each is stopped first, so that what it holds stays put while we look:
# the job its command started must still be leased to it (its pid in
# leased_by) under the receipt it was given; else it was between jobs,
# and it goes on while another is drawn.
leased_to() { # leased_to ID RECEIPT PID: 1 if the job is leased so, else 0
  sql "SELECT COUNT(*) FROM mq_jobs WHERE id = $1 AND state = 'leased'
    AND lease_token = '${2#*.}' AND leased_by LIKE '%:$3'"
}
i=0
while [ "$(find "$T_TMP" -name 'current.*' -size +0 | wc -l)" -lt 2 ] &&
  [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
victims=
for v in $(find "$T_TMP" -name 'current.*' -size +0 | sed 's/.*current\.//' | shuf); do
  eval "pid=\$pid_$v"
  kill -STOP "$pid"
  sleep 0.2   # a job it started just before the stop writes its line
  read -r id receipt <"$T_TMP/current.$v"
  if [ "$(leased_to "$id" "$receipt" "$pid")" = 1 ]; then
    kill -9 "$pid"
    # what it was doing when it died
    cp "$T_TMP/current.$v" "$T_TMP/killed.$v"
    victims="$victims$v "
  else
    kill -CONT "$pid"
  fi
  [ "$(echo $victims | wc -w)" -lt 2 ] || break
done
is "$(echo $victims | wc -w)" 2 "two consumers (${victims% }) killed mid-job"
for v in $victims; do
  eval "pid=\$pid_$v"
  wait "$pid"
  st=$?
  read -r id receipt <"$T_TMP/killed.$v"
  is "$st:$(leased_to "$id" "$receipt" "$pid")" "137:1" \
    "consumer $v died of SIGKILL holding the lease of job $id, its command's"
done
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
is "$(counters c | cut -d' ' -f1-5)" "$(tallied c)" "the counters agree with the table and the history (an 'expired' row per job taken back)"
is "$(counters c | cut -d' ' -f1,2,5)" "$JOBS $JOBS $stuck" "$JOBS pushed and done, $stuck requeued"
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
