# Sourced by run.sh and suite.sh: builds pyzmq from its sdist against ferromq's libzmq.so and
# zmq.h (never a bundled libzmq) and installs it into a venv.
#
# Everything lives under $CARGO_TARGET_DIR/pyzmq (default target/pyzmq): the install prefix
# (ffi/install.sh, dev profile, the library `cargo test` already built), a venv, the sdist (kept:
# suite.sh runs the tests it ships) and the built wheel, cached under a key of the pyzmq version
# and zmq.h's hash. pyzmq links libzmq dynamically through an RPATH to the prefix, so a rebuilt
# libzmq.so needs no new wheel; a changed header does.
# Sets: root, work, prefix, pyzmq_version, python, venv_python, sdist.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
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

# The sdist itself (not --no-binary :all:, which would build pyzmq's build dependencies from
# source too), downloaded once: the wheel is built from it and suite.sh runs its tests/.
sdist=$work/sdist/pyzmq-$pyzmq_version.tar.gz
if [ ! -f "$sdist" ]; then
    rm -rf "$work/sdist"
    "$venv_python" -m pip download --quiet --no-deps --no-binary pyzmq "pyzmq==$pyzmq_version" \
        -d "$work/sdist"
fi

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
        "$sdist" -w "$wheels"
    echo "built pyzmq $pyzmq_version against ferromq in $((SECONDS - start))s"
fi
"$venv_python" -m pip install --quiet --force-reinstall --no-deps "$wheels"/pyzmq-*.whl
