#!/bin/bash
# test_hooks_semantics.sh - build/progs/hooks_semantics checks that every
# interposed call returns and sets errno as libc does; cancel_park, that
# pthread_cancel of a thread in an epoll wait acts as with libc alone
# (the agent makes those waits itself: agent/direct.h). Each must pass
# plain (the checks are right) and under the agent (the hooks are
# transparent), running the same number of checks both times; and with the
# agent loaded but off (DIAL9_ENABLED=0: the hooks only forward, fd table
# untouched), and under the agent without crash dumps (DIAL9_CRASH_DUMP=0)
# or with SIGSEGV and SIGBUS ignored (agent/safe_load.h). rt_sigaction: a SCHED_FIFO thread's sigaction must not wait
# for a thread of lower priority, preempted on its CPU inside the agent's
# sigaction interposer (a spinning lock made it wait until the kernel's
# real-time throttling: most of a second). rt_cancel: joining a real-time
# thread cancelled in an epoll wait by a thread of lower priority on its
# CPU must not wait on the canceller (its exit spun until that throttling).
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/hooks_semantics" "$D9_PROGS/cancel_park" "$D9_PROGS/rt_sigaction" "$D9_PROGS/rt_cancel"

for prog in hooks_semantics cancel_park; do
    count() { sed -n "s/^$prog: \([0-9]*\) checks, 0 failed\$/\1/p" "$1"; }
    out="$D9_TMP/$prog"
    "$D9_PROGS/$prog" >"$out.plain.out" 2>"$out.plain.err" ||
        d9_fail "$prog fails without the agent: $(cat "$out.plain.out" "$out.plain.err")"
    d9_run_traced "$D9_TMP/trace.$prog" "$D9_PROGS/$prog" >"$out.agent.out" 2>"$out.agent.err" ||
        d9_fail "$prog fails under the agent: $(cat "$out.agent.out" "$out.agent.err")"
    LD_PRELOAD="$D9_AGENT" DIAL9_ENABLED=0 "$D9_PROGS/$prog" >"$out.off.out" 2>"$out.off.err" ||
        d9_fail "$prog fails with the agent off: $(cat "$out.off.out" "$out.off.err")"
    # Without crash dumps the agent still catches a fault of its own reads of
    # timeouts the kernel refuses (test_unmapped_timeouts, agent/safe_load.h).
    DIAL9_CRASH_DUMP=0 d9_run_traced "$D9_TMP/trace.$prog.nodump" "$D9_PROGS/$prog" >"$out.nodump.out" 2>"$out.nodump.err" ||
        d9_fail "$prog fails under the agent without crash dumps: $(cat "$out.nodump.out" "$out.nodump.err")"
    # With SIGSEGV and SIGBUS ignored from the start the agent has no handler
    # to catch such a fault: it must not read those timeouts at all.
    (trap '' SEGV BUS && d9_run_traced "$D9_TMP/trace.$prog.ign" "$D9_PROGS/$prog") >"$out.ign.out" 2>"$out.ign.err" ||
        d9_fail "$prog fails under the agent with SIGSEGV ignored: $(cat "$out.ign.out" "$out.ign.err")"
    plain=$(count "$out.plain.out")
    traced=$(count "$out.agent.out")
    off=$(count "$out.off.out")
    nodump=$(count "$out.nodump.out")
    [ "$plain" = "$nodump" ] || d9_fail "$prog: $plain checks plain, ${nodump:-none} without crash dumps"
    [ "$plain" = "$(count "$out.ign.out")" ] || d9_fail "$prog: $plain checks plain, other with SIGSEGV ignored"
    [ -n "$plain" ] && [ "$plain" -gt 0 ] || d9_fail "$prog: no check count in: $(cat "$out.plain.out")"
    [ "$plain" = "$traced" ] || d9_fail "$prog: $plain checks plain, ${traced:-none} under the agent"
    [ "$plain" = "$off" ] || d9_fail "$prog: $plain checks plain, ${off:-none} with the agent off"

    # What it recorded meanwhile is a sound trace.
    dir=
    for dir in "$D9_TMP/trace.$prog"/*; do
        d9_assert_sealed "$dir"
        d9_assert_check "$dir"
    done
    [ -d "$dir" ] || d9_fail "$prog: nothing recorded"
    echo "$prog: $plain checks pass without the agent, under it (with and without crash dumps, with SIGSEGV ignored), and with it off"
done

# run_rt HOW NAME PROG ARGS...: PROG plain, under the agent or with it off;
# its result line is left in $line.
run_rt() {
    local how=$1 name=$2 out="$D9_TMP/$2.$1" rc
    shift 2
    case $how in
    plain) "$@" >"$out" 2>&1 ;;
    agent) d9_run_traced "$D9_TMP/trace.$name" "$@" >"$out" 2>&1 ;;
    off) LD_PRELOAD="$D9_AGENT" DIAL9_ENABLED=0 "$@" >"$out" 2>&1 ;;
    esac
    rc=$?
    [ $rc -ne 3 ] || d9_fail "$name needs SCHED_FIFO and CPU pinning (root): $(cat "$out")"
    [ $rc -eq 0 ] || d9_fail "$name ($how) exited $rc: $(cat "$out")"
    line=$(grep "^$name: " "$out") || d9_fail "$name ($how): no result line: $(cat "$out")"
    echo "$how: $line"
}
calls=3000
for how in plain agent off; do
    run_rt $how rt_sigaction "$D9_PROGS/rt_sigaction" $calls
    # Every call made (10 s is the program's own limit), none over 100 ms.
    echo "$line" | grep -q "^rt_sigaction: $calls calls, slowest [0-9]* us, 0 over 100 ms\$" ||
        d9_fail "rt_sigaction ($how): a real-time thread's sigaction waited: $line"
    run_rt $how rt_cancel "$D9_PROGS/rt_cancel" 3
    us=$(echo "$line" | sed -n 's/^rt_cancel: 3 rounds, slowest join \([0-9]*\) us$/\1/p')
    [ -n "$us" ] && [ "$us" -lt 100000 ] ||
        d9_fail "rt_cancel ($how): joining a cancelled real-time thread waited: $line"
done
echo "ok"
