#!/bin/bash
# Thread churn (issue 4): 1,000 short-lived threads created and joined one
# after another while 64 busy threads make wakes for 1 s. Every event of
# every thread is accounted as recorded or dropped (per-thread DROP events),
# every thread has its thread_start, and the agent's memory stays bounded.
# Ground truth: threads_churn's own count of wakes per thread.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/threads_churn"
CHURN=1000 K=1000 BUSY=64
RING_EVENTS=4096 # small rings: the busy threads overflow them, so drops are exercised
RING_BYTES=$((RING_EVENTS * 32)) # sizeof(struct d9_raw_event) = 32 (include/dial9_format.h)

# No sched events (DIAL9_SCHED=0): a worker records only thread_start,
# thread_name, its wakes and thread_exit, so each is accounted exactly.
# A 20 ms flush releases exited threads' slots promptly.
DIAL9_SCHED=0 DIAL9_BUFFER_EVENTS=$RING_EVENTS DIAL9_FLUSH_MS=20 \
    d9_run_traced "$D9_TMP/t" "$D9_PROGS/threads_churn" $CHURN $K $BUSY 1 40 >"$D9_TMP/out" 2>"$D9_TMP/err" ||
    d9_fail "threads_churn failed: $(cat "$D9_TMP/err")"
"$D9_DECODER" events --json "$D9_TMP/t" >"$D9_TMP/events.json" 2>"$D9_TMP/dec.err" ||
    d9_fail "decode failed: $(cat "$D9_TMP/dec.err")"
d9_assert_check "$D9_TMP/t"

python3 - "$D9_TMP/out" "$D9_TMP/events.json" $((CHURN + BUSY)) $RING_BYTES $BUSY <<'EOF' || d9_fail "accounting (see above)"
import collections, json, sys
out, events, nthreads, ring, busy = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
made, rss = {}, {}
for line in open(out):
    w = line.split()
    if w[0] == "thread":
        made[int(w[1])] = int(w[2])
    else:
        rss[w[0]] = int(w[1])
errors = []
if len(made) != nthreads:
    errors.append(f"program reported {len(made)} threads, expected {nthreads}")
per = collections.defaultdict(collections.Counter)
dropped = collections.Counter()
for line in open(events):
    e = json.loads(line)
    if e["tid"] not in made:
        continue
    if e["type"] == "drop":
        dropped[e["tid"]] += e["count"]
    else:
        per[e["tid"]][e["type"]] += 1
other = set()
for tid, wakes in made.items():
    c = per[tid]
    if c["thread_start"] != 1:
        errors.append(f"tid {tid}: {c['thread_start']} thread_start")
    # The ring keeps its last entry for thread_exit: every thread ends with
    # one, even one whose ring was full.
    if c["thread_exit"] != 1:
        errors.append(f"tid {tid}: {c['thread_exit']} thread_exit (dropped {dropped[tid]})")
    other |= set(c) - {"wake", "thread_start", "thread_name", "thread_exit"}
    # Recorded + dropped = the wakes made + start, name and exit.
    if sum(c.values()) + dropped[tid] != wakes + 3:
        errors.append(f"tid {tid}: made {wakes} wakes; recorded {dict(c)} + dropped {dropped[tid]} != {wakes + 3}")
if other:
    errors.append(f"unexpected event types from workers: {other}")
grow = (rss["rss_after"] - rss["rss_before"]) * 1024
# Rings are mapped once per slot and reused. Bound: the busy threads'
# rings, the main thread's, and up to 128 slots of exited churn threads
# awaiting release (with a 20 ms flush the churn leaves ~20 per cycle; 128
# allows a writer slowed 6x by a loaded machine), plus 16 MiB for the
# writer's block and compression buffers, headers and thread stacks.
# Without slot reuse the churn threads alone would touch 1,000 x 32 KiB.
bound = (busy + 1 + 128) * ring + (16 << 20)
print(f"# {len(made)} threads: {sum(made.values())} wakes made, {sum(dropped.values())} events dropped "
      f"({sum(1 for t in made if dropped[t])} threads dropped), all accounted; "
      f"RSS grew {grow >> 10} KiB (bound {bound >> 10} KiB)")
if grow > bound:
    errors.append(f"RSS grew {grow} bytes, over the bound {bound}")
for e in errors[:20]:
    print("MISMATCH", e)
sys.exit(1 if errors else 0)
EOF
d9_log "thread churn: every event accounted, memory bounded"
