#!/usr/bin/env bash
# Builds cppzmq 4.10.0's own test suite (the header-only C++ binding, zmq.hpp and zmq_addon.hpp,
# through which most C++ programs use libzmq; its tests are Catch2 cases) from Debian's orig
# tarball against ferromq's zmq.h and libzmq.so and, as the control, against the system's libzmq
# (Debian's libzmq3-dev 4.3.4), and runs it one test case per process (tests/suite_lib.sh's
# loop: a ferromq failure outside known_failures.txt runs up to twice more before it counts; results
# in <work>/suite/runN/results.csv). No cppzmq code is kept in this repository.
#
#   tests/cppzmq/run.sh [options] [case...]
#     --control     build and run against the system's libzmq too, and print the differences
#                   (default: ferromq only)
#     --timeout S   seconds each case may run (default: 60)
#     --runs N      run the selection N times (flake hunting; default 1)
#     --work DIR    download, build and log directory (default: target/cppzmq)
#     --check       CI mode (ferromq only): fails when a case outside known_failures.txt
#                   fails, or a case listed there passes or does not run
#
# A case is named by its Catch2 name with each character other than a letter, a digit or _+.-
# written as _ ("context create, close and destroy" is context_create__close_and_destroy), so
# that the lists, the logs and results.csv hold one word per case. Catch2 2.x comes from the
# system (Debian's catch2), never downloaded: cppzmq's CMake would fetch it from GitHub. The
# tests are built without the draft API (neither zmq.h declares zmq_poller_*): skip.txt says
# which cases that leaves out; known_failures.txt names the ferromq failures, each with why.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

. "$here/../suite_lib.sh"
suite_start cppzmq 23 "$@"
start=$SECONDS

# The source: Debian's copy of the upstream release tarball (trixie's Sources lists this sha256;
# bookworm's 4.9.0 is gone from the pool), checked against its hash.
version=4.10.0
sha256=c81c81bba8a7644c84932225f018b5088743a22999c6d82a2b5f5cd1e6942b74
suite_debian_orig cppzmq "$version" "$sha256" "$work"
command -v cmake >/dev/null 2>&1 || { echo "cppzmq's build needs cmake" >&2; exit 2; }
command -v c++ >/dev/null 2>&1 || { echo "cppzmq's build needs a C++ compiler (g++)" >&2; exit 2; }
# Catch2 2.x (the tests include catch2/catch.hpp; 3.x renamed it) and its CMake files, whose
# Catch.cmake the tests' CMakeLists includes as a module.
catch_dir=""
for d in /usr/lib/cmake/Catch2 /usr/lib/*/cmake/Catch2 /usr/share/Catch2/cmake; do
  [ -f "$d/Catch.cmake" ] && { catch_dir=$d; break; }
done
if [ -z "$catch_dir" ] || [ ! -f /usr/include/catch2/catch.hpp ]; then
  echo "cppzmq's tests need Catch2 2.x (Debian's catch2)" >&2
  exit 2
fi

# Where each side's zmq.h and libzmq.so are. ferromq's: ffi/install.sh's prefix (dev profile,
# the library `cargo test` already built); it copies the library, so it runs every time.
prefix="$work/prefix"
declare -A inc lib
sh "$root/ffi/install.sh" "$prefix" dev >/dev/null
# The copies keep their sources' times, so that make rebuilds the tests only when zmq.h changed
# and relinks them only when the library did (a full rebuild takes 20-40 s on 2 cores).
touch -r "$root/ffi/include/zmq.h" "$prefix/include/zmq.h"
touch -r "${CARGO_TARGET_DIR:-$root/target}/debug/libzmq.so" "$(realpath "$prefix/lib/libzmq.so.5")"
inc[ferromq]="$prefix/include"
lib[ferromq]="$prefix/lib/libzmq.so"
if [ "$control" = 1 ]; then
  pkg-config --exists libzmq || { echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
  inc[control]="$(pkg-config --variable=includedir libzmq)"
  lib[control]="$(pkg-config --variable=libdir libzmq)/libzmq.so"
fi
# Builds are named after the library they link (as CZMQ's): the control's is libzmq's.
build_dir() { echo "$work/build-$([ "$1" = control ] && echo libzmq || echo ferromq)"; }

# One CMake build of the tests (unit_tests) per side. ZeroMQ_INCLUDE_DIR and ZeroMQ_LIBRARY
# are the cache entries cppzmq's pkg-config fallback (libzmq-pkg-config/FindZeroMQ.cmake) would
# search for: set, they name the side's files, not the first zmq.h on the system's path.
# CMAKE_REQUIRE_FIND_PACKAGE_Catch2 (CMake 3.24+) makes a missing Catch2 an error rather than a
# fetch from GitHub. Debug: zmq.hpp checks return codes with assert (a failed zmq_msg_close, a
# short recv), which CMake's Release flags (NDEBUG) would compile out. The build RPATH names the
# library linked, so a rebuilt libzmq.so needs no rebuild; a changed zmq.h is seen by make's
# header dependencies.
build() {
  local side="$1" dir
  dir="$(build_dir "$side")"
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ]; then
    (cd "$dir" && cmake "$src" -DCMAKE_BUILD_TYPE=Debug -DENABLE_DRAFTS=OFF \
      -DCMAKE_REQUIRE_FIND_PACKAGE_Catch2=ON -DCatch2_DIR="$catch_dir" \
      -DCMAKE_MODULE_PATH="$catch_dir" \
      -DZeroMQ_INCLUDE_DIR="${inc[$side]}" -DZeroMQ_LIBRARY="${lib[$side]}") \
      > "$dir/cmake.log" 2>&1 || { echo "cmake failed for $side: $dir/cmake.log" >&2; return 1; }
  fi
  make -C "$dir" -j "$(nproc)" unit_tests > "$dir/make.log" 2>&1 \
    || { echo "cppzmq's tests against $side failed to build: $dir/make.log" >&2; return 1; }
  # The dynamic loader's own account of which libzmq the binary maps (suite_lib.sh). Catch2
  # 2.x exits with the number of cases listed.
  LD_DEBUG=libs "$dir/tests/unit_tests" --list-test-names-only > "$dir/ld_debug.log" 2>&1 || :
  suite_check_loaded "$side" "$dir/ld_debug.log"
}
for side in "${sides[@]}"; do build "$side"; done
echo "built cppzmq $version's tests against: ${sides[*]} ($((SECONDS - start)) s)"

# The cases: the binary's own list, each under its one-word name (name -> Catch2 name).
declare -A catch_name=()
all=()
while IFS= read -r name; do
  [ -n "$name" ] || continue
  id="${name//[^A-Za-z0-9_+.-]/_}"
  [ -z "${catch_name[$id]:-}" ] || { echo "two cases are both named $id" >&2; exit 1; }
  catch_name[$id]=$name
  all+=("$id")
done < <("$(build_dir ferromq)/tests/unit_tests" --list-test-names-only)
[ ${#all[@]} -gt 0 ] || { echo "cppzmq's unit_tests lists no cases" >&2; exit 1; }
if [ "$control" = 1 ] && ! diff -q <("$(build_dir ferromq)/tests/unit_tests" --list-test-names-only) \
  <("$(build_dir control)/tests/unit_tests" --list-test-names-only) >/dev/null; then
  echo "note: the two builds list different cases (their zmq.h differ in what they define)" >&2
fi
suite_read_lists "$here" skip.txt known_failures.txt
suite_select
for t in "${tests[@]}"; do
  [ -n "${catch_name[$t]:-}" ] || { echo "no case is named $t" >&2; exit 2; }
done

# One case alone: Catch2's test spec takes its name with , [ ] * " \ escaped. Prints passed,
# failed (with the signal of a crash), or timeout. Passed needs Catch2's summary of exactly one
# case passed ("All tests passed (N assertions in 1 test case)", or "test cases: 1 | 1 passed"
# for a case with no assertions): a spec that matched nothing exits 0 too ("No tests ran").
run_one() {
  local side="$1" t="$2" log="$3" rc=0 spec
  spec="$(printf '%s' "${catch_name[$t]}" | sed 's/[],[*"\\]/\\&/g')"
  timeout -k 5 "$limit" "$(build_dir "$side")/tests/unit_tests" "$spec" \
    > "$log" 2>&1 < /dev/null || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo timeout
  elif [ "$rc" -gt 128 ]; then
    echo "failed (signal $((rc - 128)))"
  elif [ "$rc" -ne 0 ] || ! grep -qE '^(All tests passed \(.* in 1 test case\)|test cases: 1 \| 1 passed)$' "$log"; then
    echo failed
  else
    echo passed
  fi
}
# The first line saying why: an assert's message (zmq.hpp checks return codes so), else
# Catch2's first failed expectation (file:line: FAILED:, then the expression on the next
# line), else the last line.
why() {
  local line
  line="$(grep -m 1 -o '[^ ]*:[0-9]*: .*Assertion .* failed\.' "$1" || :)"
  [ -n "$line" ] || line="$(grep -m 1 -A 1 ': FAILED:' "$1" | tr -s ' \n' ' ' || :)"
  [ -n "$line" ] || line="$(tail -n 1 "$1")"
  echo "$line"
}
suite_run
