#!/bin/bash
# test_privilege_drop.sh - a service started as root that switches to its
# own user (memcached -u, mariadbd --user, nginx's workers) is recorded after
# the switch: build/progs/drop_privs switches to nobody with each call of
# the setuid family, in the process itself and in a forked child, and
# signals a condition variable on two threads for 2.5 s past two rotations.
# Its process directory and every segment must belong to nobody (0700,
# 0600), the segments made after the switch must be there and intact, and
# the recorded signals must equal the program's own count; a worker that
# crashes after the switch still leaves its crash.d9; a child forked after
# the switch records into its parent's directory. Without
# CAP_CHOWN the directory cannot be given away: one line, the program runs
# as untraced, and what the first segment took stays readable.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/drop_privs"
[ "$(id -u)" = 0 ] || d9_skip "switching users needs root"
command -v setpriv >/dev/null || d9_fail "setpriv (util-linux) is not installed"

# run_case NAME SIGNALS [STATUS] CMD...: drop_privs under the agent (1 s
# rotations); sets pid, signals and dir; fails unless the program ran as
# untraced: SIGNALS signals, the switching process ended with STATUS
# (default 0).
run_case() {
    local name=$1 want=$2 want_status=0 out=$D9_TMP/$1.out err=$D9_TMP/$1.err
    shift 2
    case $1 in [0-9]*) want_status=$1; shift ;; esac
    DIAL9_ROTATION_SECS=1 d9_run_traced "$D9_TMP/$name" "$@" >"$out" 2>"$err" ||
        d9_fail "$name: drop_privs failed: $(cat "$out" "$err")"
    read -r pid status uid signals < <(sed -n 's/^drop_privs: pid \([0-9]*\) status \([0-9]*\) uid \([0-9-]*\) signals \([0-9]*\)$/\1 \2 \3 \4/p' "$out")
    [ "$status" = "$want_status" ] && [ "$uid" = 65534 ] && [ "$signals" = "$want" ] ||
        d9_fail "$name: the program did not run as untraced: $(cat "$out")"
    dir=$(d9_proc_dir "$D9_TMP/$name" "$pid") || exit 1
    d9_assert_check "$dir"
    d9_decode_to "$D9_TMP/$name.json" summary --json "$dir"
}

# recorded NAME: the wakes the summary of NAME's process counts.
recorded() {
    d9_json "$D9_TMP/$1.json" 'sum(t["wakes_sent"] for t in j["threads"]) if j["dropped"] == 0 else -1'
}

# assert_recorded NAME: no agent message, at least 3 segments (2 made after
# the switch), and every signal the program made recorded, none dropped.
assert_recorded() {
    local got
    [ -z "$(grep '^dial9: ' "$D9_TMP/$1.err")" ] || d9_fail "$1: agent messages: $(cat "$D9_TMP/$1.err")"
    nseg=$(find "$dir" -name '*.d9*' | wc -l)
    [ "$nseg" -ge 3 ] || d9_fail "$1: $nseg segments in 2.5 s of 1 s rotations: $(ls "$dir")"
    got=$(recorded "$1")
    [ "$got" = "$signals" ] || d9_fail "$1: $got signals recorded (-1: drops), $signals made"
}
# assert_nobodys NAME: the directory nobody's 0700, every segment nobody's 0600.
assert_nobodys() {
    owners=$(find "$dir" -printf '%u %m\n' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    [ -z "$(find "$dir" \( -type d ! -perm 700 \) -o \( -type f ! -perm 600 \) -o ! -user 65534)" ] ||
        d9_fail "$1: files not nobody's 0700 directory and 0600 segments: $owners"
}

for mode in self fork; do
    for call in setuid seteuid setreuid setresuid; do
        name=$mode-$call
        run_case "$name" 100100 "$D9_PROGS/drop_privs" "$mode" "$call"
        assert_recorded "$name"
        assert_nobodys "$name"
        d9_log "$name: $nseg segments, $owners all $signals signals"
    done
done

# The program closed the agent's fds and took their numbers for a file of
# its own before anything was written: the directory is made with fds of
# the agent's own, and the program's file keeps its owner.
run_case closeall 100000 "$D9_PROGS/drop_privs" self setuid closeall
grep -qx 'drop_privs: own file uid 0' "$D9_TMP/closeall.out" ||
    d9_fail "closeall: the program's own file changed owner: $(cat "$D9_TMP/closeall.out")"
assert_recorded closeall
assert_nobodys closeall
d9_log "closeall: $nseg segments, $owners all $signals signals, the program's file still root's"

# Back and forth between root and nobody each round (varnishd's manager):
# segments made while root, in nobody's directory, are root's; every event
# is there.
run_case toggle 100100 "$D9_PROGS/drop_privs" self seteuid toggle
assert_recorded toggle
[ "$(stat -c %u "$dir")" = 65534 ] || d9_fail "toggle: the directory is $(stat -c %u "$dir")'s: $(ls -ln "$dir")"
d9_log "toggle: $nseg segments, all $signals signals"

# A worker that crashes after the switch: the crash handler, whose path
# to the directory goes through root's DIAL9_DIR, writes crash.d9 through
# the directory's fd.
run_case crash 100100 139 "$D9_PROGS/drop_privs" fork setuid crash
[ -f "$dir/crash.d9" ] || d9_fail "crash: no crash.d9 after the switch: $(ls -l "$dir")"
"$D9_DECODER" check "$dir/crash.d9" | grep -q 'dump reason: crash: signal 11 (SIGSEGV)' ||
    d9_fail "crash: crash.d9 gives no SIGSEGV: $("$D9_DECODER" check "$dir/crash.d9" 2>&1)"
[ "$(stat -c '%u %a' "$dir/crash.d9")" = "65534 600" ] || d9_fail "crash: crash.d9 is $(stat -c '%u %a' "$dir/crash.d9")"
d9_log "crash: crash.d9 written after the switch"

# A daemon that switches and then forks into the background (memcached
# -d -u): its child, nobody, cannot write DIAL9_DIR, root's 0700, and
# makes its directory inside its parent's, which is nobody's. With a
# sticky DIAL9_DIR the child's directory is beside its parent's.
for call in setuid seteuid; do
    name=after-$call
    run_case "$name" 100000 "$D9_PROGS/drop_privs" after "$call"
    assert_recorded "$name"
    assert_nobodys "$name"
    [ "$(stat -c '%u %a' "$(dirname "$dir")")" = "65534 700" ] && [ "$(dirname "$(dirname "$dir")")" = "$D9_TMP/$name" ] ||
        d9_fail "$name: the child's directory is not in its parent's, nobody's: $(find "$D9_TMP/$name" -printf '%u %m %p; ')"
    d9_log "$name: the child's $nseg segments in ${dir#"$D9_TMP/$name/"}, all $signals signals"
done
mkdir -m 1777 "$D9_TMP/after-sticky"
run_case after-sticky 100000 "$D9_PROGS/drop_privs" after setuid
assert_recorded after-sticky
assert_nobodys after-sticky
[ "$(dirname "$dir")" = "$D9_TMP/after-sticky" ] || d9_fail "after-sticky: the child's directory is not in DIAL9_DIR: $dir"
d9_log "after-sticky: the child's $nseg segments beside its parent's, all $signals signals"

# Without CAP_CHOWN (a container's root): the directory stays root's, so
# no segment can be made after the switch. One line says so; the events
# the open segment took are intact.
for mode in self fork; do
    name=nochown-$mode
    run_case "$name" 100100 setpriv --bounding-set=-chown "$D9_PROGS/drop_privs" "$mode" setuid
    lines=$(grep '^dial9: ' "$D9_TMP/$name.err" | grep -v 'events were not written$')
    [ "$(echo "$lines" | wc -l)" = 1 ] &&
        echo "$lines" | grep -q "^dial9: cannot give $dir to uid 65534 before the program switches to it: Operation not permitted; recording stops at the next segment$" ||
        d9_fail "$name: want the one line on the directory: $(cat "$D9_TMP/$name.err")"
    got=$(d9_json "$D9_TMP/$name.json" 'sum(t["wakes_sent"] for t in j["threads"])')
    [ "$got" -gt 100 ] && [ "$got" -lt "$signals" ] ||
        d9_fail "$name: $got signals recorded, want more than the 100 before the switch and fewer than $signals"
    d9_log "$name: one line, $got of $signals signals in the first segment"
done
echo "PASS"
