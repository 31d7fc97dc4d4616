#!/bin/bash
# bench/services.sh - real, unmodified services with the agent off vs on (and,
# with BENCH_PEERS=1, under strace -f, ltrace -f, uftrace record --force and
# LTTng-UST's pthread wrapper), interleaved round by round, the server pinned
# to CPU 0 and the load generator to CPU 1, loads bounded in time on
# 127.0.0.1. Prints a Markdown report: median throughput and p99 per mode,
# ratios to "off" with a verdict per target, trace bytes/event and the writer
# thread's CPU per million events.
#   bench/services.sh [SERVICE...]      default: redis memcached nginx tokio node
# Environment:
#   BUILD=build         where libdial9.so, dial9-decode (and tokio-target/) are
#   BENCH_ROUNDS=5      rounds of off / dial9 / off2 (/ peers); off2 is off
#                       again, an A/A control: the throughput and p99
#                       verdicts are read against its spread
#   BENCH_SECS=5        seconds of each wrk / memcaslap load
#   BENCH_REDIS_N=100000  requests per redis-benchmark test (SET and GET)
#   BENCH_PEERS=0       1: also strace, uftrace, LTTng (all services) and
#                       ltrace (memcached only, a 3 s load: it is ~1000x slower)
#   BENCH_PEER_ROUNDS=3 rounds that include the peers and dial9_perf (the first ones)
#   BENCH_MODES="off dial9 ..."  the modes to run instead (off must be one;
#                       without off2 the verdicts have no A/A control): also
#                       dial9_nosched (DIAL9_SCHED=0: no schedstat reads),
#                       dial9_preempt (DIAL9_PREEMPT=1: per-thread perf_event
#                       context switches too; with BENCH_PEERS=1 in the peer rounds)
#                       dial9_perf (dial9 with `perf record -C 0` over the
#                       load: where CPU 0's time goes), and dial9+VAR=V+...
#                       (services_lib.sh's set_mode), e.g. a variant agent as
#                       dial9+LD_PRELOAD=/path/variant.so
#   BENCH_KEEP=DIR      keep the raw per-run data (runs.tsv, load outputs) in DIR
#   BENCH_REPORT=FILE   no runs: the report of a kept runs.tsv
#   BENCH_FIELDS=1      where the bytes of the first dial9 trace of each service go
#                       (bench/trace_bytes.py --fields); 0: not
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# The services, modes and process helpers (start_SVC, load_SVC, set_mode, ...);
# BUILD, AGENT, SECS, REDIS_N.
. "$ROOT/bench/services_lib.sh"
DEC=$BUILD/dial9-decode
ROUNDS=${BENCH_ROUNDS:-5}
PEERS=${BENCH_PEERS:-0}
PEER_ROUNDS=${BENCH_PEER_ROUNDS:-3}
FIELDS=${BENCH_FIELDS:-1}
LTRACE_SECS=3
SERVICES=("$@"); [ ${#SERVICES[@]} -gt 0 ] || SERVICES=(redis memcached nginx tokio node)
TCK=$(getconf CLK_TCK)

tmp=$(mktemp -d /tmp/d9bench.XXXXXX)
cleanup() {
    [ -n "${srv_root:-}" ] && kill -KILL "$srv_root" 2>/dev/null
    lttng_quit
    if [ -n "${BENCH_KEEP:-}" ]; then mkdir -p "$BENCH_KEEP" && cp "$tmp"/runs.tsv "$tmp"/*.load "$tmp"/fields.* "$tmp"/perf.* "$BENCH_KEEP"/ 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
note() { echo "services: $*" >&2; }
# run_one SVC MODE ROUND: one server start, one load, one stop; appends a row
# to runs.tsv: svc mode round throughput p99_ms events bytes writer_ticks
# writer_ns dropped load_secs tracer_bytes note raw_bytes_per_event events_per_block
# cpu_ticks (utime+stime of the server's process tree, tracer included, during the load)
run_one() {
    local svc=$1 mode=$2 r=$3 port dir=$tmp/run res thr p99 extra pid ev=0 bytes=0 wt=0 wns=0 drop=0 tb=0 t0 t1 secs why="" rawb="" c0 cpu=""
    local scale=1 load=$tmp/$svc.${mode//\//_}.$r.load # a mode may name a library by path
    case $mode in strace | uftrace) scale=0.25 ;; ltrace) scale=0.002 ;; esac
    rm -rf "$dir"; mkdir -p "$dir/svc"; cp -a "$tmp/svc.$svc/." "$dir/svc/" 2>/dev/null
    port=$(free_port); set_mode "$mode" "$dir"
    [ "$mode" = lttng ] && { lttng_begin "$dir" || why="lttng session failed"; }
    [ "$mode" = ltrace ] && SECS_SAVE=$SECS && SECS=$LTRACE_SECS
    start_server "$svc" "$port" "$dir"
    srv_root=$srv_pid
    if ! wait_port "$port" "$srv_root" 60; then
        why="server did not start: $(tail -c 300 "$dir/server.out" | tr '\n' ' ')"
    else
        sleep 0.3
        c0=$(tree_cpu "$srv_root")
        t0=$(date +%s.%N)
        [ "$mode" = dial9_perf ] && { perf record -q -e cpu-clock -C 0 -g -o "$tmp/perf.$svc.$r.data" -- sleep "$SECS" >/dev/null 2>&1 & }
        res=$("load_$svc" "$port" "$scale" "$load")
        t1=$(date +%s.%N)
        [ "$mode" = dial9_perf ] && { wait $!; for p in $(descendants "$srv_root"); do cat /proc/"$p"/task/*/comm; done >"$tmp/perf.$svc.$r.comms" 2>/dev/null; }
        read -r wt wns <<<"$(writer_cpu "$srv_root")"
        cpu=$(($(tree_cpu "$srv_root") - c0))
    fi
    [ "$mode" = ltrace ] && SECS=$SECS_SAVE
    secs=$(awk -v a="${t0:-0}" -v b="${t1:-0}" 'BEGIN{printf "%.2f", b-a}')
    stop_server "$svc" "$srv_root" || why="${why:+$why; }killed after 60 s"
    srv_root=""
    [ "$mode" = lttng ] && lttng_end
    read -r thr p99 extra <<<"${res:-}"
    [ -n "${extra:-}" ] && why="${why:+$why; }load tool reported $extra"
    [ -n "${thr:-}" ] || { thr=NA; p99=NA; why="${why:+$why; }no load result: $(tail -c 200 "$load" 2>/dev/null | tr '\n' ' ')"; }
    if [[ $mode == dial9* ]] && [ -d "$dir/trace" ]; then
        ev=$("$DEC" summary --json "$dir/trace" 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["events"], s.get("dropped", 0))') ||
            why="${why:+$why; }decode failed"
        read -r ev drop <<<"${ev:-0 0}"
        "$DEC" check "$dir/trace" >/dev/null 2>&1 || why="${why:+$why; }dial9-decode check failed"
        bytes=$(find "$dir/trace" -name '*.d9*' -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
        # raw (varint, before LZ4) bytes/event and events per block
        rawb=$(python3 "$ROOT/bench/trace_bytes.py" "$dir/trace" 2>/dev/null |
            sed -n 's/^segments.*events [0-9]* (\([0-9]*\) per block).*/\1/p; s/.*raw (varint, before LZ4) \([0-9.]*\):.*/\1/p' | tac | tr '\n' '\t')
        [ "$mode" = dial9 ] && [ "$FIELDS" = 1 ] && [ ! -s "$tmp/fields.$svc" ] &&
            python3 "$ROOT/bench/trace_bytes.py" --fields "$DEC" "$dir/trace" >"$tmp/fields.$svc" 2>/dev/null
    fi
    case $mode in
        strace | ltrace | uftrace | lttng) tb=$(du -sb "$dir" 2>/dev/null | cut -f1) ;;
    esac
    [ -n "$rawb" ] || rawb=$'\t\t'
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n' "$svc" "$mode" "$r" "$thr" "$p99" "$ev" "$bytes" "$wt" "$wns" \
        "$drop" "$secs" "$tb" "$why" "$rawb" "$cpu" >>"$tmp/runs.tsv"
    note "$svc $mode round $r: $thr /s, p99 $p99 ms${why:+ ($why)}"
}

# ---- checks and set-up
[ -x "$DEC" ] && [ -f "$AGENT" ] || { echo "services: build first (make BUILD=$BUILD all)" >&2; exit 2; }
have=()
for svc in "${SERVICES[@]}"; do
    svc_available "$svc" && have+=("$svc") || echo "- $svc: skipped (not installed; scripts/install-deps.sh bench)"
done
for svc in "${have[@]}"; do mkdir -p "$tmp/svc.$svc"; done
modes=(off dial9 off2) # off2 after dial9: it sees the order's lean at least as much
if [ -n "${BENCH_MODES:-}" ]; then
    read -r -a modes <<<"$BENCH_MODES"
elif [ "$PEERS" = 1 ]; then
    modes+=(dial9_preempt strace uftrace lttng)
fi
keep=()
for mode in "${modes[@]}"; do peer_available "$mode" && keep+=("$mode"); done
modes=("${keep[@]}")
: >"$tmp/runs.tsv"
load0=$(cut -d' ' -f1-3 /proc/loadavg); start=$(date +%s)
[ -n "${BENCH_REPORT:-}" ] && { cp "$BENCH_REPORT" "$tmp/runs.tsv"; cp "${BENCH_REPORT%/*}"/fields.* "${BENCH_REPORT%/*}"/perf.* "$tmp"/ 2>/dev/null
    ROUNDS=0; load0=${BENCH_REPORT_LOAD:-$load0}; }
for r in $(seq "$ROUNDS"); do
    for svc in "${have[@]}"; do
        # Even rounds run the modes in reverse: a bias of the second run
        # of a pair (the machine warmer, sockets in TIME_WAIT) cancels out.
        order=("${modes[@]}")
        [ $((r % 2)) = 0 ] && for ((i = ${#modes[@]} - 1; i >= 0; i--)); do order[${#modes[@]} - 1 - i]=${modes[i]}; done
        for mode in "${order[@]}"; do
            [ "$mode" = ltrace ] && continue
            case $mode in off | off2 | dial9 | dial9_nosched) ;; *) [ "$r" -le "$PEER_ROUNDS" ] || continue ;; esac
            run_one "$svc" "$mode" "$r"
        done
        { [ "$PEERS" = 1 ] && [ -z "${BENCH_MODES:-}" ] || [[ " ${BENCH_MODES:-} " == *" ltrace "* ]]; } && [ "$r" -le "$PEER_ROUNDS" ] && [ "$svc" = memcached ] && command -v ltrace >/dev/null && run_one "$svc" ltrace "$r"
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report
python3 - "$tmp/runs.tsv" "$ROUNDS" "$SECS" "$REDIS_N" "$PEER_ROUNDS" "$LTRACE_SECS" "$TCK" "$load0" "$load1" "$(($(date +%s) - start))" <<'EOF'
import sys, statistics as st
sys.path.insert(0, "bench")
from verdicts import verdict_line
path, rounds, secs, redis_n, peer_rounds, ltrace_secs, tck = sys.argv[1:8]
load0, load1, took = sys.argv[8:11]
tck = int(tck)
rows = [(l.rstrip("\n").split("\t") + ["", "", ""])[:16] for l in open(path) if l.strip()]
if rounds == "0" and rows:  # BENCH_REPORT: the rounds of the kept run
    rounds = str(max(int(r[2]) for r in rows))
svcs = list(dict.fromkeys(r[0] for r in rows))
modes = list(dict.fromkeys(r[1] for r in rows))
def num(x):
    try: return float(x)
    except ValueError: return None
def get(svc, mode, col):
    return {int(r[2]): num(r[col]) for r in rows if r[0] == svc and r[1] == mode and num(r[col]) is not None}
med = lambda v: st.median(v) if v else None
def f(x, d=0):
    return "n/a" if x is None else ("%.*f" % (d, x))
def rng(v, d=0):
    return "%s-%s" % (f(min(v), d), f(max(v), d)) if v else "n/a"
def ratio(svc, mode, col):
    """the median and the list of the per-round ratios mode/off (the two runs of
    a round are back to back: a pair shares the machine's background load)"""
    a, b = get(svc, "off", col), get(svc, mode, col)
    per = [b[k] / a[k] for k in b if k in a and a[k]]
    return med(per), per
loads = {"redis": "redis-benchmark -t set,get -n %s -c 50 --csv" % redis_n,
         "memcached": "memcaslap -t %ss -T 2 -c 32 (memcached -t 4)" % secs,
         "nginx": "wrk -t2 -c16 -d%ss --latency /aio/file.bin (64 KiB, aio threads, 2 workers)" % secs,
         "tokio": "wrk -t2 -c16 -d%ss --latency / (hyper 0.14, 2 workers, release build)" % secs,
         "node": "wrk -t2 -c16 -d%ss --latency / (fs.readFile of 4 KiB per request)" % secs}
print("## Real services, agent off vs on (median of %s interleaved rounds)" % rounds)
print()
print("Server (and tracer) pinned to CPU 0, load generator to CPU 1 (`taskset`), 127.0.0.1; "
      "load average %s at the start, %s at the end; %s s in all." % (load0, load1, took))
print()
for s in svcs:
    print("- %s: %s" % (s, loads.get(s, "?")))
print()
print("Ratios are the median of the per-round ratios dial9/off (each round runs the modes back to back, "
      "in reverse order in even rounds), with their range." + (" off2 is the same server as off, run again in "
      "each round: its ratio to off is what this method cannot tell from noise (an A/A control)."
      if "off2" in modes else ""))
print()
print("| service | off /s (range) | dial9 /s (range) | throughput ratio (range) | off p99 ms | dial9 p99 ms | p99 ratio (range) |")
print("|---|---|---|---|---|---|---|")
verdict = {"thr": [], "p99": [], "bpe": [], "cpu": []}
aa = {"thr": {}, "p99": {}, "cpu_req": {}}  # service -> (the off2 control's median ratio, its edge)
for s in svcs:
    a, b = get(s, "off", 3), get(s, "dial9", 3)
    pa, pb = get(s, "off", 4), get(s, "dial9", 4)
    tr, tper = ratio(s, "dial9", 3)
    pr, pper = ratio(s, "dial9", 4)
    verdict["thr"].append((s, tr)); verdict["p99"].append((s, pr))
    print("| %s | %s (%s) | %s (%s) | **%s** (%s) | %s | %s | **%s** (%s) |" % (s,
        f(med(list(a.values()))), rng(list(a.values())), f(med(list(b.values()))), rng(list(b.values())),
        f(tr, 3), rng(tper, 3), f(med(list(pa.values())), 3), f(med(list(pb.values())), 3), f(pr, 3), rng(pper, 3)))
    c, pc = get(s, "off2", 3), get(s, "off2", 4)
    cr, cper = ratio(s, "off2", 3)
    qr, qper = ratio(s, "off2", 4)
    if cper:
        aa["thr"][s] = (cr, min(cper))
        if qper: aa["p99"][s] = (qr, max(qper))
        print("| %s, off2 (A/A control) | | %s (%s) | %s (%s) | | %s | %s (%s) |" % (s,
            f(med(list(c.values()))), rng(list(c.values())), f(cr, 3), rng(cper, 3),
            f(med(list(pc.values())), 3), f(qr, 3), rng(qper, 3)))
print()
print("CPU per request: utime+stime of the server's process tree (all threads, the agent's writer included; "
      "/proc/PID/stat) over the load / requests answered. Unlike throughput, it hardly moves when other "
      "processes take CPU 0 from the server, so it shows the agent's own cost on a busy machine; "
      "1/cost ratio is the throughput ratio of a CPU-bound server.")
print()
print("| service | off CPU us/request (range) | dial9 CPU us/request (range) | cost ratio (range) | implied throughput ratio |")
print("|---|---|---|---|---|")
def cpu_per_req(svc, mode):
    c, t, sc = get(svc, mode, 15), get(svc, mode, 3), get(svc, mode, 10)
    return {k: c[k] / tck * 1e6 / (t[k] * sc[k]) for k in c if t.get(k) and sc.get(k)}
verdict["cpu_req"] = []
for s, m in [(s, m) for s in svcs for m in ["dial9"] + (["off2"] if "off2" in modes else [])]:
    a, b = cpu_per_req(s, "off"), cpu_per_req(s, m)
    per = [b[k] / a[k] for k in b if a.get(k)]
    if m == "dial9":
        verdict["cpu_req"].append((s, 1 / med(per) if per else None))
    elif per:
        aa["cpu_req"][s] = (1 / med(per), 1 / max(per))
    print("| %s | %s (%s) | %s (%s) | %s (%s) | %s |" % (s if m == "dial9" else "%s, off2 (A/A control)" % s,
        f(med(list(a.values())), 1), rng(list(a.values()), 1),
        f(med(list(b.values())), 1), rng(list(b.values()), 1), f(med(per), 3), rng(per, 3), f(1 / med(per) if per else None, 3)))
print()
print("## Trace on disk and the writer thread (dial9 runs)")
print()
print("bytes/event = sealed segment bytes (headers included) / events of `dial9-decode summary --json`; "
      "writer CPU = utime+stime of the `dial9-writer` thread(s) (/proc/PID/task/TID/stat, %d ticks/s) read when the "
      "load ends, before the stop; the on-CPU ns of .../schedstat give the finer figure; "
      "%% of a core at 100k events/s = CPU s per million events x 10." % tck)
print()
print("| service | events/s (median) | bytes/event (median, range) | raw bytes/event before LZ4 | events/block | writer CPU s / M events, stat (schedstat) | % core at 100k ev/s | dropped |")
print("|---|---|---|---|---|---|---|---|")
for s in svcs:
    ev, by, wt, wns, dr, sc = (get(s, "dial9", c) for c in (5, 6, 7, 8, 9, 10))
    eps = [ev[k] / sc[k] for k in ev if sc.get(k)]
    bpe = [by[k] / ev[k] for k in ev if ev[k] and k in by]
    cs = [wt[k] / tck / ev[k] * 1e6 for k in ev if ev[k] and k in wt]
    cns = [wns[k] / 1e9 / ev[k] * 1e6 for k in ev if ev[k] and k in wns]
    verdict["bpe"].append((s, med(bpe))); verdict["cpu"].append((s, med(cns) * 10 if cns else None))
    raw, epb = get(s, "dial9", 13), get(s, "dial9", 14)
    print("| %s | %s | %s (%s) | %s | %s | %s (%s) | %s | %s |" % (s, f(med(eps)), f(med(bpe), 2), rng(bpe, 2),
        f(med(list(raw.values())), 2), f(med(list(epb.values()))),
        f(med(cs), 3), f(med(cns), 3), f(med(cns) * 10 if cns else None, 2), f(sum(dr.values()))))
peers = [m for m in modes if m not in ("off", "dial9", "off2")]
if peers:
    print()
    print("## Peers and variants on the same workloads, same run (throughput ratio to off, p99 ratio; medians)")
    print()
    print("strace -f -qq -o FILE; uftrace record --force -d DIR; LTTng-UST: `LD_PRELOAD=liblttng-ust-pthread-wrapper.so`, "
          "a local session with `lttng_ust_pthread:*` enabled, session daemon `--no-kernel` pinned to CPU 0; "
          "ltrace -f -o FILE on memcached only, with a %s s load. redis-benchmark runs a fixed number of requests: "
          "strace and uftrace get 1/4 of them. Tracers run on CPU 0 with the server." % ltrace_secs)
    print()
    print("| service | dial9 | " + " | ".join(peers) + " |")
    print("|---|---|" + "---|" * len(peers))
    for s in svcs:
        cells = []
        for m in ["dial9"] + peers:
            r_, per = ratio(s, m, 3)
            pr, _ = ratio(s, m, 4)
            cells.append("%s (p99 x%s)" % (f(r_, 3), f(pr, 1)) if per else "-")
        print("| %s | %s |" % (s, " | ".join(cells)))
notes = [r for r in rows if r[12]]
if notes:
    print()
    print("Run notes:")
    for r in notes:
        print("- %s %s round %s: %s" % (r[0], r[1], r[2], r[12]))
print()
print("## Verdicts (issue 5 targets)")
print()
def line(name, items, ok, fmt):
    bad = [(s, v) for s, v in items if v is None or not ok(v)]
    print("- %s: **%s** (%s)" % (name, "met" if not bad and items else "missed",
          ", ".join("%s %s" % (s, fmt(v)) for s, v in items)))
# Against the off2 control when it ran (verdicts.py's rule), else by the limit alone.
verdict_line("throughput loss <= 1% (ratio >= 0.99)", verdict["thr"], 0.99, aa["thr"], "%.3f", higher=True)
verdict_line("throughput loss <= 1%, from CPU per request (1/cost ratio >= 0.99)", verdict["cpu_req"], 0.99,
             aa["cpu_req"], "%.3f", higher=True)
verdict_line("p99 increase <= 2% (ratio <= 1.02)", verdict["p99"], 1.02, aa["p99"], "%.3f")
line("<= 4 bytes/event", verdict["bpe"], lambda v: v <= 4, lambda v: f(v, 2))
line("writer <= 1% of a core at 100k events/s", verdict["cpu"], lambda v: v <= 1, lambda v: f(v, 2) + "%")
EOF
# Where the bytes go: the first dial9 trace of each service.
for f in "$tmp"/fields.*; do
    [ -s "$f" ] || continue
    [ -n "${fields_head:-}" ] || { fields_head=1; echo; echo "## Where the trace bytes go (first dial9 run of each service: bench/trace_bytes.py --fields)"; }
    echo; echo "${f##*/fields.}:"; echo; sed 's/^/    /' "$f"
done
# Where CPU 0 goes in the dial9_perf runs (perf record -e cpu-clock -C 0 -g).
for f in "$tmp"/perf.*.data; do
    [ -f "$f" ] || continue
    [ -n "${perf_head:-}" ] || { perf_head=1; echo; echo "## Where CPU 0 goes under dial9 (perf record -e cpu-clock -C 0 -g over the load)"
        echo; echo "Shares of all CPU 0 samples. agent (app threads) = samples in libdial9.so on the service's threads;"
        echo "schedstat = samples under proc_pid_schedstat (the agent's /proc/thread-self/schedstat reads, kernel side);"
        echo "perf_event switch = samples under the scheduler's per-task perf context switch (__perf_event_task_sched_out/_in:"
        echo "the agent's per-thread context_switch events; perf's own -C 0 event is per CPU and does not go there)."
        echo; echo "| service, round | busy | service threads | of which agent (libdial9.so) | dial9-writer | schedstat (kernel) | perf_event switch (kernel) | other processes (other engineers, bench script) | agent share of the service's CPU |"
        echo "|---|---|---|---|---|---|---|---|---|"; }
    name=${f##*/perf.}; name=${name%.data}
    { perf report -i "$f" --no-children --sort comm,dso --stdio -g none 2>/dev/null; echo "@@"
      perf report -i "$f" --children --sort sym --stdio -g none 2>/dev/null; } | python3 -c '
import sys, re
name, comms = sys.argv[1], {l.strip()[:15] for l in open(sys.argv[2])} - {"dial9-writer"}
part, shares, sched, sw = 0, [], 0.0, {}
for l in sys.stdin:
    if l.startswith("@@"): part = 1; continue
    if l.startswith("#") or not l.strip(): continue
    if part == 0:
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s{2,}(\S+)\s*$", l)
        if m: shares.append((float(m.group(1)), m.group(2).strip(), m.group(3)))
    elif "proc_pid_schedstat" in l:
        sched = max(sched, float(l.split("%")[0]))
    elif re.search(r"\] (__perf_event_task_sched_(out|in)|perf_event_context_sched_(out|in))\s*$", l):
        sw[l.split()[-1]] = float(l.split("%")[0])
idle = sum(p for p, c, d in shares if c == "swapper")
writer = sum(p for p, c, d in shares if c == "dial9-writer")
svc = sum(p for p, c, d in shares if c[:15] in comms)
other = 100 - idle - writer - svc
agent = sum(p for p, c, d in shares if d == "libdial9.so" and c != "dial9-writer")
swk = max(sw.get("__perf_event_task_sched_out", 0), sw.get("perf_event_context_sched_out", 0)) + \
      max(sw.get("__perf_event_task_sched_in", 0), sw.get("perf_event_context_sched_in", 0))
share = (agent + writer + sched + swk) / (svc + writer) * 100 if svc + writer else 0
print("| %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | **%.1f%%** |" % (name, 100 - idle, svc, agent, writer, sched, swk, other, share))
' "$name" "${f%.data}.comms"
done

