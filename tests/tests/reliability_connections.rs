//! Scale and back-pressure: 1,000 concurrent DEALERs on one ROUTER are all served; a peer
//! that stops reading makes PUSH wait (EAGAIN with DONTWAIT or at SNDTIMEO) at the HWM,
//! makes ROUTER drop (or EAGAIN / EHOSTUNREACH with ROUTER_MANDATORY), and memory stays
//! bounded while messages are refused or dropped.

use std::time::{Duration, Instant};

use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};

const CONNECTIONS: usize = 1_000;

/// Each connection costs three descriptors here (the DEALER's eventfd, both TCP ends).
fn ensure_fd_limit(needed: u64) {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= needed {
        return;
    }
    let maximum = limit.maximum.unwrap_or(u64::MAX);
    assert!(
        maximum >= needed,
        "RLIMIT_NOFILE hard limit {maximum} is below the {needed} this test needs"
    );
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(needed),
            maximum: limit.maximum,
        },
    )
    .expect("raise RLIMIT_NOFILE");
}

/// Resident memory in bytes (Linux /proc).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("rss pages");
    pages * 4096
}

#[test]
fn a_thousand_dealers_are_all_served() {
    ensure_fd_limit(CONNECTIONS as u64 * 4 + 256);
    let started = Instant::now();
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    router.set_rcvtimeo(30_000).expect("rcvtimeo");
    let server = std::thread::spawn(move || {
        for _ in 0..CONNECTIONS {
            let mut req = router.recv_multipart(RecvFlags::empty()).expect("request");
            let body = req.pop().expect("body");
            req.push(bytes::Bytes::from([b"re:".as_slice(), &body].concat()));
            router
                .send_multipart(req, SendFlags::empty())
                .expect("reply");
        }
        router
    });
    let mut dealers = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        let mut d = ctx.socket(SocketType::Dealer).expect("dealer");
        d.set_linger(0).expect("linger");
        d.set_rcvtimeo(30_000).expect("rcvtimeo");
        d.connect(&endpoint).expect("connect");
        d.send(format!("{i}"), SendFlags::empty()).expect("send");
        dealers.push(d);
    }
    for (i, d) in dealers.iter_mut().enumerate() {
        let reply = d.recv(RecvFlags::empty()).expect("reply");
        assert_eq!(reply.as_slice(), format!("re:{i}").as_bytes());
    }
    let _router = server.join().expect("server");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn push_to_a_peer_that_stops_reading_blocks_at_the_hwm() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvhwm(10).expect("hwm");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = pull.last_endpoint().expect("endpoint");
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.set_sndhwm(10).expect("hwm");
    push.set_linger(0).expect("linger");
    push.connect(&endpoint).expect("connect");
    // One message through proves the connection is up.
    push.send("first", SendFlags::empty()).expect("send");
    pull.set_rcvtimeo(5000).expect("rcvtimeo");
    pull.recv(RecvFlags::empty()).expect("first");

    let body = vec![7u8; 16 * 1024];
    let mut sent = 0usize;
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        match push
            .send(body.clone(), SendFlags::DONTWAIT)
            .map_err(Error::from)
        {
            Ok(()) => sent += 1,
            Err(Error::Again) => break,
            Err(e) => panic!("unexpected {e:?}"),
        }
        assert!(
            Instant::now() < until,
            "never refused after {sent} messages"
        );
        // Let the engine move what it can into the kernel, so only a real stall refuses.
        if sent.is_multiple_of(64) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // Both HWMs plus what the kernel buffers hold: bounded, far from unbounded queueing.
    assert!(sent >= 10, "refused after only {sent}");
    assert!(
        sent < 4_000,
        "{sent} x 16 KiB accepted by a peer that does not read"
    );
    // A blocking send waits SNDTIMEO and then fails (the engine may still have been moving
    // bytes into the kernel when DONTWAIT was refused, so allow it a few more first).
    push.set_sndtimeo(100).expect("sndtimeo");
    loop {
        let t = Instant::now();
        match push
            .send(body.clone(), SendFlags::empty())
            .map_err(Error::from)
        {
            Ok(()) => sent += 1,
            Err(Error::Again) => {
                assert!(t.elapsed() >= Duration::from_millis(90), "waited SNDTIMEO");
                break;
            }
            Err(e) => panic!("unexpected {e:?}"),
        }
        assert!(
            sent < 4_000 && Instant::now() < until,
            "blocking send never waited"
        );
    }
    // The reader resumes: everything accepted arrives, and sending works again.
    for _ in 0..sent {
        pull.recv(RecvFlags::empty()).expect("queued message");
    }
    push.send(body, SendFlags::empty())
        .expect("send after drain");
}

#[test]
fn router_drops_or_refuses_for_a_peer_that_stops_reading() {
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.set_sndhwm(10).expect("hwm");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    let mut dealer = ctx.socket(SocketType::Dealer).expect("dealer");
    dealer.set_rcvhwm(10).expect("hwm");
    dealer.set_routing_id(b"slow").expect("id");
    dealer.set_linger(0).expect("linger");
    dealer.connect(&endpoint).expect("connect");
    dealer.send("hello", SendFlags::empty()).expect("hello");
    router.set_rcvtimeo(5000).expect("rcvtimeo");
    let hello = router.recv_multipart(RecvFlags::empty()).expect("hello");
    assert_eq!(hello[0].as_ref(), b"slow");

    // Without ROUTER_MANDATORY: every send succeeds, what does not fit is dropped, and
    // memory does not grow with what was sent (20,000 x 16 KiB = 320 MiB offered).
    let body = bytes::Bytes::from(vec![1u8; 16 * 1024]);
    let before = rss_bytes();
    for _ in 0..20_000 {
        router
            .send_multipart(
                [bytes::Bytes::from_static(b"slow"), body.clone()],
                SendFlags::DONTWAIT,
            )
            .expect("router never blocks");
    }
    let grown = rss_bytes().saturating_sub(before);
    assert!(grown < 160 << 20, "RSS grew by {} MiB", grown >> 20);

    // With it: an unknown peer is EHOSTUNREACH, a full one EAGAIN.
    router.set_router_mandatory(true).expect("mandatory");
    assert_eq!(
        router
            .send("nobody", SendFlags::SNDMORE | SendFlags::DONTWAIT)
            .map_err(Error::from),
        Err(Error::HostUnreachable)
    );
    let mut refused = false;
    for _ in 0..20_000 {
        match router
            .send("slow", SendFlags::SNDMORE | SendFlags::DONTWAIT)
            .map_err(Error::from)
        {
            Ok(()) => router
                .send(body.clone(), SendFlags::DONTWAIT)
                .expect("body"),
            Err(Error::Again) => {
                refused = true;
                break;
            }
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert!(
        refused,
        "a full peer is refused with EAGAIN under ROUTER_MANDATORY"
    );
}
