#!/bin/bash
# test_report.sh - `dial9-decode report` of real traces: ground_truth (its
# own park counts as ground truth) and demo_server (worker and blocking
# pool roles). Parsed with python3's html.parser, the page must be
# well-formed and self-contained (no script, nothing with an http(s) or
# protocol-relative src/href, links only to its own anchors); every thread
# of `summary --json` has a row in the thread table and in the utilization
# chart with the summary's parks, wakes received and busy ns (ground_truth:
# the program's own park counts); each histogram's bars add up to its count, which is
# the sum of the summary's counts over its threads (all, per role), in
# contiguous power-of-two bins spanning the summary's max; the worst stalls
# are the summary's, their ranges inside the trace and inside their export
# window, and the export command of the worst one runs; red flags are the
# verdict's at the same thresholds. `-o FILE` and stdout give the same page,
# a terminal needs -o; usage errors exit 2.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth" "$D9_PROGS/demo_server"

# check_report NAME DIR [TRUTH_JSON] [REPORT OPTIONS...]: makes the report of
# DIR and checks it against summary, events and verdict of the same trace.
check_report() {
    local name=$1 dir=$2 truth=${3:-} html=$D9_TMP/$1.html
    shift 3
    d9_decode_to "$D9_TMP/$name.summary.json" summary --json "$dir"
    d9_decode_to "$D9_TMP/$name.events.jsonl" events --json "$dir"
    "$D9_DECODER" report -o "$html" "$@" "$dir" 2>"$D9_TMP/$name.err" ||
        d9_fail "report $* $dir exited $?: $(cat "$D9_TMP/$name.err")"
    local vrc=0
    "$D9_DECODER" verdict --json "$@" "$dir" >"$D9_TMP/$name.verdict.json" || vrc=$?
    [ "$vrc" -le 1 ] || d9_fail "verdict exited $vrc"
    d9_py '
from html.parser import HTMLParser
from collections import defaultdict
html_path, summary, events, verdict = sys.argv[1], json.load(open(sys.argv[2])), jsonl(sys.argv[3]), json.load(open(sys.argv[4]))
truth = json.load(open(sys.argv[5])) if sys.argv[5] else None
dirpath = sys.argv[6]

VOID = {"meta", "link", "br", "img", "input", "hr", "col", "wbr", "source"}
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.els, self.text = [], [], defaultdict(str)
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        el = {"tag": tag, "a": a, "parents": [p["tag"] + "." + p["a"].get("class", "") for p in self.stack], "text": ""}
        self.els.append(el)
        if tag not in VOID:
            self.stack.append(el)
    def handle_startendtag(self, tag, attrs):
        self.els.append({"tag": tag, "a": dict(attrs), "parents": [p["tag"] + "." + p["a"].get("class", "") for p in self.stack], "text": ""})
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1]["tag"] != tag:
            errors.append("unbalanced </%s> (open: %s)" % (tag, [e["tag"] for e in self.stack[-4:]]))
            return
        self.stack.pop()
    def handle_data(self, d):
        for e in self.stack:
            e["text"] += d
p = Page()
p.feed(open(html_path, encoding="utf-8").read())
p.close()
if p.stack:
    errors.append("unclosed elements: %s" % [e["tag"] for e in p.stack])
els = p.els

# --- Self-contained ---
for e in els:
    if e["tag"] in ("script", "iframe", "object", "embed"):
        errors.append("external or active content: <%s %r>" % (e["tag"], e["a"]))
    for k in ("src", "href", "xlink:href", "action", "srcset"):
        v = e["a"].get(k)
        if v is None:
            continue
        if e["tag"] == "link" and e["a"].get("rel") == "icon" and v.startswith("data:"):
            continue
        if not v.startswith("#"):
            errors.append("reference out of the page: <%s %s=%r>" % (e["tag"], k, v))
style = "".join(e["text"] for e in els if e["tag"] == "style")
if re.search(r"url\(|@import", style):
    errors.append("the style sheet loads something")

# --- Every thread: a row in the thread table and in the utilization chart ---
threads = {t["tid"]: t for t in summary["threads"]}
rows = [e["a"] for e in els if e["tag"] == "tr" and "data-tid" in e["a"] and "table.threads" in e["parents"]]
expect("thread table rows", sorted(int(r["data-tid"]) for r in rows), sorted(threads))
for r in rows:
    t = threads.get(int(r["data-tid"]))
    if t:
        expect("tid %s parks" % r["data-tid"], int(r["data-parks"]), t["parks"])
        expect("tid %s wakes received" % r["data-tid"], int(r["data-wakes-received"]), t["wakes_received"])
heat = [e["a"] for e in els if e["tag"] == "g" and e["a"].get("class") == "row"]
expect("utilization rows", sorted(int(r.get("data-tid", -1)) for r in heat), sorted(threads))
for r in heat:  # the bins, however merged, hold exactly the thread'"'"'s busy time (no drops here)
    t = threads.get(int(r.get("data-tid", -1)))
    if t and int(r["data-busy-ns"]) != t["busy_ns"]:
        errors.append("tid %d: busy %s ns in the utilization bins, %d ns in the summary" % (t["tid"], r["data-busy-ns"], t["busy_ns"]))
if truth:
    for t in truth["threads"]:
        r = [x for x in rows if int(x["data-tid"]) == t["tid"]]
        expect("tid %d parks (the program counted)" % t["tid"], int(r[0]["data-parks"]) if r else None, sum(t["parks"].values()))

# --- Histograms ---
SRC = {"park": "park_ns", "busy": "busy_period_ns", "wake_latency": "wake_latency_ns"}
charts = {}
cur = None
for e in els:
    if e["tag"] == "svg" and "data-metric" in e["a"]:
        cur = (e["a"]["data-metric"], e["a"]["data-scope"])
        charts[cur] = {"count": int(e["a"]["data-count"]), "bars": []}
    elif e["tag"] == "rect" and e["a"].get("class") == "bar":
        charts[cur]["bars"].append((int(e["a"]["data-lo"]), int(e["a"]["data-hi"]), int(e["a"]["data-count"])))
roles = {t["role"] for t in threads.values()}
for metric, key in SRC.items():
    for scope in ["all"] + sorted(roles):
        ts = [t for t in threads.values() if scope == "all" or t["role"] == scope]
        c = charts.get((metric, scope))
        if c is None:
            errors.append("no %s histogram for %s" % (metric, scope))
            continue
        want = sum(t[key]["count"] for t in ts)
        expect("%s/%s histogram count" % (metric, scope), c["count"], want)
        expect("%s/%s bars add up" % (metric, scope), sum(b[2] for b in c["bars"]), want)
        for (lo, hi, _), (lo2, _, _) in zip(c["bars"], c["bars"][1:]):
            if lo2 != hi + 1 or lo2 != (2 * lo if lo else 1):
                errors.append("%s/%s bins not contiguous powers of two: %d..%d then %d" % (metric, scope, lo, hi, lo2))
        mx = max((t[key]["max"] for t in ts if t[key]["count"]), default=None)
        if mx is not None and c["bars"] and not c["bars"][0][0] <= mx <= c["bars"][-1][1]:
            errors.append("%s/%s max %d outside the bars %r" % (metric, scope, mx, c["bars"]))
for (metric, scope) in charts:
    if metric not in SRC or (scope != "all" and scope not in roles):
        errors.append("unexpected histogram %s/%s" % (metric, scope))
if charts.get(("wake_latency", "all"), {}).get("count", 0) == 0 or charts.get(("park", "all"), {}).get("count", 0) == 0:
    errors.append("the trace has no parks or no matched wakes: the histograms prove nothing")

# --- Worst stalls ---
t0 = min(e["ts"] for e in events)
span = max(e["ts"] for e in events) - t0
spans = [int(e["a"]["data-ns"]) for e in els if e["a"].get("id") == "span"]
expect("span shown", spans, [span])
stalls = defaultdict(list)
for e in els:
    if e["tag"] == "tr" and e["a"].get("class") == "stall":
        a = e["a"]
        s = {k: int(a["data-" + k]) for k in ("start", "end", "from", "to")}
        s["cmd"] = " ".join(e["text"].split())
        stalls[a["data-kind"]].append(s)
want = {
    "wake": [(w["ts"] - t0, w["ts"] - t0 + w["latency_ns"]) for w in summary["wake_latency_worst"]],
    "busy": [(b["start_ts"] - t0, b["start_ts"] - t0 + b["duration_ns"]) for b in summary["long_busy_periods"]],
    "slow": [(x["ts"] - t0, x["ts"] - t0 + x["duration_ns"]) for x in summary["slow_syscalls_worst"]],
}
for kind, w in want.items():
    expect("%s stalls (start, end)" % kind, [(s["start"], s["end"]) for s in stalls[kind]], w)
    for s in stalls[kind]:
        if not (0 <= s["from"] <= s["start"] <= s["end"] <= s["to"] <= span):
            errors.append("%s stall outside the trace (span %d) or its window: %r" % (kind, span, s))
        if "--from %d --to %d" % (s["from"], s["to"]) not in s["cmd"] or dirpath not in s["cmd"]:
            errors.append("%s stall command does not export its window of %s: %r" % (kind, dirpath, s["cmd"]))
if not stalls["wake"] or not stalls["busy"]:
    errors.append("no worst wakes or busy periods listed")
cmd = re.search(r"dial9-decode (export .*)", stalls["wake"][0]["cmd"]) if stalls["wake"] else None
open(sys.argv[7], "w").write(cmd.group(1) if cmd else "")

# --- Red flags: the verdict at the same thresholds ---
flags = [e for e in els if e["tag"] == "tr" and e["a"].get("class") == "flag"]
expect("red flags shown", len(flags), len(verdict["flags"]))
for e, f in zip(flags, verdict["flags"]):
    if not e["text"].startswith(f["flag"]):
        errors.append("flag row %r is not %s" % (e["text"][:60], f["flag"]))
marks = [e["a"] for e in els if "data-flags" in e["a"]]
expect("flags section count", [int(m["data-flags"]) for m in marks], [len(verdict["flags"])])
print("# %s: %d threads, %d histograms, %d stalls, %d red flags" % (sys.argv[8], len(threads), len(charts),
      sum(len(v) for v in stalls.values()), len(flags)))
' "$html" "$D9_TMP/$name.summary.json" "$D9_TMP/$name.events.jsonl" "$D9_TMP/$name.verdict.json" "$truth" \
        "$dir" "$D9_TMP/$name.cmd" "$name $*"
    # The worst wake's export command (the report's "link") works as printed.
    local cmd
    cmd=$(cat "$D9_TMP/$name.cmd")
    [ -n "$cmd" ] || d9_fail "no export command in the report"
    (cd "$D9_TMP" && eval "\"$D9_DECODER\" $cmd") || d9_fail "the report's command failed: dial9-decode $cmd"
    [ -s "$D9_TMP/stall-wake-1.pftrace" ] || d9_fail "the report's command wrote nothing"
    rm -f "$D9_TMP/stall-wake-1.pftrace"
}

trace=$D9_TMP/gt
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >"$D9_TMP/gt.truth.json" 2>"$D9_TMP/gt.err" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/gt.err")"
pid=$(d9_json "$D9_TMP/gt.truth.json" 'j["pid"]') || exit 1
gt=$(d9_sealed_dir "$trace" "$pid") || exit 1
check_report gt "$gt" "$D9_TMP/gt.truth.json"
# Thresholds low enough that the verdict flags something: the flags table.
check_report gt-flags "$gt" "" --busy-ms 0.001 --wake-latency-ms=0.001
grep -q 'class="flag"' "$D9_TMP/gt-flags.html" || d9_fail "no red flag shown at 1 us thresholds"

trace=$D9_TMP/demo
d9_run_traced "$trace" "$D9_PROGS/demo_server" --workers 2 --pool 3 --clients 4 --seconds 1 \
    >/dev/null 2>"$D9_TMP/demo.err" || d9_fail "demo_server failed under the agent: $(cat "$D9_TMP/demo.err")"
check_report demo "$trace" ""
grep -q 'data-scope="worker"' "$D9_TMP/demo.html" || d9_fail "demo_server: no worker histogram"

# stdout (not a tty here) gets the same page as -o.
"$D9_DECODER" report "$gt" >"$D9_TMP/stdout.html" || d9_fail "report to stdout failed"
cmp -s "$D9_TMP/stdout.html" "$D9_TMP/gt.html" || d9_fail "report on stdout differs from -o FILE"

# A terminal gets no HTML: -o is needed (script(1) gives the command a pty).
rc=0
script -qec "'$D9_DECODER' report '$gt'" /dev/null >"$D9_TMP/tty.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || d9_fail "report to a terminal without -o exited $rc, want 2: $(head -c 300 "$D9_TMP/tty.out")"
grep -q 'give -o FILE' "$D9_TMP/tty.out" || d9_fail "report to a terminal: no hint about -o"

# Usage errors exit 2; a missing input is reported (exit 1) but the page is written.
for bad in "--bogus" "--busy-ms x" "--max-drops -1" "-o" "--wake-latency-ms"; do
    rc=0
    # shellcheck disable=SC2086 # split on purpose
    "$D9_DECODER" report -o "$D9_TMP/x.html" $bad "$gt" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || d9_fail "report $bad exited $rc, want 2"
done
rc=0
"$D9_DECODER" report -o "$D9_TMP/x.html" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || d9_fail "report without PATH exited $rc, want 2"
rc=0
"$D9_DECODER" report -o "$D9_TMP/x.html" "$gt" "$D9_TMP/no-such-dir" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || d9_fail "report with a missing input exited $rc, want 1"
grep -q 'class="bad"' "$D9_TMP/x.html" || d9_fail "the page does not say an input was unreadable"
echo "ok"
