//! `ferromq::poll` over two sockets and a pipe fd together, with zmq_poll's timeouts and
//! ZMQ_FD's edge-triggered meaning; one of the sockets' peers is real libzmq.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use ferromq::{poll, Context, PollItem, RecvFlags, SendFlags, SocketType, POLLIN, POLLOUT};

#[test]
fn two_sockets_and_a_pipe() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = pull.last_endpoint().expect("endpoint");
    let mut pair = ctx.socket(SocketType::Pair).expect("pair");
    pair.bind("inproc://poll-pair").expect("bind");
    let mut pair_peer = ctx.socket(SocketType::Pair).expect("pair");
    pair_peer.connect("inproc://poll-pair").expect("connect");

    let zctx = zmq::Context::new();
    let push = zctx.socket(zmq::PUSH).expect("zmq push");
    push.connect(&endpoint).expect("zmq connect");

    let (mut reader, mut writer) = std::io::pipe().expect("pipe");

    // Nothing ready: timeout 0 returns at once, a short timeout waits it out.
    {
        let mut items = [
            PollItem::socket(&pull, POLLIN),
            PollItem::socket(&pair, POLLIN),
            PollItem::fd(reader.as_fd(), POLLIN),
        ];
        assert_eq!(poll(&mut items, 0).expect("poll"), 0);
        let t = Instant::now();
        assert_eq!(poll(&mut items, 50).expect("poll"), 0);
        assert!(t.elapsed() >= Duration::from_millis(50));
    }

    // A message from libzmq wakes a poll that waits forever.
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        push.send("from libzmq", 0).expect("zmq send");
        push
    });
    {
        let mut items = [
            PollItem::socket(&pull, POLLIN),
            PollItem::socket(&pair, POLLIN),
            PollItem::fd(reader.as_fd(), POLLIN),
        ];
        assert_eq!(poll(&mut items, -1).expect("poll"), 1);
        assert!(items[0].is_readable());
        assert_eq!(items[1].revents() | items[2].revents(), 0);
    }
    let _push = sender.join().expect("sender");
    assert_eq!(
        pull.recv(RecvFlags::DONTWAIT).expect("recv").as_slice(),
        b"from libzmq"
    );

    // The pipe and the inproc pair both ready: both reported; POLLOUT only where asked.
    writer.write_all(b"p").expect("pipe write");
    pair_peer.send("q", SendFlags::empty()).expect("send");
    {
        let mut items = [
            PollItem::socket(&pull, POLLIN),
            PollItem::socket(&pair, POLLIN | POLLOUT),
            PollItem::fd(reader.as_fd(), POLLIN),
        ];
        assert_eq!(poll(&mut items, 1000).expect("poll"), 2);
        assert_eq!(items[0].revents(), 0);
        assert_eq!(items[1].revents(), POLLIN | POLLOUT);
        assert_eq!(items[2].revents(), POLLIN);
    }
    let mut b = [0u8; 1];
    reader.read_exact(&mut b).expect("pipe read");
    assert_eq!(
        pair.recv(RecvFlags::DONTWAIT).expect("recv").as_slice(),
        b"q"
    );

    // Drained: the pair is still writable, nothing is readable.
    let mut items = [
        PollItem::socket(&pair, POLLIN),
        PollItem::fd(reader.as_fd(), POLLIN),
    ];
    assert_eq!(poll(&mut items, 20).expect("poll"), 0);
}

#[test]
fn poll_looks_at_events_not_only_the_fd() {
    // After ZMQ_EVENTS has been read the fd may stay quiet although messages wait, so
    // poll asks events() itself before it sleeps on the fd, as zmq_poll does.
    let ctx = Context::new();
    let mut a = ctx.socket(SocketType::Pair).expect("pair");
    let mut b = ctx.socket(SocketType::Pair).expect("pair");
    a.bind("inproc://poll-edge").expect("bind");
    b.connect("inproc://poll-edge").expect("connect");
    b.send("1", SendFlags::empty()).expect("send");
    b.send("2", SendFlags::empty()).expect("send");
    assert!(a.events().contains(ferromq::Events::POLLIN));
    let ready = poll(&mut [PollItem::socket(&a, POLLIN)], 0).expect("poll");
    assert_eq!(ready, 1, "poll asks events()");
    a.recv(RecvFlags::DONTWAIT).expect("1");
    a.recv(RecvFlags::DONTWAIT).expect("2");
    let ready = poll(&mut [PollItem::socket(&a, POLLIN)], 0).expect("poll");
    assert_eq!(ready, 0);
}
