#!/usr/bin/env bash
# Runs rust-zmq's own test suite (the `zmq` crate 0.10.0 from crates.io, through which most Rust
# services reach libzmq) against ferromq's libzmq.so and, as the control, against the system's
# libzmq (Debian's libzmq3-dev, 4.3.4). A test that passes on the control and fails on ferromq is a
# drop-in bug.
#
#   tests/rust_zmq/suite.sh [options] [file::test...]
#     --control     run the control too and print the differences (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test outside suite_known_failures.txt
#                   fails, or a test listed there passes or is not run
#     --timeout S   seconds each test may take (default 60)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#
# The crate's source is the one cargo already keeps for the workspace's own `zmq` dependency
# (cargo metadata finds it, fetching it if need be); it is copied to target/rust_zmq/src with
# Cargo.lock from this folder (its dev-dependencies pinned, so a machine that built it once
# builds it offline) and built there with its own target dir. zmq-sys 0.12 always builds its
# vendored libzmq from its build script; `links = "zmq"` lets cargo's build-script override
# (`target.<triple>.zmq`) replace that with `-lzmq` from ferromq's prefix (ffi/install.sh, dev
# profile), so the test binaries link ferromq's library, and a symbol it lacks fails the link.
# zmq-sys's bindings are pre-generated: no zmq.h is read. Both sides run the same binaries: the
# dynamic loader maps ferromq's libzmq.so.5 through LD_LIBRARY_PATH, the system's without it,
# each checked once through LD_DEBUG. Not built: tests/compile-tests.rs (trybuild compile-fail
# tests of the crate's own types; no libzmq call). Each test runs alone in its own process
# (`--exact`), so a crash or a hang costs that test only; the crate's `test!` macro also fails a
# test after 10 s. suite_skip.txt names the tests not run, each with why. A ferromq failure
# outside suite_known_failures.txt runs up to twice more, alone (a loaded 2-core machine): the results
# say "(retried)".
#
# Results go to target/rust_zmq/suite/run<N>/: <side>/<file>.<test>.log and results.csv (test,
# ferromq, control).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/rust_zmq
crate=zmq
version=0.10.0

. "$here/../suite_lib.sh"
suite_parse_args "$0" 31 "$@"
cargo=${CARGO:-cargo}

# ferromq as a libzmq drop-in: zmq.h, libzmq.so and libzmq.pc under the prefix.
prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

# The crate's source, as cargo unpacked it for the workspace (read-only there), copied to a
# writable tree: without trybuild (compile-tests.rs only), and a workspace of its own, since
# target/ lies inside ferromq's.
manifest=$(cd "$root" && "$cargo" metadata --format-version 1 \
    | grep -o "\"manifest_path\":\"[^\"]*/$crate-$version/Cargo.toml\"" | head -n 1 | cut -d '"' -f 4)
if [ -z "$manifest" ] || [ ! -f "$manifest" ]; then
    echo "cargo metadata gave no source for $crate $version (the workspace's zmq dependency)" >&2
    exit 1
fi
src=$work/src
rm -rf "$src"
cp -rp "$(dirname "$manifest")" "$src"
chmod -R u+w "$src"
rm "$src/tests/compile-tests.rs"
sed -i '/^\[dev-dependencies\.trybuild\]$/,/^$/d' "$src/Cargo.toml"
printf '\n[workspace]\n' >> "$src/Cargo.toml"
cp "$here/Cargo.lock" "$src/Cargo.lock"

# The tests, built once (the build-script override and --locked: the pinned versions only).
triple=$("$cargo" -vV | sed -n 's/^host: //p')
start=$SECONDS
build_log=$work/build.log
if ! (cd "$src" && "$cargo" test --no-run --locked --target-dir "$work/target" \
    --config "target.$triple.zmq.rustc-link-lib=['zmq']" \
    --config "target.$triple.zmq.rustc-link-search=['$prefix/lib']") > "$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    echo "building $crate $version's tests against ferromq failed (log: $build_log)" >&2
    exit 1
fi
echo "built $crate $version's tests in $((SECONDS - start))s"
# "Executable tests/curve.rs (path)": file name -> binary. The crate's unit tests (src/lib.rs)
# are built too and named "lib".
declare -A bins
while read -r file path; do
    bins[$file]=$path
done < <(sed -n 's/^ *Executable \(unittests src\/lib\.rs\|tests\/\([A-Za-z0-9_]*\)\.rs\) (\(.*\))$/\2 \3/p' "$build_log" \
    | sed 's/^ /lib /')
[ ${#bins[@]} -gt 0 ] || { echo "cargo named no test binaries (log: $build_log)" >&2; exit 1; }

declare -A libs=([ferromq]=$prefix/lib [control]="")
sides=(ferromq)
[ "$control" = 0 ] || sides+=(control)

# Which libzmq the binaries load (the dynamic loader's own account): ferromq's side must map the
# prefix's library.
probe=${bins[context]:-${bins[$(printf '%s\n' "${!bins[@]}" | sort | head -n 1)]}}
for side in "${sides[@]}"; do
    (cd "$src" && LD_LIBRARY_PATH="${libs[$side]}" LD_DEBUG=libs "$probe" --list) \
        > "$work/$side.ld_debug" 2>&1
    suite_check_loaded "$side" "$work/$side.ld_debug"
done

# The tests: each binary's own list as file::test, less suite_skip.txt, or those named on the
# command line.
suite_read_lists "$here"
all=()
for file in $(printf '%s\n' "${!bins[@]}" | sort); do
    while read -r t; do
        all+=("$file::$t")
    done < <(LD_LIBRARY_PATH="$prefix/lib" "${bins[$file]}" --list --format terse | sed -n 's/: test$//p')
done
[ ${#all[@]} -gt 0 ] || { echo "the test binaries list no tests" >&2; exit 1; }
suite_select

# One test alone: prints passed, failed, skipped (#[ignore]) or timeout. The suite's few fixed
# endpoints (tcp ports 9998 and 9999, inproc names) mean one test at a time.
run_one() {
    local side="$1" id="$2" log="$3" rc=0 file=${2%%::*} test=${2#*::}
    if [ -z "${bins[$file]:-}" ]; then
        echo "no test binary $file" > "$log"
        echo failed
        return
    fi
    (cd "$src" && LD_LIBRARY_PATH="${libs[$side]}" timeout -k 5 "$limit" "${bins[$file]}" \
        --exact "$test" --test-threads 1) > "$log" 2>&1 || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo timeout
    elif [ "$rc" = 0 ] && grep -q '^test result: ok\. 1 passed' "$log"; then
        echo passed
    elif [ "$rc" = 0 ] && grep -q '^test result: ok\. 0 passed; 0 failed; 1 ignored' "$log"; then
        echo skipped
    else
        echo failed
    fi
}
# The first line saying why: the panic's location and message, else the last line.
why() {
    local line
    line=$(grep -m 1 -A 1 'panicked at' "$1" | tr '\n' ' ' | sed 's/^thread [^ ]* //') || true
    [ -n "$line" ] && echo "$line" || tail -n 1 "$1"
}
suite_log_name() { echo "${1/::/.}"; }
suite_run
