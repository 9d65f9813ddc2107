//! Hostile peers cannot make a socket hold unbounded memory (issue 14): a raw TCP peer that
//! announces 2^62 bytes, in its READY or in a data frame after the handshake, is disconnected
//! within a second with default options while the process's RSS stays within 64 MiB of where
//! it started, even as the peer keeps sending.
//!
//! The tests take one lock so that no other test of this file allocates while one measures RSS,
//! or starts an I/O thread while one watches its own.

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

/// A PULL bound to a tcp port (linger 0, a 5 s receive timeout) and a raw tcp stream connected
/// to it, which speaks whatever bytes the test writes.
fn pull_and_raw_peer(ctx: &Context) -> (Socket, TcpStream) {
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_linger(0).expect("linger");
    pull.set_rcvtimeo(5_000).expect("rcvtimeo");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let port = tcp_port(&pull.last_endpoint().expect("endpoint"));
    let raw = TcpStream::connect(("127.0.0.1", port)).expect("raw connect");
    (pull, raw)
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
/// its header (src/io/frame_limit.rs), as libzmq's failing allocation refuses it.
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

/// The 1 GiB frame scaled down by 4 for CI; the 50 ms bound is kept.
const BIG_FRAME: u64 = 256 * 1024 * 1024;
const MAX_ROUND_TRIP: Duration = Duration::from_millis(50);

/// A thread's time waiting for a CPU while runnable, from its /proc schedstat line (on a CPU,
/// waiting, timeslices; nanoseconds); None where the kernel does not keep it.
fn run_queue_wait(schedstat: &std::path::Path) -> Option<Duration> {
    let line = std::fs::read_to_string(schedstat).ok()?;
    let ns = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// The threads a round trip through one I/O thread runs on: this one and the I/O thread's.
/// What they spend waiting for a CPU is the machine's load, not the socket's doing; what is
/// left of a round trip is time the I/O thread spent on other work (or asleep) while the
/// message waited, which is what a huge frame must not cause.
struct RoundTripThreads {
    schedstats: Vec<std::path::PathBuf>,
}

impl RoundTripThreads {
    /// This thread's schedstat and those of the I/O threads not in `before`.
    fn new(before: &[std::path::PathBuf]) -> RoundTripThreads {
        let mut schedstats = vec![std::path::PathBuf::from("/proc/thread-self/schedstat")];
        schedstats.extend(io_threads().into_iter().filter(|t| !before.contains(t)));
        assert_eq!(schedstats.len(), 2, "one I/O thread: {schedstats:?}");
        RoundTripThreads { schedstats }
    }

    /// The threads' run-queue waits summed, if the kernel keeps them.
    fn waited(&self) -> Option<Duration> {
        self.schedstats.iter().map(|p| run_queue_wait(p)).sum()
    }
}

/// The schedstat files of this process's ferromq I/O threads.
fn io_threads() -> Vec<std::path::PathBuf> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| t.ok())
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|name| name.starts_with("ZMQbg/IO/"))
        })
        .map(|t| t.path().join("schedstat"))
        .collect()
}

/// While one raw peer streams a 256 MiB frame into a ROUTER as fast as loopback takes it,
/// another peer's round trips through the same socket (same I/O thread) stay fast: the big
/// body is read into one buffer reserved once, and the engine's turn budget applies while it
/// is read.
///
/// A round trip is timed less what its two threads spent waiting for a CPU: while the frame
/// streams the I/O thread is never idle, so on a loaded machine it competes for a CPU at every
/// hop. With wall time bounded, 4 of 30 runs failed at load average 6-9 (four busy loops on
/// the 2-core machine) and 14 of 25 at 5-11 (six), yet round trips of up to 222 ms had only
/// 1-2.3 ms that was not run-queue wait. Time the I/O thread spends on a CPU (the old growing
/// copy of the body: 130-250 ms) or asleep while the ping waits still counts.
#[test]
fn a_huge_frame_in_flight_does_not_stall_other_peers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = io_threads();
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.set_linger(0).expect("linger");
    router.set_rcvtimeo(5_000).expect("rcvtimeo");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    let mut dealer = ctx.socket(SocketType::Dealer).expect("dealer");
    dealer.set_linger(0).expect("linger");
    dealer.set_rcvtimeo(5_000).expect("rcvtimeo");
    dealer.connect(&endpoint).expect("connect");
    // One thread plays both sides (fewer threads to schedule on a busy CI machine); the big
    // message, when it arrives, is counted.
    let big = std::cell::Cell::new(0);
    let mut round_trip = |dealer: &mut Socket, threads: Option<&RoundTripThreads>| {
        let t = Instant::now();
        let waited = threads.and_then(RoundTripThreads::waited);
        dealer
            .send(
                ferromq::Bytes::from_static(b"ping"),
                ferromq::SendFlags::empty(),
            )
            .expect("send");
        loop {
            let frames = router
                .recv_multipart(ferromq::RecvFlags::empty())
                .expect("request");
            if frames[1].len() as u64 == BIG_FRAME {
                big.set(big.get() + 1);
                continue;
            }
            router
                .send_multipart(frames, ferromq::SendFlags::empty())
                .expect("echo");
            break;
        }
        let reply = dealer.recv(ferromq::RecvFlags::empty()).expect("reply");
        assert_eq!(reply.as_slice(), b"ping");
        let took = t.elapsed();
        let waited = waited
            .zip(threads.and_then(RoundTripThreads::waited))
            .map_or(Duration::ZERO, |(from, to)| to.saturating_sub(from));
        RoundTrip { took, waited }
    };
    for _ in 0..10 {
        round_trip(&mut dealer, None);
    }
    // The I/O thread starts with the context's first connection.
    let threads = RoundTripThreads::new(&before);

    // What is left of run-queue waits can still be long (a thread preempted while on a CPU,
    // a hypervisor's steal), so the bound must hold in one of five attempts (before the body
    // was read into one buffer, every attempt stalled 1.5-2 s, all of it on a CPU).
    let mut attempts = Vec::new();
    for _ in 0..5 {
        let worst = stream_big_frame(&endpoint, &mut dealer, &threads, &mut round_trip, &big);
        assert_eq!(
            big.get(),
            attempts.len() + 1,
            "the big message arrived once"
        );
        attempts.push(worst);
        if worst.stalled() < MAX_ROUND_TRIP {
            return;
        }
    }
    panic!("round trips stalled up to {attempts:?} while a {BIG_FRAME}-byte frame streamed in");
}

/// One round trip's wall time, and how much of it its threads spent waiting for a CPU.
#[derive(Debug, Clone, Copy, Default)]
struct RoundTrip {
    took: Duration,
    waited: Duration,
}

impl RoundTrip {
    /// The time not explained by the machine's load.
    fn stalled(&self) -> Duration {
        self.took.saturating_sub(self.waited)
    }
}

/// Streams one [`BIG_FRAME`] into `endpoint` from a raw peer while doing round trips; returns
/// the worst round trip seen while the frame streamed, once the frame has been delivered.
fn stream_big_frame(
    endpoint: &str,
    dealer: &mut Socket,
    threads: &RoundTripThreads,
    round_trip: &mut impl FnMut(&mut Socket, Option<&RoundTripThreads>) -> RoundTrip,
    delivered: &std::cell::Cell<usize>,
) -> RoundTrip {
    let before = delivered.get();
    let mut raw = TcpStream::connect(("127.0.0.1", tcp_port(endpoint))).expect("raw");
    let mut prefix = greeting();
    prefix.extend_from_slice(&ready(b"DEALER"));
    prefix.extend_from_slice(&long_header(false, BIG_FRAME));
    raw.write_all(&prefix).expect("prefix");
    let sender = std::thread::spawn(move || {
        let chunk = vec![0x5a_u8; 1 << 20];
        let t = Instant::now();
        for _ in 0..BIG_FRAME / (1 << 20) {
            raw.write_all(&chunk).expect("body");
        }
        (t.elapsed(), raw)
    });
    let mut worst = RoundTrip::default();
    let mut slowest = Duration::ZERO;
    let mut trips = 0;
    while !sender.is_finished() {
        let seen = delivered.get();
        let rt = round_trip(dealer, Some(threads));
        // The big message can arrive before the sender's thread is seen to end: the round
        // trip that takes it also frees it, 256 MiB back to the kernel on this thread (20 ms
        // of CPU measured), which is no stall of the I/O thread.
        if delivered.get() == seen {
            if rt.stalled() > worst.stalled() {
                worst = rt;
            }
            slowest = slowest.max(rt.took);
            trips += 1;
        }
    }
    let (took, _raw) = sender.join().expect("sender");
    eprintln!(
        "{BIG_FRAME} bytes sent in {took:?}; {trips} round trips meanwhile, slowest {slowest:?}; \
         worst less run-queue waits {:?} ({:?} less {:?})",
        worst.stalled(),
        worst.took,
        worst.waited
    );
    assert!(trips > 0);
    // The big message arrives, whole, once its last byte is in; the round trip that sees it
    // is not counted (it includes the delivery).
    let until = Instant::now() + Duration::from_secs(5);
    while delivered.get() == before && Instant::now() < until {
        round_trip(dealer, None);
    }
    worst
}

/// A received message larger than the I/O thread keeps buffers of is freed when the
/// application drops it, while its connection stays open and idle: the engine holds no handle
/// on the body's buffer. (It used to keep one until the connection next read a frame or
/// ended, so the memory stayed resident and the I/O thread paid for freeing it, 16-46 ms for
/// 256 MiB in which none of its other connections moved.) Then a large frame with a small one
/// right behind it, whose header is read into the large buffer's tail: both arrive whole.
#[test]
fn a_large_message_is_freed_when_the_application_drops_it() {
    const LARGE: usize = 64 * 1024 * 1024;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let (mut pull, mut raw) = pull_and_raw_peer(&ctx);
    let large_frame = {
        let mut f = long_header(false, LARGE as u64);
        f.resize(f.len() + LARGE, 0x5a);
        f
    };
    let mut wire = greeting();
    wire.extend_from_slice(&ready(b"PUSH"));
    wire.extend_from_slice(&large_frame);
    let sender = std::thread::spawn(move || {
        raw.write_all(&wire).expect("send");
        raw
    });
    let large = pull.recv(ferromq::RecvFlags::empty()).expect("large");
    assert_eq!(large.len(), LARGE);
    let mut raw = sender.join().expect("sender");
    let held = vm_rss_kib();
    drop(large);
    let freed = vm_rss_kib();
    assert!(
        freed + (LARGE as u64 / 1024) * 3 / 4 < held,
        "RSS {held} KiB with the message, {freed} KiB after dropping it"
    );

    let mut wire = large_frame;
    wire.extend_from_slice(b"\x00\x05after");
    // The peer stays open until all is read: closed with our greeting unread, it would
    // reset the connection.
    let sender = std::thread::spawn(move || {
        raw.write_all(&wire).expect("send");
        raw
    });
    let large = pull.recv(ferromq::RecvFlags::empty()).expect("large");
    assert_eq!(large.len(), LARGE);
    assert!(large.as_slice().iter().all(|&b| b == 0x5a));
    let after = pull.recv(ferromq::RecvFlags::empty()).expect("after");
    assert_eq!(after.as_slice(), b"after");
    let _raw = sender.join().expect("sender");
}

/// A small message, then a large body that arrives in two parts with a pause between them,
/// then, after another pause, a small frame: all are delivered. From a peer that streams (a
/// message delivered, nothing written back), the engine asks the kernel (SO_RCVLOWAT) not to
/// wake it before the rest of a large body is queued, and must ask for the first byte again
/// once the body is in, or the small frame would wait in the kernel (issue 18).
#[test]
fn a_large_body_in_parts_then_a_small_frame_both_arrive() {
    const LARGE: usize = 256 * 1024;
    const FIRST: usize = 100 * 1024;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let (mut pull, mut raw) = pull_and_raw_peer(&ctx);
    let mut wire = greeting();
    wire.extend_from_slice(&ready(b"PUSH"));
    wire.extend_from_slice(b"\x00\x05first");
    let mut large_head = long_header(false, LARGE as u64);
    let body: Vec<u8> = (0..LARGE).map(|i| (i % 251) as u8).collect();
    let expected = body.clone();
    let sender = std::thread::spawn(move || {
        raw.write_all(&wire).expect("send head");
        // The first message is delivered before the large one starts.
        std::thread::sleep(Duration::from_millis(100));
        large_head.extend_from_slice(&body[..FIRST]);
        raw.write_all(&large_head).expect("send first part");
        std::thread::sleep(Duration::from_millis(300));
        raw.write_all(&body[FIRST..]).expect("send rest");
        std::thread::sleep(Duration::from_millis(300));
        raw.write_all(b"\x00\x05after").expect("send small");
        raw
    });
    let first = pull.recv(ferromq::RecvFlags::empty()).expect("first");
    assert_eq!(first.as_slice(), b"first");
    let large = pull.recv(ferromq::RecvFlags::empty()).expect("large");
    assert_eq!(large.as_slice(), &expected[..]);
    let after = pull
        .recv(ferromq::RecvFlags::empty())
        .expect("small frame after the large one");
    assert_eq!(after.as_slice(), b"after");
    let _raw = sender.join().expect("sender");
}

/// After the handshake, commands that cannot be parsed are ignored as unknown commands are
/// (RFC 37), as libzmq ignores them: an empty command frame, a name length of 0 or past the
/// frame, a PING with a 1-byte TTL. The connection stays up, the short PING gets no PONG, the
/// next good PING gets its PONG and the next message arrives.
#[test]
fn unparseable_commands_after_the_handshake_are_ignored() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let (mut pull, mut raw) = pull_and_raw_peer(&ctx);
    let mut wire = greeting();
    wire.extend_from_slice(&ready(b"PUSH"));
    wire.extend_from_slice(b"\x04\x00"); // empty command frame
    wire.extend_from_slice(b"\x04\x01\x00"); // name length 0
    wire.extend_from_slice(b"\x04\x02\x09S"); // name length past the frame
    wire.extend_from_slice(b"\x04\x06\x04PING\x01"); // 1-byte TTL
    wire.extend_from_slice(b"\x04\x09\x04PING\x00\x00ok"); // a good PING, context "ok"
    wire.extend_from_slice(b"\x00\x05after");
    raw.write_all(&wire).expect("write");
    let got = pull
        .recv(ferromq::RecvFlags::empty())
        .expect("message after the commands");
    assert_eq!(got.as_slice(), b"after");
    // What came back: our greeting, our READY, then exactly one PONG, for the good PING.
    raw.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("read timeout");
    let mut back = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n) = raw.read(&mut buf) {
        if n == 0 {
            break;
        }
        back.extend_from_slice(&buf[..n]);
    }
    assert!(back.len() > 66, "greeting and READY: {back:?}");
    let ready_len = usize::from(back[65]);
    let after_ready = &back[66 + ready_len..];
    assert_eq!(after_ready, b"\x04\x07\x04PONGok");
}
