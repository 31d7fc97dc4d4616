#!/bin/bash
# bench/variant.sh - what a change to the agent would save on real services,
# measured before it is made: builds the agent at HEAD (the control) and once
# per PATCH (git apply on a temporary worktree of HEAD), and pairs each build
# against the control with bench/paired.sh (CPU per request, both servers at
# once, each saturated by its own load; B/A below 1 means the variant is
# cheaper) or bench/latency.sh (the same at a fixed request rate, and the
# latency), then the control against itself (A/A: the run's noise floor).
#   bench/variant.sh SERVICE[,SERVICE...] PATCH...
#   e.g. bench/variant.sh node,tokio bench/variants/scratch.patch
# bench/variants/*.patch are the variants docs/BENCH-HISTORY.md reports, each with
# what it does above its diff. Builds use CFLAGS="-O2 -g" (as the default
# build); the working tree is not touched.
# Environment: BUILD (default build; paired.sh's), VARIANT_DIR (where the
# builds go, default $BUILD/variant: ctl/ and one directory per patch), and
# VARIANT_BENCH (paired, the default, or latency: which script pairs them),
# and that script's BENCH_ROUNDS, BENCH_SECS, BENCH_PAIRS_TSV, BENCH_LAT_*.
# Prints its Markdown on stdout.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/variant.sh SERVICE[,SERVICE...] PATCH..." >&2; exit 2; }
SERVICES=${1//,/ }
shift
PATCHES=()
for p in "$@"; do
  [ -f "$p" ] || { echo "variant: no patch $p" >&2; exit 2; }
  PATCHES+=("$(realpath "$p")") # before the cd below
done
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac # as services_lib.sh: LD_PRELOAD needs it absolute
OUT=${VARIANT_DIR:-$BUILD/variant}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
BENCH=${VARIANT_BENCH:-paired}
case $BENCH in paired | latency) ;; *) echo "variant: VARIANT_BENCH is paired or latency, not $BENCH" >&2; exit 2 ;; esac

WT=$(mktemp -d)
trap 'git worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"' EXIT
git worktree add -q --detach "$WT" HEAD

build() { # NAME: the worktree as it stands, into $OUT/NAME/libdial9.so
  echo "variant: building $OUT/$1/libdial9.so" >&2
  make -s -C "$WT" BUILD="$OUT/$1" CFLAGS="-O2 -g" "$OUT/$1/libdial9.so" >&2
}

build ctl
CTL=dial9+LD_PRELOAD=$OUT/ctl/libdial9.so
pairs=""
for patch in "${PATCHES[@]}"; do
  name=$(basename "$patch" .patch)
  git -C "$WT" reset -q --hard # back to HEAD, files a patch added included
  git -C "$WT" clean -qfd
  git -C "$WT" apply "$patch"
  build "$name"
  pairs="$pairs $CTL:dial9+LD_PRELOAD=$OUT/$name/libdial9.so"
done
# shellcheck disable=SC2086 # SERVICES is a list
BENCH_PAIRS="${pairs# } $CTL:$CTL" BUILD="$BUILD" "bench/$BENCH.sh" $SERVICES
