#!/bin/bash
# test_story_sched.sh - issue 3, story 1: "the runtime woke the worker but
# the kernel did not run it". build/progs/story_sched measures its own
# wake-to-run latencies (waker's clock just before the wake call -> worker's
# clock on return from its futex / epoll_wait), its workers' run_delay
# (/proc/thread-self/schedstat) and its hogs' involuntary switches and
# run_delay. With CPU hogs, dial9's figures must agree with those (wake
# latency p50/p99 within 10% or 100 us, allowing as many ranks as the
# program saw preemptions between its stamps and dial9's; scheduling delay
# and preemptions within 10% or 5 ms) and `verdict` must flag wake latency and scheduling
# delay; without hogs, `verdict` with thresholds above what the program
# measured must not. Preemptions are recorded with DIAL9_PREEMPT=1 only (the
# hogs run); by default none, while scheduling delay still is (a second hogs
# run without it; the quiet run's trace agrees with its 0-2 ms, which may be
# no event at all). DIAL9_SCHED=0 records neither sched_delay nor preempt,
# even with DIAL9_PREEMPT=1.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/story_sched"

# Twice as many hogs as CPUs: the workers' CPUs are oversubscribed.
hogs=$((2 * $(nproc)))
[ "$hogs" -lt 4 ] && hogs=4
[ "$hogs" -gt 16 ] && hogs=16

# run_story NAME ARGS...: runs story_sched under the agent into $D9_TMP/NAME,
# decodes it; sets dir. A perf refusal (one stderr line) sets perf_ok=0.
perf_ok=1
run_story() {
    local name=$1
    shift
    d9_run_traced "$D9_TMP/$name" "$D9_PROGS/story_sched" "$@" >"$D9_TMP/$name.truth.json" \
        2>"$D9_TMP/$name.stderr" || d9_fail "story_sched $* failed under the agent: $(cat "$D9_TMP/$name.stderr")"
    if grep -q '^dial9: perf_event_open: .*; preemptions not recorded$' "$D9_TMP/$name.stderr"; then
        perf_ok=0
        d9_log "perf_event_open refused here: preemption checks skipped"
    fi
    grep -v '^dial9: perf_event_open: .*; preemptions not recorded$' "$D9_TMP/$name.stderr" |
        grep -q . && d9_fail "unexpected stderr: $(cat "$D9_TMP/$name.stderr")"
    local pid
    pid=$(d9_json "$D9_TMP/$name.truth.json" 'j["pid"]') || exit 1
    dir=$(d9_sealed_dir "$D9_TMP/$name" "$pid") || exit 1
    d9_decode_to "$D9_TMP/$name.events.jsonl" events --json "$dir"
    d9_decode_to "$D9_TMP/$name.summary.json" summary --json "$dir"
}

# verdict NAME ARGS...: runs `verdict ARGS... dir`, output in $D9_TMP/NAME.verdict, exit code in vrc.
verdict() {
    local name=$1
    shift
    vrc=0
    "$D9_DECODER" verdict "$@" "$dir" >"$D9_TMP/$name.verdict" 2>"$D9_TMP/$name.verdict.err" || vrc=$?
    [ "$vrc" -le 1 ] || d9_fail "verdict exited $vrc: $(cat "$D9_TMP/$name.verdict.err")"
    d9_log "verdict $* (exit $vrc):"
    sed 's/^/#   /' "$D9_TMP/$name.verdict"
}

# Python helpers shared by the checks below.
PY_COMMON='
import math
MS = 1000000
def near(got, want, rel, absolute):
    return got is not None and abs(got - want) <= max(rel * want, absolute)
def rank_band(samples, pct, moved):
    # Any usual percentile definition (nearest rank, linear between ranks)
    # lands between these samples, widened by 10% or 100 us. moved samples
    # may differ more (the program saw a preemption between its stamp and
    # dial9 stamp): they can shift the percentile by as many ranks.
    s = sorted(samples)
    n = len(s)
    pos = pct / 100.0 * (n - 1)
    idx = {max(1, -(-n * pct // 100)) - 1, math.floor(pos), math.ceil(pos)}
    lo, hi = s[max(0, min(idx) - moved)], s[min(n - 1, max(idx) + moved)]
    return lo - max(0.1 * lo, 100000), hi + max(0.1 * hi, 100000)
'

# between_agrees(truth, events): each worker's sched_delay from its first
# wake on agrees with the run_delay the program read over the same span.
# dial9 reads run_delay at an unpark, but not after a short park nor
# within 1 ms of its last read: the span ends at its last read, paired with
# the program's read just after the same wake (the nearest in time). A
# reading is stamped just after its read, at the unpark before it: those
# after the first wake's unpark count (the program's first read follows
# the first wake's).
PY_BETWEEN='
def between_of(events, tid):
    mine = [e for e in events if e["tid"] == tid]
    unparks = [e["ts"] for e in mine if e["type"] == "unpark"]
    def unpark_of(e):
        return max([u for u in unparks if u <= e["ts"]] or [0])
    return [e for e in mine if e["type"] == "sched_delay" and unparks and unpark_of(e) > unparks[0]]
def between_agrees(truth, events):
    for w in truth["workers"]:
        reads = between_of(events, w["tid"])
        between = sum(e["delay_ns"] for e in reads)
        want = min(w["wakes"], key=lambda x: abs(x[0] - reads[-1]["ts"]))[1] if reads and w["wakes"] else 0
        if not near(between, want, 0.1, 5 * MS):
            errors.append("%s (tid %d) sched_delay from the first wake to its last read %d ns, program %d ns"
                          % (w["name"], w["tid"], between, want))
'

# --- With hogs: the decoder agrees with the program, verdict flags it -------
rounds=30
DIAL9_PREEMPT=1 run_story hogs --hogs "$hogs" --rounds "$rounds" --work-us 2000
d9_py "$PY_COMMON$PY_BETWEEN"'
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
summary = json.load(open(sys.argv[3]))
perf_ok = sys.argv[4] == "1"
threads = {t["tid"]: t for t in summary["threads"]}
workers = {w["tid"]: w for w in truth["workers"]}

for w in truth["workers"]:
    label = "%s (tid %d)" % (w["name"], w["tid"])
    t = threads.get(w["tid"])
    if t is None:
        errors.append(label + ": missing from the summary")
        continue
    wl = t.get("wake_latency_ns") or {}
    expect(label + " wake_latency_ns count", wl.get("count"), w["count"])
    for pct in (50, 99):
        lo, hi = rank_band(w["latencies_ns"], pct, w["tainted"])
        got = wl.get("p%d" % pct)
        if got is None or not lo <= got <= hi:
            errors.append("%s wake latency p%d: dial9 %s ns, program %d ns (accepted %d..%d, %d preempted stamps)"
                          % (label, pct, got, w["p%d_ns" % pct], lo, hi, w["tainted"]))
    mine = [e for e in events if e["tid"] == w["tid"]]
    sd = t.get("sched_delay_ns") or {}
    delays = [e["delay_ns"] for e in mine if e["type"] == "sched_delay"]
    expect(label + " sched_delay total (summary vs events)", sd.get("total"), sum(delays))
    shares = [(e["delay_ns"], e["window_ns"]) for e in mine if e["type"] == "sched_delay"]
    share = sd.get("max_share") or {}
    if shares and abs(share.get("delay_ns", 0) / max(share.get("window_ns", 0), 1) -
                      max(d / w for d, w in shares)) > 1e-12:
        errors.append("%s sched_delay max_share %r, the events largest %r"
                      % (label, share, max(shares, key=lambda x: x[0] / x[1])))
    if not delays or not sd.get("count"):
        errors.append(label + ": no scheduling delay reported: %r" % sd)
    between = sum(e["delay_ns"] for e in between_of(events, w["tid"]))
    print("%s: wake p50 %.2f/%.2f ms p99 %.2f/%.2f ms (dial9/program, %d preempted stamps), "
          "sched_delay %.1f/%.1f ms" % (w["name"], (wl.get("p50") or 0) / MS, w["p50_ns"] / MS,
          (wl.get("p99") or 0) / MS, w["p99_ns"] / MS, w["tainted"], between / MS,
          w["run_delay_between_wakes_ns"] / MS))

between_agrees(truth, events) # the run-queue wait between the first and the last wake

# Every wake of the waker was matched to the worker it released.
wakes = [e for e in events if e["type"] == "wake" and e["tid"] == truth["waker_tid"]]
expect("wakes sent by the waker", len(wakes), len(workers) * truth["rounds"])
unmatched = [e for e in wakes if e.get("wakee") not in workers or e.get("latency_ns") is None]
if unmatched:
    errors.append("%d waker wakes without a worker wakee / latency_ns, e.g. %r" % (len(unmatched), unmatched[0]))

# The worst wake is the one the program saw as worst (one of the worst
# few when preemptions moved some stamps).
worst = summary.get("wake_latency_worst") or []
all_lat = sorted((x for w in truth["workers"] for x in w["latencies_ns"]), reverse=True)
moved = sum(w["tainted"] for w in truth["workers"])
if not worst:
    errors.append("no wake_latency_worst")
else:
    top = worst[0]
    lo, hi = all_lat[min(moved, len(all_lat) - 1)], all_lat[0]
    if not lo - max(0.1 * lo, 100000) <= top.get("latency_ns", -1) <= hi + max(0.1 * hi, 100000):
        errors.append("worst wake latency %r ns, program max %d ns" % (top.get("latency_ns"), hi))
    expect("worst wake waker", top.get("waker_tid"), truth["waker_tid"])
    if top.get("wakee_tid") not in workers:
        errors.append("worst wake wakee %r is not a worker" % top.get("wakee_tid"))

for e in events:
    if e["type"] == "sched_delay" and ("delay_ns" not in e or "source" not in e or e["delay_ns"] <= 0 or
                                       not e["delay_ns"] <= e.get("window_ns", -1) <= e["ts"]):
        errors.append("bad sched_delay event (a wait longer than its window?) %r" % e)
        break
    if e["type"] == "preempt" and e.get("duration_ns") is None:
        errors.append("bad preempt event %r" % e)
        break

# The hogs never park: each involuntary switch is a preemption, and their
# whole run-queue wait is time spent preempted. Compared over the hog loop
# (the program reads its figures just outside it).
for h in truth["hogs"] if perf_ok else []:
    label = "hog tid %d" % h["tid"]
    p = (threads.get(h["tid"]) or {}).get("preempt") or {}
    pre = [e for e in events if e["tid"] == h["tid"] and e["type"] == "preempt"]
    expect(label + " preempt count (summary vs events)", p.get("count"), len(pre))
    inside = [e["duration_ns"] for e in pre if e["ts"] >= h["begin_ns"] and e["ts"] + e["duration_ns"] <= h["end_ns"]]
    if not near(len(inside), h["nivcsw"], 0.1, 3):
        errors.append("%s preemptions %d, program ru_nivcsw %d" % (label, len(inside), h["nivcsw"]))
    if not near(sum(inside), h["run_delay_ns"], 0.1, 5 * MS):
        errors.append("%s preempted %d ns, program run_delay %d ns" % (label, sum(inside), h["run_delay_ns"]))
    print("%s: preempt %d/%d, %.1f/%.1f ms (dial9/program)" % (label, len(inside), h["nivcsw"],
          sum(inside) / MS, h["run_delay_ns"] / MS))

# Nothing of a thread after its exit, nothing before its start.
by_tid = {}
for e in events:
    by_tid.setdefault(e["tid"], []).append(e)
for tid, ev in by_tid.items():
    if ev[0]["type"] != "thread_start":
        errors.append("tid %d: first event is %s" % (tid, ev[0]["type"]))
    exits = [i for i, e in enumerate(ev) if e["type"] == "thread_exit"]
    if exits and exits[-1] != len(ev) - 1:
        errors.append("tid %d: %s after thread_exit" % (tid, ev[-1]["type"]))
' "$D9_TMP/hogs.truth.json" "$D9_TMP/hogs.events.jsonl" "$D9_TMP/hogs.summary.json" "$perf_ok"

# Default thresholds (wake-to-run 5 ms, scheduling delay 1 ms) when the
# program saw delays well above them, else half of what it saw.
flags=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
p99 = t["all"]["p99_ns"] / 1e6
step = max(w["max_run_delay_step_ns"] for w in t["workers"]) / 1e6
args = []
if p99 < 10:
    args += ["--wake-latency-ms", str(max(1, int(p99 / 2)))]
if step < 2:
    args += ["--sched-delay-ms", str(max(1, int(step / 2)))]
print(" ".join(args))
' "$D9_TMP/hogs.truth.json") || d9_fail "cannot read the program's figures"
# shellcheck disable=SC2086 # flags is a list of words
verdict hogs $flags
[ "$vrc" -eq 1 ] || d9_fail "verdict exited $vrc with hogs, want 1"
grep -qi 'wake' "$D9_TMP/hogs.verdict" || d9_fail "verdict did not flag wake latency"
grep -qi 'sched' "$D9_TMP/hogs.verdict" || d9_fail "verdict did not flag scheduling delay"
# Each sched_delay flag is a reading of its thread, above both thresholds:
# --sched-delay-ms and 10% (the default) of the window it covers.
# shellcheck disable=SC2086 # flags is a list of words
"$D9_DECODER" verdict --json $flags "$dir" >"$D9_TMP/hogs.verdict.json" || [ $? -eq 1 ] ||
    d9_fail "verdict --json failed"
d9_py '
v = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
ms = float(sys.argv[3].split("--sched-delay-ms ")[1].split()[0]) if "--sched-delay-ms" in sys.argv[3] else 1.0
sd = [f for f in v["flags"] if f["flag"] == "sched_delay"]
if not sd:
    errors.append("no sched_delay flag in the JSON verdict")
for f in sd:
    w = f.get("window_ns")
    mine = [(e["delay_ns"], e["window_ns"]) for e in events if e["tid"] == f["tid"] and e["type"] == "sched_delay"]
    expect("flag of %d: its worst reading is one of its events" % f["tid"], (f["value"], w) in mine, True)
    expect("flag of %d: threshold" % f["tid"], f["threshold"], max(int(ms * 1000000), (w or 0) * 10 // 100))
    over = [d for d, win in mine if d > max(ms * 1000000, win * 10 // 100)]
    expect("flag of %d: count" % f["tid"], f["count"], len(over))
' "$D9_TMP/hogs.verdict.json" "$D9_TMP/hogs.events.jsonl" "$flags"

# --- Hogs without DIAL9_PREEMPT: scheduling delay (schedstat) still, no preemptions
run_story nopreempt --hogs "$hogs" --rounds "$rounds" --work-us 2000
d9_py "$PY_COMMON$PY_BETWEEN"'
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
expect("preempt events without DIAL9_PREEMPT", [e for e in events if e["type"] == "preempt"][:1], [])
expect("sched_delay events without DIAL9_PREEMPT", sum(e["type"] == "sched_delay" for e in events) > 0, True)
between_agrees(truth, events)
' "$D9_TMP/nopreempt.truth.json" "$D9_TMP/nopreempt.events.jsonl"

# --- Without hogs: no wake-latency or scheduling-delay flag --------------
run_story quiet --rounds "$rounds"
# Thresholds above anything the program measured: its largest latency, and
# the largest run_delay growth of any of its threads over the whole run.
read -r wake_ms delay_ms < <(python3 -c '
import json, math, sys
t = json.load(open(sys.argv[1]))
lat = t["all"]["max_ns"] / 1e6
rd = max([w["run_delay_ns"] for w in t["workers"]] + [t["waker_run_delay_ns"]]) / 1e6
print(max(5, math.ceil(2 * lat) + 1), max(1, math.ceil(2 * rd) + 1))
' "$D9_TMP/quiet.truth.json") || d9_fail "cannot read the program's figures"
d9_py "$PY_COMMON$PY_BETWEEN"'
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
expect("preempt events without DIAL9_PREEMPT", [e for e in events if e["type"] == "preempt"][:1], [])
# Without hogs the run-queue wait is 0-2 ms a thread, at times none at
# all: the trace must agree with the program, whatever it was.
between_agrees(truth, events)
' "$D9_TMP/quiet.truth.json" "$D9_TMP/quiet.events.jsonl"
verdict quiet --wake-latency-ms "$wake_ms" --sched-delay-ms "$delay_ms"
grep -i 'wake\|sched' "$D9_TMP/quiet.verdict" && d9_fail "verdict flagged wake latency or scheduling delay without hogs"
if [ "$vrc" -eq 0 ]; then
    grep -qx 'clean' "$D9_TMP/quiet.verdict" || d9_fail "verdict exit 0 but did not say clean"
else
    grep -qx 'clean' "$D9_TMP/quiet.verdict" && d9_fail "verdict said clean but exited 1"
fi

# --- DIAL9_SCHED=0: neither source is read ------------------------------
DIAL9_SCHED=0 DIAL9_PREEMPT=1 run_story off --rounds 5
d9_py '
events = jsonl(sys.argv[1])
sched = [e for e in events if e["type"] in ("sched_delay", "preempt")]
expect("sched_delay/preempt events with DIAL9_SCHED=0", sched[:1], [])
expect("parks recorded with DIAL9_SCHED=0", sum(e["type"] == "park" for e in events) > 0, True)
' "$D9_TMP/off.events.jsonl"
echo "ok"
