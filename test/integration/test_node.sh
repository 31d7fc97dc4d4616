#!/bin/bash
# test_node.sh - node (libuv statically linked) serving fs.readFile per
# request under bounded wrk load. Run twice: killed by SIGTERM without a
# handler (node then dies without running destructors: nothing written
# before the last flush may be lost, and the trace must still decode), and
# with process.on('SIGTERM', () => process.exit(0)) (everything sealed).
# Both: the main thread parks in epoll (node 20's static libuv: epoll_pwait)
# with zero-timeout polls counted;
# the libuv threadpool threads (those that appear with the first request:
# node names no threads) park in cond_wait and are woken by the main thread's
# cond_signal; their uv_async_send eventfd writes wake the main thread.
# Then WebAssembly traps the script catches: no crash dump (crash.c).
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/integration/lib_services.sh
. "$(dirname "$0")/lib_services.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
d9s_need node "nodejs"
d9s_need wrk "load generator"

# A small file: the requests stay cheap, the threadpool busy.
head -c 4096 /dev/urandom >"$D9_TMP/file.bin"

# run MODE: one run; MODE is "killed" or "exit-on-term".
run() {
    local mode=$1 port trace=$D9_TMP/trace.$1 node dir
    port=$(d9_free_port) || exit 1
    # Two pool threads (instead of 4) keep each of them busy. The main
    # thread records ~50k events/s under this load: 16x the default buffer
    # so that a starved writer thread (2 busy cores) does not drop events.
    UV_THREADPOOL_SIZE=2 DIAL9_BUFFER_EVENTS=65536 d9_start_traced "$trace" node "$D9S_SERVICES/node_http.js" "$port" \
        "$D9_TMP/file.bin" "$([ "$mode" = killed ] || echo exit-on-term)" >"$D9_TMP/node.out" 2>&1
    node=$D9_PID
    d9_wait_port "$port" 30 "$node"
    # Ground truth: the threads before any request; libuv starts its
    # threadpool on the first fs request, so the pool is what comes after.
    d9_snapshot_threads "$node" >"$D9_TMP/before"
    d9s_load "http://127.0.0.1:$port/" 3
    d9_snapshot_threads "$node" >"$D9_TMP/threads"
    d9_log "$mode: threads before load: $(tr '\n' ' ' <"$D9_TMP/before"); after: $(tr '\n' ' ' <"$D9_TMP/threads")"

    dir=$(d9_proc_dir "$trace" "$node") || exit 1
    local killed_extra=()
    if [ "$mode" = killed ]; then
        killed_extra=("$D9_TMP/before-kill.jsonl")
        # What is on disk 1 s (4 flush periods) after the load: none of it
        # may be missing after the kill. (The live segment may end inside a
        # block being written: the decoder's exit status does not count.)
        sleep 1
        "$D9_DECODER" events --json "$dir" >"$D9_TMP/before-kill.jsonl" 2>/dev/null
    fi
    kill -TERM "$node"
    d9_wait_exit "$node" 30
    if [ "$mode" = killed ]; then
        [ "$D9_RC" -eq 143 ] || d9_fail "node exited $D9_RC on SIGTERM without a handler, want 143 (killed)"
        d9s_assert_check_killed "$dir"
    else
        [ "$D9_RC" -eq 0 ] || d9_fail "node exited $D9_RC on SIGTERM with process.exit(0): $(cat "$D9_TMP/node.out")"
        d9_assert_sealed "$dir"
        d9_assert_check "$dir"
    fi
    d9s_decode_all "$dir"
    d9_assert_threads_named "$D9_TMP/threads" "$D9_TMP/summary.json"

    d9_py "$D9S_PY"'
pid = int(sys.argv[1])
pool = sorted(set(threads_of(sys.argv[3])) - set(threads_of(sys.argv[2])))
summary = json.load(open(sys.argv[4]))
s_of = by_tid(sys.argv[4])
sent, edges = wake_stats(sys.argv[5])
main = s_of.get(pid)
check_dropped(summary)
if parks(main, *EPOLL) <= 0:
    errors.append("the main thread never parked in epoll: %r" % (main and main["parks_by_call"]))
if (main or {}).get("nowait_polls", 0) <= 0:
    errors.append("no zero-timeout polls counted on the main thread")
if (main or {}).get("wakes_received", 0) <= 0:
    errors.append("the main thread received no wakes")
if len(pool) != 2:
    errors.append("UV_THREADPOOL_SIZE=2, but %d threads appeared under load: %r" % (len(pool), pool))
for t in pool:
    s = s_of.get(t)
    if parks(s, "cond_wait") <= 0 or (s or {}).get("wakes_received", 0) <= 0:
        errors.append("pool thread %d: want cond_wait parks and wakes received: %r" % (t, s))
if not any(sent.get((t, "eventfd_write"), 0) > 0 for t in pool):
    errors.append("no pool thread wrote an eventfd (uv_async_send)")
if woke(edges, pid, "cond_signal", pool) is False:
    errors.append("no cond_signal of the main thread matched to a pool thread")
if edges is not None and not any(woke(edges, t, "eventfd_write", [pid]) for t in pool):
    errors.append("no eventfd_write of a pool thread matched to the main thread")
print("main: %d events, parks %r, %d nowait polls, %d wakes received; pool %r: cond_wait parks %r, eventfd writes %r; wakee %s" % (
    (main or {}).get("events", 0), (main or {}).get("parks_by_call"), (main or {}).get("nowait_polls", 0), (main or {}).get("wakes_received", 0), pool,
    [parks(s_of.get(t), "cond_wait") for t in pool], [sent.get((t, "eventfd_write"), 0) for t in pool],
    "checked" if edges is not None else "not in the decoder yet"))
if len(sys.argv) > 6:
    # Events are keyed without the fields the decoder derives by matching.
    key = lambda e: (e["ts"], e["tid"], e["type"], e.get("call"), e.get("target"))
    before = {key(json.loads(l)) for l in open(sys.argv[6]) if l.strip()}
    after = {key(json.loads(l)) for l in open(sys.argv[5]) if l.strip()}
    if not before:
        errors.append("nothing was on disk 1 s after the load")
    lost = before - after
    if lost:
        errors.append("%d of %d events on disk before the kill are gone after it, e.g. %r" % (len(lost), len(before), sorted(lost)[:3]))
    print("killed: all %d events on disk before the kill are in the final trace (%d)" % (len(before), len(after)))
' "$node" "$D9_TMP/before" "$D9_TMP/threads" "$D9_TMP/summary.json" "$D9_TMP/events.jsonl" \
        "${killed_extra[@]}"
}

run killed
run exit-on-term

# WebAssembly bounds checks: each load out of bounds is a SIGSEGV that node's
# handler (V8's trap handler) turns into an exception the script catches.
# Those faults are no crash: the script prints what it prints without the
# agent, and no crash.d9 is written. strace counts the faults (ground truth:
# the test would pass vacuously if V8 checked bounds in code instead).
command -v strace >/dev/null || d9_fail "strace is not installed (scripts/install-deps.sh test)"
faults=$(strace -f -qq -e trace=none -e signal=SIGSEGV node "$D9S_SERVICES/node_wasm_trap.js" 20 2>&1 >/dev/null |
    grep -c -- '--- SIGSEGV' || true)
[ "$faults" -eq 20 ] || d9_fail "node_wasm_trap.js: $faults SIGSEGVs without the agent, not 20 (no trap handler?)"
want=$(node "$D9S_SERVICES/node_wasm_trap.js" 20)
got=$(d9_run_traced "$D9_TMP/wasm" node "$D9S_SERVICES/node_wasm_trap.js" 20) || d9_fail "node_wasm_trap.js under the agent exited $?: $got"
[ "$got" = "$want" ] || d9_fail "node_wasm_trap.js: '$got' under the agent, '$want' without it"
[ -z "$(find "$D9_TMP/wasm" -name 'crash.d9*')" ] || d9_fail "wasm traps the script caught wrote a crash dump: $(find "$D9_TMP/wasm")"
d9_assert_check "$D9_TMP/wasm"
d9_log "wasm: $faults caught SIGSEGVs ($want), no crash dump"
echo "ok"
