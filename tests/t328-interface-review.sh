#!/bin/sh
# t328: the interface's rules kept by every command (a review's findings):
# names every derived identifier can carry, repeated output forms, exit
# statuses, write failures, closed pipes, --rate, quoted values.
. "$(dirname "$0")/lib.sh"

# ---- table names: the longest allowed works, one more is refused before
# anything is made (at 51-56 mq init made T and T_archive, then failed on
# T_queues_limits with 1059, and every command asked for mq init)
long=$(printf '%050d' 0 | tr 0 t)
"$MQ" init >/dev/null 2>&1
expect_status 0 "init --table of 50 characters" "$MQ" init --table "$long"
expect_status 0 "push into it" "$MQ" push --table "$long" job50
run "$MQ" pop --table "$long"
is "$RC:$OUT" "0:job50" "pop from it"
run "$MQ" stats --table "$long" --json
like "$RC:$OUT" '0:*"queue":"default"*' "stats of it"
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '${long}%'")" \
  "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'mq\_jobs%'")" \
  "as many tables as a default init's"
for n in 51 54 56; do
  name=$(printf "%0${n}d" 0 | tr 0 u)
  expect_status 64 "init --table of $n characters: 64" "$MQ" init --table "$name"
  like "$ERR" "*invalid table name*1 to 50*" "its message says 1 to 50 ($n)"
  expect_status 64 "MQ_TABLE of $n characters: 64" env MQ_TABLE="$name" "$MQ" init
  expect_status 64 "push --table of $n characters: 64" "$MQ" push --table "$name" x
done
is "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'uuu%'")" \
  0 "nothing made for a name too long"

# ---- a form given twice is given once (it was "-o, --shell and --json
# exclude each other"); two different forms still exclude each other
"$MQ" push two1 >/dev/null && "$MQ" push two2 >/dev/null && "$MQ" push two3 >/dev/null
run "$MQ" pop --json --json
like "$RC:$OUT" '0:{"id":*"payload":"two1"*' "pop --json --json: one --json"
run "$MQ" pop --shell --shell
like "$RC:$OUT" "0:*MQ_PAYLOAD*two2*" "pop --shell --shell: one --shell"
run "$MQ" pop -o "$T_TMP/a" -o "$T_TMP/b"
is "$RC:$(cat "$T_TMP/b" 2>/dev/null):$([ -e "$T_TMP/a" ] && echo a)" "0:two3:" \
  "pop -o a -o b writes b only"
expect_status 64 "pop --json --shell: 64" "$MQ" pop --json --shell
expect_status 64 "pop -o f --json: 64" "$MQ" pop -o "$T_TMP/c" --json

# ---- exit statuses: mq(1) lists every status a command's page gives
# (66 was schedule apply's alone, push --after's missing; no 128+N), and
# every command's page its write failure (74: top, ack and extend had not)
MAN=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/man
statuses() { # statuses PAGE: the EXIT STATUS entries' numbers (*A* to *B*
  # spelled out, *A*, *B* both, 128+N as 128)
  awk '/^# EXIT STATUS/ { on = 1; next } /^# / { on = 0 }
    on && /^\*[0-9]+/ {
      n = split($0, w, /[^0-9]+/); lo = ""
      for (i = 1; i <= n; i++) if (w[i] != "") { if (lo == "") lo = w[i]; hi = w[i] }
      if ($0 ~ /^\*[0-9]+\* to \*[0-9]+\*/) for (k = lo; k <= hi; k++) print k
      else { m = split($0, v, /, /); for (i = 1; i <= m; i++) if (match(v[i], /^\*[0-9]+/)) print substr(v[i], 2, RLENGTH - 1) }
    }' "$1" | sort -un | tr '\n' ' '
}
main_st=$(statuses "$MAN/mq.1.scd")
missing=
for page in "$MAN"/mq-*.1.scd; do
  cmd=$(basename "$page" .1.scd); cmd=${cmd#mq-}
  [ "$cmd" = check ] && continue   # the plugin guidelines' statuses
  for n in $(statuses "$page"); do
    case " $main_st " in *" $n "*) ;; *) missing="$missing $cmd:$n" ;; esac
  done
  case " $(statuses "$page") " in *" 74 "*) ;; *) missing="$missing $cmd:no-74" ;; esac
  expect_status 74 "mq $cmd -h >/dev/full: 74" sh -c '"$0" "$1" -h >/dev/full' "$MQ" "$cmd"
done
is "$missing" "" "mq(1) lists every status of every page; every page lists 74"
main_exit=$(awk '/^# EXIT STATUS/ { on = 1; next } /^# / { on = 0 } on' "$MAN/mq.1.scd")
like "$main_exit" "*66\*
	Missing input: \*mq push --after\**" "mq(1): 66 is also push --after's"
like "$main_exit" "*\*mq push --wait\* its job (purged*" "mq(1): 1 is also push --wait's"
like "$main_exit" "*\*mq pop -o\*, \*--receipt-file\*, \*mq
	show -o\**" "mq(1): 73 is also show -o's"
expect_status 66 "push --after a job that does not exist: 66" "$MQ" push --after 99999 x
expect_status 66 "push --after-file that cannot be opened: 66" \
  "$MQ" push --after-file "$T_TMP/none" x
expect_status 74 "top --once >/dev/full: 74" sh -c '"$0" top --once >/dev/full' "$MQ"

# ---- read-only forms into a closed pipe end quietly by SIGPIPE, as mq
# stats does (mq limit QUEUE and the dry runs said "write failure", 74)
pipe_to() { # pipe_to READER CMD...: "RC:STDERR" of CMD into | READER
  _r=$1
  shift
  { "$@" 2>"$T_TMP/perr"; echo "$?" >"$T_TMP/prc"; } | $_r >/dev/null
  printf '%s:%s' "$(cat "$T_TMP/prc")" "$(cat "$T_TMP/perr")"
}
gone() { sleep 0.3; "$@"; }
"$MQ" limit --concurrency 3 lim >/dev/null
is "$(pipe_to true gone "$MQ" limit lim)" "141:" "limit QUEUE | true: quiet, SIGPIPE"
is "$(pipe_to true gone "$MQ" limit --json lim)" "141:" "limit --json QUEUE | true: quiet, SIGPIPE"
like "$(pipe_to true gone "$MQ" limit --concurrency 4 lim)" "74:mq limit: write failure on standard output*" \
  "limit --concurrency (a change) | true: 74, said"
is "$(sql "SELECT concurrency FROM mq_jobs_queues WHERE queue = 'lim'")" 4 "  and the change made"
"$MQ" push --queue dead1 d >/dev/null
"$MQ" fail --no-retry "$("$MQ" pop --queue dead1 --shell | sed -n 's/^MQ_RECEIPT=//p')" >/dev/null 2>&1
is "$(pipe_to true gone "$MQ" retry --dry-run --queue dead1 --all)" \
  "141:mq retry: 1 job would be retried (dry run)" "retry --dry-run | true: quiet, SIGPIPE"
is "$(pipe_to true gone "$MQ" requeue-stale --dry-run)" "141:" \
  "requeue-stale --dry-run | true: quiet, SIGPIPE"
printf '[hourly]\ncron = 0 * * * *\nqueue = ops\npayload = x\n' >"$T_TMP/s.conf"
is "$(pipe_to true gone "$MQ" schedule apply --dry-run "$T_TMP/s.conf")" "141:" \
  "schedule apply --dry-run | true: quiet, SIGPIPE"
is "$(sql "SELECT COUNT(*) FROM mq_jobs_schedules")" 0 "  nothing applied"

# ---- a write failure names its cause (it said "write failure on
# standard output" and no more), whichever command met it
full() { # full DESCRIPTION CMD...: CMD >/dev/full is 74, its line ends with the cause
  _d=$1
  shift
  expect_status 74 "$_d >/dev/full: 74" sh -c '"$0" "$@" >/dev/full' "$@"
  like "$ERR" "mq*: write failure on standard output: No space left on device*" \
    "  $_d: the cause said"
}
"$MQ" push --queue fullq a >/dev/null; "$MQ" push --queue fullq b >/dev/null
fin=$("$MQ" push --queue fin f)
"$MQ" ack "$("$MQ" pop --queue fin --shell | sed -n 's/^MQ_RECEIPT=//p')"
full "init" "$MQ" init
full "push" "$MQ" push --queue fullq c
full "stats" "$MQ" stats
full "ls" "$MQ" ls
full "show" "$MQ" show 1
full "why" "$MQ" why 1
full "top --once" "$MQ" top --once
full "limit" "$MQ" limit lim
full "pause" "$MQ" pause fullp
full "requeue-stale" "$MQ" requeue-stale
full "archive" "$MQ" archive --older-than 1d
full "completion" "$MQ" completion bash
full "wait" timeout 10 "$MQ" wait "$fin"
full "pop --json" "$MQ" pop --queue fullq --json
full "pop (raw)" "$MQ" pop --queue fullq
full "show -o -" "$MQ" show -o - 1
full "-h" "$MQ" stats -h
full "schedule apply" "$MQ" schedule apply "$T_TMP/s.conf"
full "schedule rm" "$MQ" schedule rm hourly

# ---- --rate: one syntax for limit and retry (retry took N/s, N/m, N
# only; limit no bare N), a bad value quoted whole
for r in 10/s 10/1s 10/h 10/1h30m 600/5min 10/min 7 5/m 10/500ms; do
  expect_status 0 "limit --rate $r" "$MQ" limit rq --rate "$r"
  expect_status 0 "retry --rate $r" "$MQ" retry --dry-run --queue dead1 --all --rate "$r"
done
"$MQ" limit rq --rate 7 >/dev/null
is "$(sql "SELECT rate, rate_us FROM mq_jobs_queues WHERE queue = 'rq'")" "7	1000000" "limit --rate 7 is 7/s"
"$MQ" limit rq --rate 10/1h30m >/dev/null
is "$(sql "SELECT rate, rate_us FROM mq_jobs_queues WHERE queue = 'rq'")" "10	5400000000" "limit --rate 10/1h30m"
for r in '10 /s' 0/s 10/ /s 10/0s 10/x 10/36601d 1000001/s -1/s; do
  expect_status 64 "retry --rate '$r': 64" "$MQ" retry --dry-run --queue dead1 --all --rate "$r"
  like "$ERR" "mq retry: invalid --rate '$r': *" "  the whole value quoted"
done
expect_status 64 "limit --rate '10 /s': 64" "$MQ" limit rq --rate '10 /s'
is "$ERR" "mq limit: invalid --rate '10 /s': N/D expected (N a second alone), e.g. 10/s, 600/5m, 10/1h30m" \
  "  the whole value quoted"
expect_status 64 "limit --rate 0/s: 64" "$MQ" limit rq --rate 0/s
is "$ERR" "mq limit: invalid --rate '0/s': N from 1 to 4294967295" "  the whole value quoted"
expect_status 64 "--delay 5min: min is a rate's spelling only (mq(1) DURATIONS)" "$MQ" push --delay 5min x
like "$(awk '/^# DURATIONS/ { on = 1; next } /^# / { on = 0 } on' "$MAN/mq.1.scd")" "*\*min\* is another spelling of \*m\**" \
  "mq(1) DURATIONS says min"

# ---- a bad --queue or --table value is quoted, escaped, as the operand
# forms quote theirs (it was "invalid queue name in --queue: ..."); one
# wording for --dedup and --key
expect_status 64 "stats --queue 'a b'" "$MQ" stats --queue 'a b'
is "$ERR" "mq stats: invalid queue name 'a b' in --queue: use 1 to 64 of A-Z a-z 0-9 _ . -" "  the value quoted"
expect_status 64 "stats --queue with a tab" "$MQ" stats --queue "$(printf 'a\tb')"
is "$ERR" "mq stats: invalid queue name 'a\x09b' in --queue: use 1 to 64 of A-Z a-z 0-9 _ . -" "  a control byte escaped"
expect_status 64 "stats --table 'a;b'" "$MQ" stats --table 'a;b'
is "$ERR" "mq stats: invalid table name 'a;b' in --table: use 1 to 50 of A-Z a-z 0-9 _" "  the value quoted"
expect_status 64 "MQ_TABLE with a newline" env MQ_TABLE="$(printf 'a\nb')" "$MQ" stats
is "$ERR" "mq stats: invalid table name 'a\x0ab' in MQ_TABLE: use 1 to 50 of A-Z a-z 0-9 _" "  one line, escaped"
expect_status 64 "MQ_QUEUE 'x y'" env MQ_QUEUE='x y' "$MQ" push z
is "$ERR" "mq push: invalid queue name 'x y' in MQ_QUEUE: use 1 to 64 of A-Z a-z 0-9 _ . -" "  the value quoted"
expect_status 64 "pop --queue 'a,,b'" "$MQ" pop --queue 'a,,b'
like "$ERR" "mq pop: invalid queue list 'a,,b' in --queue: 1 to 16 queue names*" "  the list quoted"
expect_status 64 "push --dedup ''" "$MQ" push --dedup '' x
is "$ERR" "mq push: invalid --dedup '': 1 to 255 bytes" "  worded as --key's"
expect_status 64 "push --key ''" "$MQ" push --key '' x
is "$ERR" "mq push: invalid --key '': 1 to 255 bytes, no control characters" "  --key's"

# ---- stats --json: no ready job, no age: null (it was 0.000 where the
# table shows '-'); a ready job's age a number
"$MQ" push --queue noready --delay 1h later >/dev/null
"$MQ" push --queue oneready now >/dev/null
run "$MQ" stats --json --queue noready
like "$OUT" '*"queue":"noready","ready":0,*"oldest_ready_seconds":null,"concurrency"*' \
  "stats --json: oldest_ready_seconds null without a ready job"
run "$MQ" stats --json --queue oneready
like "$OUT" '*"queue":"oneready","ready":1,*"oldest_ready_seconds":[0-9]*.[0-9][0-9][0-9],"concurrency"*' \
  "stats --json: a number with one"
run "$MQ" stats --queue noready
like "$(printf '%s\n' "$OUT" | grep '^noready' | tr -s ' ')" "noready 0 1 0 0 0 0 0 0 no - *" "the table's '-'"
run "$MQ" stats --prometheus --queue noready
like "$OUT" '*mq_oldest_ready_age_seconds{table="mq_jobs",queue="noready"} 0.000*' "prometheus: 0"

# ---- mq schedule's usage says which options go with which subcommand
# (--queue, --json and --next were on one line with ls, run, rm and
# fire, but --queue is fire's alone: mq schedule --queue x ls was 64);
# options before the subcommand word are taken, as anywhere
run "$MQ" schedule -h
like "$OUT" "*mq schedule [[]--next N] [[]--json] [[]--table T] [[]CONNECTION-OPTIONS] ls
*mq schedule [[]--table T] [[]CONNECTION-OPTIONS] run NAME | rm NAME
*mq schedule [[]--queue Q] [[]--table T] [[]CONNECTION-OPTIONS] fire
*" "schedule -h: ls, run | rm and fire each with their options"
syn=$(awk '/^# SYNOPSIS/ { on = 1; next } /^# / { on = 0 } on && /[*]fire[*]/' "$MAN/mq-schedule.1.scd")
is "$syn" "*mq schedule* [*--queue* _Q_] [*--table* _T_] [_CONNECTION-OPTIONS_] *fire*" \
  "mq-schedule(1) SYNOPSIS: --queue with fire alone"
expect_status 0 "schedule --json ls (options before the word)" "$MQ" schedule --json ls
expect_status 0 "schedule --next 1 --json ls" "$MQ" schedule --next 1 --json ls
expect_status 0 "schedule --queue ops fire" "$MQ" schedule --queue ops fire
expect_status 64 "schedule --queue x ls: 64 (fire's option)" "$MQ" schedule --queue x ls
is "$ERR" "mq schedule: --queue is for fire" "  says so"

# ---- a receipt file that cannot be made leaves nothing on standard
# output: the payload of a job given back was printed (status 73), and
# "mq pop --receipt-file r > job.bin" kept a job it did not hold
"$MQ" push --queue rfq rfpayload >/dev/null
run "$MQ" pop --queue rfq --receipt-file "$T_TMP/none/r"
is "$RC:$OUT" "73:" "pop --receipt-file in no directory: 73, nothing on stdout"
like "$ERR" "mq pop: cannot write receipt to *: the job was given back" "  said once"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'rfq'")" "ready" "  the job given back"
run "$MQ" pop --queue rfq -o "$T_TMP/rf.bin" --receipt-file "$T_TMP/none/r"
is "$RC:$OUT:$(cat "$T_TMP/rf.bin" 2>/dev/null)" "73::" "pop -o F --receipt-file in no directory: 73, no payload in F"
run "$MQ" pop --queue rfq --receipt-file "$T_TMP/rf.r"
is "$RC:$OUT" "0:rfpayload" "  then it pops as before"
expect_status 0 "  and its receipt acks" "$MQ" ack "$(cat "$T_TMP/rf.r")"

# ---- --quiet is an option of every push: it silences --lines' summary
# and --cron's report (it was shown and documented for --lines only)
run "$MQ" push --cron '0 4 * * *' --queue qq --quiet x
is "$RC:$ERR" "0:" "push --cron --quiet: status 0, nothing on stderr"
like "$OUT" "?*" "  the schedule's name on stdout"
run "$MQ" push --queue qq --quiet one
is "$RC:$ERR" "0:" "push --quiet PAYLOAD: accepted, nothing on stderr"
is "$("$MQ" push -h 2>&1 | head -1 | grep -cF '[--wait [--timeout D]] [--quiet] [--table T]')" 1 "  in the single job's usage line"

# ---- names are refused in one wording, whichever option carries them
for c in "retry --queue b --all --to-queue|queue name 'a b' in --to-queue" \
    "ls --schedule|schedule name 'a b' in --schedule" \
    "push --cron @daily x --name|schedule name 'a b' in --name"; do
  run "$MQ" ${c%%|*} 'a b'
  is "$RC:$ERR" "64:mq ${c%% *}: invalid ${c#*|}: use 1 to 64 of A-Z a-z 0-9 _ . -" "  mq ${c%%|*} 'a b'"
done

done_testing
