//! Every valid pairing of PAIR, DEALER, ROUTER, PUSH and PULL between ferromq and real libzmq
//! (the `zmq` crate, bundled libzmq 4.3.4), in both directions of bind/connect, over tcp and
//! ipc; and ferromq with itself over tcp, ipc and inproc.
//!
//! The matrix is a table ([`PAIRINGS`] x [`SETUPS`]); one function per role runs a pairing
//! ([`exchange`]), so adding a socket type is one row. Each exchange sends multipart messages
//! with 0-byte, 1-byte and 1 MiB frames in each direction the pairing allows. A separate test
//! streams 10,000 numbered messages per direction and checks that none is lost, duplicated or
//! reordered. Every receive has a timeout, so a broken run fails instead of hanging.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferromq::{Msg, RecvFlags, SendFlags};

/// How long any one receive or send may block before the test fails.
const TIMEOUT_MS: i32 = 10_000;

/// Which library one end of a pairing runs on.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pair,
    Dealer,
    Router,
    Push,
    Pull,
}

impl Kind {
    fn ferro(self) -> ferromq::SocketType {
        match self {
            Kind::Pair => ferromq::SocketType::Pair,
            Kind::Dealer => ferromq::SocketType::Dealer,
            Kind::Router => ferromq::SocketType::Router,
            Kind::Push => ferromq::SocketType::Push,
            Kind::Pull => ferromq::SocketType::Pull,
        }
    }

    fn zmq(self) -> zmq::SocketType {
        match self {
            Kind::Pair => zmq::PAIR,
            Kind::Dealer => zmq::DEALER,
            Kind::Router => zmq::ROUTER,
            Kind::Push => zmq::PUSH,
            Kind::Pull => zmq::PULL,
        }
    }

    fn can_send(self) -> bool {
        self != Kind::Pull
    }

    fn can_recv(self) -> bool {
        self != Kind::Push
    }
}

/// One socket of either library, seen as "send these parts" / "receive one message".
enum End {
    /// Boxed: a ferromq socket is much larger than a `zmq::Socket` handle.
    Ferro(Box<ferromq::Socket>),
    Zmq(zmq::Socket),
}

/// Why a send did not go through (only ROUTER_MANDATORY before the peer is known).
#[derive(Debug, PartialEq, Eq)]
enum SendOutcome {
    Sent,
    Unroutable,
}

impl End {
    fn new(lib: Lib, kind: Kind, ctxs: &Contexts, routing_id: Option<&[u8]>) -> End {
        match lib {
            Lib::Ferro => {
                let mut s = ctxs.ferro.socket(kind.ferro()).expect("ferromq socket");
                s.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
                s.set_option_raw(ferromq::option::ZMQ_SNDTIMEO, &TIMEOUT_MS.to_ne_bytes())
                    .expect("sndtimeo");
                s.set_linger(0).expect("linger");
                if let Some(id) = routing_id {
                    s.set_routing_id(id).expect("routing id");
                }
                if kind == Kind::Router {
                    s.set_router_mandatory(true).expect("router mandatory");
                }
                End::Ferro(Box::new(s))
            }
            Lib::Zmq => {
                let s = ctxs.zmq.socket(kind.zmq()).expect("zmq socket");
                s.set_rcvtimeo(TIMEOUT_MS).expect("rcvtimeo");
                s.set_sndtimeo(TIMEOUT_MS).expect("sndtimeo");
                s.set_linger(0).expect("linger");
                if let Some(id) = routing_id {
                    s.set_identity(id).expect("routing id");
                }
                if kind == Kind::Router {
                    s.set_router_mandatory(true).expect("router mandatory");
                }
                End::Zmq(s)
            }
        }
    }

    /// Binds to a wildcard address of `transport`; returns the endpoint to connect to.
    fn bind(&mut self, transport: Transport) -> String {
        let wanted = match transport {
            Transport::Tcp => "tcp://127.0.0.1:*".to_owned(),
            Transport::Ipc => unique_ipc_endpoint(),
            Transport::Inproc => format!("inproc://pairing-{}", next_id()),
        };
        match self {
            End::Ferro(s) => {
                s.bind(&wanted).expect("ferromq bind");
                s.last_endpoint().expect("ferromq last endpoint")
            }
            End::Zmq(s) => {
                s.bind(&wanted).expect("zmq bind");
                s.get_last_endpoint()
                    .expect("zmq last endpoint")
                    .expect("utf-8 endpoint")
            }
        }
    }

    fn connect(&mut self, endpoint: &str) {
        match self {
            End::Ferro(s) => s.connect(endpoint).expect("ferromq connect"),
            End::Zmq(s) => s.connect(endpoint).expect("zmq connect"),
        }
    }

    fn send(&mut self, parts: &[Bytes]) -> SendOutcome {
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            let more = i < last;
            match self {
                End::Ferro(s) => {
                    let flags = if more {
                        SendFlags::SNDMORE
                    } else {
                        SendFlags::empty()
                    };
                    match s
                        .send(Msg::from(part.clone()), flags)
                        .map_err(ferromq::Error::from)
                    {
                        Ok(()) => {}
                        Err(ferromq::Error::HostUnreachable) if i == 0 => {
                            return SendOutcome::Unroutable
                        }
                        Err(e) => panic!("ferromq send: {e}"),
                    }
                }
                End::Zmq(s) => {
                    let flags = if more { zmq::SNDMORE } else { 0 };
                    match s.send(&part[..], flags) {
                        Ok(()) => {}
                        Err(zmq::Error::EHOSTUNREACH) if i == 0 => return SendOutcome::Unroutable,
                        Err(e) => panic!("zmq send: {e}"),
                    }
                }
            }
        }
        SendOutcome::Sent
    }

    /// Sends, retrying while a ROUTER does not know the peer yet (its handshake is still on).
    fn send_routed(&mut self, parts: &[Bytes]) {
        let deadline = Instant::now() + Duration::from_millis(TIMEOUT_MS as u64);
        while self.send(parts) == SendOutcome::Unroutable {
            assert!(Instant::now() < deadline, "peer never became routable");
            thread::sleep(Duration::from_millis(2));
        }
    }

    fn recv(&mut self) -> Vec<Bytes> {
        match self {
            End::Ferro(s) => {
                let mut parts = Vec::new();
                loop {
                    let m = s
                        .recv(RecvFlags::empty())
                        .expect("ferromq recv (timed out?)");
                    let more = m.more;
                    parts.push(m.data);
                    if !more {
                        return parts;
                    }
                }
            }
            End::Zmq(s) => s
                .recv_multipart(0)
                .expect("zmq recv (timed out?)")
                .into_iter()
                .map(Bytes::from)
                .collect(),
        }
    }
}

struct Contexts {
    ferro: ferromq::Context,
    zmq: zmq::Context,
}

impl Contexts {
    fn new() -> Contexts {
        Contexts {
            ferro: ferromq::Context::new(),
            zmq: zmq::Context::new(),
        }
    }
}

fn next_id() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn unique_ipc_endpoint() -> String {
    let path = std::env::temp_dir().join(format!(
        "ferromq-pairing-{}-{}.sock",
        std::process::id(),
        next_id()
    ));
    format!("ipc://{}", path.display())
}

/// One valid pairing: the binding side's type and the connecting side's type.
struct Pairing {
    binder: Kind,
    connecter: Kind,
}

/// Every valid pairing of the five types, each way round where the types differ.
const PAIRINGS: &[Pairing] = &[
    Pairing {
        binder: Kind::Pair,
        connecter: Kind::Pair,
    },
    Pairing {
        binder: Kind::Push,
        connecter: Kind::Pull,
    },
    Pairing {
        binder: Kind::Pull,
        connecter: Kind::Push,
    },
    Pairing {
        binder: Kind::Dealer,
        connecter: Kind::Dealer,
    },
    Pairing {
        binder: Kind::Router,
        connecter: Kind::Dealer,
    },
    Pairing {
        binder: Kind::Dealer,
        connecter: Kind::Router,
    },
    Pairing {
        binder: Kind::Router,
        connecter: Kind::Router,
    },
];

/// Which library binds, which connects, and over what.
struct Setup {
    binder: Lib,
    connecter: Lib,
    transport: Transport,
}

const SETUPS: &[Setup] = &[
    Setup {
        binder: Lib::Ferro,
        connecter: Lib::Zmq,
        transport: Transport::Tcp,
    },
    Setup {
        binder: Lib::Zmq,
        connecter: Lib::Ferro,
        transport: Transport::Tcp,
    },
    Setup {
        binder: Lib::Ferro,
        connecter: Lib::Zmq,
        transport: Transport::Ipc,
    },
    Setup {
        binder: Lib::Zmq,
        connecter: Lib::Ferro,
        transport: Transport::Ipc,
    },
    Setup {
        binder: Lib::Ferro,
        connecter: Lib::Ferro,
        transport: Transport::Tcp,
    },
    Setup {
        binder: Lib::Ferro,
        connecter: Lib::Ferro,
        transport: Transport::Ipc,
    },
    Setup {
        binder: Lib::Ferro,
        connecter: Lib::Ferro,
        transport: Transport::Inproc,
    },
];

const BINDER_ID: &[u8] = b"binder";
const CONNECTER_ID: &[u8] = b"connecter";

/// Creates, binds and connects both ends of `pairing` as `setup` says.
fn connected(ctxs: &Contexts, pairing: &Pairing, setup: &Setup) -> (End, End) {
    // Routing ids let a ROUTER address its peer by a known name; other types ignore them.
    let mut binder = End::new(setup.binder, pairing.binder, ctxs, Some(BINDER_ID));
    let mut connecter = End::new(setup.connecter, pairing.connecter, ctxs, Some(CONNECTER_ID));
    let endpoint = binder.bind(setup.transport);
    connecter.connect(&endpoint);
    (binder, connecter)
}

/// The messages every exchange carries: empty, tiny and 1 MiB frames, single and multipart.
fn payloads() -> Vec<Vec<Bytes>> {
    let big = Bytes::from((0..1 << 20).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
    vec![
        vec![Bytes::from_static(b"hello")],
        vec![Bytes::new()],
        vec![
            Bytes::from_static(b"a"),
            Bytes::new(),
            Bytes::from_static(b"multi-part"),
        ],
        vec![big.clone()],
        vec![Bytes::from_static(b"head"), big],
    ]
}

/// Sends `msg` from `from` (of type `from_kind`) to `to`, which knows `from` as `from_id`, and
/// checks what arrives, envelopes included.
fn transfer(
    from: &mut End,
    from_kind: Kind,
    to: &mut End,
    to_kind: Kind,
    to_id: &[u8],
    from_id: &[u8],
    msg: &[Bytes],
) {
    let mut wire = Vec::new();
    if from_kind == Kind::Router {
        wire.push(Bytes::copy_from_slice(to_id));
    }
    wire.extend_from_slice(msg);
    from.send_routed(&wire);
    let got = to.recv();
    let mut expected = Vec::new();
    if to_kind == Kind::Router {
        expected.push(Bytes::copy_from_slice(from_id));
    }
    expected.extend_from_slice(msg);
    assert_eq!(got.len(), expected.len(), "frame count");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert!(
            g == e,
            "frame {i} differs ({} vs {} bytes)",
            g.len(),
            e.len()
        );
    }
}

/// Runs every payload through one pairing in each direction it allows.
fn exchange(pairing: &Pairing, setup: &Setup) {
    let ctxs = Contexts::new();
    let (mut binder, mut connecter) = connected(&ctxs, pairing, setup);
    for msg in payloads() {
        // The connecter speaks first: a ROUTER binder learns its peer from the first message
        // only when the peer is a DEALER; with ids set both ways any order works.
        if pairing.connecter.can_send() && pairing.binder.can_recv() {
            transfer(
                &mut connecter,
                pairing.connecter,
                &mut binder,
                pairing.binder,
                BINDER_ID,
                CONNECTER_ID,
                &msg,
            );
        }
        if pairing.binder.can_send() && pairing.connecter.can_recv() {
            transfer(
                &mut binder,
                pairing.binder,
                &mut connecter,
                pairing.connecter,
                CONNECTER_ID,
                BINDER_ID,
                &msg,
            );
        }
    }
}

fn describe(pairing: &Pairing, setup: &Setup) -> String {
    format!(
        "{:?}({:?}) binds, {:?}({:?}) connects, over {:?}",
        pairing.binder, setup.binder, pairing.connecter, setup.connecter, setup.transport
    )
}

/// Runs `f` for every cell of the matrix whose setup passes `filter`, naming the failing cell.
fn for_each_cell(filter: impl Fn(&Setup) -> bool, f: impl Fn(&Pairing, &Setup)) {
    for setup in SETUPS.iter().filter(|s| filter(s)) {
        for pairing in PAIRINGS {
            let name = describe(pairing, setup);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                f(pairing, setup);
            }));
            if let Err(e) = outcome {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panic!("{name}: {why}");
            }
        }
    }
}

#[test]
fn interop_pairings_ferromq_binds_libzmq_connects() {
    for_each_cell(
        |s| s.binder == Lib::Ferro && s.connecter == Lib::Zmq,
        exchange,
    );
}

#[test]
fn interop_pairings_libzmq_binds_ferromq_connects() {
    for_each_cell(
        |s| s.binder == Lib::Zmq && s.connecter == Lib::Ferro,
        exchange,
    );
}

#[test]
fn ferromq_pairings_with_itself() {
    for_each_cell(
        |s| s.binder == Lib::Ferro && s.connecter == Lib::Ferro,
        exchange,
    );
}

/// How many numbered messages the ordering test streams per direction.
const STREAM_LEN: u32 = 10_000;

/// Streams numbered messages from `from` to `to` on two threads (the sender blocks at the HWM
/// while the receiver drains) and checks the sequence arrives whole and in order.
fn stream(from: End, from_kind: Kind, to: End, to_kind: Kind, to_id: &'static [u8]) -> (End, End) {
    let sender = thread::spawn(move || {
        let mut from = from;
        for n in 0..STREAM_LEN {
            let mut wire = Vec::with_capacity(2);
            if from_kind == Kind::Router {
                wire.push(Bytes::from_static(to_id));
            }
            wire.push(Bytes::copy_from_slice(&n.to_be_bytes()));
            from.send_routed(&wire);
        }
        from
    });
    let mut to = to;
    for n in 0..STREAM_LEN {
        let got = to.recv();
        let body = got.last().expect("a frame");
        let expected_len = if to_kind == Kind::Router { 2 } else { 1 };
        assert_eq!(got.len(), expected_len, "message {n}: frame count");
        assert_eq!(
            &body[..],
            &n.to_be_bytes(),
            "message {n} out of order or lost"
        );
    }
    let from = sender.join().expect("sender thread");
    (from, to)
}

#[test]
fn interop_ten_thousand_messages_in_order() {
    let cells: &[(Kind, Kind)] = &[(Kind::Push, Kind::Pull), (Kind::Dealer, Kind::Router)];
    for setup in SETUPS.iter().filter(|s| s.transport != Transport::Ipc) {
        for &(sender_kind, receiver_kind) in cells {
            let ctxs = Contexts::new();
            // The receiver binds, the sender connects: the common fan-in shape.
            let pairing = Pairing {
                binder: receiver_kind,
                connecter: sender_kind,
            };
            let (binder, connecter) = connected(&ctxs, &pairing, setup);
            let (connecter, binder) =
                stream(connecter, sender_kind, binder, receiver_kind, BINDER_ID);
            if receiver_kind == Kind::Router {
                // And back: the ROUTER streams to the DEALER it now knows.
                stream(binder, receiver_kind, connecter, sender_kind, CONNECTER_ID);
            }
        }
    }
}

#[test]
fn messages_sent_before_the_peer_binds_are_delivered() {
    // libzmq semantics: a connecting PUSH/DEALER/PAIR creates its pipe at connect time, so
    // what it sends before the connection exists is queued, then delivered.
    for lib in [Lib::Zmq, Lib::Ferro] {
        let ctxs = Contexts::new();
        // An ipc path nobody listens on yet: the connect keeps retrying until the bind.
        let endpoint = unique_ipc_endpoint();
        let mut push = End::new(Lib::Ferro, Kind::Push, &ctxs, None);
        push.connect(&endpoint);
        push.send(&[Bytes::from_static(b"early")]);
        let mut pull = End::new(lib, Kind::Pull, &ctxs, None);
        match &mut pull {
            End::Ferro(s) => s.bind(&endpoint).expect("rebind"),
            End::Zmq(s) => s.bind(&endpoint).expect("rebind"),
        }
        assert_eq!(
            pull.recv(),
            vec![Bytes::from_static(b"early")],
            "{lib:?} binder"
        );
    }
}
