#!/bin/bash
# bench/start.sh - what the agent adds to a process's start and exit: wall
# time of BENCH_START_RUNS (40) back-to-back runs of a short program, agent
# off vs on, rounds interleaved (off first in odd rounds), median over
# BENCH_START_ROUNDS (7) of the per-round ms a run. Programs: /bin/true
# (records nothing: the constructor, the writer thread, exit) and
# /bin/sleep 0.001 (one park recorded: a segment made, written and sealed).
# A service pays this once; a shell script run under the agent pays it per
# command. Prints a Markdown section. BUILD as for bench/services.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
RUNS=${BENCH_START_RUNS:-40}
ROUNDS=${BENCH_START_ROUNDS:-7}
tmp=$(mktemp -d /tmp/d9start.XXXXXX); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
range() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.2f-%.2f", lo, hi}'; }
# ms_a_run MODE CMD...: wall ms a run of CMD, RUNS runs back to back.
ms_a_run() {
    local mode=$1 s e i
    shift
    s=$(date +%s%N)
    for ((i = 0; i < RUNS; i++)); do
        if [ "$mode" = on ]; then
            LD_PRELOAD="$BUILD/libdial9.so" DIAL9_QUIET=1 DIAL9_DIR="$tmp/trace" "$@"
        else
            "$@"
        fi
    done
    e=$(date +%s%N)
    rm -rf "$tmp/trace"
    awk -v d=$((e - s)) -v n="$RUNS" 'BEGIN{printf "%.3f\n", d / n / 1e6}'
}
echo "## Start and exit: wall ms a process, agent off vs on (median of $ROUNDS interleaved rounds of $RUNS runs)"
echo
echo "| program | off ms | on ms | added ms (range) |"
echo "|---|---|---|---|"
for prog in "/bin/true" "/bin/sleep 0.001"; do
    key=${prog//[^a-z0-9]/_}
    read -ra cmd <<<"$prog"
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then
            a=$(ms_a_run off "${cmd[@]}"); b=$(ms_a_run on "${cmd[@]}")
        else
            b=$(ms_a_run on "${cmd[@]}"); a=$(ms_a_run off "${cmd[@]}")
        fi
        echo "$a" >>"$tmp/$key.off"; echo "$b" >>"$tmp/$key.on"
        awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f\n", b - a}' >>"$tmp/$key.added"
    done
    # shellcheck disable=SC2016 # the backquotes are Markdown's
    printf '| `%s` | %.2f | %.2f | %.2f (%s) |\n' "$prog" "$(median <"$tmp/$key.off")" "$(median <"$tmp/$key.on")" \
        "$(median <"$tmp/$key.added")" "$(range <"$tmp/$key.added")"
done
echo
