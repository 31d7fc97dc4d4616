#!/bin/bash
# bench/paired.sh - the CPU each real service spends per request with the
# agent off and on, measured at the same time: both servers run at once on
# CPU 0, each loaded by its own load generator on CPU 1 (half the usual
# threads and connections each), and each server's CPU per request is the
# on-CPU ns of all its threads (/proc/PID/task/TID/schedstat, field 1; the
# agent's writer included) over the requests it answered.
#
# Why: interleaved rounds (bench/services.sh) run the two servers one after
# the other, and on this VM the machine changes between the two runs of a
# pair: an A/A control (off against off) moves 5-10% a round there. Run at
# the same time, both servers see the same background load, caches and
# clock, so their cost ratio shows what the agent adds; an A/A pair (off
# against off2, the same server twice) in the same run gives the method's
# noise floor. Each load's p99 is reported as a ratio B/A too: with both
# servers on one CPU the latencies are the pair's, not a lone server's.
# Throughput needs a server alone: services.sh.
#   bench/paired.sh [SERVICE...]      default: redis memcached nginx tokio node
# Environment:
#   BUILD=build          where libdial9.so and dial9-decode are
#   BENCH_ROUNDS=5       rounds; each runs every pair once
#   BENCH_SECS=5         seconds of each wrk / memcaslap load
#   BENCH_REDIS_N=100000 requests per redis-benchmark test, per server
#   BENCH_PAIRS="off:dial9 off:off2"  the pairs A:B (modes of services_lib.sh's
#                        set_mode, e.g. dial9:dial9+DIAL9_BUFFER_EVENTS=4096)
#   BENCH_PAIRS_TSV=FILE also keep the per-round rows (pairs.tsv's columns) there
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${BENCH_ROUNDS:-5}
read -r -a PAIRS <<<"${BENCH_PAIRS:-off:dial9 off:off2}"
SERVICES=("$@"); [ ${#SERVICES[@]} -gt 0 ] || SERVICES=(redis memcached nginx tokio node)
LOAD_SHARE=2

tmp=$(mktemp -d /tmp/d9paired.XXXXXX)
. "$ROOT/bench/services_lib.sh" # BUILD, AGENT, SECS, REDIS_N, the services
trap pair_cleanup EXIT
trap 'exit 130' INT TERM
[ -f "$AGENT" ] || { echo "paired: build first (make BUILD=$BUILD all)" >&2; exit 2; }

# requests SVC OUT: requests answered by the load whose output is OUT.
requests() {
    case $1 in
        redis) echo $((2 * REDIS_N)) ;;
        memcached) awk -v s="$SECS" '/^Run time/ {for (i = 1; i <= NF; i++) if ($i == "TPS:") t = $(i + 1)} END {printf "%d\n", t * s}' "$2" ;;
        *) awk '/requests in/ {print $1}' "$2" ;;
    esac
}

# run_pair SVC A B ROUND: both servers, both loads at once; appends "svc pair
# round cpu_a_ns req_a cpu_b_ns req_b writer_b_ns p99_a_ms p99_b_ms" to pairs.tsv.
run_pair() {
    local svc=$1 a=$2 b=$3 r=$4 ca cb wb w0
    start_pair "$svc" "$a" "$b" "$r" "$tmp" || return
    ca=$(tree_ns "$ra"); cb=$(tree_ns "$rb"); read -r _ w0 <<<"$(writer_cpu "$rb")"
    "load_$svc" "$pa" 1 "$tmp/a.load" >"$tmp/a.res" &
    local la=$!
    "load_$svc" "$pb" 1 "$tmp/b.load" >"$tmp/b.res"
    wait "$la"
    ca=$(($(tree_ns "$ra") - ca)); cb=$(($(tree_ns "$rb") - cb)); read -r _ wb <<<"$(writer_cpu "$rb")"
    stop_pair "$svc"
    printf '%s\t%s:%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$svc" "$a" "$b" "$r" "$ca" "$(requests "$svc" "$tmp/a.load")" \
        "$cb" "$(requests "$svc" "$tmp/b.load")" "$((wb - w0))" "$(cut -d' ' -f2 "$tmp/a.res")" "$(cut -d' ' -f2 "$tmp/b.res")" >>"$tmp/pairs.tsv"
}

run_pair_rounds "$tmp/pairs.tsv"
[ -z "${BENCH_PAIRS_TSV:-}" ] || cp "$tmp/pairs.tsv" "$BENCH_PAIRS_TSV"

python3 - "$tmp/pairs.tsv" "$ROUNDS" "$SECS" "$load0" "$load1" "$took" <<'EOF'
import sys, statistics as st
sys.path.insert(0, "bench")
from verdicts import cost_ratios, p99_ratios, rounds_below
path, rounds, secs, load0, load1, took = sys.argv[1:7]
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
def per_req(ns, req):
    try:
        return int(ns) / 1000.0 / int(req) if int(req) > 0 else None
    except ValueError:
        return None
print("## Paired runs: CPU per request, both servers at once (median of %s rounds)" % rounds)
print()
print("Both servers pinned to CPU 0 at the same time, each with its own load generator on CPU 1 "
      "(half the threads and connections of services.sh each; %s s wrk and memcaslap loads); CPU = "
      "on-CPU ns of every thread of the server's process tree (/proc/PID/task/TID/schedstat), the "
      "agent's writer included; load average %s at the start, %s at the end; %s s in all." % (secs, load0, load1, took))
print()
print("p99: each load's own 99th percentile latency; both servers share CPU 0, so the latencies are "
      "the pair's, not a lone server's, and only their ratio means something.")
print()
print("Rounds B < A: in how many rounds B spent less CPU per request than A (a sign count: with no "
      "difference, each round is a coin toss).")
print()
print("| service | pair A:B | A CPU us/request | B CPU us/request | cost ratio B/A (range) | rounds B < A | B's writer us/request | p99 ratio B/A (range) |")
print("|---|---|---|---|---|---|---|---|")
cost, p99r = cost_ratios(), p99_ratios()

for svc in dict.fromkeys(r[0] for r in rows):
    for pair in dict.fromkeys(r[1] for r in rows if r[0] == svc):
        a, b, ratio, w, p99 = [], [], [], [], []
        for r in rows:
            if r[0] != svc or r[1] != pair:
                continue
            x, y = per_req(r[3], r[4]), per_req(r[5], r[6])
            if x and y:
                a.append(x); b.append(y); ratio.append(y / x)
                wr = per_req(r[7], r[6])
                if wr is not None and pair.split(":")[1].startswith("dial9"):
                    w.append(wr)
            try:
                if float(r[8]) > 0:
                    p99.append(float(r[9]) / float(r[8]))
            except (ValueError, IndexError):
                pass
        if not ratio:
            print("| %s | %s | n/a | n/a | n/a | n/a | n/a | n/a |" % (svc, pair))
            continue
        print("| %s | %s | %.2f | %.2f | %s | %s | %s | %s |" % (svc, pair, st.median(a), st.median(b),
              cost.cell(svc, pair, ratio, bold=True), rounds_below(ratio), "%.3f" % st.median(w) if w else "-",
              p99r.cell(svc, pair, p99) if p99 else "n/a"))
print()
cost.summary("CPU per request added by dial9 <= 1% (cost ratio <= 1.01)")
p99r.summary("p99 of the dial9 server's load <= 1.02 x the off server's")
EOF
