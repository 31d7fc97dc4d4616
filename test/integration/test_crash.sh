#!/bin/bash
# Crash dumps (docs/FLIGHT.md): a program makes wakes in 4 threads then
# crashes; the exit status is the one it has without the agent, and every
# wake is in the trace (crash.d9 + whatever the writer wrote). With
# DIAL9_FLUSH_MS=60000 the writer never drained them: only the crash
# handler can have written them. A SIGSEGV handler the program installs
# after the agent (sigchain.h; with sigaction, signal or sigset) does not
# replace the agent's: the program's handler runs first (it prints the
# same thing and exits with the same status as without the agent), and the
# dump is written when it restores the default and returns, or when it
# exits (_exit). The dump also runs
# from a thread on an 8 KiB alternate stack (Rust's), and after vfork
# children changed a handler and aborted (their memory is the parent's),
# and for a thread whose own handler reports a stack overflow and aborts,
# as Rust's runtime does (the reason names both signals).
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/crash_after"

for mode in continuous flight; do
    for how in segv abort handler sigset exit altstack vfork overflow; do
        plain=0
        "$D9_PROGS/crash_after" "$how" 4 1000 2>"$D9_TMP/plain.err" || plain=$?
        rc=0
        DIAL9_MODE=$mode DIAL9_FLUSH_MS=60000 d9_run_traced "$D9_TMP/$mode-$how" \
            "$D9_PROGS/crash_after" "$how" 4 1000 2>"$D9_TMP/err" || rc=$?
        [ "$rc" -eq "$plain" ] || d9_fail "$mode $how: exit status $rc, without the agent $plain"
        grep -q '^wakes 4000$' "$D9_TMP/err" || d9_fail "$mode $how: program did not report: $(cat "$D9_TMP/err")"
        case $how in
        handler | sigset)
            grep -q '^handler ran$' "$D9_TMP/err" || d9_fail "$mode $how: the program's SIGSEGV handler did not run"
            ! grep -q 'wrong' "$D9_TMP/err" || d9_fail "$mode $how: $(cat "$D9_TMP/err")"
            ;;
        exit)
            [ "$rc" -eq 42 ] || d9_fail "$mode exit: exit status $rc, not the handler's 42"
            grep -q '^handler exit 11$' "$D9_TMP/plain.err" || d9_fail "exit without the agent: $(cat "$D9_TMP/plain.err")"
            grep -q '^handler exit 11$' "$D9_TMP/err" || d9_fail "$mode exit: handler did not run: $(cat "$D9_TMP/err")"
            ;;
        vfork)
            for line in 'vfork child signal 6' 'usr2 ran'; do
                grep -q "^$line\$" "$D9_TMP/plain.err" || d9_fail "vfork without the agent: no '$line': $(cat "$D9_TMP/plain.err")"
                grep -q "^$line\$" "$D9_TMP/err" || d9_fail "$mode vfork: no '$line': $(cat "$D9_TMP/err")"
            done
            ! grep -q 'wrong SIGUSR2' "$D9_TMP/err" || d9_fail "$mode vfork: $(cat "$D9_TMP/err")"
            ;;
        esac
        dir=$D9_TMP/$mode-$how
        [ -n "$(find "$dir" -name crash.d9)" ] || d9_fail "$mode $how: no crash.d9 in $(find "$dir")"
        d9_assert_check "$dir"
        got=$("$D9_DECODER" events --json "$dir" | grep -c '"type":"wake"' || true)
        [ "$got" -eq 4000 ] || d9_fail "$mode $how: $got of 4000 wakes in the trace"
        grep -aq 'crash: signal' "$(find "$dir" -name crash.d9)" || d9_fail "crash.d9 header lacks the reason"
        case $how in
        overflow) why="crash: signal 6 (SIGABRT) in the program's handler of signal 11 (SIGSEGV)" ;;
        exit) why="crash: signal 11 (SIGSEGV); the program's handler exited" ;;
        *) why= ;;
        esac
        [ -z "$why" ] || "$D9_DECODER" check "$dir" | grep -qF "dump reason: $why" ||
            d9_fail "$mode $how: the dump's reason is not '$why': $("$D9_DECODER" check "$dir")"
    done
done

# The writer's open block: it writes a block when it is due (DIAL9_FLUSH_MS,
# here never before the crash), not after each cycle. 6000 wakes a thread
# fill more than half of an 8192-entry ring, so the writer drains them (a
# kick) into its open block, with room to spare (no drop). The program
# then waits 300 ms and crashes: those wakes are only in that block, and
# the crash dump must write it.
plain=0
"$D9_PROGS/crash_after" drained 4 6000 2>/dev/null || plain=$?
for mode in continuous flight; do
    rc=0
    DIAL9_MODE=$mode DIAL9_FLUSH_MS=60000 DIAL9_BUFFER_EVENTS=8192 d9_run_traced "$D9_TMP/open-$mode" \
        "$D9_PROGS/crash_after" drained 4 6000 2>"$D9_TMP/err" || rc=$?
    [ "$rc" -eq "$plain" ] || d9_fail "open block, $mode: exit status $rc, without the agent $plain"
    crash=$(find "$D9_TMP/open-$mode" -name crash.d9)
    [ -n "$crash" ] || d9_fail "open block, $mode: no crash.d9 in $(find "$D9_TMP/open-$mode")"
    d9_assert_check "$D9_TMP/open-$mode"
    got=$("$D9_DECODER" events --json "$D9_TMP/open-$mode" | grep -c '"type":"wake"' || true)
    [ "$got" -eq 24000 ] || d9_fail "open block, $mode: $got of 24000 wakes in the trace"
done

# A stale directory of an earlier process with the same pid (a container's
# pid 1 that restarts), holding that process's crash.d9: a crash before
# any segment (flight mode, no dump yet) is dumped into <exe>.<pid>.2, and
# the old crash.d9 stays as it was.
mkdir -p "$D9_TMP/stale"
sh -c 'mkdir "$1/crash_after.$$" && echo old >"$1/crash_after.$$/crash.d9" &&
    exec env LD_PRELOAD="$2" DIAL9_DIR="$1" DIAL9_QUIET=1 DIAL9_MODE=flight "$3" abort 2 100' \
    sh "$D9_TMP/stale" "$D9_AGENT" "$D9_PROGS/crash_after" 2>"$D9_TMP/stale.err" &
pid=$!
d9_track "$pid"
d9_wait_exit "$pid" 30
[ "$D9_RC" -eq 134 ] || d9_fail "stale dir: exit status $D9_RC, not 134 (SIGABRT)"
[ "$(cat "$D9_TMP/stale/crash_after.$pid/crash.d9")" = old ] || d9_fail "stale dir: the earlier process's crash.d9 was replaced"
[ -f "$D9_TMP/stale/crash_after.$pid.2/crash.d9" ] || d9_fail "stale dir: no crash.d9 in crash_after.$pid.2: $(find "$D9_TMP/stale")"
d9_assert_check "$D9_TMP/stale/crash_after.$pid.2"
got=$("$D9_DECODER" events --json "$D9_TMP/stale/crash_after.$pid.2" | grep -c '"type":"wake"' || true)
[ "$got" -eq 200 ] || d9_fail "stale dir: $got of 200 wakes in the dump"

# Faults the program's own handler recovers from (a JVM's null checks, V8's
# WebAssembly bounds checks) are no crash: no crash.d9, and the agent keeps
# both its handler and its safe loads. recover: 3 recovered faults (the
# handler runs with the signal mask it has without the agent, and set
# without SA_ONSTACK on the thread's stack, not its 8 KiB alternate one), a nanosleep
# of 1234567 ns (its PARK must say so: the safe load is still armed), the
# wakes, then a real crash whose dump (the only writer of the wakes,
# DIAL9_FLUSH_MS=60000) must hold them all. recovered and jump (a
# handler that siglongjmps, then exit(0) from deeper in the stack than the
# handler ran) end well: no dump. exitcall (a
# handler that calls exit): one dump, each wake once, one directory.
for mode in continuous flight; do
    for how in recover recovered jump exitcall; do
        plain=0
        "$D9_PROGS/crash_after" "$how" 4 1000 2>"$D9_TMP/plain.err" || plain=$?
        rc=0
        dir=$D9_TMP/$mode-$how
        DIAL9_MODE=$mode DIAL9_FLUSH_MS=60000 d9_run_traced "$dir" \
            "$D9_PROGS/crash_after" "$how" 4 1000 2>"$D9_TMP/err" || rc=$?
        [ "$rc" -eq "$plain" ] || d9_fail "$mode $how: exit status $rc, without the agent $plain: $(cat "$D9_TMP/err")"
        grep -q '^wakes 4000$' "$D9_TMP/err" || d9_fail "$mode $how: program did not report: $(cat "$D9_TMP/err")"
        dumps=$(find "$dir" -name 'crash.d9*' | wc -l)
        dirs=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | wc -l)
        case $how in
        recover*)
            grep -q '^recovered 3$' "$D9_TMP/err" || d9_fail "$mode $how: $(cat "$D9_TMP/err")"
            grep -q '^handler mask ok$' "$D9_TMP/err" || d9_fail "$mode $how: the handler ran with another mask than without the agent"
            grep -q '^handler stack ok$' "$D9_TMP/err" || d9_fail "$mode $how: the handler (no SA_ONSTACK) ran on the alternate stack"
            grep -q '^mask after ok$' "$D9_TMP/err" || d9_fail "$mode $how: the thread's mask after the handler is not its own"
            ;;
        jump) grep -q '^jumped$' "$D9_TMP/err" || d9_fail "$mode jump: $(cat "$D9_TMP/err")" ;;
        esac
        case $how in
        recover | exitcall) want=1 ;;
        *) want=0 ;;
        esac
        [ "$dumps" -eq "$want" ] || d9_fail "$mode $how: $dumps crash dumps, not $want: $(find "$dir")"
        [ "$want" -eq 0 ] || [ "$dirs" -eq 1 ] || d9_fail "$mode $how: $dirs process directories: $(find "$dir")"
        [ "$want" -eq 1 ] || [ "$mode" = continuous ] || continue # flight mode at a clean exit: nothing written
        d9_assert_check "$dir"
        got=$("$D9_DECODER" events --json "$dir" | grep -c '"type":"wake"' || true)
        [ "$got" -eq 4000 ] || d9_fail "$mode $how: $got of 4000 wakes in the trace"
        if [ "$how" = recover ]; then
            "$D9_DECODER" events --json "$dir" | grep '"type":"park"' | grep -q '"timeout_ns":1234567[,}]' ||
                d9_fail "$mode recover: no PARK with the nanosleep's timeout after the recovered faults"
        fi
    done
done

# DIAL9_CRASH_DUMP=0: the agent still takes SIGSEGV and SIGBUS (for its
# safe loads, agent/safe_load.h) but writes no dump, and each crash ends
# as without the agent, a program's own handler included.
for how in segv abort handler exit; do
    plain=0
    "$D9_PROGS/crash_after" "$how" 2 100 2>"$D9_TMP/plain.err" || plain=$?
    rc=0
    DIAL9_CRASH_DUMP=0 d9_run_traced "$D9_TMP/nodump-$how" "$D9_PROGS/crash_after" "$how" 2 100 2>"$D9_TMP/err" || rc=$?
    [ "$rc" -eq "$plain" ] || d9_fail "no dumps, $how: exit status $rc, without the agent $plain"
    [ "$how" != handler ] || grep -q '^handler ran$' "$D9_TMP/err" || d9_fail "no dumps: the program's SIGSEGV handler did not run"
    [ -z "$(find "$D9_TMP/nodump-$how" -name 'crash.d9*')" ] || d9_fail "no dumps, $how: a crash dump was written"
done
d9_log "crash dumps: exit status unchanged, every wake recorded, program handler chained; faults the program recovers from are no crash; a stale directory of the same pid left alone; none written with DIAL9_CRASH_DUMP=0, exits unchanged"
