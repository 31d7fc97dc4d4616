#!/usr/bin/env python3
"""trace_bytes.py DIR...: where a dial9 trace's bytes go (docs/FORMAT.md).
Walks every *.d9 / *.d9.open segment under DIR and prints, per event: segment
header bytes, block header bytes (40 each), LZ4 payload bytes, and the raw
(varint-encoded, before LZ4) payload bytes; also events per block and the LZ4
ratio. Used by BENCHMARKS.md for the bytes/event target.
With --fields DECODER, also estimates the raw bytes by field from
`DECODER events --json` (LEB128 sizes; ts_delta from the thread's previous
event; chunk headers not counted) and by event type."""
import collections, json, os, struct, subprocess, sys

decoder = None
if len(sys.argv) > 2 and sys.argv[1] == "--fields":
    decoder = sys.argv[2]
    del sys.argv[1:3]

seg_hdr = blk_hdr = payload = raw = events = blocks = files = 0
for top in sys.argv[1:]:
    for d, _, names in os.walk(top):
        for n in names:
            if not (n.endswith(".d9") or n.endswith(".d9.open")):
                continue
            data = open(os.path.join(d, n), "rb").read()
            if data[:8] != b"DIAL9SEG":
                continue
            files += 1
            hlen = struct.unpack_from("<I", data, 12)[0]
            off = 16 + hlen
            seg_hdr += off
            while off + 40 <= len(data):
                magic, plen, rlen, _crc, ev = struct.unpack_from("<IIIII", data, off)
                if magic != 0x4B4C4239 or off + 40 + plen > len(data):
                    break
                blk_hdr += 40; payload += plen; raw += rlen; events += ev; blocks += 1
                off += 40 + plen
if not events:
    sys.exit("no events")
total = seg_hdr + blk_hdr + payload
print("segments %d, blocks %d, events %d (%.0f per block), %d bytes" % (files, blocks, events, events / blocks, total))
print("bytes/event: %.2f total = %.2f LZ4 payload + %.2f block headers + %.3f segment headers; raw (varint, before LZ4) %.2f: LZ4 ratio %.2f"
      % (total / events, payload / events, blk_hdr / events, seg_hdr / events, raw / events, raw / payload))

if decoder is None:
    sys.exit(0)
def leb(v):
    n = 1
    while v >= 0x80:
        v >>= 7; n += 1
    return n
zz = lambda v: leb((v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1)
SIGNED = {"timeout_ns", "result", "fd"}
SKIP = {"ts", "pid", "tid", "thread", "type", "wakee", "latency_ns"}
by_field, by_type, n_type = collections.Counter(), collections.Counter(), collections.Counter()
last, n = {}, 0
out = subprocess.run([decoder, "events", "--json"] + sys.argv[1:], capture_output=True, text=True).stdout
for line in out.splitlines():
    e = json.loads(line)
    n += 1
    size = {"type": 1, "ts_delta": leb(max(0, e["ts"] - last.get(e["tid"], e["ts"])))}
    last[e["tid"]] = e["ts"]
    for k, v in e.items():
        if k in SKIP or v is None:
            continue
        if isinstance(v, str):
            size[k] = 1 if k in ("call", "source") else 1 + len(v.encode())
        elif isinstance(v, int):
            size[k] = zz(v) if k in SIGNED else leb(v)
    for k, v in size.items():
        by_field[k] += v
    by_type[e["type"]] += sum(size.values()); n_type[e["type"]] += 1
est = sum(by_field.values())
print("raw bytes/event by field (estimate %.2f; the rest of the raw size is chunk headers): %s" % (est / n,
      ", ".join("%s %.2f" % (k, v / n) for k, v in by_field.most_common())))
print("by event type (share of events, raw bytes each): %s" % ", ".join(
      "%s %.0f%% x %.1f" % (t, 100.0 * n_type[t] / n, by_type[t] / n_type[t]) for t, _ in n_type.most_common()))
