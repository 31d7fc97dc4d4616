#!/bin/bash
# make bench: agent cost as ratios measured in one run, A/B interleaved, medians.
# Writes build/bench/results.md; BENCHMARKS.md records the method and a run's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
# BUILD=DIR (default build): the build measured; bench/*.sh get it too.
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
AGENT=$BUILD/libdial9.so
DEC=$BUILD/dial9-decode
# BENCH_QUICK=1 (make bench-quick, under 2 minutes): the hot path (3 rounds; 5 in one
# process) and one service. It took 1 min 49 s with 7 in-process rounds (session 32), which
# left too little room for this VM's slow days.
QUICK=${BENCH_QUICK:-0}
ROUNDS=${BENCH_ROUNDS:-$([ "$QUICK" = 1 ] && echo 3 || echo 5)}
INPROC_ROUNDS=$([ "$QUICK" = 1 ] && echo $((ROUNDS + 2)) || echo $((ROUNDS * 2 + 1)))
out=$BUILD/bench/results.md
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
on() { LD_PRELOAD=$AGENT DIAL9_QUIET=1 DIAL9_DIR=$tmp/traces "$@"; }
# ab_row MODE ROUNDS TAG HOTPATH-ARGS...: ROUNDS interleaved runs of hotpath
# MODE ARGS without and with the agent on CPU 0; prints the table row (median
# ns per call) and keeps the added ns in $tmp/MODE.TAG.
ab_row() {
  local mode=$1 rounds=$2 tag=$3 a b added r
  shift 3
  for r in $(seq "$rounds"); do
    taskset -c 0 "$BUILD/bench/hotpath" "$mode" "$@" | awk '{print $2}' >> "$tmp/$mode.$tag.off"
    on taskset -c 0 "$BUILD/bench/hotpath" "$mode" "$@" | awk '{print $2}' >> "$tmp/$mode.$tag.on"
  done
  a=$(median < "$tmp/$mode.$tag.off"); b=$(median < "$tmp/$mode.$tag.on")
  added=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", b-a}')
  echo "| $mode | $a | $b | $added |"
  echo "$added" > "$tmp/$mode.$tag"
}
# hotpath's modes; the recording ones, with the events each call records.
MODES="cond_signal cond_idle futex_wake eventfd pipe_wake epoll_nowait epoll_park futex_park poll_park select_park cond_park sem_park sock_park epoll_ctl_efd app mutex rwlock epoll_ctl sock_read sock_recv sock_send sock_writev sock_accept child_nohang ioctl fcntl file_pread file_openclose"
RECORDING="cond_signal=1 futex_wake=1 eventfd=1 pipe_wake=1 epoll_park=2 futex_park=2 poll_park=2 select_park=2 cond_park=2 sem_park=3 sock_park=2 epoll_ctl_efd=1 app=1"
mkdir -p "$BUILD/bench"
{
echo "# dial9 benchmark run $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
# The machine, as a run's figures depend on it: where the kernel empties the
# TLB at every system call (page-table isolation without PCID), a hook pays a
# page walk for each page it touches after the call (docs/BENCH-HISTORY.md).
pti=$(cat /sys/devices/system/cpu/vulnerabilities/meltdown 2>/dev/null || echo unknown)
pcid=$(grep -qw pcid /proc/cpuinfo && echo yes || echo no)
virt=$(systemd-detect-virt --vm 2>/dev/null || true)
echo "Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)," \
  "virtual machine ${virt:-unknown}, meltdown: $pti, PCID $pcid," \
  "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
  "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')."
echo
echo "## Hot path: ns per call, agent off vs on (median of $ROUNDS interleaved rounds)"
echo
echo "\`hotpath MODE N\` on CPU 0, N = $([ "$QUICK" = 1 ] && echo 100,000 || echo 200,000) calls (5,000,000 for the calls that make no system call)."
echo
echo "| call | off ns | on ns | added ns |"
echo "|---|---|---|---|"
for mode in $MODES; do
  # Quick: half the system calls, for its 2 minutes on a slow day (1-1.5 us a call).
  n=$([ "$QUICK" = 1 ] && echo 100000 || echo 200000)
  case $mode in cond_signal|cond_idle|mutex|rwlock|sem_park|app) n=5000000 ;; esac
  ab_row "$mode" "$ROUNDS" all "$n"
done
echo
# verdict TEXT VALUE LIMIT: one line, "met" when VALUE <= LIMIT.
verdict() { awk -v t="$1" -v v="$2" -v l="$3" 'BEGIN{printf "- verdict: %s: %s (%s)\n", t, v, (v <= l) ? "met" : "MISSED"}'; }
# verdict_each TEXT LIMIT NAME=VALUE...: one line for several figures, "met"
# only when every VALUE <= LIMIT; the ones over it are named.
verdict_each() {
  local t=$1 l=$2; shift 2
  printf '%s\n' "$@" | awk -F= -v t="$t" -v l="$l" '
    {all = all sep $1 " " $2; sep = ", "; if ($2 > l) {over = over osep $1; osep = ", "}}
    END {printf "- verdict: %s: %s (%s)\n", t, all, over == "" ? "met" : "MISSED: " over}'
}
verdict_each "ns added to an uncontended lock + unlock (mutex; rwlock, read), target <= 5" 5 \
  "mutex=$(cat "$tmp/mutex.all")" "rwlock=$(cat "$tmp/rwlock.all")"
echo
echo "## Hot path, recorded events only, in one process: ns per call (median of $INPROC_ROUNDS rounds)"
echo
echo "\`hotpath MODE N 20000 50\`: 20,000 untimed calls through the agent and as many straight"
echo "to libc, 300 ms for the writer to drain the ring, then N timed calls through the agent in"
echo "blocks of 50, each paired with a block of 50 calls to libc's own definition (dlsym on"
echo "libc.so.6, which the agent never sees), the pair's order drawn at random. A round's figure"
echo "is the median over its pairs; the table gives the median over rounds (one process each, the"
echo "rounds going over the calls in turn) and their range. N = 8000 over the events a call records (4000 for a PARK and an UNPARK, 2666 for sem_park's WAKE, PARK and UNPARK) with a 16384-entry"
echo "ring (DIAL9_BUFFER_EVENTS=16384): under half of it, so every call is recorded, no drop, no"
echo "kick. Blocks tens of microseconds apart share the VM's state, which on the PVM guest of the earlier runs moved a 1 us syscall by"
echo "tens of ns between processes (the table above) and by about 170 ns for stretches of a few"
echo "hundred microseconds."
echo
echo "forwarder: the same A/B under bench/passthrough.so instead of the agent, an interposer of"
echo "syscall(), write() and epoll_wait() that only forwards to libc (cond_signal, poll_park,"
echo "cond_park and sem_park are not interposed there: their figure is libc against itself)."
echo
echo "| call | libc ns | agent ns | added ns (range) | added ns per event | forwarder added ns |"
echo "|---|---|---|---|---|---|"
# inproc_round MODE N: one process through the agent, one through the forwarder.
inproc_round() {
  local f=$tmp/$1.inproc
  DIAL9_BUFFER_EVENTS=16384 on taskset -c 0 "$BUILD/bench/hotpath" "$1" "$2" 20000 50 >> "$f.agent"
  LD_PRELOAD=$BUILD/bench/passthrough.so taskset -c 0 "$BUILD/bench/hotpath" "$1" "$2" 20000 50 >> "$f.fwd"
}
# ab_cells F: "libc | agent | added (range)", medians over the rounds of
# hotpath's A/B lines in F.agent ("MODE libc_ns agent_ns added_ns").
ab_cells() {
  local f=$1.agent
  echo "$(awk '{print $2}' "$f" | median) | $(awk '{print $3}' "$f" | median) |" \
    "$(awk '{print $4}' "$f" | median) ($(awk '{print $4}' "$f" | sort -g | head -1) to" \
    "$(awk '{print $4}' "$f" | sort -g | tail -1))"
}
# inproc_row MODE EVENTS: the row; keeps the added ns per event in $tmp/MODE.recorded.
inproc_row() {
  local mode=$1 events=$2 f=$tmp/$1.inproc
  awk '{print $4}' "$f.agent" | median | awk -v e="$events" '{printf "%.1f\n", $1 / e}' > "$tmp/$mode.recorded"
  echo "| $mode | $(ab_cells "$f") | $(cat "$tmp/$mode.recorded") | $(awk '{print $4}' "$f.fwd" | median) |"
}
# Round by round over the modes, so that a stretch of the VM's state falls on
# every mode's rounds alike, not on all of one mode's (session 33).
for r in $(seq "$INPROC_ROUNDS"); do
  for me in $RECORDING; do
    # N calls recording N * events under half the ring: 8000, 4000 or 2666 calls.
    inproc_round "${me%=*}" $((8000 / ${me#*=}))
  done
done
for me in $RECORDING; do inproc_row "${me%=*}" "${me#*=}"; done
echo
verdict "ns added per recorded event (cond_signal, one WAKE), target <= 20" "$(cat "$tmp/cond_signal.recorded")" 20
# The syscall rows add the interposer's own dispatch to the event.
verdict_each "ns added per recorded event, each recording family (a park's PARK + UNPARK halved, sem_park's WAKE + PARK + UNPARK a third), target <= 20" 20 \
  $(for me in $RECORDING; do echo "${me%=*}=$(cat "$tmp/${me%=*}.recorded")"; done)
echo
if [ "$QUICK" = 1 ]; then
  # Without the off2 control: 3 rounds of it would not fit in 2 minutes, nor resolve much.
  BENCH_ROUNDS=$ROUNDS BENCH_SECS=3 BENCH_PEERS=0 BENCH_FIELDS=0 BENCH_MODES="off dial9" bench/services.sh memcached
else
echo "## Hot path with cold caches, in one process: ns per call (median of $ROUNDS rounds)"
echo
echo "\`hotpath MODE 500 0 1 67108864\`: 500 pairs of one call through the agent and one to libc's own"
echo "definition, in an order drawn at random, each call after an untimed read of one byte in every 64"
echo "of 64 MiB (twice this machine's last-level cache, if it is 32 MiB or less): its code, data and"
echo "page-table entries come from memory, as a service thread's do after a long sleep. A round's figure"
echo "is the median over its pairs; the table gives the median over rounds and their range. forwarder:"
echo "the same under bench/passthrough.so (syscall(), write() and epoll_wait() only)."
echo
echo "| call | libc ns | agent ns | added ns (range) | forwarder added ns |"
echo "|---|---|---|---|---|"
COLD_MODES="cond_signal cond_idle futex_wake eventfd epoll_park cond_park mutex file_pread file_openclose"
for r in $(seq "$ROUNDS"); do
  for mode in $COLD_MODES; do
    on taskset -c 0 "$BUILD/bench/hotpath" "$mode" 500 0 1 67108864 >> "$tmp/$mode.cold.agent"
    LD_PRELOAD=$BUILD/bench/passthrough.so taskset -c 0 "$BUILD/bench/hotpath" "$mode" 500 0 1 67108864 >> "$tmp/$mode.cold.fwd"
  done
done
for mode in $COLD_MODES; do
  echo "| $mode | $(ab_cells "$tmp/$mode.cold") | $(awk '{print $4}' "$tmp/$mode.cold.fwd" | median) |"
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
# ir_per_call MODE EVENTS [ENV...]: per-call instructions of N2 calls minus
# N1 calls. A run records at most 11,000 events (EVENTS a call), so it fits a
# 16384-entry ring: none dropped, no push on the slow path of a full ring
# (valgrind slows the writer; 11,000 sem_park calls, 33,000 events, had
# added 18 instructions a call there).
ir_per_call() {
  local mode=$1 ev=$2; shift 2
  local n1=$((1000 / ev)) n2=$((11000 / ev)) a b
  rm -rf "$tmp/cg"; mkdir -p "$tmp/cg"
  env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg/a" "$BUILD/bench/hotpath" "$mode" $n1 >/dev/null 2>&1
  env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg/b" "$BUILD/bench/hotpath" "$mode" $n2 >/dev/null 2>&1
  read -r a1 a2 <<<"$(thread_ir "$tmp/cg/a")"
  read -r b1 b2 <<<"$(thread_ir "$tmp/cg/b")"
  echo "$(( (b1 - a1) / (n2 - n1) )) $(( (b2 - a2) / (n2 - n1) ))"
}
ir_each=()
for mode in $MODES; do
  ev=1
  for me in $RECORDING; do [ "${me%=*}" = "$mode" ] && ev=${me#*=}; done
  read -r off _ <<<"$(ir_per_call "$mode" "$ev")"
  read -r onv wr <<<"$(ir_per_call "$mode" "$ev" LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$tmp/cgtrace" DIAL9_BUFFER_EVENTS=16384)"
  echo "| $mode | $off | $onv | $((onv - off)) | $wr |"
  if [ "$mode" = cond_signal ]; then ir_added=$((onv - off)); fi
  for me in $RECORDING; do # per event, rounded
    if [ "${me%=*}" = "$mode" ]; then ir_each+=("$mode=$(( (onv - off + ${me#*=} / 2) / ${me#*=} ))"); fi
  done
done
echo
verdict "instructions added per recorded event (cond_signal, one WAKE), target <= 60" "$ir_added" 60
verdict_each "instructions added per recorded event, each recording family (a park's PARK + UNPARK halved, sem_park's WAKE + PARK + UNPARK a third), target <= 60" 60 "${ir_each[@]}"
echo
echo "## Clock reads: ns per read (median of $ROUNDS rounds)"
echo
echo "| source | ns |"
echo "|---|---|"
for r in $(seq "$ROUNDS"); do taskset -c 0 "$BUILD/bench/clocks" 5000000 >> "$tmp/clocks"; done
for src in $(awk '{print $1}' "$tmp/clocks" | sort -u); do
  echo "| $src | $(awk -v s="$src" '$1 == s {print $2}' "$tmp/clocks" | median) |"
done
echo "- kernel clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo
echo "## Demo service: requests in its fixed 3 s run, and trace size (median of $ROUNDS interleaved rounds)"
echo
demo_requests() { "$@" "$BUILD/progs/demo_server" | sed -n 's/^demo: requests=\([0-9]*\).*/\1/p'; }
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
# Real services (agent off vs on; BENCH_PEERS=0 leaves out strace, ltrace,
# uftrace and LTTng), trace bytes/event, writer CPU; then memory per thread.
PEERS=${BENCH_PEERS:-1}
BENCH_ROUNDS=$ROUNDS BENCH_PEERS=$PEERS bench/services.sh
echo
# The same services' CPU per request, off and dial9 servers at the same time,
# with an A/A pair for the noise floor (interleaved rounds cannot resolve 1% here).
BENCH_ROUNDS=$ROUNDS bench/paired.sh
echo
# The latency clients see at a fixed rate below capacity, and the CPU each
# server spends per request there: off and dial9 servers at once under one
# open-loop client, with an A/A pair.
BENCH_ROUNDS=$ROUNDS bench/latency.sh
echo
# The peers at the same fixed rates, each beside an off server: their CPU per
# request (the tracer's own included) and latency, with dial9's pair in the
# same rounds (BENCH_PEERS=0 leaves this out).
if [ "$PEERS" = 1 ]; then
  BENCH_ROUNDS=${BENCH_PEER_ROUNDS:-3} BENCH_PAIRS="off:dial9 off:lttng off:uftrace off:strace" \
    BENCH_LAT_TITLE="Peers at a fixed request rate, each beside an off server" bench/latency.sh
  echo
fi
bench/memory.sh
echo
# What a process's start and exit cost with the agent (a shell script pays it per command).
bench/start.sh
# Decoder events/s and peak RSS at 10M and 50M events (traces cached in build/bench/).
bench/decoder.sh
fi
} | tee "$out"
echo "bench: results in $out"
