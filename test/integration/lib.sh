# lib.sh - helpers shared by the integration tests; source it first:
#   . "$(dirname "$0")/lib.sh"
# It creates $D9_TMP (removed on exit), kills every process passed to
# d9_track on exit, and defines the paths of the built artefacts.
# Exit codes: 0 pass, 1 fail, 77 skip (see test/run-tests.sh).
# shellcheck disable=SC2034 # D9_* variables are for the sourcing tests

set -u

D9_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
D9_BUILD=${BUILD:-$D9_ROOT/build}
case $D9_BUILD in /*) ;; *) D9_BUILD=$D9_ROOT/$D9_BUILD ;; esac
D9_AGENT=$D9_BUILD/libdial9.so
D9_DECODER=$D9_BUILD/dial9-decode
D9_PROGS=$D9_BUILD/progs

D9_TMP=$(mktemp -d "${TMPDIR:-/tmp}/dial9-test.XXXXXX")
D9_PIDS=""
# Helpers that print a value are called as $(...): there d9_fail only ends
# the subshell, so callers write `x=$(d9_proc_dir ...) || exit 1`.

d9_cleanup() {
    local p
    for p in $D9_PIDS; do kill -TERM "$p" 2>/dev/null; done
    for p in $D9_PIDS; do
        # Give each process 5 s to go, then force it.
        local i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$D9_TMP"
}
trap d9_cleanup EXIT
trap 'exit 130' INT TERM

d9_log() { echo "# $*"; }
d9_fail() { echo "FAIL: $*" >&2; exit 1; }
d9_skip() { echo "SKIP: $*" >&2; exit 77; }

# d9_track PID: kill PID when the test exits, whatever happens.
d9_track() { D9_PIDS="$D9_PIDS $1"; }

# d9_require FILE...: the build artefacts a test needs (missing = failure:
# `make check` builds them all before running the tests).
d9_require() {
    local f
    for f in "$@"; do [ -e "$f" ] || d9_fail "$f is not built (run make)"; done
}

# d9_free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
d9_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# d9_wait_port PORT [SECONDS] [PID]: waits until 127.0.0.1:PORT accepts
# connections; fails early when PID (the server) died.
d9_wait_port() {
    local port=$1 secs=${2:-30} pid=${3:-} i=0
    while [ $i -lt $((secs * 10)) ]; do
        if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; then
            return 0
        fi
        [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && d9_fail "server (pid $pid) died before listening on $port"
        sleep 0.1
        i=$((i + 1))
    done
    d9_fail "nothing listens on 127.0.0.1:$port after ${secs}s"
}

# d9_wait_exit PID [SECONDS]: waits for a child process of this shell to
# end and sets D9_RC to its exit status (not a $(...): a subshell cannot
# wait for its parent's children). Fails when it outlives SECONDS.
d9_wait_exit() {
    local pid=$1 secs=${2:-30} i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt $((secs * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    kill -0 "$pid" 2>/dev/null && d9_fail "pid $pid still running after ${secs}s"
    D9_RC=0
    wait "$pid" || D9_RC=$?
    # Reaped: its pid may be reused, so cleanup must not signal it.
    local p keep=""
    for p in $D9_PIDS; do [ "$p" = "$pid" ] || keep="$keep $p"; done
    D9_PIDS=$keep
}

# d9_run_traced DIR CMD...: runs CMD under the agent, recording into DIR;
# a hang (say, a deadlocked hook) fails after D9_RUN_TIMEOUT seconds.
d9_run_traced() {
    local dir=$1
    shift
    timeout -k 5 "${D9_RUN_TIMEOUT:-120}" env LD_PRELOAD="$D9_AGENT" DIAL9_DIR="$dir" DIAL9_QUIET=1 "$@"
}

# d9_start_traced DIR CMD...: starts CMD under the agent in the background,
# sets D9_PID to its pid (CMD itself, not a subshell) and tracks it.
# Redirect the call to redirect CMD's output.
d9_start_traced() {
    local dir=$1
    shift
    LD_PRELOAD=$D9_AGENT DIAL9_DIR=$dir DIAL9_QUIET=1 "$@" &
    D9_PID=$!
    d9_track "$D9_PID"
}

# d9_proc_dir DIR PID: the per-process trace directory (<exe>.<pid>), or
# one inside another's (a child forked after a switch from root).
d9_proc_dir() {
    local d
    for d in "$1"/*."$2" "$1"/*/*."$2"; do
        [ -d "$d" ] && { echo "$d"; return 0; }
    done
    d9_fail "no trace directory for pid $2 in $1 (have: $(ls "$1" 2>/dev/null | tr '\n' ' '))"
}

# d9_assert_sealed PROCDIR: at least one sealed segment, none left open.
d9_assert_sealed() {
    local open
    open=$(find "$1" -name '*.d9.open' | head -n 5)
    [ -z "$open" ] || d9_fail "segments left open: $open"
    [ -n "$(find "$1" -name '*.d9' | head -n 1)" ] || d9_fail "no sealed segment in $1"
}

# d9_assert_check PATH...: dial9-decode check says the trace is intact.
d9_assert_check() {
    local out rc=0
    out=$("$D9_DECODER" check "$@" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || d9_fail "dial9-decode check exited $rc: $out"
}

# d9_sealed_dir DIR PID: the process's trace directory, after asserting that
# its segments are all sealed and intact. Call as dir=$(...) || exit 1.
d9_sealed_dir() {
    local d
    d=$(d9_proc_dir "$1" "$2") || exit 1
    d9_assert_sealed "$d"
    d9_assert_check "$d"
    echo "$d"
}

# d9_decode_to FILE SUBCOMMAND PATH...: runs the decoder, output into FILE.
d9_decode_to() {
    local out=$1
    shift
    "$D9_DECODER" "$@" >"$out" 2>"$out.err" || d9_fail "dial9-decode $* failed: $(head -c 2000 "$out.err")"
}

# d9_py SCRIPT ARG...: runs a python3 snippet (e.g. a JSON assertion). The
# snippet has json, re and sys imported, and fails the test by adding to the
# list `errors` (each printed as a MISMATCH line), by expect(what, got, want),
# or by calling sys.exit("message").
D9_PY_PRELUDE='
import json, re, sys
errors = []
def expect(what, got, want):
    if got != want:
        errors.append("%s: got %r, want %r" % (what, got, want))
def jsonl(path):
    return [json.loads(l) for l in open(path) if l.strip()]
'
D9_PY_FINISH='
for e in errors:
    print("MISMATCH", e)
sys.exit(1 if errors else 0)
'
d9_py() {
    local script=$1
    shift
    python3 -c "$D9_PY_PRELUDE$script$D9_PY_FINISH" "$@" || d9_fail "assertion failed (see above)"
}

# d9_json FILE EXPR: prints the python expression EXPR over the JSON
# document j in FILE, e.g. d9_json out.json 'j["pid"]'.
d9_json() {
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" ||
        d9_fail "cannot read $2 from $1"
}

# d9_user_flag: memcached refuses to run as root without -u; as root it
# switches to nobody, as Debian's memcached.conf has it switch to memcache
# (the agent hands it its trace directory: hooks_cred.c).
d9_user_flag() { if [ "$(id -u)" -eq 0 ]; then echo "-u nobody"; fi; }

# d9_snapshot_threads PID: "tid comm" of every live thread of PID, one a line
# (ground truth for thread names, taken while the service runs).
d9_snapshot_threads() {
    local t
    for t in /proc/"$1"/task/*; do
        echo "${t##*/} $(cat "$t/comm" 2>/dev/null)"
    done
}

# d9_assert_threads_named SNAPSHOT SUMMARY_JSON: every thread of the snapshot
# is in the summary, under the name /proc gave it; except the agent's own
# dial9-* threads, which it must not record.
d9_assert_threads_named() {
    d9_py '
summary = {t["tid"]: t for t in json.load(open(sys.argv[2]))["threads"]}
for line in open(sys.argv[1]):
    tid, name = line.rstrip("\n").split(" ", 1)
    s = summary.get(int(tid))
    if name.startswith("dial9-"):
        if s is not None:
            errors.append("the agent recorded its own thread %s (tid %s)" % (name, tid))
    elif s is None or s.get("name") != name:
        errors.append("tid %s is %r in /proc, %r in the summary" % (tid, name, s and s.get("name")))
' "$1" "$2"
}
