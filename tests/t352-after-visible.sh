#!/bin/sh
# Dependencies shown (issue 32, "Visible"): a dependent that waits for
# its parents (mq push --after) is in state "waiting", not "scheduled at
# the end of time". mq why says for which parents (those not done, by
# id, 10 at most, then "and N more"), status 18, with its facts and
# --json; a dependent a dead or purged parent cancelled is dead with that
# error (14). mq show lists its parents and its dependents with their
# states (10 at most of each, then "and N more"), --json too. mq ls
# selects them (--state waiting); mq stats (table, --json, --prometheus
# and promtool), mq top and mq check's perfdata count them apart, and no
# more as scheduled.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

line() { printf '%s\n' "$OUT" | sed -n "$1p"; }
# json EXPR: EXPR of the JSON object in $OUT, as python prints it (d)
json() { printf '%s' "$OUT" | python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }
# done_one QUEUE: pops one job of QUEUE and acks it
done_one() {
  _r=$("$MQ" pop --queue "$1" -o /dev/null) || return 1
  "$MQ" ack "$_r" >/dev/null
}
# why_is STATUS DESCRIPTION ARGS...: mq why ARGS exits STATUS (its answer)
why_is() {
  _w=$1 _d=$2
  shift 2
  run "$MQ" why "$@"
  is "$RC" "$_w" "$_d"
}
# die_one QUEUE: pops one job of QUEUE and fails it for good
die_one() {
  _r=$("$MQ" pop --queue "$1" -o /dev/null) || return 1
  "$MQ" fail --no-retry --error boom "$_r" >/dev/null
}

# ---- 13 parents, one done: the dependent waits for 12 ----
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
  eval "p$i=\$(\"\$MQ\" push --queue par p$i)"
done
all="$p1,$p2,$p3,$p4,$p5,$p6,$p7,$p8,$p9,$p10,$p11,$p12,$p13"
c=$("$MQ" push --queue kid --after "$all" child)
done_one par
later=$("$MQ" push --queue kid --delay 1h later)

why_is 18 "why of a waiting dependent: status 18" "$c"
is "$(line 1)" "job $c is waiting for 12 of 13 parents: $p2, $p3, $p4, $p5, $p6, $p7, $p8, $p9, $p10, $p11 and 2 more" \
  "  the parents not done, by id, 10 at most, then how many more"
is "$(printf '%s\n' "$OUT" | grep -E '^(state|due|parents|if a parent dies):')" "state: waiting
due: when its parents are done
parents: 12 of 13 not done
if a parent dies: cancel" "  its facts: waiting, due with its parents, how many, the policy"
why_is 18 "why --json of a waiting dependent: 18" --json "$c"
is "$(json 'd["answer"], d["status"], d["state"], d["parents"]["total"], d["parents"]["not_done"], d["parents"]["waiting_for"], d["parents"]["if_parent_dies"], d["if_parent_dies"]')" \
  "waiting 18 waiting 13 12 [$p2, $p3, $p4, $p5, $p6, $p7, $p8, $p9, $p10, $p11] cancel cancel" \
  "  answer, status, state, the parents and the policy"
why_is 11 "why of a job scheduled for later is still scheduled (11)" "$later"
like "$(line 1)" "job $later is scheduled: it is due at 20*" "  due in an hour"
expect_status 0 "why of a parent: ready (0)" "$MQ" why --json "$p2"
is "$(json 'd["answer"], d["parents"], d["if_parent_dies"]')" "ready None None" \
  "  a job that is no dependent has no parents (null)"

# fewer than 10: no "and N more"; one parent: singular
one=$("$MQ" push --queue kid --after "$p13" --if-parent-dies wait single)
why_is 18 "why of a dependent of one parent" "$one"
is "$(line 1)" "job $one is waiting for 1 of 1 parent: $p13" "  singular, no 'more'"
like "$OUT" "*if a parent dies: wait*" "  its policy"

# a paused queue: waiting comes first (a resume would not run it)
"$MQ" pause kid >/dev/null
why_is 18 "why of a waiting dependent in a paused queue: still 18" "$c"
"$MQ" resume kid >/dev/null

# a row another program wrote due at the end of time, without parents
sql "INSERT INTO mq_jobs (queue, payload, available_at) VALUES ('odd', 'x', '9999-12-31 23:59:59.999999')"
odd=$(sql "SELECT MAX(id) FROM mq_jobs WHERE queue = 'odd'")
why_is 18 "why of a job due at the end of time without parents: waiting (18)" "$odd"
is "$(line 1)" "job $odd is waiting for the end of time, without parents: nothing will make it due (mq cancel it, or give it a due time)" \
  "  says it has no parents, and what to do"
"$MQ" cancel "$odd" >/dev/null

# ---- mq show: parents and children, bounded ----
expect_status 0 "show of the dependent" "$MQ" show "$c"
is "$(printf '%s\n' "$OUT" | grep -E '^(state|due):')" "state: waiting
due: when its parents are done" "  state waiting, due with its parents"
is "$(printf '%s\n' "$OUT" | grep -A1 '^parents:')" "parents: 12 of 13 not done, if one dies: cancel
  $p1 done, $p2 ready, $p3 ready, $p4 ready, $p5 ready, $p6 ready, $p7 ready, $p8 ready, $p9 ready, $p10 ready and 3 more" \
  "  its parents: how many, the policy, the first 10 with their states"
is "$(printf '%s\n' "$OUT" | grep -c '^children:')" 0 "  no children line for a job without any"
expect_status 0 "show of a parent" "$MQ" show "$p13"
is "$(printf '%s\n' "$OUT" | grep -A1 '^children:')" "children: 2
  $c waiting, $one waiting" "  its dependents with their states"
is "$(printf '%s\n' "$OUT" | grep -c '^parents:')" 0 "  no parents line for a job without any"
expect_status 0 "show --json of the dependent" "$MQ" show --json "$c"
is "$(json 'd["state"], d["if_parent_dies"], d["parents"]["total"], d["parents"]["not_done"], [(x["id"], x["state"], x["met"]) for x in d["parents"]["first"][:2]], len(d["parents"]["first"]), d["children"]')" \
  "waiting cancel 13 12 [($p1, 'done', True), ($p2, 'ready', False)] 10 None" \
  "  --json: parents (total, not done, the first 10 with state and met), children null"
expect_status 0 "show --json of a parent" "$MQ" show --json "$p13"
is "$(json 'd["parents"], d["children"]["total"], [(x["id"], x["state"]) for x in d["children"]["first"]]')" \
  "None 2 [($c, 'waiting'), ($one, 'waiting')]" "  --json: its children"
# a parent of 12 dependents: 10 listed, then how many more
for i in 1 2 3 4 5 6 7 8 9 10 11; do "$MQ" push --queue fan --after "$p12" --if-parent-dies run "f$i" >/dev/null; done
expect_status 0 "show of a parent of 12" "$MQ" show "$p12"
like "$(printf '%s\n' "$OUT" | grep -A1 '^children:')" "children: 12
  $c waiting, * waiting and 2 more" "  10 dependents listed, then 'and 2 more'"

# ---- mq ls ----
expect_status 0 "ls --state waiting" "$MQ" ls --state waiting --queue kid --ids
is "$OUT" "$c
$one" "  the dependents waiting, not the job scheduled for later"
expect_status 0 "ls --state scheduled" "$MQ" ls --state scheduled --queue kid --ids
is "$OUT" "$later" "  scheduled: the job due later only"
expect_status 0 "ls --json" "$MQ" ls --queue kid --json
is "$(printf '%s\n' "$OUT" | python3 -c 'import json, sys
print(" ".join("%s:%s:%s" % (d["id"], d["state"], d["if_parent_dies"]) for d in map(json.loads, sys.stdin)))')" \
  "$c:waiting:cancel $later:scheduled:None $one:waiting:wait" "  states in JSON, with the policy"
expect_status 0 "ls table" "$MQ" ls --queue kid
is "$(printf '%s\n' "$OUT" | awk -v id="$c" '$1 == id { print $3 }')" waiting "  the table's state column"
expect_status 64 "ls --state of an unknown state names waiting" "$MQ" ls --state sleeping
like "$ERR" "*ready, scheduled, waiting, leased, stale, done, dead, invalid or archived*" "  in the list"

# ---- mq stats, top ----
expect_status 0 "stats" "$MQ" stats --queue kid
is "$(line 1 | tr -s ' ' | cut -d' ' -f1-6)" "QUEUE READY SCHEDULED WAITING LEASED STALE" "  a WAITING column"
is "$(line 2 | tr -s ' ' | cut -d' ' -f1-6)" "kid 0 1 2 0 0" "  kid: 1 scheduled, 2 waiting"
expect_status 0 "stats --json" "$MQ" stats --json
is "$(json '[(q["queue"], q["scheduled"], q["waiting"]) for q in d["queues"] if q["queue"] != "odd"]')" \
  "[('fan', 0, 11), ('kid', 1, 2), ('par', 0, 0)]" "  --json: waiting apart from scheduled"
expect_status 0 "stats --prometheus" "$MQ" stats --prometheus
is "$(printf '%s\n' "$OUT" | grep -E '^mq_jobs\{.*queue="kid",state="(scheduled|waiting)"')" \
  'mq_jobs{table="mq_jobs",queue="kid",state="scheduled"} 1
mq_jobs{table="mq_jobs",queue="kid",state="waiting"} 2' "  mq_jobs state=\"waiting\""
like "$OUT" "*# HELP mq_jobs *waiting: for parents not done yet*" "  its HELP says so"
printf '%s\n' "$OUT" >"$T_TMP/metrics.prom"
promtool_check "$T_TMP/metrics.prom" "  promtool check metrics passes"
run "$MQ" top --once --interval 100ms --queue kid
is "$RC" 0 "top --once"
like "$(line 1)" "mq top 20*Z table mq_jobs: 1 queue, 0 ready, 1 scheduled, 2 waiting, 0 leased, 0 stale, 0 dead; *" \
  "  the header counts the waiting jobs apart"
is "$(line 2 | tr -s ' ' | cut -d' ' -f1-5)" "QUEUE READY SCHED WAIT LEASED" "  a WAIT column"
is "$(line 3 | tr -s ' ' | cut -d' ' -f1-5)" "kid 0 1 2 0" "  kid: 1 scheduled, 2 waiting"
run "$MQ" check --queue kid
like "$RC:$OUT" "0:MQ OK - * 'kid.scheduled'=1;;;0 'kid.waiting'=2;;;0 'kid.leased'=0;;;0 *" \
  "check: the waiting jobs in the perfdata, apart from the scheduled one"

# ---- what parents that die or leave do, as why shows it ----
# wait: the dependent keeps waiting for the dead parent, named
sql "UPDATE mq_jobs SET priority = -1 WHERE id = $p13"
die_one par
why_is 18 "why of a dependent whose parent died (wait): still waiting" "$one"
is "$(line 1)" "job $one is waiting for 1 of 1 parent: $p13" "  for the dead parent"
expect_status 0 "show of it" "$MQ" show "$one"
is "$(printf '%s\n' "$OUT" | grep -A1 '^parents:')" "parents: 1 of 1 not done, if one dies: wait
  $p13 dead" "  the parent listed dead"
# cancel: the dependent is dead, the parent named
why_is 14 "why of a dependent a dead parent cancelled: dead (14)" "$c"
like "$(line 1)" "job $c is dead since 20*, with error: cancelled: parent $p13 is dead" "  the error names the parent"
like "$OUT" "*
if a parent dies: cancel*" "  and the policy"
why_is 14 "why --json of it" --json "$c"
is "$(json 'd["answer"], d["state"], d["error"], d["parents"]["total"], d["parents"]["not_done"]')" \
  "dead dead cancelled: parent $p13 is dead 13 12" "  --json: the error, the parents"
# purged: a dependent of a purged parent is cancelled, the parent gone
g=$("$MQ" push --queue gone g0)
gc=$("$MQ" push --queue kid2 --after "$g" gc)
"$MQ" purge --queue gone --yes >/dev/null
why_is 14 "why of a dependent of a purged parent: dead (14)" "$gc"
like "$(line 1)" "job $gc is dead since 20*, with error: cancelled: parent $g was purged" "  the error says purged"
expect_status 0 "show of it" "$MQ" show "$gc"
is "$(printf '%s\n' "$OUT" | grep -A1 '^parents:')" "parents: 1 of 1 not done, if one dies: cancel
  $g deleted" "  the parent listed deleted"
# run: the dependent runs anyway, ready (0)
sql "UPDATE mq_jobs SET priority = -1 WHERE id = $p12"
die_one par
expect_status 0 "why of a dependent that runs anyway: ready (0)" "$MQ" why "$(sql "SELECT MIN(id) FROM mq_jobs WHERE queue = 'fan'")"
expect_status 0 "stats after the deaths" "$MQ" stats --json
is "$(json '[(q["queue"], q["ready"], q["waiting"]) for q in d["queues"] if q["queue"] in ("fan", "kid")]')" \
  "[('fan', 11, 0), ('kid', 0, 1)]" "  waiting counts follow: fan's run, kid's one left waits"

done_testing
