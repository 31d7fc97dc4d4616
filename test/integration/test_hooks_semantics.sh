#!/bin/bash
# test_hooks_semantics.sh - build/progs/hooks_semantics checks that every
# interposed call returns and sets errno as libc does. It must pass plain
# (the checks are right) and under the agent (the hooks are transparent),
# running the same number of checks both times; and with the agent loaded
# but off (DIAL9_ENABLED=0: the hooks only forward, fd table untouched).
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/hooks_semantics"

count() { sed -n 's/^hooks_semantics: \([0-9]*\) checks, 0 failed$/\1/p' "$1"; }

"$D9_PROGS/hooks_semantics" >"$D9_TMP/plain.out" 2>"$D9_TMP/plain.err" ||
    d9_fail "fails without the agent: $(cat "$D9_TMP/plain.out" "$D9_TMP/plain.err")"
d9_run_traced "$D9_TMP/trace" "$D9_PROGS/hooks_semantics" >"$D9_TMP/agent.out" 2>"$D9_TMP/agent.err" ||
    d9_fail "fails under the agent: $(cat "$D9_TMP/agent.out" "$D9_TMP/agent.err")"
LD_PRELOAD="$D9_AGENT" DIAL9_ENABLED=0 "$D9_PROGS/hooks_semantics" >"$D9_TMP/off.out" 2>"$D9_TMP/off.err" ||
    d9_fail "fails with the agent off: $(cat "$D9_TMP/off.out" "$D9_TMP/off.err")"
plain=$(count "$D9_TMP/plain.out")
traced=$(count "$D9_TMP/agent.out")
off=$(count "$D9_TMP/off.out")
[ -n "$plain" ] && [ "$plain" -gt 0 ] || d9_fail "no check count in: $(cat "$D9_TMP/plain.out")"
[ "$plain" = "$traced" ] || d9_fail "$plain checks plain, ${traced:-none} under the agent"
[ "$plain" = "$off" ] || d9_fail "$plain checks plain, ${off:-none} with the agent off"

# What it recorded meanwhile is a sound trace.
for dir in "$D9_TMP"/trace/*; do
    d9_assert_sealed "$dir"
    d9_assert_check "$dir"
done
[ -d "$dir" ] || d9_fail "nothing recorded"
echo "$plain checks pass without the agent, under it, and with it off"
echo "ok"
