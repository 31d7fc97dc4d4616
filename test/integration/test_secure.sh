#!/bin/bash
# Secure execution (issue 4): in a process the kernel runs with AT_SECURE=1
# (here: an unprivileged user running a copy of a test program with a file
# capability), the agent is loaded but records nothing.
# The loader preloads only from system directories, and only setuid
# libraries, for such processes: the agent is copied to
# /usr/lib/x86_64-linux-gnu/libdial9-test.so with mode 4755 (removed on exit).
# Ground truth: /proc/PID/auxv (AT_SECURE), /proc/PID/maps (the agent is
# mapped); a control run of the same program without the capability records.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_PROGS/wakes_then"
[ "$(id -u)" -eq 0 ] || d9_skip "needs root (to set a file capability and install a setuid library)"
command -v setcap >/dev/null || d9_skip "setcap is missing (package libcap2-bin)"
command -v setpriv >/dev/null || d9_skip "setpriv is missing (package util-linux)"
id nobody >/dev/null 2>&1 || d9_skip "no user 'nobody' to run the program unprivileged"
LIBDIR=/usr/lib/x86_64-linux-gnu
[ -d "$LIBDIR" ] || d9_skip "$LIBDIR does not exist (not a Debian x86-64 layout)"
LIB=$LIBDIR/libdial9-test.so
[ ! -e "$LIB" ] || d9_skip "$LIB exists already (another run?); not touching it"
cleanup_secure() {
    rm -f "$LIB"
    d9_cleanup
}
trap cleanup_secure EXIT
install -m 4755 "$D9_AGENT" "$LIB" || d9_skip "cannot install $LIB"

# A world-reachable place for the unprivileged user; the trace dirs are
# theirs, so only the agent's own check can keep them empty.
chmod 711 "$D9_TMP"
sec=$D9_TMP/sec
mkdir -m 755 "$sec"
cp "$D9_PROGS/wakes_then" "$sec/capped"
cp "$D9_PROGS/wakes_then" "$sec/plain"
chmod 755 "$sec/capped" "$sec/plain"
setcap cap_net_bind_service+ep "$sec/capped" 2>"$D9_TMP/setcap.err" ||
    d9_skip "setcap failed here: $(cat "$D9_TMP/setcap.err")"
mkdir -m 755 "$sec/trace-capped" "$sec/trace-plain"
chown nobody "$sec/trace-capped" "$sec/trace-plain"

# auxv PID: the value of AT_SECURE (23).
at_secure() {
    python3 -c '
import struct, sys
a = open(f"/proc/{sys.argv[1]}/auxv", "rb").read()
for i in range(0, len(a) - 15, 16):
    k, v = struct.unpack("<QQ", a[i:i + 16])
    if k == 23:
        print(v)
' "$1"
}
# run NAME: starts $sec/NAME as nobody under the agent; sets pid.
run() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env LD_PRELOAD=libdial9-test.so DIAL9_DIR="$sec/trace-$1" DIAL9_QUIET=1 "$sec/$1" 5 sleep 3 \
        >"$D9_TMP/$1.out" 2>"$D9_TMP/$1.err" &
    pid=$!
    d9_track "$pid"
    local i
    for i in $(seq 100); do grep -q '^wakes' "$D9_TMP/$1.out" && return 0; sleep 0.05; done
    d9_fail "$1 did not start: $(cat "$D9_TMP/$1.out" "$D9_TMP/$1.err")"
}

# Control: the same program without the capability is traced.
run plain
[ "$(at_secure "$pid")" = 0 ] || d9_fail "control: AT_SECURE is not 0"
grep -q "$LIB" "/proc/$pid/maps" || d9_fail "control: the agent is not loaded"
d9_wait_exit "$pid" 30
[ "$D9_RC" -eq 0 ] || d9_fail "control exited $D9_RC: $(cat "$D9_TMP/plain.err")"
[ -n "$(find "$sec/trace-plain" -name '*.d9')" ] || d9_fail "control: nothing recorded, the test proves nothing"

run capped
secure=$(at_secure "$pid")
[ "$secure" = 1 ] || d9_skip "the capped program did not run with AT_SECURE=1 (AT_SECURE=$secure; file capabilities ignored here, e.g. a nosuid mount of $D9_TMP)"
grep -q "$LIB" "/proc/$pid/maps" || d9_fail "AT_SECURE program: the agent was not preloaded (maps: $(grep -c . "/proc/$pid/maps") lines)"
d9_wait_exit "$pid" 30
[ "$D9_RC" -eq 0 ] || d9_fail "AT_SECURE program exited $D9_RC: $(cat "$D9_TMP/capped.err")"
[ "$(cat "$D9_TMP/capped.out")" = "wakes 5" ] || d9_fail "AT_SECURE program output: $(cat "$D9_TMP/capped.out")"
[ -z "$(ls -A "$sec/trace-capped")" ] || d9_fail "the agent recorded in an AT_SECURE process: $(find "$sec/trace-capped")"
d9_log "secure execution: agent loaded with AT_SECURE=1 and recorded nothing (control recorded)"
