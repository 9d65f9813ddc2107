#!/usr/bin/env bash
# Runs pyzmq 27.3.0's own test suite (the tests/ of its sdist, with pytest) against pyzmq built
# from that sdist against ferromq (setup.sh) and, as the control, against PyPI's binary wheel of
# the same version (bundled libzmq 4.3.5) in a second venv. Tests that pass on the control and
# fail on ferromq are drop-in bugs.
#
#   tests/python/suite.sh [options] [pytest node id...]
#     --control     run the control too and print the table of differences (default: ferromq)
#     --check       CI mode (ferromq only): fails when a test outside suite_known_failures.txt
#                   fails, or a test listed there passes
#     --timeout S   seconds each test may take (pytest-timeout; default 60)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#     --backend B   cython (default: pyzmq's build on CPython, the one CI runs) or cffi: pyzmq's
#                   CFFI backend, another caller of the C API (zmq_msg_* through cffi), built
#                   against ferromq and, as its control, against the system's libzmq (Debian's
#                   4.3.4, pkg-config): PyPI has no CFFI wheel for CPython
#
# Results go to target/pyzmq/suite/<backend>/run<N>/: <side>.xml (JUnit), <side>.log and
# results.csv (test, ferromq, control). suite_skip.txt names the tests deselected here, each with
# why; tests pyzmq skips itself (no draft API, no CFFI backend, ...) keep pytest's own reason, reported in
# the log and the CSV. A ferromq failure outside suite_known_failures.txt runs once more, alone
# (a loaded 2-core machine): the CSV says "(retried)".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

. "$here/../suite_lib.sh"
declare -A suite_values=([--backend]=cython)
suite_parse_args "$0" 22 "$@"
backend=${suite_values[--backend]}

. "$here/setup.sh"

reqs=$here/suite_requirements.txt
# A CFFI-backend wheel, cached in $2 (env: where libzmq is), installed into venv $1.
cffi_wheel() {
    local venv="$1" wheels="$2"; shift 2
    new_venv "$venv"
    install_reqs "$venv/bin/python" "$here/suite_cffi_build.txt"
    pyzmq_wheel "$venv/bin/python" "$wheels" "$@" PYZMQ_BACKEND=cffi --no-build-isolation
}

declare -A pythons
case "$backend" in
    cython)
        pythons[ferromq]=$venv_python
        if [ "$control" = 1 ]; then
            new_venv "$work/control-venv"
            "$work/control-venv/bin/python" -m pip install --quiet --only-binary pyzmq "pyzmq==$pyzmq_version"
            pythons[control]=$work/control-venv/bin/python
        fi
        ;;
    cffi)
        cffi_wheel "$work/cffi-venv" "$work/wheels-cffi/$key" ZMQ_PREFIX="$prefix"
        pythons[ferromq]=$work/cffi-venv/bin/python
        if [ "$control" = 1 ]; then
            pkg-config --exists libzmq || { echo "the CFFI control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
            cffi_wheel "$work/cffi-control-venv" "$work/wheels-cffi-system/$pyzmq_version-$(pkg-config --modversion libzmq)"
            pythons[control]=$work/cffi-control-venv/bin/python
        fi
        ;;
    *) echo "unknown backend $backend" >&2; exit 2 ;;
esac
sides=(ferromq)
[ "$control" = 1 ] && sides+=(control)
for side in "${sides[@]}"; do install_reqs "${pythons[$side]}" "$reqs"; done

# Which libzmq each side maps: ferromq's from the prefix, the control's bundled one.
for side in "${sides[@]}"; do
    lib=$("${pythons[$side]}" -c 'import zmq, re; print(zmq.zmq_version(), zmq.backend.Socket.__module__, *sorted({l.split()[-1] for l in open("/proc/self/maps") if re.search(r"libzmq[^/]*\.so", l)}))')
    echo "$side: libzmq $lib"
    if [ "$side" = ferromq ] && [[ "$lib" != *"$(realpath "$prefix/lib/libzmq.so.5")"* ]]; then
        echo "pyzmq in $work/venv did not load ferromq's libzmq" >&2
        exit 1
    fi
done

# The tests and pytest.ini, out of the sdist, in a directory without the sdist's zmq/ (its
# sources would shadow the installed package).
src=$work/suite/src
rm -rf "$src"
mkdir -p "$src"
tar -xzf "$sdist" -C "$src" --strip-components=1 "pyzmq-$pyzmq_version/tests" "pyzmq-$pyzmq_version/pytest.ini"

deselect=()
while read -r name _; do
    [ -n "$name" ] && deselect+=(--deselect "$name")
done < <(grep -v '^\s*#' "$here/suite_skip.txt")
selection=("${only[@]}")
[ ${#selection[@]} -gt 0 ] || selection=(tests)

# One pytest run; the outer timeout only catches what pytest-timeout cannot interrupt.
run_pytest() {
    local side="$1" out="$2"; shift 2
    local rc=0 cflags=""
    # test_cython compiles against zmq.h: ferromq's on our side.
    [ "$side" = ferromq ] && cflags="-I$prefix/include"
    (cd "$src" && CFLAGS="$cflags" timeout -k 10 480 "${pythons[$side]}" -m pytest -p no:cacheprovider \
        --timeout "$limit" -q -rfER --junitxml="$out.xml" "$@") > "$out.log" 2>&1 || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "$side: pytest itself timed out (see $out.log)" >&2
    fi
    tail -n 1 "$out.log"
}

status=0
for run in $(seq 1 "$runs"); do
    out=$work/suite/$backend/run$run
    rm -rf "$out"
    mkdir -p "$out"
    start=$SECONDS
    for side in "${sides[@]}"; do
        printf '%s: ' "$side"
        run_pytest "$side" "$out/$side" "${deselect[@]}" "${selection[@]}"
    done
    # Unexpected ferromq failures once more, alone.
    mapfile -t again < <("${pythons[ferromq]}" "$here/suite_report.py" --failed-unknown \
        --known "$here/suite_known_failures.txt" ferromq="$out/ferromq.xml")
    if [ ${#again[@]} -gt 0 ]; then
        printf 'ferromq, %d failed test(s) again: ' "${#again[@]}"
        run_pytest ferromq "$out/ferromq-retry" "${again[@]}"
    fi
    echo "run $run: $((SECONDS - start))s"
    args=(--known "$here/suite_known_failures.txt" --csv "$out/results.csv")
    [ "$check" = 1 ] && args+=(--check)
    for side in "${sides[@]}"; do args+=("$side=$out/$side.xml"); done
    [ -f "$out/ferromq-retry.xml" ] && args+=(--retry "$out/ferromq-retry.xml")
    "${pythons[ferromq]}" "$here/suite_report.py" "${args[@]}" || status=1
done
exit $status
