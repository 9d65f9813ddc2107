//! The names `zmq_msg_gets` finds a message's properties under, ferromq against libzmq
//! (Debian's libzmq3-dev where installed, else the bundled libzmq 4.3.4): `tests/c/prop_names.c`
//! runs a ROUTER server whose ZAP handler adds properties of varied case, and a peer (a DEALER
//! of the library under test, or a raw ZMTP peer announcing properties of its own), and prints
//! what each name finds.
//!
//! libzmq 4.3.4 looks a name up exactly (a `std::map` find), so `x-tag` and `X-Tag` are two
//! properties, `SOCKET-TYPE` finds nothing, and `Routing-Id` finds nothing when the peer sent
//! `Identity`; its one alias goes the other way (`Identity` falls back to `Routing-Id`). Where
//! two sources name the same property the first inserted wins: Peer-Address, then the
//! handler's User-Id and metadata, then the peer's properties in wire order.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

/// The two builds of the program, made once per test binary.
fn programs() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| harness::build_both("c-prop-names", "prop_names.c", "prop-names"))
}

fn run(program: &Path, mode: &str) -> Vec<String> {
    let out = harness::run_args(program, &[mode], Duration::from_secs(30));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What both libraries must print for `mode`: `(name, value)` pairs after the routing id.
fn expected(routing_id: &str, gets: &[(&str, &str)]) -> Vec<String> {
    let mut lines = vec![format!("routing-id {routing_id}")];
    lines.extend(gets.iter().map(|(n, v)| format!("gets {n} {v}")));
    lines
}

/// The lines every mode shares: the handler's properties and the ones libzmq adds.
const ZAP_AND_OURS: [(&str, &str); 11] = [
    ("SOCKET-TYPE", "(null)"),
    ("routing-id", "(null)"),
    ("User-Id", "zap-user"),
    ("user-id", "(null)"),
    ("Peer-Address", "127.0.0.1"),
    ("peer-address", "(null)"),
    ("X-Tag", "zap-upper"),
    ("x-tag", "zap-lower"),
    ("X-TAG", "(null)"),
    ("X-Zap", "zap"),
    ("Resource", "(null)"),
];

/// `names` of prop_names.c in its order, each from `own` or else from [`ZAP_AND_OURS`].
fn lines_for(routing_id: &str, own: &[(&str, &str)]) -> Vec<String> {
    const NAMES: [&str; 21] = [
        "Socket-Type",
        "socket-type",
        "SOCKET-TYPE",
        "Identity",
        "identity",
        "Routing-Id",
        "routing-id",
        "User-Id",
        "user-id",
        "Peer-Address",
        "peer-address",
        "X-Tag",
        "x-tag",
        "X-TAG",
        "X-Hello",
        "x-hello",
        "X-HELLO",
        "X-Dup",
        "X-Zap",
        "x-zap",
        "Resource",
    ];
    let gets: Vec<(&str, &str)> = NAMES
        .iter()
        .map(|&name| {
            let value = own
                .iter()
                .chain(ZAP_AND_OURS.iter())
                .find(|(n, _)| *n == name)
                .map_or("(null)", |(_, v)| v);
            (name, value)
        })
        .collect();
    expected(routing_id, &gets)
}

fn check(mode: &str, want: &[String]) {
    let (ours, theirs) = programs();
    assert_eq!(run(theirs, mode), want, "libzmq, {mode}");
    assert_eq!(run(ours, mode), want, "ferromq, {mode}");
}

#[test]
fn a_library_peer_names_are_exact_and_routing_id_finds_nothing() {
    check(
        "lib",
        &lines_for(
            "client-id",
            &[
                ("Socket-Type", "DEALER"),
                // The handler's lower-case property is a property of its own.
                ("socket-type", "zap-st"),
                ("Identity", "client-id"),
            ],
        ),
    );
}

#[test]
fn a_raw_peers_properties_first_inserted_wins() {
    check(
        "raw",
        &lines_for(
            "raw-id",
            &[
                ("Socket-Type", "DEALER"),
                ("socket-type", "zap-st"),
                ("Identity", "raw-id"),
                ("X-Hello", "peer-hello"),
                ("x-hello", "peer-lower"),
                // Sent twice: the first stays.
                ("X-Dup", "first"),
            ],
        ),
    );
}

#[test]
fn identity_falls_back_to_routing_id_and_lower_case_names_are_not_the_rfc_ones() {
    check(
        "raw-lower",
        &lines_for(
            // "identity" is not "Identity": the ROUTER generates an id.
            "generated",
            &[
                ("socket-type", "zap-st"),
                ("Identity", "rid-prop"),
                ("identity", "lower-id"),
                ("Routing-Id", "rid-prop"),
                ("X-HELLO", "peer-upper"),
            ],
        ),
    );
}
