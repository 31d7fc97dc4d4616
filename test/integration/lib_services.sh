# lib_services.sh - helpers of the tests that run real services (nginx,
# node, Tokio) under load; source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib_services.sh"
# shellcheck shell=bash disable=SC2034 # D9S_* variables are for the sourcing tests

D9S_SERVICES=$D9_ROOT/test/services

# d9s_need CMD WHY: skips the test when CMD is not installed.
d9s_need() {
    command -v "$1" >/dev/null || d9_skip "$1 is not installed ($2; scripts/install-deps.sh test)"
}

# d9s_load URL SECONDS: bounded HTTP load from wrk (2 threads, 16
# connections); fails unless requests were answered without errors.
d9s_load() {
    local url=$1 secs=$2 out=$D9_TMP/wrk.out
    timeout -k 5 $((secs + 30)) wrk -t2 -c16 -d"${secs}s" "$url" >"$out" 2>&1 ||
        d9_fail "wrk failed: $(tail -n 20 "$out")"
    grep -q 'requests in' "$out" || d9_fail "wrk ran no load: $(cat "$out")"
    # wrk counts 4xx/5xx answers and socket errors separately.
    ! grep -qE 'Non-2xx|Socket errors' "$out" || d9_fail "wrk saw errors: $(cat "$out")"
    d9_log "load: $(grep -E 'requests in|Requests/sec' "$out" | tr -s ' ' | tr '\n' ';')"
}

# d9s_get URL: prints the body of a GET (fails the subshell on errors).
d9s_get() {
    python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1" ||
        d9_fail "GET $1 failed"
}

# d9s_decode_all TRACE: check, summary --json and events --json of a whole
# trace tree into $D9_TMP/{summary.json,events.jsonl}.
d9s_decode_all() {
    d9_decode_to "$D9_TMP/summary.json" summary --json "$1"
    d9_decode_to "$D9_TMP/events.jsonl" events --json "$1"
}

# d9s_stopped PID SECS WHAT LOG TRACE: waits up to SECS for the service PID
# to exit; fails unless it exited 0 (WHAT names it, LOG says why); then
# decodes its sealed trace directory under TRACE (d9s_decode_all) and sets
# D9S_DIR to it.
d9s_stopped() {
    d9_wait_exit "$1" "$2"
    [ "$D9_RC" -eq 0 ] || d9_fail "$3 exited $D9_RC: $(cat "$4")"
    D9S_DIR=$(d9_sealed_dir "$5" "$1") || exit 1
    d9s_decode_all "$D9S_DIR"
}

# Python helpers for d9_py snippets of these tests: prepend "$D9S_PY".
#   threads_of(path)      {tid: name} from a d9_snapshot_threads file
#   check_dropped(summary) an error unless no event was dropped
#   by_tid(summary_path)  {tid: summary thread}
#   parks(s, *calls)      parks of summary thread s in those calls
#   wake_stats(path)      (sent, edges): sent[(tid, call)] = wake events that
#                         thread sent with that call; edges[(tid, call)] =
#                         the set of wakee tids, or None while the decoder
#                         gives no wakee field
D9S_PY='
def threads_of(path):
    return {int(l.split()[0]): l.split(None, 1)[1].strip() for l in open(path) if l.strip()}
def check_dropped(summary):
    if summary.get("dropped") != 0:
        errors.append("%r events dropped, by thread: %r" % (summary.get("dropped"),
            {t["tid"]: t.get("dropped") for t in summary["threads"] if t.get("dropped")}))
def by_tid(path):
    return {t["tid"]: t for t in json.load(open(path))["threads"]}
EPOLL = ("epoll_wait", "epoll_pwait", "epoll_pwait2")
def parks(s, *calls):
    return sum(s["parks_by_call"].get(c, 0) for c in calls) if s else 0
def wake_stats(path):
    sent, edges, any_wakee = {}, {}, False
    for line in open(path):
        if "\"wake\"" not in line:
            continue
        e = json.loads(line)
        if e["type"] != "wake":
            continue
        key = (e["tid"], e.get("call"))
        sent[key] = sent.get(key, 0) + 1
        if "wakee" in e:
            any_wakee = True
            if e["wakee"] is not None and e["wakee"] > 0:
                edges.setdefault(key, set()).add(e["wakee"])
    if not any_wakee:
        edges = None
    return sent, edges
def woke(edges, waker, call, wakees):
    """True when waker woke one of wakees with call (None: unknown yet)."""
    if edges is None:
        return None
    return bool(edges.get((waker, call), set()) & set(wakees))
'

# d9s_assert_check_killed PROCDIR: like d9_assert_check, for a process that
# was killed: its last segment may stay .d9.open and end inside a block
# (TRUNCATED); any other problem fails.
d9s_assert_check_killed() {
    local out rc=0 last
    out=$("$D9_DECODER" check "$1" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] && return 0
    [ "$rc" -eq 1 ] || d9_fail "dial9-decode check exited $rc: $out"
    last=$(find "$1" -name '*.d9*' | sort | tail -n 1)
    echo "$out" | grep -v '^OK ' | grep -qv "^TRUNCATED $last:" &&
        d9_fail "dial9-decode check: damage beyond the truncated last segment $last: $out"
    d9_log "the killed process's last segment is truncated: $(echo "$out" | grep '^TRUNCATED')"
}

# d9s_build_tokio: builds test/services/tokio_http offline with Debian's
# cargo and crates (not rustup's: CI has a minimal PATH) and prints the
# binary's path. The sources are copied (mtimes kept) under
# build/tokio-target, which caches the build, so the work tree stays clean.
d9s_build_tokio() {
    local cache=$D9_BUILD/tokio-target start
    if [ ! -x /usr/bin/cargo ] || [ ! -x /usr/bin/rustc ]; then
        d9_skip "Debian's cargo and rustc are not installed (scripts/install-deps.sh test)"
    fi
    if ! compgen -G "/usr/share/cargo/registry/tokio-1.*" >/dev/null ||
        ! compgen -G "/usr/share/cargo/registry/hyper-0.14.*" >/dev/null; then
        d9_skip "Debian's tokio/hyper crates are not installed (librust-tokio-dev, librust-hyper-dev)"
    fi
    mkdir -p "$cache" || d9_fail "cannot create $cache"
    start=$(date +%s)
    # The lock keeps concurrent runs from replacing the sources under a
    # build. A clean environment: no rustup toolchain or CARGO_* settings.
    (
        flock 9 && rm -rf "$cache/src" && cp -a "$D9S_SERVICES/tokio_http" "$cache/src" &&
            cd "$cache/src" && env -i PATH=/usr/bin:/bin HOME="$cache" CARGO_HOME="$cache/cargo-home" \
            RUSTC=/usr/bin/rustc CARGO_TARGET_DIR="$cache" /usr/bin/cargo build --quiet
    ) 9>"$cache/.lock" >"$D9_TMP/cargo.out" 2>&1 ||
        d9_fail "cargo build of tokio_http failed: $(tail -n 30 "$D9_TMP/cargo.out")"
    echo "# tokio_http built in $(($(date +%s) - start)) s" >&2
    echo "$cache/debug/tokio_http"
}
