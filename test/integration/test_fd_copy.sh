#!/bin/bash
# test_fd_copy.sh - a copy of an fd (dup, dup3, fcntl F_DUPFD_CLOEXEC) keeps
# what the agent knows of it: writes through a copy of an eventfd are WAKEs.
# Also when another thread closes the original right after the copy was
# made, before the hook goes on: what the copy inherits is read before the
# call (agent/fdtable.h, d9_fd_copy_read). test/preload/close_after_dup.so,
# after the agent in LD_PRELOAD, makes that close happen there every time.
# Ground truth: build/progs/dup_wake prints each copy's fd and its writes.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/dup_wake" "$D9_BUILD/preload/close_after_dup.so"

# check OUT TRACE STATE: every copy line in OUT says STATE, and the trace
# has exactly its wakes on its fd.
check() {
    local out=$1 trace=$2 state=$3 fd n st got lines=0
    while read -r _ fd _ n st; do
        lines=$((lines + 1))
        [ "$st" = "$state" ] || d9_fail "copy $fd: original $st, expected $state: $(cat "$out")"
        got=$("$D9_DECODER" events --json "$trace" 2>/dev/null |
            grep -c "\"type\":\"wake\",\"call\":\"eventfd_write\",\"target\":$fd," || true)
        [ "$got" -eq "$n" ] || d9_fail "copy $fd (original $st): $got wakes in the trace, the program wrote $n"
    done < <(grep '^copy ' "$out")
    [ "$lines" -eq 3 ] || d9_fail "dup_wake printed $lines copies, not 3: $(cat "$out")"
}

d9_run_traced "$D9_TMP/plain" "$D9_PROGS/dup_wake" >"$D9_TMP/plain.out" 2>&1 ||
    d9_fail "dup_wake failed under the agent: $(cat "$D9_TMP/plain.out")"
d9_assert_check "$D9_TMP/plain"
check "$D9_TMP/plain.out" "$D9_TMP/plain" open

timeout -k 5 60 env LD_PRELOAD="$D9_AGENT $D9_BUILD/preload/close_after_dup.so" DIAL9_DIR="$D9_TMP/race" \
    DIAL9_QUIET=1 "$D9_PROGS/dup_wake" >"$D9_TMP/race.out" 2>&1 ||
    d9_fail "dup_wake failed with the original closed after each copy: $(cat "$D9_TMP/race.out")"
check "$D9_TMP/race.out" "$D9_TMP/race" closed
d9_assert_check "$D9_TMP/race"
echo "fd copies: every write through a copy is a wake, also with the original closed right after the copy"
