#!/bin/sh
# Bounded memory in mq schedule (review 48): ls reads the schedules a page
# at a time (MQ_SCHEDULE_PAGE rows, about a MiB of payloads) and prints
# each page before the next, so its memory is a page's whatever the table
# holds (| head -1 too); apply, --dry-run and a re-apply hold the file as
# a compact set (a few times its bytes, the 16 MiB limit's too) and read
# the table and the ledger a page at a time. The peak resident set of
# each, against that of ls of an empty table. And what paging must keep:
# ls lists every schedule once, by name, in text and JSON (a page cut by
# its payloads' bytes too); apply --prune removes the rows between and
# after the file's names, in name order; a schedule added is due after
# the last instant the ledger holds for its name, read a page of names
# at a time (more names than a page).
. "$(dirname "$0")/lib.sh"
if [ -n "${MQ_SANITIZED:-}" ]; then	# ASan's quarantine grows with the frees
  ok "# SKIP peak RSS of a sanitized binary"
  done_testing
fi
"$MQ" init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }
"$MQ" --table empty init >/dev/null || { echo "Bail out! mq init failed"; exit 1; }

# rss CMD...: runs CMD (stdout into $T_TMP/out, stderr $T_TMP/err), its
# status in $RC and its peak resident set (a pipe's: its processes')
# in $RSS, KiB (GNU time, as t353)
rss() {
  /usr/bin/time -f %M -o "$T_TMP/rss" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
  RC=$?
  RSS=$(tail -n 1 "$T_TMP/rss")
}
# below RSS LIMIT DESCRIPTION: RSS (KiB) is at most LIMIT, and RC 0
below() {
  if [ "$RC" -eq 0 ] && [ "$1" -le "$2" ]; then ok "$3 ($1 KiB, at most $2)"
  else not_ok "$3" "status $RC, $1 KiB, at most $2 expected: $(head -c 300 "$T_TMP/err")"
  fi
}

rss "$MQ" --table empty schedule ls
BASE=$RSS
is "$RC" 0 "ls of no schedule: its resident set is the baseline ($BASE KiB)"

# 40,000 schedules (2.6 MB), and five with payloads of 600 KB among them
# (a page cut by its bytes before its rows)
N=40000
head -c 614400 /dev/zero | tr '\0' 'p' >"$T_TMP/big.bin"
awk -v n=$N 'BEGIN {
  for (i = 0; i < n; i++) {
    printf "[s%06d]\ncron = %d %d * * *\nqueue = q%d\npayload = job %d\n", i, i % 60, i % 24, i % 7, i
    if (i % 9973 == 5) printf "[s%06dx]\ncron = @daily\npayload-file = big.bin\n", i
  }
}' >"$T_TMP/many.conf"
BIG=$(grep -c payload-file "$T_TMP/many.conf")
ALL=$((N + BIG))
# the file and its payloads, KiB
FSIZE=$(( ($(wc -c <"$T_TMP/many.conf") + BIG * 614400) / 1024 ))
rss "$MQ" schedule apply "$T_TMP/many.conf"
is "$RC:$(grep -c '^added ' "$T_TMP/out")" "0:$ALL" "apply: $ALL schedules added"
# a few times the file (the table's rows: a page)
below "$RSS" $((BASE + 4 * FSIZE)) "apply of $ALL schedules ($FSIZE KiB with the payloads): a few times the file"
rss "$MQ" schedule apply "$T_TMP/many.conf"
is "$RC:$(grep -c '^unchanged ' "$T_TMP/out")" "0:$ALL" "re-apply: all unchanged"
below "$RSS" $((BASE + 4 * FSIZE)) "re-apply unchanged: a few times the file, not the table read whole"

sql "SELECT name FROM mq_jobs_schedules ORDER BY name" >"$T_TMP/names"
rss "$MQ" schedule ls
below "$RSS" $((BASE + 8192)) "ls of $ALL schedules: a page's memory"
grep -v '^ ' "$T_TMP/out" | cut -d: -f1 >"$T_TMP/listed"
if cmp -s "$T_TMP/listed" "$T_TMP/names"; then ok "ls: every schedule once, by name, over the pages"
else not_ok "ls: every schedule once, by name, over the pages" "$(diff "$T_TMP/names" "$T_TMP/listed" | head -5)"; fi
is "$(wc -l <"$T_TMP/out" | tr -d ' ')" $((ALL * 5)) "ls: five lines a schedule"
rss "$MQ" schedule ls --json -n 1
below "$RSS" $((BASE + 8192)) "ls --json (600 KB payloads among them): a page's memory"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
names = [r["name"] for r in rows]
want = open(sys.argv[2]).read().split()
big = [len(r["payload"]) for r in rows if r["name"].endswith("x")]
print(names == want, big == [614400] * int(sys.argv[3]))
' "$T_TMP/out" "$T_TMP/names" "$BIG" >"$T_TMP/json"
is "$(cat "$T_TMP/json")" "True True" \
  "ls --json: every schedule once, by name, the big payloads whole"
rss sh -c '"$@" | head -n 1' sh "$MQ" schedule ls
is "$RC:$(cat "$T_TMP/out")" "0:s000000: cron 0 0 * * *, tz UTC, queue q0, missed once" \
  "ls | head -1: the first schedule"
below "$RSS" $((BASE + 8192)) "ls | head -1: a page's memory, not the table's"

# --prune of a file naming every other one: the others removed, in
# order, over the pages (and those after the file's last name)
awk 'NR % 2 == 1' "$T_TMP/names" | head -n 15000 >"$T_TMP/kept"
awk '{ printf "[%s]\ncron = 0 0 * * *\n", $1 }' "$T_TMP/kept" >"$T_TMP/half.conf"
rss "$MQ" schedule apply --dry-run --prune "$T_TMP/half.conf"
grep '^removed ' "$T_TMP/out" | cut -d' ' -f2 >"$T_TMP/removed"
grep -vxF -f "$T_TMP/kept" "$T_TMP/names" >"$T_TMP/want-removed"
if [ "$RC" -eq 0 ] && cmp -s "$T_TMP/removed" "$T_TMP/want-removed"; then
  ok "apply --dry-run --prune: the rows the file does not name removed, by name"
else not_ok "apply --dry-run --prune: the rows the file does not name removed, by name" \
  "status $RC $(diff "$T_TMP/want-removed" "$T_TMP/removed" | head -5)"; fi
is "$(grep -c '^changed ' "$T_TMP/out")" 15000 "apply --dry-run --prune: the file's, changed"

# the 16 MiB limit, of the smallest schedules (about 760,000): a few
# times the file, not a kilobyte a schedule
awk 'BEGIN {
  a = "abcdefghijklmnopqrstuvwxyz0123456789"; size = 0
  for (l = 1; l <= 4; l++) {
    n = 1; for (k = 0; k < l; k++) n *= 36
    for (i = 0; i < n; i++) {
      s = ""; v = i
      for (k = 0; k < l; k++) { s = substr(a, v % 36 + 1, 1) s; v = int(v / 36) }
      line = "[" s "]\ncron=* * * * *\n"
      if (size + length(line) > 16777216) exit
      printf "%s", line; size += length(line)
    }
  }
}' >"$T_TMP/max.conf"
FSIZE=$(( $(wc -c <"$T_TMP/max.conf") / 1024 ))
COUNT=$(grep -c '^\[' "$T_TMP/max.conf")
rss "$MQ" schedule apply --dry-run "$T_TMP/max.conf"
is "$RC:$(grep -c '^added ' "$T_TMP/out")" "0:$COUNT" "apply --dry-run of $COUNT schedules ($FSIZE KiB)"
below "$RSS" $((BASE + 4 * FSIZE)) "apply --dry-run of the 16 MiB limit: a few times the file"

# a schedule added is due after its name's last instant in the ledger
# (one of a removed schedule of that name), read a page of names at a
# time: 3,000 of them
sql "INSERT INTO mq_jobs_fired (schedule, manual, instant, job)
  SELECT CONCAT('lg-', LPAD(seq, 4, '0')), 0,
    TIMESTAMPADD(MINUTE, seq, '2030-01-01'), NULL FROM seq_0_to_2999"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "[lg-%04d]\ncron = * * * * *\n", i }' >"$T_TMP/lg.conf"
awk 'BEGIN { for (i = 0; i < 3000; i++) { m = i + 1
  printf "added lg-%04d (next 2030-01-0%d %02d:%02d:00 UTC)\n", i, 1 + int(m / 1440), int(m % 1440 / 60), m % 60 } }' >"$T_TMP/lg.want"
rss "$MQ" schedule apply "$T_TMP/lg.conf"
if [ "$RC" -eq 0 ] && cmp -s "$T_TMP/out" "$T_TMP/lg.want"; then
  ok "apply of 3,000: each due after its ledger's last instant"
else not_ok "apply of 3,000: each due after its ledger's last instant" \
  "status $RC $(diff "$T_TMP/lg.want" "$T_TMP/out" | head -5)"; fi
done_testing
