//! ZMTP 2.0 peers (libzmq 3.x, RFC 15), played by a raw TCP peer written here: greeting with
//! revision 0x01, a socket-type byte, an identity frame, then 2.0 frames. Each scenario runs
//! against ferromq and against real libzmq 4.3.4 (the `zmq` crate), so the bytes expected
//! from the 2.0 peer's side are libzmq's own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use ferromq::{Context, SocketType};
use ferromq_tests::{assert_quiet, tcp_port, Under};

const SIGNATURE: [u8; 10] = [0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f];

struct RawV2(TcpStream);

impl RawV2 {
    fn new(stream: TcpStream) -> RawV2 {
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        RawV2(stream)
    }

    fn read_exact(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        self.0.read_exact(&mut buf).unwrap();
        buf
    }

    /// The 2.0 greeting both ways: ours (`socket_type`, `identity`), then the peer's, whose
    /// socket-type byte and identity are returned. The peer must send its 3.x signature and
    /// major version, then (having seen our revision 1) its 2.0 tail and nothing of 3.x.
    fn greet(&mut self, socket_type: u8, identity: &[u8]) -> (u8, Vec<u8>) {
        let mut ours = SIGNATURE.to_vec();
        ours.extend([0x01, socket_type, 0x00, identity.len() as u8]);
        ours.extend_from_slice(identity);
        self.0.write_all(&ours).unwrap();
        let theirs = self.read_exact(11);
        assert_eq!(theirs[0], 0xff);
        assert_eq!(theirs[9], 0x7f);
        assert_eq!(theirs[10], 3, "major version");
        let kind = self.read_exact(1)[0];
        let (flags, id) = self.read_frame();
        assert_eq!(flags, 0, "identity frame flags");
        (kind, id)
    }

    fn read_frame(&mut self) -> (u8, Vec<u8>) {
        let flags = self.read_exact(1)[0];
        let size = if flags & 0x02 != 0 {
            let b = self.read_exact(8);
            usize::try_from(u64::from_be_bytes(b.try_into().unwrap())).unwrap()
        } else {
            usize::from(self.read_exact(1)[0])
        };
        (flags, self.read_exact(size))
    }

    fn write_frame(&mut self, body: &[u8], more: bool) {
        let mut f = vec![u8::from(more)];
        if body.len() > 255 {
            f[0] |= 0x02;
            f.extend((body.len() as u64).to_be_bytes());
        } else {
            f.push(body.len() as u8);
        }
        f.extend_from_slice(body);
        self.0.write_all(&f).unwrap();
    }
}

fn ferromq_socket(ctx: &Context, kind: SocketType) -> ferromq::Socket {
    let mut s = ctx.socket(kind).unwrap();
    s.set_rcvtimeo(5000).unwrap();
    s.set_linger(0).unwrap();
    s.set_heartbeat_ivl(50).unwrap();
    s
}

fn libzmq_socket(ctx: &zmq::Context, kind: zmq::SocketType) -> zmq::Socket {
    let s = ctx.socket(kind).unwrap();
    s.set_rcvtimeo(5000).unwrap();
    s.set_linger(0).unwrap();
    s.set_heartbeat_ivl(50).unwrap();
    s
}

/// A ROUTER (bound) and a 2.0 DEALER peer: identities both ways, multipart and long frames
/// both ways, no PING despite HEARTBEAT_IVL.
fn router_exchange(router: &mut dyn Under, port: u16) {
    let mut peer = RawV2::new(TcpStream::connect(("127.0.0.1", port)).unwrap());
    let (kind, id) = peer.greet(5, b"old-dealer");
    assert_eq!(
        (kind, id.as_slice()),
        (6, &b""[..]),
        "ROUTER's type byte and identity"
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
    assert_eq!(peer.read_frame(), (2, long));
    assert_quiet(&mut peer.0, 300);
}

#[test]
fn zmtp2_dealer_talks_to_ferromq_router() {
    let ctx = Context::new();
    let mut router = ferromq_socket(&ctx, SocketType::Router);
    router.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&router.last_endpoint().unwrap());
    router_exchange(&mut router, port);
}

#[test]
fn zmtp2_dealer_talks_to_libzmq_router() {
    let ctx = zmq::Context::new();
    let mut router = libzmq_socket(&ctx, zmq::ROUTER);
    router.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&router.get_last_endpoint().unwrap().unwrap());
    router_exchange(&mut router, port);
}

/// A SUB (connecting) and a 2.0 PUB peer: subscriptions reach it as 0x01/0x00 + topic
/// messages, never as 3.1 SUBSCRIBE/CANCEL commands, and its messages arrive.
fn sub_forwards_subscriptions(sub: &mut dyn Under, listener: &TcpListener) {
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawV2::new(stream);
    let (kind, id) = peer.greet(1, b"");
    assert_eq!((kind, id.as_slice()), (2, &b""[..]), "SUB's type byte");
    assert_eq!(peer.read_frame(), (0, b"\x01A".to_vec()));
    peer.write_frame(b"A-1", false);
    assert_eq!(sub.recv_parts(), vec![b"A-1".to_vec()]);
    sub.subscribe(b"A", false);
    sub.subscribe(b"B", true);
    assert_eq!(peer.read_frame(), (0, b"\x00A".to_vec()));
    assert_eq!(peer.read_frame(), (0, b"\x01B".to_vec()));
    peer.write_frame(b"B-1", false);
    assert_eq!(sub.recv_parts(), vec![b"B-1".to_vec()]);
    assert_quiet(&mut peer.0, 300);
}

#[test]
fn ferromq_sub_subscribes_to_a_zmtp2_pub() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ctx = Context::new();
    let mut sub = ferromq_socket(&ctx, SocketType::Sub);
    sub.set_subscribe(b"A").unwrap();
    sub.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    sub_forwards_subscriptions(&mut sub, &listener);
}

#[test]
fn libzmq_sub_subscribes_to_a_zmtp2_pub() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ctx = zmq::Context::new();
    let mut sub = libzmq_socket(&ctx, zmq::SUB);
    sub.set_subscribe(b"A").unwrap();
    sub.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    sub_forwards_subscriptions(&mut sub, &listener);
}

/// A PUB (bound) and a 2.0 SUB peer that subscribes with a 0x01 message: it gets what
/// matches and nothing else.
fn pub_filters_for_a_zmtp2_sub(publisher: &mut dyn Under, port: u16) {
    let mut peer = RawV2::new(TcpStream::connect(("127.0.0.1", port)).unwrap());
    let (kind, _) = peer.greet(2, b"");
    assert_eq!(kind, 1, "PUB's type byte");
    peer.write_frame(b"\x01A", false);
    // The subscription is processed asynchronously: publish until one arrives.
    let mut got = None;
    for _ in 0..100 {
        publisher.send_parts(&[b"B-skip"]);
        publisher.send_parts(&[b"A-1"]);
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
    assert_eq!(got, Some((0, b"A-1".to_vec())));
}

#[test]
fn ferromq_pub_filters_for_a_zmtp2_sub() {
    let ctx = Context::new();
    let mut publisher = ferromq_socket(&ctx, SocketType::Pub);
    publisher.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&publisher.last_endpoint().unwrap());
    pub_filters_for_a_zmtp2_sub(&mut publisher, port);
}

#[test]
fn libzmq_pub_filters_for_a_zmtp2_sub() {
    let ctx = zmq::Context::new();
    let mut publisher = libzmq_socket(&ctx, zmq::PUB);
    publisher.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&publisher.get_last_endpoint().unwrap().unwrap());
    pub_filters_for_a_zmtp2_sub(&mut publisher, port);
}
