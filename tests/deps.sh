#!/bin/sh
# deps.sh: installs, from Debian's packages, what building, testing and
# the demo need and this machine lacks. As root, or through sudo.
# mariadb-server-core brings mariadbd and mariadb-install-db without the
# system service that mariadb-server would start: mq's tests and demo run
# a private server of their own and leave no server behind.
set -eu

pkgs="build-essential meson ninja-build pkg-config libmariadb-dev scdoc
mariadb-server-core mariadb-client python3 valgrind"
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
    grep -q '^install ok installed$' || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=
elif command -v sudo >/dev/null 2>&1; then
  sudo=sudo
else
  echo "deps.sh: these packages are missing:$missing" >&2
  echo "deps.sh: run this script as root (or install sudo) to install them" >&2
  exit 1
fi
echo "deps.sh: installing:$missing" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
# shellcheck disable=SC2086
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  --no-install-recommends $missing >&2
