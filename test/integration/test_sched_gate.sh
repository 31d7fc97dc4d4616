#!/bin/bash
# test_sched_gate.sh - the schedstat gate (agent/scheduling.h): a thread
# reads /proc/thread-self/schedstat after a park of at least 20 us, at most
# once per DIAL9_SCHED_GAP_MS (default 50 ms). build/progs/sched_gate counts
# its own thread's read syscalls (syscr of /proc/thread-self/io) around N polls:
# - parks of >= 1 ms, with DIAL9_SCHED_GAP_MS=10 and with the default:
#   readings every gap to gap + the longest park (the first long park a gap
#   after a reading reads), so between elapsed / (gap + max park) - 1 and
#   elapsed / gap + 2 (a reading right at the start, and the stamp clock's
#   rate measured to ~1e-4);
# - 20000 polls that return at once (gap 10 ms): no more readings than polls
#   the program itself saw take 20 us or more, nor than the gap allows;
# - DIAL9_SCHED=0, and the program without the agent: no reading at all.
# The window of each sched_delay event (window_ns, from just before the
# thread's previous reading to just after this one) in the two long-park
# traces: readings tile the thread's time, so a window starts no earlier
# than the unpark that made the previous event's reading (and the thread's
# start), spans at least the gap and at most the gap plus the longest park,
# 5 ms and the previous reading's wait (it starts before that read), and
# holds the run-queue wait it reports; and no more events than
# reads (a reading whose wait did not grow is not one).
# The long-park and held runs share their CPU with a SCHED_FIFO thread that
# spins 3 ms of every 4, so that their wake-ups wait on the run queue and
# their readings make events.
# A thread kept on the run queue between its unpark and its read (a
# preemption there; test/preload/wait_before_schedstat.so holds the 2nd
# read, the one at the first poll's unpark, 40 ms behind a SCHED_FIFO
# spinner on its CPU): that reading reports the wait, as the preload
# measured it on the same fd, and its window still holds it; the program,
# which counts its reads from after that poll, does not count it.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_PROGS/sched_gate" "$D9_BUILD/preload/wait_before_schedstat.so"
[ -r /proc/thread-self/io ] || d9_skip "no /proc/thread-self/io (CONFIG_TASK_IO_ACCOUNTING)"

run() { # NAME MODE N [ENV...]: the program's line into $D9_TMP/NAME
    local name=$1 mode=$2 n=$3
    shift 3
    d9_run_traced "$D9_TMP/trace.$name" env "$@" "$D9_PROGS/sched_gate" "$mode" "$n" >"$D9_TMP/$name" \
        2>"$D9_TMP/$name.err" || d9_fail "sched_gate $mode failed: $(cat "$D9_TMP/$name.err")"
    d9_log "$name: $(cat "$D9_TMP/$name")"
}
# The runs whose readings are checked one by one share their CPU with a
# SCHED_FIFO neighbour that spins 3 ms of every 4: most of their wake-ups
# wait on the run queue, so run_delay grows between readings. On an idle
# CPU a wake-up can wait 0 ns (a busy loop of normal priority did not
# change that: the woken thread preempts it), a reading whose wait did not
# grow makes no event, and a run could end with none to check (seen on a
# KVM guest with halt polling: 5 of 12 runs).
cpu=$(taskset -cp $$ | sed 's/.*: //; s/[,-].*//')
taskset -cp "$cpu" $$ >/dev/null # this shell and what it starts: one CPU
chrt -f 1 python3 -c '
import time
while True:
    end = time.monotonic() + 0.003
    while time.monotonic() < end:
        pass
    time.sleep(0.001)
' &
hog=$!
d9_track "$hog" # killed at exit, should a run fail
sleep 0.1
chrt -p "$hog" | grep -q SCHED_FIFO || d9_fail "the SCHED_FIFO neighbour did not start (root needed)"
run long long 300 DIAL9_SCHED_GAP_MS=10
run default long 600
run held long 100 DIAL9_SCHED_GAP_MS=10 WAIT_AT=2 LD_PRELOAD="$D9_BUILD/preload/wait_before_schedstat.so $D9_AGENT"
kill "$hog"
wait "$hog" 2>/dev/null
run short short 20000 DIAL9_SCHED_GAP_MS=10
run nosched long 300 DIAL9_SCHED=0
timeout 60 "$D9_PROGS/sched_gate" long 100 >"$D9_TMP/off" || d9_fail "sched_gate without the agent failed"
d9_log "off: $(cat "$D9_TMP/off")"

# The program's line as a dict, for the checks below.
PY_FIELDS='
def fields(path):
    f = open(path).read().split()
    return {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}
MS = 1000 * 1000
'
d9_py "$PY_FIELDS"'
lg, df, sh, ns, off = (fields(sys.argv[i]) for i in range(1, 6))
for name, run, gap in (("gap 10 ms", lg, 10 * MS), ("default gap 50 ms", df, 50 * MS)):
    lo = run["elapsed_ns"] // (gap + run["max_park_ns"]) - 1
    hi = run["elapsed_ns"] // gap + 2
    expect("long parks, %s: readings within [%d, %d]" % (name, lo, hi), lo <= run["reads"] <= hi, True)
    expect("long parks, %s: every park was long" % name, run["long_parks"], run["parks"])
gap = 10 * MS
cap = min(sh["long_parks"], sh["elapsed_ns"] // gap + 2)
expect("short polls: readings at most %d (polls of 20 us or more: %d)" % (cap, sh["long_parks"]),
       sh["reads"] <= cap, True)
expect("DIAL9_SCHED=0: readings", ns["reads"], 0)
expect("no agent: readings", off["reads"], 0)
' "$D9_TMP/long" "$D9_TMP/default" "$D9_TMP/short" "$D9_TMP/nosched" "$D9_TMP/off"

for name in long default held; do
    d=$(echo "$D9_TMP/trace.$name"/sched_gate.*)
    d9_assert_sealed "$d"
    d9_assert_check "$d"
    d9_decode_to "$D9_TMP/$name.events.jsonl" events --json "$d"
done
d9_py "$PY_FIELDS"'
US = 1000
for line, path, gap, label in ((sys.argv[1], sys.argv[2], 10 * MS, "gap 10 ms"),
                               (sys.argv[3], sys.argv[4], 50 * MS, "gap 50 ms"),
                               (sys.argv[5], sys.argv[6], 10 * MS, "held, gap 10 ms")):
    run, events = fields(line), [e for e in jsonl(path) if e["tid"] == e["pid"]] # the held run has a spinner thread
    start = [e["ts"] for e in events if e["type"] == "thread_start"]
    reads = [e for e in events if e["type"] == "sched_delay"]
    expect(label + ": one thread", len(start), 1)
    unparks = [e["ts"] for e in events if e["type"] == "unpark"]
    # The program counts reads after its first poll: one made at the
    # unpark of that poll (a reading is stamped just after it) is not among them.
    counted = [e for e in reads if not (len(unparks) > 1 and unparks[0] <= e["ts"] < unparks[1])]
    if not counted or len(counted) > run["reads"]:
        errors.append("%s: %d sched_delay events after the first poll for %d reads" % (label, len(counted), run["reads"]))
    prev = start[0] if start else 0
    for i, e in enumerate(reads):
        w = e.get("window_ns")
        what = "%s: reading %d (ts %d, window %r, delay %d)" % (label, i, e["ts"], w, e["delay_ns"])
        if w is None or e["ts"] - w < prev - US:
            errors.append(what + ": starts before the previous reading at %d" % prev)
        elif i and not gap - gap // 1000 <= w <= gap + run["max_park_ns"] + 5 * MS + reads[i - 1]["delay_ns"]:
            # (it starts before the previous read: the wait that read was held in is in it too)
            errors.append(what + ": outside the gap, the longest park %d ns and the wait of the previous reading" %
                          run["max_park_ns"])
        elif e["delay_ns"] > w:
            errors.append(what + ": waited longer than its window")
        prev = max([u for u in unparks if u <= e["ts"]] or [e["ts"]]) # the unpark before this read
    print("%s: %d readings, windows %.2f..%.2f ms" % (label, len(reads), min(e["window_ns"] for e in reads[1:]) / MS,
          max(e["window_ns"] for e in reads[1:]) / MS) if len(reads) > 1 else label)
' "$D9_TMP/long" "$D9_TMP/long.events.jsonl" "$D9_TMP/default" "$D9_TMP/default.events.jsonl" \
    "$D9_TMP/held" "$D9_TMP/held.events.jsonl"

d9_py "$PY_FIELDS"'
err = open(sys.argv[2]).read()
m = re.search(r"wait_before_schedstat: read 2 held on the run queue (\d+) ns", err)
if not m:
    errors.append("the preload made no wait: %r" % err)
else:
    held = int(m.group(1))
    events = jsonl(sys.argv[1])
    reads = [e for e in events if e["type"] == "sched_delay" and e["tid"] == e["pid"]] # on the main thread
    got = [e for e in reads if e["delay_ns"] >= held]
    expect("held read: readings of the main thread with the wait in them", len(got), 1)
    if got and got[0]["delay_ns"] > held + 10 * MS: # with the waits the FIFO neighbour adds around it
        errors.append("held read: delay %d ns, the preload held it %d ns" % (got[0]["delay_ns"], held))
    over = [e for e in reads if e["delay_ns"] > e["window_ns"]]
    if over:
        errors.append("held read: a wait longer than its window %r" % over[0])
    print("held read: %.2f ms on the run queue; the reading says %.2f ms in a %.2f ms window" % (held / MS,
          got[0]["delay_ns"] / MS, got[0]["window_ns"] / MS) if got else "held read: not found")
' "$D9_TMP/held.events.jsonl" "$D9_TMP/held.err"
echo "PASS: schedstat read after long parks only, at most once per DIAL9_SCHED_GAP_MS (10 ms, and 50 by default); each reading says its window"
