//! ZMTP 1.0 peers (libzmq 2.x, RFC 13), played by a raw TCP peer written here: no greeting,
//! an identity frame in 1.0 framing (length counting the flags octet, then flags, then the
//! body), then 1.0 frames. libzmq 4.3 still talks to them: its signature doubles as the header
//! of its identity frame. Each scenario runs against ferromq and against real libzmq 4.3.4 (the
//! `zmq` crate), so what the 1.0 peer expects is libzmq's own behaviour. Also the "versioned
//! 1.0" form (signature with revision 0, a socket-type octet, then 1.0 frames).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use ferromq::{Context, SocketType};
use ferromq_tests::{assert_quiet, tcp_port, Under};

struct RawV1(TcpStream);

impl RawV1 {
    fn connect(port: u16) -> RawV1 {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        RawV1(stream)
    }

    fn read_exact(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        self.0.read_exact(&mut buf).unwrap();
        buf
    }

    /// One 1.0 frame: (flags, body).
    fn read_frame(&mut self) -> (u8, Vec<u8>) {
        let first = self.read_exact(1)[0];
        let len = if first == 0xff {
            u64::from_be_bytes(self.read_exact(8).try_into().unwrap())
        } else {
            u64::from(first)
        };
        assert!(len >= 1, "a 1.0 length counts the flags octet");
        let flags = self.read_exact(1)[0];
        (flags, self.read_exact(usize::try_from(len - 1).unwrap()))
    }

    fn write_frame(&mut self, body: &[u8], more: bool) {
        let len = body.len() as u64 + 1;
        let mut f = Vec::new();
        if len < 255 {
            f.push(len as u8);
        } else {
            f.push(0xff);
            f.extend(len.to_be_bytes());
        }
        f.push(u8::from(more));
        f.extend_from_slice(body);
        self.0.write_all(&f).unwrap();
    }

    /// Unversioned: our identity frame first; the peer's signature reads as the header of its
    /// identity frame, whose body follows. Returns the peer's identity.
    fn greet(&mut self, identity: &[u8]) -> Vec<u8> {
        self.write_frame(identity, false);
        let (_flags, id) = self.read_frame();
        id
    }
}

fn ferromq_bound(ctx: &Context, kind: SocketType) -> (ferromq::Socket, u16) {
    let mut s = ctx.socket(kind).unwrap();
    s.set_rcvtimeo(5000).unwrap();
    s.set_linger(0).unwrap();
    s.set_heartbeat_ivl(50).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&s.last_endpoint().unwrap());
    (s, port)
}

fn libzmq_bound(ctx: &zmq::Context, kind: zmq::SocketType) -> (zmq::Socket, u16) {
    let s = ctx.socket(kind).unwrap();
    s.set_rcvtimeo(5000).unwrap();
    s.set_linger(0).unwrap();
    s.set_heartbeat_ivl(50).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&s.get_last_endpoint().unwrap().unwrap());
    (s, port)
}

/// A ROUTER and a 1.0 DEALER peer: identities both ways, multipart and long frames both ways,
/// no PING despite HEARTBEAT_IVL.
fn router_exchange(router: &mut dyn Under, port: u16) {
    let mut peer = RawV1::connect(port);
    assert_eq!(
        peer.greet(b"old-dealer"),
        b"",
        "the ROUTER's (empty) identity"
    );
    let long = vec![7u8; 300];
    peer.write_frame(b"hello", true);
    peer.write_frame(&long, false);
    assert_eq!(
        router.recv_parts(),
        vec![b"old-dealer".to_vec(), b"hello".to_vec(), long.clone()]
    );
    router.send_parts(&[b"old-dealer", b"world", &long]);
    assert_eq!(peer.read_frame(), (1, b"world".to_vec()));
    assert_eq!(peer.read_frame(), (0, long));
    assert_quiet(&mut peer.0, 300);
}

#[test]
fn zmtp1_dealer_talks_to_ferromq_router() {
    let ctx = Context::new();
    let (mut router, port) = ferromq_bound(&ctx, SocketType::Router);
    router_exchange(&mut router, port);
}

#[test]
fn zmtp1_dealer_talks_to_libzmq_router() {
    let ctx = zmq::Context::new();
    let (mut router, port) = libzmq_bound(&ctx, zmq::ROUTER);
    router_exchange(&mut router, port);
}

/// A PUB and a 1.0 SUB peer, which filters by itself and sends no subscription: libzmq
/// subscribes it to everything, so every message reaches it.
fn pub_sends_everything_to_a_zmtp1_sub(publisher: &mut dyn Under, port: u16) {
    let mut peer = RawV1::connect(port);
    peer.greet(b"");
    // The phantom subscription is applied asynchronously: publish until one arrives.
    let mut got = None;
    for _ in 0..100 {
        publisher.send_parts(&[b"B-1"]);
        peer.0
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut b = [0u8; 1];
        if peer.0.peek(&mut b).is_ok() {
            peer.0
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            got = Some(peer.read_frame());
            break;
        }
    }
    assert_eq!(got, Some((0, b"B-1".to_vec())));
    publisher.send_parts(&[b"A-1", b"more"]);
    // Drain extra B-1 copies sent before the first arrived.
    let mut next = peer.read_frame();
    while next == (0, b"B-1".to_vec()) {
        next = peer.read_frame();
    }
    assert_eq!(next, (1, b"A-1".to_vec()));
    assert_eq!(peer.read_frame(), (0, b"more".to_vec()));
}

#[test]
fn ferromq_pub_sends_everything_to_a_zmtp1_sub() {
    let ctx = Context::new();
    let (mut publisher, port) = ferromq_bound(&ctx, SocketType::Pub);
    pub_sends_everything_to_a_zmtp1_sub(&mut publisher, port);
}

#[test]
fn libzmq_pub_sends_everything_to_a_zmtp1_sub() {
    let ctx = zmq::Context::new();
    let (mut publisher, port) = libzmq_bound(&ctx, zmq::PUB);
    pub_sends_everything_to_a_zmtp1_sub(&mut publisher, port);
}

/// Revision 0: signature, 0x00, socket type, then identity and messages in 1.0 framing. The
/// socket answers with its signature, major 3, its type octet and a 1.0 identity frame.
fn versioned_exchange(router: &mut dyn Under, port: u16) {
    let mut peer = RawV1::connect(port);
    let mut hello = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0x00, 5];
    hello.extend([0x04, 0x00]);
    hello.extend_from_slice(b"v10");
    peer.0.write_all(&hello).unwrap();
    let theirs = peer.read_exact(12);
    assert_eq!((theirs[0], theirs[9], theirs[10]), (0xff, 0x7f, 3));
    assert_eq!(theirs[11], 6, "ROUTER's type octet");
    assert_eq!(peer.read_frame().1, b"", "the ROUTER's identity");
    peer.write_frame(b"ping", false);
    assert_eq!(router.recv_parts(), vec![b"v10".to_vec(), b"ping".to_vec()]);
    router.send_parts(&[b"v10", b"pong"]);
    assert_eq!(peer.read_frame(), (0, b"pong".to_vec()));
    assert_quiet(&mut peer.0, 300);
}

#[test]
fn versioned_zmtp1_dealer_talks_to_ferromq_router() {
    let ctx = Context::new();
    let (mut router, port) = ferromq_bound(&ctx, SocketType::Router);
    versioned_exchange(&mut router, port);
}

#[test]
fn versioned_zmtp1_dealer_talks_to_libzmq_router() {
    let ctx = zmq::Context::new();
    let (mut router, port) = libzmq_bound(&ctx, zmq::ROUTER);
    versioned_exchange(&mut router, port);
}
