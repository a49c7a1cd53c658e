#!/bin/sh
# The README's walkthrough and the examples of doc/*.md, run as written:
# each block after an "<!-- example: NAME -->" marker, in the README's
# order. The walkthrough starts from nothing: an administrator (sudo
# mariadb) creates the database "jobs" and the account "app", the user
# appends app's password to ~/.my.cnf, runs mq init, then sql/grants.sql
# makes the roles and a "worker" account. Those names are fixed, and t215
# and t330 make roles of the same names: this test has a server of its
# own, never the runner's shared one.
unset MQ_TEST_SOCKET
. "$(dirname "$0")/lib.sh"
ROOT=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}
mkdir -p "$T_TMP/bin" "$T_TMP/work" "$T_TMP/home" "$T_TMP/root"
ln -s "$MQ" "$T_TMP/bin/mq"
# sudo: the server's administrator is its root, as "sudo mariadb" is on
# Debian; root's client options (our server's socket) in root's home
printf '[client]\nsocket = %s\nuser = root\n' "$MQ_TEST_SOCKET" >"$T_TMP/root/.my.cnf"
printf '#!/bin/sh\nHOME=%s exec "$@"\n' "$T_TMP/root" >"$T_TMP/bin/sudo"
chmod +x "$T_TMP/bin/sudo"
PATH=$T_TMP/bin:$PATH
# the newcomer: a home of its own, no MQ_* settings but the one the
# README says the test adds (MQ_SOCKET: the server is not at the default
# socket); the account and database come from the option file it writes
export HOME="$T_TMP/home"
unset MQ_USER MQ_DATABASE MQ_DEFAULTS_FILE
cd "$T_TMP/work" || exit 1
ln -s "$ROOT/sql" sql

# every marker names one example, in one file
# shellcheck disable=SC2086
is "$(grep -h '^<!-- example: .* -->$' $EXAMPLE_FILES | sort | uniq -d)" "" \
  "no example name is used twice in the README and doc/*.md"

run_example database
is "$RC" 0 "database example runs"
is "$(sql_root "SELECT CONCAT_WS(',', (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'jobs'), (SELECT COUNT(*) FROM mysql.user WHERE user = 'app' AND host = 'localhost'))")" \
  "1,1" "the database jobs and the account app exist"

run_example option-file
is "$RC" 0 "option-file example runs"
is "$(stat -c %a "$HOME/.my.cnf")" 600 "~/.my.cnf is readable by its owner alone"

run_example init
is "$RC:$ERR" "0:" "init example runs, as app through ~/.my.cnf"
like "$OUT" "created tables mq_jobs, mq_jobs_archive, mq_jobs_queues, mq_jobs_counts, mq_jobs_history, mq_jobs_waiters, mq_jobs_gates, mq_jobs_ticks, mq_jobs_deps, mq_jobs_waits, mq_jobs_schedules and mq_jobs_fired (schema *)" \
  "mq init says it created 12 tables"
is "$(sql_root "SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'jobs'")" \
  "mq_jobs,mq_jobs_archive,mq_jobs_counts,mq_jobs_deps,mq_jobs_fired,mq_jobs_gates,mq_jobs_history,mq_jobs_queues,mq_jobs_schedules,mq_jobs_ticks,mq_jobs_waiters,mq_jobs_waits" \
  "and the database holds those 12 tables"
check "the README quotes what mq init printed" \
  sh -c 'tr "\n" " " <"$0" | grep -qF "It prints \`$1\`"' "$README" "$OUT"
# from here on, the test's own look into the tables is at jobs
T_DB=jobs

run_example grants
is "$RC" 0 "grants example runs"
is "$(sql_root "SELECT GROUP_CONCAT(user ORDER BY user) FROM mysql.user WHERE is_role = 'Y' AND user LIKE 'mq\\_jobs\\_%'")" \
  "mq_jobs_consumer,mq_jobs_operator,mq_jobs_producer" "grants.sql made the three roles"
is "$(stat -c %a worker.cnf)" 600 "worker.cnf is readable by its owner alone"
expect_status 77 "the worker's account cannot push" \
  mq push --defaults-file worker.cnf --queue thumbs 'not a job'
is "$(sql "SELECT COUNT(*) FROM mq_jobs")" 0 "and pushed nothing"

run_example producer
is "$RC" 0 "producer example runs"
is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = 'thumbs'")" 102 "producer pushed 102 jobs"
is "$(printf '%s\n' "$OUT" | tail -n 2 | uniq | wc -l)" 1 "the dedup push printed the same id twice"

run_example consumer
is "$RC" 0 "consumer example runs until the queue is empty"
is "$(sql "SELECT CONCAT_WS(',', SUM(state = 'done'), SUM(state = 'ready')) FROM mq_jobs WHERE queue = 'thumbs'")" \
  "101,1" "consumer did the 101 due jobs, left the scheduled one"
is "$(wc -l <sizes.log | tr -d ' ')" 101 "consumer did the work once per job"

run_example failing
is "$RC" 0 "failing/extend example runs"
is "$(sql "SELECT CONCAT_WS(',', state, attempts, available_at > NOW(6), last_error) FROM mq_jobs WHERE queue = 'mail'")" \
  "ready,1,1,no route to to: nobody@invalid" "the failed job waits for its retry, error kept"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'video'")" done "the extended job was acked"

run_example eval
is "$RC" 0 "eval example runs"
like "$OUT" "*job *, attempt 1: to: ops@example.com*\"payload\":\"to: dev@example.com\"*" \
  "eval and JSON output as shown"
is "$(sql "SELECT GROUP_CONCAT(state ORDER BY id) FROM mq_jobs WHERE queue = 'mail'")" \
  "ready,done,leased" "mail: the retry waits, first acked, second leased"

run_example work
is "$RC" 0 "work example runs"
is "$(printf '%s\n' "$ERR" | grep -vc '^mq push: pushed 20 jobs')" 0 \
  "mq work, as the worker's account, said nothing on stderr"
is "$(printf '%s\n' "$OUT" | grep -c '^resized img-')" 20 "the script ran once per image"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue = 'images'")" \
  "20,20" "all 20 done"

t0=$(date +%s%N)
run_example limits
ms=$((($(date +%s%N) - t0) / 1000000))
is "$RC" 0 "limits example runs"
is "$(printf '%s\n' "$OUT" | grep ' web v' | tr '\n' ,)" \
  "start web v41,end web v41,start web v42,end web v42,start web v43,end web v43," \
  "one web deploy at a time, in their order"
check "the api deploy ran beside the first web one" \
  sh -c 'printf "%s\n" "$0" | grep -n "api v7\|end web v41" | head -1 | grep -q "start api v7"' "$OUT"
is "$(printf '%s\n' "$OUT" | grep -c '^called the partner for customer-')" 30 "the 30 calls ran"
check "no faster than 10 a second ($ms ms for all, at least 4,400: 3 s of deploys, 1.4 s of calls)" \
  test "$ms" -ge 4400
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), SUM(state = 'done')) FROM mq_jobs WHERE queue IN ('deploy', 'partner')")" \
  "34,34" "all 34 done"

run_example schedules
is "$RC:$ERR" "0:" "schedules example runs"
like "$OUT" "added nightly-backup (next * UTC)*" "  apply adds the schedule"
like "$OUT" "*nightly-backup: cron 30 2 * * 1-5, tz Europe/Berlin, queue ops, missed once
  next * CE*T (* UTC)
  next * CE*T (* UTC)
  last none*" "  ls shows its next two runs in Berlin time and UTC"
like "$OUT" "*ran: backup --full" "  the run by hand ran, a job like any other"

# cron: t312-cron.sh runs that example as cron would

run_example recurring
is "$RC" 0 "recurring example runs"
is "$(printf '%s\n' "$OUT" | sed -n 1p)" "$(printf '%s\n' "$OUT" | sed -n 2p)" \
  "the deploy script declared the job twice: the same id"
is "$(sql "SELECT CONCAT_WS(',', COUNT(*), MIN(state), MIN(every_us), MIN(dedup_key), MIN(every_anchor = available_at)) FROM mq_jobs WHERE queue = 'maintenance'")" \
  "1,ready,3600000000,cleanup-tmp,1" "one recurring job, hourly, anchored at its first due time"
like "$(printf '%s\n' "$OUT" | awk '$1 == "maintenance" { print $2, $3, $9, $10 }')" "1 0 1 no" \
  "stats shows it ready and recurring"

# from other languages: the examples of the source tree, which find the
# account, its password and the database in ~/.my.cnf's [mq], as mq does
# (no MQ_USER, MQ_DATABASE or MYSQL_PWD: before issue 35 they needed them)
ln -s "$ROOT/examples" examples
run_example languages
is "$RC" 0 "languages example runs"
like "$OUT" "*resized img-7.png*" "mq work ran the job the Python producer pushed"
is "$(cat alert.job):$(sql "SELECT state FROM mq_jobs WHERE queue = 'alerts'")" \
  "disk full on db1:done" "the PHP consumer claimed mq push's job, wrote it and acked it"

run_example check
is "$RC" 0 "check example: OK"
like "$OUT" "MQ OK - * | '*'=*" "check example: a status line with perfdata"

# systemd: the units doc/operating.md shows are the ones installed (the
# files of systemd/ with the package's paths); each service's ExecStart
# runs; each timer has a schedule
UNITS=$ROOT/systemd
shipped() { # shipped NAME...: as the package installs them, with headers
  for u in "$@"; do
    [ "$u" = "$1" ] || echo
    echo "# /lib/systemd/system/$u"
    sed 's|@bindir@|/usr/bin|g; s|@sysconfdir@|/etc|g' "$UNITS/$u.in"
  done
}
example systemd >"$T_TMP/units"
is "$(cat "$T_TMP/units")" "$(shipped mq-requeue-stale.service \
  mq-requeue-stale.timer mq-archive.service mq-archive.timer)" \
  "the systemd example is the shipped services and timers"
is "$(grep -c '^ExecStart=' "$T_TMP/units")" 2 "two services"
is "$(grep -c '^OnCalendar=' "$T_TMP/units")" 2 "two timers"
grep '^ExecStart=' "$T_TMP/units" | sed 's|^ExecStart=/usr/bin/mq|mq|' >"$T_TMP/exec"
while read -r cmd; do
  run sh -c "$cmd"
  is "$RC" 0 "systemd ExecStart runs: $cmd"
done <"$T_TMP/exec"
# mq-requeue-stale(1) shows the same two units; every unit anywhere in
# the documentation runs as the package's user
is "$(awk '/^# \/lib\/systemd\/system\/mq-requeue-stale.service$/ { on = 1 }
  on && /^```/ { exit } on' "$ROOT/man/mq-requeue-stale.1.scd")" \
  "$(shipped mq-requeue-stale.service mq-requeue-stale.timer)" \
  "mq-requeue-stale(1) shows the shipped service and timer"
is "$(grep -rh '^User=' "$ROOT/man" "$ROOT/doc" "$README" "$UNITS" | sort -u)" \
  "User=mq" "every User= in the man pages, docs and units is User=mq"
is "$(example systemd-work)" "$(shipped mq-work@.service)" \
  "the systemd-work example is the shipped mq-work@.service"
is "$(example systemd-work-env)" "$(cat "$UNITS/work-example.env")" \
  "the systemd-work-env example is the shipped work-example.env"
# mq-work@.service's ExecStart with an env file as systemd reads it
# (VAR=value lines, values unquoted; unbraced $VAR split at whitespace,
# as sh splits it): the worker drains a queue and stops
printf 'job 1\njob 2\n' | mq push --lines --queue unitq >/dev/null
printf '%s\n' '# as work-example.env' 'MQ_QUEUE=unitq' \
  'MQ_WORK_OPTIONS=--exit-when-empty --concurrency 2' \
  'MQ_WORK_COMMAND=sh -c true' >"$T_TMP/work-unitq.env"
exec_line=$(sed -n 's|^ExecStart=@bindir@/mq |mq |p' "$UNITS/mq-work@.service.in")
run sh -c 'while IFS= read -r l; do case $l in "#"* | "") ;; *) export "$l" ;; esac
  done <"$0"; eval "$1"' "$T_TMP/work-unitq.env" "$exec_line"
is "$RC:$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE queue = 'unitq'")" \
  "0:done,done" "mq-work@.service's ExecStart with an env file: the jobs are done"
done_testing
