#!/bin/bash
# shellcheck disable=SC2015 # "A && B || d9_fail": fail when A or B does not hold
# test_decode_damaged.sh - dial9-decode on real agent segments: intact,
# with a flipped byte in the middle of a block, truncated inside the last
# block, cut inside the header, one file named by several paths, plus
# inputs that are not segments at all. Damage must be reported
# (naming the block), everything that verifies must still be decoded, and
# exit codes must follow `dial9-decode --help` (0 intact, 1 damaged, 2 usage).
cd "$(dirname "$0")/../.." || exit 1
. test/integration/lib.sh
d9_require "$D9_AGENT" "$D9_DECODER"

# --- A trace with several blocks (a 1 ms flush cuts many) ---------------
trace=$D9_TMP/trace
prog=$D9_PROGS/ground_truth
if [ ! -x "$prog" ]; then # fall back to a tiny threaded program of our own
    prog=$D9_TMP/pingpong
    cat >"$prog.c" <<'C'
#include <pthread.h>
#include <time.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;
static void *side(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < 300; i++) {
        pthread_mutex_lock(&mu);
        while (turn != me)
            pthread_cond_wait(&cv, &mu);
        turn = !me;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
        if (i % 30 == 0)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    return NULL;
}
int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, side, (void *)0L);
    pthread_create(&b, NULL, side, (void *)1L);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
C
    cc -O1 -o "$prog" "$prog.c" -lpthread || d9_skip "no ground_truth and no compiler for a fallback program"
fi
DIAL9_FLUSH_MS=1 d9_run_traced "$trace" "$prog" >/dev/null 2>"$D9_TMP/prog.err" ||
    d9_fail "$prog failed under the agent: $(cat "$D9_TMP/prog.err")"
seg=$(find "$trace" -name '*.d9' | sort | head -n 1)
[ -n "$seg" ] || d9_fail "the agent wrote no sealed segment under $trace"

# Block layout of the segment: "offset payload_len events" per block.
python3 - "$seg" >"$D9_TMP/blocks" <<'PY' || d9_fail "cannot walk the blocks of $seg"
import struct, sys
data = open(sys.argv[1], "rb").read()
pos = 16 + struct.unpack_from("<I", data, 12)[0]
while pos + 40 <= len(data):
    magic, plen, raw, crc, events = struct.unpack_from("<5I", data, pos)
    assert magic == 0x4b4c4239, "bad block magic at %d" % pos
    print(pos, plen, events)
    pos += 40 + plen
assert pos == len(data), "trailing bytes"
PY
nblocks=$(wc -l <"$D9_TMP/blocks")
[ "$nblocks" -ge 3 ] || d9_skip "only $nblocks block(s) recorded: need 3 to damage one in the middle"
total=$(awk '{n += $3} END {print n}' "$D9_TMP/blocks")
d9_log "segment $seg: $nblocks blocks, $total events"

# --- Intact --------------------------------------------------------------
out=$("$D9_DECODER" check "$seg") || d9_fail "check of the intact segment exited $?: $out"
[ "$out" = "OK $seg ($nblocks blocks, $total events)" ] || d9_fail "check said: $out"
"$D9_DECODER" events "$seg" >"$D9_TMP/intact.txt" || d9_fail "events of the intact segment failed"
[ "$(wc -l <"$D9_TMP/intact.txt")" -eq "$total" ] || d9_fail "events printed $(wc -l <"$D9_TMP/intact.txt") lines, want $total"

# --- A flipped byte in the middle of block 1 -----------------------------
read -r off plen ev1 <<<"$(sed -n 2p "$D9_TMP/blocks")"
bad=$D9_TMP/flipped.d9
cp "$seg" "$bad"
python3 - "$bad" $((off + 40 + plen / 2)) <<'PY'
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5a]))
PY
rc=0; out=$("$D9_DECODER" check "$bad") || rc=$?
[ $rc -eq 1 ] || d9_fail "check of a flipped byte exited $rc, want 1: $out"
case $out in
"DAMAGED $bad: block 1 at offset $off: "*"; recovered $((nblocks - 1)) blocks, $((total - ev1)) events"*) ;;
*) d9_fail "check of a flipped byte said: $out" ;;
esac
rc=0; "$D9_DECODER" events "$bad" >"$D9_TMP/flipped.txt" 2>"$D9_TMP/flipped.err" || rc=$?
[ $rc -eq 1 ] || d9_fail "events of a damaged segment exited $rc, want 1"
[ "$(wc -l <"$D9_TMP/flipped.err")" -eq 1 ] && grep -q "block 1 at offset $off" "$D9_TMP/flipped.err" ||
    d9_fail "events stderr: $(cat "$D9_TMP/flipped.err")"
[ "$(wc -l <"$D9_TMP/flipped.txt")" -eq $((total - ev1)) ] ||
    d9_fail "events printed $(wc -l <"$D9_TMP/flipped.txt") lines, want $((total - ev1))"
# Every event printed is one of the intact segment's (thread names aside:
# the lost block may have held a THREAD_NAME).
strip() { awk '{$4 = ""; print}' "$1" | sort; }
[ -z "$(comm -23 <(strip "$D9_TMP/flipped.txt") <(strip "$D9_TMP/intact.txt"))" ] ||
    d9_fail "the damaged segment decoded to events the intact one does not have"
rc=0; "$D9_DECODER" summary --json "$bad" >"$D9_TMP/flipped.json" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || d9_fail "summary of a damaged segment exited $rc, want 1"
d9_py 'import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if s["events"] == int(sys.argv[2]) else "summary events %r" % s["events"])' \
    "$D9_TMP/flipped.json" $((total - ev1))

# --- Truncated inside the last block (a crashed writer's .d9.open) -------
read -r loff lplen lev <<<"$(tail -n 1 "$D9_TMP/blocks")"
cut=$D9_TMP/cut.d9.open
head -c $((loff + 40 + lplen / 2)) "$seg" >"$cut"
rc=0; out=$("$D9_DECODER" check "$cut") || rc=$?
[ $rc -eq 1 ] || d9_fail "check of a truncated segment exited $rc, want 1: $out"
case $out in
"TRUNCATED $cut: block $((nblocks - 1)) at offset $loff: "*"; recovered $((nblocks - 1)) blocks, $((total - lev)) events"*) ;;
*) d9_fail "check of a truncated segment said: $out" ;;
esac
rc=0; "$D9_DECODER" events "$cut" >"$D9_TMP/cut.txt" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || d9_fail "events of a truncated segment exited $rc, want 1"
[ "$(wc -l <"$D9_TMP/cut.txt")" -eq $((total - lev)) ] ||
    d9_fail "events of the truncated segment printed $(wc -l <"$D9_TMP/cut.txt") lines, want $((total - lev))"
# A directory with the truncated .d9.open is walked too.
mkdir "$D9_TMP/cutdir" && cp "$cut" "$D9_TMP/cutdir/"
rc=0; "$D9_DECODER" check "$D9_TMP/cutdir" >/dev/null || rc=$?
[ $rc -eq 1 ] || d9_fail "check of a directory holding a truncated .d9.open exited $rc, want 1"

# --- Cut inside its header, beside the intact segment ----------------------
# (a writer stopped by a full disk or a kill while it wrote the header of its
# next segment): reported, and no process of pid 0 counted for it.
mkdir "$D9_TMP/hdrcut" && cp "$seg" "$D9_TMP/hdrcut/000000.d9"
head -c 30 "$seg" >"$D9_TMP/hdrcut/000001.d9.open"
rc=0; out=$("$D9_DECODER" check "$D9_TMP/hdrcut" 2>&1) || rc=$?
[ $rc -eq 1 ] && [[ $out == *"TRUNCATED $D9_TMP/hdrcut/000001.d9.open: header at offset 12: header truncated"* ]] ||
    d9_fail "check of a segment cut inside its header: exit $rc: $out"
rc=0; "$D9_DECODER" summary --json "$D9_TMP/hdrcut" >"$D9_TMP/hdrcut.json" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || d9_fail "summary beside a segment cut inside its header exited $rc, want 1"
d9_py 'import json, sys
s = json.load(open(sys.argv[1]))
pids = [p["pid"] for p in s["processes"]]
sys.exit(0 if len(pids) == 1 and pids[0] != 0 and s["events"] == int(sys.argv[2]) else "processes %r, events %r" % (pids, s["events"]))' \
    "$D9_TMP/hdrcut.json" "$total"
"$D9_DECODER" summary "$D9_TMP/hdrcut" 2>/dev/null | head -n 1 | grep -q " 1 processes," ||
    d9_fail "summary's first line: $("$D9_DECODER" summary "$D9_TMP/hdrcut" 2>/dev/null | head -n 1)"

# --- Not segments ----------------------------------------------------------
echo "hello, I am not a segment" >"$D9_TMP/text.d9"
rc=0; "$D9_DECODER" check "$D9_TMP/text.d9" >"$D9_TMP/text.out" 2>"$D9_TMP/text.err" || rc=$?
[ $rc -eq 1 ] || d9_fail "check of a text file exited $rc, want 1"
[ "$(cat "$D9_TMP/text.err")" = "dial9-decode: $D9_TMP/text.d9: not a dial9 segment (bad magic)" ] ||
    d9_fail "check of a text file said: $(cat "$D9_TMP/text.err")"
# Mixed with a good segment: the good one is still decoded.
rc=0; "$D9_DECODER" events "$D9_TMP/text.d9" "$seg" >"$D9_TMP/mixed.txt" 2>/dev/null || rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$D9_TMP/mixed.txt")" -eq "$total" ] ||
    d9_fail "events of a text file + a good segment: exit $rc, $(wc -l <"$D9_TMP/mixed.txt") lines"

# --- One file reached by several paths (a directory and a segment in it, a
# path given twice, a link): read once, each repeat named on stderr.
"$D9_DECODER" summary --json "$trace" >"$D9_TMP/once.json" || d9_fail "summary of $trace failed"
ln -s "$seg" "$D9_TMP/link.d9"
rc=0; "$D9_DECODER" summary --json "$trace" "$seg" "$seg" "$D9_TMP/link.d9" >"$D9_TMP/twice.json" 2>"$D9_TMP/twice.err" || rc=$?
[ $rc -eq 0 ] || d9_fail "summary of one file by several paths exited $rc: $(cat "$D9_TMP/twice.err")"
d9_py 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(0 if a["events"] == b["events"] > 0 else "events %r once, %r by several paths" % (a["events"], b["events"]))' \
    "$D9_TMP/once.json" "$D9_TMP/twice.json"
[ "$(grep -c "the same file as $seg; read once\|$seg: named more than once; read once" "$D9_TMP/twice.err")" -eq 3 ] &&
    [ "$(wc -l <"$D9_TMP/twice.err")" -eq 3 ] || d9_fail "summary's stderr for repeated paths: $(cat "$D9_TMP/twice.err")"
out=$("$D9_DECODER" check "$seg" "$seg" 2>/dev/null) || d9_fail "check of a segment named twice exited $?"
[ "$out" = "OK $seg ($nblocks blocks, $total events)" ] || d9_fail "check of a segment named twice said: $out"

mkdir "$D9_TMP/empty"
rc=0; err=$("$D9_DECODER" check "$D9_TMP/empty" 2>&1) || rc=$?
[ $rc -eq 1 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && [[ $err == *"no dial9 segments"* ]] ||
    d9_fail "check of an empty directory: exit $rc: $err"
rc=0; "$D9_DECODER" summary "$D9_TMP/missing" >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || d9_fail "summary of a missing path exited $rc, want 1"

# --- Usage errors ----------------------------------------------------------
rc=0; "$D9_DECODER" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || d9_fail "no arguments exited $rc, want 2"
rc=0; "$D9_DECODER" check >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || d9_fail "check without PATH exited $rc, want 2"
rc=0; "$D9_DECODER" events --bogus "$seg" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || d9_fail "an unknown option exited $rc, want 2"
"$D9_DECODER" --help | grep -q -- "--json" || d9_fail "--help does not document --json"
echo "PASS"
