#!/bin/bash
# run-tests.sh - runs the unit tests (Check, under ASan/UBSan and under TSan) and
# every test/integration/test_*.sh. A test passes with exit 0, is skipped
# with 77, fails otherwise (a timeout included). Each test's output goes to
# build/test-logs/NAME.log and is printed when it fails.
# Usage: test/run-tests.sh [NAME-FILTER]   (e.g. test/run-tests.sh redis)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
LOGS=$BUILD/test-logs
TIMEOUT=${D9_TEST_TIMEOUT:-300}
FILTER=${1:-}
mkdir -p "$LOGS"

passed=0 failed=0 skipped=0

# run_one NAME CMD...: runs one test and tallies it.
run_one() {
    local name=$1 log=$LOGS/$1.log rc=0 start end
    shift
    start=$(date +%s)
    # No stdin (CI has none); kill the whole test if it hangs.
    timeout -k 10 "$TIMEOUT" "$@" </dev/null >"$log" 2>&1 || rc=$?
    end=$(date +%s)
    case $rc in
    0) passed=$((passed + 1)); echo "PASS  $name ($((end - start))s)" ;;
    77) skipped=$((skipped + 1)); echo "SKIP  $name: $(sed -n 's/^SKIP: //p' "$log" | head -n 1)" ;;
    *)
        failed=$((failed + 1))
        [ $rc -eq 124 ] && echo "timed out after ${TIMEOUT}s" >>"$log"
        echo "FAIL  $name (exit $rc, $((end - start))s) -- log $log:"
        sed 's/^/    | /' "$log"
        ;;
    esac
}

# The unit tests twice: under ASan/UBSan, and under TSan (ring hand-off).
for unit in check_dial9 check_dial9_tsan; do
    [ -n "$FILTER" ] && [[ $unit != *"$FILTER"* ]] && continue
    if [ -x "$BUILD/unit/$unit" ]; then
        run_one "$unit" "$BUILD/unit/$unit"
    else
        failed=$((failed + 1))
        echo "FAIL  $unit ($BUILD/unit/$unit is not built)"
    fi
done

for t in "$ROOT"/test/integration/test_*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    [ -n "$FILTER" ] && [[ $name != *"$FILTER"* ]] && continue
    run_one "$name" bash "$t"
done

echo "$passed passed, $failed failed, $skipped skipped"
# Skips are not runs: a suite where nothing ran has not passed.
[ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ] || exit 1
