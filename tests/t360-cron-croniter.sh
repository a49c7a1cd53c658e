#!/bin/sh
# t360-cron-croniter.sh: lib's next runs of cron expressions (cron.h,
# through tests/cron-next) against Debian's python3-croniter, over
# random expressions and instants in five zones; t360-cron-croniter.py
# says what is compared and what is not. Skips (1..0) without
# python3-croniter. A fixed seed (MQ_CRON_SEED=N another, =random a new
# one each run; the seed is printed).
# No server needed.

set -u
ROOT=${MQ_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
: "${MQ_CRON_NEXT:=$ROOT/build/tests/cron-next}"
export MQ_CRON_NEXT

# Debian's python3-croniter is for Debian's python3 (another python3,
# without it, may come first in PATH)
PY=python3
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; fi
if ! "$PY" -c 'import croniter, pytz' >/dev/null 2>&1; then
  echo "1..0 # SKIP python3-croniter is not installed (tests/deps.sh installs it)"
  exit 0
fi
if [ ! -x "$MQ_CRON_NEXT" ]; then
  echo "Bail out! no $MQ_CRON_NEXT (build it: ninja -C build)"
  exit 1
fi
exec "$PY" "$ROOT/tests/t360-cron-croniter.py"
