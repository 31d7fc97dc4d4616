#!/bin/sh
# demo.sh - records the bundled demo service (build/progs/demo_server) with
# dial9, then checks and summarises the trace. The trace is kept: in
# $DIAL9_DIR when set, else in a new temporary directory.
# Usage: scripts/demo.sh [demo_server options, e.g. --seconds 5]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
AGENT=$BUILD/libdial9.so
DECODER=$BUILD/dial9-decode
DEMO=$BUILD/progs/demo_server
for f in "$AGENT" "$DECODER" "$DEMO"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "demo: $f is not built; run make" >&2; exit 1; }
done

DIR=${DIAL9_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/dial9-demo.XXXXXX")}
mkdir -p "$DIR"
echo "== running demo_server under dial9 (DIAL9_DIR=$DIR)"
LD_PRELOAD=$AGENT DIAL9_DIR=$DIR "$DEMO" "$@"

# The newest process directory of the demo is this run's.
TRACE=$(ls -dt "$DIR"/demo_server.* 2>/dev/null | head -n 1)
[ -n "$TRACE" ] || { echo "demo: no trace was written to $DIR" >&2; exit 1; }

echo
echo "== dial9-decode check $TRACE"
"$DECODER" check "$TRACE"
echo
echo "== dial9-decode summary $TRACE"
"$DECODER" summary "$TRACE"
echo
echo "Trace: $TRACE"
echo "More:  $DECODER events --json $TRACE | less"
