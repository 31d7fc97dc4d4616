#!/bin/bash
# test_config_errors.sh - a bad DIAL9_* setting never breaks the program: it
# prints the same output and exits with the same status as without the
# agent, and the agent says so in exactly one stderr line naming the
# variable and its value. DIAL9_ENABLED=0 records nothing.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/forker"

prog=("$D9_PROGS/forker" --no-fork --exit 3)
"${prog[@]}" >"$D9_TMP/want.out" 2>"$D9_TMP/want.err"
want_rc=$?
[ "$want_rc" -eq 3 ] && [ -s "$D9_TMP/want.out" ] && [ ! -s "$D9_TMP/want.err" ] ||
    d9_fail "the reference run misbehaves (exit $want_rc)"

# run_case NAME VAR=VALUE: runs prog under the agent with one setting, into
# a fresh DIAL9_DIR (unless the setting is DIAL9_DIR); checks output and status.
run_case() {
    local name=$1 setting=$2 rc=0
    local dir=$D9_TMP/$name
    mkdir -p "$dir"
    timeout -k 5 120 env LD_PRELOAD="$D9_AGENT" DIAL9_QUIET=1 DIAL9_DIR="$dir" "$setting" "${prog[@]}" \
        >"$dir.out" 2>"$dir.err" || rc=$?
    [ "$rc" -eq "$want_rc" ] || d9_fail "$setting: exit $rc, want $want_rc"
    cmp -s "$dir.out" "$D9_TMP/want.out" || d9_fail "$setting: output differs: $(cat "$dir.out")"
}

# Control: a valid setting records and prints nothing on stderr, so the
# checks below can tell a recording from none.
run_case good DIAL9_FLUSH_MS=50
[ -s "$D9_TMP/good.err" ] && d9_fail "valid settings printed: $(cat "$D9_TMP/good.err")"
[ -n "$(find "$D9_TMP/good" -mindepth 1 -maxdepth 1 -type d)" ] || d9_fail "no trace directory with valid settings"

i=0
for setting in DIAL9_MAX_FILE_SIZE=abc DIAL9_ROTATION_SECS=-5 DIAL9_BUFFER_EVENTS=1000 \
    DIAL9_FLUSH_MS= DIAL9_DIR=/proc/nonexistent/x DIAL9_ENABLED=maybe DIAL9_SCHED_GAP_MS=0; do
    i=$((i + 1))
    run_case "bad$i" "$setting"
    err=$D9_TMP/bad$i.err
    lines=$(wc -l <"$err")
    [ "$lines" -eq 1 ] || d9_fail "$setting: want one stderr line, got $lines: $(cat "$err")"
    # The line names the variable and its value; the value may be empty.
    grep -qF -- "$setting" "$err" || grep -q "${setting%%=*}.*${setting#*=}" "$err" ||
        d9_fail "$setting: the message does not name it: $(cat "$err")"
    grep -q '^dial9: ' "$err" || d9_fail "$setting: message without the dial9 prefix: $(cat "$err")"
    d9_log "$setting -> $(cat "$err")"
done

# A number that does not parse falls back to its default: recording goes on.
for i in 1 2 3 4; do
    dir=$(find "$D9_TMP/bad$i" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    [ -n "$dir" ] || d9_fail "case $i: the agent stopped recording instead of using the default"
    d9_assert_sealed "$dir"
    d9_assert_check "$dir"
done

run_case off DIAL9_ENABLED=0
[ -s "$D9_TMP/off.err" ] && d9_fail "DIAL9_ENABLED=0 printed: $(cat "$D9_TMP/off.err")"
[ -z "$(ls -A "$D9_TMP/off")" ] || d9_fail "DIAL9_ENABLED=0 wrote: $(ls -A "$D9_TMP/off")"
echo "ok"
