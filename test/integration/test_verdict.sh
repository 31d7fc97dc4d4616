#!/bin/bash
# shellcheck disable=SC2015,SC2086 # "A && B || d9_fail"; $high splits on purpose
# test_verdict.sh - `dial9-decode verdict` on a real recording (ground_truth
# under the agent: wakes and parks): thresholds of 0 must flag (exit 1),
# thresholds nobody reaches must be clean (exit 0), the default run must agree
# with its own output, JSON must match the text, and usage errors exit 2.
cd "$(dirname "$0")/../.." || exit 1
. test/integration/lib.sh
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth"

trace=$D9_TMP/trace
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >/dev/null 2>"$D9_TMP/prog.err" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/prog.err")"
D=$D9_DECODER

# --- Defaults: whatever it says, exit code and output agree ----------------
rc=0; out=$("$D" verdict "$trace") || rc=$?
case $rc in
0) [ "$out" = clean ] || d9_fail "exit 0 but said: $out" ;;
1) [ -n "$out" ] && [ "$out" != clean ] || d9_fail "exit 1 but said: $out" ;;
*) d9_fail "verdict with default thresholds exited $rc: $out" ;;
esac
d9_log "default verdict (exit $rc): $out"

# --- Wake latency threshold 0: every matched wake is over it ---------------
rc=0; "$D" verdict --wake-latency-ms 0 "$trace" >"$D9_TMP/zero.txt" || rc=$?
[ $rc -eq 1 ] || d9_fail "verdict --wake-latency-ms 0 exited $rc, want 1: $(cat "$D9_TMP/zero.txt")"
grep -q '^wake_latency ' "$D9_TMP/zero.txt" || d9_fail "no wake_latency flag: $(cat "$D9_TMP/zero.txt")"
rc=0; "$D" verdict --json --wake-latency-ms=0 "$trace" >"$D9_TMP/zero.json" || rc=$?
[ $rc -eq 1 ] || d9_fail "verdict --json --wake-latency-ms=0 exited $rc, want 1"
d9_decode_to "$D9_TMP/summary.json" summary --json "$trace"
d9_py '
v = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
text = [l for l in open(sys.argv[3]) if l.strip()]
expect("clean", v["clean"], False)
expect("text lines = JSON flags", len(text), len(v["flags"]))
wl = [f for f in v["flags"] if f["flag"] == "wake_latency"]
woken = {t["tid"]: t for t in summary["threads"] if t["wake_latency_ns"]["count"]}
expect("wake_latency flags name the woken threads", sorted(f["tid"] for f in wl), sorted(woken))
for f in wl:
    t = woken.get(f["tid"], {})
    expect("flag of %d: value = max latency" % f["tid"], f["value"], t["wake_latency_ns"]["max"])
    expect("flag of %d: threshold" % f["tid"], f["threshold"], 0)
    expect("flag of %d: unit" % f["tid"], f["unit"], "ns")
    expect("flag of %d: name" % f["tid"], f["name"], t["name"])
    if f["count"] > t["wake_latency_ns"]["count"] or f["count"] < 1:
        errors.append("flag of %d: count %d of %d wakes" % (f["tid"], f["count"], t["wake_latency_ns"]["count"]))
for f in v["flags"]:
    for k in ("flag", "value", "threshold", "pid", "tid", "name", "count"):
        if k not in f:
            errors.append("flag without %s: %r" % (k, f))
if not wl:
    errors.append("no wake_latency flag on a trace with %d woken threads" % len(woken))
' "$D9_TMP/zero.json" "$D9_TMP/summary.json" "$D9_TMP/zero.txt"

# --- Thresholds nobody reaches: clean ------------------------------------
high="--wake-latency-ms 100000 --sched-delay-ms 100000 --slow-syscall-ms 100000 --busy-ms 100000 --lock-wait-ms 100000 --max-drops 1000000"
rc=0; out=$("$D" verdict $high "$trace") || rc=$?
[ $rc -eq 0 ] && [ "$out" = clean ] || d9_fail "verdict with high thresholds: exit $rc: $out"
rc=0; out=$("$D" verdict --json $high "$trace") || rc=$?
[ $rc -eq 0 ] && [ "$out" = '{"clean":true,"flags":[]}' ] || d9_fail "verdict --json with high thresholds: exit $rc: $out"

# --- Damaged input is a flag ---------------------------------------------
seg=$(find "$trace" -name '*.d9' | sort | head -n 1)
head -c $(($(stat -c %s "$seg") - 7)) "$seg" >"$D9_TMP/cut.d9.open"
rc=0; out=$("$D" verdict $high "$D9_TMP/cut.d9.open" 2>/dev/null) || rc=$?
[ $rc -eq 1 ] && [[ $out == damaged_input* ]] || d9_fail "verdict of a truncated segment: exit $rc: $out"

# --- Usage errors: 2 -------------------------------------------------------
for args in "--wake-latency-ms abc" "--wake-latency-ms -1" "--busy-ms 5ms" "--max-drops 1.5" \
    "--sched-delay-ms=" "--sched-delay-pct 101" "--sched-delay-pct 5.5" "--sched-delay-pct -1" "--bogus" \
    "--wake-latency-ms"; do
    rc=0
    "$D" verdict $args "$trace" >/dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ] || d9_fail "verdict $args exited $rc, want 2"
done
rc=0; "$D" verdict >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || d9_fail "verdict without PATH exited $rc, want 2"
help=$("$D" --help)
for opt in --wake-latency-ms --sched-delay-ms --sched-delay-pct --slow-syscall-ms --busy-ms --lock-wait-ms --max-drops; do
    grep -q -- "$opt" <<<"$help" || d9_fail "--help does not document $opt"
done
echo "PASS"
