#!/bin/bash
# bench/knockout.sh - which family of hooks a service's cost comes from:
# builds the agent once per family with that family left out, and pairs each
# build against the full agent with bench/paired.sh (CPU per request, both
# servers at once; B/A below 1 means the left-out family cost that much).
# A family is left out by compiling its hooks under other names
# (-Dpthread_cond_wait=d9ko_pthread_cond_wait ...): libc's symbols are then
# not interposed and the program's calls go straight to libc. Each build is
# checked with nm -D: none of its family's symbols may be left.
#   bench/knockout.sh SERVICE [FAMILY...]
#   families: cond (condition variables), wake (write, eventfd_write),
#             epoll (epoll_wait, epoll_pwait), file (read, pread, open,
#             openat), sys (syscall(): futex waits and wakes). Default: all.
# Environment: BUILD (the full agent, default build), KO_DIR (where the
# builds go, default $BUILD/knockout), and bench/paired.sh's BENCH_ROUNDS,
# BENCH_SECS, BENCH_PAIRS_TSV. Prints paired.sh's Markdown on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac # as services_lib.sh: LD_PRELOAD needs it absolute
FULL=$BUILD/libdial9.so
KO_DIR=${KO_DIR:-$BUILD/knockout}
case $KO_DIR in /*) ;; *) KO_DIR=$PWD/$KO_DIR ;; esac
[ $# -ge 1 ] || { echo "usage: bench/knockout.sh SERVICE [cond|wake|epoll|file|sys ...]" >&2; exit 2; }
SERVICE=$1
shift
FAMILIES=("$@")
[ ${#FAMILIES[@]} -gt 0 ] || FAMILIES=(cond wake epoll file sys)
[ -f "$FULL" ] || { echo "knockout: build the agent first (make BUILD=$BUILD all)" >&2; exit 2; }

symbols() {
  case $1 in
  cond) echo pthread_cond_wait pthread_cond_timedwait pthread_cond_signal pthread_cond_broadcast ;;
  wake) echo write eventfd_write ;;
  epoll) echo epoll_wait epoll_pwait ;;
  file) echo read pread pread64 open open64 openat openat64 ;;
  sys) echo syscall ;;
  *) echo "knockout: unknown family $1" >&2; return 1 ;;
  esac
}

pairs=""
for fam in "${FAMILIES[@]}"; do
  syms=$(symbols "$fam")
  flags="-O2 -g"
  for s in $syms; do flags="$flags -D$s=d9ko_$s"; done
  out=$KO_DIR/$fam
  echo "knockout: building $out/libdial9.so without: $syms" >&2
  make -s BUILD="$out" CFLAGS="$flags" "$out/libdial9.so" >&2
  for s in $syms; do
    if nm -D --defined-only "$out/libdial9.so" | awk '{print $3}' | grep -qx "$s"; then
      echo "knockout: $out/libdial9.so still defines $s" >&2
      exit 1
    fi
  done
  pairs="$pairs dial9+LD_PRELOAD=$FULL:dial9+LD_PRELOAD=$out/libdial9.so"
done
BENCH_PAIRS="${pairs# } off:off2" BUILD="$BUILD" bench/paired.sh "$SERVICE"
