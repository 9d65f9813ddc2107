#!/usr/bin/env bash
# Builds CZMQ 4.2.1 (the high-level C binding Zyre and Malamute sit on) from Debian's orig
# tarball against ferromq's zmq.h and libzmq.so and, as the control, against the system's libzmq
# (Debian's libzmq3-dev 4.3.4), runs its own selftest one class per process (tests/suite_lib.sh's
# loop: a ferromq failure outside known_failures.txt runs up to twice more before it counts; results in
# <work>/suite/runN/results.csv). No CZMQ code is kept in this repository.
#
#   tests/czmq/run.sh [options] [class...]
#     --control     build and run against the system's libzmq too, and print the differences
#                   (default: ferromq only)
#     --timeout S   seconds each class may run (default: 60)
#     --runs N      run the selection N times (flake hunting; default 1)
#     --work DIR    download, build and log directory (default: target/czmq)
#     --check       CI mode (ferromq only): fails when a class outside known_failures.txt
#                   fails, or a class listed there passes or does not run
#
# CZMQ is built with its draft API (zproc, ztimerset, zosc and the draft parts of the stable
# classes' selftests; none of them needs libzmq's draft API, which neither zmq.h declares) and
# without uuid, systemd, lz4, libcurl, nss and libmicrohttpd. skip.txt names the classes not run,
# known_failures.txt the ferromq failures, each with why.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

. "$here/../suite_lib.sh"
suite_start czmq 20 "$@"
# Builds are named after the library they link: the control's is libzmq's.
libs=ferromq
[ "$control" = 0 ] || libs="ferromq libzmq"
start=$SECONDS

# The source: Debian's copy of the upstream release tarball, checked against its hash.
version=4.2.1
sha256=5d720a204c2a58645d6f7643af15d563a712dad98c9d32c1ed913377daa6ac39
suite_debian_orig czmq "$version" "$sha256" "$work"
command -v cmake >/dev/null 2>&1 || { echo "CZMQ's build needs cmake" >&2; exit 2; }

# Where each side's zmq.h and libzmq.so are. ferromq's: ffi/install.sh's prefix (dev profile,
# the library `cargo test` already built); it copies the library, so it runs every time.
declare -A inc lib pcdir
if [[ " $libs " == *" ferromq "* ]]; then
  sh "$root/ffi/install.sh" "$work/prefix" dev >/dev/null
  inc[ferromq]="$work/prefix/include"
  lib[ferromq]="$work/prefix/lib/libzmq.so"
  pcdir[ferromq]="$work/prefix/lib/pkgconfig"
fi
if [[ " $libs " == *" libzmq "* ]]; then
  pkg-config --exists libzmq || { echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
  inc[libzmq]="$(pkg-config --variable=includedir libzmq)"
  lib[libzmq]="$(pkg-config --variable=libdir libzmq)/libzmq.so"
  pcdir[libzmq]=""
fi

# One CMake build per side (only libczmq and czmq_selftest; zsp is zproc's helper). Its RPATH
# names the library it linked, so a rebuilt libzmq.so needs no rebuild; a changed zmq.h is
# seen by make's header dependencies.
build() {
  local side="$1" dir="$work/build-$1"
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ]; then
    (cd "$dir" && PKG_CONFIG_PATH="${pcdir[$side]}" cmake "$src" \
      -DCMAKE_BUILD_TYPE=Release -DENABLE_DRAFTS=ON -DCZMQ_BUILD_STATIC=OFF \
      -DCZMQ_WITH_UUID=OFF -DCZMQ_WITH_SYSTEMD=OFF -DCZMQ_WITH_LZ4=OFF -DCZMQ_WITH_LIBCURL=OFF \
      -DCZMQ_WITH_NSS=OFF -DCZMQ_WITH_LIBMICROHTTPD=OFF \
      -DLIBZMQ_INCLUDE_DIRS="${inc[$side]}" -DLIBZMQ_LIBRARIES="${lib[$side]}") \
      > "$dir/cmake.log" 2>&1 || { echo "cmake failed for $side: $dir/cmake.log" >&2; return 1; }
  fi
  make -C "$dir" -j "$(nproc)" czmq_selftest zsp > "$dir/make.log" 2>&1 \
    || { echo "CZMQ's build against $side failed: $dir/make.log" >&2; return 1; }
  # The selftest must load the library it was built for (CMake's build RPATH), not another
  # libzmq.so.5 on the system's path.
  local loaded
  loaded="$(ldd "$dir/czmq_selftest" | sed -n 's/^\s*libzmq\.so\.5 => \(\S*\).*/\1/p')"
  if [ "$(realpath "$loaded")" != "$(realpath "${lib[$side]}")" ]; then
    echo "czmq_selftest for $side loads $loaded, not ${lib[$side]}" >&2
    return 1
  fi
}
for side in $libs; do build "$side"; done
echo "built CZMQ $version against: $libs ($((SECONDS - start)) s)"

suite_read_lists "$here" skip.txt known_failures.txt
mapfile -t all < <("$work/build-ferromq/czmq_selftest" -l | awk '$2 == "-" {print $1}')
[ ${#all[@]} -gt 0 ] || { echo "czmq_selftest lists no classes" >&2; exit 1; }
suite_select

# One class in a fresh directory holding what its selftest opens relative to the current
# directory (src/selftest-ro, src/selftest-rw, src/zsp): prints passed ("(part skipped)" where
# the class said so), failed (with the signal of a crash), or timeout. Classes run one at a
# time: zbeacon's selftest uses fixed UDP ports.
run_one() {
  local side="$1" class="$2" log="$3" build rc=0
  build="$work/build-$([ "$side" = control ] && echo libzmq || echo ferromq)"
  local dir="${log%.log}.d"
  rm -rf "$dir"
  mkdir -p "$dir/src/selftest-rw"
  ln -s "$src/src/selftest-ro" "$dir/src/selftest-ro"
  ln -s "$build/zsp" "$dir/src/zsp"
  (cd "$dir" && timeout -k 5 "$limit" "$build/czmq_selftest" -t "$class") \
    > "$log" 2>&1 < /dev/null || rc=$?
  if [ "$rc" -eq 0 ]; then
    if grep -q 'SKIPPED' "$log"; then echo "passed (part skipped)"; else echo passed; fi
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo timeout
  elif [ "$rc" -gt 128 ]; then
    echo "failed (signal $((rc - 128)))"
  else
    echo failed
  fi
}
# The first line saying why: CZMQ's assertion (file:line), else the last line.
why() {
  grep -m 1 -o '[a-z_]*\.c:[0-9]*: [^:]*: Assertion .*' "$1" || tail -n 1 "$1"
}
# A ferromq failure outside known_failures.txt runs up to twice more before it counts (suite_run): for
# zgossip, whose selftest expects alpha's two own PUBLISH commands to reach its zloop before
# base forwards beta's first tuple, which a 2-core machine breaks now and then, on either
# library (zgossip.c:693, an assertion: the retry counts a crash as a failure too).
suite_run
