//! ferromq-zmtp's sans-IO `Handshake`, `Encoder` and `FrameDecoder` driven over a raw loopback
//! `TcpStream` against real libzmq (4.3.4, bundled by the `zmq` crate), in both roles: we
//! connect to a libzmq listener, and a libzmq socket connects to our listener. After the NULL
//! handshake both sides exchange multipart messages, proving the codec interoperates.

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    Decoded, Encoder, Frame, FrameDecoder, Handshake, HandshakeConfig, PeerInfo, SocketType,
};

/// Upper bound for any single read, write or libzmq call, and for a whole handshake.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

fn libzmq_socket(ctx: &zmq::Context, kind: zmq::SocketType) -> zmq::Socket {
    let socket = ctx.socket(kind).unwrap();
    socket.set_linger(0).unwrap();
    socket.set_sndtimeo(IO_TIMEOUT.as_millis() as i32).unwrap();
    socket.set_rcvtimeo(IO_TIMEOUT.as_millis() as i32).unwrap();
    socket
}

fn with_timeouts(stream: TcpStream) -> TcpStream {
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// One side of a connection: our codec over a blocking stream.
struct Peer {
    stream: TcpStream,
    input: BytesMut,
    decoder: FrameDecoder,
    encoder: Encoder,
}

impl Peer {
    fn new(stream: TcpStream) -> Peer {
        Peer {
            stream: with_timeouts(stream),
            input: BytesMut::with_capacity(4096),
            decoder: FrameDecoder::new(None),
            encoder: Encoder::new(),
        }
    }

    /// Reads what is available (at least one byte) into the input buffer.
    fn fill(&mut self) {
        let mut chunk = [0u8; 4096];
        let n = self.stream.read(&mut chunk).unwrap();
        assert!(n > 0, "libzmq closed the connection");
        self.input.extend_from_slice(&chunk[..n]);
    }

    /// Runs the handshake to completion; returns what we learnt about the peer.
    fn handshake(&mut self, config: HandshakeConfig) -> PeerInfo {
        let deadline = Instant::now() + IO_TIMEOUT;
        let mut handshake = Handshake::new(config);
        let mut output = BytesMut::new();
        loop {
            handshake.poll_output(&mut output);
            if !output.is_empty() {
                self.stream.write_all(&output).unwrap();
                output.clear();
            }
            if handshake.is_complete() {
                break;
            }
            assert!(Instant::now() < deadline, "handshake did not complete");
            self.fill();
            handshake.handle_input(&mut self.input).unwrap();
        }
        handshake.into_peer().unwrap()
    }

    /// Sends one multipart message through the batching encoder and a vectored write.
    fn send(&mut self, parts: &[&[u8]]) {
        for (i, part) in parts.iter().enumerate() {
            let more = i + 1 < parts.len();
            self.encoder.push_frame(&Bytes::copy_from_slice(part), more);
        }
        self.flush();
    }

    /// Writes everything the encoder holds.
    fn flush(&mut self) {
        while !self.encoder.is_empty() {
            let mut slices = [IoSlice::new(&[]); 16];
            let n = self.encoder.io_slices(&mut slices);
            let written = self.stream.write_vectored(&slices[..n]).unwrap();
            assert!(written > 0);
            self.encoder.advance(written);
        }
    }

    fn recv_frame(&mut self) -> Frame {
        loop {
            match self.decoder.decode(&mut self.input).unwrap() {
                Decoded::Frame(frame) => return frame,
                Decoded::NeedMore(_) => self.fill(),
            }
        }
    }

    /// Receives one multipart message (data frames only; none of these tests expects a
    /// command after the handshake).
    fn recv(&mut self) -> Vec<Vec<u8>> {
        let mut parts = Vec::new();
        loop {
            let frame = self.recv_frame();
            assert!(!frame.command, "unexpected command {:?}", frame.body);
            parts.push(frame.body.to_vec());
            if !frame.more {
                return parts;
            }
        }
    }
}

fn config(socket_type: SocketType, routing_id: &'static [u8]) -> HandshakeConfig {
    let mut config = HandshakeConfig::new(socket_type);
    config.routing_id = Bytes::from_static(routing_id);
    config
}

#[test]
fn we_connect_as_dealer_to_a_libzmq_router() {
    let ctx = zmq::Context::new();
    let router = libzmq_socket(&ctx, zmq::ROUTER);
    router.set_identity(b"lz-router").unwrap();
    router.bind("tcp://127.0.0.1:*").unwrap();
    let endpoint = router.get_last_endpoint().unwrap().unwrap();
    let stream = TcpStream::connect(endpoint.trim_start_matches("tcp://")).unwrap();
    let mut us = Peer::new(stream);

    let peer = us.handshake(config(SocketType::Dealer, b"fm-dealer"));
    assert_eq!(peer.socket_type, Some(SocketType::Router));
    assert_eq!(peer.minor, 1);
    assert_eq!(peer.routing_id.as_deref(), Some(&b"lz-router"[..]));

    // Our Identity property reached libzmq's ROUTER: it prefixes our routing id.
    let long = vec![0x42; 300];
    us.send(&[b"hello", b"", &long]);
    let got = router.recv_multipart(0).unwrap();
    assert_eq!(
        got,
        [b"fm-dealer".to_vec(), b"hello".to_vec(), vec![], long]
    );

    router
        .send_multipart([&b"fm-dealer"[..], b"a", b"bb", &[7u8; 256]], 0)
        .unwrap();
    assert_eq!(us.recv(), [b"a".to_vec(), b"bb".to_vec(), vec![7u8; 256]]);
}

#[test]
fn a_libzmq_req_connects_to_us_as_router() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let ctx = zmq::Context::new();
    let req = libzmq_socket(&ctx, zmq::REQ);
    req.set_identity(b"lz-req").unwrap();
    req.connect(&format!("tcp://{addr}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut us = Peer::new(stream);

    let mut server = config(SocketType::Router, b"");
    server.as_server = true;
    let peer = us.handshake(server);
    assert_eq!(peer.socket_type, Some(SocketType::Req));
    assert_eq!(peer.routing_id.as_deref(), Some(&b"lz-req"[..]));
    assert_eq!(
        peer.metadata.get("Socket-Type").map(|v| &v[..]),
        Some(&b"REQ"[..])
    );

    // REQ adds the empty delimiter frame; the request is a two-frame message on the wire.
    req.send(&b"request"[..], 0).unwrap();
    assert_eq!(us.recv(), [vec![], b"request".to_vec()]);
    us.send(&[b"", b"reply"]);
    assert_eq!(req.recv_bytes(0).unwrap(), b"reply");
}

#[test]
fn a_libzmq_pub_sends_to_us_as_sub_after_a_subscription() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let ctx = zmq::Context::new();
    let publisher = libzmq_socket(&ctx, zmq::PUB);
    publisher.connect(&format!("tcp://{addr}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut us = Peer::new(stream);

    let peer = us.handshake(config(SocketType::Sub, b""));
    assert_eq!(peer.socket_type, Some(SocketType::Pub));
    assert_eq!(peer.routing_id, None);

    // Subscribe with a 3.1 SUBSCRIBE command, then publish until one arrives: libzmq applies
    // the subscription asynchronously, so the first messages may be filtered out.
    us.encoder
        .push_command(&ferromq_zmtp::Command::Subscribe(Bytes::from_static(
            b"news",
        )));
    us.flush();
    let deadline = Instant::now() + IO_TIMEOUT;
    us.stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    loop {
        assert!(Instant::now() < deadline, "no publication arrived");
        publisher.send_multipart([&b"other"[..], b"x"], 0).unwrap();
        publisher
            .send_multipart([&b"news"[..], b"today"], 0)
            .unwrap();
        let mut chunk = [0u8; 1024];
        match us.stream.read(&mut chunk) {
            Ok(0) => panic!("libzmq closed the connection"),
            Ok(n) => {
                us.input.extend_from_slice(&chunk[..n]);
                break;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("read failed: {e}"),
        }
    }
    us.stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    assert_eq!(us.recv(), [b"news".to_vec(), b"today".to_vec()]);
}
