#!/usr/bin/env bash
# CURVE throughput, ferromq against libzmq with libsodium (issue 16): builds
# tests/c/perf/curve_thr.c against ferromq's libzmq.so.5 (release) and against the system
# libzmq (Debian's libzmq3-dev links libsodium; the `zmq` crate's bundled libzmq has no CURVE),
# runs them alternately (ferromq, libzmq, ferromq, ...) for PAIR and DEALER->ROUTER over tcp,
# and prints the median msg/s of each with the ratio ferromq/libzmq (above 1: ferromq faster).
#
#   ffi/perf/curve.sh                        # 5 runs each, 64 B, 1 KiB and 64 KiB
#   RUNS=3 QUICK=1 ffi/perf/curve.sh         # quick mode: a quarter of the messages
#
# Environment:
#   RUNS     runs per library and case, interleaved (5); the figure is the median
#   SIZES    message sizes in bytes ("64 1024 65536")
#   QUICK    1: a quarter of the message counts (each run then takes well under a second)
#   OUT      path prefix for a CSV (pattern,transport,size,library,msgs_per_s)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-5}"
sizes="${SIZES:-64 1024 65536}"
quick="${QUICK:-0}"
out="${OUT:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-curve.XXXXXX")"
trap 'rm -rf "$work"' EXIT

LIBZMQ=system
# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
build_both curve_thr

# Messages per run: about 25 MB (64 B: 400,000 messages), at least 2,000.
count_for() {
    local n=$((25000000 / $1))
    [ "$n" -ge 2000 ] || n=2000
    [ "$quick" = 1 ] && n=$((n / 4))
    echo "$n"
}

echo "machine: $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "libzmq: $libzmq_name; $runs runs each, interleaved; msg/s medians"
raw="$work/raw.csv"
: >"$raw"
for pattern in pair dealer_router; do
    for size in $sizes; do
        n="$(count_for "$size")"
        for _ in $(seq "$runs"); do
            for lib in ferromq libzmq; do
                "$work/$lib/curve_thr" "$pattern" "$size" "$n" | sed "s/\$/,$lib/" >>"$raw"
            done
        done
    done
done

csv="$work/curve.csv"
echo "pattern,transport,size,library,msgs_per_s" >"$csv"
printf '%-14s %-5s %7s %12s %12s %8s %s\n' pattern tr size ferromq libzmq ratio "spread (f / l)"
# raw lines: pattern,tcp,size,msgs_per_s,mb_per_s,library
for key in $(cut -d, -f1-3 "$raw" | awk '!seen[$0]++'); do
    fs="$(grep "^$key,.*,ferromq\$" "$raw" | cut -d, -f4)"
    ls_="$(grep "^$key,.*,libzmq\$" "$raw" | cut -d, -f4)"
    a="$(echo "$fs" | median)"
    b="$(echo "$ls_" | median)"
    spread() { sort -g | awk -v m="$1" '{a[NR]=$1} END {printf "%.0f%%", (a[NR]-a[1])/m*100}'; }
    echo "$key,ferromq,$a" >>"$csv"
    echo "$key,libzmq,$b" >>"$csv"
    IFS=, read -r p t s <<<"$key"
    printf '%-14s %-5s %7s %12s %12s %7sx %s / %s\n' "$p" "$t" "$s" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')" \
        "$(echo "$fs" | spread "$a")" "$(echo "$ls_" | spread "$b")"
done
if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    cp "$csv" "$out.csv"
    echo "wrote $out.csv"
fi
