//! ZMQ_LINGER on a connecting socket whose connection was never made: as in libzmq, what it
//! sent before closing is still delivered if the peer appears before the linger runs out, and
//! `term` waits for exactly that long.

use std::time::{Duration, Instant};

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

/// A free loopback port: bound by a throwaway libzmq-free std listener, then released.
fn free_tcp_endpoint() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("probe listener");
    let port = l.local_addr().expect("probe addr").port();
    format!("tcp://127.0.0.1:{port}")
}

fn ipc_endpoint(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ferromq-linger-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    format!("ipc://{}", dir.join(name).display())
}

/// PUSH connects to nothing, sends, closes; a PULL binds later and gets every message.
fn delivered_after_close(endpoint: &str, bind_after: Duration) {
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.set_linger(5000).expect("linger");
    push.set_reconnect_ivl(20).expect("reconnect ivl");
    push.connect(endpoint).expect("connect");
    for i in 0..10 {
        push.send(format!("m{i}"), SendFlags::empty())
            .expect("send");
    }
    drop(push);

    std::thread::sleep(bind_after);
    let peer = Context::new();
    let mut pull = peer.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(5000).expect("rcvtimeo");
    pull.bind(endpoint).expect("bind");
    for i in 0..10 {
        let m = pull
            .recv(RecvFlags::empty())
            .expect("a message sent before close");
        assert_eq!(m.as_slice(), format!("m{i}").as_bytes());
    }
    let t = Instant::now();
    ctx.term();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "term waited after delivery"
    );
}

#[test]
fn tcp_messages_sent_before_the_peer_exists_survive_close() {
    delivered_after_close(&free_tcp_endpoint(), Duration::from_millis(200));
}

#[test]
fn ipc_messages_sent_before_the_peer_exists_survive_close() {
    delivered_after_close(&ipc_endpoint("late.sock"), Duration::from_millis(200));
}

/// With nobody to deliver to, `term` waits out the linger and no longer.
#[test]
fn term_waits_out_the_linger_then_drops() {
    let endpoint = free_tcp_endpoint();
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.set_linger(300).expect("linger");
    push.connect(&endpoint).expect("connect");
    push.send("lost", SendFlags::empty()).expect("send");
    drop(push);
    let t = Instant::now();
    ctx.term();
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(250),
        "term returned after {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(3),
        "term returned after {waited:?}"
    );
}

/// Linger 0 drops at once; nothing sent means nothing to wait for, even with linger -1.
#[test]
fn term_is_immediate_at_linger_zero_or_with_nothing_sent() {
    let endpoint = free_tcp_endpoint();
    let ctx = Context::new();
    let mut dropped = ctx.socket(SocketType::Push).expect("push");
    dropped.set_linger(0).expect("linger");
    dropped.connect(&endpoint).expect("connect");
    dropped.send("lost", SendFlags::empty()).expect("send");
    let mut idle = ctx.socket(SocketType::Push).expect("push");
    idle.connect(&endpoint).expect("connect");
    drop(dropped);
    drop(idle);
    let t = Instant::now();
    ctx.term();
    assert!(t.elapsed() < Duration::from_secs(1));
}
