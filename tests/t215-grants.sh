#!/bin/sh
# sql/grants.sql: producer, consumer and operator roles. Accounts with only
# their role can do their part and nothing else: a producer can push but
# not pop or archive, a consumer can pop and ack but not push or purge,
# an operator can reap, archive, pause and purge.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null
GRANTS=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/sql/grants.sql

sed -e "s/{{DATABASE}}/$T_DB/g" -e "s/{{TABLE}}/mq_jobs/g" "$GRANTS" >"$T_TMP/grants.sql"
sql_root "$(cat "$T_TMP/grants.sql")"
is "$?" 0 "grants.sql runs"
for role in producer consumer operator; do
  sql_root "DROP USER IF EXISTS 'mq_$role'@'localhost';
    CREATE USER 'mq_$role'@'localhost';
    GRANT mq_jobs_$role TO 'mq_$role'@'localhost';
    SET DEFAULT ROLE mq_jobs_$role FOR 'mq_$role'@'localhost'"
done
as() { # as ROLE ARGS...: mq as that role's account
  as_role=$1
  shift
  MQ_USER=mq_$as_role "$MQ" "$@"
}

sum() { table_sum mq_jobs mq_jobs_archive mq_jobs_queues mq_jobs_counts; }

# producer
expect_status 0 "producer: push" as producer push --queue g hello
expect_status 0 "producer: push --lines" sh -c 'printf "a\nb\n" | MQ_USER=mq_producer "$0" push --lines --queue g' "$MQ"
id=$(as producer push --queue g --dedup k1 first)
is "$(as producer push --queue g --dedup k1 second)" "$id" "producer: push --dedup finds the live job"
# push --after: the producer writes the parents and the dependent
pa=$(as producer push --queue dp pa)
kid=$(as producer push --queue dk --after "$pa" kid)
is "$?:$(sql "SELECT parent_shards FROM mq_jobs WHERE id = $kid")" "0:1" "producer: push --after"
rid=$(as producer push --queue r --every 1h --dedup nightly cron)
is "$?" 0 "producer: push --every --dedup"
is "$(as producer push --queue r --every 1h --dedup nightly cron)" "$rid" "declared again: the same job"
# a producer role granted by schema 7's grants.sql (no dedup_unique):
# after the upgrade to 8 its dedup pushes still find the live job
sql_root "REVOKE SELECT (dedup_unique) ON \`$T_DB\`.mq_jobs FROM mq_jobs_producer"
is "$(as producer push --queue g --dedup k1 third)" "$id" "producer of schema 7's grants: push --dedup finds the live job"
sql_root "GRANT SELECT (dedup_unique) ON \`$T_DB\`.mq_jobs TO mq_jobs_producer"
# mq push --wait: the producer's row among the waiters, woken by the
# consumer's ack (one KILL QUERY: the consumer may kill the producer's
# park, or the producer looks within seconds: either way its line)
( MQ_USER=mq_producer "$MQ" push --queue pw --wait --timeout 30s job >"$T_TMP/pw.out" 2>&1; echo $? >"$T_TMP/pw.rc" ) &
pw=$!
i=0
while [ "$(sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%' AND login = 'mq_producer'")" != 1 ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1))
done
is "$(sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%' AND login = 'mq_producer'")" 1 \
  "producer: push --wait writes its row among the waiters"
MQ_USER=mq_consumer "$MQ" work --queue pw --max-jobs 1 -- true
wait "$pw"
like "$(cat "$T_TMP/pw.rc"):$(cat "$T_TMP/pw.out")" "0:* done" "  its job done: 0"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_waiters WHERE queue LIKE '*%'")" 0 "  its row deleted as it ends"
s=$(sum)

expect_status 77 "producer: pop is denied" as producer pop --queue g
like "$ERR" "mq pop: *denied to user 'mq_producer'@'localhost'* (error 114[23], SQLSTATE 42000)" "with the server's reason"
expect_status 77 "producer: work is denied" as producer work --queue g --exit-when-empty -- true
like "$ERR" "mq work: *denied to user 'mq_producer'@'localhost'* (error 114[23], SQLSTATE 42000)" "  with the server's reason"
is "$(printf '%s\n' "$ERR" | wc -l)" 1 "  said once (it was said twice)"
expect_status 77 "producer: archive is denied" as producer archive --older-than 0s
expect_status 77 "producer: purge is denied" as producer purge --queue g --yes
expect_status 77 "producer: pause is denied" as producer pause g
expect_status 77 "producer: stats is denied" as producer stats
expect_status 77 "producer: init is denied" as producer init --table other
expect_status 77 "producer: cancel is denied" as producer cancel "$rid"
is "$(sum)" "$s" "the producer's refused commands changed nothing"

# consumer
r=$(as consumer pop --queue g -o "$T_TMP/p")
is "$?:$(cat "$T_TMP/p")" "0:hello" "consumer: pop"
expect_status 0 "consumer: extend" as consumer extend --lease 1m "$r"
expect_status 0 "consumer: ack" as consumer ack "$r"
r=$(as consumer pop --queue g -o /dev/null)
expect_status 0 "consumer: fail" as consumer fail --error nope "$r"
expect_status 0 "consumer: work" as consumer work --queue g --max-jobs 1 -- true
r=$(as consumer pop --queue dp -o /dev/null)
expect_status 0 "consumer: ack of a parent" as consumer ack "$r"
is "$(sql "SELECT CONCAT(state, IF(available_at <= UTC_TIMESTAMP(6), ' due', ' waiting')) FROM mq_jobs WHERE id = $kid")" "ready due" \
  "consumer: makes its dependent due"
s=$(sum)
expect_status 77 "consumer: push is denied" as consumer push --queue g x
expect_status 77 "consumer: purge is denied" as consumer purge --queue g --yes
expect_status 77 "consumer: archive is denied" as consumer archive --older-than 0s
expect_status 77 "consumer: pause is denied" as consumer pause g
is "$(sum)" "$s" "the consumer's refused commands changed nothing"
# a rate lowered below a gate's ticks: a consumer's claim deletes those
# past it once out of the window (before: DELETE denied, error 1142,
# every claim of the queue failed); and without DELETE (the consumer
# grants before it) its claims still go through, reading every tick
seq 1 12 | "$MQ" push --queue rl --lines >/dev/null
"$MQ" limit rl --rate 4/1s >/dev/null
expect_status 0 "consumer: claims 4 at a rate of 4/s" as consumer pop --queue rl --count 4 --json
"$MQ" limit rl --rate 2/1s >/dev/null
sleep 1.1
expect_status 0 "consumer: claims at the rate lowered to 2/s" as consumer pop --queue rl --count 2 --json
is "$(sql "SELECT COUNT(*) FROM mq_jobs_ticks WHERE queue = 'rl'")" 2 "  the ticks past 2 deleted"
"$MQ" limit rl --rate 4/1s >/dev/null
sleep 1.1
expect_status 0 "consumer: claims 4 at 4/s again" as consumer pop --queue rl --count 4 --json
sql_root "REVOKE DELETE ON \`$T_DB\`.mq_jobs_ticks FROM mq_jobs_consumer"
"$MQ" limit rl --rate 1/1s >/dev/null
sleep 1.1
expect_status 0 "consumer without DELETE on the ticks: claims at 1/s" as consumer pop --queue rl -o /dev/null
is "$(sql "SELECT COUNT(*) FROM mq_jobs_ticks WHERE queue = 'rl'")" 4 "  the ticks kept"
sql_root "GRANT DELETE ON \`$T_DB\`.mq_jobs_ticks TO mq_jobs_consumer"

# operator
sql "UPDATE mq_jobs SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE state = 'leased'"
expect_status 0 "operator: stats" as operator stats
like "$OUT" "*archive: 0 jobs" "(which reads the counts)"
expect_status 0 "operator: stats --recount" as operator stats --recount
expect_status 77 "consumer: stats --recount is denied" as consumer stats --recount
expect_status 0 "operator: cancel" as operator cancel "$rid"
is "$(sql "SELECT state FROM mq_jobs WHERE id = $rid")" dead "the recurring job is cancelled"
expect_status 0 "operator: requeue-stale" as operator requeue-stale
expect_status 0 "operator: archive" as operator archive --older-than 0s --dead
like "$OUT" "archived [1-9]* job*" "operator: archive moved the finished jobs"
expect_status 0 "operator: stats after the archive" as operator stats
like "$OUT" "*archive: [1-9]* job*" "counts them"
expect_status 0 "operator: pause" as operator pause g
expect_status 0 "operator: resume" as operator resume g
expect_status 0 "operator: purge" as operator purge --queue g --yes
expect_status 77 "operator: init is denied (that is the owner's)" as operator init --table other2
# calendar schedules (mq-schedule(1)): the operator applies, lists, runs
# and removes them; firing takes the consumer's role and the producer's
# (it pushes the runs): the consumer's alone is refused, changing nothing
printf '[g1]\ncron = 0 0 1 1 *\nqueue = sg\npayload = s\n' >"$T_TMP/s.conf"
expect_status 77 "producer: schedule apply is denied" as producer schedule apply "$T_TMP/s.conf"
expect_status 0 "operator: schedule apply" as operator schedule apply "$T_TMP/s.conf"
expect_status 0 "operator: schedule ls" as operator schedule ls
like "$OUT" "g1: cron 0 0 1 1 *, tz UTC, queue sg*" "  lists it"
expect_status 0 "operator: schedule run" as operator schedule run g1
sql "UPDATE mq_jobs_schedules SET next_at = '2026-01-01'"
ssum() { table_sum mq_jobs mq_jobs_schedules mq_jobs_fired; }
s2=$(ssum)
expect_status 77 "consumer alone: schedule fire is denied (it pushes)" as consumer schedule fire
is "$(ssum)" "$s2" "  and changed nothing"
sql_root "CREATE ROLE mq_jobs_firer; GRANT mq_jobs_consumer TO mq_jobs_firer;
  GRANT mq_jobs_producer TO mq_jobs_firer; CREATE USER mq_firer@localhost;
  GRANT mq_jobs_firer TO mq_firer@localhost;
  SET DEFAULT ROLE mq_jobs_firer FOR mq_firer@localhost"
expect_status 0 "consumer and producer: schedule fire" as firer schedule fire
is "$(sql "SELECT COUNT(job) FROM mq_jobs_fired WHERE manual = 0")" 1 "  one run pushed"
expect_status 0 "operator: schedule rm" as operator schedule rm g1
# an operator role granted before schema 12 (no ledger): archive works,
# prunes nothing
sql_root "REVOKE ALL ON \`$T_DB\`.mq_jobs_fired FROM mq_jobs_operator"
n=$(sql "SELECT COUNT(*) FROM mq_jobs_fired")
expect_status 0 "operator of schema 11's grants: archive" as operator archive --older-than 0
is "$(sql "SELECT COUNT(*) FROM mq_jobs_fired")" "$n" "  the ledger untouched"
sql_root "DROP USER mq_firer@localhost; DROP ROLE mq_jobs_firer"
for role in producer consumer operator; do
  sql_root "DROP USER 'mq_$role'@'localhost'; DROP ROLE mq_jobs_$role"
done
# mq(1) PRIVILEGES lists, role by role and table by table, exactly the
# grants of sql/grants.sql (privileges and their columns)
grants_of() { # grants_of sql|page FILE: "role table PRIV [column]" lines
  python3 - "$1" "$2" <<'PY'
import re, sys
kind, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
out = set()
def add(role, table, privs):
    depth, cur, items = 0, "", []
    for ch in privs + ",":
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            items.append(cur.strip()); cur = ""
        else:
            cur += ch
    for it in items:
        m = re.match(r"([A-Z]+)(?:\s*\(([a-z_]+(?:,\s*[a-z_]+)*)\))?(?:\s*\([^()]*\))?$", it)
        if not m:
            out.add("%s %s ?%s" % (role, table, it)); continue
        cols = m.group(2)
        if cols is None:
            out.add("%s %s %s" % (role, table, m.group(1)))
        else:
            for c in cols.split(","):
                out.add("%s %s %s %s" % (role, table, m.group(1), c.strip()))
if kind == "sql":
    body = " ".join(l for l in text.split("\n") if not l.lstrip().startswith("--"))
    for st in body.split(";"):
        st = " ".join(st.split())
        m = re.match(r"GRANT (.+) ON `\{\{DATABASE\}\}`\.`\{\{TABLE\}\}([a-z_]*)` TO \{\{TABLE\}\}_([a-z]+)$", st)
        if m:
            add(m.group(3), "T" + m.group(2), m.group(1))
else:
    sec = text.split("\n# PRIVILEGES\n")[1].split("\n# ")[0]
    sec = sec.replace("*", "").replace("\\_", "_")
    role, item = None, None
    for line in sec.split("\n") + [""]:
        m = re.match(r"_T__([a-z]+)$", line)
        if m:
            role = m.group(1)
        if item is not None and line.startswith("\t  "):
            item += " " + line.strip(); continue
        if item is not None:
            t, privs = item.split(": ", 1)
            add(role, t.replace("_T_", "T"), privs.replace("; ", ", "))
            item = None
        if role and line.startswith("\t- _T_"):
            item = line[3:]
for l in sorted(out):
    print(l)
PY
}
# an account that may read the job table and the archive only: mq wait
# (mq-wait(1): all it needs) waits, looking; what it may not do is 77,
# never "the queues table is missing: run mq init" (78)
sql_root "DROP USER IF EXISTS mq215_w@localhost; CREATE USER mq215_w@localhost;
  GRANT SELECT ON \`$T_DB\`.mq_jobs TO mq215_w@localhost;
  GRANT SELECT ON \`$T_DB\`.mq_jobs_archive TO mq215_w@localhost"
wj=$(MQ_USER=root "$MQ" push --queue wq w)
run env MQ_USER=mq215_w "$MQ" wait --timeout 0 "$wj"
is "$RC:$OUT" "124:$wj waiting" "SELECT on the job table and the archive: mq wait waits (124 at --timeout 0)"
expect_status 77 "  its push is denied: 77" env MQ_USER=mq215_w "$MQ" push --queue wq x
like "$ERR" "mq push: *INSERT command denied*(error 1142, SQLSTATE 42000)" "  by the server, named"
# a producer with the grants mq-sql(7) PRIVILEGES lists, and no more
sql_root "DROP USER IF EXISTS mq215_p@localhost; CREATE USER mq215_p@localhost;
  GRANT INSERT ON \`$T_DB\`.mq_jobs TO mq215_p@localhost;
  GRANT SELECT (id, queue, dedup_live, dedup_unique) ON \`$T_DB\`.mq_jobs TO mq215_p@localhost;
  GRANT SELECT (queue) ON \`$T_DB\`.mq_jobs_queues TO mq215_p@localhost"
expect_status 0 "mq-sql(7)'s producer grants, no waiters grant: push" env MQ_USER=mq215_p "$MQ" push --queue wq p
sql_root "DROP USER mq215_w@localhost; DROP USER mq215_p@localhost"

want=$(grants_of sql "$GRANTS")
check "grants.sql: its grants read (60 or more)" test "$(printf '%s\n' "$want" | wc -l)" -ge 60
is "$(grants_of page "${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/man/mq.1.scd")" "$want" \
  "mq(1) PRIVILEGES lists the grants of sql/grants.sql, role by role, table by table"
done_testing
