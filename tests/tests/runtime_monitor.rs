//! Socket monitor events in libzmq's format and at libzmq's points: bind, accept, connect,
//! handshake success and protocol failure (with the ZMTP error code), disconnect, retry,
//! close and the monitor's own stop; read both with ferromq and with real libzmq.

use std::io::Write;
use std::net::TcpStream;

use ferromq::monitor::{self, MonitorEvent};
use ferromq::{Context, RecvFlags, SendFlags, Socket, SocketType};
use ferromq_tests::wait_for_event as wait_for;

fn watcher(ctx: &Context, endpoint: &str) -> Socket {
    let mut m = ctx.socket(SocketType::Pair).expect("pair");
    m.connect(endpoint).expect("connect monitor");
    m.set_rcvtimeo(200).expect("rcvtimeo");
    m
}

fn raw_greeting(mechanism: &[u8]) -> [u8; 64] {
    let mut g = [0u8; 64];
    g[0] = 0xFF;
    g[9] = 0x7F;
    g[10] = 3;
    g[11] = 1;
    g[12..12 + mechanism.len()].copy_from_slice(mechanism);
    g
}

#[test]
fn bind_accept_connect_handshake_disconnect_close() {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Router).expect("router");
    server
        .monitor("inproc://mon-server", monitor::EVENT_ALL)
        .expect("monitor");
    let mut ms = watcher(&ctx, "inproc://mon-server");
    server.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = server.last_endpoint().expect("endpoint");
    let (listening, _) = wait_for(&mut ms, monitor::EVENT_LISTENING);
    assert_eq!(listening.endpoint, endpoint);
    assert!(
        listening.value > 2,
        "a listening fd, not {}",
        listening.value
    );

    let mut client = ctx.socket(SocketType::Dealer).expect("dealer");
    client
        .monitor(
            "inproc://mon-client",
            monitor::EVENT_CONNECTED | monitor::EVENT_HANDSHAKE_SUCCEEDED,
        )
        .expect("monitor");
    let mut mc = watcher(&ctx, "inproc://mon-client");
    client.connect(&endpoint).expect("connect");
    let (connected, _) = wait_for(&mut mc, monitor::EVENT_CONNECTED);
    assert_eq!(connected.endpoint, endpoint);
    let (ok, _) = wait_for(&mut mc, monitor::EVENT_HANDSHAKE_SUCCEEDED);
    assert_eq!((ok.value, ok.endpoint.as_str()), (0, endpoint.as_str()));

    let (accepted, _) = wait_for(&mut ms, monitor::EVENT_ACCEPTED);
    assert_eq!(accepted.endpoint, endpoint);
    let (_, before) = wait_for(&mut ms, monitor::EVENT_HANDSHAKE_SUCCEEDED);
    assert!(before.is_empty(), "nothing between accept and handshake");

    client.send("hi", SendFlags::empty()).expect("send");
    server.set_rcvtimeo(5000).expect("rcvtimeo");
    assert_eq!(
        server
            .recv_multipart(RecvFlags::empty())
            .expect("recv")
            .len(),
        2
    );

    client.set_linger(0).expect("linger");
    drop(client);
    let (gone, _) = wait_for(&mut ms, monitor::EVENT_DISCONNECTED);
    assert_eq!(gone.endpoint, endpoint);
    assert_eq!(
        gone.value, accepted.value,
        "DISCONNECTED carries the accepted fd"
    );

    server.unbind(&endpoint).expect("unbind");
    let (closed, _) = wait_for(&mut ms, monitor::EVENT_CLOSED);
    assert_eq!((closed.value, closed.endpoint), (listening.value, endpoint));

    server.stop_monitor();
    let (stopped, _) = wait_for(&mut ms, monitor::EVENT_MONITOR_STOPPED);
    assert_eq!(stopped.value, 0);
}

#[test]
fn bad_greeting_reports_the_zmtp_protocol_error_code() {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Pull).expect("pull");
    server
        .monitor(
            "inproc://mon-bad",
            monitor::EVENT_HANDSHAKE_FAILED_PROTOCOL | monitor::EVENT_HANDSHAKE_SUCCEEDED,
        )
        .expect("monitor");
    let mut m = watcher(&ctx, "inproc://mon-bad");
    server.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = server.last_endpoint().expect("endpoint");
    let port: u16 = endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let mut raw = TcpStream::connect(("127.0.0.1", port)).expect("raw connect");
    // A PLAIN client against a NULL server: ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH.
    raw.write_all(&raw_greeting(b"PLAIN")).expect("greeting");
    let (ev, seen) = wait_for(&mut m, monitor::EVENT_HANDSHAKE_FAILED_PROTOCOL);
    assert_eq!(ev.value, 0x1100_0002);
    assert_eq!(ev.endpoint, endpoint);
    assert!(seen.is_empty(), "no success before the failure: {seen:x?}");
}

#[test]
fn connect_retried_carries_the_reconnect_interval() {
    let ctx = Context::new();
    // A port that was just free: connecting is refused, so the socket retries.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut s = ctx.socket(SocketType::Dealer).expect("dealer");
    s.set_reconnect_ivl(30).expect("ivl");
    s.monitor("inproc://mon-retry", monitor::EVENT_CONNECT_RETRIED)
        .expect("monitor");
    let mut m = watcher(&ctx, "inproc://mon-retry");
    let endpoint = format!("tcp://127.0.0.1:{port}");
    s.connect(&endpoint).expect("connect");
    let (ev, _) = wait_for(&mut m, monitor::EVENT_CONNECT_RETRIED);
    // RECONNECT_IVL plus libzmq's jitter below it.
    assert!((30..60).contains(&ev.value), "{}", ev.value);
    assert_eq!(ev.endpoint, endpoint);
    s.set_linger(0).expect("linger");
}

/// A tcp connect in progress is reported as libzmq does on Linux: CONNECT_DELAYED with the
/// EINPROGRESS errno, then CONNECTED once the kernel completes it.
#[test]
fn connect_delayed_then_connected() {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Pull).expect("pull");
    server.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = server.last_endpoint().expect("endpoint");
    let mut s = ctx.socket(SocketType::Push).expect("push");
    s.monitor(
        "inproc://mon-delayed",
        monitor::EVENT_CONNECT_DELAYED | monitor::EVENT_CONNECTED,
    )
    .expect("monitor");
    let mut m = watcher(&ctx, "inproc://mon-delayed");
    s.connect(&endpoint).expect("connect");
    let (delayed, _) = wait_for(&mut m, monitor::EVENT_CONNECT_DELAYED);
    assert_eq!(delayed.value, u32::try_from(libc::EINPROGRESS).unwrap());
    assert_eq!(delayed.endpoint, endpoint);
    let (connected, before) = wait_for(&mut m, monitor::EVENT_CONNECTED);
    assert!(before.is_empty(), "saw {before:x?} before CONNECTED");
    assert_eq!(connected.endpoint, endpoint);
}

#[test]
fn libzmq_reads_ferromq_monitor_events() {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Pull).expect("pull");
    server
        .monitor("inproc://mon-libzmq", monitor::EVENT_LISTENING)
        .expect("monitor");
    let mut m = watcher(&ctx, "inproc://mon-libzmq");
    server.bind("tcp://127.0.0.1:*").expect("bind");
    let frames = m.recv_multipart(RecvFlags::empty()).expect("event");
    // The same bytes libzmq's monitor sends: u16 event, u32 value, native order.
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].len(), 6);
    assert_eq!(
        u16::from_ne_bytes([frames[0][0], frames[0][1]]),
        monitor::EVENT_LISTENING
    );
    assert_eq!(
        frames[1].as_ref(),
        server.last_endpoint().expect("ep").as_bytes()
    );

    // And the same parse works on what real libzmq emits.
    let zctx = zmq::Context::new();
    let z = zctx.socket(zmq::PULL).expect("zmq pull");
    z.monitor("inproc://zmon", zmq::SocketEvent::LISTENING as i32)
        .expect("zmq monitor");
    let zm = zctx.socket(zmq::PAIR).expect("zmq pair");
    zm.connect("inproc://zmon").expect("connect");
    z.bind("tcp://127.0.0.1:*").expect("zmq bind");
    let parts: Vec<bytes::Bytes> = zm
        .recv_multipart(0)
        .expect("zmq event")
        .into_iter()
        .map(bytes::Bytes::from)
        .collect();
    let ev = MonitorEvent::parse(&parts).expect("libzmq event parses");
    assert_eq!(ev.event, monitor::EVENT_LISTENING);
    let zep = z.get_last_endpoint().expect("ep").expect("utf8");
    assert_eq!(ev.endpoint, zep);
}
