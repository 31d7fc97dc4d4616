#!/bin/bash
# test_export.sh - `dial9-decode export` of real traces (ground_truth,
# demo_server) in both formats. Chrome JSON: every thread named, parks and
# busy periods of a thread never overlap, every flow has one start and one
# end, timestamps in order per thread, as many park slices as PARK events
# and instants as slow-path events. Perfetto: decodes with protoc against
# decoder/perfetto_trace.proto, every thread track named, slices balanced
# per track, every flow id on exactly two events, timestamps in order per
# track, the same counts as the Chrome export. Counters, per process:
# "busy threads" changes with every busy slice begin and end (replayed in
# file order: the value is the number of busy slices open, from 0 to the
# process's threads, back to 0 at the end; its time is the slice's, or the
# track's previous sample's when the walker reports a tail end late),
# "dropped events" sums the drop instants' counts and ends at the dropped
# events of `summary --json` (a trace with a 64-event buffer has drops); the
# Chrome C events are the same samples. --from/--to and --tid reduce the
# output to what `events --json` has in the window; a wall-clock window (UTC,
# from the segment's ANCHOR TLV read here in Python) gives the same bytes as
# the same window in ns; usage errors exit 2.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth" "$D9_PROGS/demo_server"
command -v protoc >/dev/null || d9_fail "protoc is not installed (Debian: protobuf-compiler)"
PROTO_DIR=$D9_ROOT/decoder

# Checks both exports of one trace; extra args (a window, tids) go to export.
# check_exports NAME PATH [FROM TO] [TID]
check_exports() {
    local name=$1 path=$2 from=${3:-} to=${4:-} tid=${5:-} args=()
    [ -n "$from" ] && args+=(--from "$from" --to "$to")
    [ -n "$tid" ] && args+=(--tid "$tid")
    local c=$D9_TMP/$name.json p=$D9_TMP/$name.pftrace
    d9_decode_to "$c" export --format chrome "${args[@]}" "$path"
    "$D9_DECODER" export --format perfetto -o "$p" "${args[@]}" "$path" ||
        d9_fail "export --format perfetto ${args[*]} failed"
    protoc --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" <"$p" >"$p.txt" ||
        d9_fail "protoc cannot decode the perfetto export of $name"
    d9_py '
from collections import defaultdict, Counter
chrome = json.load(open(sys.argv[1]))["traceEvents"]
events = jsonl(sys.argv[3])
summary = json.load(open(sys.argv[4]))
win = (int(sys.argv[5]), int(sys.argv[6])) if sys.argv[5] else None
tids = {int(sys.argv[7])} if sys.argv[7] else {t["tid"] for t in summary["threads"]}
names = {t["tid"]: t["name"] for t in summary["threads"]}
t0 = min(e["ts"] for e in events)
INSTANTS = {"slow_syscall", "lock_wait", "drop", "preempt", "sched_delay", "app"}
def ns(us):
    return round(us * 1000)
def inwin(e, strict_from=False):
    r = e["ts"] - t0
    if win and (r < win[0] or r > win[1] or (strict_from and r == win[0])):
        return False
    return e["tid"] in tids

# --- Chrome ---
tn = {e["tid"]: e["args"]["name"] for e in chrome if e["ph"] == "M" and e["name"] == "thread_name"}
expect("threads with a thread_name", set(tn), tids)
for tid in tids:
    if names.get(tid):
        expect("thread_name of %d" % tid, tn.get(tid), names[tid])
xs, last_x, last_other = defaultdict(list), {}, {}
flows = defaultdict(list)
CTR = {"busy": ("busy threads", "threads"), "dropped": ("dropped events", "events")}
cctr = defaultdict(list)  # (pid, perfetto track name) -> [(ts, value)] in file order
for e in chrome:
    ph = e["ph"]
    if ph == "M":
        continue
    if ph == "C":
        name, key = CTR.get(e["name"], (None, None))
        if name is None or list(e["args"]) != [key]:
            errors.append("unknown counter: %r" % e)
            continue
        t = ns(e["ts"])
        if win and not (win[0] <= t <= win[1]):
            errors.append("counter outside the window: %r" % e)
        cctr[(e["pid"], name)].append((t, e["args"][key]))
        continue
    if e["tid"] not in tids:
        errors.append("event of a thread not asked for: %r" % e)
    t = ns(e["ts"])
    if win and not (win[0] <= t <= win[1]):
        errors.append("event outside the window: %r" % e)
    if ph == "X":
        if e["dur"] < 0:
            errors.append("negative dur: %r" % e)
        if t < last_x.get(e["tid"], 0):
            errors.append("X ts goes back on tid %d" % e["tid"])
        last_x[e["tid"]] = t
        xs[e["tid"]].append((t, t + ns(e["dur"]), e["cat"]))
    else:
        if t < last_other.get(e["tid"], 0):
            errors.append("%s ts goes back on tid %d" % (ph, e["tid"]))
        last_other[e["tid"]] = t
    if ph in "sf":
        flows[e["id"]].append((ph, t))
for tid, v in xs.items():
    for a, b in zip(v, v[1:]):
        if b[0] < a[1]:
            errors.append("slices overlap on tid %d: %r %r" % (tid, a, b))
for fid, v in flows.items():
    if sorted(p for p, _ in v) != ["f", "s"]:
        errors.append("flow %d has ends %r" % (fid, v))
    elif dict(v)["s"] > dict(v)["f"]:
        errors.append("flow %d ends before it starts" % fid)
parks = [e for e in chrome if e["ph"] == "X" and e["cat"] == "park"]
busy = [e for e in chrome if e["ph"] == "X" and e["cat"] == "busy"]
inst = [e for e in chrome if e["ph"] == "i"]
if win:  # slices cut at the window start are not counted: their PARK is before it
    got = len([e for e in parks if ns(e["ts"]) > win[0]])
else:
    got = len(parks)
expect("park slices", got, len([e for e in events if e["type"] == "park" and inwin(e, True)]))
expect("instants", len(inst), len([e for e in events if e["type"] in INSTANTS and inwin(e)]))
if not win and sys.argv[7] == "":
    matched = len([e for e in events if e["type"] == "wake" and e["wakee"] is not None])
    expect("flows >= matched wakes (a broadcast has several)", len(flows) >= matched, True)
    if not summary["dropped"]:  # with drops, every wakee unpark may be lost
        expect("matched wakes", matched > 0, True)
if not parks or not busy:
    errors.append("no park or no busy slice in the chrome export")

# --- Perfetto: protoc text format into nested dicts ---
def parse(lines):
    stack = [defaultdict(list)]
    for line in lines:
        line = line.strip()
        if line.endswith("{"):
            d = defaultdict(list)
            stack[-1][line[:-1].strip()].append(d)
            stack.append(d)
        elif line == "}":
            stack.pop()
        elif line:
            k, v = line.split(":", 1)
            v = v.strip()
            stack[-1][k].append(json.loads(v) if v.startswith("\"") else v)
    return stack[0]
packets = parse(open(sys.argv[2]))["packet"]
first = packets[0] if packets else {}
expect("first packet clears incremental state", first.get("sequence_flags"), ["1"])
tracks, tpid, ptrack, ctrack = {}, {}, {}, {}
nthreads = Counter()
for p in packets:
    if p.get("trusted_packet_sequence_id") != ["1"]:
        errors.append("packet without trusted_packet_sequence_id 1")
    for td in p.get("track_descriptor", []):
        u = td["uuid"][0]
        for pr in td.get("process", []):
            ptrack[u] = int(pr["pid"][0])
        for th in td.get("thread", []):
            tracks[u] = (int(th["tid"][0]), (th.get("thread_name") or [""])[0])
            tpid[u] = int(th["pid"][0])
            nthreads[tpid[u]] += 1
        for cd in td.get("counter", []):
            expect("counter unit", cd.get("unit"), ["UNIT_COUNT"])
            ctrack[u] = (td["parent_uuid"][0], td["name"][0])
tparent = {td["uuid"][0]: (td.get("parent_uuid") or [None])[0]
           for p in packets for td in p.get("track_descriptor", []) if td.get("thread")}
for u, parent in tparent.items():
    if parent not in ptrack or ptrack[parent] != tpid[u]:
        errors.append("thread track %s (pid %d) has parent %s, not its process track" % (u, tpid[u], parent))
for u, (parent, name) in ctrack.items():
    if parent not in ptrack or name not in ("busy threads", "dropped events"):
        errors.append("counter track %s: %r under %s (not a process track)" % (u, name, parent))
expect("thread tracks", {t for t, _ in tracks.values()}, tids)
for tid, nm in tracks.values():
    if names.get(tid):
        expect("thread_name of track %d" % tid, nm, names[tid])
depth, last, fl = Counter(), {}, Counter()
cnt = Counter()
stack = defaultdict(list)          # thread track -> open slice names
nbusy, drops = Counter(), Counter() # per pid, replayed from the slices and drop instants
pctr = defaultdict(list)           # (pid, counter name) -> [(ts, value)] in file order
due = None                         # (pid, counter name, ts) the next packet must sample
for p in packets:
    for te in p.get("track_event", []):
        u = te["track_uuid"][0]
        if u not in tracks and u not in ctrack:
            errors.append("event on an undeclared track %s" % u)
        ts = int(p["timestamp"][0])
        if ts < last.get(u, 0):
            errors.append("timestamps go back on track %s" % u)
        last[u] = ts
        ty = te["type"][0]
        if ty == "TYPE_COUNTER":
            pid, name = ptrack.get(ctrack.get(u, (0, ""))[0]), ctrack.get(u, (0, ""))[1]
            v = int(te["counter_value"][0])
            prev = pctr[(pid, name)][-1][0] if pctr[(pid, name)] else 0
            if due is None or due[:2] != (pid, name):
                errors.append("%s sample at %d after no change of it (due: %r)" % (name, ts, due))
            elif ts != max(due[2], prev):
                errors.append("%s sample at %d for a change at %d" % (name, ts, due[2]))
            want = nbusy[pid] if name == "busy threads" else drops[pid]
            if v != want:
                errors.append("%s of pid %s at %d: %d, replayed %d" % (name, pid, ts, v, want))
            if name == "busy threads" and not 0 <= v <= nthreads[pid]:
                errors.append("busy threads %d outside 0..%d" % (v, nthreads[pid]))
            pctr[(pid, name)].append((ts, v))
            due = None
            continue
        if due is not None:
            errors.append("no %s sample after its change at %d" % (due[1], due[2]))
            due = None
        if ty == "TYPE_SLICE_BEGIN":
            depth[u] += 1
            stack[u].append(te["name"][0])
            cnt["park" if te["name"][0] != "busy" else "busy"] += 1
            if te["name"][0] == "busy":
                nbusy[tpid[u]] += 1
                due = (tpid[u], "busy threads", ts)
        elif ty == "TYPE_SLICE_END":
            depth[u] -= 1
            if depth[u] < 0:
                errors.append("END without BEGIN on track %s" % u)
            elif stack[u].pop() == "busy":
                nbusy[tpid[u]] -= 1
                due = (tpid[u], "busy threads", ts)
        elif te.get("flow_ids") or te.get("terminating_flow_ids"):
            for f in te.get("flow_ids", []) + te.get("terminating_flow_ids", []):
                fl[f] += 1
        else:
            cnt["instant"] += 1
            if te["name"][0] == "drop":
                n = [int(a["int_value"][0]) for a in te.get("debug_annotations", []) if a["name"] == ["count"]]
                expect("drop count args", len(n), 1)
                drops[tpid[u]] += sum(n)
                due = (tpid[u], "dropped events", ts)
if due is not None:
    errors.append("no %s sample after its change at %d" % (due[1], due[2]))
for (pid, name), v in pctr.items():
    if name == "busy threads" and v[-1][1] != 0:
        errors.append("busy threads of pid %s ends at %d, not 0 with every slice closed" % (pid, v[-1][1]))
want_drops = sum(e["count"] for e in events if e["type"] == "drop" and inwin(e))
expect("dropped events (last samples)", sum(v[-1][1] for (_, n), v in pctr.items() if n == "dropped events"), want_drops)
if not win and sys.argv[7] == "":
    expect("dropped events = summary dropped", want_drops, summary["dropped"])
    if not [k for k in pctr if k[1] == "busy threads"]:
        errors.append("no busy threads counter")
expect("chrome counters = perfetto counters", dict(cctr), dict(pctr))
for u, d in depth.items():
    if d:
        errors.append("%d slices left open on track %s" % (d, u))
for f, n in fl.items():
    if n != 2:
        errors.append("flow id %s on %d events" % (f, n))
expect("perfetto park slices", cnt["park"], len(parks))
expect("perfetto busy slices", cnt["busy"], len(busy))
expect("perfetto instants", cnt["instant"], len(inst))
expect("perfetto flows", len(fl), len(flows))
print("# %s: %d park, %d busy slices, %d instants, %d flows, %d counter samples, %d dropped" %
      (sys.argv[8], len(parks), len(busy), len(inst), len(flows), sum(len(v) for v in pctr.values()), want_drops))
' "$c" "$p.txt" "$D9_TMP/$name.events.jsonl" "$D9_TMP/$name.summary.json" "$from" "$to" "$tid" "$name${args[*]:+ ${args[*]}}"
}

# check_wall NAME PATH FROM TO: the window FROM..TO (ns since the trace
# start) given as UTC times instead, computed here from the ANCHOR TLV of the
# earliest segment (docs/FORMAT.md: wall = ts - mono + real) and the
# `events --json` timestamps: --from as a date and time, --to as a time of
# day at +01:00; the export must come out byte for byte as with the ns (in
# the Chrome format: the window is resolved before the walk both formats share).
# A --to before the trace start is a usage error.
check_wall() {
    local name=$1 path=$2 from=$3 to=$4 rc wall=()
    mapfile -t wall < <(python3 -c '
import datetime, json, os, struct, sys
anchors = []
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not (f.endswith(".d9") or f.endswith(".d9.open")):
            continue
        b = open(os.path.join(root, f), "rb").read()
        assert b[:8] == b"DIAL9SEG", f
        hlen = struct.unpack_from("<I", b, 12)[0]
        i, end = 16, 16 + hlen - 4
        while i < end:
            tag, n = struct.unpack_from("<HI", b, i)
            if tag == 6:
                real, mono = struct.unpack_from("<QQ", b, i + 6)
                anchors.append((mono, real))
            i += 6 + n
mono, real = min(anchors)
t0 = min(json.loads(l)["ts"] for l in open(sys.argv[2]) if l.strip())
def utc(rel, shift_h=0):
    w = t0 + rel - mono + real + shift_h * 3600 * 10**9
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=w // 10**9)
    return d, "%09d" % (w % 10**9)
d, f = utc(int(sys.argv[3]))
print(d.strftime("%Y-%m-%dT%H:%M:%S.") + f + "Z")
d, f = utc(int(sys.argv[4]), 1)
print(d.strftime("%H:%M:%S.") + f + "+01:00")
d, f = utc(-10**9)
print(d.strftime("%Y-%m-%d %H:%M:%S.") + f)
' "$path" "$D9_TMP/$name.events.jsonl" "$from" "$to")
    [ ${#wall[@]} -eq 3 ] || d9_fail "cannot compute the wall-clock window of $name"
    d9_log "$name: --from $from --to $to is --from ${wall[0]} --to ${wall[1]}"
    "$D9_DECODER" export --format chrome -o "$D9_TMP/$name.ns.json" --from "$from" --to "$to" "$path" ||
        d9_fail "export --from $from --to $to failed"
    "$D9_DECODER" export --format chrome -o "$D9_TMP/$name.wall.json" --from "${wall[0]}" --to "${wall[1]}" "$path" ||
        d9_fail "export --from ${wall[0]} --to ${wall[1]} failed"
    cmp -s "$D9_TMP/$name.ns.json" "$D9_TMP/$name.wall.json" ||
        d9_fail "--from ${wall[0]} --to ${wall[1]} differs from --from $from --to $to"
    rc=0
    "$D9_DECODER" export --format chrome --to "${wall[2]}" "$path" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || d9_fail "export --to ${wall[2]} (before the trace start) exited $rc, want 2"
}

# check_trace NAME PATH: the whole trace, a window (in ns and as UTC times),
# one thread.
check_trace() {
    local name=$1 path=$2
    d9_decode_to "$D9_TMP/$name.events.jsonl" events --json "$path"
    d9_decode_to "$D9_TMP/$name.summary.json" summary --json "$path"
    check_exports "$name" "$path"
    local span tid
    span=$(python3 -c 'import json,sys; t=[json.loads(l)["ts"] for l in open(sys.argv[1])]; print(max(t)-min(t))' \
        "$D9_TMP/$name.events.jsonl")
    # A window in the middle third (+1: not on an event's ts, most likely).
    check_exports "$name" "$path" $((span / 3 + 1)) $((2 * span / 3 + 1))
    check_wall "$name" "$path" $((span / 3 + 1)) $((2 * span / 3 + 1))
    # The thread with the most parks.
    tid=$(d9_json "$D9_TMP/$name.summary.json" 'max(j["threads"], key=lambda t: t["parks"])["tid"]') || exit 1
    check_exports "$name" "$path" "" "" "$tid"
}

trace=$D9_TMP/gt
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >/dev/null 2>"$D9_TMP/gt.err" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/gt.err")"
check_trace gt "$trace"

trace=$D9_TMP/demo
d9_run_traced "$trace" "$D9_PROGS/demo_server" --workers 2 --pool 3 --clients 4 --seconds 1 \
    >/dev/null 2>"$D9_TMP/demo.err" || d9_fail "demo_server failed under the agent: $(cat "$D9_TMP/demo.err")"
check_trace demo "$trace"

# A 64-event buffer: events dropped, for the dropped events counter.
trace=$D9_TMP/burst
DIAL9_BUFFER_EVENTS=64 d9_run_traced "$trace" "$D9_PROGS/ground_truth" --burst 200000 >/dev/null \
    2>"$D9_TMP/burst.err" || d9_fail "ground_truth --burst failed under the agent: $(cat "$D9_TMP/burst.err")"
d9_decode_to "$D9_TMP/burst.events.jsonl" events --json "$trace"
d9_decode_to "$D9_TMP/burst.summary.json" summary --json "$trace"
[ "$(d9_json "$D9_TMP/burst.summary.json" 'j["dropped"] > 0')" = True ] || d9_fail "no events dropped with a 64-event buffer"
check_exports burst "$trace"

# Usage errors exit 2.
for bad in "--format svg" "--from x" "--to -1" "--tid 0" "--tid" "--bogus" "--from 5 --to 1" "-o" \
    "--from 24:00:00" "--from 06:10" "--to 2026-02-30T00:00:00Z" "--from 06:10:03.1234567890" \
    "--from 06:10:03+5" "--from 06:10:03PST"; do
    rc=0
    # shellcheck disable=SC2086 # split on purpose
    "$D9_DECODER" export $bad "$trace" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || d9_fail "export $bad exited $rc, want 2"
done
rc=0
"$D9_DECODER" export --format chrome >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || d9_fail "export without PATH exited $rc, want 2"
