#!/usr/bin/env bash
# Runs php-zmq 1.1.3's own tests (the PECL zmq extension, Debian's php-zmq: a C extension built
# against zmq.h and linked to libzmq.so) against ferromq and, as the control, against the
# system's libzmq (Debian's libzmq3-dev 4.3.4). The extension is built from Debian's orig
# tarball once per side with phpize (Debian's php8.2-dev) and loaded with
# `php -d extension=.../zmq.so`, never installed into the system's PHP; each .phpt runs alone
# through PHP's run-tests.php (tests/suite_lib.sh's loop: a ferromq failure outside
# known_failures.txt runs up to twice more before it counts; results in <work>/suite/runN/results.csv).
#
#   tests/php/run.sh [options] [test...]        (a test: the .phpt's name without .phpt)
#     --control     build and run against the system's libzmq too, and print the differences
#                   (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test outside known_failures.txt fails,
#                   or a test listed there passes or does not run
#     --timeout S   seconds each test may run (default: 60)
#     --runs N      run the selection N times (flake hunting; default 1)
#     --work DIR    download, build and log directory (default: target/php-zmq)
#
# php8.patch ports 1.1.3 to PHP 8.2 (see its header). skip.txt names the tests not run,
# known_failures.txt the ferromq failures, each with why.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

. "$here/../suite_lib.sh"
suite_start php-zmq 19 "$@"
start=$SECONDS

for tool in php phpize php-config; do
  command -v "$tool" >/dev/null 2>&1 \
    || { echo "no $tool: install Debian's php8.2-cli and php8.2-dev" >&2; exit 2; }
done
php=$(command -v php)
php_version=$("$php" -n -r 'echo PHP_VERSION;')
if [ "$php_version" != "$(php-config --version)" ]; then
  echo "php is $php_version but php-config (phpize) is $(php-config --version)" >&2
  exit 2
fi

# The source: Debian's copy of the PECL release tarball, checked against bookworm's Sources.
version=1.1.3
sha256=c492375818bd51b355352798fb94f04d6828c6aeda41ba813849624af74144ce
suite_debian_orig php-zmq "$version" "$sha256" "$work" "zmq-$version"

# Where each side's libzmq is: ferromq's from ffi/install.sh's prefix (dev profile, the library
# `cargo test` already built; it copies the library, so it runs every time), the control's
# from pkg-config's default search.
prefix="$work/prefix"
declare -A with_zmq header
sh "$root/ffi/install.sh" "$prefix" dev >/dev/null
with_zmq[ferromq]="$prefix"
header[ferromq]="$prefix/include/zmq.h"
if [ "$control" = 1 ]; then
  pkg-config --exists libzmq || { echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
  with_zmq[control]=yes
  header[control]="$(pkg-config --variable=includedir libzmq)/zmq.h"
fi

# One build per side in its own copy of the source (phpize writes into it), redone from a fresh
# copy when the patch, the side's zmq.h or PHP changes. ferromq's zmq.so gets an RPATH to the
# prefix: it must load that library, not the system's libzmq.so.5.
build() {
  local side="$1" dir="$work/build-$1" key
  key="$(cat "$here/php8.patch" "${header[$side]}" | sha256sum | cut -c1-16) $php_version"
  if [ "$(cat "$dir/.built" 2>/dev/null)" = "$key" ]; then
    return
  fi
  rm -rf "$dir"
  cp -r "$src" "$dir"
  patch -d "$dir" -p1 -s < "$here/php8.patch"
  local ldflags=""
  [ "$side" = control ] || ldflags="-Wl,-rpath,$prefix/lib"
  (cd "$dir" && phpize && env -u PKG_CONFIG_PATH LDFLAGS="$ldflags" ./configure --with-zmq="${with_zmq[$side]}" \
    && make -j "$(nproc)") > "$dir/build.log" 2>&1 \
    || { echo "php-zmq's build against $side failed: $dir/build.log" >&2; return 1; }
  echo "$key" > "$dir/.built"
}
for side in "${sides[@]}"; do build "$side"; done
echo "built php-zmq $version for PHP $php_version against: ${sides[*]} ($((SECONDS - start)) s)"

# Which libzmq each side's extension loads (the dynamic loader's own account), and the version
# the extension reports: ferromq's side must map the prefix's library.
for side in "${sides[@]}"; do
  LD_DEBUG=libs "$php" -n -d extension="$work/build-$side/modules/zmq.so" \
    -r 'echo "libzmq ", ZMQ::LIBZMQ_VER, "\n";' > "$work/$side.ld_debug" 2>&1 \
    || { echo "php with $side's zmq.so failed: $work/$side.ld_debug" >&2; exit 1; }
  suite_check_loaded "$side" "$work/$side.ld_debug"
done
# The features configure found (functions it probes for in libzmq): a side without one compiles
# that part of the extension out, which its tests then skip.
if [ "$control" = 1 ]; then
  diff <(grep '^#define PHP_ZMQ_HAVE' "$work/build-ferromq/config.h") \
    <(grep '^#define PHP_ZMQ_HAVE' "$work/build-control/config.h") \
    || echo "configure found different libzmq functions (< ferromq, > control)"
fi

suite_read_lists "$here" skip.txt known_failures.txt
mapfile -t all < <(cd "$work/build-ferromq/tests" && ls -- *.phpt | sed 's/\.phpt$//')
[ ${#all[@]} -gt 0 ] || { echo "php-zmq's tests/ has no .phpt" >&2; exit 1; }
suite_select

# One .phpt through run-tests.php (phpize's copy), with the side's zmq.so: prints passed,
# skipped (the test's SKIPIF said so), failed (FAIL, BORK, LEAK, ...) or timeout (run-tests.php
# stops a test after the limit; `timeout` stops run-tests.php). The tests were written for PHP
# 5 and 7: E_DEPRECATED is off, as PHP 8.2 deprecates `${var}` in strings and dynamic
# properties, which they use (skip.txt says which tests this changes). Tests run one at a time:
# they bind fixed tcp ports and ipc paths.
run_one() {
  local side="$1" test="$2" log="$3" dir rc=0 result
  dir="$work/build-$side"
  (cd "$dir" && NO_INTERACTION=1 timeout -k 5 "$((limit + 10))" "$php" -n run-tests.php -q \
    --no-color --show-diff --set-timeout "$limit" -p "$php" -n \
    -d extension="$dir/modules/zmq.so" -d error_reporting='E_ALL & ~E_DEPRECATED' \
    "tests/$test.phpt") > "$log" 2>&1 < /dev/null || rc=$?
  result=$(grep -a -o -E "(PASS|FAIL|SKIP|BORK|LEAK|WARN|XFAIL|XLEAK) .*\[tests/$test\.phpt\]" "$log" \
    | tail -n 1 | cut -d ' ' -f 1)
  if [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q 'ERROR: process timed out' "$log"; then
    echo timeout
  elif [ "$result" = PASS ]; then
    echo passed
  elif [ "$result" = SKIP ]; then
    echo skipped
  else
    echo failed
  fi
}
# The first line saying why: the first line of run-tests.php's diff (+ got, - expected), else
# its verdict, else the last line.
why() {
  grep -a -m 1 -E '^[0-9]{3}[+-] ' "$1" \
    || grep -a -m 1 -o -E '(FAIL|BORK|LEAK|WARN) .*' "$1" || tail -n 1 "$1"
}
suite_run
