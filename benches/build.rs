//! Compiles benches/shim/libzmq_trie.cpp: a C face for libzmq's subscription tries, so the trie
//! bench can time libzmq's own matching code beside ferromq's.
//!
//! The libzmq sources come from the `zmq-sys` dependency: its build script (`links = "zmq"`,
//! via zeromq-src) builds the bundled libzmq into a static libzmq.a, copies libzmq's `src/` next
//! to the public headers and writes an empty `platform.hpp`, and tells us where through
//! `DEP_ZMQ_INCLUDE` and `DEP_ZMQ_OUT`. trie_t's compiled methods are resolved from that
//! libzmq.a at link time; the mtrie template is instantiated in the shim.

use std::env;
use std::path::PathBuf;

fn dep_dir(key: &str) -> PathBuf {
    match env::var_os(key) {
        Some(dir) => PathBuf::from(dir),
        None => panic!("{key} is not set: ferromq-benches must depend on zmq-sys directly"),
    }
}

fn main() {
    let shim = "shim/libzmq_trie.cpp";
    println!("cargo:rerun-if-changed={shim}");
    let include = dep_dir("DEP_ZMQ_INCLUDE");
    let out = dep_dir("DEP_ZMQ_OUT");
    cc::Build::new()
        .cpp(true)
        .file(shim)
        // libzmq's private headers (trie.hpp, generic_mtrie_impl.hpp, ...).
        .include(include.join("..").join("src"))
        .include(&include)
        // zeromq-src's empty platform.hpp. zeromq-src passes its settings as defines instead
        // (pollers, IPC, strnlen, ...); none of them reaches trie.hpp or the mtrie headers, so
        // the shim needs none to agree with libzmq.a on trie_t's layout.
        .include(&out)
        .compile("ferromq_libzmq_trie");
}
