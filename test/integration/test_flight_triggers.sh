#!/bin/bash
# test_flight_triggers.sh - the busy and wake-to-run anomaly triggers of
# flight mode (docs/FLIGHT.md, agent/dump.c d9_dump_note): above the
# threshold a dump with that reason is written; below it nothing is.
#   busy: build/progs/flight_dump busy MS emits WAKEs (condvar signals)
#     for MS ms without a park, so the main thread is busy MS ms.
#   wake-to-run: flight_dump wake HOLD signals a condvar its waiter parks on
#     while holding the mutex HOLD ms more, so the waiter's UNPARK comes at
#     least HOLD ms after the WAKE on the same address (deterministic: the
#     waiter cannot leave pthread_cond_wait without the mutex).
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/flight_dump"
export DIAL9_MODE=flight DIAL9_FLUSH_MS=50
settle=1500 # ms the program lives on after the anomaly: 30 writer cycles

# run NAME VAR=VALUE ARGS...: flight_dump ARGS with VAR set, into $D9_TMP/NAME.
run() {
    local name=$1 var=$2
    shift 2
    env "$var" timeout -k 5 60 env LD_PRELOAD="$D9_AGENT" DIAL9_DIR="$D9_TMP/$name" DIAL9_QUIET=1 \
        "$D9_PROGS/flight_dump" "$@" >"$D9_TMP/$name.out" 2>"$D9_TMP/$name.err" ||
        d9_fail "$name: flight_dump $* failed: $(cat "$D9_TMP/$name.out" "$D9_TMP/$name.err")"
}
# dumped NAME REGEX: a sealed dump whose reason matches REGEX; prints the reason.
dumped() {
    [ -n "$(find "$D9_TMP/$1" -name '*.d9' 2>/dev/null)" ] || d9_fail "$1: no dump: $(cat "$D9_TMP/$1.err")"
    d9_assert_sealed "$(dirname "$(find "$D9_TMP/$1" -name '*.d9' | head -n 1)")"
    d9_assert_check "$D9_TMP/$1"
    local reason
    reason=$("$D9_DECODER" check "$D9_TMP/$1" | sed -n 's/^  dump reason: //p' | sort -u)
    [[ $reason =~ $2 ]] || d9_fail "$1: dump reason '$reason', want /$2/"
    echo "$reason"
}
none() {
    [ -z "$(find "$D9_TMP/$1" -name '*.d9*' 2>/dev/null)" ] ||
        d9_fail "$1: dumped below the threshold: $("$D9_DECODER" check "$D9_TMP/$1" 2>&1)"
}

# Busy: 500 ms without a park against 200 ms; 100 ms against 2000 ms.
run busy DIAL9_TRIGGER_BUSY_MS=200 busy 500 $settle
r=$(dumped busy '^busy ([0-9]+) ms > 200 ms$') || exit 1
[ "$(echo "$r" | awk '{print $2}')" -ge 200 ] || d9_fail "busy: reason '$r' under the threshold"
"$D9_DECODER" events --json "$D9_TMP/busy" | grep -q '"type":"wake"' || d9_fail "busy dump lacks the wakes"
run busy_below DIAL9_TRIGGER_BUSY_MS=2000 busy 100 $settle
none busy_below
d9_log "busy: '$r'; 100 ms < 2000 ms: no dump"

# Wake-to-run: 300 ms late against 100 ms; on time (0 ms held) against 2000 ms.
run wake DIAL9_TRIGGER_WAKE_MS=100 wake 300 $settle
late=$(sed -n 's/^wake //p' "$D9_TMP/wake.out")
[ "${late:-0}" -ge 300 ] || d9_fail "wake: the waiter was only ${late:-?} ms late"
r=$(dumped wake '^wake-to-run ([0-9]+) ms > 100 ms$') || exit 1
[ "$(echo "$r" | awk '{print $2}')" -ge 300 ] || d9_fail "wake: reason '$r', want >= 300 ms"
run wake_below DIAL9_TRIGGER_WAKE_MS=2000 wake 0 $settle
none wake_below
d9_log "wake-to-run: '$r' (waiter measured $late ms); on time < 2000 ms: no dump"
