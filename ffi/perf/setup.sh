#!/usr/bin/env bash
# What a connection costs to make through the C API: builds tests/c/perf/setup.c against
# ferromq and against real libzmq, runs both alternately (ferromq, libzmq, ferromq, ...) for
# each transport and pattern, and prints the medians of the runs' median ns per cycle (socket,
# connect and handshake, one round trip, close) with the ratio libzmq/ferromq (above 1:
# ferromq cheaper).
#
#   ffi/perf/setup.sh                       # 5 runs each of 2,000 cycles
#   RUNS=3 CYCLES=500 LIBZMQ=system ffi/perf/setup.sh
#
# Environment:
#   RUNS       runs per library and case, interleaved (5)
#   CYCLES     cycles per run (2000)
#   PATTERNS   "dealer req" (DEALER to ROUTER, REQ to REP)
#   TRANSPORTS "ipc tcp"
#   LIBZMQ     which libzmq (see ffi/perf/build.sh)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-5}"
cycles="${CYCLES:-2000}"
patterns="${PATTERNS:-dealer req}"
transports="${TRANSPORTS:-ipc tcp}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-setup.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
build_both setup

echo "machine: $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "libzmq: $libzmq_name; $runs runs of $cycles cycles each, interleaved; ns per cycle"
printf '%-7s %-9s %10s %10s %7s\n' pattern transport ferromq libzmq ratio
for pattern in $patterns; do
    for transport in $transports; do
        a="" b=""
        for _ in $(seq "$runs"); do
            a="$a $("$work/ferromq/setup" "$transport" "$cycles" "$pattern" | cut -d, -f3)"
            b="$b $("$work/libzmq/setup" "$transport" "$cycles" "$pattern" | cut -d, -f3)"
        done
        a="$(echo "$a" | median)"
        b="$(echo "$b" | median)"
        printf '%-7s %-9s %10s %10s %6sx\n' "$pattern" "$transport" "$a" "$b" \
            "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')"
    done
done
