#!/bin/sh
# Installs the Debian packages dial9 needs that are missing.
#   scripts/install-deps.sh build   compiler, liblz4, pkg-config
#   scripts/install-deps.sh test    build + Check + services and load tools for the tests
#   scripts/install-deps.sh bench   test + the peers bench/services.sh compares with
set -e
want="gcc make pkg-config liblz4-dev"
case "${1:-build}" in
  build) ;;
  test|bench)
    want="$want check python3 memcached libmemcached-tools redis-server redis-tools valgrind binutils protobuf-compiler clang libclang-rt-14-dev libcap2-bin util-linux"
    # Real services of the integration tests: nginx (thread pools), wrk,
    # and a Tokio/hyper server built offline by Debian's cargo from
    # Debian's crates. node may come from elsewhere: Debian's only if none.
    want="$want nginx-light wrk cargo librust-tokio-dev librust-hyper-dev python3-uvloop"
    # test_node.sh counts the SIGSEGVs of WebAssembly traps with strace;
    # test_jvm.sh runs a JVM, which takes SIGSEGVs on purpose.
    want="$want strace default-jdk-headless"
    command -v node >/dev/null || want="$want nodejs"
    # test_viewers.sh: headless chromium, and npm for playwright-core and speedscope.
    want="$want chromium"
    command -v npm >/dev/null || want="$want npm"
    # make bench's peers (strace is above): ltrace, uftrace, LTTng-UST (pthread wrapper, userspace session daemon)
    # bench/decoder.sh: peak RSS from GNU time (/usr/bin/time -v).
    if [ "$1" = bench ]; then want="$want ltrace uftrace lttng-tools liblttng-ust-dev babeltrace2 time"; fi
    ;;
  *) echo "usage: $0 build|test|bench" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
# shellcheck disable=SC2086 # $missing is a list of package names
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
