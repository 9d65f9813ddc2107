# Sourced by run.sh and suite.sh: builds pyzmq from its sdist against ferromq's libzmq.so and
# zmq.h (never a bundled libzmq) and installs it into a venv.
#
# Everything lives under $CARGO_TARGET_DIR/pyzmq (default target/pyzmq): the install prefix
# (ffi/install.sh, dev profile, the library `cargo test` already built), a venv, the sdist (kept:
# suite.sh runs the tests it ships) and the built wheel, cached under a key of the pyzmq version
# and zmq.h's hash. pyzmq links libzmq dynamically through an RPATH to the prefix, so a rebuilt
# libzmq.so needs no new wheel; a changed header does.
# Sets: root, work, prefix, pyzmq_version, python, venv_python, sdist, key (the wheel's cache
# key), wheels (its directory); defines new_venv, install_reqs and pyzmq_wheel, which suite.sh
# and frameworks.sh use for their other venvs and builds.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/pyzmq
pyzmq_version=27.3.0
python=${PYTHON:-python3}

# A venv at $1, created once.
new_venv() {
    [ -x "$1/bin/python" ] || "$python" -m venv "$1"
}
# A pinned requirements file ($2) installed into python $1, once per version of the file.
install_reqs() {
    local py="$1" file="$2" stamp
    stamp="$(dirname "$py")/../.reqs-$(sha256sum "$file" | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
        "$py" -m pip install --quiet -r "$file"
        touch "$stamp"
    fi
}
# pyzmq's wheel from the sdist, built once by python $1 into the cache directory $2, then
# installed into $1's venv. The rest: VAR=value for the build's environment (ZMQ_PREFIX: which
# libzmq, none meaning the system's through pkg-config; PYZMQ_BACKEND) and --options for pip.
# PYZMQ_NO_BUNDLE=1: fail rather than fall back to bundling a libzmq. --no-cache-dir: pip
# would otherwise reuse a wheel it built for another checkout, whose RUNPATH names that
# checkout's prefix.
pyzmq_wheel() {
    local py="$1" dir="$2" arg start=$SECONDS
    shift 2
    local env_args=() pip_args=()
    for arg in "$@"; do
        case "$arg" in
            --*) pip_args+=("$arg") ;;
            *) env_args+=("$arg") ;;
        esac
    done
    if ! ls "$dir"/pyzmq-*.whl >/dev/null 2>&1; then
        rm -rf "$dir"
        mkdir -p "$dir"
        env "${env_args[@]}" PYZMQ_NO_BUNDLE=1 "$py" -m pip wheel --quiet --no-deps --no-cache-dir \
            "${pip_args[@]}" "$sdist" -w "$dir"
        echo "built pyzmq $pyzmq_version (${env_args[*]:-system libzmq}) in $((SECONDS - start))s"
    fi
    "$py" -m pip install --quiet --force-reinstall --no-deps "$dir"/pyzmq-*.whl
}

prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

new_venv "$work/venv"
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
pyzmq_wheel "$venv_python" "$wheels" ZMQ_PREFIX="$prefix"
