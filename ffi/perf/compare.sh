#!/usr/bin/env bash
# Builds libzmq's perf tools (tests/c/perf: local_thr/remote_thr, local_lat/remote_lat,
# inproc_thr, inproc_lat) twice, against ferromq's libzmq.so.5 (release) and against real
# libzmq, runs them alternately A B A B, prints medians and ferromq/libzmq ratios, and records
# a CSV and an SVG plot of the ratios (issue 18).
#
#   ffi/perf/compare.sh                                  # everything below, 3 runs each
#   RUNS=5 SIZES="64 1024" TRANSPORTS=tcp ffi/perf/compare.sh
#   OUT=docs/perf/c-abi-2core ffi/perf/compare.sh        # writes OUT.csv and OUT.svg
#
# Environment:
#   RUNS        runs per library and case, interleaved (3); the figure is the median
#   SIZES       message sizes in bytes ("64 1024 65536 262144")
#   TRANSPORTS  tcp, ipc (two processes) and inproc (one process, two threads) ("tcp ipc inproc")
#   PLACEMENTS  "pinned unpinned": pinned runs the receiving process on one CPU and the sending
#               one on another (taskset; inproc: the whole process on both), unpinned leaves
#               placement to the scheduler
#   CPUS        the two CPUs of pinned runs, receiver first (default: 0 and the first CPU that
#               is not CPU 0's hyperthread sibling)
#   PERF_KIT    a folder of tools built by ffi/perf/kit.sh, for a machine without cargo
#   LIBZMQ      libzmq to compare with: a path to a static libzmq.a, "system" (the installed
#               libzmq.so, e.g. Debian's libzmq3-dev 4.3.4), or unset: the libzmq.a the `zmq`
#               crate built (release), else the system one
#   OUT         path prefix for the CSV and SVG (default: none, print only)
#   MACHINE     machine description recorded in the CSV (default: CPU model and core count)
#   THR_SECONDS rough length of one throughput run (0.5); counts are sized from it
#   RUN_LIMIT   seconds one program may run before it is stopped and its run left out (120)
#   FLOOR       1: also run the same transfers with no ZMQ (raw_tcp.c, raw_lat.c: blocking
#               read/write over the same tcp or ipc, placed the same), interleaved with both
#               libraries, for every tcp and ipc latency row and the throughput rows from
#               64 KiB (below that a write per message is no ceiling: both libraries put many
#               messages in one write); the CSV's floor columns stay empty without it
# Figures from a shared machine are noisy; the ratios, from interleaved runs, are what to compare.
#
# The floor (FLOOR=1) is what the kernel allows without a library: ffi/perf/raw_tcp.c and
# raw_lat.c move the same bytes through loopback tcp or a Unix socket with no ZMQ (a ceiling
# for the throughput rows, though not a strict one: a library that writes several bodies at once
# can pass it; a floor under the latency rows). Their headers say how to run them alone.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-3}"
sizes="${SIZES:-64 1024 65536 262144}"
transports="${TRANSPORTS:-tcp ipc inproc}"
placements="${PLACEMENTS:-pinned unpinned}"
out="${OUT:-}"
machine="${MACHINE:-$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')}"
machine="${machine//,/;}" # a CSV field
work="$(mktemp -d "${TMPDIR:-/tmp}/ferromq-perf.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
build_both local_thr remote_thr local_lat remote_lat inproc_thr inproc_lat
read -r cpu_recv cpu_send <<<"$(pin_cpus)"
floor="${FLOOR:-0}"
if [ "$floor" = 1 ]; then
    if [ -z "${PERF_KIT:-}" ]; then
        mkdir -p "$work/bin"
        for raw in raw_tcp raw_lat; do cc -O2 -o "$work/bin/$raw" "$root/ffi/perf/$raw.c"; done
    fi
    for raw in raw_tcp raw_lat; do
        [ -x "$work/bin/$raw" ] || { echo "FLOOR=1 needs $raw (ffi/perf/kit.sh builds it)" >&2 && exit 1; }
    done
fi

# pin PLACEMENT ROLE (receiver|sender|both) COMMAND...
pin() {
    local placement="$1" role="$2"
    shift 2
    if [ "$placement" = unpinned ] || ! command -v taskset >/dev/null; then
        "$@"
    elif [ "$role" = receiver ]; then
        taskset -c "$cpu_recv" "$@"
    elif [ "$role" = sender ]; then
        taskset -c "$cpu_send" "$@"
    else
        taskset -c "$cpu_recv,$cpu_send" "$@"
    fi
}

endpoint() { # endpoint TRANSPORT
    case "$1" in
    # Below Linux's ephemeral range (32768-60999): a port in it may be held by some outgoing
    # connection, and the local side's bind then fails (EADDRINUSE) while the remote side
    # waits for it forever.
    tcp) echo "tcp://127.0.0.1:$((20000 + RANDOM % 12000))" ;;
    ipc) echo "ipc://$work/perf-$RANDOM.ipc" ;;
    esac
}

# run LIB PLACEMENT TRANSPORT KIND SIZE COUNT -> prints msg/s (thr) or us (lat); LIB is
# ferromq, libzmq or raw (no ZMQ: the floor)
run() {
    local lib="$1" placement="$2" transport="$3" kind="$4" size="$5" count="$6"
    local receiver=("$work/$lib/local_$kind") sender=("$work/$lib/remote_$kind")
    if [ "$lib" = raw ] && [ "$kind" = thr ]; then
        receiver=("$work/bin/raw_tcp" recv) sender=("$work/bin/raw_tcp" send)
    elif [ "$lib" = raw ]; then
        receiver=("$work/bin/raw_lat" local) sender=("$work/bin/raw_lat" remote)
    fi
    local log="$work/out.log"
    # Each program under RUN_LIMIT seconds: a run that never ends (seen with Debian's libzmq
    # 4.3.4, unpinned ipc 64 B: its local_thr waiting forever after remote_thr had left) is
    # reported on stderr and left out of the median instead of stalling the whole table.
    local limit="${RUN_LIMIT:-120}" status=0
    : >"$log"
    if [ "$transport" = inproc ]; then
        pin "$placement" both timeout "$limit" "$work/$lib/inproc_$kind" "$size" "$count" >"$log" || status=$?
    else
        local ep
        ep="$(endpoint "$transport")"
        pin "$placement" receiver timeout "$limit" "${receiver[@]}" "$ep" "$size" "$count" >"$log" &
        local server=$!
        sleep 0.2
        pin "$placement" sender timeout "$limit" "${sender[@]}" "$ep" "$size" "$count" >>"$log" || status=$?
        wait "$server" || status=$?
    fi
    if [ "$status" != 0 ]; then
        echo "$lib $placement $transport/$kind/$size: a program exited $status (124: still running after ${limit} s); run left out" >&2
        return 0
    fi
    if [ "$kind" = thr ]; then
        awk '/msg\/s/ {print $3}' "$log"
    else
        awk '/average latency/ {print $3}' "$log"
    fi
}

# Message counts for about THR_SECONDS per throughput run on a small machine.
thr_count() {
    local size="$1" bytes_per_s=$((2 * 1024 * 1024 * 1024))
    awk -v s="$size" -v b="$bytes_per_s" -v t="${THR_SECONDS:-0.5}" \
        'BEGIN {n = b * t / (s < 1024 ? 1024 : s); if (n > 2000000) n = 2000000; if (n < 2000) n = 2000; printf "%d", n}'
}
lat_count() { if [ "$1" -le 1024 ]; then echo 5000; else echo 1000; fi; }

csv="$work/result.csv"
echo "machine,placement,transport,kind,size,count,unit,ferromq_median,libzmq_median,ratio,ferromq_runs,libzmq_runs,floor_median,floor_runs" >"$csv"
echo "machine: $machine; libzmq: $libzmq_name; $runs runs each, interleaved ferromq/libzmq"
echo "pinned: receiver on CPU $cpu_recv, sender on CPU $cpu_send"
echo "ratio: throughput ferromq/libzmq, latency libzmq/ferromq (above 1: ferromq better)"
printf '%-10s %-28s %14s %14s %8s\n' placement test ferromq libzmq ratio
for placement in $placements; do
    for transport in $transports; do
        for size in $sizes; do
            for kind in thr lat; do
                if [ "$kind" = thr ]; then count="$(thr_count "$size")"; else count="$(lat_count "$size")"; fi
                ours="" theirs="" raw=""
                with_floor=0
                if [ "$floor" = 1 ] && [ "$transport" != inproc ] && { [ "$kind" = lat ] || [ "$size" -ge 65536 ]; }; then
                    with_floor=1
                fi
                for _ in $(seq "$runs"); do
                    ours="$ours $(run ferromq "$placement" "$transport" "$kind" "$size" "$count")"
                    theirs="$theirs $(run libzmq "$placement" "$transport" "$kind" "$size" "$count")"
                    if [ "$with_floor" = 1 ]; then
                        raw="$raw $(run raw "$placement" "$transport" "$kind" "$size" "$count")"
                    fi
                done
                a="$(echo "$ours" | median)"
                b="$(echo "$theirs" | median)"
                c="$(echo "$raw" | median)"
                if [ "$kind" = thr ]; then
                    unit="msg/s"
                    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a"}')"
                else
                    unit="us"
                    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", b / a; else printf "n/a"}')"
                fi
                printf '%-10s %-28s %14s %14s %7sx   (%s; runs:%s /%s)%s\n' "$placement" \
                    "$transport/$kind/$size" "$a" "$b" "$ratio" "$unit" "$ours" "$theirs" \
                    "${c:+; no ZMQ: $c (runs:$raw)}"
                echo "$machine,$placement,$transport,$kind,$size,$count,$unit,$a,$b,$ratio,$(echo $ours),$(echo $theirs),$c,$(echo $raw)" >>"$csv"
            done
        done
    done
done

[ -n "$out" ] || exit 0
mkdir -p "$(dirname "$out")"
cp "$csv" "$out.csv"
# The plot: one bar per case, ratio on a log scale, a line at 1 (parity), pinned and unpinned
# side by side. Plain SVG from awk, so the script needs nothing beyond a C compiler.
awk -F, -v title="ferromq C ABI / libzmq, libzmq's perf tools ($machine)" '
NR == 1 { next }
{
    key = $3 "/" $4 "/" $5
    if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
    ratio[$2, key] = $10
    if ($2 == "pinned") has_pinned = 1; else has_unpinned = 1
}
END {
    w = 60 + n * 34; h = 420; top = 40; bottom = 330
    lo = log(0.1); hi = log(10)
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", w, h
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"10\" y=\"20\" font-size=\"14\">%s (above 1: ferromq better)</text>\n", title
    split("0.1 0.2 0.5 1 2 5 10", ticks, " ")
    for (t = 1; t <= 7; t++) {
        y = bottom - (log(ticks[t]) - lo) / (hi - lo) * (bottom - top)
        printf "<line x1=\"50\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", w - 10, y, y, ticks[t] == 1 ? "black" : "#ddd"
        printf "<text x=\"45\" y=\"%.1f\" text-anchor=\"end\">%sx</text>\n", y + 4, ticks[t]
    }
    for (i = 1; i <= n; i++) {
        x = 60 + (i - 1) * 34
        split("pinned unpinned", places, " ")
        for (p = 1; p <= 2; p++) {
            r = ratio[places[p], keys[i]]
            if (r == "" || r <= 0) continue
            v = log(r); if (v < lo) v = lo; if (v > hi) v = hi
            y1 = bottom - (0 - lo) / (hi - lo) * (bottom - top)
            y2 = bottom - (v - lo) / (hi - lo) * (bottom - top)
            ya = y1 < y2 ? y1 : y2; hb = y1 < y2 ? y2 - y1 : y1 - y2
            printf "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"%s\"><title>%s %s: %sx</title></rect>\n", x + (p - 1) * 15, ya, hb, p == 1 ? "#c83c14" : "#1e5ac8", places[p], keys[i], r
        }
        printf "<text transform=\"translate(%d,%d) rotate(60)\">%s</text>\n", x + 8, bottom + 8, keys[i]
    }
    printf "<rect x=\"%d\" y=\"30\" width=\"10\" height=\"10\" fill=\"#c83c14\"/><text x=\"%d\" y=\"39\">pinned (taskset, one core each)</text>\n", w - 300, w - 285
    printf "<rect x=\"%d\" y=\"46\" width=\"10\" height=\"10\" fill=\"#1e5ac8\"/><text x=\"%d\" y=\"55\">unpinned</text>\n", w - 300, w - 285
    printf "</svg>\n"
}' "$csv" >"$out.svg"
echo "wrote $out.csv and $out.svg"
