#!/bin/bash
# test_tokio.sh - a hyper 0.14 server on a Tokio multi-thread runtime (2
# workers, spawn_blocking per request), built offline from Debian's crates,
# under bounded wrk load, then SIGTERM (graceful). The service reports its
# own ground truth (GET /tids: which threads ran async handlers, which ran
# spawn_blocking jobs; /proc names them all "tokio-runtime-w"). Asserts:
# workers park in futex (through libc syscall()) and in epoll_wait;
# blocking-pool threads park in futex only; FUTEX_WAKE wakes and mio's
# eventfd wakes are matched; the decoder's roles tell the two kinds apart.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/integration/lib_services.sh
. "$(dirname "$0")/lib_services.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
d9s_need wrk "load generator"
bin=$(d9s_build_tokio) || exit $?

port=$(d9_free_port) || exit 1
trace=$D9_TMP/trace
d9_start_traced "$trace" "$bin" "$port" >"$D9_TMP/tokio.out" 2>&1
srv=$D9_PID
d9_wait_port "$port" 30 "$srv"
d9s_load "http://127.0.0.1:$port/" 3

# Ground truth while it runs.
d9s_get "http://127.0.0.1:$port/tids" >"$D9_TMP/tids" || exit 1
d9_snapshot_threads "$srv" >"$D9_TMP/threads"
d9_log "$(tr '\n' ';' <"$D9_TMP/tids") threads: $(tr '\n' ' ' <"$D9_TMP/threads")"

kill -TERM "$srv"
d9s_stopped "$srv" 60 "tokio_http (after SIGTERM)" "$D9_TMP/tokio.out" "$trace"
d9_assert_threads_named "$D9_TMP/threads" "$D9_TMP/summary.json"

d9_py "$D9S_PY"'
tids = {l.split()[0]: [int(t) for t in l.split()[1:]] for l in open(sys.argv[1]) if l.strip()}
workers, blocking = tids.get("worker", []), tids.get("blocking", [])
threads = threads_of(sys.argv[2])
summary = json.load(open(sys.argv[3]))
s_of = by_tid(sys.argv[3])
sent, edges = wake_stats(sys.argv[4])
if len(workers) != 2 or not blocking or set(workers) & set(blocking):
    sys.exit("want 2 workers and some other blocking-pool threads, the service says %r" % tids)
for t in workers + blocking:
    if threads.get(t) != "tokio-runtime-w":
        errors.append("tid %d is %r in /proc, want tokio-runtime-w" % (t, threads.get(t)))
check_dropped(summary)
def show(t):
    s = s_of.get(t) or {}
    return "%d %s parks %r, wakes sent %r received %r" % (t, s.get("role"), s.get("parks_by_call"),
        {k[1]: v for k, v in sent.items() if k[0] == t}, s.get("wakes_received"))
for t in workers:
    print("worker  " + show(t))
for t in blocking:
    print("blocking " + show(t))
for t in workers:
    s = s_of.get(t)
    if parks(s, "futex") <= 0 or parks(s, "epoll_wait") <= 0:
        errors.append("worker %d: want futex and epoll_wait parks: %r" % (t, s and s["parks_by_call"]))
for t in blocking:
    s = s_of.get(t)
    if parks(s, "futex") <= 0 or parks(s, *EPOLL) != 0:
        errors.append("blocking thread %d: want futex parks and no epoll: %r" % (t, s and s["parks_by_call"]))
    if (s or {}).get("wakes_received", 0) <= 0:
        errors.append("blocking thread %d received no wakes" % t)
if not any(sent.get((t, "futex"), 0) for t in workers):
    errors.append("no worker sent a FUTEX_WAKE")
if not any(sent.get((t, "eventfd_write"), 0) for t in workers + blocking):
    errors.append("no mio waker (eventfd write) was recorded")
if edges is not None:
    if not any(woke(edges, t, "futex", workers + blocking) for t in workers + blocking):
        errors.append("no FUTEX_WAKE matched to a runtime thread")
    if not any(woke(edges, t, "eventfd_write", workers) for t in workers + blocking):
        errors.append("no eventfd_write matched to a worker parked in epoll")
print("wakee matching: %s" % ("checked" if edges is not None else "not in the decoder yet"))
# Both kinds carry one name: the decoder must tell them apart by behaviour.
for t in workers:
    expect("role of worker %d" % t, (s_of.get(t) or {}).get("role"), "worker")
for t in blocking:
    expect("role of blocking-pool thread %d" % t, (s_of.get(t) or {}).get("role"), "blocking_pool")
' "$D9_TMP/tids" "$D9_TMP/threads" "$D9_TMP/summary.json" "$D9_TMP/events.jsonl"
echo "ok"
