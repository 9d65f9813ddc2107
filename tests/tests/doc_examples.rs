//! Every public item of the `ferromq` crate carries a runnable example in its rustdoc (issue 17).
//!
//! The root crate denies `unreachable_pub`, so each `pub` item in src/ is part of the public API
//! and a scan of the sources finds them all, on stable, with no rustdoc JSON. (Nightly's
//! `rustdoc::missing_doc_code_examples` was tried first: it only checks items whose module path
//! is public, so it skipped `Socket`, `AsyncSocket` and everything else re-exported from the
//! private `api` module.) The items held to it are those that lint would hold: functions and
//! methods, structs, enums, traits and their required methods, and modules. Constants, statics,
//! type aliases, fields, variants and trait impls are shown by the examples of the items that use
//! them, as the lint has it.
//!
//! An example is a fenced block rustdoc compiles and runs: no info string, or one of `rust`,
//! `no_run`, `should_panic` (never `ignore` or `text`). A `no_run` block must say why, in a line
//! of the same doc comment that names `no_run`.

use std::path::{Path, PathBuf};

use ferromq_tests::rust_files;

/// Files re-exported with `#[doc(hidden)]` from lib.rs (shared with the C ABI crate only).
const HIDDEN: &[(&str, &str)] = &[
    ("io/body_pool.rs", "pub use io::body_pool;"),
    ("io/send_buffers.rs", "pub use io::send_buffers;"),
    ("msg/settled.rs", "pub use msg::settled;"),
];

const ITEM_KINDS: [&str; 5] = ["fn ", "struct ", "enum ", "trait ", "mod "];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../src")
}

/// The kind of public item a line opens, if it opens one.
fn public_item(line: &str) -> Option<&'static str> {
    let rest = line.trim_start().strip_prefix("pub ")?;
    let rest = ["const ", "async ", "unsafe "]
        .iter()
        .fold(rest, |r, q| r.strip_prefix(q).unwrap_or(r));
    ITEM_KINDS.iter().copied().find(|k| rest.starts_with(k))
}

/// Whether a line opens a required method of a public trait (`fn name(..);`, no body).
fn trait_method(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("fn ") && t.ends_with(';')
}

/// The doc lines (`///` or `//!`, marker stripped) among `lines`.
fn doc_text<'a>(lines: impl Iterator<Item = &'a str>, marker: &str) -> Vec<&'a str> {
    lines
        .filter_map(|l| l.trim_start().strip_prefix(marker))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect()
}

/// The outer doc comment above line `at`: the `///` and attribute lines right above it.
fn doc_above<'a>(lines: &[&'a str], at: usize) -> Vec<&'a str> {
    let mut start = at;
    while start > 0 {
        let t = lines[start - 1].trim_start();
        let attr_tail = t.ends_with(")]") || t.ends_with("),") || t.ends_with('(');
        if t.starts_with("///") || t.starts_with("#[") || (attr_tail && !t.ends_with(';')) {
            start -= 1;
        } else {
            break;
        }
    }
    doc_text(lines[start..at].iter().copied(), "///")
}

/// Why a doc comment does not count as having an example, or `None` if it does.
fn example_problem(doc: &[&str]) -> Option<&'static str> {
    let mut runnable = false;
    let mut in_block = false;
    for line in doc {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if in_block {
            in_block = false;
            continue;
        }
        in_block = true;
        let tags: Vec<&str> = info.split(',').map(str::trim).collect();
        if tags
            .iter()
            .any(|t| ["ignore", "text", "compile_fail"].contains(t))
        {
            continue;
        }
        if tags
            .iter()
            .all(|t| ["", "rust", "no_run", "should_panic", "edition2024"].contains(t))
        {
            if tags.contains(&"no_run")
                && !doc
                    .iter()
                    .any(|l| !l.trim_start().starts_with("```") && l.contains("no_run"))
            {
                return Some("a `no_run` example that does not say why it cannot run");
            }
            runnable = true;
        }
    }
    (!runnable).then_some("no runnable example")
}

/// The folder, relative to src/, that the modules a file declares live in: `io/mod.rs` and
/// `lib.rs` declare their siblings, `option.rs` its `option/` children.
fn module_dir(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, "mod.rs")) => format!("{dir}/"),
        None if rel == "lib.rs" => String::new(),
        _ => format!("{}/", rel.trim_end_matches(".rs")),
    }
}

/// `name` in `pub fn name(` / `pub struct Name<..>` / `pub mod name;`.
fn item_name(line: &str, kind: &str) -> String {
    let after = line.split(kind).nth(1).unwrap_or("");
    after
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every public item without an example, as `file:line kind name: why`.
fn missing_examples() -> Vec<String> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let mut missing = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if let Some((_, export)) = HIDDEN.iter().find(|(f, _)| *f == rel) {
            assert!(
                lib.contains(&format!("#[doc(hidden)]\n{export}")),
                "{rel} is skipped as hidden, but lib.rs no longer has `#[doc(hidden)] {export}`"
            );
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        // Unit tests sit last in a file; nothing public follows them.
        let end = lines
            .iter()
            .position(|l| l.trim() == "#[cfg(test)]")
            .unwrap_or(lines.len());
        let mut in_pub_trait = false;
        for at in 0..end {
            let line = lines[at];
            let kind = match public_item(line) {
                Some(kind) => {
                    in_pub_trait = kind == "trait ";
                    kind
                }
                None if in_pub_trait && trait_method(line) => "fn ",
                None => {
                    if line.starts_with('}') {
                        in_pub_trait = false;
                    }
                    continue;
                }
            };
            let name = item_name(line, kind);
            if kind == "mod "
                && HIDDEN
                    .iter()
                    .any(|(f, _)| *f == format!("{}{name}.rs", module_dir(&rel)))
            {
                continue;
            }
            let doc = if kind == "mod " && line.trim_end().ends_with(';') {
                // An out-of-line module's doc is the `//!` head of its file.
                let dir = path.parent().expect("dir");
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let base = if stem == "mod" || stem == "lib" {
                    dir.to_path_buf()
                } else {
                    dir.join(stem)
                };
                let file = [
                    base.join(format!("{name}.rs")),
                    base.join(&name).join("mod.rs"),
                ]
                .into_iter()
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("{rel}: no file for `mod {name}`"));
                let head = std::fs::read_to_string(file).expect("module file");
                doc_text(head.lines(), "//!")
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            } else {
                doc_above(&lines, at)
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            };
            let doc: Vec<&str> = doc.iter().map(String::as_str).collect();
            if let Some(why) = example_problem(&doc) {
                missing.push(format!("src/{rel}:{} {kind}{name}: {why}", at + 1));
            }
        }
    }
    missing
}

#[test]
fn every_public_item_has_a_runnable_example() {
    let missing = missing_examples();
    assert!(
        missing.is_empty(),
        "{} public items of ferromq lack a runnable rustdoc example:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_must() {
    // The checker itself: a doc with only a `text` block, or an unexplained `no_run`, fails;
    // a plain or `rust` block passes.
    assert!(example_problem(&["Does x.", "```text", "x", "```"]).is_some());
    assert!(example_problem(&["```no_run", "x();", "```"]).is_some());
    assert!(example_problem(&["`no_run`: needs a peer.", "```no_run", "x();", "```"]).is_none());
    assert!(example_problem(&["```", "x();", "```"]).is_none());
    assert!(example_problem(&["```rust", "x();", "```"]).is_none());
    assert_eq!(
        public_item("    pub const fn bits(self) -> u32 {"),
        Some("fn ")
    );
    assert_eq!(public_item("pub(crate) fn hidden() {"), None);
    assert_eq!(public_item("pub const X: i32 = 1;"), None);
    assert!(trait_method("    fn to_c(self) -> Vec<u8>;"));
}

#[test]
fn the_crate_denies_unreachable_pub() {
    // Without it a `pub` item in a private module could be unreachable, and the scan above
    // would demand examples of internals (or, the other way, miss nothing it should see only
    // because of this lint).
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("lib.rs");
    assert!(lib.contains("#![deny(unreachable_pub)]"));
}
