#!/bin/bash
# test_fd_numbers.sh - where the agent's own fds sit (agent/fd_lift.h):
# never on 0-2, which a program started with them closed sets up itself,
# and a recorded thread's schedstat and perf fds above the numbers the
# program's opens get, so those do not depend on how many threads run.
# Ground truth: build/progs/fd_numbers without the agent (started with 0-2
# closed: all three free, and its open + dup + dup + open get 0 1 2 3).
# Under the agent, after 9 threads recorded and the trace was flushed:
# 0-2 free, the same 0 1 2, and the same four numbers with 9 threads as
# with 1; the trace intact with every thread in it.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
P=$D9_PROGS/fd_numbers
d9_require "$D9_AGENT" "$D9_DECODER" "$P"

# run NAME STDIO THREADS [ENV...]: fd_numbers with 0-2 closed (STDIO
# closed) or open, under the agent into $D9_TMP/NAME (NAME off*: without);
# prints its report line.
run() {
    local name=$1 stdio=$2 n=$3 rep=$D9_TMP/$1.rep
    shift 3
    local -a pre=(env "$@")
    case $name in off*) ;; *) pre=(env LD_PRELOAD="$D9_AGENT" DIAL9_DIR="$D9_TMP/$name" DIAL9_QUIET=1 "$@") ;; esac
    if [ "$stdio" = closed ]; then
        timeout -k 5 60 "${pre[@]}" "$P" "$rep" "$n" <&- >&- 2>&- || d9_fail "$name: fd_numbers failed"
    else
        timeout -k 5 60 "${pre[@]}" "$P" "$rep" "$n" </dev/null || d9_fail "$name: fd_numbers failed"
    fi
    cat "$rep"
}

# traced NAME N: the trace is intact and has N threads' starts.
traced() {
    local starts
    d9_assert_check "$D9_TMP/$1"
    starts=$("$D9_DECODER" events --json "$D9_TMP/$1" | grep -c '"type":"thread_start"')
    [ "$starts" -eq "$2" ] || d9_fail "$1: $starts threads in the trace, the program ran $2"
}

got=$(run off_closed closed 8)
[ "$got" = "free012 3 fds 0 1 2 3 threads 9" ] || d9_fail "without the agent, stdio closed: '$got'"

for env in "" DIAL9_PREEMPT=1; do
    for stdio in closed open; do
        one=$(run "$stdio$env.1" $stdio 0 $env)
        many=$(run "$stdio$env.9" $stdio 8 $env)
        traced "$stdio$env.9" 9
        [ "${many% threads 9}" = "${one% threads 1}" ] ||
            d9_fail "stdio $stdio $env: the program's numbers moved with the threads recorded: '$one' (1 thread), '$many' (9)"
        if [ $stdio = closed ]; then
            case $many in
            "free012 3 fds 0 1 2 "*) ;;
            *) d9_fail "stdio closed $env: '$many' under the agent, want 0-2 free and set up as without it ('$got')" ;;
            esac
        fi
    done
done

# A small fd limit: the threads' fds go to its top quarter, still above the program's.
one=$(ulimit -n 64 && run small.1 closed 0)
many=$(ulimit -n 64 && run small.9 closed 8)
traced small.9 9
[ "${many% threads 9}" = "${one% threads 1}" ] || d9_fail "ulimit -n 64: '$one' (1 thread), '$many' (9)"
echo "fd numbers: 0-2 left to the program, its numbers the same with 1 thread recorded as with 9 (perf fds too, ulimit -n 64)"

# The fd table grows to hold the top zone in the constructor, before the
# writer thread exists: a table that two threads share grows only after an
# RCU grace period (fd_lift.h), which cost every start 13 ms on the bench
# VM when the first thread's schedstat fd was lifted after the writer
# started. strace: the copy onto the zone's highest number comes before
# the first thread is made, and the thread's lift after it finds the room.
command -v strace >/dev/null || d9_fail "strace is not installed (scripts/install-deps.sh test)"
soft=$(ulimit -n)
top=$(( (soft < 1024 ? soft : 1024) - 1 ))
timeout -k 5 60 strace -f -qq -e trace=fcntl,clone,clone3 -o "$D9_TMP/strace" \
    env LD_PRELOAD="$D9_AGENT" DIAL9_DIR="$D9_TMP/grow" DIAL9_QUIET=1 "$P" "$D9_TMP/grow.rep" 1 </dev/null ||
    d9_fail "fd_numbers under strace failed"
grow=$(grep -n -E "F_DUPFD_CLOEXEC, $top\) += $top$" "$D9_TMP/strace" | head -n 1 | cut -d: -f1)
clone=$(grep -n -E 'clone3?\(' "$D9_TMP/strace" | head -n 1 | cut -d: -f1)
[ -n "$grow" ] || d9_fail "no copy onto fd $top (the table's growth) in: $(head -c 1500 "$D9_TMP/strace")"
if [ -z "$clone" ] || [ "$grow" -ge "$clone" ]; then
    d9_fail "the fd table grew at line $grow, not before the first thread (line ${clone:-none}): $(head -c 1500 "$D9_TMP/strace")"
fi
traced grow 2
d9_log "fd table grown to $((top + 1)) before the first thread (strace line $grow < $clone)"
