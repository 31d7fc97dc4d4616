#!/bin/bash
# test_idle_writer.sh - the writer of a process that records nothing sleeps
# (agent/writer.c, idle_sleep): after two quiet cycles it wakes once per
# idle sleep (8 periods, at most 2 s) instead of once a period. The first
# long park to end after the quiet spell rings the doorbell, and the writer
# goes back to its period: the wakes made before that park reach the file
# within a few periods, not at the end of the idle sleep.
# build/progs/quiet_then stays quiet for 3.2 s, then makes N wakes and ends
# a 30 ms nanosleep. With DIAL9_FLUSH_MS=250 the writer goes idle at about
# 0.75 s and, without the doorbell, would next wake at about 2.75 and 4.75 s.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/quiet_then"
# The doorbell is the schedstat read at the end of a long park.
[ -r /proc/self/schedstat ] || d9_skip "no /proc/self/schedstat on this kernel: no doorbell"
export DIAL9_FLUSH_MS=250
n=300
out=$D9_TMP/out

# wait_line TEXT SECONDS: until the program's output has a line starting with TEXT.
wait_line() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do grep -q "^$1" "$out" && return 0; sleep 0.05; done
    d9_fail "no '$1' line from quiet_then in $2 s: $(cat "$out")"
}
# writer_wakes: the dial9-writer thread's voluntary context switches (one
# per sleep it woke from: /proc/PID/task/TID/status).
writer_wakes() {
    local t
    for t in /proc/"$D9_PID"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = dial9-writer ] || continue
        awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status"
        return 0
    done
    d9_fail "no dial9-writer thread in pid $D9_PID"
}
# wakes_on_disk: wake events the process's trace files hold so far (the
# open segment may end in a block being written: its damage is not counted).
wakes_on_disk() {
    local dir
    dir=$(d9_proc_dir "$D9_TMP/t" "$D9_PID" 2>/dev/null) || { echo 0; return; }
    "$D9_DECODER" events --json "$dir" 2>/dev/null | grep -c '"type":"wake"' || true
}

d9_start_traced "$D9_TMP/t" "$D9_PROGS/quiet_then" 3200 "$n" >"$out"
wait_line quiet 10
sleep 1.0
w0=$(writer_wakes)
sleep 1.6
w1=$(writer_wakes)
# Every period, 1.6 s is 6 wake-ups; idle, at most the one at about 2.75 s
# (one more for a late start).
[ $((w1 - w0)) -le 2 ] || d9_fail "the idle writer woke $((w1 - w0)) times in 1.6 s (DIAL9_FLUSH_MS=250)"
[ "$(wakes_on_disk)" -eq 0 ] || d9_fail "wake events on disk before the burst"

wait_line wakes 10
# Doorbell at about 3.23 s, block written one period later; the idle
# sleep would end at about 4.75 s.
got=0
for ((i = 0; i < 20; i++)); do
    got=$(wakes_on_disk)
    [ "$got" -ge "$n" ] && break
    sleep 0.05
done
[ "$got" -eq "$n" ] || d9_fail "$got of $n wakes on disk 1 s after the park that rings the doorbell"
d9_log "idle writer: $((w1 - w0)) wake-ups in 1.6 s quiet; $n wakes on disk after the doorbell"
