#!/bin/bash
# test_file_io.sh - which reads and writes become slow_syscall events.
# build/progs/file_io makes read, write, pread(64) and pwrite(64) calls of
# 256 KiB each on a regular file, and 1-byte reads and writes on a pipe and
# a socket pair, and prints its fds and counts. With DIAL9_SLOW_SYSCALL_US=1
# every file call must be recorded (each takes well over 1 us) under its
# own name and fd, kind "file", and no call on the pipe or the sockets.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/file_io"

DIAL9_SLOW_SYSCALL_US=1 d9_run_traced "$D9_TMP/trace" "$D9_PROGS/file_io" "$D9_TMP" >"$D9_TMP/truth" ||
    d9_fail "file_io failed under the agent"
pid=$(sed -n 's/^pid //p' "$D9_TMP/truth")
dir=$(d9_sealed_dir "$D9_TMP/trace" "$pid") || exit 1
d9_decode_to "$D9_TMP/events" events --json "$dir"
d9_py '
from collections import Counter
truth = {}
for line in open(sys.argv[1]):
    f = line.split()
    truth[(f[0], f[1]) if f[0] == "calls" else f[0]] = f[2:] if f[0] == "calls" else f[1:]
file_fd = int(truth["file"][0])
other_fds = {int(x) for x in truth["pipe"] + truth["socket"]}
ev = [e for e in jsonl(sys.argv[2]) if e["type"] == "slow_syscall"]
io = ("read", "write", "pread", "pwrite")
got = Counter(e["call"] for e in ev if e["fd"] == file_fd and e["call"] in io)
want = {c: int(truth[("calls", c)][0]) for c in io}
expect("file calls recorded, by name", dict(got), want)
expect("kinds of the file calls", sorted({e["fd_kind"] for e in ev if e["fd"] == file_fd and e["call"] in io}), ["file"])
expect("pipe and socket calls recorded", [e for e in ev if e["fd"] in other_fds and e["call"] in io], [])
print("file calls recorded: %s" % dict(got))
' "$D9_TMP/truth" "$D9_TMP/events"
