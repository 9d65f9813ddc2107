//! ZMQ_SOCKS_PROXY: a connect goes through a SOCKS5 proxy (a small one in this file) to a
//! libzmq or ferromq peer, with and without username/password; the destination's host name
//! reaches the proxy unresolved. A proxy that refuses, answers outside RFC 1928 or never
//! answers fails the connection, which is retried (the proxy sees the next attempt) and
//! succeeds once the proxy behaves; one that answers too much passes bytes the ZMTP handshake
//! refuses, which ends the endpoint, as libzmq.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

const ZMQ_SOCKS_PROXY: i32 = 68;
const ZMQ_SOCKS_USERNAME: i32 = 99;
const ZMQ_SOCKS_PASSWORD: i32 = 100;

/// What the proxy does with one connection after reading the greeting.
#[derive(Debug, Clone)]
enum Behaviour {
    /// Proxies, answering with a host name of `reply_name_len` bytes (255: the longest reply).
    Relay { reply_name_len: u8 },
    /// Refuses the CONNECT with this reply code.
    Refuse(u8),
    /// Answers the CONNECT with these bytes and then relays (a malformed or over-long reply).
    Answer(Vec<u8>),
    /// Answers the greeting with these bytes.
    Choose(Vec<u8>),
    /// Reads the request and never answers, holding the connection.
    Silent,
}

/// The destinations a proxy was asked for: (address type, address bytes, port).
type Requests = Mutex<Vec<(u8, Vec<u8>, u16)>>;
/// The username and password each authenticating client sent.
type Logins = Mutex<Vec<(Vec<u8>, Vec<u8>)>>;

/// A SOCKS5 proxy: the first connections get `first`, one each, then every later one relays.
/// It resolves `dest.test` to 127.0.0.1 itself, so a connect to that name works only through
/// it.
struct Proxy {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Requests>,
    logins: Arc<Logins>,
}

impl Proxy {
    fn start(first: Vec<Behaviour>, credentials: Option<(&'static [u8], &'static [u8])>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy listener");
        let addr = listener.local_addr().expect("proxy addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let logins = Arc::new(Mutex::new(Vec::new()));
        let (a, r, l) = (accepted.clone(), requests.clone(), logins.clone());
        std::thread::spawn(move || {
            for (i, conn) in listener.incoming().enumerate() {
                let Ok(conn) = conn else { return };
                a.fetch_add(1, Ordering::SeqCst);
                let behaviour = first
                    .get(i)
                    .cloned()
                    .unwrap_or(Behaviour::Relay { reply_name_len: 9 });
                let (r, l) = (r.clone(), l.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, behaviour, credentials, &r, &l);
                });
            }
        });
        Proxy {
            addr,
            accepted,
            requests,
            logins,
        }
    }

    fn option(&self) -> Vec<u8> {
        self.addr.to_string().into_bytes()
    }
}

fn read_n(s: &mut TcpStream, n: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf)?;
    Ok(buf)
}

fn serve(
    mut client: TcpStream,
    behaviour: Behaviour,
    credentials: Option<(&[u8], &[u8])>,
    requests: &Requests,
    logins: &Logins,
) -> std::io::Result<()> {
    let head = read_n(&mut client, 2)?;
    assert_eq!(head[0], 5, "greeting version");
    let methods = read_n(&mut client, usize::from(head[1]))?;
    if let Behaviour::Choose(answer) = &behaviour {
        client.write_all(answer)?;
        return hold(client);
    }
    let method = if credentials.is_some() { 2 } else { 0 };
    assert!(methods.contains(&method), "offered {methods:?}");
    client.write_all(&[5, method])?;
    if let Some((user, pass)) = credentials {
        let v = read_n(&mut client, 2)?;
        assert_eq!(v[0], 1, "RFC 1929 version");
        let u = read_n(&mut client, usize::from(v[1]))?;
        let plen = read_n(&mut client, 1)?[0];
        let p = read_n(&mut client, usize::from(plen))?;
        let ok = u == user && p == pass;
        logins.lock().expect("logins").push((u, p));
        client.write_all(&[1, u8::from(!ok)])?;
        if !ok {
            return Ok(());
        }
    }
    let req = read_n(&mut client, 4)?;
    assert_eq!(&req[..3], &[5, 1, 0], "CONNECT request");
    let addr = match req[3] {
        1 => read_n(&mut client, 4)?,
        4 => read_n(&mut client, 16)?,
        3 => {
            let len = read_n(&mut client, 1)?[0];
            read_n(&mut client, usize::from(len))?
        }
        other => panic!("address type {other}"),
    };
    let port = u16::from_be_bytes(read_n(&mut client, 2)?.try_into().expect("2 bytes"));
    requests
        .lock()
        .expect("requests")
        .push((req[3], addr.clone(), port));
    let reply_name_len = match behaviour {
        Behaviour::Refuse(code) => {
            client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0])?;
            return Ok(());
        }
        Behaviour::Silent => return hold(client),
        Behaviour::Relay { reply_name_len } => Some(reply_name_len),
        Behaviour::Answer(_) | Behaviour::Choose(_) => None,
    };
    let ip: [u8; 4] = match req[3] {
        3 if addr == b"dest.test" => [127, 0, 0, 1],
        1 => addr[..4].try_into().expect("4 bytes"),
        _ => panic!("unexpected destination {addr:?}"),
    };
    let remote = TcpStream::connect((std::net::Ipv4Addr::from(ip), port))?;
    match (&behaviour, reply_name_len) {
        (Behaviour::Answer(bytes), _) => client.write_all(bytes)?,
        (_, Some(len)) => {
            let mut reply = vec![5, 0, 0, 3, len];
            reply.extend(std::iter::repeat_n(b'n', usize::from(len)));
            reply.extend_from_slice(&port.to_be_bytes());
            client.write_all(&reply)?;
        }
        _ => unreachable!(),
    }
    relay(client, remote)
}

/// Keeps the connection open, reading until the client goes.
fn hold(mut client: TcpStream) -> std::io::Result<()> {
    let mut sink = [0u8; 256];
    while client.read(&mut sink)? > 0 {}
    Ok(())
}

fn relay(client: TcpStream, remote: TcpStream) -> std::io::Result<()> {
    let (mut c2, mut r2) = (client.try_clone()?, remote.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut r2);
        let _ = r2.shutdown(Shutdown::Both);
    });
    let (mut c, mut r) = (client, remote);
    let _ = std::io::copy(&mut r, &mut c);
    let _ = c.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}

fn pull_through(ctx: &Context, proxy: &Proxy, endpoint: &str) -> ferromq::Socket {
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(10_000).expect("rcvtimeo");
    pull.set_reconnect_ivl(20).expect("reconnect ivl");
    pull.set_option_raw(ZMQ_SOCKS_PROXY, &proxy.option())
        .expect("proxy");
    pull.connect(endpoint).expect("connect");
    pull
}

fn port_of(endpoint: &str) -> u16 {
    endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port")
}

#[test]
fn a_host_name_goes_to_the_proxy_unresolved_to_a_libzmq_peer() {
    let z = zmq::Context::new();
    let push = z.socket(zmq::PUSH).expect("libzmq push");
    push.bind("tcp://127.0.0.1:*").expect("bind");
    let bound = push.get_last_endpoint().expect("endpoint").expect("utf-8");
    let port = port_of(&bound);
    // The longest reply a proxy gives (a 255-byte name): read whole, nothing past it.
    let proxy = Proxy::start(
        vec![Behaviour::Relay {
            reply_name_len: 255,
        }],
        None,
    );
    let ctx = Context::new();
    let mut pull = pull_through(&ctx, &proxy, &format!("tcp://dest.test:{port}"));
    for m in ["ABC", "DEF"] {
        push.send(m, 0).expect("send");
        assert_eq!(
            pull.recv(RecvFlags::empty()).expect("recv").as_slice(),
            m.as_bytes()
        );
    }
    assert_eq!(
        proxy.requests.lock().expect("requests")[0],
        (3, b"dest.test".to_vec(), port)
    );
    // The first attempt made it: had the client read past the reply, it would have eaten the
    // start of libzmq's greeting and needed a second one.
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 1);
    drop(pull);
    ctx.term();
}

#[test]
fn username_and_password_to_a_ferromq_peer() {
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).expect("rep");
    rep.set_rcvtimeo(10_000).expect("rcvtimeo");
    rep.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = rep.last_endpoint().expect("endpoint");
    let proxy = Proxy::start(Vec::new(), Some((b"someuser", b"somepass")));
    let mut req = ctx.socket(SocketType::Req).expect("req");
    req.set_rcvtimeo(10_000).expect("rcvtimeo");
    req.set_option_raw(ZMQ_SOCKS_PROXY, &proxy.option())
        .expect("proxy");
    req.set_option_raw(ZMQ_SOCKS_USERNAME, b"someuser")
        .expect("username");
    req.set_option_raw(ZMQ_SOCKS_PASSWORD, b"somepass")
        .expect("password");
    req.connect(&endpoint).expect("connect");
    req.send("ping", SendFlags::empty()).expect("send");
    assert_eq!(
        rep.recv(RecvFlags::empty()).expect("recv").as_slice(),
        b"ping"
    );
    rep.send("pong", SendFlags::empty()).expect("reply");
    assert_eq!(
        req.recv(RecvFlags::empty()).expect("recv").as_slice(),
        b"pong"
    );
    // A numeric destination goes as an IPv4 address.
    let (atyp, addr, _) = proxy.requests.lock().expect("requests")[0].clone();
    assert_eq!((atyp, addr), (1, vec![127, 0, 0, 1]));
    assert_eq!(
        proxy.logins.lock().expect("logins")[0],
        (b"someuser".to_vec(), b"somepass".to_vec())
    );
    drop((req, rep));
    ctx.term();
}

/// Each hostile answer fails its connection; the connect is retried, and the attempt after
/// them (which the proxy relays) delivers.
#[test]
fn hostile_proxies_fail_the_connection_and_it_is_retried() {
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = push.last_endpoint().expect("endpoint");
    let hostile = vec![
        Behaviour::Refuse(5),
        Behaviour::Refuse(1),
        // Another version, a method not offered, no acceptable method.
        Behaviour::Choose(vec![4, 0]),
        Behaviour::Choose(vec![5, 2]),
        Behaviour::Choose(vec![5, 0xff]),
        // A reply code past RFC 1928's, a reserved byte set, an unknown address type.
        Behaviour::Answer(vec![5, 9, 0, 1, 0, 0, 0, 0, 0, 0]),
        Behaviour::Answer(vec![5, 0, 7, 1, 0, 0, 0, 0, 0, 0]),
        Behaviour::Answer(vec![5, 0, 0, 2, 0, 0, 0, 0, 0, 0]),
        // Never answers: HANDSHAKE_IVL ends it.
        Behaviour::Silent,
    ];
    let n = hostile.len();
    let proxy = Proxy::start(hostile, None);
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(20_000).expect("rcvtimeo");
    pull.set_reconnect_ivl(20).expect("reconnect ivl");
    pull.set_handshake_ivl(300).expect("handshake ivl");
    pull.set_option_raw(ZMQ_SOCKS_PROXY, &proxy.option())
        .expect("proxy");
    pull.connect(&endpoint).expect("connect");
    push.send("through", SendFlags::empty()).expect("send");
    assert_eq!(
        pull.recv(RecvFlags::empty())
            .expect("delivered after the retries")
            .as_slice(),
        b"through"
    );
    assert!(
        proxy.accepted.load(Ordering::SeqCst) > n,
        "every hostile answer was followed by another attempt"
    );
    drop((pull, push));
    ctx.term();
}

/// Too long an answer: a whole reply and then bytes that are not ZMTP. The SOCKS client takes
/// only its 10 bytes and the ZMTP handshake refuses the rest, a protocol failure, after which
/// the endpoint is given up as libzmq's session gives it up (`session_base_t::engine_error`
/// on `protocol_error`; docs/compatibility.md, "libzmq's own test suite"): no second attempt.
#[test]
fn bytes_past_the_reply_fail_the_handshake_and_end_the_endpoint() {
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = push.last_endpoint().expect("endpoint");
    let proxy = Proxy::start(
        vec![Behaviour::Answer(
            [vec![5, 0, 0, 1, 0, 0, 0, 0, 0, 0], vec![0xFF; 600]].concat(),
        )],
        None,
    );
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(500).expect("rcvtimeo");
    pull.set_reconnect_ivl(20).expect("reconnect ivl");
    pull.set_option_raw(ZMQ_SOCKS_PROXY, &proxy.option())
        .expect("proxy");
    pull.connect(&endpoint).expect("connect");
    // 25 reconnect intervals: a retry would have come.
    assert_eq!(
        pull.recv(RecvFlags::empty()).map(|m| m.as_slice().to_vec()),
        Err(ferromq::Error::Again)
    );
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 1, "not retried");
    pull.set_linger(0).expect("linger");
    push.set_linger(0).expect("linger");
    drop((pull, push));
    ctx.term();
}

/// A proxy that is not there yet (bound, not listening) is retried like any refused connect.
#[test]
fn a_proxy_that_comes_late_is_retried() {
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = push.last_endpoint().expect("endpoint");
    // Reserve a port, let it go, and start the proxy there a little later.
    let spot = TcpListener::bind("127.0.0.1:0").expect("spot");
    let addr = spot.local_addr().expect("addr");
    drop(spot);
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_rcvtimeo(10_000).expect("rcvtimeo");
    pull.set_reconnect_ivl(20).expect("reconnect ivl");
    pull.set_option_raw(ZMQ_SOCKS_PROXY, addr.to_string().as_bytes())
        .expect("proxy");
    pull.connect(&endpoint).expect("connect");
    std::thread::sleep(Duration::from_millis(200));
    let late = TcpListener::bind(addr).expect("the proxy's port again");
    std::thread::spawn(move || {
        for conn in late.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || {
                let none = Mutex::new(Vec::new());
                let _ = serve(
                    conn,
                    Behaviour::Relay { reply_name_len: 1 },
                    None,
                    &Mutex::new(Vec::new()),
                    &none,
                );
            });
        }
    });
    push.send("late", SendFlags::empty()).expect("send");
    assert_eq!(
        pull.recv(RecvFlags::empty()).expect("recv").as_slice(),
        b"late"
    );
    drop((pull, push));
    ctx.term();
}

/// Monitor events of a proxied connect name the proxy, as libzmq's socks connecter does: a
/// refused CONNECT is a retry, and CONNECTED comes once the proxy has connected.
#[test]
fn monitor_events_name_the_proxy() {
    use ferromq::monitor::{self, MonitorEvent};
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).expect("push");
    push.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = push.last_endpoint().expect("endpoint");
    let proxy = Proxy::start(vec![Behaviour::Refuse(5)], None);
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    pull.set_reconnect_ivl(20).expect("reconnect ivl");
    pull.set_option_raw(ZMQ_SOCKS_PROXY, &proxy.option())
        .expect("proxy");
    pull.monitor("inproc://socks-monitor", monitor::EVENT_ALL)
        .expect("monitor");
    let mut m = ctx.socket(SocketType::Pair).expect("pair");
    m.connect("inproc://socks-monitor")
        .expect("connect monitor");
    m.set_rcvtimeo(200).expect("rcvtimeo");
    pull.connect(&endpoint).expect("connect");
    let (retried, before) = ferromq_tests::wait_for_event(&mut m, monitor::EVENT_CONNECT_RETRIED);
    let (connected, _): (MonitorEvent, _) =
        ferromq_tests::wait_for_event(&mut m, monitor::EVENT_CONNECTED);
    let named = format!("tcp://{}", proxy.addr);
    assert_eq!(retried.endpoint, named);
    assert_eq!(connected.endpoint, named);
    assert!(
        !before.contains(&monitor::EVENT_CONNECTED),
        "no CONNECTED for the refused attempt"
    );
    drop((pull, push, m));
    ctx.term();
}
