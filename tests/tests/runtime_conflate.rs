//! ZMQ_CONFLATE as libzmq does it: on DEALER, PULL, PUSH, PUB and SUB each peer's pipes hold
//! only the newest message with no HWM, so a slow conflating receiver reads the newest message
//! sent, a conflating sender never blocks and its slow peer still gets the newest, and every
//! other socket type ignores the option.
//!
//! Timing never decides an assertion: messages carry a sequence number, and the tests assert
//! "strictly increasing, the last one is the newest sent, then nothing". "Fewer than all were
//! delivered" is asserted only where it is certain: on inproc, where the sender fills the pipe
//! before the receiver looks, and where far more bytes were sent than the kernel's socket
//! buffers and the pipes could ever hold while the receiver was not reading.

use std::time::{Duration, Instant};

use ferromq::{Context, Error, RecvFlags, SendFlags, Socket, SocketType};

/// Bytes per message in the bulk tests: 100,000 of them (100 MB) is far beyond what loopback
/// socket buffers hold (a few MB), so most must have been conflated away.
const BULK_SIZE: usize = 1024;
const BULK_COUNT: u32 = 100_000;
const TIMEOUT_MS: i32 = 10_000;

fn ipc_endpoint(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ferromq-conflate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    format!("ipc://{}", dir.join(name).display())
}

/// A message of `size` bytes (at least 4) starting with `seq`.
fn numbered(seq: u32, size: usize) -> Vec<u8> {
    let mut body = vec![0u8; size.max(4)];
    body[..4].copy_from_slice(&seq.to_be_bytes());
    body
}

fn seq_of(body: &[u8]) -> u32 {
    let head: [u8; 4] = body[..4].try_into().expect("a numbered message");
    u32::from_be_bytes(head)
}

fn ferro(ctx: &Context, kind: SocketType, conflate: bool) -> Socket {
    let mut s = ctx.socket(kind).expect("socket");
    s.set_conflate(conflate).expect("conflate");
    s.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
    s.set_sndtimeo(TIMEOUT_MS).expect("sndtimeo");
    s.set_linger(0).expect("linger");
    s
}

fn zmq_socket(ctx: &zmq::Context, kind: zmq::SocketType) -> zmq::Socket {
    let s = ctx.socket(kind).expect("libzmq socket");
    s.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
    s.set_sndtimeo(TIMEOUT_MS).expect("sndtimeo");
    s.set_linger(0).expect("linger");
    s
}

fn ferro_bind(s: &mut Socket, endpoint: &str) -> String {
    s.bind(endpoint).expect("bind");
    s.last_endpoint().expect("last endpoint")
}

/// Receives until the message numbered `newest` arrives, checking that the numbers only go
/// up; then checks that nothing else is waiting. Returns how many messages arrived.
fn drain_to_newest(mut recv: impl FnMut(bool) -> Option<Vec<u8>>, newest: u32) -> u32 {
    let mut last = None;
    let mut received = 0;
    while last != Some(newest) {
        let body = recv(false).expect("the newest message arrives within the timeout");
        let seq = seq_of(&body);
        assert!(
            last.is_none_or(|l| seq > l),
            "message {seq} after {last:?}: conflation reordered"
        );
        last = Some(seq);
        received += 1;
    }
    assert!(recv(true).is_none(), "nothing is left after the newest");
    received
}

fn ferro_recv(s: &mut Socket) -> impl FnMut(bool) -> Option<Vec<u8>> + '_ {
    move |dontwait| {
        let flags = if dontwait {
            RecvFlags::DONTWAIT
        } else {
            RecvFlags::empty()
        };
        match s.recv(flags) {
            Ok(m) => Some(m.as_slice().to_vec()),
            Err(Error::Again) => None,
            Err(e) => panic!("recv: {e:?}"),
        }
    }
}

fn zmq_recv(s: &zmq::Socket) -> impl FnMut(bool) -> Option<Vec<u8>> + '_ {
    move |dontwait| match s.recv_bytes(if dontwait { zmq::DONTWAIT } else { 0 }) {
        Ok(m) => Some(m),
        Err(zmq::Error::EAGAIN) => None,
        Err(e) => panic!("libzmq recv: {e:?}"),
    }
}

/// A conflating PULL that reads only after the sender is done gets only the newest message.
/// On inproc the sender writes straight into the pipe, so exactly one message is left.
#[test]
fn inproc_conflating_pull_reading_late_gets_only_the_newest() {
    let ctx = Context::new();
    let mut push = ferro(&ctx, SocketType::Push, false);
    push.bind("inproc://conflate-late").expect("bind");
    // On inproc the connecting socket's option decides, as in libzmq.
    let mut pull = ferro(&ctx, SocketType::Pull, true);
    pull.connect("inproc://conflate-late").expect("connect");
    for i in 0..10_000 {
        push.send(numbered(i, 8), SendFlags::DONTWAIT)
            .expect("a conflating pipe never refuses");
    }
    assert_eq!(drain_to_newest(ferro_recv(&mut pull), 9_999), 1);
}

/// A PUSH with SNDHWM 10 sends 100 MB to a conflating PULL that does not read: the PULL's
/// engine never stalls on a full pipe, so the sender never blocks, and what the PULL reads
/// afterwards ends with the newest message.
fn conflating_pull_never_backs_up_the_sender(
    send: &mut dyn FnMut(Vec<u8>) -> bool,
    pull: &mut Socket,
) {
    let started = Instant::now();
    for i in 0..BULK_COUNT {
        assert!(
            send(numbered(i, BULK_SIZE)),
            "send {i} timed out after {:?}: the receiver backed up",
            started.elapsed()
        );
    }
    let received = drain_to_newest(ferro_recv(pull), BULK_COUNT - 1);
    assert!(received < BULK_COUNT, "every message was queued");
}

#[test]
fn tcp_conflating_pull_from_libzmq_push_never_backs_up() {
    let ctx = Context::new();
    let mut pull = ferro(&ctx, SocketType::Pull, true);
    let endpoint = ferro_bind(&mut pull, "tcp://127.0.0.1:*");
    let zctx = zmq::Context::new();
    let push = zmq_socket(&zctx, zmq::PUSH);
    push.set_sndhwm(10).expect("sndhwm");
    push.connect(&endpoint).expect("connect");
    let mut send = |body: Vec<u8>| push.send(body, 0).is_ok();
    conflating_pull_never_backs_up_the_sender(&mut send, &mut pull);
}

#[test]
fn ipc_conflating_pull_from_ferromq_push_never_backs_up() {
    let ctx = Context::new();
    let mut pull = ferro(&ctx, SocketType::Pull, true);
    let endpoint = ferro_bind(&mut pull, &ipc_endpoint("pull.sock"));
    let mut push = ferro(&ctx, SocketType::Push, false);
    push.set_sndhwm(10).expect("sndhwm");
    push.connect(&endpoint).expect("connect");
    let mut send = |body: Vec<u8>| push.send(body, SendFlags::empty()).is_ok();
    conflating_pull_never_backs_up_the_sender(&mut send, &mut pull);
}

/// A conflating PUSH facing a slow libzmq PULL (RCVHWM 1, reading only afterwards) never
/// blocks or refuses, and the PULL's last message is the newest sent.
#[test]
fn tcp_conflating_push_to_slow_libzmq_pull_delivers_the_newest() {
    let zctx = zmq::Context::new();
    let pull = zmq_socket(&zctx, zmq::PULL);
    pull.set_rcvhwm(1).expect("rcvhwm");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = pull
        .get_last_endpoint()
        .expect("last endpoint")
        .expect("utf-8");
    let ctx = Context::new();
    let mut push = ferro(&ctx, SocketType::Push, true);
    push.connect(&endpoint).expect("connect");
    for i in 0..BULK_COUNT {
        push.send(numbered(i, BULK_SIZE), SendFlags::DONTWAIT)
            .expect("a conflating PUSH never refuses");
    }
    let received = drain_to_newest(zmq_recv(&pull), BULK_COUNT - 1);
    assert!(received < BULK_COUNT, "every message was delivered");
}

/// The same against a ferromq PULL over ipc; DEALER conflates the same way.
#[test]
fn ipc_conflating_push_and_dealer_to_slow_ferromq_peers_deliver_the_newest() {
    for (sender, receiver, name) in [
        (SocketType::Push, SocketType::Pull, "push.sock"),
        (SocketType::Dealer, SocketType::Dealer, "dealer.sock"),
    ] {
        let ctx = Context::new();
        let mut peer = ferro(&ctx, receiver, false);
        peer.set_rcvhwm(1).expect("rcvhwm");
        let endpoint = ferro_bind(&mut peer, &ipc_endpoint(name));
        let mut s = ferro(&ctx, sender, true);
        s.connect(&endpoint).expect("connect");
        for i in 0..BULK_COUNT {
            s.send(numbered(i, BULK_SIZE), SendFlags::DONTWAIT)
                .expect("a conflating sender never refuses");
        }
        let received = drain_to_newest(ferro_recv(&mut peer), BULK_COUNT - 1);
        assert!(
            received < BULK_COUNT,
            "{sender:?}: every message was delivered"
        );
    }
}

/// Sends numbered messages from `send` until the subscriber gets one: the subscription has
/// then reached the publisher. Returns the next number to send.
fn await_subscription(mut send: impl FnMut(u32), sub: &mut Socket) -> u32 {
    let deadline = Instant::now() + Duration::from_millis(TIMEOUT_MS as u64);
    let mut next = 0;
    loop {
        send(next);
        next += 1;
        if sub.recv(RecvFlags::DONTWAIT).is_ok() {
            // Whatever else of the warm-up is waiting goes too.
            while sub.recv(RecvFlags::DONTWAIT).is_ok() {}
            return next;
        }
        assert!(Instant::now() < deadline, "the subscription never arrived");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A conflating SUB behind a libzmq PUB (SNDHWM 0, so libzmq drops nothing) reads the newest
/// message when it reads late; the SUB's subscription still went up (that direction is a
/// queue).
#[test]
fn tcp_conflating_sub_from_libzmq_pub_gets_the_newest() {
    let zctx = zmq::Context::new();
    let publisher = zmq_socket(&zctx, zmq::PUB);
    publisher.set_sndhwm(0).expect("sndhwm");
    publisher.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = publisher
        .get_last_endpoint()
        .expect("last endpoint")
        .expect("utf-8");
    let ctx = Context::new();
    let mut sub = ferro(&ctx, SocketType::Sub, true);
    sub.set_subscribe(b"").expect("subscribe");
    sub.connect(&endpoint).expect("connect");
    let first = await_subscription(
        |i| publisher.send(numbered(i, 8), 0).expect("pub send"),
        &mut sub,
    );
    let last = first + 10_000;
    for i in first..=last {
        publisher.send(numbered(i, 64), 0).expect("pub send");
    }
    drain_to_newest(ferro_recv(&mut sub), last);
}

/// ferromq PUB and SUB, both conflating: over inproc the SUB that reads late gets exactly the
/// newest; several subscriptions all reach the PUB (the subscription direction queues).
#[test]
fn inproc_conflating_pub_sub_keep_every_subscription_and_the_newest_message() {
    let ctx = Context::new();
    let mut publisher = ferro(&ctx, SocketType::Pub, true);
    publisher.bind("inproc://conflate-pubsub").expect("bind");
    let mut sub = ferro(&ctx, SocketType::Sub, true);
    for topic in [b"a".as_slice(), b"b", b"c"] {
        sub.set_subscribe(topic).expect("subscribe");
    }
    sub.connect("inproc://conflate-pubsub").expect("connect");
    for topic in ["a", "b", "c"] {
        // The PUB takes subscriptions in when it next looks at its pipes.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            publisher
                .send(format!("{topic}-probe"), SendFlags::empty())
                .expect("send");
            if sub.recv(RecvFlags::DONTWAIT).is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "subscription {topic} never arrived"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        for i in 0..100 {
            publisher
                .send(format!("{topic}{i}"), SendFlags::DONTWAIT)
                .expect("send");
        }
        let m = sub
            .recv(RecvFlags::DONTWAIT)
            .unwrap_or_else(|e| panic!("topic {topic}: {e:?}"));
        assert_eq!(m.as_slice(), format!("{topic}99").as_bytes());
        assert!(matches!(sub.recv(RecvFlags::DONTWAIT), Err(Error::Again)));
    }
}

/// Multipart messages conflate whole (libzmq's double buffer keeps single frames and can tear
/// them): the reader gets every frame of the newest message and none of an older one.
#[test]
fn inproc_multipart_messages_conflate_whole() {
    let ctx = Context::new();
    let mut pull = ferro(&ctx, SocketType::Pull, false);
    pull.bind("inproc://conflate-multipart").expect("bind");
    let mut push = ferro(&ctx, SocketType::Push, true);
    push.connect("inproc://conflate-multipart")
        .expect("connect");
    for i in 0..100u32 {
        let parts = [numbered(i, 4), numbered(i, 8), numbered(i, 16)];
        push.send_multipart(parts, SendFlags::DONTWAIT)
            .expect("send");
    }
    let parts = pull.recv_multipart(RecvFlags::empty()).expect("recv");
    let got: Vec<(u32, usize)> = parts.iter().map(|p| (seq_of(p), p.len())).collect();
    assert_eq!(got, [(99, 4), (99, 8), (99, 16)]);
    assert!(matches!(pull.recv(RecvFlags::DONTWAIT), Err(Error::Again)));
}

/// PAIR (like REQ, REP, ROUTER, XPUB, XSUB) ignores ZMQ_CONFLATE, as libzmq does: everything
/// is queued and delivered.
#[test]
fn tcp_pair_ignores_conflate_and_queues_everything() {
    let ctx = Context::new();
    let mut a = ferro(&ctx, SocketType::Pair, true);
    let endpoint = ferro_bind(&mut a, "tcp://127.0.0.1:*");
    let mut b = ferro(&ctx, SocketType::Pair, true);
    b.connect(&endpoint).expect("connect");
    for i in 0..500 {
        b.send(numbered(i, 8), SendFlags::empty()).expect("send");
    }
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..500 {
        let m = a.recv(RecvFlags::empty()).expect("every message is queued");
        assert_eq!(seq_of(m.as_slice()), i);
    }
}

/// On inproc the connecting socket's ZMQ_CONFLATE decides (libzmq creates both pipes with the
/// connector's options): a conflating PULL that binds still queues, in libzmq and here.
#[test]
fn inproc_conflate_on_the_binding_side_is_ignored_like_libzmq() {
    let zctx = zmq::Context::new();
    let zpull = zmq_socket(&zctx, zmq::PULL);
    zpull.set_conflate(true).expect("conflate");
    zpull.bind("inproc://conflate-binder").expect("bind");
    let zpush = zmq_socket(&zctx, zmq::PUSH);
    zpush.connect("inproc://conflate-binder").expect("connect");

    let ctx = Context::new();
    let mut pull = ferro(&ctx, SocketType::Pull, true);
    pull.bind("inproc://conflate-binder").expect("bind");
    let mut push = ferro(&ctx, SocketType::Push, false);
    push.connect("inproc://conflate-binder").expect("connect");

    for i in 0..10 {
        zpush.send(numbered(i, 8), 0).expect("libzmq send");
        push.send(numbered(i, 8), SendFlags::empty()).expect("send");
    }
    for i in 0..10 {
        assert_eq!(seq_of(&zpull.recv_bytes(0).expect("libzmq recv")), i);
        assert_eq!(
            seq_of(pull.recv(RecvFlags::empty()).expect("recv").as_slice()),
            i
        );
    }
}
