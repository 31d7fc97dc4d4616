#!/bin/bash
# make bench: agent cost as ratios measured in one run, A/B interleaved, medians.
# Writes build/bench/results.md; BENCHMARKS.md records the method and a run's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENT=$PWD/build/libdial9.so
DEC=build/dial9-decode
ROUNDS=${BENCH_ROUNDS:-5}
out=build/bench/results.md
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
on() { LD_PRELOAD=$AGENT DIAL9_QUIET=1 DIAL9_DIR=$tmp/traces "$@"; }
mkdir -p build/bench
{
echo "# dial9 benchmark run $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "## Hot path: ns per call, agent off vs on (median of $ROUNDS interleaved rounds)"
echo
echo "| call | off ns | on ns | added ns |"
echo "|---|---|---|---|"
for mode in cond_signal futex_wake eventfd epoll_nowait epoll_park; do
  n=200000; [ "$mode" = cond_signal ] && n=5000000
  for r in $(seq "$ROUNDS"); do
    taskset -c 0 build/bench/hotpath "$mode" "$n" | awk '{print $2}' >> "$tmp/$mode.off"
    on taskset -c 0 build/bench/hotpath "$mode" "$n" | awk '{print $2}' >> "$tmp/$mode.on"
  done
  a=$(median < "$tmp/$mode.off"); b=$(median < "$tmp/$mode.on")
  echo "| $mode | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", b-a}') |"
done
echo
echo "## Instructions per call (callgrind, stable on a noisy machine)"
echo
echo "| call | off | on | added |"
echo "|---|---|---|---|"
ir() { # instructions of N2 calls minus N1 calls, per call
  local i1 i2
  i1=$("$@" 1000 2>&1 >/dev/null | awk '/Collected/ {print $4}')
  i2=$("$@" 11000 2>&1 >/dev/null | awk '/Collected/ {print $4}')
  echo $(( (i2 - i1) / 10000 ))
}
for mode in cond_signal futex_wake eventfd epoll_nowait epoll_park; do
  cg="valgrind --tool=callgrind --callgrind-out-file=/dev/null"
  off=$(ir $cg build/bench/hotpath "$mode")
  onv=$(LD_PRELOAD=$AGENT DIAL9_QUIET=1 DIAL9_DIR=$tmp/cg ir $cg build/bench/hotpath "$mode")
  echo "| $mode | $off | $onv | $((onv - off)) |"
done
echo
echo "## Demo service: requests in its fixed 3 s run, and trace size (median of $ROUNDS interleaved rounds)"
echo
demo_requests() { "$@" build/progs/demo_server | sed -n 's/^demo: requests=\([0-9]*\).*/\1/p'; }
for r in $(seq "$ROUNDS"); do
  demo_requests env >> "$tmp/demo.off"
  rm -rf "$tmp/traces"
  demo_requests on >> "$tmp/demo.on"
done
a=$(median < "$tmp/demo.off"); b=$(median < "$tmp/demo.on")
ev=$($DEC summary --json "$tmp/traces" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
bytes=$(du -cb "$tmp"/traces/*/*.d9 | tail -1 | cut -f1)
echo "- requests off $a, on $b: ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b/a}')"
echo "- last traced run: $ev events in $bytes bytes of segments: $(awk -v e="$ev" -v b="$bytes" 'BEGIN{printf "%.2f", b/e}') bytes/event (headers included)"
echo
echo "## memcached -t 4 under memcaslap, pinned (server CPU 0, load CPU 1)"
echo
if command -v memcaslap >/dev/null || command -v memaslap >/dev/null; then
  slap=$(command -v memcaslap || command -v memaslap)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mc() { # $1 = off|on: one 5 s load, prints ops/s
    local pre=(); [ "$1" = on ] && pre=(env LD_PRELOAD=$AGENT DIAL9_QUIET=1 DIAL9_DIR=$tmp/mc)
    "${pre[@]}" taskset -c 0 memcached -t 4 -U 0 -l 127.0.0.1 -p "$port" -u root & local pid=$!
    sleep 0.5
    taskset -c 1 "$slap" -s 127.0.0.1:"$port" -t 5s -T 2 -c 32 2>/dev/null | awk '/^Run time/ {for(i=1;i<=NF;i++) if($i ~ /TPS:/) print $(i+1)}' | tail -1
    kill "$pid"; wait "$pid" 2>/dev/null || true
  }
  for r in $(seq 3); do mc off >> "$tmp/mc.off"; mc on >> "$tmp/mc.on"; done
  a=$(median < "$tmp/mc.off"); b=$(median < "$tmp/mc.on")
  echo "- ops/s off $a, on $b: ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b/a}')"
else
  echo "- skipped: memcaslap not installed"
fi
} | tee "$out"
echo "bench: results in $out"
