#!/bin/bash
# bench/memory.sh - resident memory the agent adds: build/bench/thread_rss
# (N threads, each records EVENTS events, then all wait while VmRSS is read)
# with the agent off vs on, interleaved, median of BENCH_MEM_ROUNDS (3).
# "idle": 1 event per thread (registered, ring barely touched); "busy":
# 100000 events per thread, more than the ring holds (DIAL9_BUFFER_EVENTS,
# default 4096 x 32 bytes), so every page of it has been written.
# Prints a Markdown section. BUILD as for bench/services.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
ROUNDS=${BENCH_MEM_ROUNDS:-3}
tmp=$(mktemp -d /tmp/d9mem.XXXXXX); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rss() { "$@" | awk '{print $6}'; }
echo "## Memory: resident bytes per recorded thread (VmRSS, agent off vs on, median of $ROUNDS rounds)"
echo
echo "\`$BUILD/bench/thread_rss N EVENTS\` reads /proc/self/status VmRSS while N threads that each"
echo "recorded EVENTS events (pthread_cond_signal) wait on a barrier. Added = on - off;"
echo "per thread = (added(N) - added(1)) / (N - 1), so the per-process part (writer thread,"
echo "tables) is left out; that part is added(1). DIAL9_BUFFER_EVENTS default (4096)."
echo
echo "| threads | events/thread | off KiB | on KiB | added KiB | added KiB per thread |"
echo "|---|---|---|---|---|---|"
for ev in 1 100000; do
    for n in 1 16 64 256; do
        for r in $(seq "$ROUNDS"); do
            rss "$BUILD/bench/thread_rss" "$n" "$ev" >>"$tmp/off.$n.$ev"
            rss env LD_PRELOAD="$BUILD/libdial9.so" DIAL9_QUIET=1 DIAL9_DIR="$tmp/trace" "$BUILD/bench/thread_rss" "$n" "$ev" >>"$tmp/on.$n.$ev"
            rm -rf "$tmp/trace"
        done
        a=$(median <"$tmp/off.$n.$ev"); b=$(median <"$tmp/on.$n.$ev")
        echo "$((b - a))" >"$tmp/added.$n.$ev"
        base=$(cat "$tmp/added.1.$ev")
        per=$(awk -v d=$((b - a)) -v b1="$base" -v n="$n" 'BEGIN{print (n > 1) ? sprintf("%.1f", (d - b1) / (n - 1)) : "-"}')
        echo "| $n | $ev | $a | $b | $((b - a)) | $per |"
    done
done
echo
echo "- the Rust dial9 crate's figure for comparison: 1 MiB per thread (1024 KiB)."
