//! Soak scenario (issue 14): one ferromq ROUTER serving, for a given time, at once
//! - well-behaved DEALER clients doing request/reply with sequence numbers, restarted (closed
//!   and recreated) every few seconds;
//! - a mass of idle raw connections that completed the handshake;
//! - hostile raw peers in a loop: garbage, 2^62-byte READY and data-frame headers, wrong
//!   greetings;
//! - slow peers: a large frame header followed by a trickle, and peers that send requests but
//!   never read the replies (the ROUTER drops what exceeds their HWM, as libzmq does).
//!
//! Every 5 s and at the end it prints RSS, open fds and message counts, and at the end checks
//! that the well-behaved clients lost, duplicated or reordered nothing.
//!
//! `cargo run --release -p ferromq-benches --example soak -- [seconds] [idle connections]`
//! (defaults 60 and 2000; 10,000 idle connections need `ulimit -n` above 20,000). Not part of
//! any test run.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferromq::{Bytes, Context, RecvFlags, SendFlags, Socket, SocketType};
use ferromq_benches::proc_status_kib;

const CLIENTS: usize = 8;
const CLIENT_LIFE: Duration = Duration::from_secs(3);

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    replies: AtomicU64,
    lost: AtomicU64,
    restarts: AtomicU64,
    hostile: AtomicU64,
    slow: AtomicU64,
}

fn greeting() -> Vec<u8> {
    let mut g = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    g.extend_from_slice(b"NULL");
    g.resize(64, 0);
    g
}

fn handshake_dealer() -> Vec<u8> {
    let mut w = greeting();
    let body = b"\x05READY\x0bSocket-Type\0\0\0\x06DEALER";
    w.extend_from_slice(&[0x04, u8::try_from(body.len()).unwrap_or(0)]);
    w.extend_from_slice(body);
    w
}

fn long_header(flags: u8, size: u64) -> Vec<u8> {
    let mut h = vec![flags];
    h.extend_from_slice(&size.to_be_bytes());
    h
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// One well-behaved client's life: requests with increasing sequence numbers, each reply
/// checked; before closing it waits for every outstanding reply, so nothing may be lost.
fn client(ctx: &Context, endpoint: &str, counts: &Counts, stop: &AtomicBool) {
    let Ok(mut s) = ctx.socket(SocketType::Dealer) else {
        return;
    };
    let _ = s.set_rcvtimeo(5_000);
    let _ = s.set_linger(1_000);
    if s.connect(endpoint).is_err() {
        return;
    }
    let born = Instant::now();
    let mut seq = 0u64;
    while born.elapsed() < CLIENT_LIFE && !stop.load(Ordering::Relaxed) {
        let window = 16;
        for i in 0..window {
            let body = Bytes::copy_from_slice(&(seq + i).to_be_bytes());
            if s.send(body, SendFlags::empty()).is_err() {
                counts.lost.fetch_add(1, Ordering::Relaxed);
            }
            counts.requests.fetch_add(1, Ordering::Relaxed);
        }
        for i in 0..window {
            match s.recv(RecvFlags::empty()) {
                Ok(m) if m.as_slice() == (seq + i).to_be_bytes() => {
                    counts.replies.fetch_add(1, Ordering::Relaxed);
                }
                _ => {
                    counts.lost.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        seq += window;
    }
    counts.restarts.fetch_add(1, Ordering::Relaxed);
}

/// Hostile peers, one after the other, forever.
fn hostile(port: u16, counts: &Counts, stop: &AtomicBool) {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
            continue;
        };
        let mut wire = match n % 5 {
            0 => (0..200u32).map(|i| (i * 37 % 251) as u8).collect(),
            1 => [greeting(), long_header(0x06, 1 << 62)].concat(),
            2 => [handshake_dealer(), long_header(0x02, 1 << 62)].concat(),
            3 => b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            _ => [
                handshake_dealer(),
                b"\x04\x00\x04\x01\x00\x04\x06\x04PING\x01".to_vec(),
            ]
            .concat(),
        };
        wire.extend_from_slice(&[0x5a; 4096]);
        let _ = s.write_all(&wire);
        let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
        let mut buf = [0u8; 512];
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        n += 1;
        counts.hostile.fetch_add(1, Ordering::Relaxed);
    }
}

/// Slow peers: a 64 MiB frame trickled 1 KiB at a time, and a client that never reads.
fn slow(port: u16, counts: &Counts, stop: &AtomicBool) {
    let Ok(mut trickle) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let _ = trickle.write_all(&[handshake_dealer(), long_header(0x02, 64 << 20)].concat());
    let Ok(mut deaf) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let _ = deaf.write_all(&handshake_dealer());
    let request = b"\x00\x08deafdeaf";
    while !stop.load(Ordering::Relaxed) {
        let _ = trickle.write_all(&[0x33; 1024]);
        let _ = deaf.set_write_timeout(Some(Duration::from_millis(10)));
        let _ = deaf.write_all(request);
        counts.slow.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn report(label: &str, start_rss: u64, counts: &Counts) {
    println!(
        "{label}: RSS {} MiB (start {} MiB), fds {}, requests {}, replies {}, lost {}, \
         client restarts {}, hostile connections {}, slow-peer writes {}",
        proc_status_kib("VmRSS") / 1024,
        start_rss / 1024,
        open_fds(),
        counts.requests.load(Ordering::Relaxed),
        counts.replies.load(Ordering::Relaxed),
        counts.lost.load(Ordering::Relaxed),
        counts.restarts.load(Ordering::Relaxed),
        counts.hostile.load(Ordering::Relaxed),
        counts.slow.load(Ordering::Relaxed),
    );
}

fn echo(mut router: Socket, stop: &AtomicBool) {
    let _ = router.set_rcvtimeo(100);
    while !stop.load(Ordering::Relaxed) {
        if let Ok(frames) = router.recv_multipart(RecvFlags::empty()) {
            // ROUTER drops replies to a peer at its HWM (the deaf one): HWM semantics.
            let _ = router.send_multipart(frames, SendFlags::DONTWAIT);
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let idle: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    let port: u16 = endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let start_rss = proc_status_kib("VmRSS");
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());

    // The echo stops last, so that every client gets the replies it waits for.
    let stop_echo = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop_echo);
    let echo_thread = std::thread::spawn(move || echo(router, &s));
    let mut threads = Vec::new();
    for _ in 0..CLIENTS {
        let (ctx, endpoint, c, s) = (
            ctx.clone(),
            endpoint.clone(),
            Arc::clone(&counts),
            Arc::clone(&stop),
        );
        threads.push(std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                client(&ctx, &endpoint, &c, &s);
            }
        }));
    }
    for _ in 0..2 {
        let (c, s) = (Arc::clone(&counts), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || hostile(port, &c, &s)));
    }
    let (c, s) = (Arc::clone(&counts), Arc::clone(&stop));
    threads.push(std::thread::spawn(move || slow(port, &c, &s)));
    let mut idle_peers = Vec::with_capacity(idle);
    let wire = handshake_dealer();
    for _ in 0..idle {
        if let Ok(mut p) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = p.write_all(&wire);
            idle_peers.push(p);
        }
    }
    println!("{} idle connections open", idle_peers.len());

    let until = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < until {
        std::thread::sleep(
            Duration::from_secs(5).min(until.saturating_duration_since(Instant::now())),
        );
        report("running", start_rss, &counts);
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    stop_echo.store(true, Ordering::Relaxed);
    let _ = echo_thread.join();
    drop(idle_peers);
    report("end", start_rss, &counts);
    let lost = counts.lost.load(Ordering::Relaxed);
    let (req, rep) = (
        counts.requests.load(Ordering::Relaxed),
        counts.replies.load(Ordering::Relaxed),
    );
    if lost == 0 && req == rep {
        println!("PASS: {rep} replies to {req} requests, none lost, duplicated or reordered");
    } else {
        println!("FAIL: {lost} lost or wrong out of {req} requests ({rep} replies)");
        std::process::exit(1);
    }
}
