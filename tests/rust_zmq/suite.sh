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
# outside suite_known_failures.txt runs once more, alone (a loaded 2-core machine): the results
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

control=0
check=0
limit=60
runs=1
only=()
while [ $# -gt 0 ]; do
    case "$1" in
        --control) [ "$check" = 1 ] || control=1; shift ;;
        --check) check=1; control=0; shift ;;
        --timeout) limit="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) only+=("$1"); shift ;;
    esac
done
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
    loaded=$(sed -n 's/.*calling init: \(.*libzmq\.so[^ ]*\)$/\1/p' "$work/$side.ld_debug")
    echo "$side: loads ${loaded:-no libzmq?}"
    if [ "$side" = ferromq ] && [ "$(realpath -m "$loaded")" != "$(realpath "$prefix/lib/libzmq.so.5")" ]; then
        echo "the ferromq test binaries did not load $prefix/lib/libzmq.so.5" >&2
        exit 1
    fi
done

# The tests: each binary's own list as file::test, less suite_skip.txt, or those named on the
# command line.
declare -A skip
while read -r name _; do
    [ -n "$name" ] && skip[$name]=1
done < <(grep -v '^[[:space:]]*#' "$here/suite_skip.txt")
declare -A known
while read -r name reason; do
    [ -n "$name" ] && known[$name]=$reason
done < <(grep -v '^[[:space:]]*#' "$here/suite_known_failures.txt")
all=()
for file in $(printf '%s\n' "${!bins[@]}" | sort); do
    while read -r t; do
        all+=("$file::$t")
    done < <(LD_LIBRARY_PATH="$prefix/lib" "${bins[$file]}" --list --format terse | sed -n 's/: test$//p')
done
[ ${#all[@]} -gt 0 ] || { echo "the test binaries list no tests" >&2; exit 1; }
if [ ${#only[@]} -gt 0 ]; then
    tests=("${only[@]}")
else
    tests=()
    for t in "${all[@]}"; do [ -n "${skip[$t]:-}" ] || tests+=("$t"); done
    for name in "${!skip[@]}"; do
        printf '%s\n' "${all[@]}" | grep -qxF "$name" \
            || echo "suite_skip.txt names $name, which the suite does not have" >&2
    done
fi

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
bad() { [ "$1" = failed ] || [ "$1" = timeout ]; }

status=0
for run in $(seq 1 "$runs"); do
    out=$work/suite/run$run
    rm -rf "$out"
    start=$SECONDS
    declare -A result=()
    for side in "${sides[@]}"; do
        mkdir -p "$out/$side"
        declare -A count=([passed]=0 [failed]=0 [skipped]=0 [timeout]=0)
        for t in "${tests[@]}"; do
            log=$out/$side/${t/::/.}
            r=$(run_one "$side" "$t" "$log.log")
            if [ "$side" = ferromq ] && bad "$r" && [ -z "${known[$t]:-}" ]; then
                r2=$(run_one "$side" "$t" "$log.retry.log")
                echo "ferromq, $t: $r ($(why "$log.log")), then $r2 on the retry"
                r="$r2 (retried)"
            fi
            result[$side,$t]=$r
            count[${r%% *}]=$((count[${r%% *}] + 1))
        done
        echo "$side: ${count[passed]} passed, ${count[failed]} failed, ${count[timeout]} timed out, ${count[skipped]} skipped"
    done
    echo "run $run: $((SECONDS - start))s"

    {
        printf 'test'; printf ',%s' "${sides[@]}"; echo
        for t in "${tests[@]}"; do
            printf '%s' "$t"
            for side in "${sides[@]}"; do printf ',%s' "${result[$side,$t]}"; done
            echo
        done
    } > "$out/results.csv"

    if [ "$control" = 1 ]; then
        diverging=()
        for t in "${tests[@]}"; do
            if [ "${result[control,$t]}" = passed ] && bad "${result[ferromq,$t]%% *}"; then
                diverging+=("$t")
            fi
        done
        echo "pass on the control, fail on ferromq: ${#diverging[@]}"
        for t in "${diverging[@]}"; do
            echo "  $t: $(why "$out/ferromq/${t/::/.}.log")${known[$t]:+ (known: ${known[$t]})}"
        done
        for t in "${tests[@]}"; do
            if [ "${result[control,$t]}" != passed ] && [ "${result[control,$t]}" != skipped ]; then
                echo "  control, $t: ${result[control,$t]}: $(why "$out/control/${t/::/.}.log")"
            fi
        done
    fi

    if [ "$check" = 1 ]; then
        failed=0
        for t in "${tests[@]}"; do
            r=${result[ferromq,$t]%% *}
            if bad "$r" && [ -z "${known[$t]:-}" ]; then
                echo "NEW FAILURE $t: $(why "$out/ferromq/${t/::/.}.log") (log: $out/ferromq/${t/::/.}.log)"
                failed=1
            elif [ "$r" = passed ] && [ -n "${known[$t]:-}" ]; then
                echo "KNOWN FAILURE NOW PASSES $t (remove it from suite_known_failures.txt)"
                failed=1
            fi
        done
        if [ ${#only[@]} = 0 ]; then
            for t in "${!known[@]}"; do
                [ -n "${result[ferromq,$t]:-}" ] || { echo "KNOWN FAILURE NOT RUN $t (renamed or skipped?)"; failed=1; }
            done
        fi
        echo "check: $([ "$failed" = 1 ] && echo FAILED || echo ok)"
        [ "$failed" = 0 ] || status=1
    fi
    unset result
done
exit $status
