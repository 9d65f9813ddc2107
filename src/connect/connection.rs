//! The management side of one connection: the ZMTP greeting and security handshake on tokio
//! under HANDSHAKE_IVL, then the hand-off of the stream (tokio -> std -> mio) to an I/O
//! thread, and the wait for the engine to give the pipes back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use ferromq_zmtp::{
    protocol_error, Handshake, HandshakeConfig, PeerInfo, Security, SocketType, MAX_HANDSHAKE_INPUT,
};

use crate::connect::zap::ZapAsker;
use crate::error::Error;
use crate::io::activity::Activity;
use crate::io::engine::{Engine, EngineExit};
use crate::io::lend::Lenders;
use crate::io::monitor::{
    MonitorHub, EVENT_DISCONNECTED, EVENT_HANDSHAKE_FAILED_AUTH, EVENT_HANDSHAKE_FAILED_NO_DETAIL,
    EVENT_HANDSHAKE_FAILED_PROTOCOL, EVENT_HANDSHAKE_SUCCEEDED,
};
use crate::io::peer::SessionPipes;
use crate::io::pool::IoPool;
use crate::io::session::SessionCtl;
use crate::io::stream::AsyncStream;
use crate::option::Options;
use crate::pattern::mailbox::Mailbox;

/// What a socket's management tasks need, cloned into each.
#[derive(Debug, Clone)]
pub(crate) struct SocketLink {
    pub mailbox: Mailbox,
    pub io: Arc<IoPool>,
    pub activity: Arc<Activity>,
    pub pipe_ids: Arc<AtomicU64>,
    pub kind: SocketType,
    pub options: Options,
    pub monitor: Arc<MonitorHub>,
    /// The context's ZAP handler, which a security handshake asks.
    pub zap: Arc<dyn ZapAsker>,
    /// The socket's connections, for a receive that borrows its lone one (`io/lend.rs`).
    pub lenders: Arc<Lenders>,
}

impl SocketLink {
    pub(crate) fn next_pipe_id(&self) -> u64 {
        self.pipe_ids.fetch_add(1, Ordering::Relaxed)
    }

    fn handshake_config(&self) -> HandshakeConfig {
        let mut config = HandshakeConfig::new(self.kind);
        config.routing_id = self.options.routing_id.clone();
        config.max_msg_size = self.options.max_msg_size();
        config.security = self.options.security();
        // libzmq's NULL asks the ZAP handler when ZAP_DOMAIN is set.
        config.zap_domain = !self.options.zap_domain.is_empty();
        config.zap_enforce_domain = self.options.zap_enforce_domain;
        config
    }
}

/// What the engine takes over from the handshake: the bytes read past it (the connection's
/// first traffic) and, after CURVE, the MESSAGE codec with the connection's keys.
#[derive(Debug)]
pub(crate) struct Handoff {
    pub leftover: BytesMut,
    pub curve: Option<ferromq_zmtp::CurveCodec>,
}

/// Why a handshake failed: the error, and the monitor event that says so.
#[derive(Debug)]
pub(crate) struct HandshakeFailure {
    pub error: Error,
    pub detail: FailureDetail,
    /// The peer broke the protocol or refused us (not a timeout or a lost connection):
    /// libzmq's `protocol_error`, after which a connecting session gives up rather than
    /// reconnect (session_base_t::engine_error).
    pub protocol: bool,
}

/// Which HANDSHAKE_FAILED_* event a failure reports, with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureDetail {
    /// HANDSHAKE_FAILED_NO_DETAIL with the errno (timeout, connection reset).
    NoDetail,
    /// HANDSHAKE_FAILED_PROTOCOL with a `ZMQ_PROTOCOL_ERROR_*` code: the peer broke the
    /// protocol.
    Protocol(u32),
    /// HANDSHAKE_FAILED_AUTH with the ZAP status code: the peer (or our ZAP handler) refused.
    Auth(u32),
    /// No HANDSHAKE_FAILED_* event, only DISCONNECTED: libzmq's engine leaves a protocol
    /// error's event to where it was found, and some places report none (see
    /// [`FailureDetail::of`]).
    Silent,
}

impl From<Error> for HandshakeFailure {
    fn from(error: Error) -> Self {
        HandshakeFailure {
            error,
            detail: FailureDetail::NoDetail,
            protocol: false,
        }
    }
}

impl FailureDetail {
    /// The event for handshake error `e` under our `security`, as libzmq 4.3 reports it.
    ///
    /// Peer metadata it refuses (a Socket-Type that cannot talk to ours, a property list cut
    /// short) is reported as INVALID_METADATA only by its PLAIN and CURVE clients, reading the
    /// server's READY (plain_client.cpp, curve_client.cpp); its NULL mechanism and its PLAIN
    /// and CURVE servers fail the handshake without an event (mechanism.cpp `parse_metadata`).
    /// An ERROR from the peer whose reason is no ZAP status code has no event either
    /// (mechanism_base.cpp `handle_error_reason`). Both libzmq's PLAIN server without a ZAP
    /// handler (EFAULT) and a ZMTP 1.0/2.0 peer while ZAP is enabled are reported without
    /// detail.
    pub(crate) fn of(e: &ferromq_zmtp::HandshakeError, security: &Security) -> Self {
        use ferromq_zmtp::{CommandError, HandshakeError as E};
        match e {
            E::NoZapHandler | E::SecurityNeedsZmtp3 => return FailureDetail::NoDetail,
            E::Command(CommandError::Metadata(_))
            | E::MissingSocketType
            | E::UnknownSocketType { .. }
            | E::IncompatibleSocketType { .. }
                if !matches!(
                    security,
                    Security::PlainClient(_) | Security::CurveClient(_)
                ) =>
            {
                return FailureDetail::Silent;
            }
            _ => {}
        }
        match e.auth_status() {
            Some(status) => FailureDetail::Auth(status),
            None if e.is_peer_error() => FailureDetail::Silent,
            None => FailureDetail::Protocol(e.protocol_error_code()),
        }
    }
}

impl From<std::io::Error> for HandshakeFailure {
    fn from(e: std::io::Error) -> Self {
        HandshakeFailure::from(Error::from(e))
    }
}

/// Runs the greeting and security handshake under HANDSHAKE_IVL and reports a failure to the
/// monitor (for `endpoint`; success is the caller's to report, see [`handshake_succeeded`]);
/// returns the peer and the bytes read past it.
pub(crate) async fn handshake(
    stream: &mut AsyncStream,
    link: &SocketLink,
    endpoint: &str,
) -> std::result::Result<(PeerInfo, Handoff), HandshakeFailure> {
    if link.kind == SocketType::Stream {
        // Raw TCP: nothing to exchange, and libzmq reports no HANDSHAKE_SUCCEEDED.
        let handoff = Handoff {
            leftover: BytesMut::new(),
            curve: None,
        };
        return Ok((crate::io::raw::peer(), handoff));
    }
    let ivl = link.options.handshake_ivl;
    let work = run_handshake(stream, link);
    let outcome = if ivl > 0 {
        let limit = Duration::from_millis(u64::try_from(ivl).unwrap_or(0));
        tokio::time::timeout(limit, work)
            .await
            .unwrap_or_else(|_| Err(HandshakeFailure::from(Error::TimedOut)))
    } else {
        work.await
    };
    match outcome {
        Ok(done) => Ok(done),
        Err(failure) => {
            match failure.detail {
                FailureDetail::Protocol(code) => {
                    link.monitor
                        .emit(EVENT_HANDSHAKE_FAILED_PROTOCOL, code, endpoint);
                }
                FailureDetail::Auth(status) => {
                    link.monitor
                        .emit(EVENT_HANDSHAKE_FAILED_AUTH, status, endpoint);
                }
                FailureDetail::Silent => {}
                FailureDetail::NoDetail => {
                    link.monitor.emit_errno(
                        EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                        &failure.error,
                        endpoint,
                    );
                }
            }
            // libzmq's engine reports every end of a connection, a failed handshake's too
            // (stream_engine_base_t::error): test_stream_timeout waits for it after
            // HANDSHAKE_IVL, on both the accepting and the connecting side.
            link.monitor
                .emit_fd(EVENT_DISCONNECTED, stream_fd(stream), endpoint);
            Err(failure)
        }
    }
}

/// Reports HANDSHAKE_SUCCEEDED, once the connection's pipes are on their way to the socket:
/// libzmq sends the socket its pipes before it reports the event
/// (stream_engine_base_t::mechanism_ready), so a program that waits for the event and then
/// sends finds the peer among the socket's (libzmq's test_spec_req's REQ, with the monitor's
/// events standing for its sleep). A raw STREAM connection has no handshake to report.
pub(crate) fn handshake_succeeded(link: &SocketLink, endpoint: &str) {
    if link.kind != SocketType::Stream {
        link.monitor.emit(EVENT_HANDSHAKE_SUCCEEDED, 0, endpoint);
    }
}

async fn run_handshake(
    stream: &mut AsyncStream,
    link: &SocketLink,
) -> std::result::Result<(PeerInfo, Handoff), HandshakeFailure> {
    let mut hs = Handshake::new(link.handshake_config());
    let mut out = BytesMut::new();
    let mut input = BytesMut::with_capacity(4096);
    loop {
        hs.poll_output(&mut out);
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if hs.is_complete() {
            break;
        }
        // Never hold more than the handshake can need: the handshake refuses an oversize
        // frame at its header, so a full buffer with the handshake still open cannot happen
        // with a conforming decoder; it is refused all the same rather than grown.
        let room = MAX_HANDSHAKE_INPUT.saturating_sub(input.len());
        if room == 0 {
            return Err(HandshakeFailure {
                error: Error::ConnRefused,
                detail: FailureDetail::Protocol(protocol_error::ZMTP_UNSPECIFIED),
                protocol: true,
            });
        }
        if stream.read_buf(&mut (&mut input).limit(room)).await? == 0 {
            return Err(peer_closed().into());
        }
        let mut result = hs.handle_input(&mut input);
        if let (Ok(()), Some(request)) = (&result, hs.take_zap_request()) {
            let address = zap_address(stream);
            let ask = ask_zap(&address, link, &request);
            tokio::pin!(ask);
            // libzmq's engine keeps reading while the handler thinks: a peer that goes away
            // meanwhile ends the handshake now (EPIPE), not at HANDSHAKE_IVL, whether or not
            // the handler ever answers (test_security_zap's handler that disconnects). What
            // the peer sends meanwhile waits in `input` for the handshake.
            let reply = loop {
                let room = MAX_HANDSHAKE_INPUT.saturating_sub(input.len());
                if room == 0 {
                    break (&mut ask).await;
                }
                let mut limited = (&mut input).limit(room);
                tokio::select! {
                    reply = &mut ask => break reply,
                    read = stream.read_buf(&mut limited) => {
                        if read? == 0 {
                            return Err(peer_closed().into());
                        }
                    }
                }
            };
            result = match reply {
                Ok(reply) => hs.handle_zap_reply(reply),
                Err(HandshakeFailure {
                    error: Error::Fault,
                    ..
                }) => hs.handle_no_zap_handler(),
                Err(failure) => return Err(failure),
            };
        }
        if let Err(e) = result {
            // Send the ERROR the handshake queued (socket-type mismatch, ZAP refusal), then
            // give up.
            hs.poll_output(&mut out);
            let _ = stream.write_all(&out).await;
            // libzmq's PLAIN server without a ZAP handler reports EFAULT, and so do NULL and
            // CURVE ones with ZAP_ENFORCE_DOMAIN.
            let error = match e {
                ferromq_zmtp::HandshakeError::NoZapHandler => Error::Fault,
                _ => Error::ConnRefused,
            };
            return Err(HandshakeFailure {
                error,
                detail: FailureDetail::of(&e, &link.options.security()),
                protocol: true,
            });
        }
    }
    let curve = hs.take_curve_codec();
    let peer = hs.into_peer().ok_or(Error::ConnReset)?;
    let handoff = Handoff {
        leftover: input,
        curve,
    };
    Ok((peer, handoff))
}

/// Asks the context's ZAP handler about the peer. No handler fails the handshake with EFAULT
/// (HANDSHAKE_FAILED_NO_DETAIL), as libzmq's PLAIN server does.
async fn ask_zap(
    address: &str,
    link: &SocketLink,
    request: &ferromq_zmtp::ZapRequest,
) -> std::result::Result<
    std::result::Result<ferromq_zmtp::ZapReply, ferromq_zmtp::ZapReplyError>,
    HandshakeFailure,
> {
    if !link.zap.bound() {
        return Err(Error::Fault.into());
    }
    let id = link.zap.request_id();
    let frames = request.frames(&ferromq_zmtp::ZapContext {
        request_id: &id,
        domain: &link.options.zap_domain,
        address: address.as_bytes(),
        identity: &link.options.routing_id,
    });
    let reply = link.zap.ask(id.clone(), frames).await?;
    Ok(ferromq_zmtp::zap::parse_reply(&reply, &id))
}

/// RFC 27's address frame: the client's IP address; libzmq sends an empty one for ipc.
fn zap_address(stream: &AsyncStream) -> String {
    match stream {
        AsyncStream::Tcp(s) => s
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default(),
        AsyncStream::Unix(_) => String::new(),
    }
}

/// The error of a peer that closed its end during the handshake: EPIPE, as libzmq's
/// stream_engine_base_t::read reports it (HANDSHAKE_FAILED_NO_DETAIL's value).
fn peer_closed() -> Error {
    Error::Os(libc::EPIPE)
}

/// The stream's file descriptor, the value of fd-carrying monitor events.
pub(crate) fn stream_fd(stream: &AsyncStream) -> std::os::fd::RawFd {
    use std::os::fd::AsRawFd;
    match stream {
        AsyncStream::Tcp(s) => s.as_raw_fd(),
        AsyncStream::Unix(s) => s.as_raw_fd(),
    }
}

/// Applies the TCP options to a connected stream.
pub(crate) fn configure_tcp(stream: &tokio::net::TcpStream, options: &Options) {
    let _ = stream.set_nodelay(true);
    let sock = socket2::SockRef::from(stream);
    if options.sndbuf >= 0 {
        let _ = sock.set_send_buffer_size(usize::try_from(options.sndbuf).unwrap_or(0));
    }
    if options.rcvbuf >= 0 {
        let _ = sock.set_recv_buffer_size(usize::try_from(options.rcvbuf).unwrap_or(0));
    }
    if options.tcp_keepalive == 1 {
        let mut ka = socket2::TcpKeepalive::new();
        if options.tcp_keepalive_idle > 0 {
            ka = ka.with_time(Duration::from_secs(
                options.tcp_keepalive_idle.unsigned_abs().into(),
            ));
        }
        if options.tcp_keepalive_intvl > 0 {
            ka = ka.with_interval(Duration::from_secs(
                options.tcp_keepalive_intvl.unsigned_abs().into(),
            ));
        }
        if options.tcp_keepalive_cnt > 0 {
            ka = ka.with_retries(options.tcp_keepalive_cnt.unsigned_abs());
        }
        let _ = sock.set_tcp_keepalive(&ka);
    } else if options.tcp_keepalive == 0 {
        let _ = sock.set_keepalive(false);
    }
}

/// Hands a connection to an I/O thread and waits until its engine ends. `None` when the I/O
/// thread went away with the pipes (context teardown).
pub(crate) async fn run_engine(
    link: &SocketLink,
    stream: AsyncStream,
    pipes: SessionPipes,
    ctl: &Arc<SessionCtl>,
    handoff: Handoff,
    (peer_major, peer_minor): (u8, u8),
) -> Option<EngineExit> {
    let stream = stream.into_mio().ok()?;
    ctl.set_engine_wake(Arc::clone(&pipes.wake));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let raw = link.kind == SocketType::Stream;
    let notify = raw && link.options.stream_notify;
    let mut pipes = pipes;
    if notify {
        crate::io::raw::notify(&mut pipes);
    }
    if peer_major == 1 && matches!(link.kind, SocketType::Pub | SocketType::XPub) {
        // A 1.0 SUB filters by itself and sends no subscriptions: libzmq gives such a peer a
        // subscription to everything on its behalf (`_subscription_required`).
        if pipes
            .to_socket
            .try_write(bytes::Bytes::from_static(b"\x01"), false)
            .is_ok()
        {
            pipes.to_socket.flush();
        }
    }
    let mut engine = Engine::new(
        stream,
        pipes,
        Arc::clone(ctl),
        handoff.leftover,
        &link.options,
        tx,
    );
    if let Some(codec) = handoff.curve {
        engine.set_curve(codec);
    }
    engine.set_subscription_commands(link.kind == SocketType::Sub && peer_minor >= 1);
    if raw {
        engine.set_raw();
    } else if peer_major == 1 {
        engine.set_v1(link.options.max_msg_size());
    } else if peer_major < 3 {
        // ZMTP 2.0 has no commands: a PING would reach the peer's application as a message.
        engine.set_no_commands();
    }
    // A STREAM socket's connections stay with their I/O thread.
    let lenders = (!raw).then(|| Arc::clone(&link.lenders));
    link.io.pick().adopt(engine, lenders);
    let mut exit = rx.await.ok()?;
    if notify && matches!(exit.end, crate::io::engine::EngineEnd::Disconnected(_)) {
        crate::io::raw::notify(&mut exit.pipes);
    }
    Some(exit)
}
