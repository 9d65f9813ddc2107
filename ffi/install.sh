#!/bin/sh
# Builds ferromq-ffi and installs it as a libzmq drop-in:
#   PREFIX/include/zmq.h
#   PREFIX/lib/libzmq.so.5.2.5, libzmq.so.5 -> libzmq.so.5.2.5, libzmq.so -> libzmq.so.5, libzmq.a
#   PREFIX/lib/pkgconfig/libzmq.pc
# so that `cc prog.c $(pkg-config --cflags --libs libzmq)` links ferromq.
#
# Usage: ffi/install.sh PREFIX [PROFILE]     (PROFILE: release (default), dev, or a custom one)
# Honours CARGO (the cargo binary) and CARGO_TARGET_DIR like cargo itself.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 PREFIX [PROFILE]" >&2
    exit 2
fi
prefix=$1
profile=${2:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$root/target}
case $profile in
    dev) out_dir=$target_dir/debug ;;
    *) out_dir=$target_dir/$profile ;;
esac

(cd "$root" && "$cargo" build --quiet -p ferromq-ffi --lib --profile "$profile" --target-dir "$target_dir")

# The ABI version: libzmq 4.3.x ships libzmq.so.5.2.x; the numbers come from the generated header.
header=$root/ffi/include/zmq.h
minor=$(sed -n 's/^#define ZMQ_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
patch=$(sed -n 's/^#define ZMQ_VERSION_PATCH \([0-9]*\)$/\1/p' "$header")
major=$(sed -n 's/^#define ZMQ_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
version=$major.$minor.$patch
real_name=libzmq.so.5.2.$patch

# Native libraries a Rust staticlib needs on Linux (rustc --print native-static-libs).
libs_private="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
cp "$header" "$prefix/include/zmq.h"
cp "$out_dir/libzmq.so" "$prefix/lib/$real_name"
ln -sf "$real_name" "$prefix/lib/libzmq.so.5"
ln -sf libzmq.so.5 "$prefix/lib/libzmq.so"
cp "$out_dir/libzmq.a" "$prefix/lib/libzmq.a"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" -e "s|@LIBS_PRIVATE@|$libs_private|" \
    "$root/ffi/libzmq.pc.in" > "$prefix/lib/pkgconfig/libzmq.pc"
echo "installed ferromq $version (libzmq ABI) into $prefix"
