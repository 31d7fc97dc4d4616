#!/bin/bash
# test_fuzz_smoke.sh - a short run of the decoder's fuzz target
# (test/fuzz/fuzz_reader.c, libFuzzer under ASan+UBSan; docs/FUZZING.md):
# builds it with clang, records a fresh seed corpus of real segments
# (test/fuzz/make-corpus.sh), replays every kept crash reproducer
# (test/fuzz/crashes/, regressions) and fuzzes for D9_FUZZ_SMOKE_RUNS
# executions or D9_FUZZ_SMOKE_SECONDS seconds, whichever comes first. Any
# crash, sanitizer report, leak, hang (-timeout) or broken reader invariant
# fails the test. Skips when clang is not installed.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth" "$D9_PROGS/demo_server"

command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 || d9_skip "clang not installed (scripts/install-deps.sh test)"
RUNS=${D9_FUZZ_SMOKE_RUNS:-200000}
SECONDS_MAX=${D9_FUZZ_SMOKE_SECONDS:-25}
FUZZ=$D9_BUILD/fuzz/fuzz_reader

d9_log "building $FUZZ"
make -C "$D9_ROOT" --no-print-directory -s BUILD="$D9_BUILD" fuzz-build >"$D9_TMP/build.log" 2>&1 ||
    d9_fail "building the fuzz target failed: $(tail -n 30 "$D9_TMP/build.log")"

d9_log "recording seeds"
BUILD=$D9_BUILD "$D9_ROOT/test/fuzz/make-corpus.sh" "$D9_TMP/seeds" >"$D9_TMP/corpus.log" 2>&1 ||
    d9_fail "make-corpus.sh failed: $(cat "$D9_TMP/corpus.log")"
nseeds=$(find "$D9_TMP/seeds" -name '*.d9' | wc -l)
[ "$nseeds" -ge 10 ] || d9_fail "only $nseeds seeds recorded"
d9_log "$nseeds seeds"

# Regressions: every kept reproducer must now run clean.
if [ -d "$D9_ROOT/test/fuzz/crashes" ] && [ -n "$(ls -A "$D9_ROOT/test/fuzz/crashes" 2>/dev/null)" ]; then
    d9_log "replaying test/fuzz/crashes"
    "$FUZZ" -timeout=5 -rss_limit_mb=2048 "$D9_ROOT"/test/fuzz/crashes/* >"$D9_TMP/replay.log" 2>&1 ||
        d9_fail "a kept crash reproducer fails: $(tail -n 40 "$D9_TMP/replay.log")"
fi

mkdir -p "$D9_TMP/corpus" "$D9_TMP/artifacts"
d9_log "fuzzing: $RUNS runs or ${SECONDS_MAX}s"
rc=0
(cd "$D9_TMP" && "$FUZZ" corpus seeds -dict="$D9_ROOT/test/fuzz/dict" -max_len=4096 -timeout=5 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -runs="$RUNS" -max_total_time="$SECONDS_MAX" \
    -print_final_stats=1 -artifact_prefix="$D9_TMP/artifacts/") >"$D9_TMP/fuzz.log" 2>&1 || rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss_mb' "$D9_TMP/fuzz.log" | sed 's/^/# /'
if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$D9_TMP/artifacts")" ]; then
    grep -n -m 1 -E 'ERROR|SUMMARY|invariant|timeout|leak' "$D9_TMP/fuzz.log" >&2
    tail -n 60 "$D9_TMP/fuzz.log" >&2
    for a in "$D9_TMP"/artifacts/*; do
        [ -e "$a" ] && echo "reproducer $(basename "$a") ($(stat -c %s "$a") bytes), base64: $(head -c 4096 "$a" | base64 -w0)" >&2
    done
    d9_fail "the fuzzer found a problem (exit $rc)"
fi
grep -q 'Done [0-9]* runs' "$D9_TMP/fuzz.log" || d9_fail "the fuzzer did not finish: $(tail -n 20 "$D9_TMP/fuzz.log")"
