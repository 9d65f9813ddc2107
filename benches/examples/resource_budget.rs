//! Measures what docs/reliability.md states as ferromq's resource budget: the resident memory
//! one idle established connection, one connection stuck in its handshake, and one queued
//! message cost, each as the RSS growth over many of them divided by their number.
//!
//! `cargo run --release -p ferromq-benches --example resource_budget -- [connections] [messages]`
//! (defaults 2000 and 200000). Raw TCP peers from this process stand in for remote peers; their
//! own user-space memory is a few bytes each (the kernel's socket buffers are not RSS).
//! Not part of any test run.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use ferromq::{Bytes, Context, SendFlags, SocketType};

fn vm_rss_kib() -> u64 {
    ferromq_benches::proc_status_kib("VmRSS")
}

fn greeting() -> Vec<u8> {
    let mut g = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    g.extend_from_slice(b"NULL");
    g.resize(64, 0);
    g
}

fn ready_dealer() -> Vec<u8> {
    let mut body = vec![5];
    body.extend_from_slice(b"READY\x0bSocket-Type\0\0\0\x06DEALER");
    let mut frame = vec![0x04, u8::try_from(body.len()).unwrap_or(0)];
    frame.extend_from_slice(&body);
    frame
}

/// Opens `n` raw connections to `port`, each sending `prefix`, and returns the RSS growth per
/// connection in KiB once they have settled.
fn per_connection(port: u16, n: usize, prefix: &[u8]) -> (f64, Vec<TcpStream>) {
    let before = vm_rss_kib();
    let mut peers = Vec::with_capacity(n);
    for _ in 0..n {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
            break;
        };
        let _ = s.write_all(prefix);
        peers.push(s);
    }
    std::thread::sleep(Duration::from_secs(3));
    let after = vm_rss_kib();
    (
        after.saturating_sub(before) as f64 / peers.len().max(1) as f64,
        peers,
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let conns: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let msgs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let ctx = Context::new();

    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    let port: u16 = endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    // Warm up the runtime (threads, first buffers) so it is not charged to the first peers.
    let (_, warm) = per_connection(port, 10, &[greeting(), ready_dealer()].concat());
    drop(warm);
    std::thread::sleep(Duration::from_secs(1));

    let (handshaking, hs_peers) = per_connection(port, conns, &greeting());
    println!("connection in its handshake (greeting only): {handshaking:.1} KiB each ({conns})");
    drop(hs_peers);
    std::thread::sleep(Duration::from_secs(2));
    let full = [greeting(), ready_dealer()].concat();
    let (idle, idle_peers) = per_connection(port, conns, &full);
    println!("idle established connection: {idle:.1} KiB each ({conns})");
    drop(idle_peers);

    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvhwm(0).expect("rcvhwm");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.set_sndhwm(0).expect("sndhwm");
    push.connect(&pull.last_endpoint().expect("endpoint"))
        .expect("connect");
    for size in [8usize, 1024] {
        std::thread::sleep(Duration::from_secs(1));
        let before = vm_rss_kib();
        let body = Bytes::from(vec![7u8; size]);
        for _ in 0..msgs {
            push.send(body.clone(), SendFlags::empty()).expect("send");
        }
        std::thread::sleep(Duration::from_secs(3));
        let after = vm_rss_kib();
        let per = (after.saturating_sub(before) as f64 * 1024.0) / msgs as f64;
        println!("queued {size}-byte message (unread at the PULL): {per:.0} B each ({msgs})");
        // Drain so the next size starts from empty queues.
        for _ in 0..msgs {
            pull.recv(ferromq::RecvFlags::empty()).expect("recv");
        }
    }
}
