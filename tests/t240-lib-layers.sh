#!/bin/sh
# t240-lib-layers.sh: the files of lib/ call each other as the layers at
# the top of lib/internal.h say: each only files of lower layers, so the
# calls form no cycle. A call is a name a file defines (a function
# definition starts its line: "mq_pop(" at column 0) followed by "(" in
# another file. No server needed.

set -u
ROOT=${MQ_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
LIB=$ROOT/lib
N=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mq-t240.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; }

# "file layer" for each file the list names
sed -n 's/^ \* layer \([0-9]*\): \(.*\)$/\1 \2/p' "$LIB/internal.h" |
  while read -r layer files; do
    for f in $files; do echo "${f%.c} $layer"; done
  done >"$TMP/layers"
if [ -s "$TMP/layers" ]; then ok "lib/internal.h lists the layers"
else not_ok "lib/internal.h lists the layers"; fi

# "file function" for each function a file defines
for f in "$LIB"/*.c; do
  b=$(basename "$f" .c)
  grep -oE '^mq_?_?[a-z0-9_]+\(' "$f" | tr -d '(' | sed "s/^/$b /"
done | sort -u >"$TMP/defs"

# "caller callee" for each call between two files
(cd "$LIB" && grep -oE '\bmq_?_?[a-z0-9_]+\(' ./*.c) |
  sed 's/^\.\/\(.*\)\.c:\(.*\)(/\1 \2/' |
  awk 'NR == FNR { def[$2] = $1; next }
    ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
    "$TMP/defs" - | sort -u >"$TMP/calls"

for f in "$LIB"/*.c; do
  b=$(basename "$f" .c)
  mine=$(awk -v b="$b" '$1 == b { print $2 }' "$TMP/layers")
  if [ -z "$mine" ]; then
    not_ok "lib/$b.c is in a layer"
    continue
  fi
  bad=$(awk -v b="$b" -v mine="$mine" '
    NR == FNR { layer[$1] = $2; next }
    $1 == b && !($2 in layer && layer[$2] + 0 < mine + 0) {
      print $2 ".c (" $3 ")" }' "$TMP/layers" "$TMP/calls" | tr '\n' ' ')
  if [ -z "$bad" ]; then ok "lib/$b.c (layer $mine) calls only lower layers"
  else not_ok "lib/$b.c (layer $mine) calls only lower layers"
    echo "# it calls $bad"
  fi
done

# and, whatever the list says, no cycle
if awk '{ print $1, $2 }' "$TMP/calls" | tsort >/dev/null 2>"$TMP/tsort"
then ok "the calls between lib/ files form no cycle"
else not_ok "the calls between lib/ files form no cycle"
  sed 's/^/# /' "$TMP/tsort"
fi

echo "1..$N"
[ "$FAILED" -eq 0 ]
