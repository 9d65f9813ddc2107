//! ZMTP 3.1 heartbeats (ZMQ_HEARTBEAT_IVL, _TTL, _TIMEOUT).
//!
//! A silent peer is played by a raw TCP socket that completes the NULL handshake and then
//! answers nothing, so the tests see the PINGs on the wire and the connection being dropped;
//! real libzmq 4.3.4 is the peer where the connection must stay up (it answers PINGs, and its
//! own PINGs with a TTL must be answered by ferromq).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferromq::monitor::{self, MonitorEvent};
use ferromq::{Context, RecvFlags, SendFlags, Socket, SocketType};
use ferromq_tests::{drain_encoder, wait_for_event as wait_for};
use ferromq_zmtp::{Command, Decoded, Encoder, FrameDecoder, Greeting, Mechanism, Metadata};

const TIMEOUT: Duration = Duration::from_secs(5);

/// The accepted side of a connection from ferromq, past the NULL handshake, that never
/// answers on its own.
struct SilentPeer {
    stream: TcpStream,
    input: BytesMut,
    decoder: FrameDecoder,
}

impl SilentPeer {
    fn accept(listener: &TcpListener, socket_type: &str) -> SilentPeer {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        stream
            .write_all(&Greeting::new(Mechanism::Null, false).encode())
            .expect("greeting");
        let mut md = Metadata::new();
        md.insert(
            "Socket-Type",
            Bytes::copy_from_slice(socket_type.as_bytes()),
        )
        .expect("metadata");
        let mut enc = Encoder::new();
        enc.push_command(&Command::Ready(md));
        stream.write_all(&drain_encoder(&mut enc)).expect("ready");
        let mut peer = SilentPeer {
            stream,
            input: BytesMut::new(),
            decoder: FrameDecoder::new(None),
        };
        while peer.input.len() < 64 {
            peer.fill().expect("peer greeting");
        }
        let _ = peer.input.split_to(64);
        let Some((true, body)) = peer.next_frame() else {
            panic!("READY expected");
        };
        assert!(matches!(Command::decode(body), Ok(Command::Ready(_))));
        peer
    }

    fn fill(&mut self) -> std::io::Result<usize> {
        let mut buf = [0u8; 4096];
        let n = self.stream.read(&mut buf)?;
        self.input.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    /// The next frame as (command, body); `None` once ferromq closed the connection.
    fn next_frame(&mut self) -> Option<(bool, Bytes)> {
        loop {
            match self.decoder.decode(&mut self.input) {
                Ok(Decoded::Frame(f)) => return Some((f.command, f.body)),
                Ok(Decoded::NeedMore(_)) => match self.fill() {
                    Ok(0) | Err(_) => return None,
                    Ok(_) => {}
                },
                Err(e) => panic!("bad frame from ferromq: {e}"),
            }
        }
    }

    fn send_command(&mut self, cmd: &Command) {
        let mut enc = Encoder::new();
        enc.push_command(cmd);
        self.stream
            .write_all(&drain_encoder(&mut enc))
            .expect("send");
    }
}

fn watcher(ctx: &Context, socket: &mut Socket, name: &str) -> Socket {
    let endpoint = format!("inproc://{name}");
    socket
        .monitor(&endpoint, monitor::EVENT_ALL)
        .expect("monitor");
    let mut m = ctx.socket(SocketType::Pair).expect("pair");
    m.connect(&endpoint).expect("connect monitor");
    m.set_rcvtimeo(100).expect("rcvtimeo");
    m
}

/// Events that arrive within `window`.
fn events_within(m: &mut Socket, window: Duration) -> Vec<u16> {
    let until = Instant::now() + window;
    let mut seen = Vec::new();
    while Instant::now() < until {
        if let Ok(frames) = m.recv_multipart(RecvFlags::empty()) {
            seen.push(MonitorEvent::parse(&frames).expect("event").event);
        }
    }
    seen
}

/// A ferromq DEALER, monitored, connected to a raw listener whose first connection has been
/// accepted (handshake done on the peer's side). Fields drop in order: sockets before the
/// context.
struct ToSilentPeer {
    peer: SilentPeer,
    listener: TcpListener,
    mon: Socket,
    _dealer: Socket,
    _ctx: Context,
}

/// Sets up [`ToSilentPeer`]; `configure` sets the DEALER's options before it connects.
fn to_silent_peer(name: &str, configure: impl FnOnce(&mut Socket)) -> ToSilentPeer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let endpoint = format!("tcp://{}", listener.local_addr().expect("addr"));
    let ctx = Context::new();
    let mut dealer = ctx.socket(SocketType::Dealer).expect("dealer");
    configure(&mut dealer);
    let mon = watcher(&ctx, &mut dealer, name);
    dealer.connect(&endpoint).expect("connect");
    let peer = SilentPeer::accept(&listener, "ROUTER");
    ToSilentPeer {
        peer,
        listener,
        mon,
        _dealer: dealer,
        _ctx: ctx,
    }
}

#[test]
fn pings_carry_the_ttl_and_a_silent_peer_is_dropped_then_reconnected() {
    let mut link = to_silent_peer("hb-silent", |dealer| {
        dealer.set_heartbeat_ivl(100).expect("ivl");
        dealer.set_heartbeat_timeout(400).expect("timeout");
        dealer.set_heartbeat_ttl(2_500).expect("ttl");
    });
    let ready_at = Instant::now();
    let mut pings = 0;
    // PINGs every 100 ms with TTL 25 deciseconds, until ferromq gives up on the silence.
    while let Some((command, body)) = link.peer.next_frame() {
        assert!(command, "only PINGs are sent");
        match Command::decode(body) {
            Ok(Command::Ping { ttl, context }) => {
                assert_eq!(ttl, 25);
                assert!(context.is_empty());
                pings += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let silent_for = ready_at.elapsed();
    // First PING at 100 ms, timeout 400 ms after it: about 500 ms; never before 400.
    assert!((2..=8).contains(&pings), "{pings} PINGs in {silent_for:?}");
    assert!(
        silent_for >= Duration::from_millis(400) && silent_for < Duration::from_secs(3),
        "dropped after {silent_for:?}"
    );
    wait_for(&mut link.mon, monitor::EVENT_DISCONNECTED);
    // A connecting socket remakes the connection, as after any other failure.
    let mut again = SilentPeer::accept(&link.listener, "ROUTER");
    assert!(
        again.next_frame().is_some(),
        "PINGs again on the new connection"
    );
}

#[test]
fn a_peer_ping_with_a_ttl_closes_the_connection_when_nothing_follows() {
    // No heartbeat options on the ferromq side: the peer's TTL alone decides.
    let mut link = to_silent_peer("hb-ttl", |_| {});
    wait_for(&mut link.mon, monitor::EVENT_HANDSHAKE_SUCCEEDED);

    let sent = Instant::now();
    link.peer.send_command(&Command::Ping {
        ttl: 3,
        context: Bytes::from_static(b"ctx"),
    });
    let Some((true, pong)) = link.peer.next_frame() else {
        panic!("PONG expected");
    };
    assert!(matches!(
        Command::decode(pong),
        Ok(Command::Pong { context }) if &context[..] == b"ctx"
    ));
    // Nothing else arrives; 300 ms after the PING ferromq closes the connection.
    assert!(link.peer.next_frame().is_none(), "connection closed");
    let after = sent.elapsed();
    assert!(
        after >= Duration::from_millis(290) && after < Duration::from_secs(3),
        "closed after {after:?}"
    );
    wait_for(&mut link.mon, monitor::EVENT_DISCONNECTED);
}

#[test]
fn traffic_keeps_a_ttl_connection_alive() {
    let mut link = to_silent_peer("hb-ttl-alive", |_| {});
    wait_for(&mut link.mon, monitor::EVENT_HANDSHAKE_SUCCEEDED);
    // A PING with a 500 ms TTL every 100 ms: each one answers for the next, with room for
    // a loaded machine's late wake-ups. Eight of them outlast the first TTL.
    for _ in 0..8 {
        link.peer.send_command(&Command::Ping {
            ttl: 5,
            context: Bytes::new(),
        });
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen = events_within(&mut link.mon, Duration::from_millis(50));
    assert!(
        !seen.contains(&monitor::EVENT_DISCONNECTED),
        "dropped while the peer kept pinging: {seen:x?}"
    );
}

/// Both directions against real libzmq: PINGs are answered on either side, so idle
/// connections with short heartbeat timeouts stay up and carry messages afterwards.
#[test]
fn libzmq_peers_keep_heartbeating_connections_up() {
    for ferromq_binds in [true, false] {
        let ctx = Context::new();
        let zctx = zmq::Context::new();
        let mut ours = ctx.socket(SocketType::Dealer).expect("dealer");
        // Timeouts far above a loaded CI machine's scheduling stalls; the idle window below
        // still spans several intervals and more than one whole timeout.
        ours.set_heartbeat_ivl(100).expect("ivl");
        ours.set_heartbeat_timeout(600).expect("timeout");
        ours.set_heartbeat_ttl(800).expect("ttl");
        ours.set_rcvtimeo(TIMEOUT.as_millis() as i32)
            .expect("rcvtimeo");
        let mut mon = watcher(&ctx, &mut ours, &format!("hb-libzmq-{ferromq_binds}"));
        let theirs = zctx.socket(zmq::DEALER).expect("zmq dealer");
        theirs.set_heartbeat_ivl(100).expect("zmq ivl");
        theirs.set_heartbeat_timeout(600).expect("zmq timeout");
        theirs.set_heartbeat_ttl(800).expect("zmq ttl");
        theirs
            .set_rcvtimeo(TIMEOUT.as_millis() as i32)
            .expect("zmq rcvtimeo");
        if ferromq_binds {
            ours.bind("tcp://127.0.0.1:*").expect("bind");
            theirs
                .connect(&ours.last_endpoint().expect("endpoint"))
                .expect("zmq connect");
        } else {
            theirs.bind("tcp://127.0.0.1:*").expect("zmq bind");
            let ep = theirs
                .get_last_endpoint()
                .expect("zmq endpoint")
                .expect("utf-8");
            ours.connect(&ep).expect("connect");
        }
        wait_for(&mut mon, monitor::EVENT_HANDSHAKE_SUCCEEDED);
        // Idle for many timeouts: only PING/PONG cross.
        let seen = events_within(&mut mon, Duration::from_millis(1_500));
        assert!(
            !seen.contains(&monitor::EVENT_DISCONNECTED),
            "ferromq_binds={ferromq_binds}: dropped while libzmq answered: {seen:x?}"
        );
        ours.send("after idle", SendFlags::empty()).expect("send");
        assert_eq!(theirs.recv_bytes(0).expect("zmq recv"), b"after idle");
        theirs.send("back", 0).expect("zmq send");
        assert_eq!(
            ours.recv(RecvFlags::empty()).expect("recv").as_slice(),
            b"back"
        );
    }
}
