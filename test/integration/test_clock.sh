#!/bin/bash
# test_clock.sh - recorded timestamps against the program's own clock.
# build/progs/clock_truth brackets each pthread_cond_signal with two
# clock_gettime(CLOCK_MONOTONIC) readings while its threads hop between
# CPUs; every decoded WAKE must lie within [before - BOUND, after + BOUND].
# With DIAL9_CLOCK=auto (the TSC where it is invariant, converted by the
# writer) BOUND is 2 us; with DIAL9_CLOCK=monotonic the stamps are the
# clock itself and BOUND is 0. A bad DIAL9_CLOCK is one stderr line.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/clock_truth"

# check MODE BOUND_NS: one 3-second run, windows against decoded WAKEs.
check() {
    local mode=$1 bound=$2 trace=$D9_TMP/$1
    d9_run_traced "$trace" env DIAL9_CLOCK="$mode" DIAL9_QUIET=0 DIAL9_BUFFER_EVENTS=262144 \
        "$D9_PROGS/clock_truth" 3 3 >"$D9_TMP/$mode.truth" 2>"$D9_TMP/$mode.stderr" ||
        d9_fail "clock_truth failed under the agent ($mode): $(cat "$D9_TMP/$mode.stderr")"
    local pid dir
    pid=$(sed -n 's/^pid //p' "$D9_TMP/$mode.truth")
    dir=$(d9_sealed_dir "$trace" "$pid") || exit 1
    d9_decode_to "$D9_TMP/$mode.events" events --json "$dir"
    d9_py '
from collections import defaultdict
truth, events, mode, bound, stderr = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), open(sys.argv[5]).read()
want_clock = "tsc" if mode == "auto" and sys.argv[6] == "1" else "monotonic"
if "(clock: %s)" % want_clock not in stderr:
    errors.append("%s: start-up line does not say clock %s: %r" % (mode, want_clock, stderr))
wins = defaultdict(list)
migrations = 0
for line in open(truth):
    f = line.split()
    if f[0] == "migrations":
        migrations = int(f[1])
    elif f[0] != "pid":
        wins[(int(f[0]), int(f[1]))].append((int(f[2]), int(f[3])))
ev = jsonl(events)
expect(mode + " drop events", [e for e in ev if e["type"] == "drop"], [])
wakes = defaultdict(list)
for e in ev:
    if e["type"] == "wake" and e["call"] == "cond_signal":
        wakes[(e["tid"], e["target"])].append(e["ts"])
expect(mode + " threads with wakes", sorted(wakes), sorted(wins))
worst, n, outside = 0, 0, 0
for key, w in wins.items():
    got = wakes.get(key, [])
    if len(got) != len(w):
        errors.append("%s: thread %d: %d wakes recorded, %d calls" % (mode, key[0], len(got), len(w)))
        continue
    for ts, (b, a) in zip(got, w):
        err = max(b - ts, ts - a, 0)
        n += 1
        outside += err > 0
        worst = max(worst, err)
if n < 3000:
    errors.append("%s: only %d calls compared" % (mode, n))
if worst > bound:
    errors.append("%s: a wake %d ns outside its window (bound %d ns)" % (mode, worst, bound))
print("%s: %d calls, %d migrations, %d outside their window, worst by %d ns (bound %d)" %
      (mode, n, migrations, outside, worst, bound))
' "$D9_TMP/$mode.truth" "$D9_TMP/$mode.events" "$mode" "$bound" "$D9_TMP/$mode.stderr" "$tsc"
}

# The agent uses the TSC on x86-64 when the kernel reports it invariant.
tsc=0
if [ "$(uname -m)" = x86_64 ] && grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc &&
    grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc; then
    tsc=1
fi
check auto 2000
check monotonic 0

# A bad value: one line naming it, the default (auto) used, the run goes on.
out=$(LD_PRELOAD=$D9_AGENT DIAL9_DIR=$D9_TMP/bad DIAL9_QUIET=1 DIAL9_CLOCK=rdtsc /bin/true 2>&1) ||
    d9_fail "DIAL9_CLOCK=rdtsc: the program failed"
[ "$out" = "dial9: DIAL9_CLOCK=rdtsc: must be auto or monotonic; using default auto" ] ||
    d9_fail "DIAL9_CLOCK=rdtsc: unexpected stderr: $out"
echo "ok"
