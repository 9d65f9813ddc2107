//! Arbitrary bytes from a raw peer into a real ferromq socket: the handshake task, the hand-off
//! to an I/O thread, the engine's read path, decoder and command handling, and the socket's
//! pattern, all running as in production (over ipc, so no port is taken).
//!
//! Input layout: byte 0 picks what goes in front of the rest (bits 0..=1: 0 nothing, 1 a valid
//! NULL 3.1 greeting, 2 or 3 a greeting and a DEALER READY, so the fuzzer reaches the engine
//! without rediscovering the handshake) and how the rest is written (bits 2..=4: chunk size
//! 2^n bytes); the rest is what the peer sends. Invariants checked after every input:
//! - nothing panics, on any thread (a panic aborts the fuzzer);
//! - every message the ROUTER delivers has its routing-id frame first;
//! - the socket keeps serving: a well-behaved DEALER's round trip through the ROUTER completes
//!   within 5 s of the hostile peer's bytes, so no input stalls the I/O thread.
//!
//! A blocking call that a signal interrupts returns `Error::Interrupted` (EINTR, as `zmq_recv`
//! does), and libFuzzer's `-timeout` watchdog is a SIGALRM every `timeout / 2 + 1` seconds,
//! so the round trip retries an interrupted call, as an application does, until 5 s are up.
#![no_main]

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ferromq::{Bytes, Context, RecvFlags, SendFlags, Socket, SocketType};
use libfuzzer_sys::fuzz_target;

struct Rig {
    _ctx: Context,
    router: Socket,
    dealer: Socket,
    path: std::path::PathBuf,
}

fn rig() -> &'static Mutex<Rig> {
    static RIG: OnceLock<Mutex<Rig>> = OnceLock::new();
    RIG.get_or_init(|| {
        let ctx = Context::new();
        let path = std::env::temp_dir().join(format!("ferromq-fuzz-{}.sock", std::process::id()));
        let endpoint = format!("ipc://{}", path.display());
        let mut router = ctx.socket(SocketType::Router).expect("router");
        router.set_rcvtimeo(5_000).expect("rcvtimeo");
        router.set_linger(0).expect("linger");
        // A frame within the RAM-plus-swap limit is reserved whole when its header arrives;
        // libFuzzer reports any malloc above its limit as a crash, so the fuzzed socket
        // takes frames up to 1 MiB (the exact-size reservation path still runs).
        router
            .set_option_raw(ferromq::option::ZMQ_MAXMSGSIZE, &(1i64 << 20).to_ne_bytes())
            .expect("maxmsgsize");
        router.bind(&endpoint).expect("bind");
        let mut dealer = ctx.socket(SocketType::Dealer).expect("dealer");
        dealer.set_rcvtimeo(5_000).expect("rcvtimeo");
        dealer.set_linger(0).expect("linger");
        dealer.set_routing_id(b"good").expect("routing id");
        dealer.connect(&endpoint).expect("connect");
        Mutex::new(Rig {
            _ctx: ctx,
            router,
            dealer,
            path,
        })
    })
}

fn greeting() -> Vec<u8> {
    let mut g = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    g.extend_from_slice(b"NULL");
    g.resize(64, 0);
    g
}

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut wire = match mode & 3 {
        0 => Vec::new(),
        1 => greeting(),
        _ => {
            let mut w = greeting();
            w.extend_from_slice(b"\x04\x19\x05READY\x0bSocket-Type\0\0\0\x06DEALER");
            w
        }
    };
    wire.extend_from_slice(rest);
    let chunk = 1usize << ((mode >> 2) & 7);
    let mut rig = rig().lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(mut peer) = UnixStream::connect(&rig.path) {
        for piece in wire.chunks(chunk) {
            if peer.write_all(piece).is_err() {
                break;
            }
        }
    }
    // The peer is closed here; the socket must still serve the good client.
    let deadline = Instant::now() + Duration::from_secs(5);
    retry(deadline, || {
        rig.dealer
            .send(Bytes::from_static(b"alive"), SendFlags::empty())
            .map_err(ferromq::Error::from)
    })
    .expect("send");
    loop {
        let frames = retry(deadline, || rig.router.recv_multipart(RecvFlags::empty()))
            .expect("the ROUTER stopped serving after this input");
        assert!(frames.len() >= 2, "a ROUTER message without its routing id");
        if frames[0].as_ref() == b"good" && frames[1].as_ref() == b"alive" {
            retry(deadline, || {
                rig.router
                    .send_multipart(frames.clone(), SendFlags::empty())
                    .map_err(ferromq::Error::from)
            })
            .expect("echo");
            break;
        }
    }
    let reply = retry(deadline, || rig.dealer.recv(RecvFlags::empty())).expect("reply");
    assert_eq!(reply.as_slice(), b"alive");
}

/// Calls `f` again while it is interrupted by a signal and `deadline` has not passed.
fn retry<T>(deadline: Instant, mut f: impl FnMut() -> ferromq::Result<T>) -> ferromq::Result<T> {
    loop {
        match f() {
            Err(ferromq::Error::Interrupted) if Instant::now() < deadline => {}
            result => return result,
        }
    }
}
