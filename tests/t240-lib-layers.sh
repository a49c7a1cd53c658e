#!/bin/sh
# t240-lib-layers.sh: the files of lib/ call each other as the layers at
# the top of lib/internal.h say: each only files of lower layers, so the
# calls form no cycle; and cmd/'s rooms (its end) likewise. A call is a name a file defines (a function
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

# ---- cmd/: its rooms, from the objects' symbol tables ----
# A room is main.c, cmd/cli/, cmd/output/, a command's folder (work/,
# top/, ...) or a command's single file. No file may use (a function or
# a variable: nm's U) what a file defines that, directly or through
# others, uses it back, except inside one command's folder; and the
# rooms themselves use each other in one direction only (cli/ under the
# commands, output/ under cli/).
OBJ=${MQ_CMD_OBJECTS:-}
if [ -z "$OBJ" ] || [ ! -d "$OBJ" ] || ! command -v nm >/dev/null; then
  ok "# SKIP cmd/'s rooms: no objects (MQ_CMD_OBJECTS) or no nm"
else
  for f in $(cd "$ROOT/cmd" && find . -name '*.c' | sed 's|^\./||' | sort); do
    o="$OBJ/$(printf '%s' "$f" | tr / _).o"
    if [ ! -f "$o" ]; then
      echo "missing $f"
      continue
    fi
    nm -P "$o" | awk -v f="$f" '$2 ~ /^[TDBRCGSV]$/ { print "def", f, $1 }
      $2 == "U" { print "use", f, $1 }'
  done >"$TMP/syms"
  if grep -q '^missing' "$TMP/syms"; then
    not_ok "every file of cmd/ has its object"
    grep '^missing' "$TMP/syms" | sed 's/^/# /'
  else
    ok "every file of cmd/ has its object"
  fi
  python3 - "$TMP/syms" >"$TMP/rooms" <<'PY'
import sys
defs, uses = {}, {}
for line in open(sys.argv[1]):
    k, f, s = line.split()
    if k == "def":
        defs[s] = f
    elif k == "use":
        uses.setdefault(f, set()).add(s)
files = sorted(set(defs.values()) | set(uses))
edges = {f: sorted({defs[s] for s in uses.get(f, ()) if s in defs} - {f})
         for f in files}
def room(f):
    return f.split("/")[0] if "/" in f else f
def command_folder(f):
    return "/" in f and room(f) not in ("cli", "output")
# Tarjan's strongly connected components
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for f in files:
    if f not in index:
        visit(f)
bad = [c for c in sccs if len(c) > 1 and not (
    all(command_folder(f) for f in c) and len({room(f) for f in c}) == 1)]
for c in bad:
    print("cycle", " ".join(c))
rooms = {}
for f in files:
    for g in edges[f]:
        if room(f) != room(g):
            rooms.setdefault(room(f), set()).add(room(g))
for r in sorted(rooms):
    for s in sorted(rooms[r]):
        print("room", r, s)
PY
  if grep -q '^cycle' "$TMP/rooms"; then
    not_ok "cmd/: no file uses one that uses it back, but in one command's folder"
    grep '^cycle' "$TMP/rooms" | sed 's/^/# /'
  else
    ok "cmd/: no file uses one that uses it back, but in one command's folder"
  fi
  if awk '$1 == "room" { print $2, $3 }' "$TMP/rooms" | tsort >/dev/null 2>"$TMP/tsort"
  then ok "cmd/: the rooms use each other in one direction"
  else not_ok "cmd/: the rooms use each other in one direction"
    sed 's/^/# /' "$TMP/tsort"
  fi
  used_by_lower=$(awk '$1 == "room" && ($2 == "output" || $2 == "cli") &&
    $3 != "output" && $3 != "cli" { print $2 " uses " $3 }' "$TMP/rooms")
  if [ -z "$used_by_lower" ] && ! grep -q '^room output cli$' "$TMP/rooms"; then
    ok "cmd/: cli/ and output/ use no command, output/ not cli/"
  else
    not_ok "cmd/: cli/ and output/ use no command, output/ not cli/"
    printf '%s\n' "$used_by_lower" | sed 's/^/# /'
  fi
fi

echo "1..$N"
[ "$FAILED" -eq 0 ]
