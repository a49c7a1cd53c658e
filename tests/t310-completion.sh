#!/bin/sh
# mq completion: the bash script completes commands, options, fixed values
# and the queues of the right table, as a user's TAB would, without the
# bash-completion package; no server means no queues, quietly and at once.
# The zsh and fish scripts parse, and fish completes a command name.
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
# splits the line), sorted, on one line; stderr to $T_TMP/comp.err
comp() {
  bash --norc --noprofile -c '
    . "$1" || exit 1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
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
is "$(comp mq completion '')" "bash fish zsh" "mq completion <TAB>: shells"
is "$(comp mq help wo)" "work" "mq help wo<TAB>: work"
like " $(comp mq push -) " "* -0 *" "mq push -<TAB> offers -0"
: >"$T_TMP/a-file.txt"
is "$(comp mq pop -o "$T_TMP/a-fi")" "$T_TMP/a-file.txt" \
  "mq pop -o <TAB>: files"
like " $(comp mq work -- ech) " "* echo *" "mq work -- <TAB>: commands"
is "$(comp mq pop --shell --count '')" "" "a number: nothing offered"

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
is "$(comp mq pause '')" "alpha beta" "mq pause <TAB>: queues"
is "$(comp mq stats --table other --queue '')" "gamma" \
  "--table other typed: that table's queues"
is "$(comp mq --table other stats --queue '')" "gamma" \
  "--table other before the command: that table's queues"
is "$(comp mq stats --table = other --queue '')" "gamma" \
  "--table=other (split at =): that table's queues"
is "$(MQ_SOCKET=/nonexistent comp mq stats --socket "$MQ_TEST_SOCKET" \
  --queue '')" "alpha beta" "--socket typed: the server named on the line"

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
    sed 's/:.*//' | tr '\n' ' ')" "$("$MQ" -h | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { printf "%s ", $1 }')help " \
    "zsh offers the commands of mq -h, each once"
else
  ok "zsh -n accepts the zsh script # SKIP zsh not installed"
  ok "the zsh script is a #compdef function # SKIP zsh not installed"
  ok "zsh offers the commands of mq -h, each once # SKIP zsh not installed"
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
else
  for d in "fish -n" "fish: mq po" "fish: --claim" "fish: queues"; do
    ok "$d # SKIP fish not installed"
  done
fi
done_testing
