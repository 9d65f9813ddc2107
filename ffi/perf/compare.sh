#!/usr/bin/env bash
# Builds the C perf tools (tests/c/perf: local_thr, remote_thr, local_lat, remote_lat) twice,
# against ferromq's libzmq.so.5 (release) and against real libzmq 4.3.4 (the static libzmq.a
# the `zmq` crate's zmq-sys builds, release), runs them alternately A B A B over tcp and prints
# medians and ferromq/libzmq ratios.
#
#   ffi/perf/compare.sh                       # 64 B and 64 KiB, 3 runs each, split placement
#   RUNS=5 SIZES="64 1024" ffi/perf/compare.sh
#
# Environment: CARGO_TARGET_DIR (default target/), RUNS (3), SIZES ("64 65536"),
# THR_COUNT_SMALL / THR_COUNT_LARGE (500000 / 20000 messages), LAT_COUNT_SMALL /
# LAT_COUNT_LARGE (10000 / 2000 round trips), PLACEMENT: split (receiver on CPU 0, sender on
# CPU 1, with taskset), same (both on CPU 0) or none (unpinned); LIBZMQ_A to use another
# static libzmq. Run it on an otherwise idle machine: figures from a shared one are noisy;
# the ratios, taken from interleaved runs, are what to compare.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-3}"
sizes="${SIZES:-64 65536}"
placement="${PLACEMENT:-split}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-perf.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "building ferromq-ffi (release) and libzmq (release, via the zmq crate)..." >&2
(cd "$root" && cargo build --quiet --release -p ferromq-ffi --lib)
libzmq_a="${LIBZMQ_A:-}"
if [ -z "$libzmq_a" ]; then
    libzmq_a="$(ls -t "$target"/release/build/zmq-sys-*/out/lib/libzmq.a 2>/dev/null | head -1 || true)"
    if [ -z "$libzmq_a" ]; then
        (cd "$root" && cargo build --quiet --release -p ferromq-tests --lib)
        libzmq_a="$(ls -t "$target"/release/build/zmq-sys-*/out/lib/libzmq.a | head -1)"
    fi
fi
# libzmq's own zmq.h, from the zeromq-src crate that built the library.
libzmq_inc="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/zeromq-src-*/vendor/include | head -1)"

mkdir -p "$work/lib" "$work/ferromq" "$work/libzmq"
ln -sf "$target/release/libzmq.so" "$work/lib/libzmq.so"
ln -sf "$target/release/libzmq.so" "$work/lib/libzmq.so.5"
for tool in local_thr remote_thr local_lat remote_lat; do
    cc -O2 -std=c11 -I "$root/ffi/include" "$root/tests/c/perf/$tool.c" -o "$work/ferromq/$tool" \
        -L "$work/lib" -lzmq -Wl,-rpath,"$work/lib"
    cc -O2 -std=c11 -I "$libzmq_inc" "$root/tests/c/perf/$tool.c" -o "$work/libzmq/$tool" \
        "$libzmq_a" -lstdc++ -lpthread -lm
done

pin() { # pin ROLE (receiver|sender) COMMAND...
    local role="$1"
    shift
    if [ "$placement" = none ] || ! command -v taskset >/dev/null; then
        "$@"
    elif [ "$placement" = same ] || [ "$role" = receiver ]; then
        taskset -c 0 "$@"
    else
        taskset -c 1 "$@"
    fi
}

port() { echo $((20000 + RANDOM % 20000)); }

# run_pair LIB KIND SIZE COUNT -> prints msg/s (thr) or us (lat)
run_pair() {
    local lib="$1" kind="$2" size="$3" count="$4" p
    p="$(port)"
    local out="$work/out.$$"
    pin receiver "$work/$lib/local_$kind" "tcp://127.0.0.1:$p" "$size" "$count" >"$out" &
    local server=$!
    sleep 0.2
    pin sender "$work/$lib/remote_$kind" "tcp://127.0.0.1:$p" "$size" "$count" >>"$out"
    wait "$server"
    if [ "$kind" = thr ]; then
        grep 'msg/s' "$out" | awk '{print $3}'
    else
        grep 'average latency' "$out" | awk '{print $3}'
    fi
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "placement: $placement; $runs runs each, interleaved ferromq/libzmq; libzmq: $libzmq_a"
printf '%-16s %14s %14s %8s\n' "test" "ferromq" "libzmq" "ratio"
for size in $sizes; do
    if [ "$size" -le 1024 ]; then
        thr_count="${THR_COUNT_SMALL:-500000}"
        lat_count="${LAT_COUNT_SMALL:-10000}"
    else
        thr_count="${THR_COUNT_LARGE:-20000}"
        lat_count="${LAT_COUNT_LARGE:-2000}"
    fi
    for kind in thr lat; do
        count="$thr_count"
        [ "$kind" = lat ] && count="$lat_count"
        : >"$work/ferromq.$kind" && : >"$work/libzmq.$kind"
        for _ in $(seq "$runs"); do
            run_pair ferromq "$kind" "$size" "$count" >>"$work/ferromq.$kind"
            run_pair libzmq "$kind" "$size" "$count" >>"$work/libzmq.$kind"
        done
        ours="$(median <"$work/ferromq.$kind")"
        theirs="$(median <"$work/libzmq.$kind")"
        if [ "$kind" = thr ]; then
            unit="msg/s"
            ratio="$(awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.2f", a / b}')"
        else
            unit="us"
            # Lower latency is better: the ratio is libzmq/ferromq so > 1 means ferromq wins.
            ratio="$(awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.2f", b / a}')"
        fi
        printf '%-16s %14s %14s %8s   (%s; runs: ferromq %s / libzmq %s)\n' \
            "tcp/$kind/$size" "$ours" "$theirs" "${ratio}x" "$unit" \
            "$(tr '\n' ' ' <"$work/ferromq.$kind")" "$(tr '\n' ' ' <"$work/libzmq.$kind")"
    done
done
