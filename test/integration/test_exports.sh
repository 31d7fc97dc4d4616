#!/bin/bash
# test_exports.sh - libdial9.so exports nothing but the libc functions it
# interposes and its own dial9_* API (a stray global could capture a symbol
# of the traced program), and depends on nothing but libc and liblz4.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT"
command -v nm >/dev/null && command -v readelf >/dev/null || d9_fail "binutils is not installed"

# Defined dynamic symbols another object can bind to: not hidden. (binutils
# 2.40 leaves the hidden bounds of safe_load.h's fixup table in .dynsym.)
names() {
    readelf -W --dyn-syms "$1" |
        awk '$1 ~ /^[0-9]+:$/ && NF >= 8 && $7 != "UND" && $6 != "HIDDEN" && $6 != "INTERNAL" { sub(/@.*/, "", $8); print $8 }' |
        sort -u
}

libc=$(ldd "$D9_AGENT" | awk '$1 == "libc.so.6" { print $3 }')
[ -f "$libc" ] || d9_fail "cannot find the libc the agent links: $(ldd "$D9_AGENT")"
names "$libc" >"$D9_TMP/libc"
names "$D9_AGENT" >"$D9_TMP/agent"
[ -s "$D9_TMP/libc" ] || d9_fail "no symbols read from $libc"

# Everything exported is either dial9_* or a name libc itself defines.
stray=$(grep -v '^dial9_' "$D9_TMP/agent" | comm -23 - "$D9_TMP/libc")
[ -z "$stray" ] || d9_fail "exported but neither dial9_* nor a libc function: $(echo "$stray" | tr "\n" " ")"

# The interposers the recording contract relies on are really exported.
for f in epoll_wait epoll_pwait poll ppoll select pselect syscall pthread_cond_wait \
    pthread_cond_timedwait pthread_cond_signal pthread_cond_broadcast sem_wait sem_post \
    nanosleep eventfd write pthread_create pthread_setname_np prctl; do
    grep -qx "$f" "$D9_TMP/agent" || d9_fail "$f is not interposed (not exported)"
done
grep -q '^dial9_' "$D9_TMP/agent" || d9_fail "no dial9_* API exported"

# NEEDED: libc and liblz4. Before glibc 2.34 threads and dlsym lived in
# libpthread and libdl; since then those are empty stubs nobody should need.
needed=$(readelf -d "$D9_AGENT" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
allowed="libc.so.6 liblz4.so.1"
glibc=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')
if [ "$(printf '%s\n2.34\n' "$glibc" | sort -V | head -n 1)" != 2.34 ]; then
    allowed="$allowed libpthread.so.0 libdl.so.2"
fi
for lib in $needed; do
    case " $allowed " in *" $lib "*) ;; *) d9_fail "NEEDED $lib (glibc $glibc; allowed: $allowed)" ;; esac
done
echo "$needed" | grep -qx 'libc.so.6' || d9_fail "libc.so.6 is not NEEDED: $needed"
echo "exports: $(wc -l <"$D9_TMP/agent") symbols; NEEDED: $(echo "$needed" | tr "\n" " ")"
echo "ok"
