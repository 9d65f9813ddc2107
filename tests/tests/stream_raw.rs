//! ZMQ_STREAM through the Rust API with std's plain sockets as the raw peers: no greeting goes
//! out, a large body crosses whole both ways (read in chunks, written by reference), an empty
//! frame closes after what was queued, and ipc works as tcp does (as in libzmq).

use std::io::{Read, Write};
use std::time::Duration;

use ferromq::{Context, RecvFlags, SendFlags, Socket, SocketType};

/// `[id, body]` from a STREAM socket.
fn recv_pair(s: &mut Socket) -> (Vec<u8>, Vec<u8>) {
    let parts = s.recv_multipart(RecvFlags::empty()).expect("recv");
    assert_eq!(parts.len(), 2, "a STREAM message is [id, data]");
    (parts[0].to_vec(), parts[1].to_vec())
}

fn stream_socket(ctx: &Context) -> Socket {
    let mut s = ctx.socket(SocketType::Stream).expect("stream socket");
    s.set_rcvtimeo(5000).expect("rcvtimeo");
    s.set_linger(0).expect("linger");
    s
}

/// Echoes a 1 MiB request from a raw client (written by `writer` on its own thread, read back
/// through `reader`), then closes the connection with an empty frame.
fn echo_large_body(
    server: &mut Socket,
    mut writer: impl Write + Send + 'static,
    mut reader: impl Read,
) {
    let (id, hello) = recv_pair(server);
    assert!(hello.is_empty(), "connect notification");
    let body: Vec<u8> = (0..(1u32 << 20) + 7).map(|i| (i % 251) as u8).collect();
    let sent = body.clone();
    let sender = std::thread::spawn(move || writer.write_all(&sent).expect("client write"));
    let mut got = Vec::with_capacity(body.len());
    while got.len() < body.len() {
        let (from, chunk) = recv_pair(server);
        assert_eq!(from, id);
        assert!(!chunk.is_empty(), "disconnected after {} bytes", got.len());
        got.extend_from_slice(&chunk);
    }
    sender.join().expect("writer");
    assert!(got == body, "request corrupted");
    server.send(id.clone(), SendFlags::SNDMORE).expect("id");
    server.send(got, SendFlags::empty()).expect("body");
    server.send(id.clone(), SendFlags::SNDMORE).expect("id");
    server.send(Vec::new(), SendFlags::empty()).expect("close");
    let mut back = Vec::new();
    reader.read_to_end(&mut back).expect("read to EOF");
    assert!(back == body, "reply corrupted ({} bytes)", back.len());
    let e = server.send(id, SendFlags::SNDMORE).unwrap_err();
    assert_eq!(e.error(), ferromq::Error::HostUnreachable);
}

#[test]
fn large_body_echo_over_tcp() {
    let ctx = Context::new();
    let mut server = stream_socket(&ctx);
    server.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = server.last_endpoint().expect("endpoint");
    let addr = endpoint.trim_start_matches("tcp://");
    let client = std::net::TcpStream::connect(addr).expect("connect");
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let writer = client.try_clone().expect("clone");
    echo_large_body(&mut server, writer, client);
}

#[test]
fn large_body_echo_over_ipc() {
    let path = std::env::temp_dir().join(format!("ferromq-stream-{}.sock", std::process::id()));
    let ctx = Context::new();
    let mut server = stream_socket(&ctx);
    server
        .bind(&format!("ipc://{}", path.display()))
        .expect("bind");
    let client = std::os::unix::net::UnixStream::connect(&path).expect("connect");
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let writer = client.try_clone().expect("clone");
    echo_large_body(&mut server, writer, client);
}

/// A STREAM socket that connects sends nothing until told to: no ZMTP greeting.
#[test]
fn connecting_sends_no_greeting() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    s.connect(&format!("tcp://127.0.0.1:{port}"))
        .expect("connect");
    let (mut peer, _) = listener.accept().expect("accept");
    let (id, hello) = recv_pair(&mut s);
    assert!(hello.is_empty());
    peer.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut buf = [0u8; 64];
    let quiet = peer.read(&mut buf);
    assert!(
        matches!(&quiet, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "unexpected bytes or EOF: {quiet:?}"
    );
    s.send(id, SendFlags::SNDMORE).expect("id");
    s.send("raw", SendFlags::empty()).expect("data");
    let n = peer.read(&mut buf).expect("read");
    assert_eq!(&buf[..n], b"raw");
}
