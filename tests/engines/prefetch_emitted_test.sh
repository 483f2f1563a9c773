#!/bin/sh
# The keyspaces' lookup hints must survive compilation: GCC 12 at -O2 once
# deleted every __builtin_prefetch from PlainKeyspace::Prefetch(), leaving a
# bare HashOf() call, and nothing else could notice (a prefetch changes no
# result). Disassembles the engines library and counts the prefetch
# instructions in one function.
# Usage: prefetch_emitted_test.sh LIBKVLAB_ENGINES.a FUNCTION MINIMUM
#   PlainKeyspace::Prefetch: 3 (the slot hint's home line and the probe's
#   last slot, the record hint); ConcurrentEngine::Prefetch: 1 (the bucket).
set -eu
library=$1
function=$2
minimum=$3
command -v objdump >/dev/null || { echo "FAIL: objdump (binutils) is needed" >&2; exit 1; }
count=$(objdump -d --no-show-raw-insn -C "$library" |
  awk -v name="<kvlab::$function(" '
       /^[0-9a-f]+ </ { inside = index($0, name) > 0; next }
       inside && /(prefetch|prfm)/ { n++ }
       END { print n + 0 }')
echo "prefetch instructions in kvlab::$function: $count (want >= $minimum)"
[ "$count" -ge "$minimum" ] || { echo "FAIL: the lookup hints were compiled away" >&2; exit 1; }
