#!/bin/bash
# test_ground_truth.sh - build/progs/ground_truth counts its own park/wake
# calls (blocking socket, pipe and eventfd waits among them) and its epoll_ctl
# calls; what dial9 recorded must match those counts and targets exactly (an
# epoll_ctl event for each that succeeded on its eventfd or pipe read end,
# none for its socket's), and the decoder must
# match the wakes of blocking reads to their reader, with TSC and with
# clock_gettime stamps. A second run
# with a 64-event buffer must report drops, and recorded + dropped events of
# the bursting thread must add up to what it did. A third run with another
# syscall() interposer after the agent: every futex wake must reach it (the
# agent's direct futex path is only for glibc's own syscall()) and still be
# recorded.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
counter=$D9_BUILD/preload/count_futex_wakes.so
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth" "$counter"

# --- Normal runs: exact counts, with each kind of stamp -----------------
# exact_run NAME [VAR=VALUE...]: one run under the agent with those settings;
# every count must match. The TSC run takes the hooks' fast paths (the
# futex wake's direct path, the eventfd write stamped by write()); the
# clock_gettime run their general ones.
exact_run() {
    local name=$1 out=$D9_TMP/$1
    shift
    mkdir -p "$out"
    d9_run_traced "$out/trace" env "$@" "$D9_PROGS/ground_truth" >"$out/truth.json" 2>"$out/stderr" ||
        d9_fail "$name: ground_truth failed under the agent: $(cat "$out/stderr")"
    [ -s "$out/stderr" ] && d9_fail "$name: unexpected stderr: $(cat "$out/stderr")"
    local pid dir
    pid=$(d9_json "$out/truth.json" 'j["pid"]') || exit 1
    dir=$(d9_sealed_dir "$out/trace" "$pid") || exit 1
    d9_decode_to "$out/events.jsonl" events --json "$dir"
    d9_decode_to "$out/summary.json" summary --json "$dir"
    echo "# $name"
    d9_py '
from collections import Counter, defaultdict
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
summary = json.load(open(sys.argv[3]))

pid = truth["pid"]
expect("pids in the trace", {e["pid"] for e in events}, {pid})
by_tid = defaultdict(list)
for e in events:
    by_tid[e["tid"]].append(e)
want_tids = {t["tid"] for t in truth["threads"]}
expect("threads in the trace (the agent must not record itself)", set(by_tid), want_tids)
expect("drop events", [e for e in events if e["type"] == "drop"], [])
expect("summary events", summary["events"], len(events))
expect("summary dropped", summary["dropped"], 0)
sthreads = {t["tid"]: t for t in summary["threads"]}

for t in truth["threads"]:
    tid, ev = t["tid"], by_tid.get(t["tid"], [])
    label = "%s (tid %d)" % (t["name"], tid)
    types = Counter(e["type"] for e in ev)
    parks = Counter(e["call"] for e in ev if e["type"] == "park")
    unparks = Counter(e["call"] for e in ev if e["type"] == "unpark")
    wakes = Counter(e["call"] for e in ev if e["type"] == "wake")
    nowait = sum(e["count"] for e in ev if e["type"] == "poll_nowait")
    expect(label + " parks by call", dict(parks), t["parks"])
    expect(label + " unparks by call", dict(unparks), t["parks"])
    expect(label + " wakes by call", dict(wakes), t["wakes"])
    expect(label + " zero-timeout polls", nowait, t["nowait"])
    # A join parks on the tid of the thread joined, or on 0 when that thread had
    # exited and its slot was freed; one joined while it surely ran has its tid.
    targets = [e["target"] for e in ev if e["type"] == "park" and e["call"] == "join"]
    if len(targets) != len(t["joined"]) or any(
            g != w and (g != 0 or w in t["joined_live"]) for g, w in zip(targets, t["joined"])):
        errors.append("%s join targets: got %r, want %r (0 allowed but for %r)"
                      % (label, targets, t["joined"], t["joined_live"]))
    if t["joined_live"] and not any(g in t["joined_live"] for g in targets):
        errors.append("%s: no join parked on a thread it joined while it ran" % label)
    # The exit of a thread joined while it ran released that join.
    exits = [e for e in events if e["type"] == "thread_exit" and e["tid"] in t["joined_live"]]
    expect(label + " wakees of the exits of the threads it joined while they ran",
           [e.get("wakee") for e in exits], [tid] * len(t["joined_live"]))
    # A wait on a blocking socket or pipe parks on its fd, infinite timeout.
    sock = [e for e in ev if e["type"] == "park" and e["call"] in ("read", "recv", "accept", "accept4", "send", "write", "connect")]
    expect(label + " socket park targets", [e["target"] for e in sock], t["fd_parks"])
    expect(label + " socket park timeouts", {e.get("timeout_ns") for e in sock} - {-1}, set())
    # A pipe or eventfd write made while a thread waited in its read woke it.
    if t["fd_wakees"]:
        fdw = [e.get("wakee") for e in ev if e["type"] == "wake" and e["call"] in ("pipe_write", "eventfd_write")]
        expect(label + " wakees of its pipe and eventfd writes", fdw, t["fd_wakees"])
    # Its epoll_ctl calls that succeeded on an eventfd or a pipe read end, in
    # order; none on a socket, none that failed (op: EPOLL_CTL_ADD 1, MOD 3).
    ctls = [[e.get("op"), e.get("epfd"), e.get("fd")] for e in ev if e["type"] == "epoll_ctl"]
    expect(label + " epoll_ctl events [op, epfd, fd]", ctls, t["epoll_ctls"])
    # A send or write parks only when it waited: these waited 20 ms for the
    # server to drain (1 ms is DIAL9_SLOW_SYSCALL_US, the least such a park lasts).
    opened, sent = None, []
    for e in ev:
        if e["type"] == "park":
            opened = e
        elif e["type"] == "unpark" and opened and opened["call"] in ("send", "write"):
            sent.append(e["ts"] - opened["ts"])
    short = [d for d in sent if d < 10000000]
    expect(label + " send and write parks shorter than 10 ms", short, [])
    # Deadlines reach the trace as timeouts relative to the park (the writer
    # converts them, agent/clock.h): up to 100 ms under wait_ns (the program
    # read its clock before the call), at most 1 ms over (the TSC line).
    wait = truth["wait_ns"]
    timed = Counter(e["call"] for e in ev
                    if e["type"] == "park" and wait - 100000000 <= e.get("timeout_ns", -1) <= wait + 1000000)
    expect(label + " parks with the wait_ns timeout by call", dict(timed), t["timed"])
    starts = [e for e in ev if e["type"] == "thread_start"]
    expect(label + " thread_start parents", [e.get("parent") for e in starts], [t["parent"]])
    names = [e["name"] for e in ev if e["type"] == "thread_name"]
    expect(label + " last thread_name", names[-1:], [t["name"]])
    if t["created"]:
        expect(label + " thread_exit events", types["thread_exit"], 1)
        if ev and ev[-1]["type"] != "thread_exit":
            errors.append(label + ": thread_exit is not its last event")
    else:
        if types["thread_exit"] > 1:
            errors.append(label + ": %d thread_exit events" % types["thread_exit"])
    if ev and ev[0]["type"] != "thread_start":
        errors.append(label + ": first event is %s, not thread_start" % ev[0]["type"])
    ts = [e["ts"] for e in ev]
    if ts != sorted(ts):
        errors.append(label + ": timestamps go backwards")
    s = sthreads.get(tid)
    if s is None:
        errors.append(label + ": missing from summary")
        continue
    expect(label + " summary name", s["name"], t["name"])
    expect(label + " summary parks", s["parks"], sum(t["parks"].values()))
    expect(label + " summary parks_by_call", {k: v for k, v in s["parks_by_call"].items() if v}, t["parks"])
    expect(label + " summary wakes_sent", s["wakes_sent"], sum(t["wakes"].values()))
    expect(label + " summary nowait_polls", s["nowait_polls"], t["nowait"])
    expect(label + " summary dropped", s["dropped"], 0)
    if t["name"] == "gt-sock-srv": # parks on socket I/O: a thread-per-connection worker
        expect(label + " summary role", s["role"], "worker")

created = [t for t in truth["threads"] if t["created"]]
expect("threads created", len(created), truth["threads_created"])
print("compared %d threads, %d events" % (len(truth["threads"]), len(events)))
' "$out/truth.json" "$out/events.jsonl" "$out/summary.json"
}
exact_run tsc
exact_run monotonic DIAL9_CLOCK=monotonic

# --- Another syscall() interposer after the agent ----------------------
trace=$D9_TMP/chain
D9_AGENT="$D9_AGENT $counter" d9_run_traced "$trace" "$D9_PROGS/ground_truth" \
    >"$D9_TMP/ctruth.json" 2>"$D9_TMP/cstderr" ||
    d9_fail "ground_truth failed under the agent and a second interposer: $(cat "$D9_TMP/cstderr")"
pid=$(d9_json "$D9_TMP/ctruth.json" 'j["pid"]') || exit 1
dir=$(d9_sealed_dir "$trace" "$pid") || exit 1
d9_decode_to "$D9_TMP/cevents.jsonl" events --json "$dir"
d9_py '
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
lines = [l for l in open(sys.argv[3]) if l.startswith("count_futex_wakes: ")]
want = truth["totals"]["wakes"].get("futex", 0)
if want <= 0:
    errors.append("ground_truth made no futex wakes through syscall()")
recorded = sum(1 for e in events if e["type"] == "wake" and e["call"] == "futex")
expect("futex wakes recorded with a second interposer", recorded, want)
if len(lines) != 1:
    errors.append("no count from the second interposer: %r" % open(sys.argv[3]).read())
else:
    seen = int(lines[0].split()[1])
    # The agent makes futex wakes of its own through the next syscall() too.
    if seen < want:
        errors.append("the second interposer saw %d futex wakes, the program made %d" % (seen, want))
    print("chain: %d futex wakes made, %d recorded, %d seen by the next syscall()" % (want, recorded, seen))
' "$D9_TMP/ctruth.json" "$D9_TMP/cevents.jsonl" "$D9_TMP/cstderr"

# --- Burst with a tiny buffer: drops are counted, none go unaccounted ---
trace=$D9_TMP/burst
DIAL9_BUFFER_EVENTS=64 d9_run_traced "$trace" "$D9_PROGS/ground_truth" --burst 200000 \
    >"$D9_TMP/btruth.json" 2>"$D9_TMP/bstderr" ||
    d9_fail "ground_truth --burst failed under the agent: $(cat "$D9_TMP/bstderr")"
# The agent must accept 64 (a power of two) without complaint.
[ -s "$D9_TMP/bstderr" ] && d9_fail "unexpected stderr: $(cat "$D9_TMP/bstderr")"
pid=$(d9_json "$D9_TMP/btruth.json" 'j["pid"]') || exit 1
dir=$(d9_sealed_dir "$trace" "$pid") || exit 1
d9_decode_to "$D9_TMP/bevents.jsonl" events --json "$dir"
d9_decode_to "$D9_TMP/bsummary.json" summary --json "$dir"

d9_py '
truth = json.load(open(sys.argv[1]))
events = jsonl(sys.argv[2])
summary = json.load(open(sys.argv[3]))
t = next(t for t in truth["threads"] if t["name"] == "gt-burst")
ev = [e for e in events if e["tid"] == t["tid"]]
dropped = sum(e["count"] for e in ev if e["type"] == "drop")
calls = sum(1 for e in ev if e["type"] in ("park", "unpark", "wake"))
# A park that was dropped has no unpark (agent.h: d9_park tells the caller
# whether to emit one), so each park call is 2 events if recorded, else 1.
parks = sum(t["parks"].values())
did = parks + sum(1 for e in ev if e["type"] == "park") + sum(t["wakes"].values())
# thread_start and thread_name happen on an empty buffer and cannot be lost;
# thread_exit may be, if the writer had not drained the burst yet.
exited = sum(1 for e in ev if e["type"] == "thread_exit")
if dropped <= 0:
    errors.append("no drops reported for a %d-event burst into a 64-event buffer" % did)
if calls + dropped != did + (1 - exited):
    errors.append("recorded %d + dropped %d != %d events done (+%d lost exit)" % (calls, dropped, did, 1 - exited))
expect("burst thread_start events", sum(1 for e in ev if e["type"] == "thread_start"), 1)
expect("burst last thread_name", [e["name"] for e in ev if e["type"] == "thread_name"][-1:], ["gt-burst"])
s = next((s for s in summary["threads"] if s["tid"] == t["tid"]), None)
if s is None or s["dropped"] != dropped:
    errors.append("summary dropped for the thread %r != %d from drop events" % (s and s["dropped"], dropped))
if summary["dropped"] < dropped:
    errors.append("summary total dropped %d < %d" % (summary["dropped"], dropped))
print("burst: %d events done, %d recorded, %d dropped" % (did, calls, dropped))
' "$D9_TMP/btruth.json" "$D9_TMP/bevents.jsonl" "$D9_TMP/bsummary.json"
echo "ok"
