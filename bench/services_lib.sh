# bench/services_lib.sh - the real services of the benchmarks and how to
# start, load and watch them; sourced by the service benchmarks:
# bench/services.sh (interleaved A/B rounds), bench/paired.sh (A and B at the
# same time), bench/latency.sh (both at a fixed rate), bench/writer_cycle.sh,
# and the build comparisons that run them (knockout.sh, variant.sh).
# Needs ROOT (the source tree) and tmp (a scratch dir) set by the caller.
# LOAD_SHARE=2 halves each load generator's threads and connections: two
# loads run side by side, one per server, and together match one load.
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
AGENT=$BUILD/libdial9.so
SECS=${BENCH_SECS:-5}
REDIS_N=${BENCH_REDIS_N:-100000}
LOAD_SHARE=${LOAD_SHARE:-1}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# A service under bench/latency's fixed rate (latency.sh, writer_cycle.sh):
# rate_of SVC prints its rate in requests/s (BENCH_LAT_RATE_<SVC>, else the
# default latency.sh explains); target_of SVC the client's protocol and path.
rate_of() { local v="BENCH_LAT_RATE_$1" d; case $1 in redis | memcached) d=10000 ;; nginx) d=2000 ;; tokio) d=4000 ;; *) d=1000 ;; esac; echo "${!v:-$d}"; }
target_of() {
    case $1 in redis) echo redis ;; memcached) echo memcache ;; nginx) echo "http /aio/file.bin" ;; *) echo "http /" ;; esac
}

# ---- the services: start_SVC PORT DIR execs the server through "${PRE[@]}" (in a
# subshell pinned to CPU 0);
# load_SVC PORT SCALE OUT runs the load (pinned to CPU 1) and prints "THROUGHPUT P99_MS".
EXE_redis=$(command -v redis-server)
start_redis() { exec "${PRE[@]}" "$EXE_redis" --port "$1" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir "$2"; }
load_redis() { # requests, not seconds: redis-benchmark has no duration; SCALE shrinks it for slow peers
    local n; n=$(awk -v n="$REDIS_N" -v s="$2" 'BEGIN{printf "%d", n*s < 200 ? 200 : n*s}')
    timeout -k 5 120 taskset -c 1 redis-benchmark -h 127.0.0.1 -p "$1" -t set,get -n "$n" -c $((50 / LOAD_SHARE)) --csv >"$3" 2>&1
    # throughput: requests of both tests / time of both (harmonic mean); p99: mean of the two
    awk -F'"' '$2 == "SET" || $2 == "GET" {k++; inv += 1/$4; p += $14}
        END {if (k == 2) printf "%.0f %.3f\n", 2/inv, p/2}' "$3"
}
EXE_memcached=$(command -v memcached)
SLAP=$(command -v memcaslap || command -v memaslap)
start_memcached() { exec "${PRE[@]}" "$EXE_memcached" -t 4 -U 0 -l 127.0.0.1 -p "$1" -u root; }
load_memcached() {
    timeout -k 5 $((SECS + 60)) taskset -c 1 "$SLAP" -s 127.0.0.1:"$1" -t "${SECS}s" -T $((2 / LOAD_SHARE)) -c $((32 / LOAD_SHARE)) \
        -S "${SECS}s" >"$3" 2>&1
    # TPS of the whole run; p99 from the last "Total Statistics" log2 histogram
    # (buckets [2^i, 2^(i+1)) us), interpolated linearly inside its bucket.
    awk '/^Total Statistics \(/ {n = 0; delete c; t = 1; next}
        t && /^ +[0-9]+: / {b = $1 + 0; for (i = 2; i <= NF; i++) {c[b + i - 2] = $i; n += $i}; next}
        t && /^ *$/ && n {t = 0}
        /^Run time/ {for (i = 1; i <= NF; i++) if ($i == "TPS:") tps = $(i + 1)}
        END {if (!tps || !n) exit; want = 0.99 * n; cum = 0
             for (b = 0; b < 64; b++) if (b in c) {if (cum + c[b] >= want) {lo = 2 ^ b
                 printf "%s %.3f\n", tps, (lo + (want - cum) / c[b] * lo) / 1000; exit}; cum += c[b]}}' "$3"
}
wrk_load() { # URL OUT
    timeout -k 5 $((SECS + 60)) taskset -c 1 wrk -t$((2 / LOAD_SHARE)) -c$((16 / LOAD_SHARE)) -d"${SECS}s" --latency "$1" >"$2" 2>&1
    awk 'function ms(v) {if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v}
        /Requests\/sec/ {rps = $2} /^ +99%/ {p = ms($2)} /Non-2xx|Socket errors/ {err = 1}
        END {if (rps != "" && p != "") printf "%s %.3f%s\n", rps, p, err ? " errors" : ""}' "$2"
}
EXE_nginx=$(command -v nginx || echo /usr/sbin/nginx)
# nginx.conf's workers switch to nobody when nginx starts as root (since
# a54061b): open the served file, and every directory above it that others
# cannot enter (the bench's mktemp directories under /tmp, 0700) for search.
# Without it every request got a 403 (session 54).
nginx_open_path() {
    local d=$1
    while [ "$d" != / ]; do
        [ "$(stat -c %A "$d" | cut -c10)" = - ] && chmod o+x "$d"
        d=$(dirname "$d")
    done
}
start_nginx() {
    mkdir -p "$2/www/aio"; [ -f "$2/www/aio/file.bin" ] || head -c 65536 /dev/urandom >"$2/www/aio/file.bin"
    if [ "$(id -u)" = 0 ]; then chmod o+r "$2/www/aio/file.bin"; nginx_open_path "$2/www/aio"; fi
    sed -e "s|@TMP@|$2|g" -e "s|@PORT@|$1|g" "$ROOT/test/services/nginx.conf" >"$2/nginx.conf"
    exec "${PRE[@]}" "$EXE_nginx" -p "$2/" -e "$2/error.log" -c "$2/nginx.conf"
}
load_nginx() { wrk_load "http://127.0.0.1:$1/aio/file.bin" "$3"; }
TOKIO_BIN=$BUILD/tokio-target/release/tokio_http
EXE_tokio=$TOKIO_BIN
start_tokio() { exec "${PRE[@]}" "$TOKIO_BIN" "$1"; }
load_tokio() { wrk_load "http://127.0.0.1:$1/" "$3"; }
EXE_node=$(command -v node)
start_node() {
    [ -f "$2/file.bin" ] || head -c 4096 /dev/urandom >"$2/file.bin"
    exec "${PRE[@]}" "$EXE_node" "$ROOT/test/services/node_http.js" "$1" "$2/file.bin" exit-on-term
}
load_node() { wrk_load "http://127.0.0.1:$1/" "$3"; }
# SIGTERM ends them all through exit() (node: exit-on-term); nginx: SIGQUIT.
stopsig() { [ "$1" = nginx ] && echo QUIT || echo TERM; }

# The release build of test/services/tokio_http, offline from Debian's crates
# (as test/integration/lib_services.sh does for the dev build the test uses).
build_tokio() {
    [ -x "$TOKIO_BIN" ] && [ "$TOKIO_BIN" -nt "$ROOT/test/services/tokio_http/src/main.rs" ] && return 0
    [ -x /usr/bin/cargo ] || return 1
    local cache=$BUILD/tokio-target
    mkdir -p "$cache" && (flock 9 && rm -rf "$cache/src" && cp -a "$ROOT/test/services/tokio_http" "$cache/src" &&
        cd "$cache/src" && env -i PATH=/usr/bin:/bin HOME="$cache" CARGO_HOME="$cache/cargo-home" RUSTC=/usr/bin/rustc \
        CARGO_TARGET_DIR="$cache" /usr/bin/cargo build --release --quiet) 9>"$cache/.lock" >&2
}

# ---- modes: PRE is the command prefix of the server (after taskset -c 0).
# set_mode MODE RUNDIR: PRE for MODE. Besides the named modes, dial9+VAR=V+...
# runs the agent with those settings (e.g. dial9+DIAL9_BUFFER_EVENTS=4096).
set_mode() { # MODE RUNDIR
    case $1 in
        dial9+*) local IFS=+; PRE=(env LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$2/trace" ${1#dial9+}) ;;
        off | off2) PRE=(env) ;;
        dial9 | dial9_perf) PRE=(env LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$2/trace") ;;
        dial9_nosched) PRE=(env LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$2/trace" DIAL9_SCHED=0) ;;
        dial9_preempt) PRE=(env LD_PRELOAD="$AGENT" DIAL9_QUIET=1 DIAL9_DIR="$2/trace" DIAL9_PREEMPT=1) ;;
        strace) PRE=(strace -f -qq -o "$2/strace.out") ;;
        ltrace) PRE=(ltrace -f -o "$2/ltrace.out") ;;
        uftrace) PRE=(uftrace record --force -d "$2/uftrace.data") ;;
        lttng) PRE=(env LD_PRELOAD="$LTTNG_WRAPPER") ;;
    esac
}
lttng_q() { lttng "$@" >/dev/null 2>&1; }

# ---- LTTng-UST, a peer (mode lttng): its pthread wrapper is preloaded into
# the server; the session daemon's consumer (a child of lttng-sessiond,
# started --no-kernel and pinned to CPU 0 with the servers) writes the trace.
LTTNG_WRAPPER=$(ls /usr/lib/*/liblttng-ust-pthread-wrapper.so* 2>/dev/null | head -n 1)
started_sessiond=""
# lttng_ready: 0 when a session daemon answers, starting one if none runs;
# 1 when LTTng is not installed or no daemon answers.
lttng_ready() {
    [ -n "$LTTNG_WRAPPER" ] && command -v lttng >/dev/null || return 1
    lttng_q list && return 0
    taskset -c 0 lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
    started_sessiond=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
    sleep 1
    lttng_q list
}
# lttng_begin DIR: a session recording lttng_ust_pthread:* into DIR/lttng; lttng_end ends it.
lttng_begin() { lttng_q create "d9b$$" --output="$1/lttng" && lttng_q enable-event -u 'lttng_ust_pthread:*' && lttng_q start; }
lttng_end() { lttng_q stop; lttng_q destroy "d9b$$"; }
# lttng_quit: stops the session daemon lttng_ready started, if it did.
lttng_quit() { [ -n "$started_sessiond" ] && kill "$started_sessiond" 2>/dev/null; started_sessiond=""; }
# peer_available MODE: 0 for a mode that is no peer, or a peer that can run
# here (its tool installed; for lttng, a session daemon answers); else says
# why it is skipped and returns 1.
peer_available() {
    case $1 in
        strace | ltrace | uftrace) command -v "$1" >/dev/null || { echo "- $1: skipped (not installed)"; return 1; } ;;
        lttng) lttng_ready || { echo "- lttng: skipped (not installed, or no session daemon)"; return 1; } ;;
    esac
}
# peer_ns ROOT MODE: on-CPU ns so far of ROOT's process tree (a tracer that
# runs the server as its child is in it), and for lttng also of the session
# daemon and its consumer, which write the trace.
peer_ns() {
    local n d; n=$(tree_ns "$1")
    if [ "$2" = lttng ] && d=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) && [ -d /proc/"$d" ]; then
        n=$((n + $(tree_ns "$d")))
    fi
    echo "$n"
}

# descendants ROOT: ROOT and every process under it, parents first.
descendants() {
    local p c; echo "$1"
    for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do descendants "$p"; done
}
# server_pid ROOT EXE: the first process of the tree running EXE (under a
# tracer, the traced child; for nginx, the master).
server_pid() {
    local p want; want=$(readlink -f "$2")
    for p in $(descendants "$1"); do
        [ "$(readlink /proc/"$p"/exe 2>/dev/null)" = "$want" ] && { echo "$p"; return 0; }
    done
    return 1
}
# writer_cpu ROOT: "TICKS NS" of the dial9-writer threads of the tree
# (utime+stime from /proc/PID/task/TID/stat; on-CPU ns from .../schedstat).
writer_cpu() {
    local p t ticks=0 ns=0 s
    for p in $(descendants "$1"); do
        for t in /proc/"$p"/task/*; do
            [ "$(cat "$t/comm" 2>/dev/null)" = dial9-writer ] || continue
            s=$(cat "$t/stat" 2>/dev/null) || continue
            s=${s##*) }; set -- $s
            ticks=$((ticks + ${12} + ${13}))
            ns=$((ns + $(cut -d' ' -f1 "$t/schedstat")))
        done
    done
    echo "$ticks $ns"
}
# alive PID: running, not a zombie waiting to be reaped.
alive() { local s; s=$(cat /proc/"$1"/stat 2>/dev/null) || return 1; s=${s##*) }; [ "${s%% *}" != Z ]; }
# tree_cpu ROOT: utime+stime ticks of the processes of the tree (all their threads).
tree_cpu() {
    local p s t=0
    for p in $(descendants "$1"); do
        s=$(cat /proc/"$p"/stat 2>/dev/null) || continue
        s=${s##*) }; set -- $s; t=$((t + ${12} + ${13}))
    done
    echo "$t"
}
# tree_ns ROOT: on-CPU ns of every live thread of the tree (schedstat field 1).
tree_ns() {
    local p f t=0 ns
    for p in $(descendants "$1"); do
        for f in /proc/"$p"/task/*/schedstat; do
            read -r ns _ <"$f" 2>/dev/null && t=$((t + ns))
        done
    done
    echo "$t"
}
# start_server SVC PORT DIR: start_SVC through "${PRE[@]}" (set_mode) in the
# background, pinned to CPU 0, output in DIR/server.out; srv_pid = its pid.
start_server() {
    mkdir -p "$3/svc"
    (taskset -cp 0 $BASHPID >/dev/null && "start_$1" "$2" "$3/svc") >"$3/server.out" 2>&1 &
    srv_pid=$!
}
# stop_server SVC ROOT: the service's stop signal, up to 60 s to exit, then
# KILL for whatever of the tree is left; returns 1 when something was.
stop_server() {
    local pid i left=0
    pid=$(server_pid "$2" "$(eval echo "\$EXE_$1")") && kill -"$(stopsig "$1")" "$pid" 2>/dev/null
    for ((i = 0; i < 1200; i++)); do alive "$2" || break; sleep 0.05; done
    alive "$2" && left=1
    for pid in $(descendants "$2" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    wait "$2" 2>/dev/null
    return $left
}
wait_port() { # PORT PID SECONDS
    local i
    for ((i = 0; i < $3 * 20; i++)); do
        alive "$2" || return 1
        (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# start_pair SVC A B ROUND DIR: servers of modes A and B at once, in DIR/a and
# DIR/b (odd rounds start A first, even rounds B: neither gets a fixed head
# start); pa, pb = their ports, ra, rb = their roots, roots = both. Returns 1
# (both stopped) when one did not start.
start_pair() {
    local svc=$1 a=$2 b=$3 r=$4 d=$5
    rm -rf "$d/a" "$d/b"; mkdir -p "$d/a" "$d/b"
    pa=$(free_port); pb=$(free_port)
    if [ $((r % 2)) = 1 ]; then
        set_mode "$a" "$d/a"; start_server "$svc" "$pa" "$d/a"; ra=$srv_pid
        set_mode "$b" "$d/b"; start_server "$svc" "$pb" "$d/b"; rb=$srv_pid
    else
        set_mode "$b" "$d/b"; start_server "$svc" "$pb" "$d/b"; rb=$srv_pid
        set_mode "$a" "$d/a"; start_server "$svc" "$pa" "$d/a"; ra=$srv_pid
    fi
    roots=("$ra" "$rb")
    if ! wait_port "$pa" "$ra" 60 || ! wait_port "$pb" "$rb" 60; then
        echo "${0##*/}: $svc $a:$b round $r: a server did not start" >&2
        stop_pair "$svc"; return 1
    fi
    sleep 0.3
}
stop_pair() { stop_server "$1" "$ra"; stop_server "$1" "$rb"; roots=(); }
# pair_cleanup: on exit, kills what is left of the pair's servers, stops the
# LTTng daemon lttng_ready started, and removes tmp.
roots=()
pair_cleanup() {
    local r p
    for r in "${roots[@]}"; do for p in $(descendants "$r" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done; done
    lttng_quit
    rm -rf "$tmp"
}

# run_pair_rounds FILE: ROUNDS rounds of the caller's run_pair SVC A B ROUND,
# for every installed service of SERVICES and every pair A:B of PAIRS, FILE
# emptied first; sets have (the services run), load0 and load1 (/proc/loadavg
# before and after) and took (seconds).
run_pair_rounds() {
    local svc p r t0
    have=()
    for svc in "${SERVICES[@]}"; do
        svc_available "$svc" && have+=("$svc") || echo "- $svc: skipped (not installed; scripts/install-deps.sh bench)"
    done
    : >"$1"
    load0=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s)
    for r in $(seq "$ROUNDS"); do
        for svc in "${have[@]}"; do
            for p in "${PAIRS[@]}"; do run_pair "$svc" "${p%%:*}" "${p#*:}" "$r"; done
        done
    done
    load1=$(cut -d' ' -f1-3 /proc/loadavg); took=$(($(date +%s) - t0))
}

# svc_available SVC: its server and load generator are installed (tokio: built).
svc_available() {
    case $1 in
        redis) command -v redis-benchmark >/dev/null && [ -n "$EXE_redis" ] ;;
        memcached) [ -n "$EXE_memcached" ] && [ -n "$SLAP" ] ;;
        nginx) [ -x "$EXE_nginx" ] && command -v wrk >/dev/null ;;
        tokio) command -v wrk >/dev/null && build_tokio ;;
        node) [ -n "$EXE_node" ] && command -v wrk >/dev/null ;;
        *) false ;;
    esac
}
