#!/usr/bin/env bash
# Runs ZMQ::FFI's own test suite (Perl's libzmq binding over FFI::Platypus: it opens libzmq at
# run time by name and asks zmq_version which of its ZMQ2/ZMQ3/ZMQ4/ZMQ4_1 code paths to take)
# against ferromq's libzmq.so and, as the control, against the system's libzmq (Debian's
# libzmq3-dev, 4.3.4). A test file that passes on the control and fails on ferromq is a drop-in
# bug.
#
#   tests/perl/run.sh [options] [t/file.t...]
#     --control     run the control too and print the differences (default: ferromq only)
#     --check       CI mode (ferromq only): fails when a test file outside known_failures.txt
#                   fails, or a file listed there passes or does not run
#     --timeout S   seconds each test file may take (default 60)
#     --runs N      run the whole selection N times (flake hunting; default 1)
#     --work DIR    download and log directory (default: target/perl)
#
# The source is Debian's copy of the CPAN release, ZMQ-FFI 1.19 (trixie's libzmq-ffi-perl; the
# pool no longer serves bookworm's 1.18 tarball), checked against the sha256 in Debian's Sources
# index and run from its own lib/ (prove -Ilib): Debian's libzmq-ffi-perl is never installed.
# Its dependencies are Debian's packages (.ci/run installs them). ZMQ::FFI finds libzmq with
# FFI::CheckLib's find_lib(lib => 'zmq'), which searches FFI_CHECKLIB_PATH first: the ferromq
# side sets it (and LD_LIBRARY_PATH) to ffi/install.sh's prefix (dev profile), the control sets
# neither and gets the system's. The LD_DEBUG=libs check proves each side's choice once. Each
# t/*.t runs alone in its own process (prove, in the tarball's directory: the tests open
# t/lib); skip.txt names the files not run, known_failures.txt the ferromq failures, each with
# why. A ferromq failure outside known_failures.txt runs up to twice more before it counts
# (tests/suite_lib.sh's loop). Results in <work>/suite/run<N>/: <side>/<file>.log and
# results.csv (test, ferromq, control).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

. "$here/../suite_lib.sh"
suite_start perl 27 "$@"

# What ZMQ::FFI and its tests load (Makefile.PL's PREREQ_PM and TEST_REQUIRES, less perl's own).
modules=(FFI::Platypus FFI::CheckLib Moo Class::XSAccessor Import::Into namespace::clean
    Sub::Exporter Try::Tiny AnyEvent Sub::Override Sys::SigAction Test::Deep Test::Exception
    Test::NoWarnings Test::Warnings)
missing=()
for m in "${modules[@]}"; do perl -e "require $m" 2>/dev/null || missing+=("$m"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "missing Perl modules: ${missing[*]} (Debian: see the perl step in .ci/run)" >&2
    exit 2
fi

# The source: Debian's copy of the CPAN tarball, checked against its hash.
version=1.19
sha256=dc68f9407e58a23f79aa5254941f11204e5386fb1a6c1def412f9448f723b24f
suite_debian_orig libzmq-ffi-perl "$version" "$sha256" "$work" "ZMQ-FFI-$version"

# ferromq as a libzmq drop-in (the library `cargo test` already built; install.sh copies it, so
# it runs every time).
prefix=$work/prefix
sh "$root/ffi/install.sh" "$prefix" dev

# Each side's environment: FFI::CheckLib's own variable, and the loader's path for anything
# that opens libzmq.so.5 by name.
side_env() {
    if [ "$1" = ferromq ]; then
        echo "FFI_CHECKLIB_PATH=$prefix/lib" "LD_LIBRARY_PATH=$prefix/lib"
    else
        echo "FFI_CHECKLIB_PATH=" "LD_LIBRARY_PATH="
    fi
}
for side in "${sides[@]}"; do
    # shellcheck disable=SC2046 # side_env's words are NAME=VALUE pairs without spaces
    (cd "$src" && env $(side_env "$side") LD_DEBUG=libs perl -Ilib -MZMQ::FFI \
        -e 'print "ZMQ::FFI sees libzmq ", join(".", ZMQ::FFI->new->version), "\n"') \
        > "$work/$side.ld_debug" 2>&1
    grep -h '^ZMQ::FFI sees' "$work/$side.ld_debug" | sed "s/^/$side: /"
    suite_check_loaded "$side" "$work/$side.ld_debug"
done

suite_read_lists "$here" skip.txt known_failures.txt
mapfile -t all < <(cd "$src" && ls t/*.t)
[ ${#all[@]} -gt 0 ] || { echo "$src has no t/*.t" >&2; exit 1; }
suite_select
suite_log_name() { basename "$1" .t; }

# One test file alone: prints passed ("(part skipped)" where the file skipped some of its
# tests), skipped (the whole file), failed or timeout. One at a time, as prove runs them (the
# files' ipc endpoints carry the process id, but t/threads.t binds tcp://*:5671).
run_one() {
    local side="$1" file="$2" log="$3" rc=0
    # shellcheck disable=SC2046
    (cd "$src" && env $(side_env "$side") timeout -k 5 "$limit" prove -v -Ilib "$file") \
        > "$log" 2>&1 < /dev/null || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo timeout
    elif [ "$rc" != 0 ] || ! grep -q '^Result: PASS' "$log"; then
        echo failed
    elif grep -q '^1\.\.0 # SKIP' "$log"; then
        echo skipped
    elif grep -q '^ok [0-9]* # skip' "$log"; then
        echo "passed (part skipped)"
    else
        echo passed
    fi
}
# The first line saying why: Test::More's "Failed test" and its location, else a death, else
# the last line.
why() {
    grep -m 1 -A 1 '^ *#   Failed test' "$1" | paste -sd ' ' | sed 's/#[[:space:]]*/ /g; s/^ *//; s/  */ /g' | grep . \
        || grep -m 1 -E ' at \S+ line [0-9]+\.$|Dubious' "$1" \
        || tail -n 1 "$1"
}
suite_run
