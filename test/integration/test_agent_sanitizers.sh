#!/bin/bash
# test_agent_sanitizers.sh - the agent built with ASan+UBSan
# (build/asan/libdial9.so), preloaded after libasan into the uninstrumented
# test programs: each exits as it does without sanitizers, prints no sanitizer
# report, and its trace checks OK.
#
# Known exceptions (each with its exact reason):
# - hooks_semantics is not run: it checks prctl(PR_SET_NAME, bad_ptr) ==
#   EFAULT (hooks_semantics.c:926), and libasan's own prctl interceptor
#   (first in LD_PRELOAD) strncpy's from bad_ptr: ASan SEGV in
#   __sanitizer::internal_strncpy before the agent is reached.
# - detect_leaks=0 for `lifecycle_child spawn`, `forker`, demo_server and
#   drop_privs only; the leaks are the host programs': lifecycle_child.c
#   never calls posix_spawn_file_actions_destroy (256 bytes from
#   __posix_spawn_file_actions_realloc); demo_server's acceptor sometimes
#   leaves a struct conn (calloc at demo_server.c:287) queued at exit (48
#   bytes, timing-dependent); LSan in forker's and drop_privs' forked
#   children prints "Running thread N was not suspended. False leaks are
#   possible.".
#
# ThreadSanitizer cannot be used this way (not tested): libtsan's
# pthread_create interceptor calls the next pthread_create, the agent's,
# which starts the thread at d9_trampoline (hooks_thread.c) and calls TSan's
# thread start routine only after d9_register_self; so instrumented agent
# code runs in the new thread before TSan set up its ThreadState: SEGV in
# __tsan_func_entry (or __tsan_read8 with
# --param=tsan-instrument-func-entry-exit=0) at hooks_thread.c:21-22.
# test_agent_tsan.sh links the TSan agent into a TSan program instead.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_DECODER" "$D9_PROGS/ground_truth" "$D9_PROGS/demo_server" "$D9_PROGS/forker" \
    "$D9_PROGS/lifecycle_child" "$D9_PROGS/drop_privs" "$D9_PROGS/app_events"

CC=${CC:-cc}
libasan=$("$CC" -print-file-name=libasan.so)
[ -e "$libasan" ] || d9_fail "no libasan.so for $CC (gcc's libasan8 is a build dependency)"

# Build: the Makefile's flags for agent objects, plus the sanitizers.
san=$D9_BUILD/asan
lib=$san/libdial9.so
flags="-O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -I$D9_ROOT/include
 -I$D9_ROOT/agent -I$D9_ROOT/decoder -fPIC -fvisibility=hidden -ftls-model=initial-exec
 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
stale=1
if [ -e "$lib" ]; then
    stale=$(find "$D9_ROOT"/agent "$D9_ROOT"/include "$0" -newer "$lib" -type f | head -n 1)
fi
if [ -n "$stale" ]; then
    d9_log "building $lib"
    mkdir -p "$san/obj"
    rm -f "$san"/obj/*.o
    for src in "$D9_ROOT"/agent/*.c; do
        # shellcheck disable=SC2086 # word splitting of the flag lists is intended
        "$CC" $flags -c "$src" -o "$san/obj/$(basename "$src" .c).o" ||
            d9_fail "cannot compile $src with sanitizers"
    done
    "$CC" -shared -fsanitize=address,undefined -o "$lib.tmp" "$san"/obj/*.o -Wl,-z,start-stop-visibility=hidden -llz4 -lpthread ||
        d9_fail "cannot link $lib"
    mv "$lib.tmp" "$lib"
fi

# san_run NAME LEAKS CMD...: runs CMD under the sanitized agent into
# $D9_TMP/NAME; sets RC; stdout in NAME.out, stderr in NAME.err.
san_run() {
    local name=$1 leaks=$2
    shift 2
    RC=0
    timeout -k 5 120 env LD_PRELOAD="$libasan $lib" DIAL9_DIR="$D9_TMP/$name" DIAL9_QUIET=1 \
        ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=0" UBSAN_OPTIONS=print_stacktrace=1 \
        "$@" >"$D9_TMP/$name.out" 2>"$D9_TMP/$name.err" || RC=$?
}
# san_assert NAME WANT_RC: exit status, clean stderr, every trace checks OK.
san_assert() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:|ERROR: |LeakSanitizer' "$D9_TMP/$name.err"; then
        d9_fail "$name: sanitizer report: $(head -c 4000 "$D9_TMP/$name.err")"
    fi
    [ "$RC" -eq "$want" ] || d9_fail "$name: exit $RC, want $want: $(head -c 2000 "$D9_TMP/$name.err")"
    [ -n "$(find "$D9_TMP/$name" -name '*.d9' 2>/dev/null | head -n 1)" ] || d9_fail "$name: no sealed segment"
    local d
    for d in "$D9_TMP/$name"/*; do
        d9_assert_sealed "$d"
        d9_assert_check "$d"
    done
    d9_log "$name: exit $RC, no sanitizer report, $(find "$D9_TMP/$name" -mindepth 1 -maxdepth 1 | wc -l) trace dir(s) OK"
}

san_run ground_truth 1 "$D9_PROGS/ground_truth"
san_assert ground_truth 0
san_run demo 0 "$D9_PROGS/demo_server" --workers 2 --pool 3 --clients 4 --seconds 2
san_assert demo 0
grep -q '^demo: requests=' "$D9_TMP/demo.out" || d9_fail "demo printed no stats: $(cat "$D9_TMP/demo.out")"
san_run forker 0 "$D9_PROGS/forker"
san_assert forker 0
grep -q '^parent pid=.* child_status=0' "$D9_TMP/forker.out" || d9_fail "forker: $(cat "$D9_TMP/forker.out")"
[ "$(find "$D9_TMP/forker" -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 2 ] || d9_fail "forker: want parent and child traces: $(ls "$D9_TMP/forker")"
san_run forker_exit 1 "$D9_PROGS/forker" --no-fork --exit 3
san_assert forker_exit 3
for mode in exec vfork spawn; do
    leaks=1
    [ $mode = spawn ] && leaks=0 # the host program's leak, see above
    san_run "lc_$mode" $leaks "$D9_PROGS/lifecycle_child" $mode
    san_assert "lc_$mode" 0
done
san_run lc_closeall 1 "$D9_PROGS/lifecycle_child" closeall "$D9_TMP/closeall.txt"
san_assert lc_closeall 0
# Application events (dial9_event) from 3 threads and a signal handler.
san_run app_events 1 "$D9_PROGS/app_events" 3 3001 full
san_assert app_events 0
grep -qx 'api: ok' "$D9_TMP/app_events.out" || d9_fail "app_events: $(cat "$D9_TMP/app_events.out")"
# A worker that switches to nobody (the hand-over of its directory), and a
# child forked after the switch (its directory inside its parent's).
if [ "$(id -u)" = 0 ]; then
    san_run drop_privs_after 0 "$D9_PROGS/drop_privs" after setuid
    san_assert drop_privs_after 0
    grep -q '^drop_privs: pid .* status 0 uid 65534 signals 100000$' "$D9_TMP/drop_privs_after.out" ||
        d9_fail "drop_privs after: $(cat "$D9_TMP/drop_privs_after.out")"
    san_run drop_privs 0 "$D9_PROGS/drop_privs" fork setuid
    san_assert drop_privs 0
    grep -q '^drop_privs: pid .* status 0 uid 65534 signals 100100$' "$D9_TMP/drop_privs.out" ||
        d9_fail "drop_privs: $(cat "$D9_TMP/drop_privs.out")"
fi
d9_log "ASan+UBSan agent: ground_truth, demo_server, forker, lifecycle_child, app_events, drop_privs OK (TSan: see the header)"
