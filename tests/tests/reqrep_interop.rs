//! REQ/REP, REQ/ROUTER and DEALER/REP between ferromq and libzmq (the `zmq` crate), each
//! library on either side and either side binding, over tcp and ipc; plus a ROUTER/DEALER
//! proxy between libzmq clients and ferromq workers and the reverse.

use std::thread;

use ferromq::{RecvFlags, SendFlags, SocketType};

const TIMEOUT_MS: i32 = 10_000;

/// A socket of either library with the few calls these tests need.
#[allow(clippy::large_enum_variant)] // a handful per test
enum End {
    Ferro(ferromq::Socket),
    Zmq(zmq::Socket),
}

fn ferro_kind(k: zmq::SocketType) -> SocketType {
    match k {
        zmq::REQ => SocketType::Req,
        zmq::REP => SocketType::Rep,
        zmq::DEALER => SocketType::Dealer,
        _ => SocketType::Router,
    }
}

impl End {
    fn new(f: &ferromq::Context, z: &zmq::Context, ferro: bool, kind: zmq::SocketType) -> End {
        if ferro {
            let mut s = f.socket(ferro_kind(kind)).unwrap();
            s.set_rcvtimeo(TIMEOUT_MS).unwrap();
            s.set_linger(0).unwrap();
            End::Ferro(s)
        } else {
            let s = z.socket(kind).unwrap();
            s.set_rcvtimeo(TIMEOUT_MS).unwrap();
            s.set_linger(0).unwrap();
            End::Zmq(s)
        }
    }

    fn bind(&mut self, ep: &str) -> String {
        match self {
            End::Ferro(s) => {
                s.bind(ep).unwrap();
                s.last_endpoint().unwrap()
            }
            End::Zmq(s) => {
                s.bind(ep).unwrap();
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

    fn send(&mut self, parts: &[Vec<u8>]) {
        match self {
            End::Ferro(s) => s
                .send_multipart(parts.iter().cloned(), SendFlags::empty())
                .unwrap(),
            End::Zmq(s) => s.send_multipart(parts.iter(), 0).unwrap(),
        }
    }

    fn recv(&mut self) -> Vec<Vec<u8>> {
        match self {
            End::Ferro(s) => s
                .recv_multipart(RecvFlags::empty())
                .unwrap()
                .into_iter()
                .map(|b| b.to_vec())
                .collect(),
            End::Zmq(s) => s.recv_multipart(0).unwrap(),
        }
    }
}

fn endpoints(case: usize) -> [String; 2] {
    [
        "tcp://127.0.0.1:*".to_owned(),
        format!(
            "ipc://{}/ferromq-reqrep-{}-{case}.ipc",
            std::env::temp_dir().display(),
            std::process::id()
        ),
    ]
}

/// The client side sends 3 requests, the server answers each; checks what each side sees.
fn exchange(
    client: &mut End,
    server: &mut End,
    client_kind: zmq::SocketType,
    server_kind: zmq::SocketType,
    case: &str,
) {
    for k in 0..3u8 {
        let body = vec![b'q', k];
        if client_kind == zmq::DEALER {
            client.send(&[vec![], body.clone()]);
        } else {
            client.send(std::slice::from_ref(&body));
        }
        let req = server.recv();
        let reply = if server_kind == zmq::ROUTER {
            // [routing id, empty delimiter, body]
            assert_eq!(req.len(), 3, "{case}");
            assert!(req[1].is_empty(), "{case}");
            assert_eq!(req[2], body, "{case}");
            vec![req[0].clone(), vec![], vec![b'r', k]]
        } else {
            assert_eq!(req, vec![body], "{case}");
            vec![vec![b'r', k]]
        };
        server.send(&reply);
        let got = client.recv();
        let want = if client_kind == zmq::DEALER {
            vec![vec![], vec![b'r', k]]
        } else {
            vec![vec![b'r', k]]
        };
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn req_rep_req_router_dealer_rep_both_ways() {
    let f = ferromq::Context::new();
    let z = zmq::Context::new();
    let mut case_no = 0;
    for (ck, sk) in [
        (zmq::REQ, zmq::REP),
        (zmq::REQ, zmq::ROUTER),
        (zmq::DEALER, zmq::REP),
    ] {
        for (client_ferro, server_ferro) in [(true, false), (false, true), (true, true)] {
            for server_binds in [true, false] {
                for ep in endpoints(case_no) {
                    case_no += 1;
                    let case = format!(
                        "{ck:?}/{sk:?} client_ferro={client_ferro} server_ferro={server_ferro} server_binds={server_binds} {ep}"
                    );
                    let mut c = End::new(&f, &z, client_ferro, ck);
                    let mut s = End::new(&f, &z, server_ferro, sk);
                    if server_binds {
                        let at = s.bind(&ep);
                        c.connect(&at);
                    } else {
                        let at = c.bind(&ep);
                        s.connect(&at);
                    }
                    exchange(&mut c, &mut s, ck, sk, &case);
                }
            }
        }
    }
}

#[test]
fn efsm_and_relaxed_correlated_against_libzmq_rep() {
    let f = ferromq::Context::new();
    let z = zmq::Context::new();
    let rep = z.socket(zmq::REP).unwrap();
    rep.set_rcvtimeo(TIMEOUT_MS).unwrap();
    rep.bind("tcp://127.0.0.1:*").unwrap();
    let ep = rep.get_last_endpoint().unwrap().unwrap();
    let mut req = f.socket(SocketType::Req).unwrap();
    req.set_rcvtimeo(TIMEOUT_MS).unwrap();
    req.connect(&ep).unwrap();
    assert_eq!(req.recv(RecvFlags::empty()), Err(ferromq::Error::Fsm));
    req.send("one", SendFlags::empty()).unwrap();
    assert_eq!(
        req.send("two", SendFlags::empty())
            .map_err(ferromq::Error::from),
        Err(ferromq::Error::Fsm)
    );
    assert_eq!(rep.recv_bytes(0).unwrap(), b"one");
    rep.send("r1", 0).unwrap();
    assert_eq!(req.recv(RecvFlags::empty()).unwrap().as_slice(), b"r1");

    // Relaxed + correlated: a stale reply to the first request is ignored.
    req.set_req_relaxed(true).unwrap();
    req.set_req_correlate(true).unwrap();
    req.send("a", SendFlags::empty()).unwrap();
    req.send("b", SendFlags::empty()).unwrap();
    let first = rep.recv_multipart(0).unwrap();
    rep.send("stale", 0).unwrap();
    let second = rep.recv_multipart(0).unwrap();
    assert_eq!(first.last().unwrap(), b"a");
    assert_eq!(second.last().unwrap(), b"b");
    rep.send("fresh", 0).unwrap();
    assert_eq!(req.recv(RecvFlags::empty()).unwrap().as_slice(), b"fresh");
}

/// Clients REQ -> ROUTER frontend | proxy | DEALER backend -> REP workers.
fn proxied(ferro_proxy: bool, ferro_ends: bool, case: usize) {
    let f = ferromq::Context::new();
    let z = zmq::Context::new();
    let [front_ep, back_ep] = [
        format!(
            "ipc://{}/ferromq-proxy-f-{}-{case}.ipc",
            std::env::temp_dir().display(),
            std::process::id()
        ),
        format!(
            "ipc://{}/ferromq-proxy-b-{}-{case}.ipc",
            std::env::temp_dir().display(),
            std::process::id()
        ),
    ];
    let (fe, be) = (front_ep.clone(), back_ep.clone());
    let proxy = if ferro_proxy {
        let f2 = f.clone();
        thread::spawn(move || {
            let mut front = f2.socket(SocketType::Router).unwrap();
            let mut back = f2.socket(SocketType::Dealer).unwrap();
            let mut control = f2.socket(SocketType::Pair).unwrap();
            front.bind(&fe).unwrap();
            back.bind(&be).unwrap();
            control.bind(&format!("inproc://control-{case}")).unwrap();
            ferromq::proxy_steerable(&mut front, &mut back, None, Some(&mut control))
        })
    } else {
        let z2 = z.clone();
        thread::spawn(move || {
            let mut front = z2.socket(zmq::ROUTER).unwrap();
            let mut back = z2.socket(zmq::DEALER).unwrap();
            let mut control = z2.socket(zmq::PAIR).unwrap();
            front.bind(&fe).unwrap();
            back.bind(&be).unwrap();
            control.bind(&format!("inproc://control-{case}")).unwrap();
            zmq::proxy_steerable(&mut front, &mut back, &mut control)
                .map_err(|_| ferromq::Error::Fault)
        })
    };
    let mut worker = End::new(&f, &z, ferro_ends, zmq::REP);
    let mut client = End::new(&f, &z, !ferro_ends, zmq::REQ);
    worker.connect(&back_ep);
    client.connect(&front_ep);
    for k in 0..5u8 {
        client.send(&[vec![b'q', k]]);
        assert_eq!(worker.recv(), vec![vec![b'q', k]]);
        worker.send(&[vec![b'r', k]]);
        assert_eq!(client.recv(), vec![vec![b'r', k]]);
    }
    if ferro_proxy {
        let mut c = f.socket(SocketType::Pair).unwrap();
        c.set_rcvtimeo(TIMEOUT_MS).unwrap();
        c.connect(&format!("inproc://control-{case}")).unwrap();
        c.send("STATISTICS", SendFlags::empty()).unwrap();
        let stats = c.recv_multipart(RecvFlags::empty()).unwrap();
        assert_eq!(stats.len(), 8);
        let v: Vec<u64> = stats
            .iter()
            .map(|s| u64::from_ne_bytes(s[..].try_into().unwrap()))
            .collect();
        // 5 messages each way through each socket.
        assert_eq!([v[0], v[2], v[4], v[6]], [5, 5, 5, 5]);
        c.send("TERMINATE", SendFlags::empty()).unwrap();
    } else {
        let c = z.socket(zmq::PAIR).unwrap();
        c.connect(&format!("inproc://control-{case}")).unwrap();
        c.send("TERMINATE", 0).unwrap();
    }
    proxy.join().unwrap().unwrap();
}

#[test]
fn router_dealer_proxy_between_the_libraries() {
    proxied(true, true, 1);
    proxied(true, false, 2);
    proxied(false, true, 3);
}
