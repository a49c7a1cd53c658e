#!/bin/sh
# deps.sh: installs, from Debian's packages, what building, testing and
# the demo need and this machine lacks. As root, or through sudo.
# clang and libclang-rt-dev: the libFuzzer run of the parsers (t220).
# zsh and fish: t310 checks the completion scripts for them.
# galera-4 and rsync: the 3-node cluster of tests/galera.sh (t400); its
# SST scripts ship only in mariadb-server and are taken out of it below.
# libssl-dev and zlib1g-dev: OpenSSL's headers (the lighter client start,
# lib/client_init.c) and the static archives -Dstatic-client=enabled
# links in.
# python3-pymysql, php-cli, php-mysql and libdbd-mysql-perl: the client
# libraries of the examples/ producers and consumers, which t330 runs
# against mq (mq-sql(7)).
# strace: t217 checks what an mq process opens as it starts (skipped
# without it).
# tzdata: the zone files of calendar schedules (lib/tz.c, test-cron).
# python3-croniter (and the python3-tz it brings): the reference nobody
# here wrote that t360 compares lib's next runs of cron expressions with
# (issue 33); t360 skips without it.
# dpkg-dev, debhelper and lintian: t500 builds the Debian package
# (debian/) and checks it with lintian; it skips without them. systemd:
# the package needs its systemd-sysusers (the user mq), and t500 checks
# the units with systemd-analyze (installing it starts nothing).
# mariadb-server-core brings mariadbd and mariadb-install-db without the
# system service that mariadb-server would start: mq's tests and demo run
# a private server of their own and leave no server behind.
set -eu

# usage: deps.sh [bench]   (bench: also what tests/bench/bench.sh compares with)
pkgs="build-essential meson ninja-build pkg-config libmariadb-dev libssl-dev zlib1g-dev scdoc
mariadb-server-core mariadb-client python3 valgrind openssl clang
libclang-rt-dev zsh fish galera-4 rsync strace tzdata"
pkgs="$pkgs python3-pymysql php-cli php-mysql libdbd-mysql-perl python3-croniter"
pkgs="$pkgs dpkg-dev debhelper lintian systemd"
[ "${1:-}" = bench ] && pkgs="$pkgs percona-toolkit"
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
    grep -q '^install ok installed$' || missing="$missing $p"
done
if [ "$(id -u)" -eq 0 ]; then
  sudo=
elif command -v sudo >/dev/null 2>&1; then
  sudo=sudo
else
  sudo=none
fi

if [ -n "$missing" ]; then
  if [ "$sudo" = none ]; then
    echo "deps.sh: these packages are missing:$missing" >&2
    echo "deps.sh: run this script as root (or install sudo) to install them" >&2
    exit 1
  fi
  echo "deps.sh: installing:$missing" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends $missing >&2
fi

top=$(cd "$(dirname "$0")/.." && pwd)

# from_deb PACKAGE FILE...: copies FILEs (paths in the package, under
# usr/bin) out of Debian's PACKAGE into .deps/bin, without installing it.
# A download: without network (a package build) it says so and goes on,
# and the tests that need them skip (promtool_check in tests/lib.sh,
# `tests/galera.sh missing`)
from_deb() {
  pkg=$1
  shift
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1); then
    # the package lists may be missing (a fresh image): fetch them
    [ "$sudo" = none ] || $sudo apt-get update -q >&2 || :
    if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1); then
      echo "deps.sh: cannot download Debian's $pkg package (no network," \
        "or run as root once): without $*, the tests that need it skip" >&2
      rm -rf "$tmp"
      return 0
    fi
  fi
  if ! dpkg-deb -x "$tmp/${pkg}"_*.deb "$tmp/x"; then
    echo "deps.sh: cannot unpack $pkg: without $*, the tests that need it skip" >&2
    rm -rf "$tmp"
    return 0
  fi
  mkdir -p "$top/.deps/bin"
  for f in "$@"; do
    cp "$tmp/x/usr/bin/$f" "$top/.deps/bin/$f"
  done
  rm -rf "$tmp"
  echo "deps.sh: $* taken from Debian's $pkg package into .deps/bin" >&2
}

# promtool checks `mq stats --prometheus` in the tests. It ships in Debian's
# prometheus package, whose installation would start a Prometheus server:
# take the one binary out of the package instead.
if ! command -v promtool >/dev/null 2>&1 && [ ! -x "$top/.deps/bin/promtool" ]; then
  from_deb prometheus promtool
fi

# wsrep_sst_rsync and wsrep_sst_common: a Galera node that joins runs them
# to copy a donor's data. They ship in Debian's mariadb-server, whose
# installation would start a system MariaDB: take the two scripts out of
# the package instead (tests/galera.sh puts .deps/bin on PATH).
if [ ! -x "$top/.deps/bin/wsrep_sst_rsync" ]; then
  from_deb mariadb-server wsrep_sst_common wsrep_sst_rsync
fi
