#!/usr/bin/env bash
# Locked instructions per message through the C API (issue 15, issue 18): runs cases of
# tests/c/perf/scale.c (inproc, one peer) under callgrind, built against ferromq and against
# real libzmq, and counts how often each `lock`-prefixed (or memory `xchg`) instruction ran
# inside the timed batch, per message, by function (ffi/perf/lock_count.py). Each is a full
# barrier costing ~20 cycles on a 16-core Xeon; the count does not depend on the machine or its
# load, so it is the figure to compare where timings are noisy.
#
#   ffi/perf/locks.sh                      # every case, both libraries
#   CASES=pull LIBS=ferromq ffi/perf/locks.sh
#
# Environment:
#   CASES   pull (PULL fan-in), pull-poll (the same, zmq_poll before each zmq_recv),
#           pull-events (ZMQ_EVENTS before each zmq_recv), router-in (ROUTER fan-in),
#           router-send ("pull pull-poll pull-events router-in router-send")
#   LIBS    "ferromq libzmq"
#   LIBZMQ  which libzmq (see ffi/perf/build.sh; "system" gives function names only where
#           the library has symbols)
#   BUDGET  milliseconds of measuring per case under valgrind (200)
#   SYSCALLS  1: a second run per case counts system calls per message too (lock_count.py
#           --syscalls)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
cases="${CASES:-pull pull-poll pull-events router-in router-send}"
libs="${LIBS:-ferromq libzmq}"
budget="${BUDGET:-200}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-locks.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
build_both scale

for case in $cases; do
    case "$case" in
    pull) group=pull fn=pull_batch ;;
    pull-poll) group=poll fn=pull_poll_batch ;;
    pull-events) group=poll fn=pull_events_batch ;;
    router-in) group=router fn=router_in_batch ;;
    router-send) group=router fn=router_send_batch ;;
    *) echo "locks: unknown case $case" >&2 && exit 1 ;;
    esac
    for lib in $libs; do
        echo "== $case, $lib"
        valgrind --tool=callgrind --dump-instr=yes --toggle-collect="$fn" \
            --callgrind-out-file="$work/$case-$lib.cg" "$work/$lib/scale" inproc 1 "$budget" "$group" \
            >/dev/null 2>"$work/$case-$lib.log" ||
            { cat "$work/$case-$lib.log" >&2 && exit 1; }
        # Every batch of these cases is 1,000 messages (scale.c's batch_size (1)).
        python3 "$root/ffi/perf/lock_count.py" "$work/$case-$lib.cg" "$fn" 1000
        if [ "${SYSCALLS:-0}" = 1 ]; then
            valgrind --tool=callgrind --collect-systime=yes \
                --callgrind-out-file="$work/$case-$lib.sys.cg" "$work/$lib/scale" inproc 1 "$budget" "$group" \
                >/dev/null 2>"$work/$case-$lib.log" ||
                { cat "$work/$case-$lib.log" >&2 && exit 1; }
            python3 "$root/ffi/perf/lock_count.py" --syscalls "$work/$case-$lib.sys.cg" "$fn" 1000
        fi
    done
done
