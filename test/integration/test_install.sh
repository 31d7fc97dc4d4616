#!/bin/bash
# make install honours PREFIX and DESTDIR, and the installed agent and
# decoder work from there.
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/wakes_then"

stage=$D9_TMP/stage
make -s -C "$D9_ROOT" BUILD="$D9_BUILD" install PREFIX=/opt/d9test DESTDIR="$stage" >"$D9_TMP/make.log" 2>&1 ||
    d9_fail "make install failed: $(cat "$D9_TMP/make.log")"
root=$stage/opt/d9test
for f in lib/libdial9.so bin/dial9-decode include/dial9.h include/dial9_format.h; do
    [ -f "$root/$f" ] || d9_fail "make install did not install $f under PREFIX in DESTDIR"
done
[ -e /opt/d9test ] && d9_fail "make install wrote outside DESTDIR"

LD_PRELOAD=$root/lib/libdial9.so DIAL9_DIR=$D9_TMP/t DIAL9_QUIET=1 "$D9_PROGS/wakes_then" 10 sleep 0 >/dev/null ||
    d9_fail "program failed under the installed agent"
"$root/bin/dial9-decode" check "$D9_TMP/t" >/dev/null || d9_fail "installed decoder: check failed"
n=$("$root/bin/dial9-decode" events --json "$D9_TMP/t" | grep -c '"type":"wake"')
[ "$n" -eq 10 ] || d9_fail "installed agent recorded $n of 10 wakes"
