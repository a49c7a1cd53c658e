#!/bin/sh
# mq completion: the bash script completes commands, options, fixed values
# and the queues of the right table, as a user's TAB would, without the
# bash-completion package; no server means no queues, quietly and at once.
# The queues are read with the settings every command reads (MQ_HOST,
# MQ_PORT, MQ_TABLE... over the option files, the line over both), and
# within two seconds whatever holds them up (a pipe nobody writes to).
# The zsh and fish scripts parse, and fish completes a command name. The
# words typed before reach mq as each shell would pass them (~, ~user,
# $HOME, ${HOME}, quotes, backslashes expanded, nothing run), read by
# mq's parser (abbreviations: --def). Options are offered in all three
# shells for the usage forms the words typed leave possible.
. "$(dirname "$0")/lib.sh"

# "mq" on the PATH, as a user types it
mkdir "$T_TMP/bin"
ln -s "$MQ" "$T_TMP/bin/mq"
PATH=$T_TMP/bin:$PATH
export PATH

run "$MQ" completion bash
is "$RC" 0 "mq completion bash exits 0"
printf '%s\n' "$OUT" >"$T_TMP/mq.bash"

# comp WORD...: what TAB offers for the last word (COMP_WORDS as bash
# splits the line), sorted, on one line; stderr to $T_TMP/comp.err (a TAB
# that hangs is killed after 15 s: the test fails rather than hangs)
comp() {
  timeout -s KILL 15 bash --norc --noprofile -c '
    . "$1" || exit 1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    # the line typed: no space around a "=" that bash split a word at
    COMP_LINE=$1
    shift
    p=$1
    for w in "$@"; do
      if [ "$w" = = ] || [ "$p" = = ]; then COMP_LINE+=$w; else COMP_LINE+=" $w"; fi
      p=$w
    done
    COMP_POINT=${#COMP_LINE}
    _mq
    printf "%s\n" "${COMPREPLY[@]}"' comp "$T_TMP/mq.bash" "$@" \
    2>"$T_TMP/comp.err" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

check "the script registers itself without bash-completion" \
  bash --norc --noprofile -c '. "$1" && complete -p mq | grep -q -- "-F _mq"' \
  sh "$T_TMP/mq.bash"
is "$(comp mq po)" "pop" "mq po<TAB>: pop"
is "$(comp mq re)" "requeue-stale resume retry" "mq re<TAB>: the three commands"
is "$(comp mq pop --cl)" "--claim" "mq pop --cl<TAB>: --claim"
is "$(comp mq pop --claim '')" "skip-locked update" \
  "mq pop --claim <TAB>: its values"
is "$(comp mq pop --claim = '')" "skip-locked update" \
  "mq pop --claim=<TAB> (bash splits at =): its values"
is "$(comp mq pop --claim = up)" "update" "mq pop --claim=up<TAB>: update"
is "$(comp mq fail R --no)" "--no-retry" \
  "mq fail R --no<TAB>: --no-retry, an option after the operand"
is "$(comp mq --table t fa)" "fail" "global options before the command"
is "$(comp mq sch)" "schedule" "mq sch<TAB>: schedule"
is "$(comp mq schedule '')" "apply fire ls rm run" "mq schedule <TAB>: its subcommands"
is "$(comp mq schedule apply --pr)" "--prune" "mq schedule apply --pr<TAB>: --prune"
is "$(comp mq schedule ls --ne)" "--next" "mq schedule ls --ne<TAB>: --next"
is "$(comp mq ls --rec)" "--recurring" "mq ls --rec<TAB>: --recurring"
is "$(comp mq ls --sch)" "--schedule" "mq ls --sch<TAB>: --schedule"
is "$(comp mq completion '')" "bash fish zsh" "mq completion <TAB>: shells"
is "$(comp mq help wo)" "work" "mq help wo<TAB>: work"
like " $(comp mq push -) " "* -0 *" "mq push -<TAB> offers -0"
: >"$T_TMP/a-file.txt"
is "$(comp mq pop -o "$T_TMP/a-fi")" "$T_TMP/a-file.txt" \
  "mq pop -o <TAB>: files"
like " $(comp mq work -- ech) " "* echo *" "mq work -- <TAB>: commands"
# mq work runs its command with execvp: programs only, not what only the
# shell has (keywords, builtins, functions: the script's own too)
is "$(comp mq work -- whil)" "" "mq work -- whil<TAB>: no shell keyword"
is "$(comp mq work -- compg)" "" "mq work -- compg<TAB>: no bash builtin"
is "$(comp mq work -- _mq)" "" "mq work -- _mq<TAB>: not the script's functions"
is "$(comp mq work --queue q -- _mq)" "" "... after options too"
like " $(comp mq work -- '') " "* sh *" "mq work -- <TAB>: the programs of PATH"
is "$(comp mq work -- "$T_TMP/bin/m")" "$T_TMP/bin/mq" "a path: the programs there"
# a list option offers the values not in the list yet
is "$(comp mq ls --state ready,d)" "ready,dead ready,done" \
  "mq ls --state ready,d<TAB>: the next state"
is "$(comp mq ls --state ready,done,d)" "ready,done,dead" \
  "mq ls --state ready,done,d<TAB>: not done again"
is "$(comp mq ls --state ready,)" \
  "ready,archived ready,dead ready,done ready,invalid ready,leased ready,scheduled ready,stale ready,waiting" \
  "mq ls --state ready,<TAB>: every state but ready"
# every option whose value is a list (X[,X...] in -h) completes as one
for c in $("$MQ" -h | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }' | grep -vx help); do
  for o in $("$MQ" "$c" -h | sed -n 's/^  \(-[a-zA-Z0-9], \)\{0,1\}\(--[-a-z0-9]*\) [^ ]*\[,.*/\2/p'); do
    kind=$(bash --norc --noprofile -c '. "$1"; _mq_value "$2" "$3"; printf "%s" "${_mq_r%% *}"' \
      sh "$T_TMP/mq.bash" "$c" "$o")
    case $kind in
    queues | wordlist | none) ok "mq $c $o: a list, completed as one ($kind)" ;;
    *) not_ok "mq $c $o: a list, completed as one" "kind: $kind" ;;
    esac
  done
done
is "$(comp mq pop --shell --count '')" "" "a number: nothing offered"

# the options of the usage forms still possible (mq schedule -h: apply,
# ls, run | rm, fire; mq push -h: a job, or a stream with --lines | -0):
# an option of some forms only, or a first operand that begins some
# forms, leaves those; the options of every form always (before: every
# option of every form, and mq schedule ls --prune is a usage error)
# has LIST WORD...: the WORDs that are in LIST, in order
has() {
  h_l=" $1 "
  shift
  h_r=
  for h_w in "$@"; do
    case $h_l in *" $h_w "*) h_r="$h_r $h_w" ;; esac
  done
  printf '%s\n' "${h_r# }"
}
sch="--prune --dry-run --next --json --queue --table"
# shellcheck disable=SC2086
{
is "$(has "$(comp mq schedule --)" $sch)" "$sch" \
  "mq schedule --<TAB>: nothing typed narrows: every form's options"
is "$(has "$(comp mq schedule ls --)" $sch)" "--next --json --table" \
  "mq schedule ls --<TAB>: ls's options, not --prune --dry-run --queue"
is "$(comp mq schedule ls --pr)" "" "mq schedule ls --pr<TAB>: not --prune"
is "$(has "$(comp mq schedule apply --)" $sch)" "--prune --dry-run --table" \
  "mq schedule apply --<TAB>: apply's"
is "$(has "$(comp mq schedule fire --)" $sch)" "--queue --table" \
  "mq schedule fire --<TAB>: fire's"
is "$(has "$(comp mq schedule run x --)" $sch)" "--table" \
  "mq schedule run NAME --<TAB>: every form's only"
is "$(has "$(comp mq schedule --prune --)" $sch)" "--prune --dry-run --table" \
  "mq schedule --prune --<TAB>: an option narrows to its forms"
is "$(has "$(comp mq schedule --dr --)" $sch)" "--prune --dry-run --table" \
  "mq schedule --dr --<TAB>: an abbreviation too"
is "$(has "$(comp mq schedule -n3 -)" $sch)" "--next --json --table" \
  "mq schedule -n3 -<TAB>: a short option with its value"
is "$(has "$(comp mq schedule ls --prune --)" $sch)" "--table" \
  "mq schedule ls --prune --<TAB>: no form left: every form's only"
stream="--lines --null -0"
one="--every --cron --tz --name --missed --dedup --wait --timeout"
is "$(has "$(comp mq push -)" $stream $one --queue)" "$stream $one --queue" \
  "mq push -<TAB>: both forms' options"
is "$(has "$(comp mq push --lines -)" $stream $one --queue --key)" \
  "$stream --queue --key" "mq push --lines -<TAB>: not the single job's"
is "$(has "$(comp mq push -0 -)" $stream $one --quiet)" "$stream --quiet" \
  "mq push -0 -<TAB>: not the single job's"
is "$(has "$(comp mq push --every 1h -)" $stream $one --queue)" "$one --queue" \
  "mq push --every 1h -<TAB>: not --lines, -0, --null"
is "$(has "$(comp mq push --every = 1h -)" $stream $one)" "$one" \
  "mq push --every=1h -<TAB> (bash splits at =): the same"
# a payload typed: the single job's form (the stream takes no operand)
is "$(has "$(comp mq push hello -)" $stream $one --queue)" "$one --queue" \
  "mq push PAYLOAD -<TAB>: not --lines, -0, --null"
is "$(has "$(comp mq retry 5 --)" --all --queue --dry-run)" "--dry-run" \
  "mq retry ID --<TAB>: not the filters' --all, --queue"
}
is "$(has "$(comp mq limit q --clear --)" --clear --json --rate --clear-rate)" \
  "--clear --json" \
  "mq limit q --clear --<TAB>: --clear's form (not read as --clear-rate)"
is "$(comp mq push --lines --missed '')" "all once skip" \
  "values unchanged: --missed after --lines still completes its words"

# operands where the command takes them, and nowhere else (a further
# operand is a usage error); mq help takes no connection option
is "$(comp mq help -)" "--help -h" "mq help -<TAB>: its -h only, no connection option"
is "$(comp mq help stats '')" "" "mq help stats <TAB>: nothing (one COMMAND)"
is "$(comp mq completion bash '')" "" "mq completion bash <TAB>: nothing (one shell)"
is "$(comp mq schedule ls '')" "" "mq schedule ls <TAB>: nothing"
is "$(comp mq schedule fire '')" "" "mq schedule fire <TAB>: nothing"
is "$(comp mq schedule apply "$T_TMP/a-fi")" "$T_TMP/a-file.txt" \
  "mq schedule apply <TAB>: files"
is "$(comp mq schedule apply "$T_TMP/a-file.txt" '')" "" \
  "mq schedule apply FILE <TAB>: nothing"
is "$(comp mq limit q1 '')" "" "mq limit q1 <TAB>: nothing (one QUEUE)"
is "$(comp mq work --queue q1 true --exit)" "" \
  "mq work --queue q1 true --exit<TAB>: CMD's argument, not work's option"
# every command, from its usage line: where completion offers no further
# operand, mq refuses one (64; mq check: 3); where it still offers one
# after four, mq takes five (no usage error)
for c in $("$MQ" -h | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
  opnd() { # opnd N FIRST: what completes operand N of $c
    bash --norc --noprofile -c '. "$1"; _mq_operand "$2" "$3" "$4"; printf "%s" "$_mq_r"' \
      sh "$T_TMP/mq.bash" "$c" "$1" "$2"
  }
  firsts=$(opnd 0 '')
  case $firsts in
  words\ *) firsts=${firsts#words } ;;
  *) firsts=1 ;;
  esac
  for f in $firsts; do
    n=0
    ops=
    while [ -n "$(opnd $n "$f")" ] && [ $n -lt 5 ]; do
      if [ $n = 0 ]; then ops=$f; else ops="$ops 1"; fi
      n=$((n + 1))
    done
    want=64
    [ "$c" = check ] && want=3
    # shellcheck disable=SC2086
    run env MQ_SOCKET=/nonexistent "$MQ" $c $ops 1
    if [ $n -lt 5 ]; then
      is "$RC" "$want" "mq $c${ops:+ $ops} <TAB>: no operand offered, and one more is a usage error"
    else
      check "mq $c: operands without end, and mq $c $ops 1 takes them (status $RC)" \
        test "$RC" != "$want"
    fi
  done
done
# an option whose value is one of fixed words (A|B in -h) completes them
# (mq help -h is mq -h: mq's own options, before a command)
is "$(comp mq --host-order '')" "first random" "mq --host-order <TAB>: first random"
for c in $("$MQ" -h | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }' | grep -vx help); do
  "$MQ" "$c" -h | sed -n 's/^  \(-[a-zA-Z0-9], \)\{0,1\}\(--[-a-z0-9]*\) \([a-z-]*|[a-z|-]*\)\( .*\)\{0,1\}$/\2 \3/p' \
    >"$T_TMP/fixed"
  while read -r o words; do
    is "$(comp mq "$c" "$o" '')" "$(printf '%s\n' "$words" | tr '|' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" \
      "mq $c $o <TAB>: $words"
  done <"$T_TMP/fixed"
done

# queue names, from the server, through the connection settings of the
# environment (lib.sh's) and of the line
"$MQ" init >/dev/null
"$MQ" push --queue alpha a >/dev/null
"$MQ" push --queue beta b >/dev/null
"$MQ" --table other init >/dev/null
"$MQ" push --table other --queue gamma c >/dev/null
is "$(comp mq stats --queue '')" "alpha beta" \
  "mq stats --queue <TAB>: the table's queues"
is "$(comp mq pop --queue alpha,b)" "alpha,beta" \
  "mq pop --queue alpha,b<TAB>: the list's next queue"
is "$(comp mq pop --queue alpha,)" "alpha,beta" \
  "mq pop --queue alpha,<TAB>: not alpha again"
is "$(comp mq work --queue beta,alpha,)" "" \
  "mq work --queue beta,alpha,<TAB>: every queue named: nothing"
is "$(comp mq pause '')" "alpha beta" "mq pause <TAB>: queues"
is "$(comp mq stats --table other --queue '')" "gamma" \
  "--table other typed: that table's queues"
# a queue with no job that mq stats lists (paused, limited, all its
# jobs archived) is offered too (before: the job table's only)
"$MQ" --table third init >/dev/null
"$MQ" --table third push --queue gamma c >/dev/null
"$MQ" --table third pause delta >/dev/null
"$MQ" --table third limit epsilon --concurrency 2 >/dev/null
"$MQ" --table third push --queue zeta z >/dev/null
"$MQ" --table third pop --queue zeta --receipt-file "$T_TMP/r.zeta" >/dev/null
"$MQ" --table third ack "$(cat "$T_TMP/r.zeta")"
"$MQ" --table third archive --older-than 0s >/dev/null
is "$(comp mq --table third resume '')" "delta epsilon gamma zeta" \
  "queues without jobs that mq stats lists: offered"
is "$(comp mq --table third resume '')" "$(env MQ_TABLE=third "$MQ" stats --json | python3 -c 'import json, sys; print(" ".join(q["queue"] for q in json.load(sys.stdin)["queues"]))')" \
  "  as mq stats lists them"
is "$(comp mq --table other stats --queue '')" "gamma" \
  "--table other before the command: that table's queues"
is "$(comp mq stats --table = other --queue '')" "gamma" \
  "--table=other (split at =): that table's queues"
is "$(MQ_SOCKET=/nonexistent comp mq stats --socket "$MQ_TEST_SOCKET" \
  --queue '')" "alpha beta" "--socket typed: the server named on the line"
# calendar schedules' names, the same way
printf '[nightly]\ncron = @daily\nqueue = alpha\n[hourly]\ncron = @hourly\nqueue = alpha\n' >"$T_TMP/s.conf"
"$MQ" schedule apply "$T_TMP/s.conf" >/dev/null
is "$(comp mq ls --schedule '')" "hourly nightly" \
  "mq ls --schedule <TAB>: the table's schedules"
is "$(comp mq ls --schedule n)" "nightly" "mq ls --schedule n<TAB>: nightly"
is "$(comp mq schedule run '')" "hourly nightly" "mq schedule run <TAB>: the schedules"
is "$(comp mq schedule rm n)" "nightly" "mq schedule rm n<TAB>: nightly"
is "$(comp mq schedule run nightly '')" "" "mq schedule run NAME <TAB>: nothing"
is "$(comp mq ls --table other --schedule '')" "" \
  "--table other typed: that table's schedules (none)"
# queues named like options: offered as values, and as operands only
# after "--" (before it, mq pause -rf reads options); names fish's echo
# took for its own (-n, -e) offered too
"$MQ" --table dash init >/dev/null
for q in -rf -n -e mail; do "$MQ" push --table dash --queue "$q" x >/dev/null; done
is "$(comp mq pause --table dash '')" "mail" \
  "mq pause <TAB>: not -rf (an option there)"
is "$(comp mq pause --table dash -- '')" "-e -n -rf mail" \
  "mq pause -- <TAB>: every queue"
is "$(comp mq pop --table dash --queue '')" "-e -n -rf mail" \
  "mq pop --queue <TAB>: every queue (a value)"
is "$(comp mq stats --queue '')" "alpha beta" "  the queues are still the queues"

# no server: no queues, no error text, at once
t0=$(date +%s)
is "$(MQ_SOCKET=/nonexistent comp mq stats --queue '')" "" \
  "no server: no queue offered"
t1=$(date +%s)
is "$(cat "$T_TMP/comp.err")" "" "no server: nothing on stderr"
check "no server: done within 3 seconds ($((t1 - t0)) s)" \
  test $((t1 - t0)) -le 3
run env MQ_SOCKET=/nonexistent "$MQ" completion --queues
is "$RC:$OUT:$ERR" "0::" "completion --queues without a server: status 0, silent"
run "$MQ" completion --queues --table no_such_table
is "$RC:$OUT:$ERR" "0::" "completion --queues of a missing table: silent"

# ---- the settings every command reads, in the same precedence ----
# stats_queues [ENV...]: the queue names mq stats lists with those
# settings; queues [ENV...]: what completion --queues offers with them
stats_queues() {
  env "$@" "$MQ" stats --json 2>/dev/null |
    python3 -c 'import json, sys; print(" ".join(q["queue"] for q in json.load(sys.stdin)["queues"]))' 2>/dev/null
}
queues() {
  env "$@" "$MQ" completion --queues 2>&1 | tr '\n' ' ' | sed 's/ $//'
}
# a TCP port on 127.0.0.1 that relays to the test's server (which listens
# on its Unix socket only), so that MQ_HOST and MQ_PORT can be used
cat >"$T_TMP/relay.py" <<'PY'
import os, socket, sys, threading
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(16)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(lsock.getsockname()[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = lsock.accept()
    u = socket.socket(socket.AF_UNIX)
    u.connect(sys.argv[1])
    for a, b in ((c, u), (u, c)):
        threading.Thread(target=pump, args=(a, b), daemon=True).start()
PY
python3 "$T_TMP/relay.py" "$MQ_TEST_SOCKET" "$T_TMP/relay.port" &
relay=$!
i=0
while [ ! -s "$T_TMP/relay.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T_TMP/relay.port")
tcp="-u MQ_SOCKET MQ_HOST=127.0.0.1 MQ_PORT=$port"
# shellcheck disable=SC2086
is "$(stats_queues $tcp)" "alpha beta" "MQ_HOST, MQ_PORT: mq stats reads the table through TCP"
# shellcheck disable=SC2086
is "$(queues $tcp)" "alpha beta" "MQ_HOST, MQ_PORT: completion --queues offers the same"
is "$(MQ_SOCKET='' MQ_HOST=127.0.0.1 MQ_PORT=$port comp mq stats --queue '')" \
  "alpha beta" "MQ_HOST, MQ_PORT: TAB offers them"
is "$(queues MQ_TABLE=other)" "$(stats_queues MQ_TABLE=other)" "MQ_TABLE: as mq stats (gamma)"
is "$(queues MQ_TABLE=other)" "gamma" "... gamma"
sql_root "DROP DATABASE IF EXISTS \`${T_DB}_2\`; CREATE DATABASE \`${T_DB}_2\`"
MQ_DATABASE=${T_DB}_2 "$MQ" init >/dev/null
MQ_DATABASE=${T_DB}_2 "$MQ" push --queue delta d >/dev/null
is "$(queues MQ_DATABASE="${T_DB}_2")" "$(stats_queues MQ_DATABASE="${T_DB}_2")" \
  "MQ_DATABASE: as mq stats (delta)"
is "$(queues MQ_DATABASE="${T_DB}_2")" "delta" "... delta"
sql_root "DROP USER IF EXISTS t310_reader@localhost; CREATE USER t310_reader@localhost; GRANT SELECT ON \`${T_DB}_2\`.* TO t310_reader@localhost"
is "$(queues MQ_USER=t310_reader MQ_DATABASE="${T_DB}_2")" "delta" \
  "MQ_USER: a user of its own (granted ${T_DB}_2)"
is "$(queues MQ_USER=t310_reader)" "" "... who cannot read the test's table: nothing, silently"
is "$(queues MQ_SOCKET="$T_TMP/no-socket")" "" "MQ_SOCKET: the socket named (none there): nothing"
# an [mq] group under the environment, the line over both
printf '[client]\nport=1\n[mq]\nhost=127.0.0.1\nport=%s\nsocket=/nonexistent\n' "$port" >"$T_TMP/tcp.cnf"
is "$(queues -u MQ_SOCKET MQ_DEFAULTS_FILE="$T_TMP/tcp.cnf")" "alpha beta" \
  "an option file's [mq] host and port"
printf '[mq]\nhost=127.0.0.1\nport=1\n' >"$T_TMP/port1.cnf"
is "$(queues -u MQ_SOCKET MQ_DEFAULTS_FILE="$T_TMP/port1.cnf" MQ_PORT="$port")" "alpha beta" \
  "MQ_PORT over the option file's port"
is "$(env -u MQ_SOCKET MQ_HOST=127.0.0.1 MQ_PORT=1 "$MQ" completion --queues --port "$port" 2>&1 | tr '\n' ' ' | sed 's/ $//')" \
  "alpha beta" "--port typed over MQ_PORT"
run env MQ_PORT=0 "$MQ" completion --queues
is "$RC:$OUT:$ERR" "0::" "MQ_PORT=0 (invalid): status 0, silent"
run env MQ_TABLE=bad-name "$MQ" completion --queues
is "$RC:$OUT:$ERR" "0::" "MQ_TABLE=bad-name (invalid): status 0, silent"
kill "$relay"
wait "$relay" 2>/dev/null
sql_root "DROP USER t310_reader@localhost; DROP DATABASE \`${T_DB}_2\`"

# ---- never past two seconds: pipes nobody writes to ----
mkfifo "$T_TMP/fifo"
printf '[client]\n!include %s\n' "$T_TMP/fifo" >"$T_TMP/includes-fifo.cnf"
for how in "--defaults-file $T_TMP/fifo" "MQ_DEFAULTS_FILE=$T_TMP/fifo" \
    "--defaults-file $T_TMP/includes-fifo.cnf"; do
  case $how in
  --*) set -- "$MQ" completion --queues $how ;;
  *) set -- env "$how" "$MQ" completion --queues ;;
  esac
  what=$(printf '%s\n' "$how" | sed "s|$T_TMP/||")
  t0=$(date +%s)
  run timeout -s KILL 15 "$@"
  t1=$(date +%s)
  is "$RC:$OUT:$ERR" "0::" "$what (a pipe nobody writes to): status 0, silent"
  check "... within the bound ($((t1 - t0)) s)" test $((t1 - t0)) -le 3
done
t0=$(date +%s)
is "$(MQ_DEFAULTS_FILE=$T_TMP/fifo comp mq stats --queue '')" "" \
  "TAB with MQ_DEFAULTS_FILE a pipe nobody writes to: nothing offered"
t1=$(date +%s)
check "... and the shell is back within 3 s ($((t1 - t0)) s)" test $((t1 - t0)) -le 3
is "$(cat "$T_TMP/comp.err")" "" "... nothing on stderr"

# ---- the line's settings, as the shell would pass them to mq ----
# (issue 28: ~, $HOME, quotes and abbreviations were passed as typed, or
# dropped; mq stats, given the same words, lists the queues.) The option
# file names the server; nothing in the environment does.
mkdir "$T_TMP/home"
printf '[client]\nsocket=%s\nuser=root\ndatabase=%s\n' "$MQ_TEST_SOCKET" "$T_DB" \
  >"$T_TMP/home/x.cnf"
cp "$T_TMP/home/x.cnf" "$T_TMP/sp ace.cnf"
me=$(id -un)
me_home=$(getent passwd "$me" | cut -d: -f6)
me_cnf=.mq-t310-$$.cnf
trap 'rm -f "$me_home/$me_cnf"; t_cleanup' EXIT
cp "$T_TMP/home/x.cnf" "$me_home/$me_cnf"
noenv="-u MQ_SOCKET -u MQ_USER -u MQ_DATABASE HOME=$T_TMP/home"
# shellcheck disable=SC2086
is "$(env $noenv "$MQ" stats --def "$T_TMP/home/x.cnf" --json | python3 -c 'import json, sys; print(" ".join(q["queue"] for q in json.load(sys.stdin)["queues"]))')" \
  "alpha beta" "mq stats --def FILE (an abbreviation) lists alpha and beta"
# bcomp WORD...: comp with the server named by the file only
bcomp() {
  (unset MQ_SOCKET MQ_USER MQ_DATABASE; HOME=$T_TMP/home; export HOME; comp "$@")
}
rm -f "$T_TMP/pwned"
for line in "~/x.cnf" "\$HOME/x.cnf" "\${HOME}/x.cnf" "'$T_TMP/sp ace.cnf'" \
    "\"$T_TMP/sp ace.cnf\"" "$(printf '%s' "$T_TMP/sp ace.cnf" | sed 's/ /\\ /')" \
    "~$me/$me_cnf"; do
  is "$(bcomp mq stats --defaults-file "$line" --queue '')" "alpha beta" \
    "bash: mq stats --defaults-file $(printf '%s' "$line" | sed "s|$T_TMP|T|") --queue <TAB>"
done
is "$(bcomp mq stats --def "~/x.cnf" --queue '')" "alpha beta" \
  "bash: --def ~/x.cnf (an abbreviation, as mq accepts it)"
is "$(bcomp mq --def "\$HOME/x.cnf" stats --queue '')" "alpha beta" \
  "bash: --def \$HOME/x.cnf before the command"
is "$(bcomp mq stats --defaults-file = "\$HOME/x.cnf" --queue = '')" "alpha beta" \
  "bash: --defaults-file=\$HOME/x.cnf --queue=<TAB> (split at =)"
is "$(bcomp mq pause --def "~/x.cnf" '')" "alpha beta" \
  "bash: mq pause --def ~/x.cnf <TAB>: an operand"
is "$(bcomp mq stats --defaults-file "~/x.cnf" --table "\$(touch $T_TMP/pwned)" --queue '')" "" \
  "bash: a \$(command) on the line: nothing offered (the table is none)"
is "$(bcomp mq stats --defaults-file "\$(touch $T_TMP/pwned)" --queue '')" "" \
  "bash: --defaults-file \$(command): nothing offered"
is "$(bcomp mq stats --defaults-file "\`touch $T_TMP/pwned\`" --queue '')" "" \
  "bash: --defaults-file \`command\`: nothing offered"
check "bash: ... and the command was not run" test ! -e "$T_TMP/pwned"
# what mq itself makes of the words: its parser, its errors quiet
run "$MQ" completion --queues -- stats -h
is "$RC:$OUT:$ERR" "0::" "completion --queues -- stats -h: no help text for names, status 0"
run "$MQ" completion --queues -- stats --no-such-option
is "$RC:$OUT:$ERR" "0::" "... an option mq stats refuses: nothing, status 0"
run "$MQ" completion --queues -- no-such-command
is "$RC:$OUT:$ERR" "0::" "... a command mq does not know: nothing, status 0"
run "$MQ" completion --queues -- check --port 0
is "$RC:$OUT:$ERR" "0::" "... mq check's usage error (its UNKNOWN line): nothing, status 0"
# shellcheck disable=SC2086
run env $noenv "$MQ" completion --queues -- --def "$T_TMP/home/x.cnf" stats --queue
is "$RC:$OUT:$ERR" "0:alpha
beta:" "... mq's options, the command's, the one being completed last"

expect_status 64 "an unknown shell" "$MQ" completion tcsh
expect_status 64 "no shell" "$MQ" completion

# zsh and fish (tests/deps.sh installs both)
if command -v zsh >/dev/null 2>&1; then
  "$MQ" completion zsh >"$T_TMP/_mq"
  check "zsh -n accepts the zsh script" zsh -n "$T_TMP/_mq"
  check "the zsh script is a #compdef function" \
    grep -q '^#compdef mq$' "$T_TMP/_mq"
  # the words zsh offers after mq: every command once, described (a
  # quote in a summary once split them into stray words)
  is "$(zsh -f -c 'compdef() { :; }; source "$1"; print -l $_mq_command_descs' zsh "$T_TMP/_mq" |
    sed 's/:.*//' | tr '\n' ' ')" "$("$MQ" -h | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { printf "%s ", $1 }')" \
    "zsh offers the commands of mq -h (help included), each once"
  # zcomp WORD...: what _mq offers for the last word, the words as zsh
  # hands them to a completion function (as typed, quotes kept), the
  # server named by the option file only; compadd and compset stubbed
  zcomp() {
    (unset MQ_SOCKET MQ_USER MQ_DATABASE; HOME=$T_TMP/home; export HOME
    timeout -s KILL 15 zsh -f -c '
      compdef() { :; }
      compset() { :; }
      _message() { :; }
      compadd() {
        local a=
        while [[ $1 == -* ]]; do
          [[ $1 == -a ]] && { shift; a=$1; }
          [[ $1 == -- ]] && { shift; break; }
          shift
        done
        if [[ -n $a ]]; then print -lr -- ${(P)a}; else print -lr -- "$@"; fi
      }
      source "$1"; shift
      words=("$@"); CURRENT=$#; PREFIX=$words[-1]
      _mq' zsh "$T_TMP/_mq" "$@" 2>"$T_TMP/comp.err") |
      sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
  }
  is "$(MQ_SOCKET=/nonexistent zcomp mq stats --queue '')" "" "zsh: no server named: nothing (the test's baseline)"
  for line in "~/x.cnf" "\$HOME/x.cnf" "\${HOME}/x.cnf" "'$T_TMP/sp ace.cnf'" \
      "\"$T_TMP/sp ace.cnf\"" "$(printf '%s' "$T_TMP/sp ace.cnf" | sed 's/ /\\ /')" \
      "~$me/$me_cnf"; do
    is "$(zcomp mq stats --defaults-file "$line" --queue '')" "alpha beta" \
      "zsh: mq stats --defaults-file $(printf '%s' "$line" | sed "s|$T_TMP|T|") --queue <TAB>"
  done
  is "$(zcomp mq stats --def "~/x.cnf" --queue '')" "alpha beta" \
    "zsh: --def ~/x.cnf (an abbreviation)"
  is "$(zcomp mq pop --def "~/x.cnf" --queue alpha,)" "beta" \
    "zsh: mq pop --queue alpha,<TAB>: not alpha again"
  is "$(zcomp mq ls --state ready,done,)" "archived dead invalid leased scheduled stale waiting" \
    "zsh: mq ls --state ready,done,<TAB>: the states not given"
  check "zsh: mq work -- <TAB>: external commands only (_command_names -e)" \
    grep -q 'program) _command_names -e ;;' "$T_TMP/_mq"
  is "$(zcomp mq --def "\$HOME/x.cnf" stats --queue '')" "alpha beta" \
    "zsh: --def \$HOME/x.cnf before the command"
  is "$(zcomp mq stats "--defaults-file=~/x.cnf" --queue '')" "" \
    "zsh: --defaults-file=~/x.cnf (zsh leaves that ~, and mq stats fails): nothing"
  is "$(zcomp mq stats "--defaults-file=\$HOME/x.cnf" --queue '')" "alpha beta" \
    "zsh: --defaults-file=\$HOME/x.cnf"
  is "$(zcomp mq pause --def "~/x.cnf" '')" "alpha beta" "zsh: mq pause --def ~/x.cnf <TAB>"
  is "$(zcomp mq ls --def "~/x.cnf" --schedule '')" "hourly nightly" \
    "zsh: mq ls --def ~/x.cnf --schedule <TAB>: the schedules"
  is "$(zcomp mq stats --defaults-file "\$(touch $T_TMP/pwned)" --queue '')" "" \
    "zsh: --defaults-file \$(command): nothing offered"
  is "$(zcomp mq stats --defaults-file "~/x.cnf" --table "\`touch $T_TMP/pwned\`" --queue '')" "" \
    "zsh: --table \`command\`: nothing offered"
  check "zsh: ... and the command was not run" test ! -e "$T_TMP/pwned"
  # operands where the command takes them only, values from the tables
  is "$(zcomp mq help -)" "--help -h" "zsh: mq help -<TAB>: no connection option"
  is "$(zcomp mq help stats '')" "" "zsh: mq help stats <TAB>: nothing"
  is "$(zcomp mq completion bash '')" "" "zsh: mq completion bash <TAB>: nothing"
  is "$(zcomp mq schedule ls '')" "" "zsh: mq schedule ls <TAB>: nothing"
  is "$(zcomp mq schedule --def "~/x.cnf" run '')" "hourly nightly" \
    "zsh: mq schedule run <TAB>: the schedules"
  is "$(zcomp mq pause --def "~/x.cnf" alpha '')" "" "zsh: mq pause alpha <TAB>: nothing"
  is "$(zcomp mq work --queue q1 true --exit)" "" \
    "zsh: mq work --queue q1 true --exit<TAB>: not work's option"
  is "$(zcomp mq --host-order '')" "first random" "zsh: mq --host-order <TAB>"
  is "$(zcomp mq push --if-parent-dies '')" "cancel run wait" \
    "zsh: mq push --if-parent-dies <TAB>"
  is "$(zcomp mq pause --def "~/x.cnf" --table dash '')" "mail" \
    "zsh: mq pause <TAB>: not -rf (an option there)"
  is "$(zcomp mq pause --def "~/x.cnf" --table dash -- '')" "-e -n -rf mail" \
    "zsh: mq pause -- <TAB>: every queue"
  is "$(zcomp mq pop --def "~/x.cnf" --table dash --queue '')" "-e -n -rf mail" \
    "zsh: mq pop --queue <TAB>: every queue (a value)"
  # the options of the usage forms still possible, as bash offers them
  # shellcheck disable=SC2086
  {
  is "$(has "$(zcomp mq schedule --)" $sch)" "$sch" \
    "zsh: mq schedule --<TAB>: every form's options"
  is "$(has "$(zcomp mq schedule ls --)" $sch)" "--next --json --table" \
    "zsh: mq schedule ls --<TAB>: ls's options, not --prune --dry-run --queue"
  is "$(has "$(zcomp mq schedule --prune --)" $sch)" "--prune --dry-run --table" \
    "zsh: mq schedule --prune --<TAB>: apply's"
  is "$(has "$(zcomp mq schedule fire --)" $sch)" "--queue --table" \
    "zsh: mq schedule fire --<TAB>: fire's"
  is "$(has "$(zcomp mq schedule --next=3 -)" $sch)" "--next --json --table" \
    "zsh: mq schedule --next=3 -<TAB>: ls's"
  is "$(has "$(zcomp mq push --lines -)" $stream $one --queue)" "$stream --queue" \
    "zsh: mq push --lines -<TAB>: not the single job's"
  is "$(has "$(zcomp mq push --every 1h -)" $stream $one)" "$one" \
    "zsh: mq push --every 1h -<TAB>: not --lines, -0, --null"
  is "$(has "$(zcomp mq push hello -)" $stream $one)" "$one" \
    "zsh: mq push PAYLOAD -<TAB>: not --lines, -0, --null"
  is "$(has "$(zcomp mq limit q --clear --)" --clear --json --rate --clear-rate)" \
    "--clear --json" "zsh: mq limit q --clear --<TAB>: --clear's form"
  is "$(zcomp mq push --lines --missed '')" "all once skip" \
    "zsh: values unchanged: --missed after --lines"
  }
else
  ok "zsh -n accepts the zsh script # SKIP zsh not installed"
  ok "the zsh script is a #compdef function # SKIP zsh not installed"
  ok "zsh offers the commands of mq -h, each once # SKIP zsh not installed"
  for i in $(seq 40); do ok "zsh: the line's settings # SKIP zsh not installed"; done
fi
if command -v fish >/dev/null 2>&1; then
  "$MQ" completion fish >"$T_TMP/mq.fish"
  check "fish -n accepts the fish script" fish -n "$T_TMP/mq.fish"
  run fish --no-config -c 'source $argv[1]; complete -C "mq po"' "$T_TMP/mq.fish"
  like "$OUT" "pop*" "fish: mq po<TAB> lists pop"
  run fish --no-config -c 'source $argv[1]; complete -C "mq pop --claim "' \
    "$T_TMP/mq.fish"
  like "$(printf '%s\n' "$OUT" | cut -f1 | sort | tr '\n' ' ')" \
    "skip-locked update " "fish: mq pop --claim <TAB> lists its values"
  run fish --no-config -c 'source $argv[1]; complete -C "mq stats --table other --queue "' \
    "$T_TMP/mq.fish"
  is "$(printf '%s\n' "$OUT" | cut -f1 | tr '\n' ' ')" "gamma " \
    "fish: --table other typed: that table's queues"
  # fcomp LINE: what fish offers at the end of LINE, the server named by
  # the option file only
  fcomp() {
    (unset MQ_SOCKET MQ_USER MQ_DATABASE; HOME=$T_TMP/home; export HOME
    timeout -s KILL 15 fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
      "$T_TMP/mq.fish" "$1" 2>"$T_TMP/comp.err") |
      cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'
  }
  for line in "~/x.cnf" "\$HOME/x.cnf" "{\$HOME}/x.cnf" "'$T_TMP/sp ace.cnf'" \
      "\"$T_TMP/sp ace.cnf\"" "$(printf '%s' "$T_TMP/sp ace.cnf" | sed 's/ /\\ /')" \
      "~$me/$me_cnf"; do
    is "$(fcomp "mq stats --defaults-file $line --queue ")" "alpha beta" \
      "fish: mq stats --defaults-file $(printf '%s' "$line" | sed "s|$T_TMP|T|") --queue <TAB>"
  done
  is "$(fcomp "mq ls --def ~/x.cnf --schedule ")" "hourly nightly" \
    "fish: mq ls --def ~/x.cnf --schedule <TAB>: the schedules"
  is "$(fcomp "mq stats --def ~/x.cnf --queue ")" "alpha beta" \
    "fish: --def ~/x.cnf (an abbreviation)"
  is "$(fcomp "mq --def \$HOME/x.cnf stats --queue ")" "alpha beta" \
    "fish: --def \$HOME/x.cnf before the command"
  is "$(fcomp "mq stats --defaults-file=\$HOME/x.cnf --queue ")" "alpha beta" \
    "fish: --defaults-file=\$HOME/x.cnf"
  is "$(fcomp "mq pause --def ~/x.cnf ")" "alpha beta" "fish: mq pause --def ~/x.cnf <TAB>"
  is "$(fcomp "mq stats --defaults-file \$(touch $T_TMP/pwned) --queue ")" "" \
    "fish: --defaults-file \$(command): nothing offered"
  is "$(fcomp "mq stats --defaults-file ~/x.cnf --table (touch $T_TMP/pwned) --queue ")" "" \
    "fish: --table (command): nothing offered"
  check "fish: ... and the command was not run" test ! -e "$T_TMP/pwned"
  is "$(fcomp "mq pop --def ~/x.cnf --queue alpha,")" "alpha,beta" \
    "fish: mq pop --queue alpha,<TAB>: not alpha again"
  is "$(fcomp "mq ls --state ready,done,d")" "ready,done,dead" \
    "fish: mq ls --state ready,done,d<TAB>: not done again"
  is "$(fcomp "mq pause --def ~/x.cnf --table dash ")" "mail" \
    "fish: mq pause <TAB>: not -rf (an option there)"
  is "$(fcomp "mq pause --def ~/x.cnf --table dash -- ")" "-e -n -rf mail" \
    "fish: mq pause -- <TAB>: every queue"
  is "$(fcomp "mq pop --def ~/x.cnf --table dash --queue ")" "-e -n -rf mail" \
    "fish: mq pop --queue <TAB>: every queue (fish's echo took -n and -e for its options)"
  is "$(fcomp "mq pop --def ~/x.cnf --table dash --queue=mail,")" "--queue=mail,-e --queue=mail,-n --queue=mail,-rf" \
    "fish: mq pop --queue=mail,<TAB>: not mail again"
  is "$(fcomp "mq schedule -n 3 ")" "apply fire ls rm run" \
    "fish: mq schedule -n 3 <TAB>: -n takes its value (was read by echo)"
  is "$(fcomp "mq work -- whil")" "" "fish: mq work -- whil<TAB>: no keyword"
  is "$(fcomp "mq work -- __mq")" "" "fish: mq work -- __mq<TAB>: not the script's functions"
  like " $(fcomp "mq work -- ech") " "* echo *" "fish: mq work -- ech<TAB>: echo"
  # options where the command takes them, operands where it takes them
  is "$(fcomp "mq help -")" "--help -h" "fish: mq help -<TAB>: no connection option"
  is "$(fcomp "mq completion --ta")" "--table" "fish: mq completion --ta<TAB>: it takes them"
  is "$(fcomp "mq help stats ")" "" "fish: mq help stats <TAB>: nothing"
  is "$(fcomp "mq completion bash ")" "" "fish: mq completion bash <TAB>: nothing"
  is "$(fcomp "mq schedule ls ")" "" "fish: mq schedule ls <TAB>: nothing"
  is "$(fcomp "mq schedule --def ~/x.cnf run ")" "hourly nightly" \
    "fish: mq schedule run <TAB>: the schedules"
  is "$(fcomp "mq pause --def ~/x.cnf alpha ")" "" "fish: mq pause alpha <TAB>: nothing"
  is "$(fcomp "mq limit --def ~/x.cnf alpha ")" "" "fish: mq limit alpha <TAB>: nothing"
  is "$(fcomp "mq work --queue q1 true --exit")" "" \
    "fish: mq work --queue q1 true --exit<TAB>: not work's option"
  is "$(fcomp "mq work --queue q1 --exit")" "--exit-when-empty" \
    "fish: mq work --queue q1 --exit<TAB>: before CMD it is"
  is "$(fcomp "mq --host-order ")" "first random" "fish: mq --host-order <TAB>"
  is "$(fcomp "mq push --if-parent-dies ")" "cancel run wait" \
    "fish: mq push --if-parent-dies <TAB>"
  # the options of the usage forms still possible, as bash offers them
  # shellcheck disable=SC2086
  {
  is "$(has "$(fcomp "mq schedule --")" $sch)" "$sch" \
    "fish: mq schedule --<TAB>: every form's options"
  is "$(has "$(fcomp "mq schedule ls --")" $sch)" "--next --json --table" \
    "fish: mq schedule ls --<TAB>: ls's options, not --prune --dry-run --queue"
  is "$(has "$(fcomp "mq schedule --dr --")" $sch)" "--prune --dry-run --table" \
    "fish: mq schedule --dr --<TAB>: apply's (an abbreviation)"
  is "$(has "$(fcomp "mq schedule fire --")" $sch)" "--queue --table" \
    "fish: mq schedule fire --<TAB>: fire's"
  is "$(has "$(fcomp "mq schedule -n3 -")" $sch)" "--next --json --table" \
    "fish: mq schedule -n3 -<TAB>: ls's"
  is "$(has "$(fcomp "mq push --lines -")" $stream $one --queue)" "$stream --queue" \
    "fish: mq push --lines -<TAB>: not the single job's"
  is "$(has "$(fcomp "mq push --every=1h -")" $stream $one)" "$one" \
    "fish: mq push --every=1h -<TAB>: not --lines, -0, --null"
  is "$(has "$(fcomp "mq push hello -")" $stream $one)" "$one" \
    "fish: mq push PAYLOAD -<TAB>: not --lines, -0, --null"
  is "$(has "$(fcomp "mq limit q --clear --")" --clear --json --rate --clear-rate)" \
    "--clear --json" "fish: mq limit q --clear --<TAB>: --clear's form"
  is "$(fcomp "mq push --lines --missed ")" "all once skip" \
    "fish: values unchanged: --missed after --lines"
  is "$(fcomp "mq push --lines --missed=o")" "--missed=once" \
    "fish: values unchanged: --missed=o after --lines"
  }
else
  for d in "fish -n" "fish: mq po" "fish: --claim" "fish: queues"; do
    ok "$d # SKIP fish not installed"
  done
  for i in $(seq 46); do ok "fish: the line's settings # SKIP fish not installed"; done
fi
done_testing
