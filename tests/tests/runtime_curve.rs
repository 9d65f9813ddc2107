//! CURVE after the handshake, in ferromq's runtime: heartbeats travel boxed like any command,
//! and a raw peer that completed a real CURVE handshake but then sends a forged, replayed or
//! truncated MESSAGE loses that one connection (HANDSHAKE_FAILED_PROTOCOL with libzmq's code,
//! then DISCONNECTED, on the server's monitor), as does one larger than MAXMSGSIZE
//! (DISCONNECTED), while the server's other connections carry on; HANDSHAKE_IVL covers the
//! wait for the ZAP handler.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::BytesMut;
use ferromq::monitor::{self, EVENT_DISCONNECTED};
use ferromq::{Context, CurveKeyPair, RecvFlags, SendFlags, Socket, SocketType};
use ferromq_tests::{tcp_port, wait_for_event};
use ferromq_zmtp::{CurveClientKeys, CurveCodec, Handshake, HandshakeConfig, Security};

fn keys() -> CurveKeyPair {
    CurveKeyPair::generate().expect("OS randomness")
}

/// A CURVE ROUTER bound on tcp, with a monitor PAIR reading its events.
fn server(ctx: &Context, keys: &CurveKeyPair, name: &str) -> (Socket, Socket, String) {
    server_with(ctx, keys, name, |_| {})
}

/// [`server`], with options set before the bind (a listener copies them).
fn server_with(
    ctx: &Context,
    keys: &CurveKeyPair,
    name: &str,
    before_bind: impl FnOnce(&mut Socket),
) -> (Socket, Socket, String) {
    let mut s = ctx.socket(SocketType::Router).unwrap();
    s.set_curve_server(keys).unwrap();
    before_bind(&mut s);
    s.set_rcvtimeo(5000).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let endpoint = s.last_endpoint().unwrap();
    let mon = format!("inproc://curve-{name}-{}", std::process::id());
    s.monitor(&mon, monitor::EVENT_ALL).unwrap();
    let mut m = ctx.socket(SocketType::Pair).unwrap();
    m.set_rcvtimeo(200).unwrap();
    m.connect(&mon).unwrap();
    (s, m, endpoint)
}

fn client(ctx: &Context, server_public: &[u8; 32], endpoint: &str) -> Socket {
    let mut c = ctx.socket(SocketType::Dealer).unwrap();
    c.set_curve_client(&keys(), server_public).unwrap();
    c.set_rcvtimeo(5000).unwrap();
    c.connect(endpoint).unwrap();
    c
}

fn round_trip(server: &mut Socket, client: &mut Socket, text: &str) {
    client.send(text.to_string(), SendFlags::empty()).unwrap();
    let got = server.recv_multipart(RecvFlags::empty()).unwrap();
    assert_eq!(&got[1][..], text.as_bytes());
    server.send(got[0].clone(), SendFlags::SNDMORE).unwrap();
    server.send("ack", SendFlags::empty()).unwrap();
    assert_eq!(client.recv(RecvFlags::empty()).unwrap().as_slice(), b"ack");
}

/// PINGs and PONGs every 30 ms on a CURVE connection for 10 intervals: a PING sent in clear
/// would not open at the peer and close the connection.
#[test]
fn heartbeats_are_boxed() {
    let ctx = Context::new();
    let server_keys = keys();
    let (mut s, mut m, endpoint) = server_with(&ctx, &server_keys, "heartbeat", |s| {
        s.set_heartbeat_ivl(30).unwrap();
    });
    let mut c = ctx.socket(SocketType::Dealer).unwrap();
    c.set_heartbeat_ivl(30).unwrap();
    c.set_curve_client(&keys(), &server_keys.public).unwrap();
    c.set_rcvtimeo(5000).unwrap();
    c.connect(&endpoint).unwrap();
    round_trip(&mut s, &mut c, "before");
    std::thread::sleep(Duration::from_millis(300));
    round_trip(&mut s, &mut c, "after");
    let mut events = Vec::new();
    while let Ok(frames) = m.recv_multipart(RecvFlags::empty()) {
        events.push(monitor::MonitorEvent::parse(&frames).unwrap().event);
    }
    assert!(!events.contains(&EVENT_DISCONNECTED), "{events:x?}");
    assert_eq!(
        events
            .iter()
            .filter(|e| **e == monitor::EVENT_HANDSHAKE_SUCCEEDED)
            .count(),
        1,
        "one connection, never remade: {events:x?}"
    );
}

/// A raw TCP peer that runs a real CURVE client handshake (ferromq_zmtp's, over std's
/// TcpStream) and returns the stream and the MESSAGE codec.
fn raw_curve_client(endpoint: &str, server_public: [u8; 32]) -> (TcpStream, CurveCodec) {
    let mut stream = TcpStream::connect(("127.0.0.1", tcp_port(endpoint))).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut config = HandshakeConfig::new(ferromq::SocketType::Dealer);
    config.security = Security::CurveClient(CurveClientKeys {
        ours: keys(),
        server: server_public,
    });
    let mut hs = Handshake::new(config);
    let mut input = BytesMut::new();
    while !hs.is_complete() {
        let mut out = BytesMut::new();
        hs.poll_output(&mut out);
        stream.write_all(&out).unwrap();
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "server closed during the handshake");
        input.extend_from_slice(&buf[..n]);
        hs.handle_input(&mut input).unwrap();
    }
    let mut out = BytesMut::new();
    hs.poll_output(&mut out);
    stream.write_all(&out).unwrap();
    let codec = hs
        .take_curve_codec()
        .expect("a CURVE handshake has a codec");
    (stream, codec)
}

/// A frame without flags around a MESSAGE body, as libzmq sends it.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = if body.len() <= 255 {
        vec![0x00, u8::try_from(body.len()).unwrap()]
    } else {
        let mut h = vec![0x02];
        h.extend_from_slice(&(body.len() as u64).to_be_bytes());
        h
    };
    f.extend_from_slice(body);
    f
}

/// Reads until the server closes the stream (EOF or reset), failing after 5 s.
fn assert_closed(stream: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
            Err(e) => panic!("the server kept the connection: {e}"),
        }
    }
}

#[test]
fn forged_replayed_or_truncated_message_closes_only_that_connection() {
    let ctx = Context::new();
    let server_keys = keys();
    let (mut s, mut m, endpoint) = server(&ctx, &server_keys, "hostile");
    let mut honest = client(&ctx, &server_keys.public, &endpoint);
    round_trip(&mut s, &mut honest, "honest 1");

    type Spoil = fn(&mut CurveCodec) -> Vec<u8>;
    // libzmq's protocol error for each: CRYPTOGRAPHIC, INVALID_SEQUENCE, MALFORMED_COMMAND_MESSAGE.
    let cases: [(&str, u32, Spoil); 3] = [
        ("forged", 0x1100_0001, |codec| {
            let mut body = codec.encode(b"evil", false, false).to_vec();
            let last = body.len() - 1;
            body[last] ^= 0x55;
            body
        }),
        ("replayed", 0x1000_0002, |codec| {
            let body = codec.encode(b"first", false, false).to_vec();
            let mut twice = frame(&body);
            twice.extend_from_slice(&frame(&body));
            // Both frames in one write: the second is the replay.
            twice
        }),
        ("truncated", 0x1000_0012, |codec| {
            let body = codec.encode(b"short", false, false).to_vec();
            body[..20].to_vec()
        }),
    ];
    for (what, code, spoil) in cases {
        let (mut raw, mut codec) = raw_curve_client(&endpoint, server_keys.public);
        // A genuine MESSAGE first: delivered.
        raw.write_all(&frame(&codec.encode(b"genuine", false, false)))
            .unwrap();
        let got = s.recv_multipart(RecvFlags::empty()).unwrap();
        assert_eq!(&got[1][..], b"genuine", "{what}");
        let bytes = spoil(&mut codec);
        if what == "replayed" {
            raw.write_all(&bytes).unwrap();
            let got = s.recv_multipart(RecvFlags::empty()).unwrap();
            assert_eq!(&got[1][..], b"first", "{what}: the original once");
        } else {
            raw.write_all(&frame(&bytes)).unwrap();
        }
        assert_closed(&mut raw);
        let (ev, _) = wait_for_event(&mut m, monitor::EVENT_HANDSHAKE_FAILED_PROTOCOL);
        assert_eq!(ev.value, code, "{what}");
        wait_for_event(&mut m, EVENT_DISCONNECTED);
        // Nothing of the spoiled frame reached the socket, and the honest peer carries on.
        s.set_rcvtimeo(100).unwrap();
        assert!(
            s.recv(RecvFlags::empty()).is_err(),
            "{what}: something leaked"
        );
        s.set_rcvtimeo(5000).unwrap();
        round_trip(&mut s, &mut honest, what);
    }
}

/// A genuine box larger than the server's MAXMSGSIZE is refused at its frame header: that one
/// connection closes (DISCONNECTED on the monitor), nothing of it is delivered, and another
/// peer of the same socket carries on.
#[test]
fn oversized_box_closes_only_that_connection() {
    let ctx = Context::new();
    let server_keys = keys();
    let (mut s, mut m, endpoint) = server_with(&ctx, &server_keys, "oversized", |s| {
        s.set_maxmsgsize(1024).unwrap();
    });
    let mut honest = client(&ctx, &server_keys.public, &endpoint);
    round_trip(&mut s, &mut honest, "honest before");

    let (mut raw, mut codec) = raw_curve_client(&endpoint, server_keys.public);
    raw.write_all(&frame(&codec.encode(b"fits", false, false)))
        .unwrap();
    let got = s.recv_multipart(RecvFlags::empty()).unwrap();
    assert_eq!(&got[1][..], b"fits");
    let big = vec![0x5a; 4096];
    raw.write_all(&frame(&codec.encode(&big, false, false)))
        .unwrap();
    assert_closed(&mut raw);
    wait_for_event(&mut m, EVENT_DISCONNECTED);
    s.set_rcvtimeo(100).unwrap();
    assert!(
        s.recv(RecvFlags::empty()).is_err(),
        "the oversized message was delivered"
    );
    s.set_rcvtimeo(5000).unwrap();
    round_trip(&mut s, &mut honest, "honest after");
}

/// HANDSHAKE_IVL bounds the wait for a ZAP handler that never answers: the server reports
/// HANDSHAKE_FAILED_NO_DETAIL (ETIMEDOUT) for that connection, and the context still
/// terminates (the request's socket goes with the handshake).
#[test]
fn handshake_timeout_covers_a_silent_zap_handler() {
    let ctx = Context::new();
    let mut zap = ctx.socket(SocketType::Rep).unwrap();
    zap.bind("inproc://zeromq.zap.01").unwrap();
    let server_keys = keys();
    let (s, mut m, endpoint) = server_with(&ctx, &server_keys, "silent-zap", |s| {
        s.set_handshake_ivl(200).unwrap();
    });
    let _c = client(&ctx, &server_keys.public, &endpoint);
    zap.set_rcvtimeo(5000).unwrap();
    let request = zap.recv_multipart(RecvFlags::empty()).unwrap();
    assert_eq!(&request[5][..], b"CURVE", "the handler was asked");
    let (ev, _) = wait_for_event(&mut m, monitor::EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    assert_eq!(ev.value, libc::ETIMEDOUT as u32);
    drop((zap, s, m, _c));
    term_within_5_s(ctx);
}

/// Terminates `ctx`, failing if that takes more than 5 s (a socket left open somewhere).
fn term_within_5_s(ctx: Context) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        ctx.term();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the context terminated");
}

/// ZAP requests travel over one long-lived connection to the handler, each with its own
/// request id, and each reply reaches the handshake its id names: a ROUTER handler sees both
/// clients' requests come from one peer, answers the second client first (whose handshake
/// completes while the first one's request still waits: one slow verdict holds back no other),
/// then the first; each client's messages carry the User-Id of its own reply.
#[test]
fn zap_requests_share_one_connection_matched_by_id() {
    let ctx = Context::new();
    let mut zap = ctx.socket(SocketType::Router).unwrap();
    zap.set_rcvtimeo(5000).unwrap();
    zap.bind("inproc://zeromq.zap.01").unwrap();
    let server_keys = keys();
    let (mut s, m, endpoint) = server(&ctx, &server_keys, "zap-link");
    let (first_keys, second_keys) = (keys(), keys());
    let dealer = |k: &CurveKeyPair| {
        let mut c = ctx.socket(SocketType::Dealer).unwrap();
        c.set_curve_client(k, &server_keys.public).unwrap();
        c.connect(&endpoint).unwrap();
        c
    };
    let mut first = dealer(&first_keys);
    // [peer, delimiter, "1.0", request id, domain, address, identity, "CURVE", client key]
    let request_a = zap.recv_multipart(RecvFlags::empty()).unwrap();
    let mut second = dealer(&second_keys);
    let request_b = zap.recv_multipart(RecvFlags::empty()).unwrap();
    assert_eq!(request_a.len(), 9);
    assert_eq!(&request_a[8][..], &first_keys.public[..]);
    assert_eq!(&request_b[8][..], &second_keys.public[..]);
    assert_eq!(request_a[0], request_b[0], "one connection to the handler");
    assert_ne!(request_a[3], request_b[3], "a request id each");
    let reply = |zap: &mut Socket, request: &ferromq::Multipart, user: &str| {
        let frames: [&[u8]; 8] = [
            &request[0],
            b"",
            b"1.0",
            &request[3],
            b"200",
            b"OK",
            user.as_bytes(),
            b"",
        ];
        let frames = frames.map(ferromq::Bytes::copy_from_slice);
        zap.send_multipart(frames, SendFlags::empty()).unwrap();
    };
    let user_of = |s: &mut Socket| {
        let got = s.recv_multipart(RecvFlags::empty()).unwrap();
        let user = got.metadata().and_then(|m| m.get("User-Id").cloned());
        (got[1].clone(), user)
    };
    reply(&mut zap, &request_b, "second-user");
    second.send("from second", SendFlags::empty()).unwrap();
    let (body, user) = user_of(&mut s);
    assert_eq!(&body[..], b"from second");
    assert_eq!(user.as_deref(), Some(&b"second-user"[..]));
    reply(&mut zap, &request_a, "first-user");
    first.send("from first", SendFlags::empty()).unwrap();
    let (body, user) = user_of(&mut s);
    assert_eq!(&body[..], b"from first");
    assert_eq!(user.as_deref(), Some(&b"first-user"[..]));
    // The ZAP link's DEALER is still open: it must not hold the context.
    drop((zap, s, m, first, second));
    term_within_5_s(ctx);
}

/// A handler closed and another bound in its place: the next handshake's request reaches the
/// new one (the ZAP link follows the bound socket).
#[test]
fn zap_link_follows_a_rebound_handler() {
    let ctx = Context::new();
    let server_keys = keys();
    let (mut s, m, endpoint) = server(&ctx, &server_keys, "zap-rebound");
    let mut clients = Vec::new();
    for user in ["old-handler", "new-handler"] {
        let mut zap = ctx.socket(SocketType::Rep).unwrap();
        zap.set_rcvtimeo(5000).unwrap();
        zap.bind("inproc://zeromq.zap.01").unwrap();
        let mut c = client(&ctx, &server_keys.public, &endpoint);
        let request = zap.recv_multipart(RecvFlags::empty()).unwrap();
        let frames: [&[u8]; 6] = [b"1.0", &request[1], b"200", b"OK", user.as_bytes(), b""];
        zap.send_multipart(
            frames.map(ferromq::Bytes::copy_from_slice),
            SendFlags::empty(),
        )
        .unwrap();
        c.send(user, SendFlags::empty()).unwrap();
        let got = s.recv_multipart(RecvFlags::empty()).unwrap();
        assert_eq!(&got[1][..], user.as_bytes());
        let id = got.metadata().and_then(|m| m.get("User-Id").cloned());
        assert_eq!(id.as_deref(), Some(user.as_bytes()));
        drop(zap);
        clients.push(c);
    }
    drop((s, m, clients));
    term_within_5_s(ctx);
}
