#!/bin/bash
# test_exit_paths.sh - exits that skip the agent's destructor (docs/FLIGHT.md
# "What is lost on each exit path": at most DIAL9_FLUSH_MS of events).
# build/progs/wakes_then makes N wake events, then, with no event after them,
# waits longer than DIAL9_FLUSH_MS and ends by _exit(0), or is killed by a
# SIGTERM it has no handler for. Since the last event is more than a flush
# period old, the writer has written the block holding it completely and is
# idle at the exit, so nothing may be lost and no block may be cut:
# - the segment stays NNNNNN.d9.open (the destructor did not seal it);
# - `dial9-decode check` exits 0 and says OK (a cut block would make it exit
#   1 with "block truncated" / "block header truncated");
# - the events are exactly the main thread's thread_start and the N wakes,
#   plus only thread_name, slow_syscall (the stdout write may be slow) and
#   preempt (the writer's perf context-switch records, when available).
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/wakes_then"
export DIAL9_FLUSH_MS=100
# The wakes come in a few ms, faster than any writer drains, and none may be
# dropped: the ring must hold them all (the default, 4096 entries, does not).
export DIAL9_BUFFER_EVENTS=16384
n=5000

# assert_all NAME PID: the trace of PID in $D9_TMP/NAME holds every event.
assert_all() {
    local dir
    dir=$(d9_proc_dir "$D9_TMP/$1" "$2") || exit 1
    [ "$(cd "$dir" && ls)" = 000000.d9.open ] || d9_fail "$1: want only 000000.d9.open, have: $(ls "$dir")"
    local out rc=0
    out=$("$D9_DECODER" check "$dir" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || d9_fail "$1: check exited $rc (a block was cut?): $out"
    grep -q '^OK .*000000\.d9\.open' <<<"$out" || d9_fail "$1: check does not say OK: $out"
    if grep -qi truncated <<<"$out"; then d9_fail "$1: check reports truncation: $out"; fi
    d9_decode_to "$D9_TMP/$1.jsonl" events --json "$dir"
    d9_py '
import collections
evs = jsonl(sys.argv[1])
n, pid = int(sys.argv[2]), int(sys.argv[3])
types = collections.Counter(e["type"] for e in evs)
expect("wake events", types.pop("wake", 0), n)
expect("thread_start events", types.pop("thread_start", 0), 1)
types.pop("thread_name", None)
types.pop("slow_syscall", None)
types.pop("preempt", None)
expect("other events", dict(types), {})
expect("threads", sorted({e["tid"] for e in evs}), [pid])
' "$D9_TMP/$1.jsonl" "$n" "$2"
    d9_log "$1: $n wakes, check: $out"
}

# 1. _exit(0) 600 ms (6 flush periods) after the last event.
d9_start_traced "$D9_TMP/exit" "$D9_PROGS/wakes_then" $n exit 600 >"$D9_TMP/exit.out" 2>"$D9_TMP/exit.err"
pid=$D9_PID
d9_wait_exit "$pid" 60
[ "$D9_RC" -eq 0 ] || d9_fail "_exit path: exit status $D9_RC: $(cat "$D9_TMP/exit.err")"
grep -qx "wakes $n" "$D9_TMP/exit.out" || d9_fail "_exit path: $(cat "$D9_TMP/exit.out")"
assert_all exit "$pid"

# 2. SIGTERM, no handler, 600 ms after the "wakes" line (the last event is before it).
d9_start_traced "$D9_TMP/term" "$D9_PROGS/wakes_then" $n term >"$D9_TMP/term.out" 2>"$D9_TMP/term.err"
pid=$D9_PID
for _ in $(seq 200); do grep -q '^wakes' "$D9_TMP/term.out" && break; sleep 0.05; done
grep -qx "wakes $n" "$D9_TMP/term.out" || d9_fail "SIGTERM path: $(cat "$D9_TMP/term.out" "$D9_TMP/term.err")"
sleep 0.6
kill -TERM "$pid"
d9_wait_exit "$pid" 30
[ "$D9_RC" -eq 143 ] || d9_fail "SIGTERM path: exit status $D9_RC, want 143 (killed by SIGTERM)"
assert_all term "$pid"
