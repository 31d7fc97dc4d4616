#!/bin/bash
# bench/latency.sh - the latency clients see at a steady load below capacity,
# agent off and on. Two servers of a service run at once on CPU 0 (as in
# bench/paired.sh), and one open-loop client, bench/latency, on CPU 1 sends
# each of them the same fixed request rate, request i of both due at the same
# time; latency runs from when a request was due to its complete response
# (64 connections to each server, one request in flight on each). Both
# servers see the same client, clock and stalls of this VM, so the ratio of
# their percentiles is what the agent changes; an A/A pair (off against
# off2, the same server twice) in the same rounds gives the method's floor.
# Each server's CPU per request at that rate is measured too (on-CPU ns of
# its process tree over the client's run / requests sent): both answer the
# same requests at the same times, so neither batches more than the other,
# as two servers each saturated by its own load can (paired.sh: nginx's A/A
# moved 0.72-1.31 there, 0.99-1.03 here).
#
# Why besides services.sh and paired.sh: those saturate the servers, and at
# saturation any CPU the agent adds lengthens the queue, so their p99 moves
# with the CPU cost. A service in production runs below capacity; there the
# question is whether the agent changes what a client waits. (A server
# alone, off and on in turn, was tried first: its p99 moved 0.02-2.9x
# between two runs of the same server on this VM: docs/BENCH-HISTORY.md.)
#   bench/latency.sh [SERVICE...]   default: redis memcached nginx tokio node
# Environment:
#   BUILD=build            where libdial9.so and bench/latency are
#   BENCH_ROUNDS=5         rounds; each runs every pair once
#   BENCH_LAT_SECS=6       seconds of each load (the first 10%, at least 0.5 s,
#                          warm up and are not counted)
#   BENCH_LAT_CONNS=64     connections to each server
#   BENCH_LAT_RATE_<svc>   requests per second to each server; defaults, so
#                          that the two servers together use about half of
#                          CPU 0 (a quarter of what one answers saturated in
#                          services.sh): redis 10000, memcached 10000, nginx
#                          2000, tokio 4000, node 1000 (node at 1500 took 85%
#                          of CPU 0 on a slow day: p99 45-155 ms, many late)
#   BENCH_PAIRS="off:dial9 off:off2"  the pairs A:B, as in paired.sh
#   BENCH_LAT_TSV=FILE     also keep the per-round rows (runs.tsv's columns) there
#   BENCH_LAT_TITLE=TEXT   the heading of the report (default: "Latency at a
#                          fixed request rate, both servers at once")
# A pair's B may be a peer (strace, uftrace, lttng: services_lib.sh's modes),
# e.g. BENCH_PAIRS="off:dial9 off:lttng off:uftrace off:strace"; its CPU per
# request then holds the tracer's own (see run_pair).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${BENCH_ROUNDS:-5}
LSECS=${BENCH_LAT_SECS:-6}
CONNS=${BENCH_LAT_CONNS:-64}
read -r -a PAIRS <<<"${BENCH_PAIRS:-off:dial9 off:off2}"
SERVICES=("$@"); [ ${#SERVICES[@]} -gt 0 ] || SERVICES=(redis memcached nginx tokio node)

tmp=$(mktemp -d /tmp/d9latency.XXXXXX)
. "$ROOT/bench/services_lib.sh" # BUILD, AGENT, the services, start_pair
trap pair_cleanup EXIT
trap 'exit 130' INT TERM
CLIENT=$BUILD/bench/latency
[ -f "$AGENT" ] && [ -x "$CLIENT" ] || { echo "latency: build first (make BUILD=$BUILD all)" >&2; exit 2; }

# run_pair SVC A B ROUND: appends "svc pair round", for A then B "sent late
# p50 p99 p999 max" (us), then the on-CPU ns of A's and B's process trees
# and of B's dial9-writer threads over the client's run, to runs.tsv. B may
# be a peer: its ns then hold the tracer's own (peer_ns).
lttng_done() { lttng_end; rm -rf "$tmp/peer"; } # a pair's trace is not kept: a run's would fill /tmp
run_pair() {
    local svc=$1 a=$2 b=$3 r=$4 proto path out
    if [ "$b" = lttng ] && ! lttng_begin "$tmp/peer"; then
        echo "latency: $svc $a:$b round $r: lttng session failed" >&2; return
    fi
    start_pair "$svc" "$a" "$b" "$r" "$tmp" || { [ "$b" = lttng ] && lttng_done; return; }
    read -r proto path <<<"$(target_of "$svc")"
    local ca cb w0 wb
    ca=$(tree_ns "$ra"); cb=$(peer_ns "$rb" "$b"); read -r _ w0 <<<"$(writer_cpu "$rb")"
    out=$(timeout -k 5 $((LSECS + 30)) taskset -c 1 "$CLIENT" "$proto" "$pa,$pb" "$(rate_of "$svc")" "$LSECS" "$CONNS" $path \
        2>"$tmp/client.err")
    ca=$(($(tree_ns "$ra") - ca)); cb=$(($(peer_ns "$rb" "$b") - cb)); read -r _ wb <<<"$(writer_cpu "$rb")"
    stop_pair "$svc"
    [ "$b" = lttng ] && lttng_done
    # "port P sent N late N p50_us X p99_us X p999_us X max_us X", A's line then B's
    if [ "$(wc -l <<<"$out")" != 2 ]; then
        echo "latency: $svc $a:$b round $r: $(head -c 200 "$tmp/client.err")" >&2; return
    fi
    printf '%s\t%s:%s\t%s\t%s\t%s\t%s\t%s\n' "$svc" "$a" "$b" "$r" \
        "$(awk '{printf "%s%s\t%s\t%s\t%s\t%s\t%s", (NR > 1 ? "\t" : ""), $4, $6, $8, $10, $12, $14}' <<<"$out")" \
        "$ca" "$cb" "$((wb - w0))" >>"$tmp/runs.tsv"
}

# A peer goes on B's side only (run_pair sets up and counts B's); pairs
# whose peer cannot run here are left out.
keep=()
for p in "${PAIRS[@]}"; do
    case ${p%%:*} in strace | ltrace | uftrace | lttng) echo "latency: a peer goes on B's side of a pair: $p" >&2; exit 2 ;; esac
    peer_available "${p#*:}" && keep+=("$p")
done
PAIRS=("${keep[@]}")
run_pair_rounds "$tmp/runs.tsv"
[ -z "${BENCH_LAT_TSV:-}" ] || cp "$tmp/runs.tsv" "$BENCH_LAT_TSV"
rates=$(for svc in "${have[@]}"; do printf '%s %s/s, ' "$svc" "$(rate_of "$svc")"; done)

python3 - "$tmp/runs.tsv" "$ROUNDS" "$LSECS" "$CONNS" "$load0" "$load1" "$took" "${rates%, }" \
    "${BENCH_LAT_TITLE:-Latency at a fixed request rate, both servers at once}" <<'PY'
import sys, statistics as st
sys.path.insert(0, "bench")
from verdicts import cost_ratios, p99_ratios, rounds_below
path, rounds, secs, conns, load0, load1, took, rates, title = sys.argv[1:10]
Q = ("p50", "p99", "p999")
rows = []
for l in open(path):
    f = l.rstrip("\n").split("\t")
    side = lambda o: dict(sent=int(f[o]), late=int(f[o + 1]), p50=float(f[o + 2]), p99=float(f[o + 3]), p999=float(f[o + 4]))
    cpu = (int(f[15]), int(f[16]), int(f[17]))
    rows.append((f[0], f[1], side(3), side(9), cpu))
print("## %s (median of %s rounds)" % (title, rounds))
print()
print("Two servers of a service pinned to CPU 0 at the same time; one open-loop client (`bench/latency`) on "
      "CPU 1 sends each the same fixed rate (%s), request i of both due at the same time, %s connections to "
      "each with one request in flight; %s s per run of which the first 10%% (at least 0.5 s) is not counted. "
      "Latency from when a request was due to its complete response (CLOCK_MONOTONIC). Load average %s at "
      "the start, %s at the end; %s s in all." % (rates, conns, secs, load0, load1, took))
print()
print("| service | pair A:B | A p50 / p99 / p99.9 us | B p50 / p99 / p99.9 us | p50 ratio B/A (range) | "
      "p99 ratio B/A (range) | p99.9 ratio B/A (range) | late sends A, B |")
print("|---|---|---|---|---|---|---|---|")
p99r = p99_ratios()
for svc in dict.fromkeys(r[0] for r in rows):
    for pair in dict.fromkeys(r[1] for r in rows if r[0] == svc):
        rs = [(a, b) for s, p, a, b, _ in rows if s == svc and p == pair]
        med = lambda side, q: "%.1f" % st.median(x[side][q] for x in rs)
        ratio = {q: [b[q] / a[q] for a, b in rs if a[q] > 0] for q in Q}
        cell = lambda v: "%.3f (%.3f-%.3f)" % (st.median(v), min(v), max(v)) if v else "n/a"
        if ratio["p99"]:
            p99r.cell(svc, pair, ratio["p99"])
        late = ", ".join("%d of %d" % (sum(x[k]["late"] for x in rs), sum(x[k]["sent"] for x in rs)) for k in (0, 1))
        print("| %s | %s | %s | %s | %s | %s |" % (svc, pair, " / ".join(med(0, q) for q in Q),
              " / ".join(med(1, q) for q in Q), " | ".join(cell(ratio[q]) for q in Q), late))
print()
p99r.summary("p99 at a fixed rate below capacity with dial9 <= 1.02 x off")
print()
print("CPU per request at that rate: on-CPU ns of every thread of each server's process tree "
      "(/proc/PID/task/TID/schedstat, the agent's writer included) over the client's run, over the "
      "requests sent to it (the same for both). Both servers answer the same requests at the same "
      "times, so neither batches more than the other, as they can when each is saturated by its "
      "own load (paired.sh). A peer's CPU holds its tracer's: strace and uftrace run the server as their "
      "child (the tree's root is the tracer), and for LTTng-UST the session daemon and its consumer, which "
      "write its trace, are added to the server's.")
print()
print("| service | pair A:B | A CPU us/request | B CPU us/request | cost ratio B/A (range) | rounds B < A | B's writer us/request |")
print("|---|---|---|---|---|---|---|")
cost = cost_ratios()
for svc in dict.fromkeys(r[0] for r in rows):
    for pair in dict.fromkeys(r[1] for r in rows if r[0] == svc):
        us = [(c[0] / 1e3 / a["sent"], c[1] / 1e3 / b["sent"], c[2] / 1e3 / b["sent"]) for s, p, a, b, c in rows
              if s == svc and p == pair and c[0] > 0 and c[1] > 0 and a["sent"] > 0 and b["sent"] > 0]
        if not us:
            continue
        ratio = [y / x for x, y, _ in us]
        w = [z for _, _, z in us]
        print("| %s | %s | %.2f | %.2f | %s | %s | %s |" % (svc, pair, st.median(x for x, _, _ in us),
              st.median(y for _, y, _ in us), cost.cell(svc, pair, ratio, bold=True), rounds_below(ratio),
              "%.3f" % st.median(w) if any(w) else "-"))
print()
cost.summary("CPU per request added by dial9 at a fixed rate <= 1% (cost ratio <= 1.01)")
PY
