#!/bin/bash
# test_unseen_close.sh - closes that no close() call of the program shows:
# close and close_range through libc's syscall(), and the ones fclose and
# closedir make inside libc. The agent must forget the fd's kind, as it
# does for close(): else the next fd on that number inherits it.
# Ground truth: build/progs/unseen_close writes once to an eventfd number
# (a wake), closes it one of those ways, and writes three times to the
# memfd that takes the number (no wake), once per way; it prints each
# number. The trace must hold exactly one wake on each: 4 in all. (Before,
# the kind "eventfd" stayed and each memfd write was a wake: 16.)
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
        d9_fail "$how: $got wakes on fd $fd in the trace, the program made $want (then a memfd took the number)"
done <"$D9_TMP/out"
[ "$lines" -eq 4 ] || d9_fail "unseen_close printed $lines lines, not 4: $(cat "$D9_TMP/out")"
all=$(grep -c '"type":"wake"' "$D9_TMP/events.json" || true)
[ "$all" -eq 4 ] || d9_fail "$all wakes in the trace, the program made 4"
echo "unseen closes (syscall() close and close_range, fclose, closedir): the number is forgotten, a memfd write there is no wake"
