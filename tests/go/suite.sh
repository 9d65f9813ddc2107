#!/usr/bin/env bash
# Runs pebbe/zmq4's own Go test suite (github.com/pebbe/zmq4, the cgo binding most Go services
# use) against ferromq's libzmq.so and zmq.h and, as the control, against the system's libzmq
# (Debian's libzmq3-dev, 4.3.4). A test that passes on the control and fails on ferromq is a
# drop-in bug.
#
#   tests/go/suite.sh [options] [TestName...]
#     --control     run the control too and print the differences (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test outside suite_known_failures.txt
#                   fails, or a test listed there passes or is not run
#     --timeout S   seconds each test may take (default 60)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#
# The go command fetches the module through its proxy into target/go (GOMODCACHE, GOPATH,
# GOCACHE), never into the repository or the user's caches, and builds the package's tests once
# per side with cgo: pkg-config finds libzmq.pc, ferromq's from ffi/install.sh (dev profile) or
# the system's. Each test runs alone in its own process (`-test.run '^Name$'`), so a crash or a
# hang costs that test only. The draft subpackage is not built: it needs ZMQ_BUILD_DRAFT_API,
# which neither library has. suite_skip.txt names the tests not run, each with why. A ferromq
# failure outside suite_known_failures.txt runs up to twice more, alone (a loaded 2-core machine): the
# results say "(retried)".
#
# Results go to target/go/suite/run<N>/: <side>/<Test>.log and results.csv (test, ferromq,
# control).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/go
module=github.com/pebbe/zmq4
version=v1.4.0

. "$here/../suite_lib.sh"
suite_parse_args "$0" 24 "$@"

go=${GO:-}
if [ -z "$go" ]; then
    go=$(command -v go || true)
    [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
fi
if [ -z "$go" ]; then
    echo "no go command (set GO, or install Go: Debian's golang-go builds pebbe/zmq4 $version)" >&2
    exit 2
fi
echo "$("$go" version)"

# Everything the go command writes stays under target/go: modules, build cache, its own
# settings (GOENV off) and telemetry counters (under XDG_CONFIG_HOME). GOTOOLCHAIN=local: never
# download another toolchain. GOFLAGS=-mod=mod: the copied module has no go.sum to check.
export GOPATH=$work/gopath GOMODCACHE=$work/modcache GOENV=off GOTOOLCHAIN=local \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" XDG_CONFIG_HOME=$work/config CGO_ENABLED=1
mkdir -p "$work/fetch" "$work/config"

# ferromq as a libzmq drop-in: zmq.h, libzmq.so and libzmq.pc under the prefix.
prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

# The module, fetched once into the module cache (read-only there), copied to a writable tree.
# `go mod download` wants a main module: an empty one that any go command since 1.16 reads.
printf 'module fetch\n\ngo 1.16\n' > "$work/fetch/go.mod"
dir=$(cd "$work/fetch" && "$go" mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -f "$dir/zmq4.go" ]; then
    echo "go mod download $module@$version gave no source directory" >&2
    exit 1
fi
src=$work/src
rm -rf "$src"
cp -r "$dir" "$src"
chmod -R u+w "$src"

declare -A bins libs
# Builds the package's test binary for one side; PKG_CONFIG_PATH picks the libzmq. The go
# command does not hash the C headers a cgo package includes, so each side, and each version of
# ferromq's zmq.h, has its own build cache (older ones are removed). A rebuilt libzmq.so needs
# no new binary: it is loaded at run time.
build() {
    local side="$1" pc="$2" header="$3" start=$SECONDS cache
    cache=$work/cache/$side-$(sha256sum "$header" | cut -c1-16)
    for old in "$work/cache/$side"-*; do
        [ "$old" = "$cache" ] || rm -rf "$old"
    done
    mkdir -p "$work/bin"
    (cd "$src" && GOCACHE="$cache" PKG_CONFIG_PATH="$pc" \
        "$go" test -c -o "$work/bin/zmq4-$side.test" .)
    bins[$side]=$work/bin/zmq4-$side.test
    echo "$side: built $module $version's tests in $((SECONDS - start))s"
}
sides=(ferromq)
build ferromq "$prefix/lib/pkgconfig" "$prefix/include/zmq.h"
libs[ferromq]=$prefix/lib
if [ "$control" = 1 ]; then
    pkg-config --exists libzmq || { echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
    build control "" "$(pkg-config --variable=includedir libzmq)/zmq.h"
    libs[control]=""
    sides+=(control)
fi

# Which libzmq each binary loads (the dynamic loader's own account), and the version pebbe's
# init sees: ferromq's side must map the prefix's library.
for side in "${sides[@]}"; do
    (cd "$src" && LD_LIBRARY_PATH="${libs[$side]}" LD_DEBUG=libs "${bins[$side]}" -test.run '^$') \
        > "$work/bin/$side.ld_debug" 2>&1
    suite_check_loaded "$side" "$work/bin/$side.ld_debug"
done

# The tests: the binary's own list, less suite_skip.txt, or those named on the command line.
suite_read_lists "$here"
mapfile -t all < <(cd "$src" && LD_LIBRARY_PATH="$prefix/lib" "${bins[ferromq]}" -test.list '.*' \
    | grep -E '^(Test|Example)')
[ ${#all[@]} -gt 0 ] || { echo "the test binary lists no tests" >&2; exit 1; }
suite_select

# One test alone: prints passed, failed, skipped or timeout. The package's fixed endpoints
# (tcp port 9000 and up, ipc:///tmp/tester) mean one test at a time.
run_one() {
    local side="$1" test="$2" log="$3" rc=0
    (cd "$src" && LD_LIBRARY_PATH="${libs[$side]}" timeout -k 5 "$((limit + 10))" "${bins[$side]}" \
        -test.v -test.timeout "${limit}s" -test.count 1 -test.run "^${test}\$") > "$log" 2>&1 || rc=$?
    if grep -q "^--- PASS: $test " "$log" && [ "$rc" = 0 ]; then
        echo passed
    elif grep -q "^--- SKIP: $test " "$log" && [ "$rc" = 0 ]; then
        echo skipped
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q "^panic: test timed out" "$log"; then
        echo timeout
    else
        echo failed
    fi
}
# The first line saying why: a t.Error/t.Fatal location, else a panic, else the last line.
why() {
    grep -m 1 -E '^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+: |^panic: |no tests to run' "$1" | sed 's/^[[:space:]]*//' \
        || tail -n 1 "$1"
}
suite_run
