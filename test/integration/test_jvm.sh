#!/bin/bash
# test_jvm.sh - a JVM (OpenJDK, unmodified) takes SIGSEGVs on purpose: the
# JIT's implicit null checks and its safepoint polls, which its own handler
# turns into a NullPointerException or a safepoint. test/services/
# JvmFaults.java passes a token round 4 named threads (LockSupport park and
# unpark) and catches a NullPointerException between hand-offs.
# - Those faults are no crash (agent/crash.c hands them to the JVM's
#   handler first): the program prints what it prints without the agent,
#   exits 0, and no crash.d9 is written (740778b's agent wrote one at the
#   first fault, and gave its handler up). strace counts the faults without
#   the agent, so the test cannot pass on a JVM that takes none.
# - The trace is intact and shows the 4 workers by name, each with condvar
#   parks and wakes received.
# - A JVM that does crash (a write through address 16 with Unsafe) exits
#   as without the agent (SIGABRT from its error handler), and crash.d9
#   says so: signal 6 in the program's handler of signal 11.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/integration/lib_services.sh
. "$(dirname "$0")/lib_services.sh"
d9_require "$D9_AGENT" "$D9_DECODER"
d9s_need java "default-jdk-headless"
command -v strace >/dev/null || d9_fail "strace is not installed (scripts/install-deps.sh test)"
ulimit -c 0 # the crash below: no core file
prog=$D9S_SERVICES/JvmFaults.java
# A single-file source launch (JDK 11+): compiled in memory, no class files.
# The crash's hs_err file goes to the test's directory.
jvm=(java -XX:ErrorFile="$D9_TMP/hs_err_%p.log" "$prog")

faults=$(strace -f -qq -e trace=none -e signal=SIGSEGV java "$prog" 4 200 2>&1 >/dev/null |
    grep -c -- '--- SIGSEGV' || true)
[ "$faults" -gt 0 ] || d9_fail "JvmFaults.java took no SIGSEGV without the agent: nothing to test"
want=$("${jvm[@]}" 4 200) || d9_fail "JvmFaults.java failed without the agent: $want"
got=$(d9_run_traced "$D9_TMP/faults" "${jvm[@]}" 4 200) ||
    d9_fail "JvmFaults.java under the agent exited $?: $got"
[ "$got" = "$want" ] || d9_fail "JvmFaults.java: '$got' under the agent, '$want' without it"
[ -z "$(find "$D9_TMP/faults" -name 'crash.d9*')" ] ||
    d9_fail "faults the JVM handled wrote a crash dump: $(find "$D9_TMP/faults")"
dir=$(find "$D9_TMP/faults" -mindepth 1 -maxdepth 1 -type d -name 'java.*')
[ "$(echo "$dir" | wc -l)" -eq 1 ] || d9_fail "want one java process directory: $(find "$D9_TMP/faults")"
d9_assert_sealed "$dir"
d9_assert_check "$dir"
d9s_decode_all "$dir"
d9_py "$D9S_PY"'
summary = json.load(open(sys.argv[1]))
check_dropped(summary)
workers = {t["name"]: t for t in summary["threads"] if t.get("name", "").startswith("jvm-worker-")}
if sorted(workers) != ["jvm-worker-%d" % i for i in range(4)]:
    errors.append("want the 4 workers by name: %r" % sorted(workers))
for name, t in sorted(workers.items()):
    if parks(t, "cond_wait", "cond_timedwait") <= 0 or t.get("wakes_received", 0) <= 0:
        errors.append("%s: want condvar parks and wakes received: %r" % (name, t))
print("workers: %r" % {n: (parks(t, "cond_wait", "cond_timedwait"), t.get("wakes_received")) for n, t in sorted(workers.items())})
' "$D9_TMP/summary.json"

plain=0
"${jvm[@]}" 2 10 crash >/dev/null 2>&1 || plain=$?
[ "$plain" -eq 134 ] || d9_fail "JvmFaults.java crash exited $plain without the agent, not 134 (SIGABRT)"
rc=0
d9_run_traced "$D9_TMP/crash" "${jvm[@]}" 2 10 crash >"$D9_TMP/crash.out" 2>&1 || rc=$?
[ "$rc" -eq "$plain" ] || d9_fail "crash: exit status $rc under the agent, $plain without it: $(tail -5 "$D9_TMP/crash.out")"
grep -q '^npe 40000 hops 20$' "$D9_TMP/crash.out" || d9_fail "crash: the program did not report: $(head -5 "$D9_TMP/crash.out")"
[ -n "$(find "$D9_TMP/crash" -name crash.d9)" ] || d9_fail "crash: no crash.d9 in $(find "$D9_TMP/crash")"
why="crash: signal 6 (SIGABRT) in the program's handler of signal 11 (SIGSEGV)"
"$D9_DECODER" check "$D9_TMP/crash" | grep -qF "dump reason: $why" ||
    d9_fail "crash: the dump's reason is not '$why': $("$D9_DECODER" check "$D9_TMP/crash")"
d9_log "jvm: $faults SIGSEGVs handled by the JVM without the agent; under it the same output ($want), no crash dump; a JVM crash dumped as '$why'"
echo "ok"
