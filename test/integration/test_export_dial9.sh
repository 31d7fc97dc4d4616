#!/bin/bash
# test_export_dial9.sh - `dial9-decode export --format dial9` (the Rust dial9
# crate's TRC v1, docs/EXPORT-DIAL9.md) of a real ground_truth trace, read
# back by the project's own TRC reader (`dial9-decode trc-dump`):
#   - per thread, WorkerParkEvent and WorkerUnparkEvent counts equal the
#     program's own park count, ParkCallEvent calls its parks by call, and
#     park/unpark timestamps equal the PARK/UNPARK events of `events --json`
#     (ns since the trace start);
#   - WakeEventEvent: per waker thread as many as the Chrome export's flows,
#     each at a WAKE or THREAD_EXIT (the join it released) of that thread,
#     and every matched wake of `events --json` (waker, wakee, time) is one
#     of them;
#   - thread names (SegmentMetadataEvent) are the program's;
#   - --tid keeps one thread; bad input to trc-dump (truncated, not TRC)
#     exits 1 with the byte offset, and an unknown --format exits 2.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth"

trace=$D9_TMP/trace
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >"$D9_TMP/truth.json" 2>"$D9_TMP/stderr" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/stderr")"
pid=$(d9_json "$D9_TMP/truth.json" 'j["pid"]') || exit 1
dir=$(d9_sealed_dir "$trace" "$pid") || exit 1
d9_decode_to "$D9_TMP/events.jsonl" events --json "$dir"
d9_decode_to "$D9_TMP/chrome.json" export --format chrome "$dir"
"$D9_DECODER" export --format dial9 -o "$D9_TMP/out.trc" "$dir" 2>"$D9_TMP/export.err" ||
    d9_fail "export --format dial9 failed: $(cat "$D9_TMP/export.err")"
d9_decode_to "$D9_TMP/dump.jsonl" trc-dump "$D9_TMP/out.trc"

d9_py '
from collections import Counter, defaultdict
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
chrome = json.load(open(sys.argv[3]))["traceEvents"]
dump = jsonl(sys.argv[4])
t0 = min(e["ts"] for e in events)
by_type = defaultdict(list)
for d in dump:
    by_type[d["type"]].append(d)
expect("SegmentMetadataEvent count", len(by_type["SegmentMetadataEvent"]), 1)
meta = by_type["SegmentMetadataEvent"][0]["fields"]["entries"]

def per_tid(kind, field="tid"):
    r = defaultdict(list)
    for d in by_type[kind]:
        r[d["fields"][field]].append(d)
    return r
parks, unparks, calls = per_tid("WorkerParkEvent"), per_tid("WorkerUnparkEvent"), per_tid("ParkCallEvent")
wakes = per_tid("WakeEventEvent", "waker_task_id")
ev = defaultdict(list)
for e in events:
    ev[e["tid"]].append(e)
flows = Counter(e["tid"] for e in chrome if e["ph"] == "s")

for t in truth["threads"]:
    tid, label = t["tid"], "%s (tid %d)" % (t["name"], t["tid"])
    n = sum(t["parks"].values())
    expect(label + " WorkerParkEvent", len(parks[tid]), n)
    expect(label + " WorkerUnparkEvent", len(unparks[tid]), n)
    expect(label + " ParkCallEvent by call", dict(Counter(d["fields"]["call"] for d in calls[tid])), t["parks"])
    expect(label + " park times", [d["ts"] for d in parks[tid]],
           [e["ts"] - t0 for e in ev[tid] if e["type"] == "park"])
    expect(label + " unpark times", [d["ts"] for d in unparks[tid]],
           [e["ts"] - t0 for e in ev[tid] if e["type"] == "unpark"])
    ids = {d["fields"]["worker_id"] for d in parks[tid] + unparks[tid]}
    if n:  # a thread that never parked (gt-joinee) has no park to carry its id
        expect(label + " worker_id", ids, {int(meta["worker_id.%d" % tid])})
    expect(label + " thread_name", meta.get("thread_name.%d" % tid), t["name"])
    expect(label + " WakeEventEvent = Chrome flows", len(wakes[tid]), flows[tid])
    # a thread_exit that released a join is a wake too
    waking = [e for e in ev[tid] if e["type"] in ("wake", "thread_exit")]
    at = {e["ts"] - t0 for e in waking}
    for d in wakes[tid]:
        if d["ts"] not in at:
            errors.append("%s: WakeEventEvent at %d is at no WAKE or exit of it" % (label, d["ts"]))
    got = {(d["ts"], d["fields"]["woken_task_id"]) for d in wakes[tid]}
    for e in waking:
        if e["wakee"] is not None and (e["ts"] - t0, e["wakee"]) not in got:
            errors.append("%s: matched wake at %d to %d not exported" % (label, e["ts"] - t0, e["wakee"]))
    if n and not wakes[tid] and sum(t["wakes"].values()):
        errors.append(label + ": wakes, but none exported")
expect("threads with parks", {k for k, v in parks.items() if v}, {t["tid"] for t in truth["threads"] if t["parks"]})
runtime = [k for k in meta if k.startswith("runtime.")]
expect("one runtime entry (one process)", len(runtime), 1)
print("compared %d threads: %d parks, %d wakes" % (len(truth["threads"]), len(by_type["WorkerParkEvent"]),
                                                   len(by_type["WakeEventEvent"])))
' "$D9_TMP/truth.json" "$D9_TMP/events.jsonl" "$D9_TMP/chrome.json" "$D9_TMP/dump.jsonl"

# --tid: only that thread's events.
tid=$(d9_json "$D9_TMP/truth.json" '[t["tid"] for t in j["threads"] if t["name"] == "gt-futex"][0]') || exit 1
"$D9_DECODER" export --format dial9 --tid "$tid" -o "$D9_TMP/one.trc" "$dir" || d9_fail "export --tid failed"
d9_decode_to "$D9_TMP/one.jsonl" trc-dump "$D9_TMP/one.trc"
d9_py '
dump, tid = jsonl(sys.argv[1]), int(sys.argv[2])
tids = {d["fields"]["tid"] for d in dump if "tid" in d["fields"]}
expect("tids with --tid", tids, {tid})
expect("parks with --tid", len([d for d in dump if d["type"] == "WorkerParkEvent"]) > 0, True)
' "$D9_TMP/one.jsonl" "$tid"

# Bad input: a clear error with the byte offset, exit 1.
size=$(stat -c %s "$D9_TMP/out.trc")
head -c $((size - 3)) "$D9_TMP/out.trc" >"$D9_TMP/cut.trc"
rc=0
"$D9_DECODER" trc-dump "$D9_TMP/cut.trc" >/dev/null 2>"$D9_TMP/cut.err" || rc=$?
[ $rc -eq 1 ] || d9_fail "trc-dump of a truncated file: exit $rc, not 1"
grep -q "at byte [0-9]*: truncated" "$D9_TMP/cut.err" || d9_fail "truncated file: $(cat "$D9_TMP/cut.err")"
seg=$(find "$dir" -name '*.d9' | head -n 1)
rc=0
"$D9_DECODER" trc-dump "$seg" >/dev/null 2>"$D9_TMP/seg.err" || rc=$?
if [ $rc -ne 1 ] || ! grep -q "bad magic" "$D9_TMP/seg.err"; then
    d9_fail "trc-dump of a segment: exit $rc, $(cat "$D9_TMP/seg.err")"
fi
rc=0
"$D9_DECODER" export --format trc -o "$D9_TMP/x" "$dir" 2>"$D9_TMP/fmt.err" || rc=$?
if [ $rc -ne 2 ] || ! grep -q "chrome, perfetto or dial9" "$D9_TMP/fmt.err"; then
    d9_fail "unknown --format: exit $rc, $(cat "$D9_TMP/fmt.err")"
fi
echo "ok"
