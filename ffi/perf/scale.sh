#!/usr/bin/env bash
# Cost per message against the number of peers through the C API (issue 15): builds
# tests/c/perf/scale.c against ferromq and against real libzmq, runs both alternately
# (ferromq, libzmq, ferromq, ...) for each transport and peer count, and prints the median
# ns/msg per case with the ratio libzmq/ferromq (above 1: ferromq cheaper). The Rust API's view
# of the same cases is benches/benches/scale.rs.
#
#   ffi/perf/scale.sh                                      # 3 runs each, the peer counts below
#   RUNS=5 INPROC="1 1000" TCP="" ffi/perf/scale.sh
#   OUT=docs/perf/scale-c ffi/perf/scale.sh                # also writes OUT.csv
#
# Environment:
#   RUNS     runs per library and point, interleaved (3); the figure is the median
#   INPROC   peer counts on inproc ("1 10 100 1000 10000")
#   TCP      peer counts on tcp ("1 100 1000"; about 3 descriptors per peer for libzmq)
#   BUDGET   milliseconds of measuring per case and run (300)
#   LIBZMQ   which libzmq (see ffi/perf/build.sh)
#   OUT      path prefix for the CSV (case,transport,peers,library,ns_per_msg, as the Rust
#            bench's docs/perf/scale.csv, with library ferromq-c / libzmq-c)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-3}"
inproc="${INPROC-1 10 100 1000 10000}"
tcp="${TCP-1 100 1000}"
budget="${BUDGET:-300}"
out="${OUT:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-scale.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
build_both scale
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "machine: $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "libzmq: $libzmq_name; $runs runs each, interleaved; ns/msg medians"
raw="$work/raw.csv"
: >"$raw"
for transport in inproc tcp; do
    if [ "$transport" = inproc ]; then counts="$inproc"; else counts="$tcp"; fi
    for n in $counts; do
        for _ in $(seq "$runs"); do
            for lib in ferromq libzmq; do
                # libzmq needs more descriptors per socket: at 10,000 inproc peers it may run
                # out (EMFILE) where ferromq does not; that point is then left blank.
                "$work/$lib/scale" "$transport" "$n" "$budget" | sed "s/\$/,$lib-c/" >>"$raw" ||
                    echo "scale: $lib failed at $transport N=$n" >&2
            done
        done
    done
done

csv="$work/scale.csv"
echo "case,transport,peers,library,ns_per_msg" >"$csv"
printf '%-14s %-7s %6s %12s %12s %8s\n' case transport peers ferromq libzmq ratio
# raw lines: case,transport,peers,ns,library; one median per (case, transport, peers, library).
for key in $(cut -d, -f1-3 "$raw" | awk '!seen[$0]++'); do
    a="$(grep "^$key,.*,ferromq-c\$" "$raw" | cut -d, -f4 | median || true)"
    b="$(grep "^$key,.*,libzmq-c\$" "$raw" | cut -d, -f4 | median || true)"
    [ -z "$a" ] || echo "$key,ferromq-c,$a" >>"$csv"
    [ -z "$b" ] || echo "$key,libzmq-c,$b" >>"$csv"
    IFS=, read -r c t n <<<"$key"
    printf '%-14s %-7s %6s %12s %12s %7sx\n' "$c" "$t" "$n" "${a:--}" "${b:--}" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", b / a; else printf "-"}')"
done
if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    cp "$csv" "$out.csv"
    echo "wrote $out.csv"
fi
