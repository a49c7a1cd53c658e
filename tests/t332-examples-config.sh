#!/bin/sh
# The examples of mq-sql(7) find their server as mq does (issue 35): the
# option files ([client], [client-server], [client-mariadb] and [mq] of
# ~/.my.cnf and the others, or only MQ_DEFAULTS_FILE / --defaults-file),
# under the MQ_* variables, which win over them; and they fail as mq
# does, in one line with mq's status (mq(1), EXIT STATUS): no database
# chosen 78, access denied 77, no server 69, an option file that cannot
# be read 78, never a driver's or the interpreter's warning. A confirming
# node (--confirm-host, --confirm-socket, MQ_CONFIRM_*: mq-sql(7),
# EXAMPLES) is not used on a server that is not a Galera node, not even
# connected to; a port without a host, or out of range, is usage (64). Each
# language runs in an environment of its own (env -i): what it is given
# is all it has. Python runs with warnings made errors.
. "$(dirname "$0")/lib.sh"
# (as t330: glibc's perturbation makes perl far slower, for nothing here)
unset MALLOC_PERTURB_
examples_env

sql_root "DROP USER IF EXISTS t332cfg@localhost; CREATE USER t332cfg@localhost IDENTIFIED BY 'pw \"332\" #1';
  GRANT ALL ON \`$T_DB\`.* TO t332cfg@localhost" || {
  echo "Bail out! cannot create the account"
  exit 1
}
"$MQ" init >/dev/null || {
  echo "Bail out! mq init failed"
  exit 1
}

# the account's option file, as a user writes one (the password quoted:
# it holds a '#' and quotes)
cat >"$T_TMP/app.cnf" <<EOF
[client]
socket = $MQ_TEST_SOCKET
[mq]
user = t332cfg
password = 'pw "332" #1'
database = $T_DB
EOF
# ~/.my.cnf of a home: the socket in [client], the rest in [mq]
mkdir -p "$T_TMP/home" "$T_TMP/bare"
cp "$T_TMP/app.cnf" "$T_TMP/home/.my.cnf"
# the same with a wrong password, and a file with no database
sed 's/^password = .*/password = wrong/' "$T_TMP/app.cnf" >"$T_TMP/badpw.cnf"
grep -v '^database' "$T_TMP/app.cnf" >"$T_TMP/nodb.cnf"

have() {
  case $1 in
  py) $PY -c 'import pymysql' 2>/dev/null ;;
  php) php -r 'exit(extension_loaded("pdo_mysql") ? 0 : 1);' 2>/dev/null ;;
  pl) perl -MDBD::mysql -e 1 2>/dev/null ;;
  esac
}
# ex LANG producer|consumer VAR=VALUE... -- ARGS...: the example with only
# these variables (and PATH), stdin from $T_TMP/in
ex() {
  _l=$1 _w=$2
  shift 2
  _vars=
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    _vars="$_vars $1"
    shift
  done
  [ $# -gt 0 ] && shift
  # shellcheck disable=SC2086,SC2046
  env -i PATH="$PATH" PYTHONWARNINGS=error $_vars $(lang_cmd "$_l" "$_w") "$@" <"$T_TMP/in"
}
# one_line STATUS DESCRIPTION: $RC is STATUS, $ERR one line naming the
# example, with no interpreter's warning or trace in it
one_line() {
  is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "$1:1" "$2: status $1, one line on stderr"
  case $ERR in
  *[Ww]arning* | *Traceback* | *" line "[0-9]* | *"PHP "* | *"DBI connect("*)
    not_ok "$2: no warning or trace on stderr" "$ERR" ;;
  *) ok "$2: no warning or trace on stderr" ;;
  esac
}


for l in py php pl; do
  if ! have $l; then
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 \
      26 27 28 29 30 31 32 33 34; do
      ok "$l # SKIP its client library is not installed (tests/deps.sh)"
    done
    continue
  fi
  # -- an option file named by MQ_DEFAULTS_FILE: push, then claim and ack
  printf 'cfg-%s' $l >"$T_TMP/in"
  run ex $l producer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" -- --queue cfg-$l
  is "$RC:$ERR" "0:" "$l: producer with only MQ_DEFAULTS_FILE pushes"
  is "$(sql "SELECT CONCAT_WS(',', COUNT(*), MIN(payload)) FROM mq_jobs WHERE queue = 'cfg-$l' AND state = 'ready'")" \
    "1,cfg-$l" "$l: the job is in the table"
  : >"$T_TMP/in"
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" -- --queue cfg-$l
  is "$RC:$OUT" "0:cfg-$l" "$l: consumer with only MQ_DEFAULTS_FILE claims it"
  is "$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE queue = 'cfg-$l'")" done \
    "$l: and acks it"

  # -- ~/.my.cnf alone ([client] and [mq] groups)
  printf 'home-%s' $l >"$T_TMP/in"
  run ex $l producer HOME="$T_TMP/home" -- --queue home-$l
  is "$RC:$ERR" "0:" "$l: producer with only ~/.my.cnf pushes"
  : >"$T_TMP/in"
  run ex $l consumer HOME="$T_TMP/home" -- --queue home-$l
  is "$RC:$OUT" "0:home-$l" "$l: consumer with only ~/.my.cnf claims and acks"
  is "$(sql "SELECT GROUP_CONCAT(state) FROM mq_jobs WHERE queue = 'home-$l'")" done \
    "$l: the job is done"

  # -- --defaults-file on the command line, over MQ_DEFAULTS_FILE
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/badpw.cnf" -- --defaults-file "$T_TMP/app.cnf" --queue none-$l
  is "$RC" 1 "$l: --defaults-file wins over MQ_DEFAULTS_FILE (nothing to claim)"

  # -- an option file that is a pipe (as mq takes --defaults-file <(...))
  # shellcheck disable=SC2046
  run sh -c 'cat "$0" | env -i PATH="$PATH" "$@"' "$T_TMP/app.cnf" \
    $(lang_cmd $l consumer) --defaults-file /dev/stdin --queue none-$l
  is "$RC:$ERR" "1:consumer.$l: queue none-$l: nothing to claim" \
    "$l: --defaults-file /dev/stdin, a pipe: read (nothing to claim)"

  # -- the MQ_* variables win over the option files
  run ex $l consumer HOME="$T_TMP/home" MQ_USER=t332nosuch -- --queue none-$l
  one_line 77 "$l: MQ_USER over ~/.my.cnf's user"
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/nodb.cnf" MQ_DATABASE="$T_DB" -- --queue none-$l
  is "$RC" 1 "$l: MQ_DATABASE with an option file's account"

  # -- only MQ_SOCKET: no database chosen
  run ex $l consumer HOME="$T_TMP/bare" MQ_SOCKET="$MQ_TEST_SOCKET" MQ_USER=root
  one_line 78 "$l: only MQ_SOCKET"
  like "$ERR" "*no database selected*" "$l: only MQ_SOCKET: says no database was selected"
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/nodb.cnf"
  one_line 78 "$l: an option file without a database"

  # -- access denied: a wrong password
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/badpw.cnf"
  one_line 77 "$l: a wrong password"

  # -- no server there
  run ex $l consumer HOME="$T_TMP/bare" MQ_SOCKET="$T_TMP/no-such-socket" MQ_DATABASE="$T_DB"
  one_line 69 "$l: no server at MQ_SOCKET"

  # -- an option file that cannot be read
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/no-such.cnf"
  one_line 78 "$l: MQ_DEFAULTS_FILE that does not exist"

  # -- a confirming node on one server: not used (no cluster to lose a
  # claim), not even connected to: the job runs as without it
  "$MQ" push --queue conf-$l "conf-$l" >/dev/null
  : >"$T_TMP/in"
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" \
    MQ_CONFIRM_SOCKET="$T_TMP/no-such-socket" -- --queue conf-$l
  is "$RC:$OUT" "0:conf-$l" "$l: MQ_CONFIRM_SOCKET on one server: not used, the job run"
  is "$(sql "SELECT GROUP_CONCAT(CONCAT(state, attempts)) FROM mq_jobs WHERE queue = 'conf-$l'")" done1 \
    "$l: and acked"
  "$MQ" push --queue conf2-$l "conf2-$l" >/dev/null
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" -- --queue conf2-$l \
    --confirm-host 127.0.0.1 --confirm-port 1 --confirm-socket "$T_TMP/no-such-socket"
  is "$RC:$OUT" "0:conf2-$l" "$l: --confirm-host, --confirm-port on one server: not used, the job run"
  is "$(sql "SELECT GROUP_CONCAT(CONCAT(state, attempts)) FROM mq_jobs WHERE queue = 'conf2-$l'")" done1 \
    "$l: and acked"
  # usage: a port without a host, a port out of range (nothing claimed)
  "$MQ" push --queue conf3-$l "conf3-$l" >/dev/null
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" MQ_CONFIRM_SOCKET=/x -- \
    --queue conf3-$l --confirm-port 3306
  one_line 64 "$l: --confirm-port without --confirm-host"
  run ex $l consumer MQ_DEFAULTS_FILE="$T_TMP/app.cnf" -- --queue conf3-$l \
    --confirm-host 127.0.0.1 --confirm-port 70000
  one_line 64 "$l: --confirm-port 70000"
  is "$(sql "SELECT GROUP_CONCAT(CONCAT(state, attempts)) FROM mq_jobs WHERE queue = 'conf3-$l'")" ready0 \
    "$l: usage errors claim nothing"

  # -- nothing at all (env -i): no warning, one line
  run ex $l consumer
  is "$(printf '%s\n' "$ERR" | wc -l)" 1 "$l: with no environment: one line on stderr"
  case $ERR in
  *[Ww]arning* | *Traceback* | *" line "[0-9]* | *"DBI connect("*)
    not_ok "$l: with no environment: no warning or trace" "$ERR" ;;
  *) ok "$l: with no environment: no warning or trace" ;;
  esac
done
done_testing
