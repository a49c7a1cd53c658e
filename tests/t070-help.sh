#!/bin/sh
# -h of every command equals its man page's SYNOPSIS; the options of its
# table (mq completion --options) are those -h lists and those its man
# page documents (the connection options once, in mq(1)); help and
# version never touch the database.
. "$(dirname "$0")/lib.sh"
MAN=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}/man

synopsis_of_page() { # the SYNOPSIS paragraphs of an scdoc page, unmarked
  awk '/^# SYNOPSIS/ { on = 1; next } /^#/ { on = 0 } on && NF' "$1" |
    tr -d '*_' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}
options_of_page() { # OPTIONS FILE: the options documented in a section
  awk -v s="# $1" '$0 == s { on = 1; next } /^#/ { on = 0 } on && /^\*-/' "$2" |
    grep -o '\*-[-a-zA-Z0-9]*\*' | tr -d '*' | sort -u
}
options_of_help() { # the options -h lists
  sed -n '/^options:/,$p' | grep '^  -' | sed 's/^  //; s/  .*//' |
    tr ',' '\n' | awk '$1 ~ /^-/ { print $1 }' | sort -u
}
CONN=$(options_of_page "CONNECTION OPTIONS" "$MAN/mq.1.scd")

synopsis_of_help() { # the usage lines of -h output
  sed '/^$/q' | sed '/^$/d; s/^usage: //; s/^       //' |
    sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

# every command mq -h lists (a new one is checked without a word here)
cmds=$("$MQ" -h | awk '/^commands:/ { on = 1; next } on && !NF { exit }
  on { print $1 }')
check "mq -h lists the commands (21 or more)" test "$(printf '%s\n' "$cmds" | wc -l)" -ge 21
for cmd in mq $cmds; do
  page=$MAN/mq-$cmd.1.scd
  want=$(synopsis_of_page "$page" 2>/dev/null)
  case $cmd in
  mq) page=$MAN/mq.1.scd want=$(synopsis_of_page "$page") ;;
  # one page for both: pause's form first, resume's second
  pause) page=$MAN/mq-pause.1.scd want=$(synopsis_of_page "$page" | sed -n 1p) ;;
  resume) page=$MAN/mq-pause.1.scd want=$(synopsis_of_page "$page" | sed -n 2p) ;;
  esac
  if [ "$cmd" = mq ]; then
    run env MQ_SOCKET=/nonexistent "$MQ" -h
  else
    run env MQ_SOCKET=/nonexistent "$MQ" "$cmd" -h
  fi
  is "$RC" 0 "$cmd -h exits 0 without a server"
  if [ -f "$page" ]; then
    is "$(printf '%s\n' "$OUT" | synopsis_of_help)" "$want" \
      "$cmd -h matches the SYNOPSIS of $(basename "$page")"
  else
    not_ok "$(basename "$page") exists"
  fi
  # the table, -h's option list and the man page: the same options
  helped=$(printf '%s\n' "$OUT" | options_of_help)
  if [ "$cmd" = mq ]; then
    table=$(env MQ_SOCKET=/nonexistent "$MQ" completion --options | sort -u)
    documented=$({ options_of_page "GLOBAL OPTIONS" "$page"
      printf '%s\n' "$CONN"; } | sort -u)
  else
    table=$(env MQ_SOCKET=/nonexistent "$MQ" completion --options "$cmd" |
      sort -u)
    documented=$({ options_of_page OPTIONS "$page"
      grep -q '_CONNECTION-OPTIONS_' "$page" && printf '%s\n' "$CONN"; } |
      sort -u)
  fi
  like "$table" "--*" "$cmd: its table has options"
  is "$helped" "$table" "$cmd: -h lists the options of its table"
  is "$documented" "$table" \
    "$cmd: $(basename "$page") documents the options of its table"
  if [ "$cmd" = mq ]; then
    run env MQ_SOCKET=/nonexistent "$MQ" --help
  else
    run env MQ_SOCKET=/nonexistent "$MQ" "$cmd" --help
  fi
  is "$RC" 0 "$cmd --help exits 0"
  # every command is in mq -h and in mq(1)
  if [ "$cmd" != mq ]; then
    check "mq -h lists $cmd" sh -c '"$0" -h | grep -q "^  $1 "' "$MQ" "$cmd"
    check "mq(1) lists $cmd" grep -q "mq-$cmd\|mq $cmd\|\*$cmd\*" "$MAN/mq.1.scd"
  fi
done
run env MQ_SOCKET=/nonexistent "$MQ" help pop
is "$RC:$(printf '%s\n' "$OUT" | head -1 | cut -c1-14)" "0:usage: mq pop " "mq help pop is mq pop -h"
for h in help -h; do
  run env MQ_SOCKET=/nonexistent "$MQ" help $h
  is "$RC:$(printf '%s\n' "$OUT" | head -1 | cut -c1-14)" "0:usage: mq [-h " "mq help $h is mq -h"
done
expect_status 64 "mq help takes one command at most" env MQ_SOCKET=/nonexistent "$MQ" help pop x
run env MQ_SOCKET=/nonexistent "$MQ" --version
like "$RC:$OUT" "0:mq [0-9]*.[0-9]*.[0-9]*" "--version prints the version"
run env MQ_SOCKET=/nonexistent "$MQ" -V
is "$RC" 0 "-V exits 0"
for page in "$MAN"/*.scd; do
  if command -v scdoc >/dev/null 2>&1; then
    check "$(basename "$page") renders with scdoc" sh -c 'scdoc <"$0" >/dev/null' "$page"
  fi
  check "$(basename "$page") has an EXIT STATUS or is a file format or the data model" \
    sh -c 'grep -q "^# EXIT STATUS" "$0" || case "$0" in *.[57].scd) true ;; *) false ;; esac' "$page"
done
done_testing
