# galera-spread.sh: sourced by bench.sh (in the full run's Galera rows,
# or alone: MQ_BENCH_ONLY=galera-spread): consumers spread over the
# three nodes of a cluster of tests/galera.sh vs the same consumers all
# on one node of it, in alternating rounds (which goes first alternates
# too), so that the machine's other load falls on both alike. On this
# machine the three nodes share its 2 cores and every node applies every
# write set either way, so spreading cannot gain (mq-galera(7),
# MEASUREMENTS); what the rows hold it to: the jobs a second at least
# 0.9x one node's, the servers' CPU a job within 10% of one node's (the
# three mariadbd processes' user and system time over each drain), and
# at most 1 conflict (certification failures and brute-force aborts,
# each retried inside mq) per 100 jobs.
# shellcheck shell=sh disable=SC2154
galera_cluster
G_WORKJOBS=${G_WORKJOBS:-3000} G_SHELLJOBS=${G_SHELLJOBS:-600} G_ROUNDS=${G_ROUNDS:-4}
gmq 1 init >/dev/null
_b=$(cat "$G_DIR/base")
G_LIST=127.0.0.1:$((_b + 13)),127.0.0.1:$((_b + 23)),127.0.0.1:$((_b + 33))
g_loop() { # g_loop NODE QUEUE: pop/ack until the queue is empty
  while r=$(gmq "$1" pop --queue "$2" -o /dev/null 2>/dev/null); do
    gmq "$1" ack "$r" 2>/dev/null
  done
}
gcpu() { # the three servers' user + system time so far, in clock ticks
  for _n in 1 2 3; do
    awk '{ print $14 + $15 }' "/proc/$(cat "$G_DIR/n$_n/mariadbd.pid")/stat"
  done | awk '{ s += $1 } END { print s }'
}
g_drain() { # g_drain KIND(work|loop) PLACES QUEUE JOBS: prints "MS CONFLICTS TICKS"
  # (one line: it runs in a command substitution, whose variables are lost)
  seq 1 "$4" | gmq 1 push --lines --queue "$3" >/dev/null 2>&1
  # every node has the jobs (gsql waits for its node to catch up) before
  # the clock starts: consumers on nodes 2 and 3 do not wait for them
  gsql 2 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$3'" >/dev/null
  gsql 3 "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$3'" >/dev/null
  sleep 1
  _c0=$(gconflicts)
  _u0=$(gcpu)
  _t0=$(now_ms)
  for _n in $2; do
    if [ "$_n" = L ]; then	# through the list: claims confirmed
      MQ_SOCKET='' MQ_USER=root MQ_DATABASE=$T_DB "$MQ" work --host "$G_LIST" \
        --host-order random --queue "$3" --exit-when-empty -- true 2>/dev/null &
    elif [ "$1" = work ]; then
      gmq "$_n" work --queue "$3" --exit-when-empty -- true 2>/dev/null &
    else
      g_loop "$_n" "$3" &
    fi
  done
  wait
  _t1=$(now_ms)
  # the servers' time: until every node has applied the drain's writes
  for _n in 1 2 3; do
    gsql $_n "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$3'" >/dev/null
  done
  echo $((_t1 - _t0)) $(($(gconflicts) - _c0)) $(($(gcpu) - _u0))
}
for kind in work loop; do
  jobs=$G_WORKJOBS
  [ $kind = loop ] && jobs=$G_SHELLJOBS
  one_ms=0 spread_ms=0 one_c=0 spread_c=0 one_u=0 spread_u=0 i=0 rounds=
  while [ $i -lt $G_ROUNDS ]; do
    i=$((i + 1))
    # one node first in odd rounds, the three first in even ones: the
    # server's background work after a drain (purge) falls on both alike
    for way in one spread; do
      [ $((i % 2)) = 1 ] || way=$([ $way = one ] && echo spread || echo one)
      if [ $way = one ]; then
        d=$(g_drain $kind "1 1 1 1 1 1" "g1_${kind}_$i" "$jobs")
        r_one=${d%% *} dc=${d#* } du=${d##* }
        one_ms=$((one_ms + r_one)) one_c=$((one_c + ${dc%% *})) one_u=$((one_u + du))
      else
        d=$(g_drain $kind "1 2 3 1 2 3" "g3_${kind}_$i" "$jobs")
        r_spread=${d%% *} dc=${d#* } du=${d##* }
        spread_ms=$((spread_ms + r_spread)) spread_c=$((spread_c + ${dc%% *})) spread_u=$((spread_u + du))
      fi
    done
    # each round's own ratio: how far one round is from the next
    rounds="$rounds${rounds:+ }$(ratio "$r_one" "$r_spread")"
  done
  all=$((jobs * G_ROUNDS))
  r=$(ratio "$one_ms" "$spread_ms")
  per=$(awk -v c="$spread_c" -v n="$all" 'BEGIN { printf "%.2f", c * 100 / n }')
  # the servers' CPU a job, spread against one node (ticks: 1/100 s)
  ru=$(ratio "$spread_u" "$one_u")
  met=$(meets "$r" 0.9 '>=')
  [ "$(meets "$ru" 1.1 '<=')" = yes ] && [ "$(meets "$ru" 0.9 '>=')" = yes ] || met=NO
  [ "$(meets "$per" 1 '<=')" = yes ] || met=NO
  if [ $kind = work ]; then
    name="galera: 6 mq work over 3 nodes vs 6 on one node"
  else
    name="galera: 6 pop/ack loops over 3 nodes vs 6 on one node"
  fi
  row "$name" "${r}x the jobs/s; the servers' CPU a job ${ru}x; $per conflicts per 100 jobs" \
    ">= 0.9x; 0.9-1.1x; <= 1 per 100" "$met" \
    "$all jobs each way in $G_ROUNDS alternating rounds: one node $((all * 1000 / one_ms)) jobs/s ($one_c conflicts), three nodes $((all * 1000 / spread_ms)) jobs/s ($spread_c conflicts); the servers' CPU $((one_u * 10000 / all)) vs $((spread_u * 10000 / all)) us a job; rounds: $rounds"
done


# the cost of confirming each claim on another node (mq-galera(7),
# CLAIMS CONFIRMED ON ANOTHER NODE): 6 mq work given the three nodes as
# a list (each at a node drawn by its pid; its claims read on another
# node) vs 6 on the nodes' sockets (one node each: nothing read), in
# alternating rounds
one_ms=0 spread_ms=0 i=0 rounds=
while [ $i -lt $G_ROUNDS ]; do
  i=$((i + 1))
  for way in sock list; do
    [ $((i % 2)) = 1 ] || way=$([ $way = sock ] && echo list || echo sock)
    if [ $way = sock ]; then
      d=$(g_drain work "1 2 3 1 2 3" "gs_$i" "$G_WORKJOBS"); r_one=${d%% *}
      one_ms=$((one_ms + r_one))
    else
      d=$(g_drain work "L L L L L L" "gl_$i" "$G_WORKJOBS"); r_spread=${d%% *}
      spread_ms=$((spread_ms + r_spread))
    fi
  done
  rounds="$rounds${rounds:+ }$(ratio "$r_one" "$r_spread")"
done
all=$((G_WORKJOBS * G_ROUNDS))
row "galera: 6 mq work through the list (claims confirmed) vs on the nodes' sockets" \
  "$(ratio "$one_ms" "$spread_ms")x the jobs/s" "-" "-" \
  "$all jobs each way in $G_ROUNDS alternating rounds: sockets $((all * 1000 / one_ms)) jobs/s, list $((all * 1000 / spread_ms)) jobs/s; rounds: $rounds"
