#!/bin/bash
# test_uvloop.sh - Python's asyncio on uvloop (Debian's python3-uvloop, on
# the shared libuv1) serving HTTP under bounded wrk load; each request runs
# one task on a ThreadPoolExecutor of 2 threads. SIGTERM reaches the loop's
# signal handler (Python's C handler writes to its wakeup socket inside the
# agent's hooks), and the server exits 0, printing its ground truth: the
# loop's tid and the tasks each executor thread ran. Asserts: the loop
# thread parks in epoll; exactly the executor threads the server names run
# its tasks, park and are woken; each of them wrote the loop's eventfd (libuv's
# uv_async_send, from call_soon_threadsafe) at most once a task, and those
# wakes are matched to the loop thread. Python's GIL releases signal a
# condition variable nobody waits on most of the time: they are not recorded
# (agent/hooks_sync.c): every recorded signal falls inside a wait of
# another thread on the same condition variable.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/integration/lib_services.sh
. "$(dirname "$0")/lib_services.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
d9s_need wrk "load generator"
# Debian's python3, whatever python3 comes first in PATH.
py=/usr/bin/python3
"$py" -c 'import uvloop' 2>/dev/null || d9_skip "$py cannot import uvloop (python3-uvloop; scripts/install-deps.sh test)"

port=$(d9_free_port) || exit 1
trace=$D9_TMP/trace
# The loop thread records ~400k events/s under this load (each Python lock
# release is a sem_post): 16x the default buffer, so that a writer starved
# by two busy cores does not drop events.
DIAL9_BUFFER_EVENTS=65536 d9_start_traced "$trace" "$py" "$D9S_SERVICES/uvloop_http.py" "$port" \
    >"$D9_TMP/truth.json" 2>"$D9_TMP/server.err"
srv=$D9_PID
d9_wait_port "$port" 30 "$srv"
d9s_load "http://127.0.0.1:$port/" 2
d9_snapshot_threads "$srv" >"$D9_TMP/threads"

kill -TERM "$srv"
d9s_stopped "$srv" 60 "uvloop_http.py (after SIGTERM)" "$D9_TMP/server.err" "$trace"
d9_log "ground truth: $(cat "$D9_TMP/truth.json")"
d9_assert_threads_named "$D9_TMP/threads" "$D9_TMP/summary.json"

d9_py "$D9S_PY"'
import bisect
truth = json.load(open(sys.argv[1]))
loop, pid = truth["loop_tid"], int(sys.argv[2])
tasks = {int(t): n for t, n in truth["tasks_by_tid"].items()}
summary = json.load(open(sys.argv[3]))
s_of = by_tid(sys.argv[3])
sent, edges = wake_stats(sys.argv[4])
check_dropped(summary)
if loop != pid:
    errors.append("the loop ran on tid %d, not the main thread %d" % (loop, pid))
if truth["answered"] <= 0 or len(tasks) != 2 or sum(tasks.values()) < truth["answered"]:
    errors.append("want 2 executor threads that ran a task per answered request: %r" % truth)
main = s_of.get(loop)
if parks(main, *EPOLL) <= 0 or (main or {}).get("wakes_received", 0) <= 0:
    errors.append("the loop thread: want epoll parks and wakes received: %r" % main)
# A recorded signal or broadcast needs a waiter: a cond_wait park of another
# thread on the same condition variable that began before it and ended after
# it (the waiter counts itself inside the call, and returns only once it has
# the mutex the signaller holds). Python and libuv signal with the mutex held;
# without it a waiter can leave a few ns early: 1% allowed.
parks_of, open_park, signals = {}, {}, []
for line in open(sys.argv[4]):
    e = json.loads(line)
    if e["type"] == "park":
        open_park[e["tid"]] = e
    elif e["type"] == "unpark":
        p = open_park.pop(e["tid"], None)
        if p is not None and p.get("call") == "cond_wait":
            parks_of.setdefault(p["target"], []).append((p["ts"], e["ts"]))
    elif e["type"] == "wake" and e.get("call") in ("cond_signal", "cond_broadcast"):
        signals.append((e["target"], e["ts"]))
latest = {}  # target: (park starts sorted, the latest end among parks up to each)
for target, iv in parks_of.items():
    iv.sort()
    ends, m = [], 0
    for _, end in iv:
        m = max(m, end)
        ends.append(m)
    latest[target] = ([start for start, _ in iv], ends)
def waited(target, ts):
    starts, ends = latest.get(target, ((), ()))
    i = bisect.bisect_right(starts, ts)
    return i > 0 and ends[i - 1] >= ts
lone = sum(1 for target, ts in signals if not waited(target, ts))
print("%d condition-variable signals recorded, %d without a waiter" % (len(signals), lone))
if lone > len(signals) // 100:
    errors.append("%d of %d recorded cond signals had no waiter (idle signals recorded?)" % (lone, len(signals)))
for t, n in sorted(tasks.items()):
    s = s_of.get(t)
    w = sent.get((t, "eventfd_write"), 0)
    print("executor %d: %d tasks, parks %r, %d wakes received, %d eventfd writes" % (
        t, n, (s or {}).get("parks_by_call"), (s or {}).get("wakes_received", 0), w))
    if s is None or s.get("parks", 0) <= 0 or s.get("wakes_received", 0) <= 0:
        errors.append("executor thread %d: want parks and wakes received: %r" % (t, s))
    if not 0 < w <= n:
        errors.append("executor thread %d ran %d tasks but wrote the eventfd %d times" % (t, n, w))
    if woke(edges, t, "eventfd_write", [loop]) is False:
        errors.append("no eventfd_write of executor thread %d matched to the loop thread" % t)
print("loop %d: parks %r, %d wakes received, %d cond_signal wakes sent for %d requests" % (
    loop, (main or {}).get("parks_by_call"), (main or {}).get("wakes_received", 0),
    sent.get((loop, "cond_signal"), 0), truth["answered"]))
' "$D9_TMP/truth.json" "$srv" "$D9_TMP/summary.json" "$D9_TMP/events.jsonl"
echo "ok"
