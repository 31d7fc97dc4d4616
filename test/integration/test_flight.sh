#!/bin/bash
# DIAL9_MODE=flight (docs/FLIGHT.md): nothing on disk before a trigger; the
# dump signal, dial9_dump() and a slow-syscall anomaly each write a sealed
# segment with the history; dumps are rate-limited; DIAL9_FLIGHT_MAX_BYTES
# bounds a dump; the program's own SIGUSR2 handler installed after the
# agent still runs and the signal still dumps; a signal a thread sends
# within the process (pthread_kill) is the program's, not a dump request.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/wakes_then" "$D9_PROGS/flight_dump" "$D9_PROGS/self_signal"
export DIAL9_MODE=flight
wakes() { "$D9_DECODER" events --json "$1" | grep -c '"type":"wake"' || true; }

# 1. The dump signal: nothing on disk before it, every wake after it.
out=$D9_TMP/out
d9_start_traced "$D9_TMP/sig" "$D9_PROGS/wakes_then" 700 sleep 30 >"$out"
for _ in $(seq 100); do grep -q '^wakes' "$out" && break; sleep 0.05; done
sleep 0.6 # more than DIAL9_FLUSH_MS: the writer has drained the wakes into memory
dir=$(d9_proc_dir "$D9_TMP/sig" "$D9_PID" 2>/dev/null) && [ -n "$(find "$dir" -name '*.d9*')" ] &&
    d9_fail "flight mode wrote before a trigger: $(ls "$dir")"
kill -USR2 "$D9_PID"
for _ in $(seq 100); do [ -n "$(find "$D9_TMP/sig" -name '*.d9' 2>/dev/null)" ] && break; sleep 0.05; done
dir=$(d9_proc_dir "$D9_TMP/sig" "$D9_PID") || exit 1
d9_assert_sealed "$dir"
d9_assert_check "$dir"
got=$(wakes "$dir")
[ "$got" -ge 700 ] || d9_fail "signal dump holds $got of 700 wakes" # + any the runtime made
# The dump says why it was written (D9_TLV_DUMP_REASON): "signal 12" for SIGUSR2.
"$D9_DECODER" check "$dir" | grep -qx '  dump reason: signal 12' ||
    d9_fail "signal dump lacks its reason: $("$D9_DECODER" check "$dir")"
# The signal interrupts its nanosleep (EINTR, as with any handler): it may have ended.
kill -TERM "$D9_PID" 2>/dev/null
d9_wait_exit "$D9_PID" 10

# 2. dial9_dump(reason) through the C ABI; the second call at once is rate-limited (EBUSY=16).
d9_run_traced "$D9_TMP/api" "$D9_PROGS/flight_dump" api 300 my-reason >"$out" 2>"$D9_TMP/err" ||
    d9_fail "flight_dump api failed: $(cat "$out" "$D9_TMP/err")"
grep -q '^dump1 0 0$' "$out" || d9_fail "dial9_dump did not succeed: $(cat "$out")"
grep -q '^dump2 -1 16$' "$out" || d9_fail "second dump was not rate-limited (EBUSY): $(cat "$out")"
[ "$(find "$D9_TMP/api" -name '*.d9' | wc -l)" -eq 1 ] || d9_fail "expected one dump: $(find "$D9_TMP/api")"
d9_assert_check "$D9_TMP/api"
got=$(wakes "$D9_TMP/api")
[ "$got" -eq 300 ] || d9_fail "api dump holds $got of 300 wakes"
"$D9_DECODER" check "$D9_TMP/api" | grep -qx '  dump reason: my-reason' ||
    d9_fail "api dump lacks its reason: $("$D9_DECODER" check "$D9_TMP/api")"
"$D9_DECODER" summary --json "$D9_TMP/api" >"$D9_TMP/sum.json" || d9_fail "summary --json failed"
reasons=$(d9_json "$D9_TMP/sum.json" '",".join(d["reason"] for p in j["processes"] for d in p["dumps"])')
[ "$reasons" = my-reason ] || d9_fail "summary --json dumps: '$reasons', expected my-reason"

# 3. A slow-syscall anomaly (mmap MAP_POPULATE of 128 MiB takes well over 1 ms).
DIAL9_TRIGGER_SLOW_SYSCALL_MS=1 d9_run_traced "$D9_TMP/slow" "$D9_PROGS/flight_dump" slow 1 \
    >"$out" 2>"$D9_TMP/err" || d9_fail "flight_dump slow failed"
[ -n "$(find "$D9_TMP/slow" -name '*.d9')" ] || d9_fail "no anomaly dump"
"$D9_DECODER" events --json "$D9_TMP/slow" | grep -q '"type":"slow_syscall"' || d9_fail "anomaly dump lacks the slow syscall"

# 4. DIAL9_FLIGHT_MAX_BYTES: a dump of 3 s of busy recording fits the limit.
DIAL9_FLIGHT_MAX_BYTES=1M DIAL9_FLUSH_MS=10 d9_run_traced "$D9_TMP/max" "$D9_PROGS/flight_dump" bulk 3 >"$out" ||
    d9_fail "flight_dump bulk failed"
grep -q '^dump 0 0$' "$out" || d9_fail "bulk dump failed: $(cat "$out")"
d9_assert_check "$D9_TMP/max"
size=$(find "$D9_TMP/max" -name '*.d9' -printf '%s\n' | awk '{s += $1} END {print s}')
# Blocks <= 1 MiB, plus the header (a few KiB).
[ "$size" -le $((1048576 + 65536)) ] || d9_fail "dump of $size bytes exceeds DIAL9_FLIGHT_MAX_BYTES=1M"
# 5. A SIGUSR2 handler the program installs after the agent (sigchain.h):
# the dump signal both dumps and runs it once, and sigaction() reports the
# program's handler, as without the agent.
"$D9_PROGS/flight_dump" handler 10 >"$D9_TMP/plain" &
pid=$!
for _ in $(seq 100); do grep -q '^ready' "$D9_TMP/plain" && break; sleep 0.05; done
kill -USR2 "$pid"
wait "$pid" || d9_fail "flight_dump handler without the agent failed"
grep -q '^count 1$' "$D9_TMP/plain" && grep -q '^old ok$' "$D9_TMP/plain" ||
    d9_fail "flight_dump handler without the agent: $(cat "$D9_TMP/plain")"
d9_start_traced "$D9_TMP/usr2" "$D9_PROGS/flight_dump" handler 250 >"$out"
for _ in $(seq 100); do grep -q '^ready' "$out" && break; sleep 0.05; done
sleep 0.6 # the writer has drained the wakes into memory
kill -USR2 "$D9_PID"
d9_wait_exit "$D9_PID" 15
[ "$D9_RC" -eq 0 ] || d9_fail "flight_dump handler under the agent exited $D9_RC: $(cat "$out")"
grep -q '^old ok$' "$out" || d9_fail "sigaction did not return the program's SIGUSR2 handler: $(cat "$out")"
grep -q '^count 1$' "$out" || d9_fail "program's SIGUSR2 handler did not run once: $(cat "$out")"
d9_assert_check "$D9_TMP/usr2"
got=$(wakes "$D9_TMP/usr2")
[ "$got" -ge 250 ] || d9_fail "SIGUSR2 dump with a program handler holds $got of 250 wakes"

# The program's own use of SIGUSR2 (pthread_kill to its own threads, as
# HotSpot suspends them) asks for no dump; kill(2) to itself does. In
# continuous mode each dump request logs one "dial9: dump" line.
out=$(DIAL9_MODE=continuous DIAL9_DUMP_MIN_INTERVAL_MS=0 d9_run_traced "$D9_TMP/self" env DIAL9_QUIET=0 \
    "$D9_PROGS/self_signal" 2>"$D9_TMP/self.err") || d9_fail "self_signal failed: $(cat "$D9_TMP/self.err")"
[ "$out" = "self_signal: handled 4" ] || d9_fail "self_signal: the program's handler: $out"
n=$(grep -c '^dial9: dump (signal 12)' "$D9_TMP/self.err" || true)
[ "$n" -eq 1 ] || d9_fail "self_signal: $n dump requests, want 1 (the kill(2) only): $(cat "$D9_TMP/self.err")"

d9_log "flight mode: signal, dial9_dump, rate limit, slow-syscall trigger and MaxBytes ($size bytes) OK; a thread's own SIGUSR2 is no dump request"
