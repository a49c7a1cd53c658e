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
# help is a command of its own (mq help COMMAND), in mq -h and mq(1),
# but has no page nor option table: checked here, not in the loop
check "mq -h lists help" sh -c 'printf "%s\n" "$0" | grep -qx help' "$cmds"
check "mq -h lists help last" test "$(printf '%s\n' "$cmds" | tail -1)" = help
check "mq(1) lists help among the commands" grep -qx '\*help\*' "$MAN/mq.1.scd"
cmds=$(printf '%s\n' "$cmds" | grep -vx help)
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
# mq help parses its words as every command does: an unknown option is
# the one-line usage error naming it, "--" ends the options, and it takes
# no connection option (it never connects)
run env MQ_SOCKET=/nonexistent "$MQ" help --bogus
is "$RC:$ERR" "64:mq help: unknown option '--bogus' (see 'mq help -h')" \
  "mq help --bogus: the unknown-option line, 64"
run env MQ_SOCKET=/nonexistent "$MQ" help -- stats
is "$RC:$(printf '%s\n' "$OUT" | head -1 | cut -d" " -f1-3)" "0:usage: mq stats" \
  "mq help -- stats: -- ends the options (mq stats -h)"
run env MQ_SOCKET=/nonexistent "$MQ" help --table t stats
is "$RC:$ERR" "64:mq help: unknown option '--table' (see 'mq help -h')" \
  "mq help --table t stats: no connection option, 64 naming it"
run env MQ_SOCKET=/nonexistent "$MQ" help --help
is "$RC:$(printf '%s\n' "$OUT" | head -1 | cut -c1-14)" "0:usage: mq [-h " "mq help --help is mq -h"
# mq(1) ARGUMENT ORDER: a command's options and operands come in any
# order; no page says its operands must come after the options (five did)
for page in "$MAN"/*.scd; do
  if grep -Eiq 'must come after the options|options must come before' "$page"; then
    not_ok "$(basename "$page"): no operand order against mq(1) ARGUMENT ORDER" \
      "$(grep -Ein 'must come after the options|options must come before' "$page")"
  fi
done
check "no page orders operands after the options (mq(1) ARGUMENT ORDER)" \
  sh -c '! grep -Eiq "must come after the options|options must come before" "$@"' sh "$MAN"/*.scd
# the version is meson's project version, whole
version=$(sed -n "s/^project('mq'.* version: '\([^']*\)'.*/\1/p" "$MAN/../meson.build")
run env MQ_SOCKET=/nonexistent "$MQ" --version
is "$RC:$OUT:$ERR" "0:mq $version:" "--version prints mq $version, meson's project version"
run env MQ_SOCKET=/nonexistent "$MQ" -V
is "$RC:$OUT" "0:mq $version" "-V is --version"
check "mq -h lists --version" sh -c '"$0" -h | grep -q "^  -V, --version "' "$MQ"
check "mq(1) documents --version" grep -q '^\*-V\*, \*--version\*$' "$MAN/mq.1.scd"
for page in "$MAN"/*.scd; do
  if command -v scdoc >/dev/null 2>&1; then
    check "$(basename "$page") renders with scdoc" sh -c 'scdoc <"$0" >/dev/null' "$page"
  fi
  check "$(basename "$page") has an EXIT STATUS or is a file format or the data model" \
    sh -c 'grep -q "^# EXIT STATUS" "$0" || case "$0" in *.[57].scd) true ;; *) false ;; esac' "$page"
done
# every page's EXIT STATUS lists its statuses in ascending order (128+N
# as 128)
for page in "$MAN"/*.scd; do
  nums=$(awk '/^# EXIT STATUS/ { on = 1; next } /^# / { on = 0 }
    on && /^\*[0-9]+/ { match($0, /[0-9]+/); print substr($0, RSTART, RLENGTH) }' "$page")
  is "$(printf '%s\n' "$nums" | tr '\n' ' ')" "$(printf '%s\n' "$nums" | sort -n | tr '\n' ' ')" \
    "$(basename "$page"): EXIT STATUS in ascending order"
done
# SEE ALSO: mq(1) names every other page; every mq-*(N) page names mq(1);
# no page, README or doc/ names an mq page that does not exist
see_also() {
  awk '/^# SEE ALSO/ { on = 1; next } /^# / { on = 0 } on' "$1" |
    grep -o '\*mq[-a-z]*\*([0-9])' | tr -d '*' | sort -u
}
pages=$(cd "$MAN" && ls mq-*.[0-9].scd mq-*.[0-9] 2>/dev/null |
  sed 's/\.scd$//; s/\.\([0-9]\)$/(\1)/' | sort -u)
check "man/ has 20 pages or more besides mq(1)" test "$(printf '%s\n' "$pages" | wc -l)" -ge 20
is "$(printf '%s\n' "$pages" | while read -r pg; do see_also "$MAN/mq.1.scd" | grep -qxF "$pg" || echo "$pg"; done)" "" \
  "mq(1) SEE ALSO names every mq-* page"
for page in "$MAN"/mq-*.scd; do
  check "$(basename "$page"): SEE ALSO names mq(1)" sh -c 'printf "%s\n" "$1" | grep -qxF "mq(1)"' _ "$(see_also "$page")"
done
SRC=${MQ_SOURCE_ROOT:-$TESTS_DIR/..}
is "$(grep -oh 'mq-[a-z-]*[a-z]\**([1-9])' "$MAN"/*.scd "$SRC/README.md" "$SRC"/doc/*.md |
  tr -d '*' | sort -u | while read -r ref; do
    name=${ref%(*}; sec=${ref#*(}; sec=${sec%)}
    [ -f "$MAN/$name.$sec.scd" ] || [ -f "$MAN/$name.$sec" ] || echo "$ref"
  done)" "" "every mq page the pages, README and doc/ name exists"
# the README's documentation list names every page (mq-resume(1) is
# mq-pause(1)'s) and links every guide of doc/
readme_docs=$(awk '/^## Documentation/ { on = 1; next } /^## / { on = 0 } on' "$SRC/README.md")
is "$(printf '%s\n' "$pages" | grep -vx 'mq-resume(1)' | while read -r pg; do
    printf '%s\n' "$readme_docs" | tr '\n' ' ' | grep -qF "$pg" || echo "$pg"; done)" "" \
  "the README's documentation list names every mq-* page"
is "$(cd "$SRC" && for d in doc/*.md; do
    printf '%s\n' "$readme_docs" | grep -qF "]($d)" || echo "$d"; done)" "" \
  "the README's documentation list links every doc/*.md"
# cron and systemd examples (man pages, README, doc/): mq by its full
# path, as cron's PATH (/usr/bin:/bin) has no /usr/local/bin
CRON_OR_UNIT='^[[:space:]]*(#[^:]*:[[:space:]]*)?((@(reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|[-0-9*/,]+[[:space:]]+[-0-9*/,]+[[:space:]]+[-0-9*/,]+[[:space:]]+[-0-9*/,a-z]+[[:space:]]+[-0-9*/,a-z]+)[[:space:]]|Exec[A-Za-z]*=)'
bare=$(for f in "$MAN"/*.scd "$SRC/README.md" "$SRC"/doc/*.md; do
  grep -nE "$CRON_OR_UNIT" "$f" | grep -E '[[:space:];|&(=`"'"'"']mq([[:space:]]|$)' |
    sed "s|^|$(basename "$f"):|"
done)
check "cron and unit lines found (10 or more)" test "$(grep -hE "$CRON_OR_UNIT" "$MAN"/*.scd "$SRC/README.md" "$SRC"/doc/*.md | grep -c '/mq ')" -ge 10
is "$bare" "" "every cron and systemd example runs mq by its full path"
# each long option's value is spelled the same in -h and in the man page
# that documents it (its OPTIONS, or mq(1)'s for the connection options):
# -h said --ssl-cipher L where mq(1) said LIST
forms_of_help() { # "--name ARG" per long option of -h's list
  sed -n '/^options:/,$p' | grep '^  -' | sed 's/^  //; s/  .*//' |
    sed 's/, /\n/g' | grep '^--'
}
forms_of_page() { # SECTION FILE: "--name ARG" per long option documented
  awk -v s="# $1" '$0 == s { on = 1; next } /^#/ { on = 0 } on && /^\*-/' "$2" |
    tr -d '*_\\' | sed 's/, /\n/g' | grep '^--'
}
CONN_FORMS=$(forms_of_page "CONNECTION OPTIONS" "$MAN/mq.1.scd"
  forms_of_page "GLOBAL OPTIONS" "$MAN/mq.1.scd")
bad=
for cmd in $cmds; do
  page=$MAN/mq-$cmd.1.scd
  [ "$cmd" = resume ] && page=$MAN/mq-pause.1.scd
  documented=$({ forms_of_page OPTIONS "$page"; printf '%s\n' "$CONN_FORMS"; })
  for f in $(env MQ_SOCKET=/nonexistent "$MQ" "$cmd" -h | forms_of_help | tr ' ' '\a'); do
    f=$(printf '%s' "$f" | tr '\a' ' ')
    name=${f%% *}
    printf '%s\n' "$documented" | grep -qxF -- "$f" ||
      ! printf '%s\n' "$documented" | grep -q -- "^$name\( \|\$\)" ||
      bad="$bad $cmd:'$f'"
  done
done
is "$bad" "" "every option's value is spelled in its man page as in -h"
done_testing
