//! A C program linked with ferromq talks to the same C program linked with real libzmq 4.3.4
//! (`tests/c/peer.c`, built twice), over tcp and ipc, for every socket pairing, with each
//! library as the server (binding) and as the client (connecting).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

const LIMIT: Duration = Duration::from_secs(20);

/// The two builds of peer.c: (ferromq, libzmq), compiled once per test process.
fn peers() -> &'static (PathBuf, PathBuf) {
    static PEERS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PEERS.get_or_init(|| {
        let scratch = harness::scratch_dir("c-interop");
        let source = harness::c_source("peer.c");
        let ours = scratch.join("peer-ferromq");
        let theirs = scratch.join("peer-libzmq");
        harness::compile_against_ferromq(&source, &scratch, &ours);
        harness::compile_against_libzmq(&source, &theirs);
        (ours, theirs)
    })
}

/// Runs `server` (binding `endpoint`) and then `client` (connecting to what the server
/// printed); both must exit 0.
fn exchange(server: &Path, client: &Path, pattern: &str, endpoint: &str) {
    let mut srv = Command::new(server)
        .args(["server", pattern, endpoint])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut line = String::new();
    let stdout = srv.stdout.take().expect("piped stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the bound endpoint");
    let bound = line.trim().to_string();
    assert!(!bound.is_empty(), "server printed no endpoint");
    let cli = Command::new(client)
        .args(["client", pattern, &bound])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client");
    let cli_out = harness::wait_bounded(cli, LIMIT);
    let srv_out = harness::wait_bounded(srv, LIMIT);
    assert!(
        cli_out.status.success() && srv_out.status.success(),
        "{pattern} over {endpoint}: server {} / client {}\nserver: {}\nclient: {}",
        server.display(),
        client.display(),
        harness::text(&srv_out),
        harness::text(&cli_out)
    );
}

/// Every combination for one pattern: tcp and ipc, ferromq serving libzmq and the reverse.
fn both_ways(pattern: &str) {
    let (ours, theirs) = peers();
    let ipc_dir = harness::scratch_dir(&format!("c-interop-{pattern}"));
    for (server, client, who) in [(ours, theirs, "ferromq"), (theirs, ours, "libzmq")] {
        exchange(server, client, pattern, "tcp://127.0.0.1:*");
        let path = ipc_dir.join(format!("{who}.sock"));
        exchange(
            server,
            client,
            pattern,
            &format!("ipc://{}", path.display()),
        );
    }
}

#[test]
fn req_rep() {
    both_ways("reqrep");
}

#[test]
fn push_pull() {
    both_ways("pushpull");
}

#[test]
fn pull_push() {
    both_ways("pullpush");
}

#[test]
fn xpub_sub() {
    both_ways("xpubsub");
}

#[test]
fn sub_xpub() {
    both_ways("subxpub");
}

#[test]
fn router_dealer() {
    both_ways("routerdealer");
}

#[test]
fn dealer_router() {
    both_ways("dealerrouter");
}

#[test]
fn pair() {
    both_ways("pair");
}
