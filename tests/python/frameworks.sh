#!/usr/bin/env bash
# Runs the own test suites of two frameworks Python services reach libzmq through, aiozmq 1.0.0
# (asyncio: its ZmqEventLoop and its loop-less transports on ZMQ_FD, RPC, pipeline, pub/sub,
# socket monitors) and txZMQ 0.8.0 (Twisted: ZMQ_FD in the reactor, PUB/SUB, REQ/REP,
# ROUTER/DEALER, reactor shutdown), on pyzmq built against ferromq (setup.sh, the wheel CI already
# built) and, as the control, on pyzmq built from the same sdist against the system's libzmq
# (Debian's libzmq3-dev, 4.3.4). A test that passes on the control and fails on ferromq is a
# drop-in bug.
#
#   tests/python/frameworks.sh [options] [framework:path::TestCase...]
#     --control     run the control too and print the differences (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test case outside
#                   frameworks_known_failures.txt fails, or one listed there passes or is not run
#     --timeout S   seconds each test may take (pytest-timeout; default 60; a test case's
#                   process gets twice that)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#
# Each unittest TestCase class (e.g. aiozmq:tests/rpc_test.py::LoopRpcTests) runs in its own
# pytest process, one at a time (tests/suite_lib.sh's loop; a ferromq failure outside the known
# list runs up to twice more before it counts). The sources are the frameworks' release tarballs as
# Debian ships them (orig tarballs, identical to the PyPI sdists), sha256-checked and unpacked
# under target/pyzmq/frameworks, where the results go too: suite/run<N>/<side>/<test>.log and
# results.csv. frameworks_skip.txt names the test cases not run, each with why.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

. "$here/../suite_lib.sh"
suite_parse_args "$0" 23 "$@"

. "$here/setup.sh"
pyzmq_work=$work
work=$pyzmq_work/frameworks
mkdir -p "$work/downloads"

# A release tarball: Debian's pool first; where the pool no longer has that version (txzmq
# 0.8.0, which bookworm's Sources still lists), the same file from PyPI (pip download of the
# sdist, byte for byte the orig tarball). Either way it must match the sha256 of bookworm's
# Sources index, kept here.
fetch() {
    local file="$1" sha256="$2" pool="$3" pypi="$4" tarball="$work/downloads/$1"
    if [ ! -f "$tarball" ]; then
        if ! curl -sfL -o "$tarball.part" "http://deb.debian.org/debian/pool/main/$pool/$file"; then
            echo "$file: not in Debian's pool, fetching $pypi's sdist from PyPI"
            rm -rf "$work/downloads/pypi"
            "$venv_python" -m pip download --quiet --no-deps --no-binary :all: "$pypi" \
                -d "$work/downloads/pypi"
            mv "$work/downloads/pypi"/*.tar.gz "$tarball.part"
        fi
        mv "$tarball.part" "$tarball"
    fi
    if ! echo "$sha256  $tarball" | sha256sum -c --quiet -; then
        echo "$tarball: wrong sha256" >&2
        rm -f "$tarball"
        exit 1
    fi
}
# The tarball unpacked once under $work/src (its top directory is $2).
unpack() {
    local tarball="$work/downloads/$1" dir="$work/src/$2"
    if [ ! -f "$dir/.unpacked" ]; then
        rm -rf "$dir"
        mkdir -p "$work/src"
        tar -xzf "$tarball" -C "$work/src"
        touch "$dir/.unpacked"
    fi
}
fetch aiozmq_1.0.0.orig.tar.gz dac9069d36a47da439fa852ed37caaed3887b5928cb781e06a6a82e43682c6bb \
    a/aiozmq aiozmq==1.0.0
fetch txzmq_0.8.0.orig.tar.gz 718476042c78732caba592104f2bd16a0f9f3fbc2c169d752526a25a12cb35ec \
    t/txzmq txZMQ==0.8.0
unpack aiozmq_1.0.0.orig.tar.gz aiozmq-1.0.0
unpack txzmq_0.8.0.orig.tar.gz txZMQ-0.8.0
# Each framework's tree (its tests import the package from there) and its tests' directory.
declare -A srcdir=([aiozmq]=$work/src/aiozmq-1.0.0 [txzmq]=$work/src/txZMQ-0.8.0)
declare -A testdir=([aiozmq]=tests [txzmq]=txzmq/test)

# aiozmq 1.0.0's rpc_test.py decorates one handler with asyncio.coroutine, which Python 3.11
# removed (both sides run this Python, so both need it): the module would not import. The
# decorator made `fut` a coroutine awaiting the Future it returns, which is what this says.
"$python" - "${srcdir[aiozmq]}/tests/rpc_test.py" <<'EOF'
import sys
path = sys.argv[1]
old = "    @asyncio.coroutine\n    def fut(self):\n        return asyncio.Future()\n"
new = "    async def fut(self):\n        return await asyncio.Future()\n"
text = open(path).read()
if old in text:
    open(path, "w").write(text.replace(old, new))
elif new not in text:
    sys.exit(f"{path}: the asyncio.coroutine handler to patch is not there")
EOF

# One venv a side: ferromq's pyzmq wheel (setup.sh built it), the control's built against the
# system's libzmq and cached under its version; the same pinned test dependencies in both.
declare -A pythons=([ferromq]=$work/venv-ferromq/bin/python)
sides=(ferromq)
new_venv "$work/venv-ferromq"
pyzmq_wheel "${pythons[ferromq]}" "$wheels" ZMQ_PREFIX="$prefix"
if [ "$control" = 1 ]; then
    pkg-config --exists libzmq || { echo "the control needs the system's libzmq (libzmq3-dev)" >&2; exit 2; }
    pythons[control]=$work/venv-control/bin/python
    sides+=(control)
    new_venv "$work/venv-control"
    pyzmq_wheel "${pythons[control]}" "$pyzmq_work/wheels-system/$pyzmq_version-$(pkg-config --modversion libzmq)"
fi
for side in "${sides[@]}"; do
    install_reqs "${pythons[$side]}" "$here/frameworks_requirements.txt"
done

# Which libzmq each side's pyzmq maps, from the loader's own account (ferromq's side must map
# the prefix's library), and the version pyzmq reports.
for side in "${sides[@]}"; do
    (cd "$work" && LD_DEBUG=libs "${pythons[$side]}" -c 'import zmq; print("libzmq", zmq.zmq_version())') \
        > "$work/$side.ld_debug" 2>&1
    suite_check_loaded "$side" "$work/$side.ld_debug"
    echo "$side: pyzmq $(grep -m 1 '^libzmq ' "$work/$side.ld_debug")"
done

# The test cases: pytest's collection (ferromq's side), one framework:path::Class per line,
# less frameworks_skip.txt, or those named on the command line.
suite_read_lists "$here" frameworks_skip.txt frameworks_known_failures.txt
all=()
for fw in aiozmq txzmq; do
    collected=$(cd "${srcdir[$fw]}" && "${pythons[ferromq]}" -m pytest -p no:cacheprovider \
        --collect-only -q "${testdir[$fw]}") || { echo "$fw: pytest's collection failed:" >&2; echo "$collected" >&2; exit 1; }
    mapfile -t -O ${#all[@]} all < <(echo "$collected" | grep '::' | awk -F'::' -v fw="$fw" '{print fw ":" $1 "::" $2}' | sort -u)
done
[ ${#all[@]} -gt 0 ] || { echo "pytest collected no test case" >&2; exit 1; }
suite_select

# One TestCase class in its own pytest process, from its framework's tree: prints passed
# ("(part skipped)" where some of its tests skipped themselves), skipped (all of them), failed
# or timeout. The tests use fixed tcp ports, so one at a time.
run_one() {
    local side="$1" test="$2" log="$3" rc=0 fw=${2%%:*} summary
    (cd "${srcdir[$fw]}" && timeout -k 5 "$((limit * 2))" "${pythons[$side]}" -m pytest \
        -p no:cacheprovider -q -rfEs --timeout "$limit" "${test#*:}") > "$log" 2>&1 < /dev/null || rc=$?
    summary=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
    if [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q '^E *Failed: Timeout' "$log"; then
        echo timeout
    elif [ "$rc" != 0 ]; then
        echo failed
    elif [[ "$summary" != *passed* ]] && [[ "$summary" == *skipped* ]]; then
        echo skipped
    elif [[ "$summary" == *skipped* ]]; then
        echo "passed (part skipped)"
    else
        echo passed
    fi
}
# The first line saying why: pytest's short summary of a failure or error (or its own error: a
# test case not found), else a timeout, else the last line.
why() {
    grep -m 1 -E '^(FAILED |ERROR[ :])' "$1" || grep -m 1 -E 'Failed: Timeout' "$1" \
        || grep -v '^[[:space:]]*$' "$1" | tail -n 1
}
# framework:path::Class as a file name.
suite_log_name() {
    local name=${1//::/.}
    name=${name//\//_}
    echo "${name//:/_}"
}
suite_run
