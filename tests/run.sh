#!/bin/sh
# run.sh: the whole test suite, from a clean checkout: installs what is
# missing, builds three times (plain, with AddressSanitizer + UBSan, and
# with the client library linked in), starts one private MariaDB for the
# run, runs every test against the first two and the client's start,
# connection and TLS tests against the third, stops the server, and ends
# with the line "N passed, N failed".
# Extra arguments go to `meson test` (e.g. a test name).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh tests/deps.sh

setup() { # setup DIR [MESON OPTIONS]: made, or set again if it exists
  dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dtests=true "$@" >"$dir.setup.log" 2>&1 || {
      cat "$dir.setup.log" >&2
      exit 1
    }
    rm -f "$dir.setup.log"
  else
    meson setup --reconfigure "$dir" -Dtests=true "$@" >/dev/null
  fi
  ninja -C "$dir" >/dev/null || ninja -C "$dir"
}
# warnings are errors here, in the test suite and CI, not in the default
# build: a distribution's flags or a newer compiler must not break it
# (the link named: a build directory keeps the options it was made with)
setup build -Dwerror=true -Dstatic-client=disabled
setup build-asan -Dwerror=true -Db_sanitize=address,undefined \
  -Db_lundef=false -Dbuildtype=debug -Dstatic-client=disabled
# the opt-in static link (-Dstatic-client=enabled): the tests of the
# client's start, connections, TLS and option files run against it too
setup build-static -Dwerror=true -Dstatic-client=enabled
static_tests="test-client-init test-tls-asked t010-init t030-pop t050-errors
t216-tls t217-start-up t314-host-list"

srv=$(mktemp -d "${TMPDIR:-/tmp}/mq-srv.XXXXXX")
gal=
trap 'sh tests/server.sh stop "$srv" || :; [ -z "$gal" ] || sh tests/galera.sh stop "$gal"' EXIT
trap 'exit 130' INT TERM
sh tests/server.sh start "$srv"
export MQ_TEST_SOCKET="$srv/sock"
# one 3-node Galera cluster for the Galera tests of both builds (each
# would start its own otherwise: 15 s a time); without galera-4 or the
# SST scripts (tests/galera.sh missing) they skip
if [ -z "$(sh tests/galera.sh missing)" ]; then
  gal=$(mktemp -d "${TMPDIR:-/tmp}/mq-gal.XXXXXX")
  sh tests/galera.sh start "$gal"
  export MQ_TEST_GALERA="$gal"
fi

status=0
meson test -C build --print-errorlogs "$@" || status=1
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 MQ_SANITIZED=1 \
  meson test -C build-asan --print-errorlogs "$@" || status=1
# (the same names when some are given; they may not be among those)
if [ $# -eq 0 ]; then
  # shellcheck disable=SC2086
  meson test -C build-static --print-errorlogs $static_tests || status=1
else
  meson test -C build-static --print-errorlogs "$@" || status=1
fi

# Counts TAP assertions (each "ok"/"not ok" line) rather than whole test
# programs; a program that failed without a "not ok" (a crash, a bad plan)
# counts as one failure more. "ok ... # SKIP" lines count as skipped.
python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
  build-static/meson-logs/testlog.json <<'PY'
import json, re, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    for line in open(path):
        t = json.loads(line)
        out = t.get("stdout") or ""
        skips = len(re.findall(r"^ok\b.*#\s*SKIP", out, re.M | re.I))
        oks = len(re.findall(r"^ok\b", out, re.M)) - skips
        bad = len(re.findall(r"^not ok\b", out, re.M))
        if t.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and bad == 0:
            bad = 1
        passed += oks
        failed += bad
        skipped += skips
        if bad:
            # meson shows only stderr of TAP tests: show what failed
            print(f"--- {t.get('name')} ({path.split('/')[0]}): {t.get('result')}")
            lines = out.splitlines()
            for i, l in enumerate(lines):
                if l.startswith("not ok") or l.startswith("Bail out"):
                    print(l)
                    for d in lines[i + 1:i + 8]:
                        if not d.startswith("#"):
                            break
                        print(d)
            err = t.get("stderr") or ""
            if err:
                print("\n".join(err.splitlines()[-10:]))
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
exit $status
