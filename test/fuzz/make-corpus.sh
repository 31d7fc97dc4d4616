#!/bin/bash
# make-corpus.sh - the seed corpus for build/fuzz/fuzz_reader: real segments
# recorded under the agent, plus hand-made edge cases derived from them.
# Usage: test/fuzz/make-corpus.sh OUT-DIR   (needs `make all` done first)
#
# Programs run with DIAL9_FLUSH_MS=1 (many small blocks) and
# DIAL9_MAX_FILE_SIZE=4K (the minimum: many small segments, which the fuzzer
# mutates fastest), slow-syscall and lock thresholds at 1 us so every event
# type shows up. At most PER_PROG segments are kept per program (the
# smallest and largest few, and some in between), each named after its
# program; the fuzzer minimises the corpus itself.
set -eu
OUT=${1:?usage: make-corpus.sh OUT-DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
AGENT=$BUILD/libdial9.so
PROGS=$BUILD/progs
PER_PROG=${PER_PROG:-12}

for f in "$AGENT" "$PROGS/ground_truth" "$PROGS/demo_server" "$PROGS/story_lock" "$PROGS/story_sched" \
    "$PROGS/story_fdtable"; do
    [ -e "$f" ] || { echo "make-corpus.sh: $f is not built (run make)" >&2; exit 1; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dial9-corpus.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"

# record NAME CMD...: runs CMD under the agent into $TMP/NAME.
record() {
    local name=$1
    shift
    LD_PRELOAD=$AGENT DIAL9_DIR=$TMP/$name DIAL9_QUIET=1 DIAL9_FLUSH_MS=1 DIAL9_MAX_FILE_SIZE=4K \
        DIAL9_SLOW_SYSCALL_US=1 DIAL9_LOCK_WAIT_US=1 \
        timeout -k 5 60 "$@" >/dev/null 2>&1 || echo "make-corpus.sh: $name exited $? (segments kept)" >&2
}

record ground_truth "$PROGS/ground_truth"
record burst env DIAL9_BUFFER_EVENTS=64 "$PROGS/ground_truth" --burst 2000
record demo_server "$PROGS/demo_server" --workers 2 --pool 2 --clients 2 --seconds 1
record story_lock "$PROGS/story_lock" contended 3 50 50
record story_sched "$PROGS/story_sched" --hogs 1 --rounds 20 --work-us 100
record story_fdtable env DIAL9_SLOW_SYSCALL_US=50 "$PROGS/story_fdtable" 2 # 1 us overflows its own records

# Keep a spread of each program's segments: sorted by size, every k-th.
n=0
for dir in "$TMP"/*/; do
    name=$(basename "$dir")
    mapfile -t segs < <(find "$dir" \( -name '*.d9' -o -name '*.d9.open' \) -print0 | xargs -0 -r ls -S 2>/dev/null)
    total=${#segs[@]}
    [ "$total" -gt 0 ] || continue
    step=$(( (total + PER_PROG - 1) / PER_PROG ))
    for ((i = 0; i < total; i += step)); do
        cp "${segs[$i]}" "$OUT/$name-$i.d9"
        n=$((n + 1))
    done
done
[ "$n" -gt 0 ] || { echo "make-corpus.sh: no segment recorded" >&2; exit 1; }

# Edge cases, derived from the smallest real segment with at least 2 blocks.
python3 - "$OUT" <<'EOF'
import glob, os, struct, sys
out = sys.argv[1]

def nblocks(d):
    if len(d) < 16 or d[:8] != b"DIAL9SEG":
        return 0
    n, pos = 0, 16 + struct.unpack_from("<I", d, 12)[0]
    while pos + 40 <= len(d):
        n += 1
        pos += 40 + struct.unpack_from("<I", d, pos + 4)[0]
    return n

real = sorted(glob.glob(os.path.join(out, "*.d9")), key=os.path.getsize)
real = [f for f in real if not os.path.basename(f).startswith("edge-")]
data = next((open(f, "rb").read() for f in real if nblocks(open(f, "rb").read()) >= 2), open(real[0], "rb").read())

def crc32c(b, crc=0):
    crc ^= 0xFFFFFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF

def put(name, b):
    open("%s/edge-%s.d9" % (out, name), "wb").write(b)

hlen = struct.unpack_from("<I", data, 12)[0]
hdr_end = 16 + hlen
blocks, pos = [], hdr_end
while pos + 40 <= len(data):
    plen = struct.unpack_from("<I", data, pos + 4)[0]
    blocks.append((pos, pos + 40 + plen))
    pos += 40 + plen
header = data[:hdr_end]

def header_with(tlvs):
    body = b"".join(struct.pack("<HI", t, len(v)) + v for t, v in tlvs)
    return b"DIAL9SEG" + struct.pack("<II", 1, len(body) + 4) + body + struct.pack("<I", crc32c(body))

put("empty", b"")
put("magic-only", b"DIAL9SEG")
put("bad-version", b"DIAL9SEG" + struct.pack("<II", 99, 4) + struct.pack("<I", 0))
put("header-only", header)
put("header-truncated", data[:hdr_end - 3])
put("no-tlvs", header_with([]))
put("huge-header-len", data[:12] + struct.pack("<I", 0xFFFFFFF0) + data[16:])
put("block-truncated", data[:blocks[0][1] - 5] if blocks else data)
if len(blocks) > 1:
    b0, b1 = blocks[0], blocks[1]
    flip = bytearray(data); flip[b0[0] + 50] ^= 0xFF           # payload crc mismatch, resync
    put("payload-flip", bytes(flip))
    flip = bytearray(data); flip[b0[0] + 9] ^= 0x01            # header crc mismatch
    put("blockhdr-flip", bytes(flip))
    put("garbage-between", data[:b0[1]] + b"\x39BLK" * 8 + data[b0[1]:])
    put("swapped", header + data[b1[0]:b1[1]] + data[b0[0]:b0[1]] + data[b1[1]:])
    put("dup-block", data[:b0[1]] + data[b0[0]:b0[1]] + data[b0[1]:])
    put("blocks-no-header", data[hdr_end:])
    put("bad-magic-header", b"XIAL9SEG" + data[8:])
# Header TLV oddities (no blocks): odd schema, threads table, unknown tag.
put("schema-odd", header_with([(1, struct.pack("<I", 7)),
                               (9, bytes([4, 3]) + b"uus" + bytes([200, 8]) + b"bbbbuuus")]))
put("schema-bad", header_with([(9, bytes([4, 9]) + b"u")]))
put("threads", header_with([(8, struct.pack("<IB", 1, 20) + b"x" * 20 + struct.pack("<IB", 2, 3) + b"abc")]))
put("threads-cut", header_with([(8, struct.pack("<IB", 1, 9) + b"ab")]))
put("unknown-tlv", header_with([(0x7777, b"hello"), (2, b"/bin/x"), (3, b"a\0b\0")]))
# A real segment's blocks behind a header whose schema changes every field kind.
put("schema-swap", header_with([(1, struct.pack("<I", 5)),
                                (9, b"".join(bytes([t, 4]) + b"bsub" for t in range(1, 14)))]) + data[hdr_end:])
EOF
echo "make-corpus.sh: $(find "$OUT" -type f | wc -l) seeds in $OUT ($(du -sh "$OUT" | cut -f1))"
