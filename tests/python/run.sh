#!/usr/bin/env bash
# Builds pyzmq from its sdist against ferromq's libzmq.so and zmq.h (setup.sh) and runs
# pyzmq_checks.py with it. Fails (never skips) when a check fails or cannot run.
# suite.sh runs pyzmq's own test suite with the same build.
set -euo pipefail
. "$(dirname "$0")/setup.sh"

FERROMQ_LIBZMQ=$prefix/lib/libzmq.so.5 "$venv_python" "$root/tests/python/pyzmq_checks.py"
