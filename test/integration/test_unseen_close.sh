#!/bin/bash
# test_unseen_close.sh - closes that no close() call of the program shows:
# close, close_range and dup2 through libc's syscall(), and the ones
# fclose, closedir and freopen make inside libc. The agent must forget the
# fd's kind, as it does for close(): else the next fd on that number
# inherits it.
# Ground truth: build/progs/unseen_close writes once to an eventfd number
# (a wake), closes it one of those ways, and writes three times to what
# takes the number (a memfd, or /dev/null: no wake), once per way; it
# prints each number. The trace must hold exactly one wake on each: 6 in
# all. (Before, the kind "eventfd" stayed and each later write was a wake:
# 24.)
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/unseen_close"

d9_run_traced "$D9_TMP/t" "$D9_PROGS/unseen_close" >"$D9_TMP/out" 2>&1 ||
    d9_fail "unseen_close failed under the agent: $(cat "$D9_TMP/out")"
d9_assert_check "$D9_TMP/t"
"$D9_DECODER" events --json "$D9_TMP/t" >"$D9_TMP/events.json"
lines=0
while read -r how _ fd _ want _; do
    lines=$((lines + 1))
    got=$(grep -c "\"type\":\"wake\",\"call\":\"eventfd_write\",\"target\":$fd," "$D9_TMP/events.json" || true)
    [ "$got" -eq "$want" ] ||
        d9_fail "$how: $got wakes on fd $fd in the trace, the program made $want (then a memfd or /dev/null took the number)"
done <"$D9_TMP/out"
[ "$lines" -eq 6 ] || d9_fail "unseen_close printed $lines lines, not 6: $(cat "$D9_TMP/out")"
all=$(grep -c '"type":"wake"' "$D9_TMP/events.json" || true)
[ "$all" -eq 6 ] || d9_fail "$all wakes in the trace, the program made 6"
echo "unseen closes (syscall() close, close_range and dup2, fclose, closedir, freopen): the number is forgotten, a later write there is no wake"
