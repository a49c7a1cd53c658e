#!/bin/sh
# Fuzzes the parsers (durations, receipts, table and queue names, times,
# cron expressions and their next runs, POSIX TZ rules, zone names)
# and the output encoders (UTF-8 check, JSON, base64, shell quotes) with
# libFuzzer for a bounded time: tests/fuzz-parse.c checks each against a
# property. Needs clang and its libFuzzer runtime, no database: this
# script does not source lib.sh, which would start one.
#
# MQ_FUZZ_SECONDS: how long to fuzz (default 30). MQ_FUZZ_CC: the clang
# to use. Under the sanitized build's run (MQ_SANITIZED=1) it skips: the
# fuzzer is its own sanitized build, once per run is enough.
set -u

src=${MQ_SOURCE_ROOT:-$(dirname "$0")/..}
cc=${MQ_FUZZ_CC:-clang}
secs=${MQ_FUZZ_SECONDS:-30}

# the plan comes last, as in lib.sh: how many tests depends on the way
if [ "${MQ_SANITIZED:-}" = 1 ]; then
  echo "ok 1 # SKIP fuzzing runs once, in the plain build's test run"
  echo "1..1"
  exit 0
fi

diag() { # diag: stdin as TAP comments, the last 20 lines cut at 200 bytes
  tail -n 20 | cut -c1-200 | sed 's/^/# /'
}

# no clang (a distribution's package build, say): a skip, not a failure
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "ok 1 # SKIP $cc is not installed (tests/deps.sh installs it)"
  echo "1..1"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mq-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
trap 'exit 141' PIPE	# a reader that stops early: still clean up

if "$cc" -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$src/lib" -I"$src/cmd" "$src/tests/fuzz-parse.c" \
    "$src/lib/parse.c" "$src/lib/cron.c" "$src/lib/cron_next.c" \
    "$src/lib/tz.c" "$src/lib/tzrule.c" "$src/lib/schedfile.c" \
    "$src/lib/schedset.c" \
    "$src/cmd/output/output.c" "$src/cmd/output/units.c" \
    -o "$tmp/fuzz-parse" \
    >"$tmp/cc.log" 2>&1; then
  echo "ok 1 - compiled"
else
  echo "not ok 1 - compiled"
  diag <"$tmp/cc.log"
  grep -q 'libclang_rt\.fuzzer' "$tmp/cc.log" &&
    echo "# clang's libFuzzer runtime is missing: tests/deps.sh installs it"
  echo "1..1"
  exit 1
fi

# seeds: valid and nearly valid inputs of every parser, and payloads
c=$tmp/corpus
mkdir "$c"
n=0
seed() { # seed PRINTF-FORMAT: one corpus file
  n=$((n + 1))
  # shellcheck disable=SC2059
  printf "$1" >"$c/seed$n"
}
seed '42.0123456789abcdef0123456789abcdef'
seed '18446744073709551615.ffffffffffffffffffffffffffffffff'
seed '18446744073709551616.ffffffffffffffffffffffffffffffff'
seed '1h30m'
seed '1m30s250ms'
seed '500ms'
seed '36600d'
seed '99999999999999999999s'
seed '30'
seed '2024-02-29 00:00:00.123456Z'
seed '2026-11-22T10:00'
seed '1900-02-29 23:59:59'
seed '@2147483647'
seed 'mq_jobs'
seed 'emails.high-2'
seed 'a`b'
seed "it's \\\\\"quoted\\\\\""
seed 'h\303\251llo \360\237\230\200 \342\202\254'
seed '\355\240\200\340\200\257\364\220\200\200\300\257'
seed 'nul\000inside\n\t\r\177\001'
seed 'ab'
seed '*/15 9-17 * * MON-FRI'
seed '30 2 29 2 */7'
seed '0 0 1,15 JAN-mar 5/2'
seed '@daily'
seed '0 0 31 4,6 *'
seed 'CET-1CEST,M3.5.0,M10.5.0/3'
seed '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0'
seed 'IST-2IDT,M3.4.4/26,J300/-167'
seed 'America/Argentina/Buenos_Aires'
seed '# ops\n[nightly]\ncron = 30 2 * * 1-5\ntz = Europe/Berlin\nqueue = ops\npayload = a\\\\x41\\\\n\nmissed = all\nmissed-max = 3\n\n[b]\ncron=@daily\r\n'

# tokens the parsers look for
printf '%s\n' '"ms"' '"s"' '"m"' '"h"' '"d"' '"@"' '"T"' '"Z"' '":"' \
  '"-"' '"."' '"2024-02-29 "' '"00:00:00"' '"18446744073709551615"' \
  '"2147483647"' '"0123456789abcdef"' '"*/"' '" * "' '"@hourly"' \
  '"MON"' '"JAN"' '"-7"' '",M3.5.0"' '"/-1"' '"<+0545>"' '"\\n["' \
  '"]\\n"' '"cron = "' '"tz = "' '"queue = "' '"payload = "' '"missed = all"' \
  '"missed-max = "' '"priority = "' '"max-attempts = "' '"key = "' >"$tmp/dict"

# ASan's defaults, but leaks count; the sanitized build's settings are not
# ours
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$tmp/fuzz-parse" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
  -dict="$tmp/dict" -artifact_prefix="$tmp/" \
  "$c" >"$tmp/fuzz.log" 2>&1
rc=$?

done_line=$(grep '^Done [0-9]* runs in [0-9]* second' "$tmp/fuzz.log" | tail -n 1)
crash=
for f in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
  [ -e "$f" ] && crash=${f##*/} && break
done
if [ "$rc" -eq 0 ] && [ -n "$done_line" ] && [ -z "$crash" ]; then
  runs=$(echo "$done_line" | sed 's/^Done \([0-9]*\) runs in \([0-9]*\) .*/\1/')
  s=$(echo "$done_line" | sed 's/^Done \([0-9]*\) runs in \([0-9]*\) .*/\2/')
  echo "ok 2 - $runs runs in $s s, no finding"
  # the last status line: coverage, features, corpus, speed
  grep -E '^#[0-9]+[[:space:]]+DONE' "$tmp/fuzz.log" | tail -n 1 | sed 's/^/# /'
  echo "1..2"
  exit 0
fi

echo "not ok 2 - fuzzed for $secs s: a finding (exit status $rc)"
# what broke first (a property of fuzz-parse.c, a sanitizer), then the tail
grep -E 'property broken|^input \(|ERROR: |runtime error: ' "$tmp/fuzz.log" |
  head -n 4 | cut -c1-200 | sed 's/^/# /'
diag <"$tmp/fuzz.log"
if [ -n "$crash" ]; then
  echo "# input ($crash, $(wc -c <"$tmp/$crash") bytes, hex; up to 512):"
  head -c 512 "$tmp/$crash" | od -An -tx1 | sed 's/^ */# /'
fi
echo "1..2"
exit 1
