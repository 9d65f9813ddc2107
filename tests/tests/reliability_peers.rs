//! A socket keeps serving its good peers when one misbehaves, and reconnects when a peer
//! restarts: garbage or a wrong greeting on a raw TCP connection closes only that connection;
//! a libzmq peer that goes away and comes back on the same endpoint is talked to again.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::Bytes;
use ferromq::{Context, RecvFlags, SendFlags, SocketType};
use ferromq_tests::tcp_port;

const TIMEOUT_MS: i32 = 5_000;

/// Reads until the peer closes or the timeout passes; returns whether it closed.
fn closed_by_peer(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(TIMEOUT_MS as u64)))
        .expect("read timeout");
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// Checks that `pull` (bound at `endpoint`) still receives from a real libzmq PUSH.
fn still_serves(pull: &mut ferromq::Socket, endpoint: &str, zctx: &zmq::Context, tag: &[u8]) {
    let push = zctx.socket(zmq::PUSH).expect("zmq push");
    push.set_linger(1000).expect("linger");
    push.connect(endpoint).expect("zmq connect");
    push.send(tag, 0).expect("zmq send");
    let got = pull.recv(RecvFlags::empty()).expect("recv after bad peer");
    assert_eq!(&got.data[..], tag);
}

#[test]
fn garbage_and_wrong_greetings_close_only_their_connection() {
    let ctx = Context::new();
    let zctx = zmq::Context::new();
    let mut pull = ctx.socket(SocketType::Pull).expect("socket");
    pull.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
    pull.set_linger(0).expect("linger");
    // Bytes that do not start with 0xFF are a ZMTP 1.0 peer's identity frame to libzmq and to
    // us ("G" announces 70 bytes): the request below never completes it, so the handshake
    // timeout ends it (libzmq, whose 1.0 handshake has no timeout, would hold it open).
    pull.set_handshake_ivl(1_000).expect("handshake ivl");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = pull.last_endpoint().expect("last endpoint");
    let port = tcp_port(&endpoint);

    let mut bad_inputs: Vec<(&str, Vec<u8>)> = vec![
        (
            "http request",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        ),
        (
            "random bytes",
            (0..200u32).map(|i| (i * 37 % 256) as u8).collect(),
        ),
    ];
    // A ZMTP 3.0 greeting with an unknown mechanism.
    let mut greeting = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0];
    greeting.extend_from_slice(b"BOGUS");
    greeting.resize(64, 0);
    bad_inputs.push(("unknown mechanism", greeting));
    // A good greeting followed by a READY announcing an incompatible socket type (PULL-PULL).
    let mut pull_peer = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    pull_peer.extend_from_slice(b"NULL");
    pull_peer.resize(64, 0);
    let ready_body = {
        let mut b = vec![5];
        b.extend_from_slice(b"READY");
        b.push(11);
        b.extend_from_slice(b"Socket-Type");
        b.extend_from_slice(&4u32.to_be_bytes());
        b.extend_from_slice(b"PULL");
        b
    };
    pull_peer.push(0x04);
    pull_peer.push(ready_body.len() as u8);
    pull_peer.extend_from_slice(&ready_body);
    bad_inputs.push(("incompatible socket type", pull_peer));

    for (i, (what, bytes)) in bad_inputs.iter().enumerate() {
        let mut raw = TcpStream::connect(("127.0.0.1", port)).expect("raw connect");
        raw.write_all(bytes).expect("raw write");
        assert!(closed_by_peer(&mut raw), "{what}: connection not closed");
        still_serves(&mut pull, &endpoint, &zctx, format!("after {i}").as_bytes());
    }
}

#[test]
fn reconnects_after_the_peer_restarts() {
    let ctx = Context::new();
    let zctx = zmq::Context::new();
    let path = std::env::temp_dir().join(format!("ferromq-restart-{}.sock", std::process::id()));
    let endpoint = format!("ipc://{}", path.display());

    let mut dealer = ctx.socket(SocketType::Dealer).expect("socket");
    dealer.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
    dealer.set_linger(0).expect("linger");
    dealer
        .set_option_raw(ferromq::option::ZMQ_RECONNECT_IVL, &20i32.to_ne_bytes())
        .expect("reconnect ivl");
    dealer.connect(&endpoint).expect("connect");

    for round in 0..3u8 {
        let router = zctx.socket(zmq::ROUTER).expect("zmq router");
        router.set_rcvtimeo(200).expect("rcvtimeo");
        router.set_linger(0).expect("linger");
        router.bind(&endpoint).expect("zmq bind");
        // A message handed to the old connection just before it died is lost (as with
        // libzmq), so send until this round's ROUTER has one.
        let mut got = Vec::new();
        for _ in 0..50 {
            dealer
                .send(Bytes::from(vec![round]), SendFlags::empty())
                .expect("send");
            // Earlier rounds' retries may still be queued: skip them.
            match router.recv_multipart(0) {
                Ok(parts) if parts.len() == 2 && parts[1] == [round] => {
                    got = parts;
                    break;
                }
                _ => {}
            }
        }
        assert_eq!(got.len(), 2, "round {round}: routing id + body");
        assert_eq!(got[1], vec![round]);
        router
            .send_multipart([got[0].clone(), b"ack".to_vec()], 0)
            .expect("reply");
        let reply = dealer.recv(RecvFlags::empty()).expect("reply recv");
        assert_eq!(&reply.data[..], b"ack");
        drop(router);
        // The DEALER notices the close and reconnects to the next ROUTER on its own.
    }
    let _ = std::fs::remove_file(&path);
}
