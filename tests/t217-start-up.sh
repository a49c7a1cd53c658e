#!/bin/sh
# t217-start-up.sh: what an mq process does before it talks to the
# server, in the build it is (libmariadb linked in or dynamically): no
# open of a file that is not there (the loader searching every library
# directory for an nss module nsswitch.conf names, ~40 of them where
# "services: db files" and libnss_db is not installed) and no services
# lookup (the client library's default port: MYSQL_TCP_PORT or 3306,
# lib/client_init.c). The option file is named (lib.sh), so the library
# probes no other. Needs strace: skipped without it.
. "$(dirname "$0")/lib.sh"

if ! command -v strace >/dev/null 2>&1 ||
  ! strace -f -qq -o /dev/null true >/dev/null 2>&1; then
  echo "1..0 # SKIP strace is not installed or cannot trace here"
  exit 0
fi
"$MQ" init >/dev/null

# traced CMD...: runs mq CMD under strace; the file calls in $T_TMP/trace
traced() {
  # (LeakSanitizer cannot run under ptrace: the sanitized build's leaks
  # are the other tests' to find)
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=open,openat,stat,lstat,newfstatat,statx,access,connect \
    -o "$T_TMP/trace" "$MQ" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
  RC=$?
}
# the calls on a path that is not there (the loader's look for
# /etc/ld.so.preload aside: every dynamic program's)
missing() {
  grep -E ' = -1 ENOENT' "$T_TMP/trace" | grep -v '"/etc/ld.so.preload"'
}
looked_up() { grep -E 'nsswitch\.conf|/etc/services|libnss_' "$T_TMP/trace"; }

traced pop --queue empty
is "$RC" 1 "an empty pop, traced: status 1"
is "$(missing)" "" "it opened no file that is not there"
is "$(looked_up)" "" "it read neither nsswitch.conf nor /etc/services"

traced push --queue q x
is "$RC" 0 "a push, traced"
is "$(missing)" "" "it opened no file that is not there"
is "$(looked_up)" "" "it read neither nsswitch.conf nor /etc/services"
is "$(sql "SELECT payload FROM mq_jobs WHERE queue = 'q'")" x "the job is there"
# no TLS asked: OpenSSL's configuration is not read (built with the
# light start: Connector/C before 3.4, OpenSSL), and the option files
# are scanned without a system call a line
if grep -q OPENSSL_init_ssl "$MQ"; then
  is "$(grep -c 'openssl\.cnf' "$T_TMP/trace")" 0 "no TLS asked: openssl.cnf not read"
fi
printf '[client]\n%s\n' "$(seq 1 300 | sed 's/^/# comment line /')" >"$T_TMP/long.cnf"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -c -e trace=lseek,_llseek \
  -o "$T_TMP/seeks" "$MQ" pop --queue empty >/dev/null 2>&1
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -c -e trace=lseek,_llseek \
  -o "$T_TMP/seeks2" env MQ_DEFAULTS_FILE="$T_TMP/long.cnf" "$MQ" pop --queue empty >/dev/null 2>&1
seeks() { awk '$NF ~ /seek/ { print $4 }' "$1" | head -1; }
s1=$(seeks "$T_TMP/seeks") s2=$(seeks "$T_TMP/seeks2")
check "301 more lines of option file: at most 10 more seeks (${s1:-0} then ${s2:-0})" \
  test "${s2:-0}" -le $(( ${s1:-0} + 10 ))

# TCP without a port: the library's default, MYSQL_TCP_PORT (not asked
# of the services database); a port nothing listens on is refused
MYSQL_TCP_PORT=1 MQ_SOCKET= traced pop --host 127.0.0.1 --queue q
is "$RC" 69 "TCP with MYSQL_TCP_PORT=1: cannot connect (69)"
like "$(cat "$T_TMP/err")" "*127.0.0.1*" "the message names the host"
like "$(grep 'connect(' "$T_TMP/trace" | grep AF_INET)" "*sin_port=htons(1),*" \
  "it tried port 1"
is "$(looked_up)" "" "no services lookup for the default port"

done_testing
