//! Hostile peers cannot make a socket hold unbounded memory (issue 14): a raw TCP peer that
//! announces 2^62 bytes, in its READY or in a data frame after the handshake, is disconnected
//! within a second with default options while the process's RSS stays within 64 MiB of where
//! it started, even as the peer keeps sending.
//!
//! The tests take one lock so that no other test of this file allocates while one measures RSS.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferromq::monitor;
use ferromq::{Context, Socket, SocketType};
use ferromq_tests::{tcp_port, wait_for_event};

static SERIAL: Mutex<()> = Mutex::new(());

/// The RSS budget the issue allows one hostile connection.
const RSS_SLACK_KIB: u64 = 64 * 1024;
/// The most the hostile peer sends behind its header (enough to show unbounded buffering).
const FLOOD_BYTES: usize = 256 * 1024 * 1024;

/// This process's resident set, from /proc/self/status.
fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

fn greeting() -> Vec<u8> {
    let mut g = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    g.extend_from_slice(b"NULL");
    g.resize(64, 0);
    g
}

fn ready(socket_type: &[u8]) -> Vec<u8> {
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&u32::try_from(socket_type.len()).unwrap().to_be_bytes());
    body.extend_from_slice(socket_type);
    let mut frame = vec![0x04, u8::try_from(body.len()).unwrap()];
    frame.extend_from_slice(&body);
    frame
}

/// A long frame header (command or message) announcing `size` bytes.
fn long_header(command: bool, size: u64) -> Vec<u8> {
    let mut h = vec![if command { 0x06 } else { 0x02 }];
    h.extend_from_slice(&size.to_be_bytes());
    h
}

/// A PULL bound on tcp with default options, and a monitor on it.
fn pull_with_monitor(ctx: &Context, tag: &str) -> (Socket, Socket, u16) {
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_linger(0).expect("linger");
    let mon = format!("inproc://hostile-{tag}-{}", std::process::id());
    pull.monitor(&mon, monitor::EVENT_ALL).expect("monitor");
    let mut watcher = ctx.socket(SocketType::Pair).expect("pair");
    watcher.connect(&mon).expect("connect monitor");
    watcher.set_rcvtimeo(200).expect("rcvtimeo");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let port = tcp_port(&pull.last_endpoint().expect("endpoint"));
    (pull, watcher, port)
}

/// Sends `prefix`, then floods up to [`FLOOD_BYTES`] until the connection breaks. Returns how
/// long after the prefix the socket closed the connection (None if it did not within 5 s) and
/// the highest RSS seen meanwhile.
fn attack(port: u16, prefix: &[u8]) -> (Option<Duration>, u64) {
    let mut raw = TcpStream::connect(("127.0.0.1", port)).expect("raw connect");
    raw.write_all(prefix).expect("prefix");
    let sent = Instant::now();
    let mut writer = raw.try_clone().expect("clone");
    let flood = std::thread::spawn(move || {
        let chunk = vec![0x5a_u8; 1 << 20];
        let mut total = 0;
        while total < FLOOD_BYTES && writer.write_all(&chunk).is_ok() {
            total += chunk.len();
        }
    });
    raw.set_read_timeout(Some(Duration::from_millis(10)))
        .expect("read timeout");
    let mut peak = vm_rss_kib();
    let mut closed = None;
    let mut buf = [0u8; 4096];
    while sent.elapsed() < Duration::from_secs(5) {
        match raw.read(&mut buf) {
            Ok(0) => {
                closed = Some(sent.elapsed());
                break;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                closed = Some(sent.elapsed());
                break;
            }
        }
        peak = peak.max(vm_rss_kib());
    }
    // Shut down so that an unfixed socket's flood ends too.
    let _ = raw.shutdown(std::net::Shutdown::Both);
    flood.join().expect("flood thread");
    peak = peak.max(vm_rss_kib());
    (closed, peak)
}

/// Runs [`attack`] and checks the bounds: closed within 1 s, RSS within 64 MiB.
fn assert_cut_off(port: u16, prefix: &[u8]) {
    let start = vm_rss_kib();
    let (closed, peak) = attack(port, prefix);
    let closed = closed.expect("connection not closed within 5 s");
    assert!(closed < Duration::from_secs(1), "closed after {closed:?}");
    assert!(
        peak < start + RSS_SLACK_KIB,
        "RSS went from {start} KiB to {peak} KiB"
    );
}

#[test]
fn ready_announcing_2_pow_62_bytes_is_refused_at_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let (_pull, mut watcher, port) = pull_with_monitor(&ctx, "ready");
    let mut prefix = greeting();
    prefix.extend_from_slice(&long_header(true, 1 << 62));
    assert_cut_off(port, &prefix);
    let (ev, _) = wait_for_event(&mut watcher, monitor::EVENT_HANDSHAKE_FAILED_PROTOCOL);
    assert_eq!(ev.value, ferromq_zmtp::protocol_error::ZMTP_UNSPECIFIED);
}

/// With MAXMSGSIZE -1 (the default) a frame beyond what the process could hold is refused at
/// its header (src/frame_limit.rs), as libzmq's failing allocation refuses it.
#[test]
fn data_frame_announcing_2_pow_62_bytes_is_refused_at_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let (_pull, mut watcher, port) = pull_with_monitor(&ctx, "data");
    let mut prefix = greeting();
    prefix.extend_from_slice(&ready(b"PUSH"));
    prefix.extend_from_slice(&long_header(false, 1 << 62));
    assert_cut_off(port, &prefix);
    wait_for_event(&mut watcher, monitor::EVENT_HANDSHAKE_SUCCEEDED);
    wait_for_event(&mut watcher, monitor::EVENT_DISCONNECTED);
}
