#!/bin/sh
# The keyspace's lookup hints must survive compilation: GCC 12 at -O2 once
# deleted every __builtin_prefetch from PlainKeyspace::Prefetch(), leaving a
# bare HashOf() call, and nothing else could notice (a prefetch changes no
# result). Disassembles the engines library and counts the prefetch
# instructions in that function: the slot hint gives two (the home slot's
# line and the probe's last slot), the record hint one.
# Usage: prefetch_emitted_test.sh LIBKVLAB_ENGINES.a
set -eu
library=$1
command -v objdump >/dev/null || { echo "FAIL: objdump (binutils) is needed" >&2; exit 1; }
count=$(objdump -d --no-show-raw-insn -C "$library" |
  awk '/^[0-9a-f]+ <kvlab::PlainKeyspace::Prefetch\(/ { inside = 1; next }
       /^[0-9a-f]+ </ { inside = 0 }
       inside && /(prefetch|prfm)/ { n++ }
       END { print n + 0 }')
echo "prefetch instructions in kvlab::PlainKeyspace::Prefetch: $count (want >= 3)"
[ "$count" -ge 3 ] || { echo "FAIL: the lookup hints were compiled away" >&2; exit 1; }
