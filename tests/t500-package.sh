#!/bin/sh
# t500-package.sh: the Debian package, built as a distribution builds it.
# A copy of the source tree (without its build directories) goes through
# dpkg-buildpackage -us -uc -b without network (a network namespace of
# its own); lintian must report no error and no
# warning (an override needs a comment saying why, in the line before);
# the .deb must hold the binary, linked to libmariadb dynamically, every
# man page, the completions, the units and the copyright; then, as root,
# apt-get installs it, the installed mq, man page, completion and units
# are tried, and apt-get purge removes it (and the system user mq, when
# this test made it). Not as root: dpkg-deb -x, and the mq in there runs.
# No server needed. Skips without dpkg-buildpackage, debhelper or lintian
# (tests/deps.sh installs them).

set -u
ROOT=${MQ_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
N=0
FAILED=0

ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; }
check() { # check DESCRIPTION COMMAND...
  d=$1
  shift
  if "$@"; then ok "$d"; else not_ok "$d"; fi
}
is() { # is ACTUAL EXPECTED DESCRIPTION
  if [ "$1" = "$2" ]; then ok "$3"
  else
    not_ok "$3"
    printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"
  fi
}
diag() { sed 's/^/# /'; }

for tool in dpkg-buildpackage dh lintian; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "1..0 # SKIP no $tool (tests/deps.sh installs dpkg-dev, debhelper and lintian)"
    exit 0
  fi
done
# the package is the same whatever build of mq the suite runs with: the
# sanitized run (tests/run.sh) leaves it to the plain one
if [ -n "${MQ_SANITIZED:-}" ]; then
  echo "1..0 # SKIP the package is built once, in the plain build's run"
  exit 0
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mq-t500.XXXXXX")
installed=
made_user=
cleanup() {
  if [ -n "$installed" ]; then
    dpkg --purge mq >/dev/null 2>&1
  fi
  if [ -n "$made_user" ] && getent passwd mq >/dev/null 2>&1; then
    userdel mq >/dev/null 2>&1
    groupdel mq >/dev/null 2>&1
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the version the package and mq must carry: meson's project version
VERSION=$(sed -n "s/^project('mq'.* version: '\([^']*\)'.*/\1/p" "$ROOT/meson.build")

# the source tree, without git's files, build directories and .deps
mkdir "$TMP/mq-$VERSION"
(cd "$ROOT" && tar --exclude-vcs --exclude=./build --exclude='./build-*' \
  --exclude=./.deps --exclude=__pycache__ --exclude='./obj-*' -cf - .) |
  (cd "$TMP/mq-$VERSION" && tar -xf -) 2>"$TMP/copy.err"
check "the source tree is copied" test -f "$TMP/mq-$VERSION/debian/rules"
diag <"$TMP/copy.err"

# No network: a network namespace with nothing in it (as root; else a
# user namespace too). nocheck: the unit suite, all dh_auto_test runs
# (debian/rules), runs in this same meson test run.
if [ "$(id -u)" -eq 0 ]; then nonet="unshare -n"; else nonet="unshare -rn"; fi
if ! $nonet true 2>/dev/null; then
  echo "# no network namespace here: the build runs with the network"
  nonet=
fi
t0=$(date +%s)
(cd "$TMP/mq-$VERSION" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
  $nonet dpkg-buildpackage -us -uc -b) >"$TMP/build.log" 2>&1
rc=$?
is "$rc" 0 "dpkg-buildpackage -us -uc -b builds the package${nonet:+ (no network)}"
[ "$rc" -eq 0 ] || tail -n 30 "$TMP/build.log" | diag
echo "# built in $(($(date +%s) - t0)) s"
DEB=$TMP/mq_${VERSION}_$(dpkg --print-architecture).deb
CHANGES=$TMP/mq_${VERSION}_$(dpkg --print-architecture).changes
check "it made mq_${VERSION}_ARCH.deb" test -f "$DEB"
if [ ! -f "$DEB" ]; then
  echo "1..$N"
  exit 1
fi
check "the build configured mq with -Dstatic-client=disabled" \
  grep -q 'static-client=disabled' "$TMP/build.log"

# lintian: no E: and no W: tags, overrides only with their reason
lintian --pedantic "$CHANGES" >"$TMP/lintian.out" 2>&1
is "$(grep -c '^[EW]: ' "$TMP/lintian.out")" 0 "lintian reports no error and no warning"
grep '^[EWI]: \|^P: ' "$TMP/lintian.out" | diag
unexplained=$(for f in "$ROOT"/debian/*lintian-overrides "$ROOT"/debian/source/lintian-overrides; do
  [ -f "$f" ] || continue
  awk -v f="$f" '/^[^#[:space:]]/ && prev !~ /^#/ { print f ": " $0 } { prev = $0 }' "$f"
done)
is "$unexplained" "" "every lintian override says why, in a comment before it"

# what the .deb holds
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/contents"
is "$(dpkg-deb -f "$DEB" Version)" "$VERSION" "the package's version is meson's project version"
missing=
for f in /usr/bin/mq /usr/share/doc/mq/copyright /usr/share/doc/mq/NEWS.gz \
    /usr/share/doc/mq/AUTHORS /usr/share/doc/mq/README.md.gz \
    /usr/share/doc/mq/operating.md.gz /usr/share/doc/mq/examples/producer.py \
    /usr/share/doc/mq/examples/consumer.pl /usr/share/doc/mq/examples/consumer.php \
    /usr/share/doc/mq/examples/work-example.env /usr/share/doc/mq/examples/my.cnf.example \
    /usr/share/mq/grants.sql /usr/share/mq/schema.sql \
    /usr/share/bash-completion/completions/mq /usr/share/zsh/vendor-completions/_mq \
    /usr/share/fish/vendor_completions.d/mq.fish /usr/lib/sysusers.d/mq.conf \
    /lib/systemd/system/mq-work@.service /lib/systemd/system/mq-requeue-stale.service \
    /lib/systemd/system/mq-requeue-stale.timer /lib/systemd/system/mq-archive.service \
    /lib/systemd/system/mq-archive.timer /lib/systemd/system/mq-schedule-fire.service \
    /lib/systemd/system/mq-schedule-fire.timer /usr/share/man/man1/mq-resume.1.gz; do
  grep -qxF "$f" "$TMP/contents" || missing="$missing $f"
done
for page in "$ROOT"/man/*.scd; do
  p=$(basename "$page" .scd)
  f=/usr/share/man/man${p##*.}/$p.gz
  grep -qxF "$f" "$TMP/contents" || missing="$missing $f"
done
for f in "$ROOT"/sql/upgrade-*.sql; do
  f=/usr/share/mq/$(basename "$f")
  grep -qxF "$f" "$TMP/contents" || missing="$missing $f"
done
is "$missing" "" "the .deb holds mq, every man page, the completions, units, SQL, docs and examples"

dpkg-deb -x "$DEB" "$TMP/root"
check "/usr/bin/mq needs libmariadb.so.3 (linked dynamically)" \
  sh -c 'readelf -d "$0" | grep -q "NEEDED.*\[libmariadb\.so\.3\]"' "$TMP/root/usr/bin/mq"
# the texts each library carries in its code (lintian's embedded-library
# looks for zlib's)
check "and holds no copy of it, OpenSSL or zlib" \
  sh -c '! grep -qa "MariaDB Connector/C\|OpenSSL [0-9]\.[0-9]\|inflate [0-9.]* Copyright" "$0"' \
  "$TMP/root/usr/bin/mq"
check "the package depends on libmariadb3" \
  sh -c 'dpkg-deb -f "$0" Depends | grep -q "libmariadb3"' "$DEB"
for u in "$TMP"/root/lib/systemd/system/*.service; do
  check "$(basename "$u") runs /usr/bin/mq as the user mq" \
    sh -c 'grep -q "^ExecStart=/usr/bin/mq " "$0" && grep -qx "User=mq" "$0"' "$u"
done
for u in "$TMP"/root/lib/systemd/system/*.timer; do
  check "$(basename "$u") has its service" \
    test -f "${u%.timer}.service"
done

# installed only as root, and where its dependencies are (a container
# without systemd has no systemd-sysusers: tests/deps.sh installs it)
why=
if [ "$(id -u)" -ne 0 ]; then why="not root"
elif ! command -v systemd-sysusers >/dev/null 2>&1; then why="no systemd-sysusers"
fi
if [ -n "$why" ]; then
  out=$("$TMP/root/usr/bin/mq" --version 2>&1)
  is "$out" "mq $VERSION" "the packaged mq --version ($why: extracted, not installed)"
  echo "1..$N"
  [ "$FAILED" -eq 0 ]
  exit
fi

# installed for real, then purged: the system as it was, unless mq was
# already installed (then it is left alone)
if dpkg-query -W -f='${Status}' mq 2>/dev/null | grep -q 'installed'; then
  echo "# a package mq is already installed here: not installing over it"
  out=$("$TMP/root/usr/bin/mq" --version 2>&1)
  is "$out" "mq $VERSION" "the packaged mq --version (extracted)"
  echo "1..$N"
  [ "$FAILED" -eq 0 ]
  exit
fi
getent passwd mq >/dev/null 2>&1 || made_user=1
installed=1
# apt-get, as a user would (and CI: it waits for a dpkg lock another
# apt-get holds), with no network: the dependencies are installed already
DEBIAN_FRONTEND=noninteractive $nonet apt-get install -y -q \
  -o DPkg::Lock::Timeout=300 "$DEB" >"$TMP/install.log" 2>&1
rc=$?
is "$rc" 0 "apt-get install ./mq_${VERSION}_ARCH.deb installs it"
[ "$rc" -eq 0 ] || diag <"$TMP/install.log"
is "$(/usr/bin/mq --version 2>&1; echo "rc=$?")" "mq $VERSION
rc=0" "the installed /usr/bin/mq --version prints mq $VERSION"
out=$(/usr/bin/mq -h 2>&1)
rc=$?
is "$rc:$(printf '%s\n' "$out" | head -1 | cut -c1-9)" "0:usage: mq" "the installed mq -h prints its usage"
check "the system user mq exists" sh -c 'getent passwd mq >/dev/null'
if command -v man >/dev/null 2>&1; then
  is "$(man -w mq-work 2>&1)" /usr/share/man/man1/mq-work.1.gz "man finds mq-work(1)"
fi
if command -v bash >/dev/null 2>&1; then
  is "$(bash -c '. /usr/share/bash-completion/completions/mq && complete -p mq' 2>&1)" \
    "complete -F _mq mq" "bash loads the installed completion"
fi
check "no unit is enabled" \
  sh -c '! ls /etc/systemd/system/*.wants/mq-* >/dev/null 2>&1'
if command -v systemd-analyze >/dev/null 2>&1; then
  (cd /lib/systemd/system && systemd-analyze verify mq-work@.service \
    mq-requeue-stale.service mq-requeue-stale.timer mq-archive.service \
    mq-archive.timer mq-schedule-fire.service mq-schedule-fire.timer) \
    >"$TMP/verify.log" 2>&1
  rc=$?
  is "$rc:$(cat "$TMP/verify.log")" "0:" "systemd-analyze verify: the installed units are clean"
fi
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q \
  -o DPkg::Lock::Timeout=300 mq >"$TMP/purge.log" 2>&1
rc=$?
is "$rc" 0 "apt-get purge removes it"
[ "$rc" -eq 0 ] || diag <"$TMP/purge.log"
installed=
check "and /usr/bin/mq with it" test ! -e /usr/bin/mq
check "and its units" sh -c '! ls /lib/systemd/system/mq-* >/dev/null 2>&1'
if [ -n "$made_user" ]; then
  userdel mq >/dev/null 2>&1
  groupdel mq >/dev/null 2>&1
  check "the user mq, made by the package, is removed (Debian leaves it)" \
    sh -c '! getent passwd mq >/dev/null && ! getent group mq >/dev/null'
  made_user=
fi

echo "1..$N"
[ "$FAILED" -eq 0 ]
