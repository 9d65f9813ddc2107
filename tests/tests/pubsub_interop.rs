//! PUB/SUB and XPUB/XSUB between ferromq and real libzmq (the `zmq` crate, bundled libzmq
//! 4.3.4), both libraries on either side, either side binding, over tcp and ipc; and
//! ferromq with itself over inproc.
//!
//! One helper per role ([`End`] wraps either library); the cases are tables. Subscriptions
//! travel asynchronously, so a publisher repeats a sync message until the subscriber has
//! seen one (every wait is bounded by [`TIMEOUT`]).

use std::time::{Duration, Instant};

use ferromq::{RecvFlags, SendFlags, SocketType};

const TIMEOUT: Duration = Duration::from_secs(10);
const RCVTIMEO_MS: i32 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lib {
    Ferro,
    Zmq,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Tcp,
    Ipc,
    Inproc,
}

/// One socket of either library.
#[allow(clippy::large_enum_variant)] // a handful per test
enum End {
    Ferro(ferromq::Socket),
    Zmq(zmq::Socket),
}

struct Contexts {
    ferro: ferromq::Context,
    zmq: zmq::Context,
}

fn ferro_kind(k: zmq::SocketType) -> SocketType {
    match k {
        zmq::PUB => SocketType::Pub,
        zmq::SUB => SocketType::Sub,
        zmq::XPUB => SocketType::XPub,
        _ => SocketType::XSub,
    }
}

impl End {
    fn new(ctx: &Contexts, lib: Lib, kind: zmq::SocketType) -> End {
        match lib {
            Lib::Ferro => {
                let mut s = ctx.ferro.socket(ferro_kind(kind)).unwrap();
                s.set_rcvtimeo(RCVTIMEO_MS).unwrap();
                s.set_linger(0).unwrap();
                End::Ferro(s)
            }
            Lib::Zmq => {
                let s = ctx.zmq.socket(kind).unwrap();
                s.set_rcvtimeo(RCVTIMEO_MS).unwrap();
                s.set_linger(0).unwrap();
                End::Zmq(s)
            }
        }
    }

    /// Binds and returns the endpoint to connect to.
    fn bind(&mut self, t: Transport, name: &str) -> String {
        let ep = match t {
            Transport::Tcp => "tcp://127.0.0.1:*".to_owned(),
            Transport::Ipc => format!(
                "ipc://{}/ferromq-pubsub-{}-{name}.ipc",
                std::env::temp_dir().display(),
                std::process::id()
            ),
            Transport::Inproc => format!("inproc://pubsub-{name}"),
        };
        match self {
            End::Ferro(s) => {
                s.bind(&ep).unwrap();
                s.last_endpoint().unwrap()
            }
            End::Zmq(s) => {
                s.bind(&ep).unwrap();
                s.get_last_endpoint().unwrap().unwrap()
            }
        }
    }

    fn connect(&mut self, ep: &str) {
        match self {
            End::Ferro(s) => s.connect(ep).unwrap(),
            End::Zmq(s) => s.connect(ep).unwrap(),
        }
    }

    fn send(&mut self, parts: &[&[u8]]) {
        match self {
            End::Ferro(s) => s
                .send_multipart(parts.iter().map(|p| p.to_vec()), SendFlags::empty())
                .unwrap(),
            End::Zmq(s) => s.send_multipart(parts.iter(), 0).unwrap(),
        }
    }

    /// One message, or `None` after the short receive timeout.
    fn recv(&mut self) -> Option<Vec<Vec<u8>>> {
        match self {
            End::Ferro(s) => s
                .recv_multipart(RecvFlags::empty())
                .ok()
                .map(|v| v.into_iter().map(|b| b.to_vec()).collect()),
            End::Zmq(s) => s.recv_multipart(0).ok(),
        }
    }

    /// The next message, waiting up to [`TIMEOUT`] for it (the short RCVTIMEO only paces
    /// polling loops; a message that is due may take longer on a loaded machine).
    fn recv_due(&mut self) -> Option<Vec<Vec<u8>>> {
        let start = Instant::now();
        loop {
            if let Some(m) = self.recv() {
                return Some(m);
            }
            if start.elapsed() >= TIMEOUT {
                return None;
            }
        }
    }

    fn subscribe(&mut self, topic: &[u8]) {
        match self {
            End::Ferro(s) => s.set_subscribe(topic).unwrap(),
            End::Zmq(s) => s.set_subscribe(topic).unwrap(),
        }
    }

    fn unsubscribe(&mut self, topic: &[u8]) {
        match self {
            End::Ferro(s) => s.set_unsubscribe(topic).unwrap(),
            End::Zmq(s) => s.set_unsubscribe(topic).unwrap(),
        }
    }

    /// Makes the socket process its pending commands (libzmq: ZMQ_EVENTS does).
    fn kick(&mut self) {
        match self {
            End::Ferro(s) => {
                s.events();
            }
            End::Zmq(s) => {
                let _ = s.get_events();
            }
        }
    }

    fn verbose(&mut self) {
        match self {
            End::Ferro(s) => s.set_xpub_verbose(true).unwrap(),
            End::Zmq(s) => s.set_xpub_verbose(true).unwrap(),
        }
    }
}

/// Publishes `sync` until `sub` receives it (subscriptions have arrived).
fn sync(publisher: &mut End, sub: &mut End, sync: &[u8]) {
    let start = Instant::now();
    loop {
        publisher.send(&[sync]);
        if let Some(m) = sub.recv() {
            if m[0] == sync {
                break;
            }
        }
        assert!(start.elapsed() < TIMEOUT, "subscription never arrived");
    }
    // Drop the extra sync copies.
    while sub.recv().is_some_and(|m| m[0] == sync) {}
}

fn pair(
    ctx: &Contexts,
    libs: (Lib, Lib),
    kinds: (zmq::SocketType, zmq::SocketType),
    publisher_binds: bool,
    t: Transport,
    name: &str,
) -> (End, End) {
    let mut p = End::new(ctx, libs.0, kinds.0);
    let mut s = End::new(ctx, libs.1, kinds.1);
    if publisher_binds {
        let ep = p.bind(t, name);
        s.connect(&ep);
    } else {
        let ep = s.bind(t, name);
        p.connect(&ep);
    }
    (p, s)
}

fn contexts() -> Contexts {
    Contexts {
        ferro: ferromq::Context::new(),
        zmq: zmq::Context::new(),
    }
}

/// Every cross-library setup: (publisher lib, subscriber lib, publisher binds, transport).
fn setups() -> Vec<(Lib, Lib, bool, Transport)> {
    let mut v = vec![];
    for libs in [(Lib::Ferro, Lib::Zmq), (Lib::Zmq, Lib::Ferro)] {
        for binds in [true, false] {
            for t in [Transport::Tcp, Transport::Ipc] {
                v.push((libs.0, libs.1, binds, t));
            }
        }
    }
    v.push((Lib::Ferro, Lib::Ferro, true, Transport::Inproc));
    v.push((Lib::Ferro, Lib::Ferro, false, Transport::Inproc));
    v.push((Lib::Ferro, Lib::Ferro, true, Transport::Tcp));
    v
}

fn name(prefix: &str, i: usize) -> String {
    format!("{prefix}-{i}")
}

#[test]
fn pub_sub_many_topics_and_runtime_unsubscribe() {
    let ctx = contexts();
    for (i, (pl, sl, binds, t)) in setups().into_iter().enumerate() {
        let case = format!("{pl:?}->{sl:?} pub_binds={binds} {t:?}");
        let (mut p, mut s) = pair(
            &ctx,
            (pl, sl),
            (zmq::PUB, zmq::SUB),
            binds,
            t,
            &name("many", i),
        );
        for k in 0..50 {
            s.subscribe(format!("topic-{k:03}/").as_bytes());
        }
        s.subscribe(b"sync");
        sync(&mut p, &mut s, b"sync");
        for k in 0..100 {
            p.send(&[format!("topic-{k:03}/x").as_bytes(), b"body"]);
        }
        p.send(&[b"sync-end"]);
        let mut got = vec![];
        while let Some(m) = s.recv_due() {
            if m[0] == b"sync-end" {
                break;
            }
            assert_eq!(m.len(), 2, "{case}");
            got.push(String::from_utf8(m[0].clone()).unwrap());
        }
        let want: Vec<String> = (0..50).map(|k| format!("topic-{k:03}/x")).collect();
        assert_eq!(got, want, "{case}");

        // Unsubscribe at run time: the topic stops, the others go on.
        s.unsubscribe(b"topic-000/");
        s.subscribe(b"late");
        sync(&mut p, &mut s, b"late");
        p.send(&[b"topic-000/gone"]);
        p.send(&[b"topic-001/kept"]);
        let m = s.recv_due().unwrap_or_default();
        assert_eq!(m, vec![b"topic-001/kept".to_vec()], "{case}");
    }
}

#[test]
fn publisher_filters_before_the_wire() {
    // An XSUB does not filter what it receives: only the publisher's filter is at work.
    let ctx = contexts();
    for (i, (pl, sl, binds, t)) in setups().into_iter().enumerate() {
        let case = format!("{pl:?}->{sl:?} pub_binds={binds} {t:?}");
        let (mut p, mut s) = pair(
            &ctx,
            (pl, sl),
            (zmq::PUB, zmq::XSUB),
            binds,
            t,
            &name("filter", i),
        );
        s.send(&[b"\x01A"]);
        sync(&mut p, &mut s, b"A-sync");
        p.send(&[b"B-no"]);
        p.send(&[b"A-yes"]);
        assert_eq!(
            s.recv_due().unwrap_or_default(),
            vec![b"A-yes".to_vec()],
            "{case}"
        );
        s.send(&[b"\x00A"]);
        s.send(&[b"\x01C"]);
        sync(&mut p, &mut s, b"C-sync");
        p.send(&[b"A-no"]);
        p.send(&[b"C-yes"]);
        assert_eq!(
            s.recv_due().unwrap_or_default(),
            vec![b"C-yes".to_vec()],
            "{case}"
        );
    }
}

#[test]
fn xpub_sees_subscriptions_of_the_other_library() {
    let ctx = contexts();
    for (i, (pl, sl, binds, t)) in setups().into_iter().enumerate() {
        let case = format!("{pl:?}->{sl:?} pub_binds={binds} {t:?}");
        let (mut x, mut s) = pair(
            &ctx,
            (pl, sl),
            (zmq::XPUB, zmq::SUB),
            binds,
            t,
            &name("xpub", i),
        );
        x.verbose();
        // libzmq attaches a new pipe (and sends its subscriptions) only when the
        // application calls into the socket: keep poking the subscriber.
        let next = |x: &mut End, s: &mut End| {
            let start = Instant::now();
            loop {
                s.kick();
                if let Some(m) = x.recv() {
                    return m;
                }
                assert!(start.elapsed() < TIMEOUT, "{case}: no subscription message");
            }
        };
        s.subscribe(b"alpha");
        assert_eq!(next(&mut x, &mut s), vec![b"\x01alpha".to_vec()], "{case}");
        s.subscribe(b"");
        assert_eq!(next(&mut x, &mut s), vec![b"\x01".to_vec()], "{case}");
        // Counted at the subscriber: the first unsubscribe stays local.
        s.subscribe(b"alpha");
        assert_eq!(
            next(&mut x, &mut s),
            vec![b"\x01alpha".to_vec()],
            "verbose: {case}"
        );
        s.unsubscribe(b"alpha");
        s.unsubscribe(b"alpha");
        assert_eq!(next(&mut x, &mut s), vec![b"\x00alpha".to_vec()], "{case}");
        let long = vec![b'L'; 200];
        s.subscribe(&long);
        let mut want = vec![1u8];
        want.extend_from_slice(&long);
        assert_eq!(next(&mut x, &mut s), vec![want], "{case}");
    }
}

#[test]
fn subscriptions_are_resent_after_the_publisher_restarts() {
    let ctx = contexts();
    for (i, pl) in [Lib::Zmq, Lib::Ferro].into_iter().enumerate() {
        let mut s = End::new(&ctx, Lib::Ferro, zmq::SUB);
        let mut p = End::new(&ctx, pl, zmq::PUB);
        let ep = p.bind(Transport::Tcp, &name("restart", i));
        s.connect(&ep);
        s.subscribe(b"k");
        sync(&mut p, &mut s, b"k1");
        drop(p);
        let start = Instant::now();
        let mut p = loop {
            let mut p2 = End::new(&ctx, pl, zmq::PUB);
            let ok = match &mut p2 {
                End::Ferro(x) => x.bind(&ep).is_ok(),
                End::Zmq(x) => x.bind(&ep).is_ok(),
            };
            if ok {
                break p2;
            }
            assert!(start.elapsed() < TIMEOUT, "could not rebind {ep}");
            std::thread::sleep(Duration::from_millis(20));
        };
        sync(&mut p, &mut s, b"k2");
    }
}

#[test]
fn hwm_drops_at_pub_instead_of_blocking() {
    let ctx = ferromq::Context::new();
    let mut p = ctx.socket(SocketType::Pub).unwrap();
    p.set_sndhwm(10).unwrap();
    p.bind("inproc://hwm-drop").unwrap();
    let mut s = ctx.socket(SocketType::Sub).unwrap();
    s.set_rcvhwm(10).unwrap();
    s.set_rcvtimeo(200).unwrap();
    s.connect("inproc://hwm-drop").unwrap();
    s.set_subscribe(b"").unwrap();
    // Wait for the subscription.
    let start = Instant::now();
    loop {
        p.send("ping", SendFlags::DONTWAIT).unwrap();
        if s.recv(RecvFlags::DONTWAIT).is_ok() {
            break;
        }
        assert!(start.elapsed() < TIMEOUT);
    }
    while s.recv(RecvFlags::DONTWAIT).is_ok() {}
    for k in 0..1000u32 {
        // Never blocks, never fails.
        p.send(k.to_be_bytes().to_vec(), SendFlags::DONTWAIT)
            .unwrap();
    }
    let mut n = 0;
    while s.recv(RecvFlags::DONTWAIT).is_ok() {
        n += 1;
    }
    assert!(
        n > 0 && n <= 20,
        "inproc HWM is SNDHWM + RCVHWM = 20, got {n}"
    );

    // XPUB_NODROP: the send fails with EAGAIN instead.
    p.set_xpub_nodrop(true).unwrap();
    let mut sent = 0;
    while p.send("x", SendFlags::DONTWAIT).is_ok() {
        sent += 1;
        assert!(sent <= 20);
    }
    assert_eq!(
        p.send("x", SendFlags::DONTWAIT)
            .map_err(ferromq::Error::from),
        Err(ferromq::Error::Again)
    );
}

#[test]
fn xpub_manual_welcome_and_conflate() {
    let ctx = ferromq::Context::new();
    let mut x = ctx.socket(SocketType::XPub).unwrap();
    x.set_xpub_manual(true).unwrap();
    x.set_xpub_welcome_msg(b"welcome").unwrap();
    x.set_rcvtimeo(5000).unwrap();
    x.bind("inproc://manual").unwrap();
    let mut s = ctx.socket(SocketType::Sub).unwrap();
    s.set_rcvtimeo(5000).unwrap();
    s.connect("inproc://manual").unwrap();
    s.set_subscribe(b"welcome").unwrap();
    s.set_subscribe(b"a").unwrap();
    assert_eq!(
        x.recv(RecvFlags::empty()).unwrap().as_slice(),
        b"\x01welcome"
    );
    assert_eq!(x.recv(RecvFlags::empty()).unwrap().as_slice(), b"\x01a");
    // The XPUB attached the peer (and sent the welcome) when it first ran.
    assert_eq!(s.recv(RecvFlags::empty()).unwrap().as_slice(), b"welcome");
    // Manual: the application decides; it subscribes the peer to "b" instead of "a".
    x.set_subscribe(b"b").unwrap();
    x.send("a1", SendFlags::empty()).unwrap();
    x.send("b1", SendFlags::empty()).unwrap();
    s.set_subscribe(b"b").unwrap();
    assert_eq!(s.recv(RecvFlags::empty()).unwrap().as_slice(), b"b1");

    // CONFLATE on a SUB: only the newest waiting message.
    let mut p = ctx.socket(SocketType::Pub).unwrap();
    p.bind("inproc://conflate").unwrap();
    let mut c = ctx.socket(SocketType::Sub).unwrap();
    c.set_conflate(true).unwrap();
    c.set_rcvtimeo(5000).unwrap();
    c.connect("inproc://conflate").unwrap();
    c.set_subscribe(b"").unwrap();
    let start = Instant::now();
    loop {
        p.send("sync", SendFlags::empty()).unwrap();
        if c.recv(RecvFlags::DONTWAIT).is_ok() {
            break;
        }
        assert!(start.elapsed() < TIMEOUT);
    }
    for k in 0..10 {
        p.send(format!("v{k}"), SendFlags::empty()).unwrap();
    }
    assert_eq!(c.recv(RecvFlags::empty()).unwrap().as_slice(), b"v9");
}

#[test]
fn option_rules_match_libzmq() {
    let ctx = ferromq::Context::new();
    let zctx = zmq::Context::new();
    for (kind, zkind) in [
        (SocketType::XSub, zmq::XSUB),
        (SocketType::Push, zmq::PUSH),
        (SocketType::Dealer, zmq::DEALER),
    ] {
        let mut f = ctx.socket(kind).unwrap();
        let z = zctx.socket(zkind).unwrap();
        assert_eq!(
            f.set_subscribe(b"a").is_err(),
            z.set_subscribe(b"a").is_err(),
            "{kind:?}"
        );
    }
    let mut sub = ctx.socket(SocketType::Sub).unwrap();
    assert_eq!(
        sub.send("x", SendFlags::empty())
            .map_err(ferromq::Error::from),
        Err(ferromq::Error::NotSup)
    );
    let mut pubs = ctx.socket(SocketType::Pub).unwrap();
    assert_eq!(pubs.recv(RecvFlags::DONTWAIT), Err(ferromq::Error::NotSup));
}
