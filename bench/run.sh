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
echo "The calling thread's instructions (the hot path the application pays) and,"
echo "separately, the writer thread's (encoding, CRC, LZ4, write), per call."
echo
echo "| call | off | on (calling thread) | added | writer per call |"
echo "|---|---|---|---|---|"
# thread_ir FILE-PREFIX: "main others" instruction totals from --separate-threads output.
thread_ir() {
  local main=0 rest=0 f v
  for f in "$1"-*; do
    v=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
    case $f in *-01) main=$v ;; *) rest=$((rest + v)) ;; esac
  done
  echo "$main $rest"
}
# ir_per_call MODE [ENV...]: per-call instructions of N2 calls minus N1 calls.
ir_per_call() {
  local mode=$1; shift
  local n1=1000 n2=11000 a b
  rm -rf "$tmp/cg"; mkdir -p "$tmp/cg"
  env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg/a" build/bench/hotpath "$mode" $n1 >/dev/null 2>&1
  env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg/b" build/bench/hotpath "$mode" $n2 >/dev/null 2>&1
  read -r a1 a2 <<<"$(thread_ir "$tmp/cg/a")"
  read -r b1 b2 <<<"$(thread_ir "$tmp/cg/b")"
  echo "$(( (b1 - a1) / (n2 - n1) )) $(( (b2 - a2) / (n2 - n1) ))"
}
for mode in cond_signal futex_wake eventfd epoll_nowait epoll_park; do
  read -r off _ <<<"$(ir_per_call "$mode")"
  read -r onv wr <<<"$(ir_per_call "$mode" LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$tmp/cgtrace")"
  echo "| $mode | $off | $onv | $((onv - off)) | $wr |"
done
echo
echo "## Clock reads: ns per read (median of $ROUNDS rounds)"
echo
echo "| source | ns |"
echo "|---|---|"
for r in $(seq "$ROUNDS"); do taskset -c 0 build/bench/clocks 5000000 >> "$tmp/clocks"; done
for src in $(awk '{print $1}' "$tmp/clocks" | sort -u); do
  echo "| $src | $(awk -v s="$src" '$1 == s {print $2}' "$tmp/clocks" | median) |"
done
echo "- kernel clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
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
