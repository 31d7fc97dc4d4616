#!/bin/bash
# test_process_identity.sh - one pid, several processes (D9_TLV_PROCESS).
# Two runs of build/progs/ground_truth, each pid 1 of its own pid namespace
# (unshare --pid, as in two containers), record into one DIAL9_DIR
# (ground_truth.1 and ground_truth.1.2). Their tids are 1, 2, ... in both.
# Decoded together they must stay two processes, each with exactly the
# threads and calls it counted itself (before: one process whose threads
# held both runs' events), and dial9-decode says once which pid it split.
# An exec keeps the identity: the two images of lifecycle_child stay one
# process.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
prog=$D9_PROGS/ground_truth
d9_require "$D9_AGENT" "$D9_DECODER" "$prog" "$D9_PROGS/lifecycle_child"
[ "$(id -u)" = 0 ] || d9_skip "a pid namespace (unshare --pid) needs root"
command -v unshare >/dev/null || d9_fail "unshare (util-linux) is not installed"

t=$D9_TMP/trace
mkdir -p "$t"
# run N ARGS...: ground_truth as pid 1 of a new pid namespace, its truth in truthN.json.
run() {
    local n=$1
    shift
    timeout -k 5 120 unshare --pid --fork env LD_PRELOAD="$D9_AGENT" DIAL9_DIR="$t" DIAL9_QUIET=1 \
        "$prog" "$@" >"$D9_TMP/truth$n.json" 2>"$D9_TMP/stderr$n" ||
        d9_fail "run $n: ground_truth failed: $(cat "$D9_TMP/stderr$n")"
    [ "$(d9_json "$D9_TMP/truth$n.json" 'j["pid"]')" = 1 ] || d9_fail "run $n: not pid 1 in its namespace"
}
run 1
run 2 --burst 500
for d in "$t/ground_truth.1" "$t/ground_truth.1.2"; do
    [ -d "$d" ] || d9_fail "no $d (have $(ls "$t"))"
    d9_assert_sealed "$d"
done
d9_assert_check "$t"

d9_decode_to "$D9_TMP/events.jsonl" events --json "$t"
d9_decode_to "$D9_TMP/summary.json" summary --json "$t"
"$D9_DECODER" summary "$t" >"$D9_TMP/summary.txt" 2>"$D9_TMP/summary.err" || d9_fail "summary: $(cat "$D9_TMP/summary.err")"
d9_py '
import re
from collections import Counter, defaultdict
truths = [json.load(open(sys.argv[i])) for i in (1, 2)]
events = jsonl(sys.argv[3])
summary = json.load(open(sys.argv[4]))
note = open(sys.argv[5]).read()
text = open(sys.argv[6]).read()

procs = sorted((p["pid"], p.get("pid_instance", 1), p["threads"]) for p in summary["processes"])
expect("processes (pid, pid_instance, threads)", procs,
       [(1, 1, len(truths[0]["threads"])), (1, 2, len(truths[1]["threads"]))])
expect("the note on stderr (%r)" % note, len(re.findall(
    r"ground_truth\.1\.2/000000\.d9: pid 1 again, another process \((another pid namespace|started at another time)\); "
    r"shown as pid 1#2\n", note)), 1)
expect("text summary process lines", sorted(l.split()[1] for l in text.splitlines() if l.startswith("process ")),
       ["1", "1#2"])
by = defaultdict(list)
for e in events:
    by[(e["pid"], e.get("pid_instance", 1), e["tid"])].append(e)
for n, truth in ((1, truths[0]), (2, truths[1])):
    expect("run %d: threads" % n, sorted(k[2] for k in by if k[1] == n), sorted(t["tid"] for t in truth["threads"]))
    for t in truth["threads"]:
        ev = by[(1, n, t["tid"])]
        label = "run %d, %s (tid %d)" % (n, t["name"], t["tid"])
        expect(label + " parks by call", dict(Counter(e["call"] for e in ev if e["type"] == "park")), t["parks"])
        expect(label + " wakes by call", dict(Counter(e["call"] for e in ev if e["type"] == "wake")), t["wakes"])
        expect(label + " thread_start events", sum(e["type"] == "thread_start" for e in ev), 1)
print("two processes of pid 1: %d and %d threads, %d events" %
      (len(truths[0]["threads"]), len(truths[1]["threads"]), len(events)))
' "$D9_TMP/truth1.json" "$D9_TMP/truth2.json" "$D9_TMP/events.jsonl" "$D9_TMP/summary.json" \
    "$D9_TMP/summary.json.err" "$D9_TMP/summary.txt"

# An exec: two directories of one pid, one process.
e=$D9_TMP/exec
d9_run_traced "$e" "$D9_PROGS/lifecycle_child" exec >"$D9_TMP/exec.out" 2>&1 || d9_fail "exec: $(cat "$D9_TMP/exec.out")"
[ "$(find "$e" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 2 ] || d9_fail "exec: want two directories, have $(ls "$e")"
d9_decode_to "$D9_TMP/exec.json" summary --json "$e"
[ -s "$D9_TMP/exec.json.err" ] && d9_fail "exec: unexpected stderr: $(cat "$D9_TMP/exec.json.err")"
d9_py '
s = json.load(open(sys.argv[1]))
expect("exec: processes", [(p["pid"], p.get("pid_instance", 1)) for p in s["processes"]],
       [(int(open(sys.argv[2]).read().split("pid=")[1].split()[0]), 1)])
' "$D9_TMP/exec.json" "$D9_TMP/exec.out"
d9_log "one pid, two processes kept apart; an exec stays one process"
