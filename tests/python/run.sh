#!/usr/bin/env bash
# Builds pyzmq from its sdist against ferromq's libzmq.so and zmq.h (never a bundled libzmq)
# and runs pyzmq_checks.py with it. Fails (never skips) when a check fails or cannot run.
#
# Everything lives under $CARGO_TARGET_DIR/pyzmq (default target/pyzmq): the install prefix
# (ffi/install.sh, dev profile, the library `cargo test` already built), a venv, and the built
# wheel, cached under a key of the pyzmq version and zmq.h's hash. pyzmq links libzmq
# dynamically through an RPATH to the prefix, so a rebuilt libzmq.so needs no new wheel; a
# changed header does.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/pyzmq
pyzmq_version=27.3.0
python=${PYTHON:-python3}

prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

if [ ! -x "$work/venv/bin/python" ]; then
    "$python" -m venv "$work/venv"
fi
venv_python=$work/venv/bin/python

key=$pyzmq_version-$(sha256sum "$root/ffi/include/zmq.h" | cut -c1-16)
wheels=$work/wheels/$key
if ! ls "$wheels"/pyzmq-*.whl >/dev/null 2>&1; then
    rm -rf "$wheels"
    mkdir -p "$wheels"
    start=$SECONDS
    # ZMQ_PREFIX: use this libzmq; PYZMQ_NO_BUNDLE: fail rather than fall back to bundling.
    # --no-cache-dir: pip would otherwise reuse a wheel it built for another checkout, whose
    # RUNPATH names that checkout's prefix.
    ZMQ_PREFIX=$prefix PYZMQ_NO_BUNDLE=1 "$venv_python" -m pip wheel --quiet --no-deps --no-cache-dir \
        --no-binary pyzmq "pyzmq==$pyzmq_version" -w "$wheels"
    echo "built pyzmq $pyzmq_version against ferromq in $((SECONDS - start))s"
fi
"$venv_python" -m pip install --quiet --force-reinstall --no-deps "$wheels"/pyzmq-*.whl

FERROMQ_LIBZMQ=$prefix/lib/libzmq.so.5 "$venv_python" "$root/tests/python/pyzmq_checks.py"
