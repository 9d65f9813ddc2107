//! ZMQ_USE_FD (systemd socket activation): a bind takes the listening socket the application
//! made, as libzmq's tcp and ipc listeners do: the tcp address given to bind is not looked at
//! and ZMQ_LAST_ENDPOINT is the descriptor's own address; the ipc path is only what
//! LAST_ENDPOINT says and its file stays; the socket closes the descriptor when it closes.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use ferromq::{Context, Error, RecvFlags, SendFlags, Socket, SocketType};

const ZMQ_USE_FD: i32 = 89;

fn use_fd(socket: &mut ferromq::Socket, fd: i32) {
    socket
        .set_option_raw(ZMQ_USE_FD, &fd.to_ne_bytes())
        .expect("ZMQ_USE_FD");
}

fn bounce(server: &mut ferromq::Socket, client: &mut ferromq::Socket) {
    server.set_rcvtimeo(5000).expect("rcvtimeo");
    client.set_rcvtimeo(5000).expect("rcvtimeo");
    client.send("ping", SendFlags::empty()).expect("send");
    let got = server.recv(RecvFlags::empty()).expect("request");
    assert_eq!(got.as_slice(), b"ping");
    server.send("pong", SendFlags::empty()).expect("reply");
    let got = client.recv(RecvFlags::empty()).expect("reply");
    assert_eq!(got.as_slice(), b"pong");
}

/// Waits until nothing listens on `addr` any more: the socket closed the descriptor (the test
/// gave away its only copy with `into_raw_fd`).
fn wait_closed(addr: std::net::SocketAddr) {
    let until = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(addr).is_ok() {
        assert!(Instant::now() < until, "{addr} still accepts after close");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn tcp_bind_takes_the_descriptor() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).expect("rep");
    use_fd(&mut rep, listener.into_raw_fd());
    // The address is not used: the port of the descriptor is what LAST_ENDPOINT reports.
    rep.bind("tcp://127.0.0.1:1").expect("bind with USE_FD");
    let endpoint = rep.last_endpoint().expect("last endpoint");
    assert_eq!(endpoint, format!("tcp://{addr}"));
    serve_one_then_close(ctx, rep, &endpoint, addr);
}

#[test]
fn ipc_bind_takes_the_descriptor_and_leaves_the_file() {
    let path = std::env::temp_dir().join(format!("ferromq-usefd-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).expect("unix listener");
    let endpoint = format!("ipc://{}", path.display());
    let ctx = Context::new();
    let mut pair = ctx.socket(SocketType::Pair).expect("pair");
    use_fd(&mut pair, listener.into_raw_fd());
    pair.bind(&endpoint).expect("bind with USE_FD");
    assert_eq!(pair.last_endpoint().expect("last endpoint"), endpoint);
    let mut peer = ctx.socket(SocketType::Pair).expect("pair");
    peer.connect(&endpoint).expect("connect");
    bounce(&mut pair, &mut peer);
    drop(pair);
    drop(peer);
    ctx.term();
    // As libzmq: the application made the file and removes it.
    assert!(path.exists(), "the socket removed the application's file");
    std::fs::remove_file(&path).expect("unlink");
}

#[test]
fn the_same_descriptor_bound_twice_is_closed_once() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let fd = listener.into_raw_fd();
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).expect("rep");
    use_fd(&mut rep, fd);
    rep.bind("tcp://a:1").expect("first bind");
    rep.bind("tcp://b:2").expect("second bind");
    let endpoint = format!("tcp://{addr}");
    // Unbinding one leaves the other listening.
    rep.unbind(&endpoint).expect("unbind one");
    serve_one_then_close(ctx, rep, &endpoint, addr);
}

#[test]
fn a_descriptor_that_does_not_fit_fails_the_bind() {
    let ctx = Context::new();
    let mut s = ctx.socket(SocketType::Pull).expect("pull");
    // Not listening.
    let idle = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    use_fd(&mut s, idle.into_raw_fd());
    assert_eq!(s.bind("tcp://127.0.0.1:*"), Err(Error::Invalid));
    // A tcp listener for an ipc bind.
    let tcp = TcpListener::bind("127.0.0.1:0").expect("listener");
    use_fd(&mut s, std::os::fd::AsRawFd::as_raw_fd(&tcp));
    assert_eq!(s.bind("ipc:///tmp/ferromq-usefd-x"), Err(Error::Invalid));
    // Not open at all.
    use_fd(&mut s, 1_000_000);
    assert_eq!(s.bind("tcp://127.0.0.1:*"), Err(Error::Os(libc::EBADF)));
    // The tcp listener is still the test's: the failed binds did not take it.
    assert!(std::net::TcpStream::connect(tcp.local_addr().expect("addr")).is_ok());
    drop(s);
    ctx.term();
}

/// A REQ connects to `rep`'s `endpoint` and a message goes each way; closing `rep` then closes
/// the adopted listening descriptor (`addr` refuses connections).
fn serve_one_then_close(ctx: Context, mut rep: Socket, endpoint: &str, addr: SocketAddr) {
    let mut req = ctx.socket(SocketType::Req).expect("req");
    req.connect(endpoint).expect("connect");
    bounce(&mut rep, &mut req);
    drop(rep);
    wait_closed(addr);
    drop(req);
    ctx.term();
}
