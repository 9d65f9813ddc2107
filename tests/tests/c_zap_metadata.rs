//! What a ROUTER server makes of its ZAP handler's metadata, ferromq against libzmq (Debian's
//! libzmq3-dev, which `.ci/run` installs; the bundled libzmq 4.3.4 where it is missing):
//! `tests/c/zap_metadata.c`, built against each, runs a ROUTER server, a DEALER client and a
//! handler admitting it with the metadata a case names.
//!
//! libzmq parses the reply's metadata with the code that parses the peer's handshake
//! properties (`mechanism_t::parse_metadata`). So an `Identity` there sets the peer's routing
//! id, each one parsed overriding the last, while `zmq_msg_gets` reads a map where the ZAP
//! properties went in first and so win; and a `Socket-Type` there must name a type the server
//! can talk to, else the handshake fails (HANDSHAKE_FAILED_PROTOCOL, ZAP_INVALID_METADATA).
//! The order is fixed under PLAIN (the client's INITIATE follows the ZAP exchange, so its
//! Identity, empty or not, wins). Under CURVE libzmq reads the reply once right after sending
//! the request and parses INITIATE's metadata after that: the client's Identity wins where the
//! handler answered in that window, the handler's otherwise (on a 2-core machine, the client's
//! won 6 of 10 runs in one series, 1 of 20 in another). ferromq always parses the reply after
//! INITIATE, one of libzmq's two outcomes. Under NULL the client's READY and the reply race in
//! both libraries.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lib {
    Ferromq,
    Libzmq,
}

const LIBS: [Lib; 2] = [Lib::Ferromq, Lib::Libzmq];

/// The two builds of the program, made once per test binary.
fn programs() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| harness::build_both("c-zap-metadata", "zap_metadata.c", "zap-metadata"))
}

/// What the program printed for one case, a line an entry.
fn run(lib: Lib, mechanism: &str, metadata: &str, client_id: &str) -> Vec<String> {
    let (ours, theirs) = programs();
    let program = match lib {
        Lib::Ferromq => ours,
        Lib::Libzmq => theirs,
    };
    let out = harness::run_args(
        program,
        &[mechanism, metadata, client_id],
        Duration::from_secs(30),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The message's properties as `zmq_msg_gets` gives them: the handler's Identity (it names
/// one in every case here), the client's Socket-Type, the handler's User-Id.
fn gets(identity: &str) -> Vec<String> {
    vec![
        format!("gets Identity {identity}"),
        "gets Socket-Type DEALER".to_owned(),
        "gets User-Id zap-user".to_owned(),
    ]
}

fn delivered(routing_id: &str, identity: &str) -> Vec<String> {
    let mut lines = vec![format!("routing-id {routing_id}")];
    lines.extend(gets(identity));
    lines
}

#[test]
fn plain_the_clients_identity_names_it_and_msg_gets_finds_the_handlers() {
    for lib in LIBS {
        assert_eq!(
            run(lib, "plain", "Identity=zap-id", "client-id"),
            delivered("client-id", "zap-id"),
            "{lib:?}"
        );
        // A DEALER always announces Identity, empty without ZMQ_ROUTING_ID: parsed after the
        // handler's, it leaves the ROUTER to generate an id.
        assert_eq!(
            run(lib, "plain", "Identity=zap-id", "-"),
            delivered("generated", "zap-id"),
            "{lib:?}"
        );
    }
}

#[test]
fn curve_the_handlers_identity_names_the_peer_one_of_libzmqs_two_outcomes() {
    for (client_id, clients) in [("client-id", "client-id"), ("-", "generated")] {
        assert_eq!(
            run(Lib::Ferromq, "curve", "Identity=zap-id", client_id),
            delivered("zap-id", "zap-id")
        );
        let theirs = run(Lib::Libzmq, "curve", "Identity=zap-id", client_id);
        assert!(
            theirs == delivered("zap-id", "zap-id") || theirs == delivered(clients, "zap-id"),
            "libzmq: {theirs:?}"
        );
    }
}

#[test]
fn null_the_identity_parsed_last_names_the_peer() {
    for lib in LIBS {
        let lines = run(lib, "null", "Identity=zap-id", "client-id");
        assert!(
            lines == delivered("zap-id", "zap-id") || lines == delivered("client-id", "zap-id"),
            "{lib:?}: {lines:?}"
        );
    }
}

#[test]
fn a_socket_type_the_server_cannot_talk_to_fails_the_handshake() {
    let refused = vec![
        "no message".to_owned(),
        // ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA
        "server-event HANDSHAKE_FAILED_PROTOCOL 0x20000005".to_owned(),
    ];
    for lib in LIBS {
        for (mechanism, metadata, client_id) in [
            ("plain", "Socket-Type=PUB", "client-id"),
            ("curve", "Socket-Type=FOO", "-"),
            ("null", "Identity=zap-id,Socket-Type=PUB", "client-id"),
        ] {
            assert_eq!(
                run(lib, mechanism, metadata, client_id),
                refused,
                "{lib:?}: {mechanism} {metadata}"
            );
        }
        // One the server can talk to, if not the client's own, passes, and a lookup finds it.
        let mut lines = vec!["routing-id client-id".to_owned()];
        lines.extend([
            "gets Identity client-id".to_owned(),
            "gets Socket-Type REQ".to_owned(),
            "gets User-Id zap-user".to_owned(),
        ]);
        assert_eq!(
            run(lib, "plain", "Socket-Type=REQ", "client-id"),
            lines,
            "{lib:?}"
        );
    }
}
