#!/usr/bin/env bash
# Builds every tool of ffi/perf's scripts, against ferromq and against libzmq (LIBZMQ as in
# build.sh), into one folder that can be copied to a machine with neither cargo nor libzmq nor
# a C compiler: the lent 16-core machine. The libraries travel inside it (ferromq's in lib/,
# a shared libzmq and what it needs beyond glibc in syslib/), found through $ORIGIN rpaths.
#
#   LIBZMQ=system ffi/perf/kit.sh .perfkit            # here
#   PERF_KIT=.perfkit ffi/perf/compare.sh             # there; scale.sh likewise
#
# AGAINST=path/to/libzmq.so (another build of ferromq's library, e.g. from an earlier commit)
# puts that library in the libzmq column instead, for a before/after run of ferromq itself.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="$(realpath -m "$1")"
rm -rf "$work"
mkdir -p "$work"

# shellcheck disable=SC2016 # $ORIGIN is for the dynamic linker, not the shell
ferromq_rpath='$ORIGIN/../lib'
# shellcheck disable=SC2016
libzmq_link=(-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../syslib')
# shellcheck source=ffi/perf/build.sh
. "$root/ffi/perf/build.sh"
tools=(local_thr remote_thr local_lat remote_lat inproc_thr inproc_lat scale)
build_both "${tools[@]}"

# Real files in place of build.sh's links into target/.
rm "$work/lib/libzmq.so" "$work/lib/libzmq.so.5"
cp "$target/release/libzmq.so" "$work/lib/libzmq.so.5"
strip --strip-debug "$work/lib/libzmq.so.5" # the release profile keeps debug info: 14 MB
if [ -n "${AGAINST:-}" ]; then
    mkdir -p "$work/lib-against"
    cp "$AGAINST" "$work/lib-against/libzmq.so.5"
    ln -sf libzmq.so.5 "$work/lib-against/libzmq.so"
    for tool in "${tools[@]}"; do
        # shellcheck disable=SC2016
        cc -O2 -std=c11 -I "$root/ffi/include" "$root/tests/c/perf/$tool.c" -o "$work/libzmq/$tool" \
            -L "$work/lib-against" -lzmq -Wl,-rpath,'$ORIGIN/../lib-against'
    done
    rm "$work/lib-against/libzmq.so"
    libzmq_name="ferromq $AGAINST"
else
    # A shared libzmq and its libraries beyond glibc; DT_RPATH (not RUNPATH) so that the
    # libraries libzmq itself needs are looked for in syslib/ too.
    mkdir -p "$work/syslib"
    ldd "$work/libzmq/local_thr" | awk '/=> \// {print $3}' |
        grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
        while read -r lib; do cp -L "$lib" "$work/syslib/"; done
fi
echo "$libzmq_name" >"$work/libzmq_name"
# The no-ZMQ floors (compare.sh FLOOR=1; their headers say how to run them alone).
mkdir -p "$work/bin"
for raw in raw_tcp raw_lat; do cc -O2 -o "$work/bin/$raw" "$root/ffi/perf/$raw.c"; done
du -sh "$work"
