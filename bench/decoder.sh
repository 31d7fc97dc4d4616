#!/bin/bash
# decoder.sh - dial9-decode throughput and peak memory on big traces: events
# per second (trace events / wall time; and per CPU second, user + sys, which
# another load on the machine disturbs less) and peak RSS (GNU time) of check,
# summary, events --json >/dev/null and export --format perfetto -o /dev/null,
# each the median of RUNS runs, at two trace sizes: memory that does not grow
# with trace length shows as the same RSS at both.
# The traces are real recordings: bench/eventgen (4 threads: cond_signal
# wakes, and epoll parks/unparks) under the agent, checked with
# `dial9-decode check` to hold at least the asked number of events, and
# cached in $BUILD/bench/decoder-traces/N/ so reruns skip making them.
# Environment:
#   BUILD=DIR          the build to measure (default build): its dial9-decode,
#                      libdial9.so and bench/eventgen
#   DECODER_QUICK=1    (or BENCH_QUICK=1) 1M and 5M events, 1 run
#   DECODER_SIZES="N.." trace sizes in events (default 10000000 50000000)
#   DECODER_RUNS=N     runs per figure (default 3)
# Prints a Markdown section on stdout (progress on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DEC=$BUILD/dial9-decode
AGENT=$BUILD/libdial9.so
GEN=$BUILD/bench/eventgen
case $AGENT in /*) ;; *) AGENT=$PWD/$AGENT ;; esac
QUICK=${DECODER_QUICK:-${BENCH_QUICK:-0}}
if [ "$QUICK" = 1 ]; then
  SIZES=${DECODER_SIZES:-"1000000 5000000"} RUNS=${DECODER_RUNS:-1}
else
  SIZES=${DECODER_SIZES:-"10000000 50000000"} RUNS=${DECODER_RUNS:-3}
fi
TIME=/usr/bin/time
die() { echo "decoder.sh: $*" >&2; exit 1; }
[ -x "$TIME" ] || die "GNU time is not installed (scripts/install-deps.sh bench)"
for f in "$DEC" "$AGENT" "$GEN"; do [ -f "$f" ] || die "$f is not built (make BUILD=$BUILD all)"; done
cache=$BUILD/bench/decoder-traces
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Events in the segments `check` reports on stdin ("OK path (B blocks, E events)").
check_events() { awk '{for (i = 2; i <= NF; i++) if ($i == "events)") s += $(i - 1)} END {print s + 0}'; }

# make_trace N: $cache/N/trace holding at least N events, made once. With
# 2 cores eventgen's 4 threads outrun the writer and their rings drop (7M of
# 10M asked were kept in one run): asked again for more, scaled by what was
# kept, up to 4 times.
make_trace() {
  local n=$1 dir=$cache/$1 got=0 ask=$1 try
  [ -s "$dir/events" ] && return 0
  for try in 1 2 3 4; do
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "decoder.sh: recording a trace of $n events into $dir (asking eventgen for $ask)" >&2
    # A 1M-event buffer per thread and no retention limit: nothing deleted.
    DIAL9_BUFFER_EVENTS=1048576 DIAL9_MAX_TOTAL_SIZE=1024G DIAL9_QUIET=1 DIAL9_DIR="$dir/trace" \
      LD_PRELOAD=$AGENT "$GEN" 4 "$ask" >/dev/null || die "eventgen failed"
    got=$("$DEC" check "$dir/trace" | check_events)
    [ "$got" -ge "$n" ] && break
    ask=$(awk -v a="$ask" -v n="$n" -v g="$got" 'BEGIN {printf "%.0f", a * n / (g > 0 ? g : 1) * 1.15}')
  done
  [ "$got" -ge "$n" ] || die "the trace has $got events, fewer than $n after 4 tries (dropped)"
  echo "$got" >"$dir/events"
}

# measure EVENTS NAME ARGS...: one table row, RUNS runs of dial9-decode ARGS.
measure() {
  local events=$1 name=$2 secs kb user sys
  shift 2
  : >"$tmp/rate"
  : >"$tmp/cpurate"
  : >"$tmp/rss"
  for _ in $(seq "$RUNS"); do
    "$TIME" -f "%e %M %U %S" -o "$tmp/time" "$DEC" "$@" >/dev/null 2>"$tmp/err" ||
      die "dial9-decode $* failed: $(head -c 500 "$tmp/err")"
    read -r secs kb user sys <"$tmp/time"
    awk -v e="$events" -v s="$secs" 'BEGIN {printf "%.0f\n", e / (s > 0 ? s : 0.01)}' >>"$tmp/rate"
    awk -v e="$events" -v s="$user" -v t="$sys" 'BEGIN {printf "%.0f\n", e / (s + t > 0 ? s + t : 0.01)}' \
      >>"$tmp/cpurate"
    echo "$kb" >>"$tmp/rss" # KiB: in MB a 1.98 -> 2.01 MB check would read as 1 -> 2
    echo "decoder.sh: $name on $events events: ${secs}s (cpu ${user}+${sys}s), $((kb / 1024)) MB" >&2
  done
  printf "| %s | %s | %.1f | %.1f | %.1f |\n" "$events" "$name" "$(median <"$tmp/rate" | awk '{print $1 / 1e6}')" \
    "$(median <"$tmp/cpurate" | awk '{print $1 / 1e6}')" "$(median <"$tmp/rss" | awk '{print $1 / 1024}')"
  # For the verdicts: "events name Mev/s RSS-KiB" of every measurement.
  echo "$events ${name// /_} $(median <"$tmp/rate" | awk '{print $1 / 1e6}') $(median <"$tmp/rss")" >>"$tmp/all"
}

# cpu_ticks: "steal total" of /proc/stat's cpu line (all CPUs, USER_HZ ticks):
# steal is time the hypervisor gave this VM's CPUs to someone else, which
# slows the wall-clock rates without showing in the load average.
cpu_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t}' /proc/stat; }

for n in $SIZES; do make_trace "$n"; done
read -r steal0 total0 < <(cpu_ticks)
echo "## Decoder: events/s and peak RSS (median of $RUNS runs, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "$DEC on traces of bench/eventgen under the agent, cached in $cache."
echo
echo "| events | command | M events/s (wall) | M events/CPU-s | peak RSS MB |"
echo "|---|---|---|---|---|"
for n in $SIZES; do
  events=$(cat "$cache/$n/events")
  path=$cache/$n/trace
  measure "$events" check check "$path"
  measure "$events" summary summary "$path"
  measure "$events" "events --json" events --json "$path"
  measure "$events" "export perfetto" export --format perfetto -o /dev/null "$path"
done
read -r steal1 total1 < <(cpu_ticks)
echo
awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) \
  'BEGIN {printf "- CPU steal while measuring: %.1f%% of both CPUs'"'"' time (/proc/stat)\n", (t > 0 ? 100 * s / t : 0)}'
for n in $SIZES; do
  echo "- $(cat "$cache/$n/events") events: $(du -sb "$cache/$n/trace" | cut -f1) bytes of segments"
done
# One verdict per issue 5 target, on the largest trace: >= 50M events/s for
# check and summary; peak RSS that does not grow with the trace (largest
# trace within 1.5x of the smallest, for every command).
echo
awk '{ if (!($2 in small) || $1 < se[$2]) { small[$2] = $4; se[$2] = $1 }
       if (!($2 in big) || $1 > be[$2]) { big[$2] = $4; be[$2] = $1; rate[$2] = $3 } }
     END { for (c in rate) if (c == "check" || c == "summary")
             printf "- verdict: %s >= 50M events/s on %d events: %.1f (%s)\n", c, be[c], rate[c], (rate[c] >= 50 ? "met" : "MISSED")
           grow = 0; worst = ""
           for (c in big) if (big[c] > 1.5 * small[c]) { grow = 1; worst = worst " " c }
           printf "- verdict: peak RSS does not grow with the trace (largest within 1.5x of smallest): %s\n", grow ? "MISSED:" worst : "met" }' "$tmp/all"
