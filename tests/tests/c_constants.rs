//! Every constant of libzmq 4.3's stable `zmq.h` has the same value in ferromq's `zmq.h`: one C
//! program, compiled once against each header, must print the same lines. The version is the
//! one intended difference (ferromq implements 4.3.5, the bundled libzmq is 4.3.4).

#[path = "../c/harness.rs"]
mod harness;

use std::collections::BTreeMap;

fn values(stdout: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| match line.rsplit_once(' ') {
            Some((name, value)) => (name.to_string(), value.to_string()),
            None => (line.to_string(), String::new()),
        })
        .collect()
}

#[test]
fn constants_match_libzmq() {
    let scratch = harness::scratch_dir("c-constants");
    let source = harness::c_source("constants.c");

    let reference = scratch.join("constants-libzmq");
    harness::compile(&source, &harness::libzmq_include_dir(), &reference, &[]);
    let ours = scratch.join("constants-ferromq");
    let ffi_include = harness::workspace_root().join("ffi").join("include");
    harness::compile(&source, &ffi_include, &ours, &[]);

    let mut expected = values(&harness::run(&reference).stdout);
    let mut actual = values(&harness::run(&ours).stdout);
    assert!(expected.len() > 200, "the program prints the whole API");

    assert_eq!(expected.remove("ZMQ_VERSION_PATCH").as_deref(), Some("4"));
    assert_eq!(expected.remove("ZMQ_VERSION").as_deref(), Some("40304"));
    assert_eq!(actual.remove("ZMQ_VERSION_PATCH").as_deref(), Some("5"));
    assert_eq!(actual.remove("ZMQ_VERSION").as_deref(), Some("40305"));

    let missing: Vec<_> = expected
        .keys()
        .filter(|k| !actual.contains_key(*k))
        .collect();
    let extra: Vec<_> = actual
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .collect();
    let differ: Vec<_> = expected
        .iter()
        .filter(|(k, v)| actual.get(*k).is_some_and(|a| a != *v))
        .map(|(k, v)| format!("{k}: libzmq {v}, ferromq {}", actual[k]))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && differ.is_empty(),
        "missing {missing:?}\nextra {extra:?}\ndiffer {differ:?}"
    );
}
