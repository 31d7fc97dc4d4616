#!/bin/bash
# Data reaches disk within 1 s with default settings: a program makes 1000
# wakes, then sleeps; 1 s after it reports the wakes it is killed with
# SIGKILL (no exit path runs). The open segment it leaves must hold every
# wake, and the decoder must read it.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/wakes_then"

out=$D9_TMP/out
d9_start_traced "$D9_TMP/t" "$D9_PROGS/wakes_then" 1000 sleep 30 >"$out"
for _ in $(seq 100); do grep -q '^wakes' "$out" && break; sleep 0.05; done
grep -q '^wakes 1000$' "$out" || d9_fail "program did not report its wakes: $(cat "$out")"
sleep 1
kill -KILL "$D9_PID"
d9_wait_exit "$D9_PID" 10

dir=$(d9_proc_dir "$D9_TMP/t" "$D9_PID") || exit 1
[ -n "$(find "$dir" -name '*.d9.open')" ] || d9_fail "expected the killed process's open segment in $dir"
# The open segment ends on a block boundary: nothing to report as damaged.
d9_decode_to "$D9_TMP/ev.json" events --json "$dir"
got=$(grep -c '"type":"wake"' "$D9_TMP/ev.json" || true)
[ "$got" -eq 1000 ] || d9_fail "on disk 1 s after the wakes: $got of 1000 wake events"
d9_log "all 1000 wakes were on disk 1 s later, read from the open segment of a SIGKILLed process"
