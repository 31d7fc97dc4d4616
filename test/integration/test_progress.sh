#!/bin/bash
# test_progress.sh - long decodes show progress on stderr when it is a
# terminal, and only then. The terminal is script(1)'s pty;
# DIAL9_DECODE_PROGRESS_MS=0 makes a small trace count as long (the default,
# 1000 ms of decoding, would need a trace of tens of millions of events).
# Asserted, for summary and export: on a terminal the line
# "dial9-decode: N%" appears with N rising, at most 100, and is erased
# ("\r\033[K") before the command ends; stdout (the result) is the same
# as without progress; with stderr a file, or with the default threshold
# on this small trace, no progress is written.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth"
command -v script >/dev/null || d9_fail "script(1) is missing (Debian: bsdutils)"

trace=$D9_TMP/gt
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >/dev/null 2>"$D9_TMP/gt.err" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/gt.err")"

# on_tty NAME MS ARGS...: runs dial9-decode ARGS with stderr on a pty,
# stdout to $D9_TMP/NAME.out; the pty's bytes go to $D9_TMP/NAME.tty.
on_tty() {
    local name=$1 ms=$2
    shift 2
    local cmd
    cmd=$(printf '%q ' "$D9_DECODER" "$@")
    DIAL9_DECODE_PROGRESS_MS=$ms script -qefc "$cmd >$(printf '%q' "$D9_TMP/$name.out")" \
        "$D9_TMP/$name.tty" </dev/null >/dev/null || d9_fail "$name: dial9-decode $* exited $?"
}

for cmd in summary export; do
    args=("$cmd" "$trace")
    [ "$cmd" = export ] && args=(export --format chrome "$trace")
    "$D9_DECODER" "${args[@]}" >"$D9_TMP/$cmd.plain" 2>"$D9_TMP/$cmd.err" ||
        d9_fail "$cmd exited $?: $(cat "$D9_TMP/$cmd.err")"
    on_tty "$cmd-tty" 0 "${args[@]}"
    on_tty "$cmd-default" "" "${args[@]}"
    DIAL9_DECODE_PROGRESS_MS=0 "$D9_DECODER" "${args[@]}" >/dev/null 2>"$D9_TMP/$cmd.file-err" ||
        d9_fail "$cmd with stderr a file exited $?"
    d9_py '
import re
name, tty, default, plain, out, ferr = sys.argv[1:7]
t = open(tty, "rb").read()
shown = [int(p) for p in re.findall(rb"\rdial9-decode: +(\d+)% ", t)]
if not shown:
    errors.append("%s: no progress on the terminal: %r" % (name, t[:300]))
else:
    if shown != sorted(shown) or shown[-1] > 100:
        errors.append("%s: progress goes back: %r" % (name, shown))
    last = t.rfind(b"dial9-decode: ")
    if t.find(b"\r\x1b[K", last) < 0:
        errors.append("%s: the progress line is not erased at the end" % name)
expect(name + " stdout with progress = without", open(out, "rb").read(), open(plain, "rb").read())
expect(name + " progress with the default threshold on a small trace",
       b"dial9-decode:" in open(default, "rb").read(), False)
expect(name + " progress with stderr a file", open(ferr, "rb").read(), b"")
' "$cmd" "$D9_TMP/$cmd-tty.tty" "$D9_TMP/$cmd-default.tty" "$D9_TMP/$cmd.plain" "$D9_TMP/$cmd-tty.out" \
        "$D9_TMP/$cmd.file-err"
done

# A bad value is named once and the default used.
DIAL9_DECODE_PROGRESS_MS=soon "$D9_DECODER" summary "$trace" >/dev/null 2>"$D9_TMP/bad.err" ||
    d9_fail "summary with a bad DIAL9_DECODE_PROGRESS_MS exited $?"
grep -q "DIAL9_DECODE_PROGRESS_MS" "$D9_TMP/bad.err" || d9_fail "bad DIAL9_DECODE_PROGRESS_MS not named: $(cat "$D9_TMP/bad.err")"
[ "$(wc -l <"$D9_TMP/bad.err")" -eq 1 ] || d9_fail "more than one line for a bad setting: $(cat "$D9_TMP/bad.err")"
d9_log "progress shown on a terminal only, erased at the end; output unchanged"
