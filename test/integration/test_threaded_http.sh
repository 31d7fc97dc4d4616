#!/bin/bash
# test_threaded_http.sh - a thread-per-connection server that nobody
# rebuilt: Python's http.server.ThreadingHTTPServer (Debian's python3),
# whose connection threads block in recv on blocking sockets. The client
# (here, not traced) opens CONNS keep-alive connections one after another
# and sends REQS requests on each, THINK_MS apart, then closes it. The
# server prints which thread served which connection (its fd) and how
# many requests. Asserts, for each connection thread: one recv park per
# request plus one for the close (recv returns 0), all on the
# connection's fd; the median park for a request lasted at least half the
# client's think time (the thread was waiting, not busy); the summary calls the
# thread a worker and shows it mostly parked. The main thread parks in
# poll, which finds the listener ready once per connection it accepted (it
# counts them), and its accepts, each right after such a poll, are timed,
# not bracketed as parks.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/integration/lib_services.sh
. "$(dirname "$0")/lib_services.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
py=/usr/bin/python3
[ -x "$py" ] || d9_skip "no $py (python3; scripts/install-deps.sh test)"
CONNS=3 REQS=8 THINK_MS=20

port=$(d9_free_port) || exit 1
trace=$D9_TMP/trace
# A timed call (the accept after a poll, below) parks only if it takes 60 s.
DIAL9_SLOW_SYSCALL_US=60000000 d9_start_traced "$trace" "$py" "$D9S_SERVICES/threaded_http.py" "$port" \
    >"$D9_TMP/truth.json" 2>"$D9_TMP/server.err"
srv=$D9_PID
d9_wait_port "$port" 30 "$srv"
timeout -k 5 60 python3 - "$port" "$CONNS" "$REQS" "$THINK_MS" <<'PY' || d9_fail "the client failed"
import socket, sys, time
port, conns, reqs, think = (int(a) for a in sys.argv[1:])
def ask(s, f, path):
    s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    length = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    assert f.read(length) == b"hello\n"
for c in range(conns + 1):  # the last connection asks the server to stop
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    for r in range(reqs if c < conns else 1):
        time.sleep(think / 1000)
        ask(s, f, b"/" if c < conns else b"/quit")
    f.close()
    s.close()
PY
d9s_stopped "$srv" 30 threaded_http.py "$D9_TMP/server.err" "$trace"
d9_log "ground truth: $(cat "$D9_TMP/truth.json")"

d9_py "$D9S_PY"'
truth = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
events = jsonl(sys.argv[3])
conns, reqs, think_ns = (int(a) for a in sys.argv[4:7])
think_ns *= 1000000
s_of = by_tid(sys.argv[2])
check_dropped(summary)
served = {int(t): e for t, e in truth["served"].items() if not e["quit"]}
expect("connection threads", len(served), conns)
open_park, waits = {}, {}  # waits[tid] = [(call, fd, result, ns)] in order
for e in events:
    if e["type"] == "park":
        open_park[e["tid"]] = e
    elif e["type"] == "unpark" and e["tid"] in open_park:
        p = open_park.pop(e["tid"])
        waits.setdefault(e["tid"], []).append((p["call"], p["target"], e["result"], e["ts"] - p["ts"]))
for tid, t in sorted(served.items()):
    label = "connection thread %d" % tid
    expect(label + " requests served", t["requests"], reqs)
    recvs = [w for w in waits.get(tid, []) if w[0] == "recv"]
    expect(label + " recv parks (a request each, then the close)", len(recvs), reqs + 1)
    expect(label + " recv park fds", {w[1] for w in recvs}, {t["fd"]})
    expect(label + " last recv result (the client closed)", [w[2] for w in recvs[-1:]], [0])
    # The client sleeps the think time before each request; the thread may
    # reach its recv late on a loaded machine, so only most waits must last
    # half of it.
    waited = sorted(w[3] for w in recvs[:-1])
    if not waited or waited[len(waited) // 2] < think_ns / 2:
        errors.append("%s: median request wait under half the think time: %r ns" % (label, waited))
    s = s_of.get(tid)
    if s is None:
        errors.append(label + " missing from the summary")
        continue
    expect(label + " role", s["role"], "worker")
    if s["busy_pct"] >= 50:
        errors.append("%s shows %.1f%% busy while it waited for requests" % (label, s["busy_pct"]))
    ms = [w[3] / 1e6 for w in recvs[:-1]] or [float("nan")]
    print("%s: %d requests, parks %r, busy %.1f%%, request waits %.1f..%.1f ms" % (
        label, t["requests"], s["parks_by_call"], s["busy_pct"], min(ms), max(ms)))
main = s_of.get(truth["main_tid"])
# serve_forever polls the listener, then accepts: its wait is the poll, and
# the accept just after a poll that found the listener ready is no park. It
# is timed instead, a park only when it took DIAL9_SLOW_SYSCALL_US or more:
# set to its maximum (60 s) above, so that a preemption on a loaded machine
# cannot make one; bracketed, every accept would park.
ready = [w for w in waits.get(truth["main_tid"], []) if w[0] == "poll" and w[2] > 0]
expect("main thread polls that found a connection (one a connection accepted)", len(ready), truth["accepted"])
expect("main thread accept parks (each right after its poll)", parks(main, "accept", "accept4"), 0)
if truth["accepted"] < conns + 1:
    errors.append("the server accepted %d connections, the client made %d" % (truth["accepted"], conns + 1))
' "$D9_TMP/truth.json" "$D9_TMP/summary.json" "$D9_TMP/events.jsonl" "$CONNS" "$REQS" "$THINK_MS"
echo "ok"
