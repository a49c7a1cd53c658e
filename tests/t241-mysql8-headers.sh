#!/bin/sh
# t241-mysql8-headers.sh: lib/ compiles against MySQL 8.0's client API
# as well as libmariadb's. Debian has no MySQL 8 client package, so this
# makes a stand-in from libmariadb's headers with what MySQL 8 changed
# that mq meets: no my_bool (bool in its place, MYSQL_BIND's is_null a
# bool *), LIBMYSQL_VERSION_ID 80036 and none of MariaDB's version
# macros, and MariaDB's own functions (mysql_get_socket, the non-blocking
# API, execute_direct, ...) poisoned: a use outside a guard fails the
# compile; MySQL 8's SSL mode option, which mq uses in their place, is
# declared. It does not link, and nothing else of MySQL 8's headers is
# modelled (see lib/internal.h). No server needed.

set -u
ROOT=${MQ_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
CC=${CC:-cc}
N=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mq-t241.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; }
check() { # check DESCRIPTION COMMAND...
  _d=$1; shift
  if "$@" >"$TMP/out" 2>&1; then ok "$_d"; else
    not_ok "$_d"; sed 's/^/# /' "$TMP/out" | head -20
  fi
}

INC=$(pkg-config --cflags-only-I libmariadb 2>/dev/null |
  sed 's/^ *-I//; s/ *$//')
[ -n "$INC" ] || INC=$(mariadb_config --include 2>/dev/null |
  sed 's/^ *-I//; s/ *$//')
if [ -z "$INC" ] || [ ! -f "$INC/mysql.h" ] ||
  ! command -v "$CC" >/dev/null 2>&1; then
  echo "1..0 # SKIP no libmariadb headers or no C compiler"
  exit 0
fi

# the stand-in: every header with my_bool turned into bool
M8=$TMP/mysql8
mkdir -p "$M8"
(cd "$INC" && find . -name '*.h') | while read -r h; do
  mkdir -p "$M8/$(dirname "$h")"
  sed -e 's/\bmy_bool\b/bool/g' -e '/^typedef char bool;/d' \
    -e '/#define MARIADB_PACKAGE_VERSION/d' \
    -e '/#define MARIADB_BASE_VERSION/d' \
    -e 's/^#define MYSQL_VERSION_ID .*/#define MYSQL_VERSION_ID 80036\
#define LIBMYSQL_VERSION_ID 80036/' "$INC/$h" >"$M8/$h"
done
{
  printf '#include <stdbool.h>\n'
  cat "$M8/mysql.h"
  # what MySQL 8 has in their place, as its mysql.h declares it
  printf 'enum mysql_ssl_mode { SSL_MODE_DISABLED = 1, SSL_MODE_PREFERRED,'
  printf ' SSL_MODE_REQUIRED, SSL_MODE_VERIFY_CA, SSL_MODE_VERIFY_IDENTITY };\n'
  printf '#define MYSQL_OPT_SSL_MODE ((enum mysql_option)4242)\n'
  printf '#pragma GCC poison my_bool mysql_get_socket mysql_optionsv\n'
  printf '#pragma GCC poison MYSQL_OPT_NONBLOCK STMT_ATTR_STATE\n'
  printf '#pragma GCC poison MYSQL_WAIT_READ MYSQL_WAIT_WRITE\n'
  OWN='mariadb_[a-z_]+|mysql_[a-z_]+_(start|cont)|mysql_get_timeout_value'
  grep -ohE "\\b($OWN)[a-z_]*[ ]*\\(" \
    "$INC/mysql.h" "$INC/mariadb_stmt.h" | tr -d '( ' | sort -u |
    sed 's/^/#pragma GCC poison /'
} >"$M8/mysql.h.new"
mv "$M8/mysql.h.new" "$M8/mysql.h"

FLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic"
FLAGS="$FLAGS -Wundef -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
FLAGS="$FLAGS -Wno-unused-parameter -Werror -fsyntax-only"

# the stand-in bites: my_bool and MariaDB's own calls do not compile
printf '#include <mysql.h>\nmy_bool b;\n' >"$TMP/bool.c"
check "the stand-in has no my_bool" \
  sh -c "! $CC $FLAGS -isystem '$M8' '$TMP/bool.c'"
{
  printf '#include <mysql.h>\nint f(MYSQL *);\n'
  printf 'int f(MYSQL *m) { return (int)mysql_get_socket(m); }\n'
} >"$TMP/sock.c"
check "the stand-in has no mysql_get_socket" \
  sh -c "! $CC $FLAGS -isystem '$M8' '$TMP/sock.c'"
{
  printf '#include <mysql.h>\n#if !defined(LIBMYSQL_VERSION_ID) || '
  printf 'defined(MARIADB_PACKAGE_VERSION)\n#error not MySQL 8\n#endif\n'
} >"$TMP/ver.c"
check "the stand-in says MySQL 8.0.36" $CC $FLAGS -isystem "$M8" "$TMP/ver.c"

# mq__bool is my_bool with libmariadb and bool with MySQL 8
{
  printf '#include "internal.h"\n_Static_assert(_Generic((mq__bool)0,'
  printf ' char: 1, default: 0), "my_bool");\n'
} >"$TMP/mariadb.c"
check "mq__bool is libmariadb's my_bool" \
  $CC $FLAGS -I "$ROOT/lib" -I "$INC" "$TMP/mariadb.c"
{
  printf '#include "internal.h"\n_Static_assert(_Generic((mq__bool)0,'
  printf ' _Bool: 1, default: 0), "bool");\n'
} >"$TMP/mysql8.c"
check "mq__bool is MySQL 8's bool" \
  $CC $FLAGS -I "$ROOT/lib" -isystem "$M8" "$TMP/mysql8.c"

# every file of lib/, against the stand-in
for f in "$ROOT"/lib/*.c; do
  check "lib/$(basename "$f") compiles against MySQL 8's API" \
    $CC $FLAGS -I "$ROOT/lib" -isystem "$M8" "$f"
done

# my_bool is named once, in the typedef
USES=$(grep -n '\bmy_bool\b' "$ROOT"/lib/*.c "$ROOT"/lib/*.h |
  grep -v '^[^:]*/internal\.h:[0-9]*:typedef my_bool mq__bool;' |
  grep -v '^[^:]*:[0-9]*: *\(/\*\|\*\)')
if [ -z "$USES" ]; then ok "no my_bool outside lib/internal.h's typedef"
else not_ok "no my_bool outside lib/internal.h's typedef"
  printf '%s\n' "$USES" | sed 's/^/# /'
fi

echo "1..$N"
[ "$FAILED" -eq 0 ]
