# galera.sh: sourced by bench.sh (full size, when galera-4 is
# installed): mq on a 3-node Galera cluster on this machine
# (tests/galera.sh): consumers spread over the nodes against one node
# (galera-spread.sh), the fan-in (galera-fanin.sh), the wakeup across
# nodes.
. "$top/tests/bench/galera-spread.sh"

# ---- galera fan-in (issue 32): its own file, also run alone
. "$top/tests/bench/galera-fanin.sh"

# ---- galera wakeup: push on node 1 -> claim by a waiting pop --wait on
# node 2 or 3 (through the waiters table) and on node 1 (KILL QUERY), on
# a 3-node cluster of tests/galera.sh, when galera-4 is installed. A
# consumer per node, each on its queue (pop --wait in a loop); pushes
# 0.6 s apart, in turn, so each waits 1.8 s between its jobs: a push
# comes early in its first one-second park (after 0.1 + 0.2 + 0.4 + 0.8
# s), where only a wakeup finds the job within 0.7 s. Push commit -> claim from the job's times, as
# above (one clock: the nodes share the machine).
g0=$(now_ms)
gpids=
for n in 1 2 3; do
  (
    while [ ! -e "$T_TMP/gstop" ]; do
      MQ_SOCKET=$G_DIR/n$n/sock "$MQ" pop --queue gw$n --wait 2s \
        --lease 60s -o /dev/null >/dev/null 2>>"$T_TMP/gwork.err"
    done
  ) &
  gpids="$gpids $!"
done
sleep 2
i=0
while [ $i -lt "$GROUNDS" ]; do
  for n in 2 3 1; do
    gmq 1 push --queue gw$n "job $i" >/dev/null
    sleep 0.6
  done
  i=$((i + 1))
done
i=0
while [ "$(gsql 1 "SELECT COUNT(*) FROM mq_jobs WHERE state = 'ready'")" != 0 ] &&
    [ $i -lt 500 ]; do
  sleep 0.02; i=$((i + 1))
done
touch "$T_TMP/gstop"
# shellcheck disable=SC2086
wait $gpids
gmed() { # gmed WHERE: median push -> claim in ms
  gsql 1 "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, leased_until - INTERVAL 60 SECOND)
    FROM mq_jobs WHERE $1 ORDER BY 1" |
    awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'
}
gcross=$(gmed "queue IN ('gw2', 'gw3')")
gsame=$(gmed "queue = 'gw1'")
gmax=$(gsql 1 "SELECT ROUND(MAX(TIMESTAMPDIFF(MICROSECOND, created_at, leased_until - INTERVAL 60 SECOND)) / 1000, 1) FROM mq_jobs WHERE queue IN ('gw2', 'gw3')")
row "galera wakeup: push on node 1 -> claim by pop --wait on node 2/3, median" \
  "$gcross ms (same node $gsame ms)" "<= 10 ms" "$(meets "$gcross" 10 '<=')" \
  "3 nodes on this machine; $((2 * GROUNDS)) pushes to waiters on nodes 2 and 3 (slowest $gmax ms), $GROUNDS on node 1, in $(( $(now_ms) - g0 )) ms; $(grep -c . "$T_TMP/gwork.err") lines on the waiters' stderr"
