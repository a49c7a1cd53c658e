#!/bin/sh
# The cron example of doc/operating.md (linked from the README), run as
# cron runs it: the lines between its "<!-- example: cron -->" and
# "<!-- end: cron -->" markers, each entry's command given to /bin/sh -c
# in cron's environment and no other (env -i: HOME, LOGNAME, SHELL,
# PATH=/usr/bin:/bin, then the crontab's own variables), connected by
# ~/.my.cnf as the page says users are. Two changes only: its
# /usr/local/bin/mq is this build's mq, and TEXTFILE_DIR (node_exporter's
# directory) is one of the test's.
. "$(dirname "$0")/lib.sh"
# the file that has the example (lib.sh: the README or doc/*.md)
PAGE=$(example_file cron)
is "$PAGE" "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/doc/operating.md" \
  "the cron example is in doc/operating.md, once"
[ -f "$PAGE" ] || { echo "Bail out! no cron example"; exit 1; }
CRON_HOME=$T_TMP/home
TEXTFILE=$T_TMP/textfile
mkdir -p "$CRON_HOME" "$TEXTFILE"
printf '[mq]\nsocket = %s\nuser = root\ndatabase = %s\n' \
  "$MQ_TEST_SOCKET" "$T_DB" >"$CRON_HOME/.my.cnf"
chmod 600 "$CRON_HOME/.my.cnf"

# the crontab: variables to $T_TMP/vars, entries (user TAB command) to
# $T_TMP/entries, with /usr/local/bin/mq made $MQ
awk '$0 == "<!-- example: cron -->" { on = 1; next }
  on && /^```/ { if (++fence == 2) exit; next }
  on' "$PAGE" |
  awk -v mq="$MQ" '{
    out = ""
    while ((i = index($0, "/usr/local/bin/mq")) > 0) {
      out = out substr($0, 1, i - 1) mq
      $0 = substr($0, i + length("/usr/local/bin/mq"))
    }
    print out $0
  }' >"$T_TMP/crontab"
: >"$T_TMP/vars"
: >"$T_TMP/entries"
while IFS= read -r line; do
  case $line in
  '' | '#'*) ;;
  [A-Za-z_]*=*)
    # NAME = VALUE, as cron reads it (blanks around '=', quotes)
    name=$(printf '%s' "${line%%=*}" | tr -d ' \t')
    value=$(printf '%s' "${line#*=}" | sed "s/^[ \t]*//; s/[ \t]*$//; s/^\"\(.*\)\"$/\1/; s/^'\(.*\)'$/\1/")
    [ "$name" != TEXTFILE_DIR ] || value=$TEXTFILE
    printf '%s=%s\n' "$name" "$value" >>"$T_TMP/vars" ;;
  *)
    printf '%s\n' "$line" | {
      read -r _ _ _ _ _ user cmd
      printf '%s\t%s\n' "$user" "$cmd"
    } >>"$T_TMP/entries" ;;
  esac
done <"$T_TMP/crontab"
is "$(awk '$0 == "<!-- example: cron -->" { on = 1; next }
  on && /^```/ && ++fence == 2 { getline; print; exit }' "$PAGE")" \
  "<!-- end: cron -->" "the crontab block ends at its end marker"
n=$(wc -l <"$T_TMP/entries" | tr -d ' ')
is "$n" 3 "the crontab has 3 entries"
[ "$n" -eq 3 ] || { echo "Bail out! not the crontab this test knows"; exit 1; }
is "$(cut -d= -f1 "$T_TMP/vars" | tr '\n' ' ')" "TEXTFILE_DIR " \
  "and sets TEXTFILE_DIR, nothing else (PATH stays cron's)"
i=0
while IFS='	' read -r user cmd; do
  i=$((i + 1))
  is "$user" app "entry $i runs as app"
  case $cmd in
  *%*) not_ok "entry $i has no '%' (a newline in a crontab)" "$cmd" ;;
  *) ok "entry $i has no '%' (a newline in a crontab)" ;;
  esac
  like "$cmd" "flock -n \"\$HOME/*.lock\" *$MQ *" \
    "entry $i runs mq by its full path under flock -n, its lock in \$HOME"
done <"$T_TMP/entries"

# cron_run CMD: as cron runs an entry's command; status, output in run's
cron_run() {
  _cmd=$1
  set --
  while IFS= read -r _v; do set -- "$@" "$_v"; done <"$T_TMP/vars"
  run timeout 60 env -i HOME="$CRON_HOME" LOGNAME="$(id -un)" SHELL=/bin/sh \
    PATH=/usr/bin:/bin "$@" /bin/sh -c "$_cmd"
}

# the work: 3 jobs whose consumers died (leases expired), 5 jobs that
# finished 8 days ago (4 done, 1 dead), 1 done just now
"$MQ" init >/dev/null
seq 1 3 | "$MQ" push --lines --queue stale >/dev/null
"$MQ" pop --queue stale --count 3 --json >/dev/null
sql "UPDATE mq_jobs SET leased_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE queue = 'stale'"
seq 1 5 | "$MQ" push --lines --queue old >/dev/null
for n in 1 2 3 4; do "$MQ" ack "$("$MQ" pop --queue old -o /dev/null)"; done
"$MQ" fail --no-retry "$("$MQ" pop --queue old -o /dev/null)" >/dev/null
sql "UPDATE mq_jobs SET finished_at = UTC_TIMESTAMP(6) - INTERVAL 8 DAY WHERE queue = 'old'"
"$MQ" push --queue recent x >/dev/null
"$MQ" ack "$("$MQ" pop --queue recent -o /dev/null)"
tables="mq_jobs mq_jobs_archive mq_jobs_queues mq_jobs_counts"

# overlapping runs: while a run holds an entry's lock (we hold it), the
# next one exits 1 at once, says nothing, does nothing
i=0
while IFS='	' read -r user cmd; do
  i=$((i + 1))
  lock=$(printf '%s\n' "$cmd" | sed -n 's|^flock -n "\$HOME/\([^"]*\)".*|\1|p')
  if [ -z "$lock" ]; then
    not_ok "entry $i: a run held by its lock" "no lock file in: $cmd"
    continue
  fi
  # the holder also ends when the test's directory goes (test killed)
  flock "$CRON_HOME/$lock" sh -c \
    'touch "$1"; while [ ! -e "$2" ] && [ -e "$1" ]; do sleep 0.05; done' \
    sh "$T_TMP/held.$i" "$T_TMP/release.$i" &
  holder=$!
  n=0
  while [ ! -e "$T_TMP/held.$i" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
  sum=$(table_sum $tables)
  cron_run "$cmd"
  is "$RC:$OUT:$ERR" "1::" "entry $i while the previous run holds $lock: exits 1 at once, prints nothing"
  is "$(table_sum $tables):$(ls -A "$TEXTFILE")" "$sum:" "and does nothing"
  touch "$T_TMP/release.$i"
  wait "$holder"
done <"$T_TMP/entries"

# each entry once, as cron would: exit 0, nothing on stderr (mailed)
i=0
while IFS='	' read -r user cmd; do
  i=$((i + 1))
  cron_run "$cmd"
  is "$RC:$ERR" "0:" "entry $i runs under cron's environment: $(printf '%s' "$cmd" | cut -c1-60)"
  case $cmd in
  *requeue-stale*) is "$OUT" "" "requeue-stale prints nothing (no mail a minute)" ;;
  esac
done <"$T_TMP/entries"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'stale'")" \
  "ready,ready,ready" "requeue-stale put the dead consumers' jobs back"
is "$(sql "SELECT CONCAT_WS(',', (SELECT COUNT(*) FROM mq_jobs WHERE queue = 'old'), (SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs_archive WHERE queue = 'old'), (SELECT COUNT(*) FROM mq_jobs WHERE queue = 'recent' AND state = 'done'))")" \
  "0,done,done,done,done,dead,1" "archive moved the week-old done and dead jobs, kept today's"
is "$(cd "$CRON_HOME" && ls -A | grep -c '\.lock$')" 3 "the three lock files are in \$HOME"
is "$(ls -A "$TEXTFILE")" mq.prom "stats left mq.prom and no temporary file"
is "$(stat -c %a "$TEXTFILE/mq.prom")" 644 "readable by node_exporter's user"
promtool_check "$TEXTFILE/mq.prom" "mq.prom is complete metrics (promtool)"
like "$(cat "$TEXTFILE/mq.prom")" '*mq_jobs{table="mq_jobs",queue="stale",state="ready"} 3*' \
  "and says what the queues hold"

# the metrics doc/operating.md lists are those mq stats writes, each
# with the labels of its samples (a limited queue: every family has one)
"$MQ" push --queue limited x >/dev/null
"$MQ" limit --concurrency 2 --per-key 1 --rate 10/s --key-rate 5/m limited >/dev/null
"$MQ" stats --prometheus >"$T_TMP/all.prom"
written=$(awk '/^# TYPE / { type[$3] = $4; next } /^#/ { next }
  { name = $0; sub(/[{ ].*/, "", name)
    if (name in seen) next; seen[name] = 1
    labels = ""; rest = $0
    while (match(rest, /[a-z_]+="/)) {
      labels = labels (labels == "" ? "" : ",") substr(rest, RSTART, RLENGTH - 2)
      rest = substr(rest, RSTART + RLENGTH)
      sub(/^([^"\\]|\\.)*"/, "", rest)
    }
    print type[name] " " name "{" labels "}" }' "$T_TMP/all.prom" | sort)
listed=$(awk '/^The metrics in `mq.prom`/ { on = 1 } on && !NF { exit } on' "$PAGE" |
  tr '\n' ' ' | sed 's/the counters/\ncounter/' | awk '
  { kind = NR == 1 ? "gauge" : "counter"; rest = $0
    while (match(rest, /`mq_[a-z_]*\{[a-z_,]*\}`/)) {
      print kind " " substr(rest, RSTART + 1, RLENGTH - 2)
      rest = substr(rest, RSTART + RLENGTH) } }' | sort)
like "$written" "*gauge mq_jobs{table,queue,state}*" "mq stats --prometheus: its metrics and labels read"
is "$listed" "$written" \
  "doc/operating.md lists every metric mq stats writes, gauge or counter, with its labels"

# stats when the server cannot be reached: its error is mailed, the last
# mq.prom stays, no temporary file is left
cp "$TEXTFILE/mq.prom" "$T_TMP/last.prom"
printf '[mq]\nsocket = %s\n' "$T_TMP/nothing.sock" >"$CRON_HOME/.my.cnf"
cron_run "$(grep -F 'stats --prometheus' "$T_TMP/entries" | cut -f2)"
like "$RC:$ERR" "0:mq stats: cannot connect*" "stats with the server away: its error on stderr"
is "$(ls -A "$TEXTFILE")" mq.prom "no temporary file left behind"
check "the last mq.prom stays" cmp -s "$T_TMP/last.prom" "$TEXTFILE/mq.prom"
done_testing
