#!/bin/bash
# bench/writer_cycle.sh - where the writer thread's CPU goes on a live
# service: a part paid per block (the cycle's wake-up, its system calls, a
# block's fixed costs) and a part paid per event (drain, encode, CRC, LZ4,
# the bytes written). A service (redis unless BENCH_WC_SERVICE names another)
# runs alone on CPU 0 under the agent with each SETTING in turn, round by
# round, and gets a fixed request rate from bench/latency on CPU 1 (as
# bench/latency.sh, one server), or none at a rate of 0 (the writer of an
# idle service). The writer's
# on-CPU ns (/proc/PID/task/TID/schedstat field 1, from its start to the end
# of the load) over the trace's blocks and events (dial9-decode check) give
# ns per event and per block. A setting that cycles more often (DIAL9_FLUSH_MS
# below the time a ring takes to fill half) makes more, smaller blocks of the
# same events: what it costs more, over the blocks it makes more, is what a
# block costs. Two builds compare the same way, interleaved:
# LD_PRELOAD=A.so LD_PRELOAD=B.so (the ratio column: writer ns against the
# first setting's in the same round).
#   bench/writer_cycle.sh [SETTING...]
#   SETTING: VAR=V[+VAR=V...], as services_lib's dial9+ modes;
#   default: DIAL9_FLUSH_MS=250 (the default) DIAL9_FLUSH_MS=20 DIAL9_FLUSH_MS=5
# Environment: BUILD=build, BENCH_ROUNDS=3, BENCH_LAT_SECS=8, BENCH_LAT_CONNS=64,
# BENCH_WC_SERVICE=redis (or memcached, nginx, tokio, node), and its rate in
# requests/s, BENCH_LAT_RATE_<service>: as bench/latency.sh's defaults
# (redis and memcached 10000, nginx 2000, tokio 4000, node 1000).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${BENCH_ROUNDS:-3}
LSECS=${BENCH_LAT_SECS:-8}
CONNS=${BENCH_LAT_CONNS:-64}
SVC=${BENCH_WC_SERVICE:-redis}
SETTINGS=("$@"); [ ${#SETTINGS[@]} -gt 0 ] || SETTINGS=(DIAL9_FLUSH_MS=250 DIAL9_FLUSH_MS=20 DIAL9_FLUSH_MS=5)

tmp=$(mktemp -d /tmp/d9wcycle.XXXXXX)
. "$ROOT/bench/services_lib.sh" # BUILD, AGENT, start_server, writer_cpu, rate_of, target_of
declare -F "start_$SVC" >/dev/null || { echo "writer_cycle: unknown service $SVC" >&2; rm -rf "$tmp"; exit 2; }
RATE=$(rate_of "$SVC")
read -r -a TARGET <<<"$(target_of "$SVC")" # protocol, then the path for http
roots=()
trap pair_cleanup EXIT
trap 'exit 130' INT TERM
CLIENT=$BUILD/bench/latency
DECODE=$BUILD/dial9-decode
[ -f "$AGENT" ] && [ -x "$CLIENT" ] && [ -x "$DECODE" ] || { echo "writer_cycle: build first (make BUILD=$BUILD all)" >&2; exit 2; }

# run_pair SVC "" SETTING ROUND (run_pair_rounds' call, one server a "pair"):
# appends "setting round writer_ns blocks events" to runs.tsv.
run_pair() {
    local setting=$3 r=$4 d=$tmp/run port w blocks events
    rm -rf "$d"; mkdir -p "$d"
    port=$(free_port)
    set_mode "dial9+$setting" "$d"; start_server "$SVC" "$port" "$d"; roots=("$srv_pid")
    wait_port "$port" "$srv_pid" 60 || { echo "writer_cycle: $setting round $r: $SVC did not start" >&2; stop_server "$SVC" "$srv_pid"; return; }
    if [ "$RATE" = 0 ]; then
        sleep "$LSECS"
    else
        timeout -k 5 $((LSECS + 30)) taskset -c 1 "$CLIENT" "${TARGET[0]}" "$port" "$RATE" "$LSECS" "$CONNS" "${TARGET[@]:1}" >/dev/null 2>"$d/client.err" ||
            { echo "writer_cycle: $setting round $r: $(head -c 200 "$d/client.err")" >&2; stop_server "$SVC" "$srv_pid"; return; }
    fi
    read -r _ w <<<"$(writer_cpu "$srv_pid")"
    stop_server "$SVC" "$srv_pid"; roots=()
    # "OK path (N blocks, M events)", one line a segment
    read -r blocks events <<<"$("$DECODE" check "$d/trace" | awk '/^OK/ {b += substr($3, 2); e += $5} END {print b + 0, e + 0}')"
    printf '%s\t%s\t%s\t%s\t%s\n' "$setting" "$r" "$w" "$blocks" "$events" >>"$tmp/runs.tsv"
}

SERVICES=("$SVC")
PAIRS=(); for s in "${SETTINGS[@]}"; do PAIRS+=(":$s"); done
run_pair_rounds "$tmp/runs.tsv" # every setting once a round; load0, load1, took
[ ${#have[@]} -gt 0 ] || exit 2

python3 - "$tmp/runs.tsv" "$ROUNDS" "$RATE" "$LSECS" "$load0" "$load1" "$took" "$SVC" <<'PY'
import sys, statistics as st
path, rounds, rate, secs, load0, load1, took, svc = sys.argv[1:9]
runs = {}
for l in open(path):
    s, r, w, b, e = l.rstrip("\n").split("\t")
    if int(b) and int(e):
        runs.setdefault(s, {})[r] = (int(w), int(b), int(e))
print("## The writer's CPU per block and per event (%s at %s requests/s, median of %s rounds)" % (svc, rate, rounds))
print()
print("%s alone on CPU 0 under the agent with each setting in turn, round by round; bench/latency on CPU 1, "
      "%s s of load (at a rate of 0, %s s idle). Writer ns: on-CPU ns of the dial9-writer threads of its "
      "processes (schedstat) from their start to the end of the load; blocks and events: `dial9-decode check` "
      "of the trace. Load average %s at the start, %s at the end; %s s in all." % (svc, secs, secs, load0, load1,
                                                                                  took))
print()
reqs = int(rate) * float(secs) # sent by bench/latency, the same in every run
print("| setting | writer ms | writer us a request | blocks | events | events/block | writer ns/event (range) | "
      "writer us/block | writer ns/event, ratio to the first setting's in its round (range) |")
print("|---|---|---|---|---|---|---|---|---|")
pts = []
first = {r: x[0] / x[2] for r, x in runs[next(iter(runs))].items()}
for s, rs in runs.items():
    v = list(rs.values())
    w = st.median(x[0] for x in v); b = st.median(x[1] for x in v); e = st.median(x[2] for x in v)
    per = [x[0] / x[2] for x in v]
    ratio = [x[0] / x[2] / first[r] for r, x in rs.items() if r in first]
    pts.append((w, b, e))
    print("| %s | %.2f | %s | %d | %d | %d | %.1f (%.1f-%.1f) | %.1f | %.3f (%.3f-%.3f) |" % (
        s, w / 1e6, "%.3f" % (w / 1e3 / reqs) if reqs else "-", b, e, e / b, st.median(per), min(per), max(per),
        w / b / 1e3, st.median(ratio), min(ratio), max(ratio)))
print()
# The events are the same in every setting (same rate and time), so what one
# setting costs more than the previous, over the blocks it makes more, is
# what a block costs at that block size (the writer's caches are warmer the
# more often it runs, so it is not one constant).
names = list(runs)
w0, b0, e0 = pts[0]
for i in range(1, len(pts)):
    (wa, ba, ea), (wb, bb, eb) = pts[i - 1], pts[i]
    if abs(bb - ba) > 0.2 * ba: # settings that differ in their blocks, not two builds
        x = (wb - wa) / (bb - ba)
        print("- %s against %s: %.1f us a block more made (%d -> %d events a block); blocks at that cost would be "
              "%.0f%% of the writer's CPU at %s, and an event %.1f ns" % (names[i], names[i - 1], x / 1e3, ea / ba,
                                                                         eb / bb, 100 * x * b0 / w0, names[0],
                                                                         (w0 - x * b0) / e0))
if len(pts) < 2:
    print("- one setting: give two or more to split the cost")
PY
