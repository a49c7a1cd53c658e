#!/bin/sh
# Turns a .sql file into a C string constant, so the binary carries the
# schema that sql/ holds (one source of truth, no copy to drift).
# usage: embed.sh SYMBOL FILE > FILE.c
set -eu
printf '/* generated from %s by sql/embed.sh; do not edit */\n' "$(basename "$2")"
printf 'extern const char %s[];\n' "$1"
printf 'const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$2"
printf ';\n'
