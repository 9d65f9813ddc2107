//! src/'s imports run one way (issue 15): each file's `crate::` paths, outside its
//! `#[cfg(test)] mod tests`, name only its own layer or a layer below it, and no two files import
//! each other in a circle. The layers, top to bottom, are docs/architecture.md's "Layout of src/".
//! The crates under crates/ are flat (one folder of files, no layers); for them the check is that
//! no two files import each other in a circle (issue 15: crates/zmtp had error.rs <-> greeting.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ferromq_tests::rust_files;

/// Top to bottom; "leaf" is error.rs, option.rs (and option/), msg.rs and lib.rs.
const ORDER: [&str; 8] = [
    "context",
    "api",
    "runtime",
    "connect",
    "transport",
    "pattern",
    "io",
    "leaf",
];
const LEAVES: [&str; 4] = ["error", "option", "msg", "lib"];

fn layer_of(first: &str) -> Option<usize> {
    if LEAVES.contains(&first) {
        return Some(ORDER.len() - 1);
    }
    ORDER.iter().position(|l| *l == first)
}

/// `src/io/engine.rs` -> `io::engine`; `src/pattern/mod.rs` -> `pattern`.
fn module_of(src: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The module a `crate::a::b::c` path names: `a` for a leaf, else `a::b` (a file in a layer).
fn target_module(path: &str) -> Option<(String, usize)> {
    let parts: Vec<&str> = path.split("::").collect();
    let layer = layer_of(parts[0])?;
    let module = if layer == ORDER.len() - 1 || parts.len() < 2 {
        parts[0].to_owned()
    } else {
        format!("{}::{}", parts[0], parts[1])
    };
    Some((module, layer))
}

/// Every `crate::a::b` path in `text`, with `crate::{a::B, c}` groups split into their items.
fn crate_paths(text: &str) -> Vec<String> {
    fn path_at(rest: &str) -> &str {
        let end = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches(':')
    }
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let path = path_at(item.trim());
                if !path.is_empty() {
                    out.push(path.to_owned());
                }
            }
            continue;
        }
        let path = path_at(rest);
        if !path.is_empty() {
            out.push(path.to_owned());
        }
    }
    out
}

/// The code of a file without its `#[cfg(test)] mod tests` (tests may import anything).
fn code_of(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i])
}

/// A circle in `edges`, found depth first, as the files along it.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let start = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut circle = stack[start..].to_vec();
                    circle.push(m.clone());
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str()) {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn imports_run_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let code = code_of(&text);
        let me = module_of(&src, path);
        let first = me.split("::").next().unwrap_or("");
        let Some(my_layer) = layer_of(first) else {
            panic!(
                "{}: not in any layer of docs/architecture.md",
                path.display()
            );
        };
        for target in crate_paths(code) {
            let Some((module, layer)) = target_module(&target) else {
                continue; // a re-export at the crate root (crate::Socket, ...)
            };
            if module == me || me.starts_with(&format!("{module}::")) {
                continue;
            }
            if layer < my_layer {
                upward.push(format!("{me} ({}) imports {target}", ORDER[my_layer]));
            }
            edges.entry(me.clone()).or_default().insert(module);
        }
    }
    assert!(upward.is_empty(), "imports going up a layer: {upward:#?}");
    if let Some(circle) = find_circle(&edges) {
        panic!(
            "files importing each other in a circle: {}",
            circle.join(" -> ")
        );
    }
}

/// The import graph among a flat crate's files: `crate::x::...` in `a.rs` is an edge a -> x
/// when x.rs is one of the crate's files (a name re-exported at the root is not a file).
fn flat_crate_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|p| module_of(src, p)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let me = module_of(src, path);
        for target in crate_paths(code_of(&text)) {
            let first = target.split("::").next().unwrap_or("").to_owned();
            if first != me && modules.contains(&first) {
                edges.entry(me.clone()).or_default().insert(first);
            }
        }
    }
    edges
}

#[test]
fn crates_have_no_import_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).expect("read crates") {
        let src = entry.expect("entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        let edges = flat_crate_edges(&src);
        assert!(!edges.is_empty(), "{}: no imports seen", src.display());
        if let Some(circle) = find_circle(&edges) {
            panic!(
                "{}: files importing each other in a circle: {}",
                src.display(),
                circle.join(" -> ")
            );
        }
        checked += 1;
    }
    assert!(checked >= 3, "expected zmtp, pipe and trie under crates/");
}

#[test]
fn the_check_sees_a_path_going_up() {
    assert_eq!(
        target_module("io::engine::Engine"),
        Some(("io::engine".to_owned(), 6))
    );
    assert_eq!(target_module("error::Error"), Some(("error".to_owned(), 7)));
    assert_eq!(target_module("Socket"), None);
    assert_eq!(
        crate_paths("use crate::api::socket::Socket;\nuse crate::{Context};"),
        vec!["api::socket".to_owned()]
    );
    assert_eq!(
        crate_paths("use crate::{reader::Read, Notify, sync::{Arc}};"),
        vec!["reader".to_owned(), "sync".to_owned()]
    );
    let mut edges = BTreeMap::new();
    for (a, b) in [
        ("error", "greeting"),
        ("greeting", "error"),
        ("zap", "error"),
    ] {
        edges
            .entry(a.to_owned())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_owned());
    }
    let circle = find_circle(&edges).expect("error <-> greeting is a circle");
    assert_eq!(circle.first(), circle.last());
    assert_eq!(circle.len(), 3);
    edges.remove("greeting");
    assert_eq!(find_circle(&edges), None);
}
