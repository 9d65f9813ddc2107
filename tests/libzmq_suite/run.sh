#!/usr/bin/env bash
# Builds libzmq 4.3.4's own test programs (the Unity-based tests/test_*.cpp that ship with the
# zeromq-src crate, never copied here) against ferromq's C ABI and, as the control, against the
# system's libzmq (Debian's libzmq3-dev), runs them and prints a table: test | libzmq | ferromq.
#
#   tests/libzmq_suite/run.sh [options] [test_name...]
#     --libs "ferromq libzmq"  which builds to make (default: both)
#     --ffi DIR                directory holding ferromq's libzmq.so (default: build the dev
#                              profile of ferromq-ffi into target/debug)
#     --jobs N                 programs built and run at once (default: 2 x cores)
#     --timeout S              seconds each program may run (default: 60)
#     --work DIR               build and log directory (default: target/libzmq_suite)
#     --check                  CI mode: ferromq only; fails when a test outside
#                              known_failures.txt fails, or a test listed there passes
#
# skip.txt names the tests that are not built (draft API, transports and mechanisms neither
# library has here, libzmq internals), known_failures.txt the ferromq failures, each with why.
# Tests that bind fixed ports (ENDPOINT_0..3, PORT_6) run one at a time after the others.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

libs="ferromq libzmq"
ffi=""
jobs=$(( $(nproc) * 2 ))
limit=60
work="$root/target/libzmq_suite"
check=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --libs) libs="$2"; shift 2 ;;
    --ffi) ffi="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --check) check=1; libs="ferromq"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) only+=("$1"); shift ;;
  esac
done

# libzmq's sources: $LIBZMQ_SRC, else the zeromq-src crate cargo fetched for the zmq dependency.
vendor="${LIBZMQ_SRC:-}"
if [ -z "$vendor" ]; then
  manifest="$(cd "$root" && cargo metadata --format-version 1 --offline 2>/dev/null \
    | tr ',' '\n' | sed -n 's/.*"manifest_path":"\([^"]*zeromq-src-[^"]*\)".*/\1/p' | head -1)"
  [ -n "$manifest" ] && vendor="$(dirname "$manifest")/vendor"
fi
if [ -z "$vendor" ] || [ ! -d "$vendor/tests" ]; then
  vendor="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/zeromq-src-*/vendor 2>/dev/null | sort -V | tail -1)"
fi
[ -d "$vendor/tests" ] || { echo "libzmq's sources (zeromq-src) not found; run cargo fetch" >&2; exit 2; }

if [[ " $libs " == *" ferromq "* ]] && [ -z "$ffi" ]; then
  (cd "$root" && cargo build --quiet -p ferromq-ffi --lib)
  ffi="$(cd "$root" && cargo metadata --format-version 1 --no-deps --offline \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/debug"
fi
if [[ " $libs " == *" libzmq "* ]] && [ ! -f /usr/include/zmq.h ]; then
  echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2
fi

# name -> reason, from a "name  reason..." file ('#' comments).
declare -A skip known
while read -r name reason; do [ -n "$name" ] && skip[$name]="$reason"; done \
  < <(grep -v '^\s*#' "$here/skip.txt")
while read -r name reason; do [ -n "$name" ] && known[$name]="$reason"; done \
  < <(grep -v '^\s*#' "$here/known_failures.txt")

tests=()
if [ ${#only[@]} -gt 0 ]; then
  tests=("${only[@]}")
else
  for f in "$vendor"/tests/test_*.cpp; do t="$(basename "$f" .cpp)"; tests+=("$t"); done
fi
# ZMQ_BINDTODEVICE needs CAP_NET_ADMIN (libzmq's own build runs this test under sudo capsh);
# a process that has it (root, as CI) runs the test as it is.
cap_eff="$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)"
if [ -z "$cap_eff" ] || (( (16#$cap_eff >> 12 & 1) == 0 )); then
  skip[test_pair_tcp_cap_net_admin]="needs CAP_NET_ADMIN (ZMQ_BINDTODEVICE), which this process lacks"
fi
run_tests=()
for t in "${tests[@]}"; do [ -n "${skip[$t]+x}" ] || run_tests+=("$t"); done

# A tree per library in which libzmq's relative includes (../include/zmq.h, ../src/*.hpp) land
# on that library's header and on our platform.hpp: links to the vendored files, no copies.
prepare() {
  local lib="$1" tree="$work/$1/tree"
  rm -rf "$tree" "$work/$lib/lib" "$work/$lib/log" "$work/$lib/run" "$work/$lib/obj"
  mkdir -p "$tree/tests" "$tree/include" "$tree/src" "$work/$lib/obj" "$work/$lib/bin" "$work/$lib/log"
  for f in "$vendor"/tests/*; do ln -s "$f" "$tree/tests/"; done
  ln -s "$vendor/external" "$tree/external"
  for f in "$vendor"/src/*; do [ "$(basename "$f")" = platform.hpp ] || ln -s "$f" "$tree/src/"; done
  ln -s "$here/platform.hpp" "$tree/src/platform.hpp"
  if [ "$lib" = ferromq ]; then
    ln -s "$root/ffi/include/zmq.h" "$tree/include/zmq.h"
    mkdir -p "$work/$lib/lib"
    ln -s "$ffi/libzmq.so" "$work/$lib/lib/libzmq.so"
    ln -s "$ffi/libzmq.so" "$work/$lib/lib/libzmq.so.5"
  else
    ln -s /usr/include/zmq.h "$tree/include/zmq.h"
  fi
}

cflags=(-O0 -g0 -w -DUNITY_USE_COMMAND_LINE_ARGS -DUNITY_EXCLUDE_FLOAT)
link_flags() {
  if [ "$1" = ferromq ]; then
    echo "-L$work/ferromq/lib -lzmq -Wl,-rpath,$work/ferromq/lib -lpthread"
  else
    echo "-lzmq -lpthread"
  fi
}

build_support() {
  local lib="$1" tree="$work/$1/tree" obj="$work/$1/obj"
  cc "${cflags[@]}" -I"$tree/external/unity" -c "$tree/external/unity/unity.c" -o "$obj/unity.o" &
  for u in testutil testutil_unity testutil_monitoring testutil_security; do
    c++ "${cflags[@]}" -I"$tree/external/unity" -c "$tree/tests/$u.cpp" -o "$obj/$u.o" &
  done
  # test_security_curve plays a CURVE client by hand with libzmq's own client tools: its
  # random.cpp (with err.cpp and clock.cpp under it) from the vendored sources, and NaCl's
  # functions from libsodium, whose names tweetnacl.h declares too. Not tweetnacl.c itself:
  # the program would then export its crypto_box, randombytes and sodium_init over the ones
  # Debian's libzmq.so takes from libsodium, and the control aborts in sodium_malloc.
  mkdir -p "$obj/curve"
  for u in random err clock; do
    c++ "${cflags[@]}" -DZMQ_USE_TWEETNACL -c "$tree/src/$u.cpp" -o "$obj/curve/$u.o" &
  done
  wait
}

# What one test links beyond the support objects.
extra_objects() {
  if [ "$2" = test_security_curve ]; then
    echo "$work/$1/obj/curve/random.o $work/$1/obj/curve/err.o $work/$1/obj/curve/clock.o -lsodium"
  fi
}

# One program: build, then run (unless it binds fixed ports: those wait for the serial pass).
# The result goes to log/<test>.result: pass, FAIL (n of m), TIMEOUT, CRASH (signal), BUILD.
build_and_run() {
  local lib="$1" t="$2" tree="$work/$1/tree" dir="$work/$1"
  if ! c++ "${cflags[@]}" -I"$tree/external/unity" "$tree/tests/$t.cpp" "$dir"/obj/*.o \
    $(extra_objects "$lib" "$t") $(link_flags "$lib") -o "$dir/bin/$t" > "$dir/log/$t.build" 2>&1; then
    echo "BUILD" > "$dir/log/$t.result"
    return
  fi
  if grep -q 'ENDPOINT_[0-3]\|PORT_6' "$tree/tests/$t.cpp"; then
    echo "serial" > "$dir/log/$t.result"
    return
  fi
  run_one "$lib" "$t"
}

run_one() {
  local lib="$1" t="$2" dir="$work/$1"
  local rundir="$dir/run/$t"
  mkdir -p "$rundir"
  local rc=0
  (cd "$rundir" && TMPDIR="$rundir" timeout -k 5 "$limit" "$dir/bin/$t") \
    > "$dir/log/$t.out" 2>&1 || rc=$?
  local summary
  summary="$(grep -Eo '^[0-9]+ Tests [0-9]+ Failures [0-9]+ Ignored' "$dir/log/$t.out" | tail -1 || true)"
  if [ "$rc" -eq 0 ]; then
    echo "pass${summary:+ ($summary)}" > "$dir/log/$t.result"
  elif [ "$rc" -eq 77 ]; then
    echo "skipped itself (77)" > "$dir/log/$t.result"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "TIMEOUT" > "$dir/log/$t.result"
  elif [ "$rc" -gt 128 ]; then
    echo "CRASH (signal $((rc - 128)))" > "$dir/log/$t.result"
  else
    echo "FAIL${summary:+ ($summary)}" > "$dir/log/$t.result"
  fi
}

export -f build_and_run run_one link_flags extra_objects
export work limit
export cflags_str="${cflags[*]}"

start=$SECONDS
for lib in $libs; do
  prepare "$lib"
  build_support "$lib"
done
# Both libraries' programs in one parallel queue; fixed-port programs only built here.
for lib in $libs; do for t in "${run_tests[@]}"; do echo "$lib $t"; done; done \
  | xargs -P "$jobs" -L 1 bash -c 'cflags=($cflags_str); build_and_run "$0" "$1"'
for lib in $libs; do
  for t in "${run_tests[@]}"; do
    if [ "$(cat "$work/$lib/log/$t.result")" = serial ]; then
      cflags=($cflags_str) run_one "$lib" "$t"
    fi
  done
done

# A ferromq failure outside known_failures.txt runs again, alone, up to twice: several of
# libzmq's tests count on timings that neither library promises and lose under the load of a
# parallel run, and test_hwm_pubsub's blocking case loses now and then even alone (3 of 100
# solo runs at session 27's head on the idle 2-vCPU VM; it failed a CI run's first try and its
# one retry).
# test_hwm_pubsub's blocking case expects the sender to outrun a tcp connection (ferromq's
# reader hands the writer credit every 63 messages, libzmq's every half HWM through a command
# its sender reads at most once a millisecond, so ferromq's first refusal comes later: at
# 1,000 to 2,580 of 6,000 in 60 runs under load, libzmq's at 1,000 in all 60).
# test_spec_req's round robin over tcp expects five REPs that connected at once to get
# requests in connect order and waits forever otherwise: ferromq's REQ attached them in
# another order 7-17 of 120 times under load until session 22 (see docs/architecture.md,
# "Attach order"), 0 of 120 since. The table says "(retried)".
if [[ " $libs " == *" ferromq "* ]]; then
  for t in "${run_tests[@]}"; do
    r="$(cat "$work/ferromq/log/$t.result")"
    if [[ "$r" != pass* && "$r" != BUILD && -z "${known[$t]+x}" ]]; then
      mv "$work/ferromq/log/$t.out" "$work/ferromq/log/$t.out.first"
      for try in 2 3; do
        cflags=($cflags_str) run_one ferromq "$t"
        r2="$(cat "$work/ferromq/log/$t.result")"
        [[ "$r2" == pass* ]] && break
        [ "$try" = 2 ] && mv "$work/ferromq/log/$t.out" "$work/ferromq/log/$t.out.second"
      done
      echo "$r2 (retried; first: $r)" > "$work/ferromq/log/$t.result"
    fi
  done
fi

# The table, and in --check mode the verdict against known_failures.txt.
short() {
  sed -e 's/ (\([0-9]*\) Tests \([0-9]*\) Failures \([0-9]*\) Ignored)/ \2\/\1/g' \
    -e 's/^pass 0\//pass /' -e 's/ (retried; first: \(.*\))$/, retried (\1)/'
}
echo "pass N: its N cases passed; FAIL F/N: F of its N cases failed; TIMEOUT: killed after ${limit} s"
printf '%-36s | %-16s | %-16s\n' test libzmq ferromq
printf '%-36s-+-%-16s-+-%-16s\n' "$(printf -- '-%.0s' {1..36})" "----------------" "----------------"
status=0
declare -A tally
for t in "${tests[@]}"; do
  if [ -n "${skip[$t]+x}" ]; then
    printf '%-36s | %-35s\n' "$t" "skip: ${skip[$t]}"
    tally[skip]=$(( ${tally[skip]:-0} + 1 ))
    continue
  fi
  cols=()
  for lib in libzmq ferromq; do
    if [[ " $libs " == *" $lib "* ]]; then
      cols+=("$(short < "$work/$lib/log/$t.result")")
    else
      cols+=("-")
    fi
  done
  printf '%-36s | %-16s | %-16s\n' "$t" "${cols[0]}" "${cols[1]}"
  if [[ " $libs " == *" ferromq "* ]]; then
    case "${cols[1]}" in
      pass*) tally[pass]=$(( ${tally[pass]:-0} + 1 ))
        if [ -n "${known[$t]+x}" ]; then
          echo "  $t now passes on ferromq: remove it from tests/libzmq_suite/known_failures.txt"
          status=1
        fi ;;
      *) tally[fail]=$(( ${tally[fail]:-0} + 1 ))
        if [ -z "${known[$t]+x}" ]; then
          echo "  $t fails on ferromq (not a known failure): $work/ferromq/log/$t.out"
          status=1
        fi ;;
    esac
  fi
done
echo "ferromq: ${tally[pass]:-0} pass, ${tally[fail]:-0} fail, ${tally[skip]:-0} skipped; $((SECONDS - start)) s"
if [ "$check" -eq 1 ]; then exit "$status"; fi
