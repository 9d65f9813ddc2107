#!/usr/bin/env bash
# Runs Ruby's ffi-rzmq 2.0.7 (over ffi-rzmq-core 1.0.7: Ruby FFI opens libzmq.so.5 at run time,
# attaches every function by name and asks zmq_version which API to expose) against ferromq's
# libzmq.so and, as the control, against the system's libzmq (Debian's libzmq3-dev, 4.3.4),
# through the example programs ffi-rzmq ships. An example that passes on the control and fails
# on ferromq is a drop-in bug.
#
#   tests/ruby/run.sh [options] [test...]
#     --control     run the control too and print the differences (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test outside known_failures.txt fails,
#                   or a test listed there passes or does not run
#     --timeout S   seconds each example may run (default 60)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#     --work DIR    download and log directory (default: target/ruby)
#
# Why the examples and not ffi-rzmq's rspec suite: the suite (spec/) is only in the source
# tarballs, and the package mirror this project reaches answers 404 for ruby-ffi-rzmq's and
# ruby-ffi-rzmq-core's orig tarballs (every Debian release has the same 2.0.7/1.0.7 ones); it
# does serve Debian's binary packages, which hold the library and upstream's examples/. Both
# .debs are checked against the sha256 in Debian's bookworm Packages index and unpacked under
# <work> (never installed), and the examples run from there with ruby -I lib. examples.txt says
# which examples run, with which arguments, and the lines each one's output must hold; skip.txt
# names the examples not run, each with why (run.sh fails when an example is in neither), and
# known_failures.txt the ferromq failures. Debian's ffi-rzmq-core opens 'libzmq.so.5' by name:
# the ferromq side sets LD_LIBRARY_PATH to ffi/install.sh's prefix (dev profile), the control
# leaves it empty, and an LD_DEBUG=libs run proves each side's choice once. Each example runs
# alone in its own process; a ferromq failure outside known_failures.txt runs up to twice more before
# it counts (tests/suite_lib.sh's loop). Results in <work>/suite/run<N>/: <side>/<test>.log and
# results.csv (test, ferromq, control).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

. "$here/../suite_lib.sh"
suite_start ruby 29 "$@"

command -v ruby >/dev/null 2>&1 && ruby -e 'require "ffi"' 2>/dev/null \
    || { echo "ffi-rzmq needs ruby and its ffi gem (Debian: ruby, ruby-ffi)" >&2; exit 2; }

# The two binary packages, checked against Debian's hashes, unpacked into one tree.
debs=(
    "r/ruby-ffi-rzmq-core/ruby-ffi-rzmq-core_1.0.7-1_all.deb 415ed40aaa8b195797d1f71847643284ef5901a33f6f883936abcc7a61b15ce7"
    "r/ruby-ffi-rzmq/ruby-ffi-rzmq_2.0.7-1_all.deb b12dfaa982c0c0790d6e4b3d622deac2521fdd9de397321c55844ad91d343189"
)
tree=$work/ffi-rzmq
if [ ! -f "$tree/.extracted" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    for entry in "${debs[@]}"; do
        read -r path sha256 <<< "$entry"
        deb=$work/$(basename "$path")
        suite_fetch "http://deb.debian.org/debian/pool/main/$path" "$deb" "$sha256"
        dpkg-deb -x "$deb" "$tree/root"
    done
    # The layout the examples expect: ../lib/ffi-rzmq from examples/.
    ln -s root/usr/lib/ruby/vendor_ruby "$tree/lib"
    cp -r "$tree/root/usr/share/doc/ruby-ffi-rzmq/examples" "$tree/examples"
    touch "$tree/.extracted"
fi

# ferromq as a libzmq drop-in (the library `cargo test` already built; install.sh copies it).
prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

side_lib() { if [ "$1" = ferromq ]; then echo "$prefix/lib"; fi; }
for side in "${sides[@]}"; do
    (cd "$tree/examples" && LD_LIBRARY_PATH=$(side_lib "$side") LD_DEBUG=libs ruby -I ../lib \
        -e 'require "ffi-rzmq"; puts "ffi-rzmq sees libzmq #{LibZMQ.version.values_at(:major, :minor, :patch).join(".")}"') \
        > "$work/$side.ld_debug" 2>&1
    grep -h '^ffi-rzmq sees' "$work/$side.ld_debug" | sed "s/^/$side: /"
    suite_check_loaded "$side" "$work/$side.ld_debug"
done

# The tests: examples.txt's, less skip.txt's (the skipped example files are names too, so that
# suite_select knows them). Every example ffi-rzmq ships is in one list or the other.
suite_read_lists "$here" skip.txt known_failures.txt
declare -A example marks
all=()
while IFS=';' read -r name cmd lines; do
    name=$(echo "$name" | xargs)
    [ -n "$name" ] || continue
    all+=("$name")
    example[$name]=$(echo "$cmd" | xargs)
    marks[$name]=$(echo "$lines" | sed 's/^ *//; s/ *$//')
done < <(grep -v '^[[:space:]]*#' "$here/examples.txt")
for name in "${!skip[@]}"; do all+=("$name"); done
for file in "$tree"/examples/*.rb; do
    file=$(basename "$file" .rb)
    if [ -z "${skip[$file]:-}" ] && ! printf '%s\n' "${example[@]}" | grep -q "^$file\.rb\b"; then
        echo "ffi-rzmq's example $file.rb is in neither examples.txt nor skip.txt" >&2
        exit 1
    fi
done
suite_select

# One example alone: prints passed (exit 0 and every line examples.txt names), failed or
# timeout. One at a time: the examples share tcp://127.0.0.1:5555.
run_one() {
    local side="$1" name="$2" log="$3" rc=0 line
    if [ -z "${example[$name]:-}" ]; then
        echo "$name: not in examples.txt" > "$log"
        echo failed
        return
    fi
    # shellcheck disable=SC2086 # the example's arguments are words
    (cd "$tree/examples" && LD_LIBRARY_PATH=$(side_lib "$side") timeout -k 5 "$limit" \
        ruby -I ../lib ${example[$name]}) > "$log" 2>&1 < /dev/null || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo timeout
        return
    fi
    [ "$rc" = 0 ] || { echo failed; return; }
    while IFS= read -r line; do
        if ! grep -qxE -- "$line" "$log"; then
            echo "missing: $line" >> "$log"
            echo failed
            return
        fi
    done < <(echo "${marks[$name]}" | sed 's/ && /\n/g')
    echo passed
}
# The first line saying why: Ruby's exception (the examples raise on a failed call), else a
# missing line, else the last line.
why() {
    grep -m 1 -E '\(RuntimeError\)|Error\)|^missing: ' "$1" || tail -n 1 "$1"
}
suite_run
