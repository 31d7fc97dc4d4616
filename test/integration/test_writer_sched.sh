#!/bin/bash
# test_writer_sched.sh - the writer thread is never real-time. It inherits
# the policy of the thread that starts it; under a SCHED_FIFO or SCHED_RR
# host it must drop to SCHED_OTHER, while the host's own thread keeps its
# policy and priority. Under SCHED_DEADLINE it cannot start at all: the
# agent says so once and the host runs on. Ground truth: the policy and rt_priority fields
# (41 and 40) of /proc/PID/task/TID/stat, as the kernel reports them.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT"
why=$(chrt -f 10 true 2>&1) || d9_skip "cannot set SCHED_FIFO here (needs CAP_SYS_NICE and real-time runtime): $why"

# sched_of PID TID: "policy rt_priority" of one thread (0 OTHER, 1 FIFO, 2 RR).
sched_of() { sed 's/^.*) //' "/proc/$1/task/$2/stat" | awk '{print $39, $38}'; }

for flag in -f -r; do
    want=$([ "$flag" = -f ] && echo 1 || echo 2)
    d9_start_traced "$D9_TMP/t$flag" chrt "$flag" 10 sleep 2
    pid=$D9_PID
    for _ in $(seq 100); do # up to 10 s for the exec and the writer's start
        # chrt itself runs a writer until it execs sleep: both names at once
        snap=$(d9_snapshot_threads "$pid")
        writer=$(awk '$2 == "dial9-writer" {print $1}' <<<"$snap")
        host=$(awk '$2 == "sleep" {print $1}' <<<"$snap")
        [ -n "$writer" ] && [ -n "$host" ] && break
        sleep 0.1
    done
    [ -n "$writer" ] && [ -n "$host" ] || d9_fail "chrt $flag: no sleep and dial9-writer threads in pid $pid"
    got=$(sched_of "$pid" "$writer")
    [ "$got" = "0 0" ] || d9_fail "chrt $flag: the writer runs with policy/priority $got, want 0 0 (SCHED_OTHER)"
    got=$(sched_of "$pid" "$host")
    [ "$got" = "$want 10" ] || d9_fail "chrt $flag: the host thread has policy/priority $got, want $want 10"
    d9_wait_exit "$pid" 30
    [ "$D9_RC" -eq 0 ] || d9_fail "chrt $flag sleep 2 exited $D9_RC"
    dir=$(d9_sealed_dir "$D9_TMP/t$flag" "$pid") || exit 1
    d9_log "chrt $flag: writer SCHED_OTHER, host policy $want priority 10, trace sealed in $dir"
done

# SCHED_DEADLINE: the kernel lets no such thread create threads (clone
# fails with EAGAIN), so the writer cannot start: one stderr line, nothing
# recorded, and the host runs and exits as it would without the agent.
dl=(chrt -d --sched-runtime 5000000 --sched-deadline 10000000 --sched-period 10000000 0)
if why=$("${dl[@]}" true 2>&1); then
    rc=0
    out=$(LD_PRELOAD=$D9_AGENT DIAL9_DIR="$D9_TMP/dl" "${dl[@]}" sh -c 'exit 3' 2>&1) || rc=$?
    [ "$rc" -eq 3 ] || d9_fail "chrt -d: sh -c 'exit 3' exited $rc under the agent: $out"
    n=$(grep -c "cannot start the writer thread.*not recording" <<<"$out" || true)
    [ "$n" -eq 1 ] || d9_fail "chrt -d: want one 'cannot start the writer thread ... not recording' line, got $n: $out"
    d9_log "chrt -d: the writer is refused, one line said so, the host exited 3 as asked"
else
    d9_log "SCHED_DEADLINE is not allowed here, its case not checked: $why"
fi
echo "PASS"
