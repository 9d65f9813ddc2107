//! A connecting endpoint (tcp or ipc): connect, handshake, run the engine, and when the
//! connection dies, reconnect after RECONNECT_IVL (with back-off) until the socket closes or
//! disconnects (or for good at the first failure when RECONNECT_IVL is -1). As in libzmq, the pipes of a connecting socket exist from `connect()` on
//! (unless ZMQ_IMMEDIATE) and survive reconnects, so messages sent meanwhile are delivered.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::connect::backoff::Backoff;
use crate::connect::connection::{
    configure_tcp, handshake, handshake_succeeded, run_engine, stream_fd, SocketLink,
};
use crate::connect::connection_props::connection_metadata;
use crate::connect::endpoint::TcpAddr;
use crate::connect::resolver;
use crate::connect::socks;
use crate::connect::tcp_options::{prepare_tcp_socket, set_maxrt};
use crate::error::Result;
use crate::io::activity::ActivityGuard;
use crate::io::engine::EngineEnd;
use crate::io::monitor::{
    EVENT_CLOSED, EVENT_CONNECTED, EVENT_CONNECT_DELAYED, EVENT_CONNECT_RETRIED,
    EVENT_DISCONNECTED, EVENT_HANDSHAKE_FAILED_PROTOCOL,
};
use crate::io::peer::{socket_pipes, PipeId, SessionPipes};
use crate::io::session::SessionCtl;
use crate::io::stream::AsyncStream;
use crate::option::Options;
use crate::pattern::mailbox::SocketCommand;
use crate::pattern::PeerMetadata;
use crate::transport::ipc::ipc_connect;

/// Where a connecting endpoint goes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Tcp(TcpAddr),
    Ipc(String),
}

/// Why opening the transport failed: `Some(fd)` where a socket had been made (and is closed
/// by now), which libzmq reports as ZMQ_EVENT_CLOSED with that descriptor before
/// CONNECT_RETRIED (stream_connecter_base_t::close); `None` where none was, as for a name
/// that does not resolve (libzmq resolves before it makes the socket).
type OpenFailure = Option<RawFd>;

/// Opens the transport connection: straight to the endpoint, or for tcp with ZMQ_SOCKS_PROXY
/// through the proxy, whose SOCKS5 exchange is done before this returns (libzmq reports
/// ZMQ_EVENT_CONNECTED only then). As libzmq's socks_connecter, a connection through the proxy
/// has neither CONNECT_TIMEOUT nor TCP_MAXRT applied.
async fn open(
    target: &Target,
    options: &Options,
    on_delayed: impl FnOnce(i32),
) -> std::result::Result<AsyncStream, OpenFailure> {
    match target {
        Target::Tcp(addr) if !options.socks_proxy.is_empty() => {
            let proxy = socks::proxy_addr(options).map_err(|_| None)?;
            let client = socks::client_for(addr, options).map_err(|_| None)?;
            let mut stream = tcp_connect(&proxy, options, None, on_delayed).await?;
            let fd = stream.as_raw_fd();
            socks::negotiate(&mut stream, client, options)
                .await
                .map_err(|_| Some(fd))?;
            Ok(AsyncStream::Tcp(stream))
        }
        Target::Tcp(addr) => {
            let timeout = u64::try_from(options.connect_timeout)
                .ok()
                .filter(|&ms| ms > 0)
                .map(Duration::from_millis);
            let stream = tcp_connect(addr, options, timeout, on_delayed).await?;
            set_maxrt(socket2::SockRef::from(&stream), options);
            Ok(AsyncStream::Tcp(stream))
        }
        Target::Ipc(path) => Ok(AsyncStream::Unix(ipc_connect(path)?)),
    }
}

/// A tcp connect, started non-blocking by hand (not through tokio's `TcpSocket::connect`) so
/// that, as in libzmq, `on_delayed` hears of the EINPROGRESS step (ZMQ_EVENT_CONNECT_DELAYED)
/// before the wait for the connection to complete. A socket whose ZMQ_TOS or BINDTODEVICE
/// could not be set is closed without an event (libzmq's `tcp_open_socket` closes it itself).
async fn tcp_connect(
    addr: &TcpAddr,
    options: &Options,
    timeout: Option<Duration>,
    on_delayed: impl FnOnce(i32),
) -> std::result::Result<tokio::net::TcpStream, OpenFailure> {
    // A host name is looked up off the management thread, again on every attempt.
    let (dest, source) = resolver::connect_addrs(addr, options.ipv6)
        .await
        .map_err(|_| None)?;
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(dest),
        socket2::Type::STREAM.nonblocking().cloexec(),
        Some(socket2::Protocol::TCP),
    )
    .map_err(|_| None)?;
    prepare_tcp_socket(&socket, options).map_err(|_| None)?;
    let fd = socket.as_raw_fd();
    connect_socket(socket, dest, source, options, timeout, on_delayed)
        .await
        .map_err(|_| Some(fd))
}

/// Binds the source address if any, connects, and waits at most `timeout`
/// (ZMQ_CONNECT_TIMEOUT) for the connection to complete; the socket is closed on failure.
async fn connect_socket(
    socket: socket2::Socket,
    dest: SocketAddr,
    source: Option<SocketAddr>,
    options: &Options,
    timeout: Option<Duration>,
    on_delayed: impl FnOnce(i32),
) -> Result<tokio::net::TcpStream> {
    if let Some(src) = source {
        // As libzmq: several connections may share one fixed source address and port
        // (to different servers), and a source port in TIME_WAIT can be reused.
        socket.set_reuse_address(true)?;
        socket.bind(&src.into())?;
    }
    let delayed = match socket.connect(&dest.into()) {
        Ok(()) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
        Err(e) => return Err(e.into()),
    };
    let stream = tokio::net::TcpStream::from_std(std::net::TcpStream::from(socket))?;
    if delayed {
        on_delayed(libc::EINPROGRESS);
        // ZMQ_CONNECT_TIMEOUT, as libzmq's connect timer: an attempt still pending after it
        // is dropped (closing the socket) and retried after the reconnect interval.
        match timeout {
            Some(limit) => tokio::time::timeout(limit, stream.writable())
                .await
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??,
            None => stream.writable().await?,
        }
        if let Some(e) = stream.take_error()? {
            return Err(e.into());
        }
        // A refused connect can also show as writable with no pending error yet:
        // peer_addr fails unless the connection is really established.
        stream.peer_addr()?;
    }
    configure_tcp(&stream, options);
    Ok(stream)
}

/// The pipes held between connections, with their id.
type Held = Option<(SessionPipes, PipeId)>;

/// Runs one connecting endpoint until its socket closes or disconnects it.
pub(crate) async fn connect_loop(
    link: SocketLink,
    target: Target,
    ctl: Arc<SessionCtl>,
    mut held: Held,
    endpoint: String,
    _guard: ActivityGuard,
) {
    let endpoint = match target {
        Target::Tcp(_) if !link.options.socks_proxy.is_empty() => {
            socks::monitor_endpoint(&link.options)
        }
        _ => endpoint,
    };
    let mut backoff = Backoff::new(&link.options);
    loop {
        if ctl.is_done() && !worth_lingering(&ctl, &mut held) {
            return;
        }
        let attempt = async {
            let delayed = |errno: i32| {
                let value = u32::try_from(errno).unwrap_or(0);
                link.monitor.emit(EVENT_CONNECT_DELAYED, value, &endpoint);
            };
            // The error says whether the peer broke the protocol or refused us.
            let mut stream = open(&target, &link.options, delayed)
                .await
                .map_err(|closed| {
                    if let Some(fd) = closed {
                        link.monitor.emit_fd(EVENT_CLOSED, fd, &endpoint);
                    }
                    false
                })?;
            link.monitor
                .emit_fd(EVENT_CONNECTED, stream_fd(&stream), &endpoint);
            let (peer, handoff) = handshake(&mut stream, &link, &endpoint)
                .await
                .map_err(|failure| failure.protocol)?;
            Ok::<_, bool>((stream, peer, handoff))
        };
        let outcome = tokio::select! {
            r = attempt => r,
            () = abandoned(&ctl, &mut held) => return,
        };
        let (stream, peer, handoff) = match outcome {
            Ok(connected) => connected,
            // As libzmq's session_base_t::engine_error: a protocol error (a malformed or
            // mismatched handshake, the peer's ERROR refusing us) ends the endpoint; a
            // timeout or a lost connection is retried. libzmq's test_security_zap counts the
            // refusals and hangs on a client that keeps coming back.
            Err(true) => return,
            Err(false) => {
                if !retry_after(&link, &ctl, &mut held, &mut backoff, &endpoint).await {
                    return;
                }
                continue;
            }
        };
        backoff.reset();
        let (pipes, id) = match held.take() {
            Some(h) => h,
            None => {
                // ZMQ_IMMEDIATE: the pipes exist only while connected.
                let id = link.next_pipe_id();
                let (peer_end, far) =
                    socket_pipes(id, link.mailbox.peer_wake(id), link.kind, &link.options);
                let mut peer_end = peer_end;
                peer_end.assigned_id = link.options.connect_routing_id.clone();
                if !link.mailbox.send(SocketCommand::Attach(Box::new(peer_end))) {
                    return;
                }
                (far, id)
            }
        };
        link.mailbox.send(SocketCommand::Identify {
            id,
            metadata: PeerMetadata::of_connection(
                connection_metadata(peer.metadata, &stream),
                peer.routing_id,
            ),
        });
        handshake_succeeded(&link, &endpoint);
        let fd = stream_fd(&stream);
        let Some(exit) = run_engine(
            &link,
            stream,
            pipes,
            &ctl,
            handoff,
            (peer.major, peer.minor),
        )
        .await
        else {
            return;
        };
        match exit.end {
            EngineEnd::Finished => return,
            EngineEnd::Disconnected(_) => {
                if let Some(code) = exit.protocol_error {
                    link.monitor
                        .emit(EVENT_HANDSHAKE_FAILED_PROTOCOL, code, &endpoint);
                }
                link.monitor.emit_fd(EVENT_DISCONNECTED, fd, &endpoint);
                if !link.options.immediate && !exit.pipes.to_socket.is_closed() {
                    held = Some((exit.pipes, id));
                } else if !link.options.immediate {
                    return;
                }
            }
        }
        if !retry_after(&link, &ctl, &mut held, &mut backoff, &endpoint).await {
            return;
        }
    }
}

/// After the socket closed: whether messages it sent still wait in the held pipes and the
/// linger has not run out. libzmq's session keeps reconnecting for them until then, so a
/// PUSH that connects, sends and closes at once still delivers.
fn worth_lingering(ctl: &SessionCtl, held: &mut Held) -> bool {
    if ctl.is_stopped() || ctl.linger_deadline().is_some_and(|d| d <= Instant::now()) {
        return false;
    }
    held.as_mut()
        .is_some_and(|(pipes, _)| pipes.from_socket.has_message())
}

/// Resolves when this endpoint should stop trying to connect: it was stopped, or its socket
/// closed with nothing left to deliver, or the linger ran out.
async fn abandoned(ctl: &SessionCtl, held: &mut Held) {
    ctl.done().await;
    if !worth_lingering(ctl, held) {
        return;
    }
    match ctl.linger_deadline() {
        Some(deadline) => tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {}
            () = ctl.stopped() => {}
        },
        None => ctl.stopped().await,
    }
}

/// Reports CONNECT_RETRIED with the interval and waits it out; returns whether to go on.
/// Without reconnects (RECONNECT_IVL -1) it ends the endpoint at once, reporting nothing, as
/// libzmq: the held pipes close with it, so the socket drops the peer and what was queued.
async fn retry_after(
    link: &SocketLink,
    ctl: &SessionCtl,
    held: &mut Held,
    backoff: &mut Backoff,
    endpoint: &str,
) -> bool {
    if !backoff.reconnects() {
        return false;
    }
    let delay = backoff.next_delay();
    let ms = u32::try_from(delay.as_millis()).unwrap_or(u32::MAX);
    link.monitor.emit(EVENT_CONNECT_RETRIED, ms, endpoint);
    tokio::select! {
        () = tokio::time::sleep(delay) => !ctl.is_done() || worth_lingering(ctl, held),
        () = abandoned(ctl, held) => false,
    }
}
