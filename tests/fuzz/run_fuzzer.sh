#!/usr/bin/env bash
# Runs a libFuzzer binary (resp_session_fuzzer unless FUZZER names another,
# e.g. command_fuzzer) for a set time, on a working corpus kept in the build
# dir (so what one run discovers seeds the next; resp_session_fuzzer's starts
# as a copy of tests/fuzz/corpus), and says how many inputs it executed and
# what it found.
# Exit status 1 when the fuzzer found a crash (the input is left in
# BUILD_DIR/fuzz-crashes/), 2 on usage errors.
#
# usage: tests/fuzz/run_fuzzer.sh BUILD_DIR SECONDS [FUZZER]
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [FUZZER]" >&2
  exit 2
fi
build=$1
seconds=$2
name=${3:-resp_session_fuzzer}
seeds=$(cd "$(dirname "$0")" && pwd)/corpus
fuzzer=$build/$name
if [ ! -x "$fuzzer" ]; then
  echo "fuzz: $fuzzer not built (make fuzz builds it)" >&2
  exit 2
fi
# The RESP corpus is raw client bytes; command_fuzzer's inputs are choices
# (command_fuzz.h), so it grows its own corpus from nothing.
if [ "$name" = resp_session_fuzzer ]; then
  work=$build/fuzz-corpus
else
  work=$build/$name-corpus
fi
crashes=$build/fuzz-crashes
mkdir -p "$work" "$crashes"
if [ "$name" = resp_session_fuzzer ]; then cp -n "$seeds"/* "$work"/; fi
log=$build/fuzz-$name-$(date -u +%Y%m%dT%H%M%SZ).log
started=$crashes/.started-$name  # crash files newer than this are this run's
touch "$started"

# -timeout: one input taking 30 s counts as a hang. Inputs fed a byte at a
# time legitimately take seconds under ASan + coverage on a loaded 2-core box.
echo "fuzz: $fuzzer for ${seconds}s on $work (log: $log)"
"$fuzzer" -max_len=8192 -timeout=30 -rss_limit_mb=2048 -max_total_time="$seconds" \
  -print_final_stats=1 -artifact_prefix="$crashes/" "$work" >"$log" 2>&1
status=$?

stat() { grep -o "stat::$1: *[0-9]*" "$log" | grep -o '[0-9]*$' | tail -1; }
echo "fuzz: $(stat number_of_executed_units) executions, $(stat average_exec_per_sec) exec/s," \
     "coverage $(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2) edges," \
     "corpus $(find "$work" -type f | wc -l) inputs"
if [ $status -ne 0 ]; then
  echo "fuzz: FAILED (fuzzer exit status $status). End of $log:"
  tail -n 60 "$log"
  echo "fuzz: crash inputs:"
  find "$crashes" -type f -newer "$started" -name '[a-z]*-*' | sort
  echo "fuzz: reproduce with '$fuzzer FILE'; minimize with '$fuzzer -minimize_crash=1 -runs=10000 FILE'"
  echo "      and commit the minimized input to tests/fuzz/corpus/ as a regression seed."
  exit 1
fi
echo "fuzz: no crash"
