#!/usr/bin/env bash
# Harness efficiency: kvlab-load versus redis-benchmark against one
# redis-server, server and client pinned to different cores. Prints one line
# per run and the medians and ratio per pipeline depth, in ops/s and in
# client CPU microseconds per operation (the latter is what "efficiency"
# means when other processes share the machine).
#
# usage: scripts/compare_with_redis_benchmark.sh [BUILD_DIR] [RUNS]
#   SERVER_CPU (default 0) and CLIENT_CPU (default 1) choose the cores.
set -euo pipefail

build=${1:-build}
runs=${2:-3}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
load="$build/kvlab-load"
[[ -x "$load" ]] || { echo "no $load: build kvlab-load first" >&2; exit 2; }

dir=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c "$server_cpu" redis-server --port "$port" --save '' --appendonly no --daemonize no \
  >"$dir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "server on CPU $server_cpu, clients on CPU $client_cpu, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for pipeline in 16 1; do
  : >"$dir/kvlab" ; : >"$dir/redis"; : >"$dir/kvlab_cpu"; : >"$dir/redis_cpu"
  requests=2000000
  for run in $(seq "$runs"); do
    redis-cli -p "$port" flushall >/dev/null
    /usr/bin/time -f "%U %S" -o "$dir/time" taskset -c "$client_cpu" redis-benchmark -p "$port" \
      -c 50 -P "$pipeline" -t set -d 64 -r 100000 -n "$requests" --csv 2>/dev/null |
      awk -F'"' '/^"SET"/ {print $4}' >>"$dir/redis"
    awk -v n="$requests" '{printf "%.3f\n", ($1 + $2) * 1e6 / n}' "$dir/time" >>"$dir/redis_cpu"
    redis-cli -p "$port" flushall >/dev/null
    taskset -c "$client_cpu" "$load" --target "tcp://127.0.0.1:$port" --client dedicated \
      --connections 50 --pipeline "$pipeline" --command set --value-size 64 --keys 100000 \
      --threads 1 --duration 5 --warmup 1 --repeat 1 --cpus "$client_cpu" --quiet \
      --csv "$dir/run.csv" >/dev/null
    awk -F, 'NR==2 {print $9}' "$dir/run.csv" >>"$dir/kvlab"
    # client_cpu (cores) * seconds / ops over the measured window
    awk -F, 'NR==2 {printf "%.3f\n", $16 * $8 * 1e6 / $7}' "$dir/run.csv" >>"$dir/kvlab_cpu"
    echo "pipeline $pipeline run $run: redis-benchmark $(tail -1 "$dir/redis") ops/s $(tail -1 "$dir/redis_cpu") cpu-us/op, kvlab-load $(tail -1 "$dir/kvlab") ops/s $(tail -1 "$dir/kvlab_cpu") cpu-us/op"
  done
  redis_median=$(median <"$dir/redis")
  kvlab_median=$(median <"$dir/kvlab")
  redis_cpu=$(median <"$dir/redis_cpu")
  kvlab_cpu=$(median <"$dir/kvlab_cpu")
  echo "pipeline $pipeline: median ops/s redis-benchmark $redis_median, kvlab-load $kvlab_median, ratio $(awk -v k="$kvlab_median" -v r="$redis_median" 'BEGIN {printf "%.2f", k/r}'); median client cpu-us/op redis-benchmark $redis_cpu, kvlab-load $kvlab_cpu"
done
