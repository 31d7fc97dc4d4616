#!/bin/bash
# test_agent_tsan.sh - the agent's threading under ThreadSanitizer.
# build/tsan/agent_threads links the agent's objects, built with
# -fsanitize=thread, into a TSan program (why not a preloaded TSan agent:
# test_agent_sanitizers.sh's header; why linked works: the program's header).
# Its threads ping-pong through condvars, futexes and eventfds, come and go
# 4 at a time (129 threads through 24 slots), flush, dump and raise the dump
# signal, while the writer drains every 1 ms into 4 KiB segments.
#
# Each run: TSan reports nothing (halt_on_error, exit 66 on a report), the
# program exits 0 with an empty stderr, its flushes and dumps succeeded, the
# trace checks OK, the dumper carries the last name another thread gave it. Default buffers: every thread's parks, unparks and wakes
# by call, its zero-timeout polls and its parent are exactly what it counted,
# none dropped, every thread recorded. 64-event buffers: what is missing of
# each thread's counted calls is covered by its DROP counts.
# Continuous mode reads the segments, flight mode the dumps' segments.
#
# Not covered under TSan: vfork, exec and fork (lifecycle.c's vfork is an
# asm stub; a TSan child of fork must not touch the parent's threads' state),
# and the crash handler (its path runs in a signal handler on a dying thread
# with raw syscalls). The handlers are installed, but not run.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
PROG=$D9_BUILD/tsan/agent_threads
d9_require "$D9_DECODER" "$PROG"

# tsan_run NAME ENV...: runs the program with the agent configuration ENV,
# tracing into $D9_TMP/NAME; the ground truth in NAME.json.
tsan_run() {
    local name=$1 rc=0
    shift
    timeout -k 5 300 env DIAL9_DIR="$D9_TMP/$name" DIAL9_QUIET=1 DIAL9_MAX_FILE_SIZE=4096 DIAL9_FLUSH_MS=1 \
        DIAL9_MAX_THREADS=24 DIAL9_DUMP_MIN_INTERVAL_MS=0 DIAL9_FLIGHT_MIN_AGE_MS=600000 \
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" "$@" \
        "$PROG" >"$D9_TMP/$name.json" 2>"$D9_TMP/$name.err" || rc=$?
    if grep -q 'FATAL: ThreadSanitizer: unexpected memory mapping' "$D9_TMP/$name.err"; then
        d9_skip "TSan cannot run on this kernel's address layout: $(head -n 1 "$D9_TMP/$name.err")"
    fi
    grep -q 'ThreadSanitizer' "$D9_TMP/$name.err" &&
        d9_fail "$name: ThreadSanitizer report (exit $rc): $(head -c 8000 "$D9_TMP/$name.err")"
    [ "$rc" -eq 0 ] || d9_fail "$name: exit $rc: $(head -c 2000 "$D9_TMP/$name.err")"
    [ -s "$D9_TMP/$name.err" ] && d9_fail "$name: unexpected stderr: $(head -c 2000 "$D9_TMP/$name.err")"
    local pid dir
    pid=$(d9_json "$D9_TMP/$name.json" 'j["pid"]') || exit 1
    dir=$(d9_sealed_dir "$D9_TMP/$name" "$pid") || exit 1
    [ "$(find "$dir" -name '*.d9' | wc -l)" -ge 3 ] || d9_fail "$name: no rotation: $(ls "$dir")"
    d9_decode_to "$D9_TMP/$name.events" events --json "$dir"
    d9_decode_to "$D9_TMP/$name.summary" summary --json "$dir"
}

# tsan_check NAME MODE EXACT: the trace against the program's own counts.
tsan_check() {
    d9_py '
from collections import Counter, defaultdict
name, mode, exact = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
truth = json.load(open(sys.argv[4] + ".json"))
events = jsonl(sys.argv[4] + ".events")
summary = json.load(open(sys.argv[4] + ".summary"))

expect("still recording at the end", truth["recording"], 1)
expect("failed dial9_flush calls", truth["flush_fail"], 0)
expect("dial9_dump errors other than ENODATA/ETIMEDOUT", truth["dump_other"], 0)
if truth["dump_ok"] < 1:
    errors.append("no dial9_dump succeeded")
if mode == "flight":
    reasons = {d.get("reason") for p in summary["processes"] for d in p["dumps"]}
    if "tsan-dumper" not in reasons:
        errors.append("no dump of reason tsan-dumper in the trace: %r" % reasons)

by_tid = defaultdict(list)
for e in events:
    by_tid[e["tid"]].append(e)
want = {t["tid"]: t for t in truth["threads"]}
expect("threads in the trace (every one recorded, the agent not)", set(by_tid), set(want))
if len(want) <= 24:
    errors.append("only %d threads: no slot reuse with DIAL9_MAX_THREADS=24" % len(want))
dropped_total = 0
for tid, t in want.items():
    ev = by_tid.get(tid, [])
    label = "%s (tid %d)" % (t["name"], tid)
    parks = Counter(e["call"] for e in ev if e["type"] == "park")
    unparks = Counter(e["call"] for e in ev if e["type"] == "unpark")
    wakes = Counter(e["call"] for e in ev if e["type"] == "wake")
    nowait = sum(e["count"] for e in ev if e["type"] == "poll_nowait")
    dropped = sum(e["count"] for e in ev if e["type"] == "drop")
    dropped_total += dropped
    starts = [e.get("parent") for e in ev if e["type"] == "thread_start"]
    expect(label + " thread_start parents", starts, [t["parent"]])
    if exact:
        expect(label + " parks by call", dict(parks), t["parks"])
        expect(label + " unparks by call", dict(unparks), t["parks"])
        expect(label + " wakes by call", dict(wakes), t["wakes"])
        expect(label + " zero-timeout polls", nowait, t["nowait"])
        expect(label + " dropped", dropped, 0)
        continue
    # A dropped park has no unpark (d9_park says whether it was recorded):
    # each counted park call missing its unpark, and each missing wake, is
    # one dropped event. Drops of other events (names, POLL_NOWAIT,
    # SCHED_DELAY) add to the count: at most one per park call.
    P, W = sum(t["parks"].values()), sum(t["wakes"].values())
    for k in set(t["parks"]) | set(parks):
        if not (unparks[k] <= parks[k] <= t["parks"].get(k, 0)):
            errors.append("%s %s: %d unparks, %d parks, %d calls" % (label, k, unparks[k], parks[k], t["parks"].get(k, 0)))
    for k in set(t["wakes"]) | set(wakes):
        if wakes[k] > t["wakes"].get(k, 0):
            errors.append("%s %s: %d wakes recorded, %d made" % (label, k, wakes[k], t["wakes"].get(k, 0)))
    missing = P - sum(unparks.values()) + W - sum(wakes.values())
    if not (missing <= dropped <= missing + P + 2):
        errors.append("%s: %d calls missing, %d dropped" % (label, missing, dropped))
expect("summary dropped", summary["dropped"], dropped_total)
# The spawner renamed the dumper before each flush: the writer read the new
# name from /proc in the cycle serving it.
r = truth["renamed"]
expect("dumper last thread_name", [e["name"] for e in by_tid.get(r["tid"], []) if e["type"] == "thread_name"][-1:], [r["name"]])
expect("dumper name in the summary", next((t["name"] for t in summary["threads"] if t["tid"] == r["tid"]), None), r["name"])
print("%s: %d threads, %d events, %d dropped, %d dumps ok, %d flushes ok" % (name, len(want), len(events),
      dropped_total, truth["dump_ok"], truth["flush_ok"]))
' "$1" "$2" "$3" "$D9_TMP/$1"
}

tsan_run continuous DIAL9_MODE=continuous
tsan_check continuous continuous 1
tsan_run flight DIAL9_MODE=flight
tsan_check flight flight 1
tsan_run continuous_tiny DIAL9_MODE=continuous DIAL9_BUFFER_EVENTS=64
tsan_check continuous_tiny continuous 0
tsan_run flight_tiny DIAL9_MODE=flight DIAL9_BUFFER_EVENTS=64
tsan_check flight_tiny flight 0
echo "ok"
