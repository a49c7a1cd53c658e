#!/bin/sh
# Turns a .sql file into a C string constant, so the binary carries the
# schema that sql/ holds (one source of truth, no copy to drift). Bytes,
# not a string literal: C11 compilers need not take literals over 4095
# characters, and the schema's commented text is longer.
# usage: embed.sh SYMBOL FILE > FILE.c
set -eu
printf '/* generated from %s by sql/embed.sh; do not edit */\n' "$(basename "$2")"
printf 'extern const char %s[];\n' "$1"
printf 'const char %s[] = {\n' "$1"
od -An -v -tx1 "$2" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/\t/'
printf '\t0\n};\n'
