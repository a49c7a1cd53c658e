#!/bin/sh
# c-test.sh PROGRAM: runs a C test program with the database settings of
# tests/lib.sh (its own database on the private server).
. "$(dirname "$0")/lib.sh"
"$@"
