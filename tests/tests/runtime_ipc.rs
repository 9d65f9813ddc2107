//! ipc:// file lifetime: a socket closed and its path bound again at once by another socket
//! keeps the new socket file (the old listener's cleanup runs later, on the runtime, and must
//! not remove a file it did not create); the file goes away when its own socket closes.

use std::path::Path;
use std::time::{Duration, Instant};

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn rebinding_a_path_right_after_close_keeps_the_new_file() {
    let dir = std::env::temp_dir().join(format!("ferromq-ipc-rebind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("rebind.sock");
    let endpoint = format!("ipc://{}", file.display());
    let ctx = Context::new();
    for round in 0..20 {
        let mut old = ctx.socket(SocketType::Pull).expect("pull");
        old.bind(&endpoint).expect("bind old");
        drop(old);
        let mut new = ctx.socket(SocketType::Pull).expect("pull");
        new.set_rcvtimeo(5000).expect("rcvtimeo");
        new.bind(&endpoint).expect("bind new");
        // Give the old listener's cleanup time to run.
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            file.exists(),
            "round {round}: the new socket file was removed"
        );
        let mut push = ctx.socket(SocketType::Push).expect("push");
        push.connect(&endpoint).expect("connect");
        push.send("hello", SendFlags::empty()).expect("send");
        let got = new
            .recv(RecvFlags::empty())
            .expect("delivered through the new file");
        assert_eq!(got.as_slice(), b"hello");
        drop(new);
        wait_until("the file of a closed socket to go", || {
            !Path::new(&file).exists()
        });
    }
    ctx.term();
}

/// `SO_SNDBUF` of a descriptor, in bytes as the kernel reports it.
fn send_buffer(fd: i32) -> i32 {
    let mut value: libc::c_int = 0;
    let mut len = libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).expect("len");
    // SAFETY: `value` and `len` are valid for writes of the sizes given; a bad fd only fails.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            std::ptr::addr_of_mut!(value).cast(),
            &raw mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt(SO_SNDBUF) on fd {fd}");
    value
}

/// A reader of `socket`'s monitor events of the kind `event`, connected before anything
/// happens (events nobody reads are dropped).
fn watch(ctx: &Context, socket: &mut ferromq::Socket, name: &str, event: u16) -> ferromq::Socket {
    socket.monitor(name, event).expect("monitor");
    let mut events = ctx.socket(SocketType::Pair).expect("pair");
    events.set_rcvtimeo(5000).expect("rcvtimeo");
    events.connect(name).expect("connect monitor");
    events
}

/// The descriptor the next fd-carrying monitor event names.
fn event_fd(events: &mut ferromq::Socket) -> i32 {
    let frames = events
        .recv_multipart(RecvFlags::empty())
        .expect("a monitor event");
    let event = ferromq::monitor::MonitorEvent::parse(&frames).expect("event");
    i32::try_from(event.value).expect("an fd")
}

/// An ipc connection's end asks for a larger send buffer than the OS default once it writes a
/// large body (the engine's `IPC_SEND_BUFFER` says why), and only then, whatever ZMQ_SNDBUF
/// says (libzmq applies that option to tcp only): small messages leave both ends' buffers
/// as they were, and the end that never sent a large body keeps its default.
#[test]
fn an_ipc_connection_widens_its_send_buffer_for_large_bodies() {
    use std::os::fd::AsRawFd;
    let (plain, _other) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    let default = send_buffer(plain.as_raw_fd());
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(5000).expect("rcvtimeo");
    let mut accepted = watch(
        &ctx,
        &mut pull,
        "inproc://ipc-sndbuf-accepted",
        ferromq::monitor::EVENT_ACCEPTED,
    );
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.set(ferromq::option::typed::ZMQ_SNDBUF, Some(4096))
        .expect("sndbuf");
    let mut connected = watch(
        &ctx,
        &mut push,
        "inproc://ipc-sndbuf-connected",
        ferromq::monitor::EVENT_CONNECTED,
    );
    let endpoint = format!(
        "ipc://{}",
        std::env::temp_dir()
            .join(format!("ferromq-ipc-sndbuf-{}.sock", std::process::id()))
            .display()
    );
    pull.bind(&endpoint).expect("bind");
    push.connect(&endpoint).expect("connect");
    let (pull_end, push_end) = (event_fd(&mut accepted), event_fd(&mut connected));
    for round in 0..100 {
        push.send(format!("small {round}"), SendFlags::empty())
            .expect("send");
        pull.recv(RecvFlags::empty()).expect("small delivered");
    }
    assert_eq!(send_buffer(push_end), default, "after small messages");
    let large = vec![7u8; 1024 * 1024];
    push.send(large.clone(), SendFlags::empty()).expect("send");
    let got = pull.recv(RecvFlags::empty()).expect("large delivered");
    assert!(got.as_slice() == &large[..], "the large body arrived whole");
    let widened = send_buffer(push_end);
    assert!(
        widened > default,
        "the sending end's buffer is {widened} bytes after a large body, the OS default {default}"
    );
    assert_eq!(send_buffer(pull_end), default, "the end that only received");
    drop((push, pull, accepted, connected));
    ctx.term();
}
