#!/bin/bash
# test_sched_gate.sh - the schedstat gate (agent/scheduling.h): a thread
# reads /proc/thread-self/schedstat after a park of at least 20 us, at most
# once per 10 ms. build/progs/sched_gate counts its own thread's read
# syscalls (syscr of /proc/thread-self/io) around N polls:
# - 300 parks of >= 1 ms: readings every 10 ms to 10 ms + the longest park
#   (the first long park 10 ms after a reading reads), so between
#   elapsed / (10 ms + max park) - 1 and elapsed / 10 ms + 2 (a reading
#   right at the start, and the stamp clock's rate measured to ~1e-4);
# - 20000 polls that return at once: no more readings than polls the
#   program itself saw take 20 us or more, nor than the gap allows;
# - DIAL9_SCHED=0, and the program without the agent: no reading at all.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_PROGS/sched_gate"
[ -r /proc/thread-self/io ] || d9_skip "no /proc/thread-self/io (CONFIG_TASK_IO_ACCOUNTING)"

run() { # NAME MODE N [ENV...]: the program's line into $D9_TMP/NAME
    local name=$1 mode=$2 n=$3
    shift 3
    d9_run_traced "$D9_TMP/trace.$name" env "$@" "$D9_PROGS/sched_gate" "$mode" "$n" >"$D9_TMP/$name" ||
        d9_fail "sched_gate $mode failed"
    d9_log "$name: $(cat "$D9_TMP/$name")"
}
run long long 300
run short short 20000
run nosched long 300 DIAL9_SCHED=0
timeout 60 "$D9_PROGS/sched_gate" long 100 >"$D9_TMP/off" || d9_fail "sched_gate without the agent failed"
d9_log "off: $(cat "$D9_TMP/off")"

d9_py '
def fields(path):
    f = open(path).read().split()
    return {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}
gap = 10 * 1000 * 1000
lg, sh, ns, off = (fields(sys.argv[i]) for i in range(1, 5))
lo = lg["elapsed_ns"] // (gap + lg["max_park_ns"]) - 1
hi = lg["elapsed_ns"] // gap + 2
expect("long parks: readings within [%d, %d]" % (lo, hi), lo <= lg["reads"] <= hi, True)
expect("long parks: every park was long", lg["long_parks"], lg["parks"])
cap = min(sh["long_parks"], sh["elapsed_ns"] // gap + 2)
expect("short polls: readings at most %d (polls of 20 us or more: %d)" % (cap, sh["long_parks"]),
       sh["reads"] <= cap, True)
expect("DIAL9_SCHED=0: readings", ns["reads"], 0)
expect("no agent: readings", off["reads"], 0)
' "$D9_TMP/long" "$D9_TMP/short" "$D9_TMP/nosched" "$D9_TMP/off"
echo "PASS: schedstat read after long parks only, at most once per 10 ms"
