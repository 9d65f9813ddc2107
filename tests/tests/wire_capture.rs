//! What real libzmq (4.3.4, bundled by the `zmq` crate) puts on the wire, byte for byte.
//!
//! Each test binds a libzmq socket on loopback, opens a raw `TcpStream` to it and plays the
//! peer by hand, so the capture depends on nothing in ferromq. Every capture is compared with
//! a literal vector written from RFC 23 (ZMTP 3.0) and RFC 37 (ZMTP 3.1), with the offsets
//! commented; where libzmq deviates from the RFC the comment says so and the vector records
//! what libzmq really sends. The captures are then decoded with ferromq-zmtp and compared with
//! what ferromq-zmtp's own encoder produces for the same thing.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferromq_tests::drain_encoder;
use ferromq_zmtp::{
    Command, Decoded, Encoder, Frame, FrameDecoder, Greeting, GreetingDecoder, Handshake,
    HandshakeConfig, HandshakeError, Mechanism, SocketType,
};

/// Upper bound for any single read or write; a test that hits it fails instead of hanging.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Our 64-byte NULL greeting, written by hand from RFC 23 §"Greeting" (minor 1 = ZMTP 3.1,
/// minor 0 = ZMTP 3.0).
fn our_greeting(minor: u8) -> [u8; 64] {
    let mut g = [0u8; 64];
    // 0: signature start; 1..=8: padding (zero); 9: signature end, bit 0 set = versioned peer
    g[0] = 0xFF;
    g[9] = 0x7F;
    // 10: major, 11: minor
    g[10] = 3;
    g[11] = minor;
    // 12..=31: mechanism name, zero padded; 32: as-server = 0 (NULL); 33..=63: zero filler
    g[12..16].copy_from_slice(b"NULL");
    g
}

/// A libzmq socket bound on an ephemeral loopback port, with the raw stream connected to it.
struct Capture {
    // Field order matters: the socket must close before the context is terminated.
    socket: zmq::Socket,
    _ctx: zmq::Context,
    stream: TcpStream,
}

impl Capture {
    /// Binds a libzmq socket of `kind` (after `setup` has set its options) and connects to it.
    fn bind(kind: zmq::SocketType, setup: impl FnOnce(&zmq::Socket)) -> Capture {
        let ctx = zmq::Context::new();
        let socket = ctx.socket(kind).unwrap();
        socket.set_linger(0).unwrap();
        socket.set_sndtimeo(IO_TIMEOUT.as_millis() as i32).unwrap();
        socket.set_rcvtimeo(IO_TIMEOUT.as_millis() as i32).unwrap();
        setup(&socket);
        socket.bind("tcp://127.0.0.1:*").unwrap();
        let endpoint = socket.get_last_endpoint().unwrap().unwrap();
        let addr = endpoint.trim_start_matches("tcp://");
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Capture {
            socket,
            _ctx: ctx,
            stream,
        }
    }

    fn read_exact(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        self.stream.read_exact(&mut buf).unwrap();
        buf
    }

    fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Reads one whole frame and returns its raw bytes (header included), parsing the header
    /// by hand (RFC 23 §"Framing") so the capture does not depend on the codec under test.
    fn read_frame(&mut self) -> Vec<u8> {
        let mut raw = self.read_exact(1);
        let long = raw[0] & 0x02 != 0;
        let size_field = self.read_exact(if long { 8 } else { 1 });
        let size = size_field
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        raw.extend_from_slice(&size_field);
        let body = self.read_exact(usize::try_from(size).unwrap());
        raw.extend_from_slice(&body);
        raw
    }

    /// Plays the greeting the way libzmq expects a versioned peer to: libzmq sends its 10-byte
    /// signature at once, its major version only after it has seen our signature, and the
    /// 53-byte rest only after it has seen our major. Returns libzmq's 64 greeting bytes.
    fn exchange_greeting(&mut self, minor: u8) -> Vec<u8> {
        let ours = our_greeting(minor);
        let mut theirs = self.read_exact(10);
        self.write(&ours[..10]);
        theirs.extend(self.read_exact(1));
        self.write(&ours[10..]);
        theirs.extend(self.read_exact(53));
        theirs
    }

    /// Greeting plus libzmq's READY (which it sends without waiting for ours); returns READY.
    fn greet_and_read_ready(&mut self, minor: u8) -> Vec<u8> {
        self.exchange_greeting(minor);
        self.read_frame()
    }

    /// Full NULL handshake announcing `socket_type`: returns libzmq's READY.
    fn handshake(&mut self, minor: u8, socket_type: &str) -> Vec<u8> {
        let ready = self.greet_and_read_ready(minor);
        self.write(&ready_frame(socket_type, None));
        ready
    }

    /// Reads a frame that libzmq only produces once its application thread has run: a bound
    /// socket learns about a new peer (and, for SUB, sends its subscriptions) when it
    /// processes its command queue, which happens only inside a call on the socket.
    fn read_frame_after_commands(&mut self) -> Vec<u8> {
        self.wait_readable_after_commands();
        self.read_frame()
    }

    fn wait_readable_after_commands(&mut self) {
        let deadline = Instant::now() + IO_TIMEOUT;
        self.stream
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut probe = [0u8; 1];
        loop {
            // ZMQ_EVENTS makes libzmq process pending commands.
            self.socket.get_events().unwrap();
            match self.stream.peek(&mut probe) {
                Ok(n) if n > 0 => break,
                Ok(_) => panic!("libzmq closed the connection"),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    assert!(Instant::now() < deadline, "libzmq sent nothing");
                }
                Err(e) => panic!("read failed: {e}"),
            }
        }
        self.stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    }

    /// Reads until libzmq closes the connection; returns what came before the close.
    fn read_to_close(&mut self) -> Vec<u8> {
        let mut rest = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return rest,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return rest,
                Err(e) => panic!("libzmq did not close the connection: {e}"),
            }
        }
    }
}

/// A READY command frame built by hand from RFC 37 §"The NULL Security Mechanism" and
/// §"Connection Metadata" (used to play our side of the handshake).
fn ready_frame(socket_type: &str, identity: Option<&[u8]>) -> Vec<u8> {
    let mut body = b"\x05READY\x0bSocket-Type".to_vec();
    body.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    body.extend_from_slice(socket_type.as_bytes());
    if let Some(id) = identity {
        body.extend_from_slice(b"\x08Identity");
        body.extend_from_slice(&(id.len() as u32).to_be_bytes());
        body.extend_from_slice(id);
    }
    let mut frame = vec![0x04, u8::try_from(body.len()).unwrap()];
    frame.extend(body);
    frame
}

/// libzmq's greeting as RFC 23 describes it, except for the padding (bytes 1..=8): libzmq
/// writes `routing_id_len + 1` there as a big-endian u64, so that a ZMTP 1.0 peer reads the
/// first 10 bytes as the header of a long routing-id frame (zmtp_engine.cpp `plug_internal`).
/// Without ZMQ_ROUTING_ID that is 1; with a 3-byte routing id it is 4.
#[rustfmt::skip]
const LIBZMQ_GREETING_NO_ID: [u8; 64] = [
    0xFF, // 0: signature start
    0, 0, 0, 0, 0, 0, 0, 1, // 1..=8: padding = u64 BE (routing id length 0, + 1)
    0x7F, // 9: signature end
    3, 1, // 10, 11: version 3.1
    b'N', b'U', b'L', b'L', 0, 0, 0, 0, 0, 0, // 12..=31: mechanism "NULL", zero padded
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // (mechanism, continued)
    0, // 32: as-server = 0
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 33..=63: filler
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // (filler)
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // (filler)
];

/// READY frames as RFC 37 builds them: flags 0x04 (command, short), size, `\x05READY`, then
/// `\x0bSocket-Type`, u32 BE length, name, and for REQ, DEALER and ROUTER also `\x08Identity`,
/// u32 BE length, routing id. Body size = 6 (READY) + 12 (name) + 4 + type length, plus
/// 9 + 4 + id length for the Identity. RFC 37's worked example has a ROUTER answer with Socket-Type only;
/// libzmq's ROUTER adds Identity too (mechanism.cpp `make_command_with_basic_properties`
/// adds it for its own type REQ, DEALER or ROUTER), and so does this table.
const READY_NO_ID: [(zmq::SocketType, &[u8]); 11] = [
    // 0: flags, 1: size, 2..=7: "\x05READY", 8..=19: "\x0bSocket-Type", 20..=23: u32 len, 24..: type
    (
        zmq::PAIR,
        b"\x04\x1a\x05READY\x0bSocket-Type\x00\x00\x00\x04PAIR",
    ),
    (
        zmq::PUB,
        b"\x04\x19\x05READY\x0bSocket-Type\x00\x00\x00\x03PUB",
    ),
    (
        zmq::SUB,
        b"\x04\x19\x05READY\x0bSocket-Type\x00\x00\x00\x03SUB",
    ),
    (
        zmq::XPUB,
        b"\x04\x1a\x05READY\x0bSocket-Type\x00\x00\x00\x04XPUB",
    ),
    (
        zmq::XSUB,
        b"\x04\x1a\x05READY\x0bSocket-Type\x00\x00\x00\x04XSUB",
    ),
    (
        zmq::PUSH,
        b"\x04\x1a\x05READY\x0bSocket-Type\x00\x00\x00\x04PUSH",
    ),
    (
        zmq::PULL,
        b"\x04\x1a\x05READY\x0bSocket-Type\x00\x00\x00\x04PULL",
    ),
    (
        zmq::REP,
        b"\x04\x19\x05READY\x0bSocket-Type\x00\x00\x00\x03REP",
    ),
    // ... then 9 bytes "\x08Identity", u32 len = 0, no value
    (
        zmq::REQ,
        b"\x04\x26\x05READY\x0bSocket-Type\x00\x00\x00\x03REQ\x08Identity\x00\x00\x00\x00",
    ),
    (
        zmq::DEALER,
        b"\x04\x29\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x00",
    ),
    (
        zmq::ROUTER,
        b"\x04\x29\x05READY\x0bSocket-Type\x00\x00\x00\x06ROUTER\x08Identity\x00\x00\x00\x00",
    ),
];

/// The same with ZMQ_ROUTING_ID = "abc": only REQ, DEALER and ROUTER carry it (size + 3);
/// every other type sends exactly its READY_NO_ID frame.
const READY_ID_ABC: [(zmq::SocketType, &[u8]); 3] = [
    (
        zmq::REQ,
        b"\x04\x29\x05READY\x0bSocket-Type\x00\x00\x00\x03REQ\x08Identity\x00\x00\x00\x03abc",
    ),
    (
        zmq::DEALER,
        b"\x04\x2c\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x03abc",
    ),
    (
        zmq::ROUTER,
        b"\x04\x2c\x05READY\x0bSocket-Type\x00\x00\x00\x06ROUTER\x08Identity\x00\x00\x00\x03abc",
    ),
];

// ---- ferromq-zmtp's view of the captures ----

/// ferromq's socket type for a libzmq one (the `zmq` crate keeps its numeric values private).
fn ours(kind: zmq::SocketType) -> SocketType {
    match kind {
        zmq::PAIR => SocketType::Pair,
        zmq::PUB => SocketType::Pub,
        zmq::SUB => SocketType::Sub,
        zmq::REQ => SocketType::Req,
        zmq::REP => SocketType::Rep,
        zmq::DEALER => SocketType::Dealer,
        zmq::ROUTER => SocketType::Router,
        zmq::PULL => SocketType::Pull,
        zmq::PUSH => SocketType::Push,
        zmq::XPUB => SocketType::XPub,
        zmq::XSUB => SocketType::XSub,
        zmq::STREAM => SocketType::Stream,
    }
}

/// Feeds a captured greeting to `GreetingDecoder` one byte at a time, as it may arrive.
fn decode_greeting(raw: &[u8]) -> Greeting {
    let mut decoder = GreetingDecoder::new();
    let mut buf = BytesMut::new();
    for (i, &byte) in raw.iter().enumerate() {
        buf.extend_from_slice(&[byte]);
        match decoder.decode(&mut buf) {
            Ok(None) => assert!(
                i + 1 < raw.len(),
                "greeting incomplete after {} bytes",
                i + 1
            ),
            Ok(Some(greeting)) => {
                assert_eq!(i + 1, raw.len(), "greeting complete after {} bytes", i + 1);
                assert!(buf.is_empty(), "the decoder left greeting bytes behind");
                return greeting;
            }
            Err(e) => panic!("ferromq-zmtp refused libzmq's greeting at byte {i}: {e}"),
        }
    }
    panic!("greeting incomplete after {} bytes", raw.len());
}

/// Decodes a capture that holds exactly one frame with ferromq-zmtp's `FrameDecoder`.
fn decode_frame(raw: &[u8]) -> Frame {
    let mut buf = BytesMut::from(raw);
    match FrameDecoder::new(None).decode(&mut buf) {
        Ok(Decoded::Frame(frame)) => {
            assert!(buf.is_empty(), "{} bytes left after the frame", buf.len());
            frame
        }
        other => panic!("ferromq-zmtp did not decode one frame from {raw:02x?}: {other:?}"),
    }
}

/// Decodes a capture holding one command frame down to the `Command`.
fn decode_command(raw: &[u8]) -> Command {
    let frame = decode_frame(raw);
    assert!(frame.command && !frame.more, "not a single command frame");
    Command::decode(frame.body).unwrap()
}

/// ferromq-zmtp's wire bytes for a multipart message.
fn encode_message(parts: &[&[u8]]) -> Vec<u8> {
    let mut encoder = Encoder::new();
    for (i, part) in parts.iter().enumerate() {
        encoder.push_frame(&Bytes::copy_from_slice(part), i + 1 < parts.len());
    }
    drain_encoder(&mut encoder)
}

/// ferromq-zmtp's wire bytes for a command frame.
fn encode_command(cmd: &Command) -> Vec<u8> {
    let mut encoder = Encoder::new();
    encoder.push_command(cmd);
    drain_encoder(&mut encoder)
}

/// What ferromq-zmtp's `Handshake` sends as `kind` with `routing_id`: its greeting (the
/// 10-byte signature before it has heard anything, the rest after the peer's), then its READY once
/// `peer_greeting` has been accepted.
fn ferromq_greeting_and_ready(
    kind: zmq::SocketType,
    routing_id: &[u8],
    peer_greeting: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let mut config = HandshakeConfig::new(ours(kind));
    config.routing_id = Bytes::copy_from_slice(routing_id);
    let mut handshake = Handshake::new(config);
    let mut out = BytesMut::new();
    handshake.poll_output(&mut out);
    // The signature first (as libzmq); the major and the rest once the peer's greeting showed
    // a versioned 3.x peer.
    let mut greeting = out.split().to_vec();
    assert_eq!(greeting.len(), 10);
    let mut input = BytesMut::from(peer_greeting);
    handshake.handle_input(&mut input).unwrap();
    assert!(input.is_empty());
    handshake.poll_output(&mut out);
    greeting.extend_from_slice(&out.split_to(54));
    (greeting, out.to_vec())
}

/// Checks a captured READY through ferromq-zmtp: it decodes to Socket-Type = `kind` and, for
/// the routing types, Identity = `routing_id`; and ferromq's Handshake, given libzmq's
/// greeting, answers with exactly libzmq's greeting and READY.
fn check_ready_with_ferromq(
    kind: zmq::SocketType,
    routing_id: &[u8],
    greeting: &[u8],
    ready: &[u8],
) {
    let Command::Ready(metadata) = decode_command(ready) else {
        panic!("{kind:?}: not a READY");
    };
    let name = ours(kind).name();
    assert_eq!(
        metadata.get("Socket-Type").map(|v| &v[..]),
        Some(name.as_bytes())
    );
    let routing = matches!(kind, zmq::REQ | zmq::DEALER | zmq::ROUTER);
    let expected_id = routing.then_some(routing_id);
    assert_eq!(
        metadata.get("Identity").map(|v| &v[..]),
        expected_id,
        "{kind:?}"
    );
    assert_eq!(metadata.len(), 1 + usize::from(routing), "{kind:?}");

    let (our_greeting, our_ready) = ferromq_greeting_and_ready(kind, routing_id, greeting);
    assert_eq!(
        our_greeting, greeting,
        "{kind:?}: ferromq greeting differs from libzmq's"
    );
    assert_eq!(
        our_ready, ready,
        "{kind:?}: ferromq READY differs from libzmq's"
    );
}

#[test]
fn greeting_is_sent_in_three_steps() {
    let mut cap = Capture::bind(zmq::DEALER, |_| {});
    let signature = cap.read_exact(10);
    assert_eq!(signature, LIBZMQ_GREETING_NO_ID[..10]);

    // Nothing more until libzmq has seen our signature.
    cap.stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut probe = [0u8; 1];
    let early = cap.stream.read(&mut probe);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "libzmq sent more than its signature before seeing ours: {early:?}"
    );
    cap.stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();

    // Our signature releases exactly the major version byte ...
    let ours = our_greeting(1);
    cap.write(&ours[..10]);
    assert_eq!(cap.read_exact(1), [3]);
    cap.stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let early = cap.stream.read(&mut probe);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "libzmq sent its minor version before seeing our major: {early:?}"
    );
    cap.stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();

    // ... and our major releases the 53-byte rest.
    cap.write(&ours[10..]);
    assert_eq!(cap.read_exact(53), LIBZMQ_GREETING_NO_ID[11..]);
}

#[test]
fn greeting_padding_is_routing_id_length_plus_one() {
    let mut cap = Capture::bind(zmq::DEALER, |s| s.set_identity(b"abc").unwrap());
    let greeting = cap.exchange_greeting(1);
    let mut expected = LIBZMQ_GREETING_NO_ID;
    expected[8] = 4; // padding = u64 BE (3 + 1)
    assert_eq!(greeting, expected);
    assert_eq!(
        decode_greeting(&greeting).encode_with_padding(4),
        greeting[..]
    );
}

#[test]
fn greeting_through_ferromq() {
    let mut cap = Capture::bind(zmq::DEALER, |_| {});
    let greeting = cap.exchange_greeting(1);
    let decoded = decode_greeting(&greeting);
    assert_eq!(
        decoded,
        Greeting {
            major: 3,
            minor: 1,
            mechanism: Mechanism::Null,
            as_server: false,
        }
    );
    // With libzmq's padding the encoding is byte for byte what libzmq sent ...
    assert_eq!(decoded.encode_with_padding(1), greeting[..]);
    // ... and the plain encoding is the RFC's zero padding (our hand-built greeting, which
    // libzmq accepts in every test here): the two differ in byte 8 only.
    let plain = Greeting::new(Mechanism::Null, false).encode();
    assert_eq!(plain, our_greeting(1));
    let differing: Vec<usize> = (0..64).filter(|&i| plain[i] != greeting[i]).collect();
    assert_eq!(differing, [8]);
}

#[test]
fn ready_for_every_socket_type() {
    for (kind, expected) in READY_NO_ID {
        let mut cap = Capture::bind(kind, |_| {});
        let greeting = cap.exchange_greeting(1);
        assert_eq!(greeting, LIBZMQ_GREETING_NO_ID, "{kind:?} greeting");
        let ready = cap.read_frame();
        assert_eq!(ready, expected, "{kind:?} READY");
        check_ready_with_ferromq(kind, b"", &greeting, &ready);
    }
}

#[test]
fn ready_with_routing_id() {
    for (kind, no_id) in READY_NO_ID {
        let expected = READY_ID_ABC
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(no_id, |(_, v)| *v);
        let mut cap = Capture::bind(kind, |s| s.set_identity(b"abc").unwrap());
        let greeting = cap.exchange_greeting(1);
        let ready = cap.read_frame();
        assert_eq!(ready, expected, "{kind:?} READY");
        check_ready_with_ferromq(kind, b"abc", &greeting, &ready);
    }
}

#[test]
fn short_long_and_multipart_message_frames() {
    let mut cap = Capture::bind(zmq::DEALER, |_| {});
    cap.handshake(1, "DEALER");

    cap.socket.send(&b"hello"[..], 0).unwrap();
    // 0: flags 0x00 (last, short), 1: size 5, 2..: body
    let short = cap.read_frame();
    assert_eq!(short, b"\x00\x05hello");
    assert_eq!(
        decode_frame(&short),
        Frame::message(Bytes::from_static(b"hello"), false)
    );
    assert_eq!(encode_message(&[b"hello"]), short);

    cap.socket.send(vec![0xAB; 255], 0).unwrap();
    // 255 is the largest short body: flags 0x00, size 0xFF
    let mut expected = vec![0x00, 0xFF];
    expected.extend([0xAB; 255]);
    let short_max = cap.read_frame();
    assert_eq!(short_max, expected);
    assert_eq!(decode_frame(&short_max).body, [0xAB; 255][..]);
    assert_eq!(encode_message(&[&[0xAB; 255]]), short_max);

    cap.socket.send(vec![0xCD; 256], 0).unwrap();
    // 0: flags 0x02 (last, long), 1..=8: size u64 BE 256, 9..: body
    let mut expected = vec![0x02, 0, 0, 0, 0, 0, 0, 1, 0];
    expected.extend([0xCD; 256]);
    let long = cap.read_frame();
    assert_eq!(long, expected);
    assert_eq!(
        decode_frame(&long),
        Frame::message(Bytes::from(vec![0xCD; 256]), false)
    );
    assert_eq!(encode_message(&[&[0xCD; 256]]), long);

    let parts: [&[u8]; 3] = [b"a", b"", &[0xEF; 300]];
    cap.socket.send_multipart(parts, 0).unwrap();
    let mut multipart = Vec::new();
    // frame 1: flags 0x01 (more, short), size 1, "a"
    let frame = cap.read_frame();
    assert_eq!(frame, b"\x01\x01a");
    multipart.extend(frame);
    // frame 2: flags 0x01, size 0 (empty delimiter)
    let frame = cap.read_frame();
    assert_eq!(frame, b"\x01\x00");
    multipart.extend(frame);
    // frame 3: flags 0x02 (last, long), size u64 BE 300 = 0x012C
    let mut expected = vec![0x02, 0, 0, 0, 0, 0, 0, 0x01, 0x2C];
    expected.extend([0xEF; 300]);
    let frame = cap.read_frame();
    assert_eq!(frame, expected);
    multipart.extend(frame);

    // ferromq-zmtp splits the three frames back out of one buffer and writes the same bytes.
    let mut buf = BytesMut::from(&multipart[..]);
    let mut decoder = FrameDecoder::new(None);
    for (i, part) in parts.iter().enumerate() {
        let Ok(Decoded::Frame(frame)) = decoder.decode(&mut buf) else {
            panic!("part {i} not decoded");
        };
        assert_eq!(frame, Frame::message(Bytes::copy_from_slice(part), i < 2));
    }
    assert!(buf.is_empty());
    assert_eq!(encode_message(&parts), multipart);
}

#[test]
fn subscribe_is_a_command_for_a_3_1_peer() {
    let mut cap = Capture::bind(zmq::SUB, |s| s.set_subscribe(b"topic").unwrap());
    cap.handshake(1, "PUB");
    let sub = cap.read_frame_after_commands();
    // 0: flags 0x04 (command, short), 1: size 15, 2..=11: "\x09SUBSCRIBE", 12..: topic
    assert_eq!(sub, b"\x04\x0f\x09SUBSCRIBEtopic");
    let subscribe = Command::Subscribe(Bytes::from_static(b"topic"));
    assert_eq!(decode_command(&sub), subscribe);
    assert_eq!(encode_command(&subscribe), sub);

    cap.socket.set_unsubscribe(b"topic").unwrap();
    // 0: flags 0x04, 1: size 12, 2..=8: "\x06CANCEL", 9..: topic
    let cancel = cap.read_frame();
    assert_eq!(cancel, b"\x04\x0c\x06CANCELtopic");
    let command = Command::Cancel(Bytes::from_static(b"topic"));
    assert_eq!(decode_command(&cancel), command);
    assert_eq!(encode_command(&command), cancel);
}

#[test]
fn subscribe_is_a_0x01_message_for_a_3_0_peer() {
    let mut cap = Capture::bind(zmq::SUB, |s| s.set_subscribe(b"topic").unwrap());
    cap.handshake(0, "PUB");
    // 0: flags 0x00 (message, short), 1: size 6, 2: 0x01 = subscribe, 3..: topic
    let sub = cap.read_frame_after_commands();
    assert_eq!(sub, b"\x00\x06\x01topic");
    // To ferromq-zmtp it is an ordinary one-part message; the pattern layer reads the 0x01.
    assert_eq!(
        decode_frame(&sub),
        Frame::message(Bytes::from_static(b"\x01topic"), false)
    );
    assert_eq!(encode_message(&[b"\x01topic"]), sub);

    cap.socket.set_unsubscribe(b"topic").unwrap();
    // 0: flags 0x00, 1: size 6, 2: 0x00 = cancel, 3..: topic
    let cancel = cap.read_frame();
    assert_eq!(cancel, b"\x00\x06\x00topic");
    assert_eq!(
        decode_frame(&cancel),
        Frame::message(Bytes::from_static(b"\x00topic"), false)
    );
    assert_eq!(encode_message(&[b"\x00topic"]), cancel);
}

/// libzmq 4.3.4 decides the LONG flag from the topic length *before* adding the 10-byte
/// `\x09SUBSCRIBE` prefix (v3_1_encoder.cpp `message_ready`), but writes the size field from
/// the total. A topic of 246..=255 bytes therefore goes out as flags 0x04 (short) followed by
/// an 8-byte size: a frame no conforming peer can parse. This is zeromq/libzmq#4367, fixed for
/// the 3.1 encoder by zeromq/libzmq#4564 (in 4.3.5); a ferromq publisher talking to a 4.3.4
/// subscriber must expect it (it reads as an empty command frame followed by junk).
#[test]
fn libzmq_quirk_long_subscribe_without_long_flag() {
    let topic = [b'x'; 250];
    let mut cap = Capture::bind(zmq::SUB, |s| s.set_subscribe(&topic).unwrap());
    cap.handshake(1, "PUB");
    cap.wait_readable_after_commands();
    let mut raw = cap.read_exact(9);
    // 0: flags 0x04 (command, SHORT), 1..=8: u64 BE 260 that a peer reads as size 0 + junk
    assert_eq!(raw, [0x04, 0, 0, 0, 0, 0, 0, 0x01, 0x04]);
    raw.extend(cap.read_exact(260));
    assert_eq!(&raw[9..19], b"\x09SUBSCRIBE");
    assert!(raw[19..].iter().all(|&b| b == b'x'));

    // ferromq-zmtp reads what any conforming peer reads: a 2-byte command frame with an empty
    // body, which is no valid command; ferromq itself writes the correct long frame.
    let mut buf = BytesMut::from(&raw[..]);
    let Ok(Decoded::Frame(frame)) = FrameDecoder::new(None).decode(&mut buf) else {
        panic!("the short header did not decode as a frame");
    };
    assert_eq!(frame, Frame::command(Bytes::new()));
    assert!(Command::decode(frame.body).is_err());
    let ours = encode_command(&Command::Subscribe(Bytes::copy_from_slice(&topic)));
    assert_eq!(ours[0], 0x06, "ferromq sets LONG for a 260-byte command");
    assert_eq!(ours[1..], raw[1..]);
}

/// The legacy encoder has the same slip for a 3.0 peer (v2_encoder.cpp): a 255-byte topic
/// plus the 0x01 marker is 256 bytes, sent with an 8-byte size but flags 0x00 (short).
#[test]
fn libzmq_quirk_long_legacy_subscription_without_long_flag() {
    let topic = [b'y'; 255];
    let mut cap = Capture::bind(zmq::SUB, |s| s.set_subscribe(&topic).unwrap());
    cap.handshake(0, "PUB");
    cap.wait_readable_after_commands();
    // 0: flags 0x00 (message, SHORT), 1..=8: u64 BE 256, 9: 0x01 = subscribe, 10..: topic
    assert_eq!(
        cap.read_exact(10),
        [0x00, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x01]
    );
    assert_eq!(cap.read_exact(255), topic);
}

#[test]
fn pong_echoes_ping_context() {
    let mut cap = Capture::bind(zmq::DEALER, |_| {});
    cap.handshake(1, "DEALER");
    // PING: flags 0x04, size 11, "\x04PING", ttl u16 BE 0, context "ctx1"
    cap.write(b"\x04\x0b\x04PING\x00\x00ctx1");
    // PONG: flags 0x04, size 9, "\x04PONG", context "ctx1"
    let pong = cap.read_frame();
    assert_eq!(pong, b"\x04\x09\x04PONGctx1");
    let expected = Command::Pong {
        context: Bytes::from_static(b"ctx1"),
    };
    assert_eq!(decode_command(&pong), expected);
    assert_eq!(encode_command(&expected), pong);
    let ping = Command::Ping {
        ttl: 0,
        context: Bytes::from_static(b"ctx1"),
    };
    assert_eq!(encode_command(&ping), b"\x04\x0b\x04PING\x00\x00ctx1");

    // RFC 37 allows at most 16 context bytes; libzmq truncates a longer one instead of
    // refusing it (zmtp_engine.cpp `process_heartbeat_message`).
    cap.write(b"\x04\x1b\x04PING\x00\x0a0123456789abcdefXYZW");
    let pong = cap.read_frame();
    assert_eq!(pong, b"\x04\x15\x04PONG0123456789abcdef");
    assert_eq!(
        decode_command(&pong),
        Command::Pong {
            context: Bytes::from_static(b"0123456789abcdef"),
        }
    );
}

/// RFC 37 says a peer SHOULD answer an incompatible Socket-Type with ERROR; libzmq's NULL
/// mechanism does not: `parse_metadata` fails with EINVAL and the engine just closes.
#[test]
fn socket_type_mismatch_closes_without_error() {
    let mut cap = Capture::bind(zmq::PUB, |_| {});
    let ready = cap.handshake(1, "PUSH");
    assert_eq!(ready, READY_NO_ID[1].1);
    assert_eq!(cap.read_to_close(), b"");

    // ferromq-zmtp in libzmq's place follows the RFC instead: it refuses the PUSH with a
    // typed error and queues ERROR after its READY (the one byte-level difference).
    let mut handshake = Handshake::new(HandshakeConfig::new(SocketType::Pub));
    let mut out = BytesMut::new();
    handshake.poll_output(&mut out);
    let mut input = BytesMut::from(&our_greeting(1)[..]);
    input.extend_from_slice(&ready_frame("PUSH", None));
    assert_eq!(
        handshake.handle_input(&mut input),
        Err(HandshakeError::IncompatibleSocketType {
            ours: SocketType::Pub,
            peer: SocketType::Push,
        })
    );
    handshake.poll_output(&mut out);
    assert_eq!(out[..64], LIBZMQ_GREETING_NO_ID);
    assert_eq!(out[64..64 + ready.len()], ready[..]);
    let error = decode_command(&out[64 + ready.len()..]);
    assert!(matches!(error, Command::Error(_)), "{error:?}");
}
