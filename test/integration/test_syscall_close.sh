#!/bin/bash
# test_syscall_close.sh - close and close_range made through libc's
# syscall() are seen as glibc's close() and close_range() are (the fd kind
# table forgets the number; the agent's own fds pass the close gate).
# Ground truth: build/progs/syscall_close writes once to an eventfd (a
# wake), closes it through syscall(), and writes three times to the memfd
# that takes its number, once per call; it prints each number. The trace
# must hold exactly one wake on each number: a memfd write is no wake.
# (Before, the table kept "eventfd" and each memfd write was a wake.)
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/syscall_close"

d9_run_traced "$D9_TMP/t" "$D9_PROGS/syscall_close" >"$D9_TMP/out" 2>&1 ||
    d9_fail "syscall_close failed under the agent: $(cat "$D9_TMP/out")"
d9_assert_check "$D9_TMP/t"
lines=0
while read -r _ fd _ want _ _ _ _; do
    lines=$((lines + 1))
    got=$("$D9_DECODER" events --json "$D9_TMP/t" | grep -c "\"type\":\"wake\",\"call\":\"eventfd_write\",\"target\":$fd," || true)
    [ "$got" -eq "$want" ] || d9_fail "fd $fd: $got wakes in the trace, the program made $want (then closed it through syscall() and wrote to a memfd there)"
done <"$D9_TMP/out"
[ "$lines" -eq 2 ] || d9_fail "syscall_close printed $lines lines, not 2: $(cat "$D9_TMP/out")"
all=$("$D9_DECODER" events --json "$D9_TMP/t" | grep -c '"type":"wake"' || true)
[ "$all" -eq 2 ] || d9_fail "$all wakes in the trace, the program made 2"
echo "syscall() close and close_range: the number is forgotten, a memfd write there is no wake"
