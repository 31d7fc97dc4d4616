#!/bin/bash
# Faults the agent must survive without failing the program (issue 4):
# disk full and resumed, trace directory removed while running, unwritable
# DIAL9_DIR, files in the way, a symlink planted at the next segment's
# path, the size budget, stderr closed and its number reused, a trace
# directory whose open hangs (NFS); and the
# trace's own safety: 0700 directories, 0600 files, the command line
# recorded, the environment never.
# The program's ground truth is fault_writer's own output ("start",
# "wakes N", "end", exit 0) and, untraced, the same lines.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/fault_writer" "$D9_PROGS/stderr_reuse" \
    "$D9_PROGS/slow_dir" "$D9_PROGS/no_membarrier" "$D9_BUILD/preload/slow_segment_open.so"
FW=$D9_PROGS/fault_writer
skipped=""
mounts=""
cleanup_mounts() {
    local m
    for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    d9_cleanup
}
trap cleanup_mounts EXIT

mono_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
# dial9's own lines on a stderr file, but for the exit tally of what was
# dropped (writer.c: "N events were not written"), which is not a fault message.
agent_lines() { grep '^dial9: ' "$1" | grep -vc 'events were not written$' || true; }
# The program behaved as untraced: exit 0, start/wakes/end.
assert_program_ok() { # RC OUTFILE WHAT
    [ "$1" -eq 0 ] || d9_fail "$3: fault_writer exited $1"
    [ "$(grep -v '^wakes [0-9]*$' "$2" | tr '\n' ' ')" = "start end " ] ||
        d9_fail "$3: output differs from an untraced run: $(cat "$2")"
    grep -q '^wakes [1-9][0-9]*$' "$2" || d9_fail "$3: no wakes line: $(cat "$2")"
}
wait_for() { # SECONDS COMMAND...: polls every 50 ms
    local i=0
    while [ $i -lt $(($1 * 20)) ]; do
        "${@:2}" && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# Reference: untraced, the program says start/wakes/end and exits 0.
"$FW" 0.2 >"$D9_TMP/ref" || d9_fail "fault_writer failed untraced"
assert_program_ok 0 "$D9_TMP/ref" untraced

# ---- (a) Disk full, then space returns -------------------------------------
# While the disk is full the agent keeps the compressed blocks in memory (at
# most DIAL9_FLIGHT_MAX_BYTES, oldest forced out and counted as dropped) and
# writes them first when space returns. Ground truth: fault_writer's own
# wake counts and phase marks (CLOCK_MONOTONIC, as the trace's ts).
full=$D9_TMP/full
mkdir -p "$full"
if ! mount -t tmpfs -o size=256k tmpfs "$full" 2>"$D9_TMP/mount.err"; then
    skipped="$skipped disk-full (mount -t tmpfs not permitted: $(head -c 200 "$D9_TMP/mount.err"))"
else
    mounts="$full"
    bound=$((1 << 20)) # the smallest DIAL9_FLIGHT_MAX_BYTES
    # 1000 wakes per ms: ~0.8 MB/s of compressed trace fills 256 KiB at once.
    # It runs until SIGINT (below), at most 120 s: on a slow machine the
    # steps before the phase marks can take longer than any fixed run.
    DIAL9_MAX_FILE_SIZE=64K DIAL9_FLIGHT_MAX_BYTES=$bound d9_start_traced "$full/t" "$FW" 120 1000 \
        >"$D9_TMP/a.out" 2>"$D9_TMP/a.err"
    nospace() { grep -q 'No space left on device' "$D9_TMP/a.err"; }
    wait_for 6 nospace || d9_fail "disk full: no message after 6 s: $(cat "$D9_TMP/a.err"; df -k "$full")"
    dir=$(d9_proc_dir "$full/t" "$D9_PID") || exit 1
    rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$D9_PID/status"; }
    rss0=$(rss)
    # The segments sealed before the outage are whole and readable; they must stay as they are.
    mkdir "$D9_TMP/sealed"
    cp "$dir"/*.d9 "$D9_TMP/sealed/" || d9_fail "disk full: no sealed segment: $(ls -l "$dir")"
    d9_assert_check "$D9_TMP/sealed"
    read -r sealed_events sealed_end < <("$D9_DECODER" events --json "$D9_TMP/sealed" | python3 -c 'import json, sys
ts = [e["ts"] for l in sys.stdin if (e := json.loads(l))["type"] == "wake"]
print(len(ts), max(ts, default=0))')
    [ "$sealed_events" -gt 0 ] || d9_fail "disk full: sealed segments hold no wake"
    # 4 s at full rate (~3 MB, three times the bound), then a slow window
    # [phase 1, phase 2] of known wakes, still with the disk full.
    sleep 4
    rss1=$(rss)
    kill -USR1 "$D9_PID"
    sleep 1
    kill -USR1 "$D9_PID"
    marks() { [ "$(grep -c '^phase [12] at' "$D9_TMP/a.err")" -eq 2 ]; }
    wait_for 5 marks || d9_fail "disk full: fault_writer did not mark its phases: $(cat "$D9_TMP/a.err")"
    ! grep -q 'again' "$D9_TMP/a.err" || d9_fail "disk full: resumed while the disk was full: $(cat "$D9_TMP/a.err")"
    read -r t1 w1 < <(sed -n 's/^phase 1 at \([0-9]*\) after \([0-9]*\) wakes$/\1 \2/p' "$D9_TMP/a.err")
    read -r t2 w2 < <(sed -n 's/^phase 2 at \([0-9]*\) after \([0-9]*\) wakes$/\1 \2/p' "$D9_TMP/a.err")
    # Space returns: the mount grows (the sealed segments stay).
    mount -o remount,size=64m "$full" || d9_fail "disk full: cannot grow the tmpfs"
    again() { grep -q "^dial9: writing to $dir again" "$D9_TMP/a.err"; }
    wait_for 10 again || d9_fail "disk full: no 'writing to $dir again' 10 s after space returned: $(cat "$D9_TMP/a.err")"
    kill -INT "$D9_PID"
    d9_wait_exit "$D9_PID" 30
    assert_program_ok "$D9_RC" "$D9_TMP/a.out" "disk full"
    # One line at the outage, one at the resume, nothing else (nothing left unwritten at exit).
    n=$(grep -c '^dial9: cannot write to\|^dial9: cannot create a segment' "$D9_TMP/a.err" || true)
    [ "$n" -eq 1 ] || d9_fail "disk full: said $n times (expected once): $(cat "$D9_TMP/a.err")"
    n=$(grep -c '^dial9: ' "$D9_TMP/a.err" || true)
    [ "$n" -eq 2 ] || d9_fail "disk full: $n agent lines (expected the outage and the resume): $(cat "$D9_TMP/a.err")"
    read -r kept_blocks kept_bytes peak forced < <(sed -n 's/^dial9: writing to .* again; \([0-9]*\) blocks (\([0-9]*\) bytes) kept.* (at most \([0-9]*\) bytes held at once), \([0-9]*\) events forced out.*/\1 \2 \3 \4/p' "$D9_TMP/a.err")
    [ -n "$forced" ] || d9_fail "disk full: resume line unreadable: $(cat "$D9_TMP/a.err")"
    d9_assert_sealed "$dir"
    d9_assert_check "$dir"
    for f in "$D9_TMP"/sealed/*.d9; do
        cmp -s "$f" "$dir/$(basename "$f")" || d9_fail "disk full: $(basename "$f"), sealed before the outage, changed or removed"
    done
    wakes=$(sed -n 's/^wakes //p' "$D9_TMP/a.out")
    "$D9_DECODER" summary --json "$dir" >"$D9_TMP/a.json" || d9_fail "disk full: summary failed"
    dropped=$(d9_json "$D9_TMP/a.json" 'j["dropped"]')
    # Per segment (in name order) its wakes: count, first and last ts.
    for f in "$dir"/*.d9; do
        "$D9_DECODER" events --json "$f" | python3 -c 'import json, sys
ts = [e["ts"] for l in sys.stdin if (e := json.loads(l))["type"] == "wake"]
print(len(ts), min(ts, default=0), max(ts, default=0))'
    done >"$D9_TMP/a.segs"
    # Wakes decoded: all; of the outage at full rate (after the last one on
    # disk when the outage was seen, before phase 1); of the window.
    read -r total outage window < <("$D9_DECODER" events --json "$dir" | python3 -c 'import json, sys
t0, t1, t2 = (int(a) for a in sys.argv[1:])
ts = [e["ts"] for l in sys.stdin if (e := json.loads(l))["type"] == "wake"]
print(len(ts), sum(t0 < t < t1 for t in ts), sum(t1 < t < t2 for t in ts))' "$sealed_end" "$t1" "$t2")
    # Every wake of the window made while the disk was full is in the trace, exactly.
    [ "$window" -eq $((w2 - w1)) ] ||
        d9_fail "disk full: $window wakes decoded between the phase marks, fault_writer made $((w2 - w1))"
    # The bound held: what was kept fits it, and memory grew by no more than it.
    [ "$outage" -gt 0 ] || d9_fail "disk full: no wake of the outage's full-rate part recovered"
    [ "$forced" -gt 0 ] || d9_fail "disk full: ~3 MB over a 1 MiB bound and nothing was forced out"
    # (kept_bytes counts every block kept over the outage: more than the
    # bound when the disk refilled while the kept blocks were being written.)
    [ "$peak" -gt 0 ] && [ "$peak" -le "$bound" ] || d9_fail "disk full: $peak bytes held at once, over the $bound bound"
    [ $((rss1 - rss0)) -le $((bound + (1 << 20))) ] ||
        d9_fail "disk full: RSS grew by $((rss1 - rss0)) bytes during the outage (bound $bound)"
    # Every wake fault_writer made is in the trace or counted as dropped, and some were dropped.
    [ "$total" -le "$wakes" ] || d9_fail "disk full: $total wakes decoded, fault_writer made $wakes"
    [ "$total" -lt "$wakes" ] || d9_fail "disk full: no wake lost although $forced events were forced out"
    [ $((wakes - total)) -le "$dropped" ] ||
        d9_fail "disk full: $((wakes - total)) wakes missing but only $dropped counted as dropped"
    [ "$dropped" -ge "$forced" ] || d9_fail "disk full: $forced forced out, $dropped dropped in the trace"
    # Written in time order: each segment's wakes all come after the previous one's.
    python3 -c 'import sys
prev = 0
for i, l in enumerate(open(sys.argv[1])):
    n, lo, hi = map(int, l.split())
    if n and lo < prev:
        sys.exit(f"segment {i}: first wake {lo} before the previous segment ends ({prev})")
    prev = max(prev, hi)' "$D9_TMP/a.segs" || d9_fail "disk full: segments out of time order"
    d9_log "disk full: one message; $sealed_events wakes sealed before; outage window: $window of $((w2 - w1)) wakes recovered;" \
        "$outage newest wakes of the full-rate part; $kept_blocks blocks ($kept_bytes bytes, at most $peak held, bound $bound) written on resume;" \
        "$forced events forced out, $dropped dropped in the trace, $((wakes - total)) of $wakes wakes missing;" \
        "RSS +$((rss1 - rss0)) bytes during the outage"
fi

# ---- (b) The trace directory removed while running -------------------------
# Segments rotate every 8 KiB (about 3 a second: its repeated wakes
# compress well), so the agent must create one after the removal. The
# program runs until the directory is back and ends on SIGINT.
DIAL9_MAX_FILE_SIZE=8K d9_start_traced "$D9_TMP/rm" "$FW" 120 20 >"$D9_TMP/b.out" 2>"$D9_TMP/b.err"
exists() { [ -n "$(find "$D9_TMP/rm" -name '*.d9' 2>/dev/null | head -n 1)" ]; }
wait_for 10 exists || d9_fail "removed dir: nothing recorded before the removal"
rm -rf "$D9_TMP/rm"
t_rm=$(mono_ns)
wait_for 10 exists || d9_fail "removed dir: not recreated 10 s after the removal"
kill -INT "$D9_PID"
d9_wait_exit "$D9_PID" 30
assert_program_ok "$D9_RC" "$D9_TMP/b.out" "removed dir"
n=$(agent_lines "$D9_TMP/b.err")
[ "$n" -le 1 ] || d9_fail "removed dir: $n messages (at most one): $(cat "$D9_TMP/b.err")"
dir=$(d9_proc_dir "$D9_TMP/rm" "$D9_PID") || d9_fail "removed dir: not recreated"
d9_assert_check "$dir"
after=$("$D9_DECODER" events --json "$dir" |
    python3 -c 'import json, sys; t = int(sys.argv[1]); print(sum(1 for l in sys.stdin if json.loads(l)["ts"] > t))' "$t_rm")
[ "$after" -gt 0 ] || d9_fail "removed dir: recreated but nothing recorded after the removal"
d9_log "removed dir: recreated, $after events after the removal, $n message(s)"

# ---- (b2) The size budget, and sealed segments removed by hand ------------
# 8 KiB segments within a 40 KiB total: retention keeps the newest sealed
# ones, at most the total less one open segment (32 KiB), deleting the
# oldest first. Then every sealed segment is removed by hand (an operator
# freeing space, a /tmp cleaner): the sizes of the removed ones must not
# stay counted, or each segment sealed afterwards is deleted at once.
DIAL9_MAX_FILE_SIZE=8K DIAL9_MAX_TOTAL_SIZE=40K d9_start_traced "$D9_TMP/budget" "$FW" 120 20 \
    >"$D9_TMP/b2.out" 2>"$D9_TMP/b2.err"
seqs() { # the sealed segments' numbers, ascending, one a line
    find "$D9_TMP/budget" -name '*.d9' -printf '%f\n' 2>/dev/null | cut -c1-6 | sort -n | sed 's/^0*//; s/^$/0/'
}
newest() { seqs | tail -n 1; }
past() { local n; n=$(newest); [ -n "$n" ] && [ "$n" -ge "$1" ]; }
# Sealed segments fit the budget and are the newest, without a gap. A look
# can fall between a seal and its retention: one of several must pass.
budget_ok() {
    local bytes first last count
    bytes=$(find "$D9_TMP/budget" -name '*.d9' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    first=$(seqs | head -n 1); last=$(seqs | tail -n 1); count=$(seqs | wc -l)
    [ "$bytes" -le $((32 * 1024)) ] && [ "$count" -ge 2 ] && [ $((last - first + 1)) -eq "$count" ]
}
assert_budget() { # WHAT
    wait_for 1 budget_ok || d9_fail "budget, $1: sealed segments over 32768 bytes, fewer than 2, or not the newest in a row: $(ls -l "$(d9_proc_dir "$D9_TMP/budget" "$D9_PID")")"
}
wait_for 30 past 8 || d9_fail "budget: fewer than 9 segments sealed in 30 s: $(seqs | tr '\n' ' ')"
[ "$(seqs | head -n 1)" -gt 0 ] || d9_fail "budget: nothing deleted past the budget: $(seqs | tr '\n' ' ')"
assert_budget "before the removal"
mark=$(newest)
find "$D9_TMP/budget" -name '*.d9' -delete
wait_for 30 past $((mark + 5)) || d9_fail "budget: no segment kept after the removal (newest $(newest), sealed: $(seqs | tr '\n' ' '))"
assert_budget "after the removal"
kill -INT "$D9_PID"
d9_wait_exit "$D9_PID" 30
assert_program_ok "$D9_RC" "$D9_TMP/b2.out" budget
d9_log "budget: sealed segments within 32 KiB, the newest kept, also after all were removed by hand ($(seqs | tr '\n' ' '))"

# ---- (c) DIAL9_DIR unwritable ----------------------------------------------
# Root ignores permission bits: a path under a regular file (ENOTDIR), and a
# read-only mount when mounting is allowed.
unwritable() { # DIR WHAT
    local rc=0
    d9_run_traced "$1" "$FW" 0.3 >"$D9_TMP/c.out" 2>"$D9_TMP/c.err" || rc=$?
    assert_program_ok "$rc" "$D9_TMP/c.out" "$2"
    n=$(agent_lines "$D9_TMP/c.err")
    [ "$n" -eq 1 ] || d9_fail "$2: $n messages (expected one): $(cat "$D9_TMP/c.err")"
    grep -q "$1" "$D9_TMP/c.err" || d9_fail "$2: the message does not name $1: $(cat "$D9_TMP/c.err")"
}
echo data >"$D9_TMP/afile"
unwritable "$D9_TMP/afile/x" "DIAL9_DIR under a file"
ro=$D9_TMP/ro
mkdir -p "$ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$ro" 2>/dev/null; then
    mounts="$mounts $ro"
    unwritable "$ro" "read-only DIAL9_DIR"
    [ -z "$(ls -A "$ro")" ] || d9_fail "read-only DIAL9_DIR: something was written"
fi

# ---- (d) Files in the way -----------------------------------------------------
# DIAL9_DIR itself a file: one message, the file untouched.
unwritable "$D9_TMP/afile" "DIAL9_DIR is a file"
[ "$(cat "$D9_TMP/afile")" = data ] || d9_fail "DIAL9_DIR is a file: it was changed"
# A file named like the process directory (<exe>.<pid>: the shell's pid,
# which exec keeps): the agent records into another name, never into it.
mkdir -p "$D9_TMP/way"
sh -c 'echo planted >"$1/fault_writer.$$" && exec env LD_PRELOAD="$2" DIAL9_DIR="$1" DIAL9_QUIET=1 "$3" 0.3' \
    sh "$D9_TMP/way" "$D9_AGENT" "$FW" >"$D9_TMP/d.out" 2>"$D9_TMP/d.err" &
pid=$!
d9_track "$pid"
d9_wait_exit "$pid" 30
assert_program_ok "$D9_RC" "$D9_TMP/d.out" "file in the way"
[ "$(cat "$D9_TMP/way/fault_writer.$pid")" = planted ] || d9_fail "file in the way: it was changed"
[ -d "$D9_TMP/way/fault_writer.$pid.2" ] || d9_fail "file in the way: no fault_writer.$pid.2: $(ls "$D9_TMP/way")"
d9_assert_sealed "$D9_TMP/way/fault_writer.$pid.2"
d9_assert_check "$D9_TMP/way/fault_writer.$pid.2"
n=$(agent_lines "$D9_TMP/d.err")
[ "$n" -le 1 ] || d9_fail "file in the way: $n messages: $(cat "$D9_TMP/d.err")"
# Every name taken (<exe>.<pid>, .2 ... .99: pid reuse in a container that
# restarts, or another user's planting): one message, nothing recorded,
# nothing written into any of them.
mkdir -p "$D9_TMP/taken"
sh -c 'for i in "" $(seq -f .%g 2 99); do mkdir "$1/fault_writer.$$$i" && touch "$1/fault_writer.$$$i/mark"; done &&
    exec env LD_PRELOAD="$2" DIAL9_DIR="$1" DIAL9_QUIET=1 "$3" 0.3' \
    sh "$D9_TMP/taken" "$D9_AGENT" "$FW" >"$D9_TMP/d2.out" 2>"$D9_TMP/d2.err" &
pid=$!
d9_track "$pid"
d9_wait_exit "$pid" 30
assert_program_ok "$D9_RC" "$D9_TMP/d2.out" "every name taken"
[ "$(find "$D9_TMP/taken" -mindepth 1 -maxdepth 1 | wc -l)" -eq 99 ] || d9_fail "every name taken: $(ls "$D9_TMP/taken" | head)"
[ "$(find "$D9_TMP/taken" -type f | wc -l)" -eq 99 ] || d9_fail "every name taken: written into: $(find "$D9_TMP/taken" -type f ! -name mark | head)"
grep -q "fault_writer.$pid.99 and every name before it exist; not recording" "$D9_TMP/d2.err" ||
    d9_fail "every name taken: no message: $(cat "$D9_TMP/d2.err")"
n=$(agent_lines "$D9_TMP/d2.err")
[ "$n" -eq 1 ] || d9_fail "every name taken: $n messages: $(cat "$D9_TMP/d2.err")"
d9_log "files in the way: DIAL9_DIR a file (one message), process dir taken (recorded in .2), all 99 names taken (one message, none written)"

# ---- (e) A symlink planted at the next segment's path ------------------------
# Segments are NNNNNN.d9.open while written, NNNNNN.d9 once sealed
# (segment.c), rotated every second here: plant a link at the next name.
# The program runs until the segment after the link is begun (SIGINT).
echo original >"$D9_TMP/target"
DIAL9_ROTATION_SECS=1 d9_start_traced "$D9_TMP/ln" "$FW" 120 5 >"$D9_TMP/e.out" 2>"$D9_TMP/e.err"
# The newest segment name, open or sealed.
last_seg() { find "$D9_TMP/ln" -name '*.d9*' 2>/dev/null | sort | tail -n 1; }
has_seg() { [ -n "$(last_seg)" ]; }
wait_for 10 has_seg || d9_fail "symlink: no segment"
planted=""
for _ in $(seq 50); do
    cur=$(last_seg)
    d=$(dirname "$cur")
    next=$(printf '%06d' $((10#$(basename "$cur" | cut -c1-6) + 1)))
    # ln fails when the agent created that name first: try again.
    if ln -s "$D9_TMP/target" "$d/$next.d9.open" 2>/dev/null; then
        planted=$next
        break
    fi
    sleep 0.1
done
[ -n "$planted" ] || d9_fail "symlink: could not plant a link ahead of the agent"
later=$(printf '%06d' $((10#$planted + 1)))
begun() { [ -e "$d/$later.d9.open" ] || [ -e "$d/$later.d9" ]; }
wait_for 10 begun || d9_fail "symlink: no $later.d9 10 s after the link: $(ls "$d")"
kill -INT "$D9_PID"
d9_wait_exit "$D9_PID" 30
assert_program_ok "$D9_RC" "$D9_TMP/e.out" symlink
[ "$(cat "$D9_TMP/target")" = original ] || d9_fail "symlink: the agent wrote through the link"
[ -L "$d/$planted.d9.open" ] || d9_fail "symlink: the link was replaced"
n=$(grep -c "$planted.d9.open exists and is not ours" "$D9_TMP/e.err" || true)
[ "$n" -eq 1 ] || d9_fail "symlink: expected one message about $planted: $(cat "$D9_TMP/e.err")"
[ "$(agent_lines "$D9_TMP/e.err")" -eq 1 ] || d9_fail "symlink: other messages: $(cat "$D9_TMP/e.err")"
[ -f "$d/$later.d9" ] || d9_fail "symlink: the trace did not continue in $later.d9: $(ls "$d")"
rm -f "$d/$planted.d9.open"
d9_assert_check "$d"
d9_log "symlink at $planted.d9.open: skipped with one message, target unchanged, continued in $later.d9"

# ---- (f) Modes; the command line recorded, the environment never -------------
secret=zq8Env$RANDOM$RANDOM
argmark=zq8Arg$RANDOM$RANDOM
DIAL9_TEST_SECRET=$secret d9_run_traced "$D9_TMP/modes/sub" "$FW" 0.3 5 "$argmark" >"$D9_TMP/f.out" 2>&1 ||
    d9_fail "modes: fault_writer failed: $(cat "$D9_TMP/f.out")"
for p in "$D9_TMP/modes" "$D9_TMP/modes/sub" "$D9_TMP"/modes/sub/*; do
    [ "$(stat -c %a "$p")" = 700 ] || d9_fail "modes: $p is $(stat -c %a "$p"), not 700"
done
files=$(find "$D9_TMP/modes/sub" -type f | wc -l)
[ "$files" -gt 0 ] || d9_fail "modes: no segment"
bad=$(find "$D9_TMP/modes/sub" -type f ! -perm 600)
[ -z "$bad" ] || d9_fail "modes: not 0600: $bad"
# Raw bytes (the header is uncompressed), and every decoded event.
! grep -rqa "$secret" "$D9_TMP/modes" || d9_fail "modes: the environment was recorded"
! "$D9_DECODER" events --json "$D9_TMP/modes" | grep -q "$secret" || d9_fail "modes: the environment is in an event"
"$D9_DECODER" summary --json "$D9_TMP/modes" >"$D9_TMP/f.json" || d9_fail "modes: summary failed"
cmd=$(d9_json "$D9_TMP/f.json" '" ".join(p["cmdline"] for p in j["processes"])')
case $cmd in *"$argmark"*) ;; *) d9_fail "modes: the cmdline marker is not in processes[].cmdline: $cmd" ;; esac
d9_log "modes: dirs 0700, $files files 0600, cmdline recorded, environment not"

# ---- (g) stderr closed and its number reused -----------------------------
# A daemon closes fd 2 and its next open gets that number: the agent's lines
# (here the dump notice of SIGUSR2) must not go into that file. A file
# dup2'd onto fd 2 is stderr on purpose: they go there.
SR=$D9_PROGS/stderr_reuse
d9_run_traced "$D9_TMP/sr" env DIAL9_QUIET=0 "$SR" closed "$D9_TMP/sr.data" 2>"$D9_TMP/sr.err" ||
    d9_fail "stderr reused: the program failed"
[ "$(cat "$D9_TMP/sr.data")" = data ] || d9_fail "stderr reused: the file holds: $(head -c 300 "$D9_TMP/sr.data")"
d9_run_traced "$D9_TMP/sr" env DIAL9_QUIET=0 "$SR" dup2 "$D9_TMP/sr.log" 2>"$D9_TMP/sr.err" ||
    d9_fail "stderr redirected: the program failed"
grep -q '^dial9: dump (signal 12)' "$D9_TMP/sr.log" || d9_fail "stderr redirected: no dump line: $(cat "$D9_TMP/sr.log")"
d9_log "stderr: nothing written into a file that took fd 2 after a close; lines go to a dup2'd one"

# ---- (h) A trace directory that hangs ---------------------------------------
# An NFS server gone: the writer's open of a segment blocks for seconds. The
# host's closes must not wait for it (the agent's fds are told apart from
# the host's without holding them up). slow_segment_open.so holds the
# writer's first segment open 2 s after the kernel gave it its number.
# Ground truth: slow_dir's own clock around each close and its own file.
held_slow_dir() { # MS MODE [ENV...]: slow_dir MODE with the open held MS ms, into $D9_TMP/hang.MODE[.out|.host]
    local ms=$1 mode=$2     # (the trace too, unless ENV sets DIAL9_DIR); HANG_WRAP: a command run before it
    shift 2
    rm -rf "$D9_TMP/hang.$mode"
    t_launch=$(mono_ns)
    SLOW_OPEN_MS=$ms timeout -k 5 60 ${HANG_WRAP:-} env LD_PRELOAD="$D9_BUILD/preload/slow_segment_open.so $D9_AGENT" \
        DIAL9_DIR="$D9_TMP/hang.$mode" DIAL9_QUIET=1 "$@" "$D9_PROGS/slow_dir" "$mode" "$D9_TMP/hang.$mode.host" \
        >"$D9_TMP/hang.$mode.out" 2>&1 || d9_fail "hung dir ($mode): slow_dir failed: $(cat "$D9_TMP/hang.$mode.out")"
    # ms from the launch to slow_dir's main
    start_ms=$((($(sed -n 's/^main at \([0-9]*\) ns$/\1/p' "$D9_TMP/hang.$mode.out") - t_launch) / 1000000))
}
hang_run() { # MODE [MS [ENV...]]: slow_dir MODE under an open held MS (2000) ms; its closes and its wakes
    local mode=$1 ms=${2:-2000}
    shift
    [ $# -gt 0 ] && shift
    held_slow_dir "$ms" "$mode" "$@"
    [ "$(sed -n 's/^wakes //p' "$D9_TMP/hang.$mode.out")" = 200 ] || d9_fail "hung dir ($mode): $(cat "$D9_TMP/hang.$mode.out")"
    slowest=$(sed -n 's/^slowest close \([0-9]*\) us$/\1/p' "$D9_TMP/hang.$mode.out")
    during=$(sed -n 's/^closes while held //p' "$D9_TMP/hang.$mode.out")
    # The open is held 2 s: a close that waited for it took that long.
    [ -n "$slowest" ] && [ "$slowest" -lt 500000 ] ||
        d9_fail "hung dir ($mode): a host close took ${slowest:-?} us while the writer's open hung"
    [ "${during:-0}" -ge 1 ] || d9_fail "hung dir ($mode): no close made while the open was held: $(cat "$D9_TMP/hang.$mode.out")"
    hdir=$(d9_sealed_dir "$D9_TMP/hang.$mode" "$(ls "$D9_TMP/hang.$mode" | sed -n 's/^slow_dir\.\([0-9]*\)$/\1/p')") || exit 1
    # Every wake slow_dir made is in the trace, none dropped.
    wakes=$("$D9_DECODER" events --json "$hdir" | python3 -c 'import json, sys
print(sum(1 for l in sys.stdin if (e := json.loads(l))["type"] == "wake" and e["call"] == "cond_signal"))')
    [ "$wakes" = 200 ] || d9_fail "hung dir ($mode): $wakes cond_signal wakes decoded, slow_dir made 200"
}
hang_run closes
d9_log "hung dir: 200 host closes while the writer's open hung, slowest $slowest us"
# The host closes the number the held open got (a close loop would) and
# opens its own file, which takes it: the agent must find the number is
# not its segment's any more and write nothing there.
reuse_run() { # [WHY]: hang_run reuse, and the host's file must hold only the host's lines
    set -- "${1:-}"
    hang_run reuse
    grep -qx 'reused yes' "$D9_TMP/hang.reuse.out" || d9_fail "hung dir (reuse$1): the host's file did not take the number: $(cat "$D9_TMP/hang.reuse.out")"
    [ "$(cat "$D9_TMP/hang.reuse.host")" = "$(printf 'host 1\nhost 2')" ] ||
        d9_fail "hung dir (reuse$1): the host's file holds: $(head -c 200 "$D9_TMP/hang.reuse.host" | od -c | head -n 4)"
    d9_log "hung dir$1: the number closed and reused by the host; the host's file untouched, every wake recorded"
}
reuse_run
# The closing thread has a slot, so its close counted itself there, and the
# writer saw it through membarrier. Where membarrier is refused (a seccomp
# profile), closes count in the shared counters instead, and the writer
# waits 1 ms where it would have made its barrier: the same must hold.
HANG_WRAP=$D9_PROGS/no_membarrier reuse_run ", membarrier refused"
# exit() while the open hangs for 30 s: the agent gives up on its writer
# after 5 s without a write, with one line, and the program's exit goes on.
t0=$(mono_ns)
held_slow_dir 30000 exit
ms=$((($(mono_ns) - t0) / 1000000))
grep -qx 'exiting while held' "$D9_TMP/hang.exit.out" || d9_fail "hung dir (exit): $(cat "$D9_TMP/hang.exit.out")"
[ "$ms" -lt 15000 ] || d9_fail "hung dir (exit): the exit took $ms ms while the open hung 30 s"
[ "$(grep -c '^dial9: the writer has finished no write for 5 s' "$D9_TMP/hang.exit.out")" = 1 ] ||
    d9_fail "hung dir (exit): no line, or more than one: $(cat "$D9_TMP/hang.exit.out")"
d9_log "hung dir: exit took $ms ms while the writer's open hung 30 s, with one line"

# ---- (i) A trace directory that hangs at the start --------------------------
# The agent's start makes and opens DIAL9_DIR: held there (SLOW_OPEN_DIR=1,
# the preload holds that open instead), the program's main must still come
# within the agent's 2 s wait, with one line; what it records meanwhile is
# written once the directory answers, and its closes do not wait.
hang_run closes 5000 SLOW_OPEN_DIR=1
[ "$start_ms" -lt 4000 ] || d9_fail "hung dir at start: main came $start_ms ms after the launch (the open was held 5 s)"
[ "$(grep -c '^dial9: DIAL9_DIR=.*: no answer in 2 s; recording into memory until it answers$' "$D9_TMP/hang.closes.out")" = 1 ] ||
    d9_fail "hung dir at start: no line, or more than one: $(cat "$D9_TMP/hang.closes.out")"
d9_log "hung dir at start: main $start_ms ms after the launch (the dir held 5 s); 200 wakes written once it answered; slowest close $slowest us"
# And the exit of a program whose directory never answers: the start's
# 2 s, then the writer's 5 s without a write.
t0=$(mono_ns)
held_slow_dir 30000 exit SLOW_OPEN_DIR=1
ms=$((($(mono_ns) - t0) / 1000000))
[ "$start_ms" -lt 4000 ] || d9_fail "hung dir at start (exit): main came $start_ms ms after the launch"
[ "$ms" -lt 15000 ] || d9_fail "hung dir at start (exit): the run took $ms ms while the open hung 30 s"
[ "$(grep -c '^dial9: ' "$D9_TMP/hang.exit.out")" = 2 ] && grep -q '^dial9: the writer has finished no write for 5 s' "$D9_TMP/hang.exit.out" ||
    d9_fail "hung dir at start (exit): want the start's line and the exit's: $(cat "$D9_TMP/hang.exit.out")"
d9_log "hung dir at start: a run whose dir never answered took $ms ms (main after $start_ms ms)"
# A directory that answers after the 2 s, with a failure: the writer says
# so then, in the line the start would have printed, and recording stops.
late_answer() { # NAME LINE [ENV...]: slow_dir under an open of DIAL9_DIR held 3 s; LINE once, nothing written
    local late=$D9_TMP/hang.$1 line=$2 out=$D9_TMP/hang.closes.out
    shift 2
    held_slow_dir 3000 closes SLOW_OPEN_DIR=1 DIAL9_DIR="$late" "$@"
    grep -qx 'wakes 200' "$out" || d9_fail "late answer: $(cat "$out")"
    grep -q '^dial9: DIAL9_DIR=.*: no answer in 2 s' "$out" || d9_fail "late answer: no start line: $(cat "$out")"
    [ "$(grep -c "^dial9: DIAL9_DIR=$late: $line; not recording\$" "$out")" = 1 ] &&
        [ "$(grep -c '^dial9: ' "$out")" -le 3 ] || # and "N events were not written"
        d9_fail "late answer: want one line from the writer ($line): $(cat "$out")"
    [ -z "$(ls -A "$late")" ] || d9_fail "late answer: wrote into $late: $(ls -A "$late")"
}
late_answer errno "cannot create: Permission denied" SLOW_OPEN_ERRNO=13
if [ "$(id -u)" = 0 ]; then # another user's directory, writable by all
    mkdir -p "$D9_TMP/hang.other" && chown nobody "$D9_TMP/hang.other" && chmod 0777 "$D9_TMP/hang.other" ||
        d9_fail "cannot make $D9_TMP/hang.other nobody's"
    late_answer other "belongs to another user or is writable by others"
else
    skipped="$skipped late-answer-other-user (needs root)"
fi
d9_log "hung dir at start, then a failure (EACCES; another user's directory): the writer's one line, nothing written"

if [ -n "$skipped" ]; then
    d9_skip "everything else passed; not run:$skipped"
fi
d9_log "faults: disk full, removed dir, size budget, unwritable dir, files in the way, symlink, stderr, modes, hung dir (at start too) OK"
