#!/usr/bin/env python3
"""format_whatif.py DECODER TRACE...: bytes/event of a real trace re-encoded
with the version 1 (row) payload layout of docs/FORMAT.md (chunks per thread and 250 ms flush,
LEB128 fields, one LZ4 frame per block via the lz4 CLI), then with encoding
changes, to measure what each would save before the agent is changed:
  target_delta  park/wake/lock targets as a zigzag delta from the thread's
                previous target (futex/condvar addresses repeat)
  timeout_us    park timeouts in us instead of ns
  sched_in_unpark  sched_delay folded into the unpark it is stamped at
                (a field of unpark, 0 when none) instead of its own event
  target_mtf    targets as an index into the thread's last 8 targets
                (move to front), the full value + 8 on a miss
  lz4_hc9       the current payload, LZ4 high compression level 9
  mtf+us+sched  target_mtf, timeout_us and sched_in_unpark together
  coarse        timestamps in 64 ns units, delay/duration/wait fields in us
                (a precision trade-off: the clock is ns, events are us apart)
The "current" line re-encodes the trace as the agent does: compare it with the
trace's real size (bench/trace_bytes.py) to see how close the model is."""
import collections, json, subprocess, sys

CALLS = ("epoll_wait epoll_pwait epoll_pwait2 poll ppoll select pselect futex cond_wait sem_wait nanosleep "
         "cond_signal cond_broadcast sem_post eventfd_write open openat close socket accept accept4 connect dup "
         "dup2 dup3 read write pread pwrite fsync fdatasync getaddrinfo mmap munmap mutex_lock rwlock_rdlock "
         "rwlock_wrlock pipe_write").split()
CODE = {c: i + 1 for i, c in enumerate(CALLS)}
TYPES = {"thread_start": 1, "thread_name": 2, "thread_exit": 3, "park": 4, "unpark": 5, "wake": 6, "drop": 7,
         "poll_nowait": 8, "epoll_ctl": 9, "slow_syscall": 10, "lock_wait": 11, "sched_delay": 12, "preempt": 13}
FIELDS = {"thread_start": "parent:u", "thread_name": "name:b", "thread_exit": "", "park": "call:u target:u timeout_ns:s",
          "unpark": "call:u result:s", "wake": "call:u target:u count:u", "drop": "count:u",
          "poll_nowait": "call:u count:u", "epoll_ctl": "op:u epfd:u fd:u",
          "slow_syscall": "call:u fd:s fd_kind:u duration_ns:u", "lock_wait": "call:u target:u wait_ns:u",
          "sched_delay": "delay_ns:u source:u window_ns:u", "preempt": "duration_ns:u"}

def leb(v, out):
    v = int(v)
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80); v >>= 7
    out.append(v)
def zz(v, out):
    v = int(v); leb((v << 1) if v >= 0 else ((-v) << 1) - 1, out)
def val(k, v):
    if isinstance(v, str):
        return CODE.get(v, 1) if k == "call" else 1
    return v or 0

def encode(events, opt):
    windows = collections.defaultdict(lambda: collections.defaultdict(list))
    t0 = events[0]["ts"]
    for e in events:
        windows[(e["ts"] - t0) // 250000000][e["tid"]].append(e)
    blocks = []
    for w in sorted(windows):
        out = bytearray()
        for tid, evs in windows[w].items():
            leb(tid, out); base = evs[0]["ts"]; leb(base, out); prev = base
            pending = None
            for i, e in enumerate(evs):
                t = e["type"]
                if opt.get("sched_in_unpark") and t == "sched_delay":
                    continue  # carried by the unpark at the same ts
                out.append(TYPES.get(t, 14))
                if opt.get("coarse"):
                    leb((e["ts"] >> 6) - (prev >> 6), out)
                else:
                    leb(max(0, e["ts"] - prev), out)
                prev = e["ts"]
                for spec in FIELDS.get(t, "").split():
                    k, kind = spec.split(":")
                    v = e.get(k)
                    if kind == "b":
                        b = str(v or "").encode(); leb(len(b), out); out += b; continue
                    v = val(k, v)
                    if k == "target" and opt.get("target_delta"):
                        last = lasttarget.get(tid, 0); lasttarget[tid] = v; zz(v - last, out); continue
                    if k == "target" and opt.get("target_mtf"):
                        tab = lasttarget.setdefault(tid, [])
                        if v in tab:
                            leb(tab.index(v), out); tab.remove(v)
                        else:
                            leb(8 + v, out)
                        tab.insert(0, v); del tab[8:]; continue
                    if k in ("delay_ns", "duration_ns", "wait_ns") and opt.get("coarse"):
                        v //= 1000
                    if k == "timeout_ns" and opt.get("timeout_us"):
                        v = v // 1000 if v > 0 else v
                    (zz if kind == "s" else leb)(v, out)
                if opt.get("sched_in_unpark") and t == "unpark":
                    nxt = evs[i + 1] if i + 1 < len(evs) else None
                    leb(nxt["delay_ns"] if nxt and nxt["type"] == "sched_delay" and nxt["ts"] == e["ts"] else 0, out)
            out.append(0)
        out.append(0)
        blocks.append(bytes(out))
    raw = sum(map(len, blocks))
    comp = sum(len(subprocess.run(["lz4", "-%d" % opt.get("level", 1), "-c", "-q", "--content-size"], input=b, capture_output=True).stdout)
               for b in blocks)
    return raw, comp

events = [json.loads(l) for l in subprocess.run([sys.argv[1], "events", "--json"] + sys.argv[2:],
                                                capture_output=True, text=True).stdout.splitlines()]
n = len(events)
for name, opt in (("current", {}), ("target_delta", {"target_delta": 1}), ("timeout_us", {"timeout_us": 1}),
                  ("target_mtf", {"target_mtf": 1}), ("sched_in_unpark", {"sched_in_unpark": 1}),
                  ("lz4_hc9", {"level": 9}),
                  ("mtf+us+sched", {"target_mtf": 1, "timeout_us": 1, "sched_in_unpark": 1}),
                  ("mtf+us+sched+hc9", {"target_mtf": 1, "timeout_us": 1, "sched_in_unpark": 1, "level": 9}),
                  ("coarse", {"coarse": 1}),
                  ("us+sched+coarse", {"timeout_us": 1, "sched_in_unpark": 1, "coarse": 1}),
                  ("us+sched+coarse+hc9", {"timeout_us": 1, "sched_in_unpark": 1, "coarse": 1, "level": 9})):
    lasttarget = {}
    raw, comp = encode(events, opt)
    print("%-16s raw %.2f bytes/event, LZ4 %.2f bytes/event (+ 40-byte block headers)" % (name, raw / n, comp / n))
