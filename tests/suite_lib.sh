# What the harnesses that run another project's own test suite against ferromq share
# (tests/go/suite.sh, tests/rust_zmq/suite.sh, tests/czmq/run.sh, tests/cppzmq/run.sh,
# tests/php/run.sh, tests/perl/run.sh, tests/ruby/run.sh; tests/python/suite.sh for its
# options): the command line, the skip and known-failures lists, the check that the ferromq side really loads
# ferromq's library, the download of a pinned file (a Debian source tarball, say), and the run
# loop with its retry, report and two-way known-failures check.
# Sourced (bash); each harness brings what differs: how one test runs and how its log says why
# it failed.

# The options every harness takes, into control, check, limit, runs and only (the tests named
# on the command line). Options in the caller's `suite_values` (declared with their defaults,
# e.g. `declare -A suite_values=([--backend]=cython)`) take a value too. `help_end`: the last
# line of the harness's header comment, which -h prints.
suite_parse_args() {
    local script="$1" help_end="$2"
    shift 2
    control=0
    check=0
    limit=60
    runs=1
    only=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --control) [ "$check" = 1 ] || control=1; shift ;;
            --check) check=1; control=0; shift ;;
            --timeout) limit="$2"; shift 2 ;;
            --runs) runs="$2"; shift 2 ;;
            -h|--help) sed -n "2,${help_end}p" "$script"; exit 0 ;;
            -*)
                if declare -p suite_values >/dev/null 2>&1 && [ -n "${suite_values[$1]+set}" ]; then
                    suite_values[$1]="$2"
                    shift 2
                else
                    echo "unknown option $1" >&2
                    exit 2
                fi
                ;;
            *) only+=("$1"); shift ;;
        esac
    done
}

# The start a harness that keeps its downloads, builds and logs in one folder shares:
# parses the command line (suite_parse_args, HELP_END as there) with `--work DIR` besides,
# whose default is target/NAME; sets and makes `work`; sets `sides` (ferromq, and the control
# with --control). Call it from the harness's top level, after setting `root`.
suite_start() {
    local name="$1" help_end="$2"
    shift 2
    declare -gA suite_values=([--work]="${CARGO_TARGET_DIR:-$root/target}/$name")
    suite_parse_args "$0" "$help_end" "$@"
    work=${suite_values[--work]}
    mkdir -p "$work"
    sides=(ferromq)
    [ "$control" = 0 ] || sides+=(control)
}

# Debian's copy of an upstream release tarball (the pool's PKG_VERSION.orig.tar.gz under
# pool/main/<first letter, or lib and the next letter>/PKG/), downloaded once into DIR, checked
# against SHA256 (pinned in the caller, from Debian's Sources index) and unpacked there once;
# sets `src` to the tree, DIR/TOP (the tarball's top directory, default PKG-VERSION).
suite_debian_orig() {
    local pkg="$1" version="$2" sha256="$3" dir="$4" top="${5:-$1-$2}" tarball pool
    tarball="$dir/${pkg}_$version.orig.tar.gz"
    pool=${pkg:0:1}
    [[ $pkg != lib?* ]] || pool=${pkg:0:4}
    suite_fetch "http://deb.debian.org/debian/pool/main/$pool/$pkg/${pkg}_$version.orig.tar.gz" \
        "$tarball" "$sha256"
    src="$dir/$top"
    if [ ! -f "$src/.extracted" ]; then
        rm -rf "$src"
        tar -xzf "$tarball" -C "$dir"
        touch "$src/.extracted"
    fi
}

# `skip` and `known` (name -> reason) from DIR's suite_skip.txt and suite_known_failures.txt
# (or the two file names given).
suite_read_lists() {
    local dir="$1" skip_file="${2:-suite_skip.txt}" known_file="${3:-suite_known_failures.txt}" name reason
    declare -gA skip=() known=()
    while read -r name _; do
        [ -n "$name" ] && skip[$name]=1
    done < <(grep -v '^[[:space:]]*#' "$dir/$skip_file")
    while read -r name reason; do
        [ -n "$name" ] && known[$name]=$reason
    done < <(grep -v '^[[:space:]]*#' "$dir/$known_file")
}

# `tests`: those named on the command line, else every one of `all` that suite_skip.txt does not
# name (and a word about a skip entry the suite does not have).
suite_select() {
    local t name
    if [ ${#only[@]} -gt 0 ]; then
        tests=("${only[@]}")
        return
    fi
    tests=()
    for t in "${all[@]}"; do [ -n "${skip[$t]:-}" ] || tests+=("$t"); done
    for name in "${!skip[@]}"; do
        printf '%s\n' "${all[@]}" | grep -qxF "$name" \
            || echo "the skip list names $name, which the suite does not have" >&2
    done
}

# Downloads URL to FILE once (kept as a cache) and checks it against SHA256: a wrong file is
# removed and the harness stops.
suite_fetch() {
    local url="$1" file="$2" sha256="$3"
    if [ ! -f "$file" ]; then
        curl -sSfL -o "$file.part" "$url"
        mv "$file.part" "$file"
    fi
    if ! echo "$sha256  $file" | sha256sum -c --quiet -; then
        echo "$file: wrong sha256" >&2
        rm -f "$file"
        exit 1
    fi
}

# Which libzmq a side's binary loaded, from the dynamic loader's own account (an LD_DEBUG=libs
# log); the ferromq side must have mapped `$prefix/lib/libzmq.so.5` and no other libzmq. A
# binding that opens the library at run time may open it more than once (FFI::CheckLib opens a
# candidate to check it, closes it, and the binding opens it again): every one counts.
suite_check_loaded() {
    local side="$1" ld_debug="$2" loaded path
    loaded=$(sed -n 's/.*calling init: \(.*libzmq\.so[^ ]*\)$/\1/p' "$ld_debug" | sort -u)
    echo "$side: loads ${loaded:-no libzmq?}" | paste -sd ' '
    [ "$side" = ferromq ] || return 0
    while IFS= read -r path; do
        if [ "$(realpath -m "$path")" != "$(realpath "$prefix/lib/libzmq.so.5")" ]; then
            echo "the ferromq test binary did not load $prefix/lib/libzmq.so.5 (only)" >&2
            exit 1
        fi
    done <<< "${loaded:-none}"
}

# Whether a result (its first word: run_one may add why, as in "failed (signal 6)") counts as bad.
suite_bad() { [ "${1%% *}" = failed ] || [ "${1%% *}" = timeout ]; }

# Runs `tests` on each of `sides`, `runs` times over, into $work/suite/runN (a log per test and
# results.csv), with the caller's `run_one SIDE TEST LOG` (prints passed, failed, skipped or
# timeout), `why LOG` (the first line saying why) and, if defined, `suite_log TEST` (the log's
# file name; default the test's name). A ferromq failure outside the known list runs up to twice
# more, and counts only if it fails each time: some suites' own tests race on a 2-core machine
# with either library (CZMQ's zgossip failed 1 run in 10-15 there, independently from run to
# run), so one retry still failed about one CI run in 70. With `control`, prints the tests that pass on the control and fail on
# ferromq; with `check`, fails on a new failure, on a known failure that passes and on a known
# failure that did not run. Returns 1 when a check failed.
suite_run() {
    local status=0 run out start side t r first retry failed log
    declare -A result count
    for run in $(seq 1 "$runs"); do
        out=$work/suite/run$run
        rm -rf "$out"
        start=$SECONDS
        result=()
        for side in "${sides[@]}"; do
            mkdir -p "$out/$side"
            count=([passed]=0 [failed]=0 [skipped]=0 [timeout]=0)
            for t in "${tests[@]}"; do
                log=$out/$side/$(suite_log_name "$t")
                r=$(run_one "$side" "$t" "$log.log")
                if [ "$side" = ferromq ] && suite_bad "$r" && [ -z "${known[$t]:-}" ]; then
                    first=$r
                    for retry in 1 2; do
                        r=$(run_one "$side" "$t" "$log.retry$retry.log")
                        suite_bad "$r" || break
                    done
                    echo "ferromq, $t: $first ($(why "$log.log")), then $r on retry $retry"
                    r="$r (retried)"
                fi
                result[$side,$t]=$r
                count[${r%% *}]=$((count[${r%% *}] + 1))
            done
            echo "$side: ${count[passed]} passed, ${count[failed]} failed, ${count[timeout]} timed out, ${count[skipped]} skipped"
        done
        echo "run $run: $((SECONDS - start))s"

        {
            printf 'test'; printf ',%s' "${sides[@]}"; echo
            for t in "${tests[@]}"; do
                printf '%s' "$t"
                for side in "${sides[@]}"; do printf ',%s' "${result[$side,$t]}"; done
                echo
            done
        } > "$out/results.csv"

        if [ "$control" = 1 ]; then
            local diverging=()
            for t in "${tests[@]}"; do
                if [ "${result[control,$t]%% *}" = passed ] && suite_bad "${result[ferromq,$t]%% *}"; then
                    diverging+=("$t")
                fi
            done
            echo "pass on the control, fail on ferromq: ${#diverging[@]}"
            for t in "${diverging[@]}"; do
                echo "  $t: $(why "$out/ferromq/$(suite_log_name "$t").log")${known[$t]:+ (known: ${known[$t]})}"
            done
            for t in "${tests[@]}"; do
                if suite_bad "${result[control,$t]%% *}"; then
                    echo "  control, $t: ${result[control,$t]}: $(why "$out/control/$(suite_log_name "$t").log")"
                fi
            done
        fi

        if [ "$check" = 1 ]; then
            failed=0
            for t in "${tests[@]}"; do
                r=${result[ferromq,$t]%% *}
                log=$out/ferromq/$(suite_log_name "$t").log
                if suite_bad "$r" && [ -z "${known[$t]:-}" ]; then
                    echo "NEW FAILURE $t: $(why "$log") (log: $log)"
                    failed=1
                elif [ "$r" = passed ] && [ -n "${known[$t]:-}" ]; then
                    echo "KNOWN FAILURE NOW PASSES $t (remove it from the known-failures list)"
                    failed=1
                fi
            done
            if [ ${#only[@]} = 0 ]; then
                for t in "${!known[@]}"; do
                    [ -n "${result[ferromq,$t]:-}" ] || { echo "KNOWN FAILURE NOT RUN $t (renamed or skipped?)"; failed=1; }
                done
            fi
            echo "check: $([ "$failed" = 1 ] && echo FAILED || echo ok)"
            [ "$failed" = 0 ] || status=1
        fi
    done
    return $status
}

# A test's log file name: the caller may redefine it (test names with `::`, say).
suite_log_name() { echo "$1"; }
