//! PLAIN against a real libzmq (Debian's libzmq3-dev, which `.ci/run` installs; the bundled
//! libzmq 4.3.4 where it is missing): `tests/c/security_peer.c` built against ferromq and against the system libzmq,
//! one process each, meeting over tcp and ipc in both directions. Good credentials carry a
//! request and its reply; credentials a libzmq ZAP handler refuses, and mechanism mismatches,
//! fail the handshake on both sides with libzmq's monitor events while nothing is delivered.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lib {
    Ferromq,
    Libzmq,
}

/// The two builds of the peer program, made once per test binary.
fn programs() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| harness::build_both("c-security", "security_peer.c", "security"))
}

fn program(lib: Lib) -> &'static Path {
    let (ours, theirs) = programs();
    match lib {
        Lib::Ferromq => ours,
        Lib::Libzmq => theirs,
    }
}

/// One side: which library, its security argument and what it expects.
struct Side {
    lib: Lib,
    security: String,
    expect: String,
}

fn side(lib: Lib, security: &str, expect: &str) -> Side {
    Side {
        lib,
        security: security.to_string(),
        expect: expect.to_string(),
    }
}

/// Runs a binder and a connecter to the end, asserts both printed "ok" last, and returns what
/// each printed before it (binder's, connecter's).
fn meet(transport: &str, pattern: &str, binder: Side, connecter: Side) -> (String, String) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let endpoint = match transport {
        "tcp" => "tcp://127.0.0.1:*".to_string(),
        _ => format!(
            "ipc:///tmp/ferromq-security-{}-{}.sock",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ),
    };
    let what = format!(
        "{transport} {pattern}: {:?} binds ({}, expects {}), {:?} connects ({}, expects {})",
        binder.lib,
        binder.security,
        binder.expect,
        connecter.lib,
        connecter.security,
        connecter.expect
    );
    let mut bound = Command::new(program(binder.lib))
        .args(["bind", &endpoint, pattern, &binder.security, &binder.expect])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the binder");
    let mut out = BufReader::new(bound.stdout.take().expect("piped stdout"));
    let mut resolved = String::new();
    out.read_line(&mut resolved).expect("read the endpoint");
    let resolved = resolved.trim().to_string();
    let connect = Command::new(program(connecter.lib))
        .args([
            "connect",
            &resolved,
            pattern,
            &connecter.security,
            &connecter.expect,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the connecter");
    let limit = Duration::from_secs(45);
    let connected = harness::wait_bounded(connect, limit);
    let bound = harness::wait_bounded(bound, limit);
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    // libzmq 4.3.4 leaves its ipc socket file behind (thousands piled up in /tmp).
    if let Some(path) = endpoint.strip_prefix("ipc://") {
        let _ = std::fs::remove_file(path);
    }
    let said = String::from_utf8_lossy(&connected.stdout).into_owned();
    let connecter_said = said.strip_suffix("ok\n");
    let binder_said = rest.strip_suffix("ok\n");
    // Both sides' output either way: one side's failure is often explained by the other's.
    assert!(
        connected.status.success()
            && connecter_said.is_some()
            && bound.status.success()
            && binder_said.is_some(),
        "{what}\nconnecter: {}\nbinder ({resolved}): {}\nrest of the binder's stdout: {rest}",
        harness::text(&connected),
        harness::text(&bound)
    );
    (
        binder_said.unwrap_or_default().to_string(),
        connecter_said.unwrap_or_default().to_string(),
    )
}

fn both_ways(transport: &str, pattern: &str, server: (&str, &str), client: (&str, &str)) {
    for (s, c) in [(Lib::Ferromq, Lib::Libzmq), (Lib::Libzmq, Lib::Ferromq)] {
        meet(
            transport,
            pattern,
            side(s, server.0, server.1),
            side(c, client.0, client.1),
        );
    }
}

/// A ZAP handler on the server's side (in the server's process, whichever library) admits
/// admin:secret and names it User-Id, which the request's message carries.
/// [`both_ways`] over tcp and ipc, REQ/REP, DEALER/ROUTER and PUB/SUB (the server binds:
/// REP, ROUTER, PUB).
fn every_way(server: (&str, &str), client: (&str, &str)) {
    for transport in ["tcp", "ipc"] {
        for pattern in ["reqrep", "dealerrouter", "pubsub"] {
            both_ways(transport, pattern, server, client);
        }
    }
}

#[test]
fn plain_good_credentials_both_ways() {
    every_way(
        ("plain-server-zap:admin:secret", "ok"),
        ("plain-client:admin:secret", "ok"),
    );
    // And ferromq with itself.
    meet(
        "tcp",
        "dealerrouter",
        side(Lib::Ferromq, "plain-server-zap:admin:secret", "ok"),
        side(Lib::Ferromq, "plain-client:admin:secret", "ok"),
    );
}

/// A wrong password: the server's ZAP handler says 400, both sides report
/// HANDSHAKE_FAILED_AUTH 400, nothing is delivered.
#[test]
fn plain_bad_password_both_ways() {
    every_way(
        ("plain-server-zap:admin:secret", "auth:400"),
        ("plain-client:admin:wrong", "auth:400"),
    );
}

/// libzmq 4.3's PLAIN server without a ZAP handler refuses every client
/// (HANDSHAKE_FAILED_NO_DETAIL, EFAULT): so does ferromq's.
#[test]
fn plain_server_without_zap_handler_refuses() {
    both_ways(
        "tcp",
        "reqrep",
        ("plain-server", "nodetail:14"),
        ("plain-client:admin:secret", "none"),
    );
}

/// NULL against PLAIN, either side: the handshake fails on both, nothing is delivered, and
/// ZMTP_MECHANISM_MISMATCH is reported by at least one side. The other may see the connection
/// close first: libzmq (like ferromq) sends the rest of its greeting only after the peer's
/// major byte, and when the peer's major and rest arrive in one read it judges the mechanism
/// and closes before that rest went out, so its peer never learns the mechanism.
#[test]
fn mechanism_mismatch_both_ways() {
    for (pattern, server, client) in [
        ("reqrep", "plain-server", "null"),
        ("dealerrouter", "null", "plain-client:admin:secret"),
    ] {
        for (s, c) in [(Lib::Ferromq, Lib::Libzmq), (Lib::Libzmq, Lib::Ferromq)] {
            let said = meet(
                "tcp",
                pattern,
                side(s, server, "mismatch"),
                side(c, client, "mismatch"),
            );
            assert!(
                said.0 == "protocol\n" || said.1 == "protocol\n",
                "{pattern} {s:?} binds {server}, {c:?} connects {client}: {said:?}"
            );
        }
    }
}

/// A fresh CURVE key pair as Z85 text: (public, secret).
fn curve_keys() -> (String, String) {
    let pair = ferromq::CurveKeyPair::generate().expect("OS randomness");
    let z = |k: &[u8; 32]| String::from_utf8(ferromq::z85::encode(k).expect("32 bytes")).unwrap();
    (z(&pair.public), z(&pair.secret_bytes()))
}

/// The right server key: a request and its reply, boxed both ways, over tcp and ipc, with and
/// without a ZAP handler (whose User-Id the server's message carries).
#[test]
fn curve_good_key_both_ways() {
    let (server_public, server_secret) = curve_keys();
    let (client_public, client_secret) = curve_keys();
    let client = format!("curve-client,{server_public},{client_secret}");
    every_way(
        (&format!("curve-server,{server_secret}"), "ok"),
        (&client, "ok"),
    );
    every_way(
        (
            &format!("curve-server-zap,{server_secret},{client_public}"),
            "ok",
        ),
        (&client, "ok"),
    );
}

/// The client has a wrong server key: the server cannot open its HELLO
/// (ZMTP_CRYPTOGRAPHIC), the client's connection closes, nothing is delivered.
#[test]
fn curve_wrong_server_key_both_ways() {
    let (_, server_secret) = curve_keys();
    let (other_public, _) = curve_keys();
    let (_, client_secret) = curve_keys();
    every_way(
        (
            &format!("curve-server,{server_secret}"),
            "protocol:11000001",
        ),
        (
            &format!("curve-client,{other_public},{client_secret}"),
            "none",
        ),
    );
}

/// A client key the server's ZAP handler does not know: 400 on both sides.
#[test]
fn curve_unknown_client_key_refused_by_zap() {
    let (server_public, server_secret) = curve_keys();
    let (known_public, _) = curve_keys();
    let (_, client_secret) = curve_keys();
    every_way(
        (
            &format!("curve-server-zap,{server_secret},{known_public}"),
            "auth:400",
        ),
        (
            &format!("curve-client,{server_public},{client_secret}"),
            "auth:400",
        ),
    );
}

/// NULL with ZMQ_ZAP_DOMAIN set asks the server's ZAP handler: the domain it admits gets in
/// with its User-Id, another is refused with 400 on both sides.
#[test]
fn null_with_zap_domain_both_ways() {
    every_way(("null-zap:good", "ok"), ("null", "ok"));
    both_ways(
        "tcp",
        "dealerrouter",
        ("null-zap:bad", "auth:400"),
        ("null", "auth:400"),
    );
}

/// ZMQ_ZAP_ENFORCE_DOMAIN (draft, taken by libzmq 4.3.4): with a ZAP domain and no handler,
/// a CURVE or NULL server refuses (HANDSHAKE_FAILED_NO_DETAIL, EFAULT) and nothing is
/// delivered; without a domain, a CURVE server asks no handler at all, even one that would
/// refuse the client, and admits it (libzmq's "Stonehouse"). Without the option, a domain and
/// no handler admit, as before.
#[test]
fn zap_enforce_domain_both_ways() {
    let (server_public, server_secret) = curve_keys();
    let (_, client_secret) = curve_keys();
    // The key the refusing handler admits: not this client's.
    let (other_client, _) = curve_keys();
    let client = format!("curve-client,{server_public},{client_secret}");
    for (server, server_expects, client_expects) in [
        (
            format!("enforce/domain=global/curve-server,{server_secret}"),
            "nodetail:14",
            "none",
        ),
        (
            format!("enforce/curve-server-zap,{server_secret},{other_client}"),
            "ok-unasked",
            "ok",
        ),
        (
            format!("domain=global/curve-server,{server_secret}"),
            "ok",
            "ok",
        ),
    ] {
        both_ways(
            "tcp",
            "dealerrouter",
            (&server, server_expects),
            (&client, client_expects),
        );
    }
    both_ways(
        "ipc",
        "reqrep",
        ("enforce/domain=global/null", "nodetail:14"),
        ("null", "none"),
    );
}
