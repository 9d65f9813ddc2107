# Sourced by the scripts in ffi/perf: builds C programs from tests/c/perf twice, against
# ferromq's libzmq.so.5 (release) and against real libzmq, into $work/ferromq and $work/libzmq.
#
#   root=... target=... work=... . ffi/perf/build.sh; build_both TOOL...
#
# LIBZMQ picks the libzmq: a path to a static libzmq.a, "system" (the installed libzmq.so,
# e.g. Debian's libzmq3-dev 4.3.4), or unset: the libzmq.a the `zmq` crate built (release),
# else the system one. Sets libzmq_name for the reports.
#
# PERF_KIT=DIR skips the build and takes the tools from DIR, made by ffi/perf/kit.sh on another
# machine: the lent 16-core machine has no cargo, C compiler or libzmq of its own.

# median: the median of the numbers on stdin (space or newline separated).
# Empty when every run was left out (compare.sh's RUN_LIMIT).
median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The two CPUs that pinned runs use (receiver first): CPUS, else 0 and the first CPU that is
# not a hyperthread sibling of CPU 0, so that "one core each" holds on an SMT machine too.
pin_cpus() {
    if [ -n "${CPUS:-}" ]; then
        echo "$CPUS"
        return
    fi
    local siblings=/sys/devices/system/cpu/cpu0/topology/thread_siblings_list cpu
    local zero
    zero="$(cat "$siblings" 2>/dev/null || echo 0)"
    for cpu in $(seq 1 $(($(nproc) - 1))); do
        # The list is ranges and single CPUs ("0-1", "0,16").
        if ! echo "$zero" | tr ',' '\n' |
            awk -F- -v c="$cpu" '{hi = NF > 1 ? $2 : $1} c >= $1 && c <= hi {found = 1} END {exit !found}'; then
            echo "0 $cpu"
            return
        fi
    done
    echo "0 1"
}

if [ -n "${PERF_KIT:-}" ]; then
    cp -r "$PERF_KIT"/. "$work"/
    libzmq_name="$(cat "$work/libzmq_name")"
    build_both() {
        local tool
        for tool in "$@"; do
            [ -x "$work/ferromq/$tool" ] && [ -x "$work/libzmq/$tool" ] ||
                { echo "perf kit $PERF_KIT lacks $tool" >&2 && return 1; }
        done
    }
    return 0
fi

echo "building ferromq-ffi (release)..." >&2
(cd "$root" && cargo build --quiet --release -p ferromq-ffi --lib)

libzmq="${LIBZMQ:-}"
if [ -z "$libzmq" ]; then
    libzmq="$(ls -t "$target"/release/build/zmq-sys-*/out/lib/libzmq.a 2>/dev/null | head -1 || true)"
    [ -n "$libzmq" ] || libzmq=system
fi
if [ "$libzmq" = system ]; then
    libzmq_cflags=()
    libzmq_libs=(-lzmq)
    libzmq_name="system libzmq $(pkg-config --modversion libzmq 2>/dev/null || echo '?')"
else
    # libzmq's own zmq.h, from the zeromq-src crate that built the library.
    libzmq_inc="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/zeromq-src-*/vendor/include | head -1)"
    libzmq_cflags=(-I "$libzmq_inc")
    libzmq_libs=("$libzmq" -lstdc++ -lpthread -lm)
    libzmq_name="libzmq.a $libzmq"
fi

mkdir -p "$work/lib" "$work/ferromq" "$work/libzmq"
ln -sf "$target/release/libzmq.so" "$work/lib/libzmq.so"
ln -sf "$target/release/libzmq.so" "$work/lib/libzmq.so.5"

# Where the built tools find their libraries: here, by absolute path; kit.sh sets both to
# $ORIGIN-relative paths so that the folder can move to another machine.
ferromq_rpath="${ferromq_rpath:-$work/lib}"
libzmq_link=("${libzmq_link[@]+"${libzmq_link[@]}"}")

# build_both TOOL...: tests/c/perf/TOOL.c into $work/ferromq/TOOL and $work/libzmq/TOOL.
build_both() {
    local tool
    for tool in "$@"; do
        cc -O2 -std=c11 -I "$root/ffi/include" "$root/tests/c/perf/$tool.c" -o "$work/ferromq/$tool" \
            -L "$work/lib" -lzmq -Wl,-rpath,"$ferromq_rpath"
        cc -O2 -std=c11 ${libzmq_cflags[@]+"${libzmq_cflags[@]}"} "$root/tests/c/perf/$tool.c" \
            -o "$work/libzmq/$tool" "${libzmq_libs[@]}" -lpthread \
            ${libzmq_link[@]+"${libzmq_link[@]}"}
    done
}
