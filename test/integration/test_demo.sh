#!/bin/bash
# test_demo.sh - the bundled demo under the agent: the trace is intact and the
# summary describes the demo's threads as the demo itself reports them (its
# stats name each thread's tid and count requests and jobs), with one
# "req.served" application event a request.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/demo_server"

trace=$D9_TMP/trace
d9_start_traced "$trace" "$D9_PROGS/demo_server" --workers 2 --pool 3 --clients 4 --seconds 3 \
    >"$D9_TMP/out" 2>"$D9_TMP/err"
demo=$D9_PID
d9_wait_exit "$demo" 120
cat "$D9_TMP/out"
[ "$D9_RC" -eq 0 ] || d9_fail "demo exited $D9_RC: $(cat "$D9_TMP/err")"

dir=$(d9_sealed_dir "$trace" "$demo") || exit 1
d9_decode_to "$D9_TMP/summary.json" summary --json "$dir"

d9_py '
out = open(sys.argv[1]).read()
summary = json.load(open(sys.argv[2]))
# Ground truth from the demo: "  NAME tid T ..." lines and the totals line.
tids = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (\S+)\s+tid (\d+)", out, re.M)}
m = re.search(r"^demo: requests=(\d+) jobs=(\d+)$", out, re.M)
if not m or not tids:
    sys.exit("demo stats not found in its output")
requests, jobs = int(m.group(1)), int(m.group(2))
by_tid = {t["tid"]: t for t in summary["threads"]}
def thread(name):
    t = by_tid.get(tids[name])
    if t is None:
        errors.append("%s (tid %d) missing from the summary" % (name, tids[name]))
        return {}
    if t.get("name") != name:
        errors.append("tid %d is %s, summary names it %r" % (tids[name], name, t.get("name")))
    return t
workers = [n for n in tids if n.startswith("io-worker-")]
pools = [n for n in tids if n.startswith("pool-")]
if len(workers) != 2 or len(pools) != 3 or requests <= 0:
    errors.append("demo reported %d workers, %d pool threads, %d requests" % (len(workers), len(pools), requests))
for n in workers:
    t = thread(n)
    if t and t.get("role") != "worker":
        errors.append("%s role %r, want worker" % (n, t.get("role")))
    if t and t["parks_by_call"].get("epoll_wait", 0) <= 0:
        errors.append("%s has no epoll_wait parks: %r" % (n, t["parks_by_call"]))
    if t and t.get("wakes_received", 0) <= 0:
        errors.append("%s received no wakes (the acceptor and the pool write its eventfd)" % n)
# A client waits for each answer in poll, then takes it without waiting.
for n in [n for n in tids if n.startswith("client-")]:
    t = thread(n)
    calls = t.get("parks_by_call", {})
    if calls.get("poll", 0) <= 0 or calls.get("read", 0) or calls.get("recv", 0):
        errors.append("%s: want poll parks and no read or recv parks: %r" % (n, calls))
pool_parks = 0
for n in pools:
    t = thread(n)
    if t and t["parks_by_call"].get("cond_wait", 0) <= 0:
        errors.append("%s has no cond_wait parks: %r" % (n, t["parks_by_call"]))
    pool_parks += t.get("parks", 0)
# Each job signals the condvar once and shutdown broadcasts once, so each
# pool thread parks at most once per job it could have been woken for, plus
# the wait that shutdown ends.
if pool_parks > jobs + len(pools):
    errors.append("pool parked %d times for %d jobs and %d threads" % (pool_parks, jobs, len(pools)))
if summary.get("dropped", 0) != 0:
    errors.append("%d events dropped" % summary["dropped"])
# The main thread waits for the run to end in a join of each thread the demo reports.
main = by_tid.get(int(sys.argv[3]), {"parks_by_call": {}})
if main["parks_by_call"].get("join", 0) != len(tids):
    errors.append("main thread: %r join parks, want %d (one a thread): %r"
                  % (main["parks_by_call"].get("join"), len(tids), main["parks_by_call"]))
# Each answer written is one "req.served" application event of an io worker.
served = [a for a in summary["app_events"] if a["name"] == "req.served"]
if len(served) != 1 or served[0]["count"] != requests or served[0]["min"] <= 0:
    errors.append("req.served events %r, want %d with values above 0 ns" % (served, requests))
print("requests %d, jobs %d, pool parks %d, req.served events %d" % (requests, jobs, pool_parks,
      served[0]["count"] if served else 0))
' "$D9_TMP/out" "$D9_TMP/summary.json" "$demo"

# scripts/demo.sh (what `make demo` runs) must work end to end too.
DIAL9_DIR=$D9_TMP/script "$D9_ROOT/scripts/demo.sh" --seconds 1 >"$D9_TMP/script.out" 2>&1 ||
    d9_fail "scripts/demo.sh failed: $(tail -n 20 "$D9_TMP/script.out")"
grep -q "^Trace: $D9_TMP/script/demo_server\." "$D9_TMP/script.out" ||
    d9_fail "scripts/demo.sh did not say where the trace is: $(tail -n 5 "$D9_TMP/script.out")"
echo "ok"
