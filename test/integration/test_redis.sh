#!/bin/bash
# test_redis.sh - redis-server under the agent with bounded redis-benchmark
# load, then SHUTDOWN NOSAVE. The trace must be sealed and intact: the main
# thread parks in epoll, the bio_* threads /proc showed park in cond_wait.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || d9_skip "$tool is not installed (scripts/install-deps.sh test)"
done

port=$(d9_free_port) || exit 1
trace=$D9_TMP/trace
d9_start_traced "$trace" redis-server --port "$port" --bind 127.0.0.1 --save '' \
    --appendonly no --daemonize no --dir "$D9_TMP" >"$D9_TMP/redis.out" 2>&1
redis=$D9_PID
d9_wait_port "$port" 30 "$redis"

timeout 120 redis-benchmark -h 127.0.0.1 -p "$port" -n 20000 -q -t set,get,incr,lpush,lpop,mset \
    >"$D9_TMP/bench.out" 2>&1 || d9_fail "redis-benchmark failed: $(tail -c 2000 "$D9_TMP/bench.out")"
grep -q 'requests per second' "$D9_TMP/bench.out" || d9_fail "no load ran: $(tail -c 2000 "$D9_TMP/bench.out")"

# Ground truth while it runs: its threads and their names.
d9_snapshot_threads "$redis" >"$D9_TMP/threads"
d9_log "threads: $(tr '\n' ' ' <"$D9_TMP/threads")"

timeout 30 redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill -TERM "$redis"
d9_wait_exit "$redis" 60
[ "$D9_RC" -eq 0 ] || d9_fail "redis-server exited $D9_RC: $(tail -n 20 "$D9_TMP/redis.out")"

dir=$(d9_sealed_dir "$trace" "$redis") || exit 1
# Named as it was started: Debian's redis-server is a symlink to redis-check-rdb.
[ "$dir" = "$trace/redis-server.$redis" ] || d9_fail "trace directory $dir, not $trace/redis-server.$redis"
d9_decode_to "$D9_TMP/summary.json" summary --json "$dir"
d9_assert_threads_named "$D9_TMP/threads" "$D9_TMP/summary.json"

d9_py '
pid = int(sys.argv[1])
threads = {int(l.split()[0]): l.split(None, 1)[1].strip() for l in open(sys.argv[2]) if l.strip()}
summary = json.load(open(sys.argv[3]))
by_tid = {t["tid"]: t for t in summary["threads"]}
main = by_tid.get(pid, {"parks_by_call": {}})
if sum(main["parks_by_call"].get(c, 0) for c in ("epoll_wait", "epoll_pwait", "epoll_pwait2")) <= 0:
    errors.append("main thread never parked in epoll: %r" % main["parks_by_call"])
bio = [t for t, n in threads.items() if n.startswith("bio_")]
if not bio:
    errors.append("/proc shows no bio_* threads: %r" % threads)
for tid in bio:
    s = by_tid.get(tid)
    if s and s["parks_by_call"].get("cond_wait", 0) <= 0:
        errors.append("%s (tid %d) never parked in cond_wait: %r" % (s["name"], tid, s["parks_by_call"]))
if summary.get("dropped") != 0:
    errors.append("%r events dropped" % summary.get("dropped"))
' "$redis" "$D9_TMP/threads" "$D9_TMP/summary.json"
echo "ok"
