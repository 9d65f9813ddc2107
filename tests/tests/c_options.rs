//! `tests/c/options.c`: every socket option of zmq.h on every socket type, and every context
//! option, read on a fresh object and after valid and invalid sets. The program is built against
//! ferromq and against a real libzmq, and the two outputs are compared line by line.
//!
//! The reference is Debian's libzmq3-dev (`/usr/include/zmq.h` + the system `libzmq.so`, which
//! `.ci/run` installs) when present, else the libzmq 4.3.4 that the `zmq` dev-dependency bundles.
//! A line may differ only if `tests/c/options.allow` lists it, and each entry there names the
//! section of docs/compatibility.md that explains the difference.

use std::collections::BTreeMap;
use std::path::Path;

#[path = "../c/harness.rs"]
mod harness;

/// `key -> result` for each "<key> -> <result>" line.
fn parse(out: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.split_once(" -> "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().expect("split gives one part at least");
    let Some(mut text) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return text.is_empty();
    };
    for part in middle {
        match text.find(part) {
            Some(i) => text = &text[i + part.len()..],
            None => return false,
        }
    }
    text.ends_with(last)
}

struct Allowed {
    pattern: String,
    section: String,
    used: bool,
}

/// `tests/c/options.allow`: `<key glob> | docs/compatibility.md#<section>` per line; `#` starts
/// a comment line. Each section must exist in docs/compatibility.md.
fn allow_list() -> Vec<Allowed> {
    let root = harness::workspace_root();
    let text = std::fs::read_to_string(harness::c_source("options.allow")).expect("options.allow");
    let docs = std::fs::read_to_string(root.join("docs").join("compatibility.md"))
        .expect("docs/compatibility.md");
    let anchors: Vec<String> = docs
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (pattern, cite) = l
                .split_once(" | ")
                .unwrap_or_else(|| panic!("allow-list line without a citation: {l}"));
            let section = cite
                .trim()
                .strip_prefix("docs/compatibility.md#")
                .unwrap_or_else(|| panic!("citation is not docs/compatibility.md#...: {l}"));
            assert!(
                anchors.iter().any(|a| a == section),
                "{l}: no section #{section} in docs/compatibility.md"
            );
            Allowed {
                pattern: pattern.trim().to_string(),
                section: section.to_string(),
                used: false,
            }
        })
        .collect()
}

fn reference_output(scratch: &Path) -> (Vec<u8>, &'static str) {
    let program = scratch.join("options-libzmq");
    let system = Path::new("/usr/include/zmq.h").exists()
        && ["/usr/lib/x86_64-linux-gnu/libzmq.so", "/usr/lib/libzmq.so"]
            .iter()
            .any(|p| Path::new(p).exists());
    let which = if system {
        harness::compile(
            &harness::c_source("options.c"),
            Path::new("/usr/include"),
            &program,
            &["-lzmq"],
        );
        "system libzmq (libzmq3-dev)"
    } else {
        harness::compile_against_libzmq(&harness::c_source("options.c"), &program);
        "bundled libzmq 4.3.4"
    };
    // `run`, not `run_args`: 26,000 lines overflow a pipe that is read only after exit.
    (harness::run(&program).stdout, which)
}

#[test]
fn options_match_libzmq() {
    let scratch = harness::scratch_dir("c-options");
    let ours = scratch.join("options-ferromq");
    harness::compile_against_ferromq(&harness::c_source("options.c"), &scratch, &ours);
    let ours = parse(&harness::run(&ours).stdout);
    let (reference, which) = reference_output(&scratch);
    let reference = parse(&reference);
    assert!(reference.len() > 20_000, "{which}: too few lines");

    let mut allowed = allow_list();
    let mut unexplained = Vec::new();
    let mut explained = 0usize;
    let keys: std::collections::BTreeSet<&String> = reference.keys().chain(ours.keys()).collect();
    for key in keys {
        let (theirs, mine) = (reference.get(key), ours.get(key));
        if theirs == mine {
            continue;
        }
        match allowed.iter_mut().find(|a| glob(&a.pattern, key)) {
            Some(a) => {
                a.used = true;
                explained += 1;
            }
            None => unexplained.push(format!(
                "{key}\n    libzmq:  {}\n    ferromq: {}",
                theirs.map_or("(absent)", String::as_str),
                mine.map_or("(absent)", String::as_str)
            )),
        }
    }
    let stale: Vec<String> = allowed
        .iter()
        .filter(|a| !a.used)
        .map(|a| format!("{} ({})", a.pattern, a.section))
        .collect();
    eprintln!(
        "reference: {which}; {} lines; {explained} differences explained by the allow-list, {} not",
        reference.len(),
        unexplained.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} differences from {which} not in tests/c/options.allow:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allow-list entries that match no difference (remove them): {stale:?}"
    );
}

#[test]
fn glob_matches_as_documented() {
    assert!(glob("STREAM *", "STREAM ROUTING_ID get300"));
    assert!(glob("* CURVE_* set*", "PAIR CURVE_SERVER set(1)"));
    assert!(!glob("* CURVE_* set*", "PAIR CURVE_SERVER get4"));
    assert!(glob("exact", "exact"));
    assert!(!glob("exact", "exactly"));
}
