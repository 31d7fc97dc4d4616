#!/bin/bash
# test_memcached.sh - a real libevent service under the agent: memcached with
# 4 worker threads, bounded load from memaslap, then SIGTERM. The trace must
# be sealed and intact, and describe the threads /proc showed while it ran.
# As root, memcached switches to nobody (-u) after start, as Debian's does.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
command -v memcached >/dev/null || d9_skip "memcached is not installed (scripts/install-deps.sh test)"
slap=$(command -v memcaslap || command -v memaslap) ||
    d9_skip "neither memcaslap nor memaslap is installed (libmemcached-tools)"

port=$(d9_free_port) || exit 1
trace=$D9_TMP/trace
# shellcheck disable=SC2046 # d9_user_flag is empty or two words
d9_start_traced "$trace" memcached -t 4 -U 0 -l 127.0.0.1 -p "$port" $(d9_user_flag) \
    >"$D9_TMP/mc.out" 2>&1
mc=$D9_PID
d9_wait_port "$port" 30 "$mc"

timeout 120 "$slap" -s "127.0.0.1:$port" -T 2 -c 16 -t 5s >"$D9_TMP/slap.out" 2>&1 ||
    d9_fail "$slap failed: $(tail -n 20 "$D9_TMP/slap.out")"
grep -q '^Run time' "$D9_TMP/slap.out" || d9_fail "no load ran: $(cat "$D9_TMP/slap.out")"

# Ground truth while it runs: thread names, and whether memcached notifies
# its workers through eventfds (1.6 with HAVE_EVENTFD) or pipes.
d9_snapshot_threads "$mc" >"$D9_TMP/threads"
eventfds=$(find /proc/"$mc"/fd -lname 'anon_inode:\[eventfd\]' 2>/dev/null | wc -l)
d9_log "threads: $(tr '\n' ' ' <"$D9_TMP/threads"); eventfds: $eventfds"

kill -TERM "$mc"
d9_wait_exit "$mc" 60
[ "$D9_RC" -eq 0 ] || d9_fail "memcached exited $D9_RC after SIGTERM: $(cat "$D9_TMP/mc.out")"

dir=$(d9_sealed_dir "$trace" "$mc") || exit 1
d9_decode_to "$D9_TMP/summary.json" summary --json "$dir"
d9_decode_to "$D9_TMP/events.json" events --json "$dir"
d9_assert_threads_named "$D9_TMP/threads" "$D9_TMP/summary.json"

d9_py '
pid, eventfds = int(sys.argv[1]), int(sys.argv[2])
threads = {int(l.split()[0]): l.split(None, 1)[1].strip() for l in open(sys.argv[3]) if l.strip()}
summary = json.load(open(sys.argv[4]))
by_tid = {t["tid"]: t for t in summary["threads"]}
workers = [t for t, n in threads.items() if "worker" in n]
if len(workers) != 4:
    errors.append("/proc shows %d worker threads for -t 4: %r" % (len(workers), threads))
epoll = lambda s: sum(s["parks_by_call"].get(c, 0) for c in ("epoll_wait", "epoll_pwait", "epoll_pwait2"))
for tid in workers + [pid]:
    s = by_tid.get(tid)
    if s and epoll(s) <= 0:
        errors.append("%s (tid %d) never parked in epoll: %r" % (s["name"], tid, s["parks_by_call"]))
# The dispatcher (the main thread) hands each worker its connections
# through that worker'"'"'s notify fd (an eventfd, or a pipe watched by the
# worker'"'"'s epoll set): each such write is a wake, matched to the worker.
edges = {}
for line in open(sys.argv[5]):
    e = json.loads(line)
    if e["type"] == "wake" and e["tid"] == pid and e.get("call") in ("eventfd_write", "pipe_write"):
        edges[e.get("wakee")] = edges.get(e.get("wakee"), 0) + 1
for tid in workers:
    if edges.get(tid, 0) <= 0:
        errors.append("no dispatcher -> worker tid %d wake matched (edges %r)" % (tid, edges))
    s = by_tid.get(tid)
    if s and s.get("wakes_received", 0) <= 0:
        errors.append("worker tid %d received no wakes" % tid)
print("dispatcher -> worker wake edges: %r (eventfds %d)" % (edges, eventfds))
if summary.get("dropped") != 0:
    errors.append("%r events dropped" % summary.get("dropped"))
' "$mc" "$eventfds" "$D9_TMP/threads" "$D9_TMP/summary.json" "$D9_TMP/events.json"
echo "ok"
