#!/usr/bin/env bash
# Runs the libFuzzer binary resp_session_fuzzer for a set time, on a working
# copy of tests/fuzz/corpus kept in the build dir (so what one run discovers
# seeds the next), and says how many inputs it executed and what it found.
# Exit status 1 when the fuzzer found a crash (the input is left in
# BUILD_DIR/fuzz-crashes/), 2 on usage errors.
#
# usage: tests/fuzz/run_fuzzer.sh BUILD_DIR SECONDS
set -uo pipefail

if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
seeds=$(cd "$(dirname "$0")" && pwd)/corpus
fuzzer=$build/resp_session_fuzzer
if [ ! -x "$fuzzer" ]; then
  echo "fuzz: $fuzzer not built (make fuzz builds it)" >&2
  exit 2
fi
work=$build/fuzz-corpus
crashes=$build/fuzz-crashes
mkdir -p "$work" "$crashes"
cp -n "$seeds"/* "$work"/
log=$build/fuzz-$(date -u +%Y%m%dT%H%M%SZ).log
started=$build/fuzz-crashes/.started  # crash files newer than this are this run's
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
