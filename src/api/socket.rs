//! The socket: the application's handle, driven by one thread at a time.
//!
//! It owns a [`Pattern`] (the socket type's state machine over its peers' pipes), the
//! command queue, and the eventfd every wake-up lands on. Blocking calls loop: process
//! commands, try the pattern, and if it says `Again`, wait on the eventfd (bounded by
//! SNDTIMEO/RCVTIMEO) and try again. The pattern sits in a `RefCell` because ZMQ_EVENTS and
//! `poll` look at it through `&Socket`; the socket is `!Sync`, so the borrow never contends.

use std::mem::ManuallyDrop;
use std::os::fd::RawFd;
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferromq_zmtp::{Metadata, SocketType};

use crate::api::flags::{Events, RecvFlags, SendFlags};
use crate::api::multipart::Multipart;
use crate::api::send_error::SendError;
use crate::connect::connecter::{connect_loop, Target};
use crate::connect::connection::SocketLink;
use crate::connect::endpoint::{check_uri, resolve_for_unbind, Endpoint};
use crate::connect::listener::{
    accept_loop, adopt_listener, adopt_tcp, bind_tcp, Bound, FdKind, ListenerCtl,
};
use crate::error::{Error, Result};
use crate::io::activity::ActivityGuard;
use crate::io::lend::{Borrowed, BorrowedRead, Lendable, Lenders};
use crate::io::monitor::{EventSink, MonitorHub, EVENT_BIND_FAILED, EVENT_CLOSED, EVENT_LISTENING};
use crate::io::peer::{socket_pipes, PipeId};
use crate::io::send_buffers::SendBuffers;
use crate::io::session::SessionCtl;
use crate::io::signaler::{Signaler, Watch};
use crate::io::spin_backoff::{cpus_allowed, SpinBackoff};
use crate::msg::Msg;
use crate::option::{self, Options};
use crate::pattern;
use crate::pattern::mailbox::{socket_core, Core, Mailbox, Owner};
use crate::pattern::Lent;
use crate::runtime::CtxInner;
use crate::transport::bind_failure::BindFailure;
use crate::transport::inproc::InprocSide;
use crate::transport::ipc::{ipc_bind, IpcPath};

#[derive(Debug)]
enum Binding {
    Listener(Arc<ListenerCtl>),
    Inproc(String),
}

#[derive(Debug)]
struct BindRecord {
    /// The endpoint as resolved (LAST_ENDPOINT), the key unbind looks for, as libzmq's.
    resolved: String,
    binding: Binding,
    /// The listening fd, reported by CLOSED.
    fd: Option<RawFd>,
}

#[derive(Debug)]
struct ConnectRecord {
    endpoint: String,
    ctl: Option<Arc<SessionCtl>>,
    pipe: Option<PipeId>,
}

/// A ZeroMQ socket. `Send` and `Sync` (its core sits behind a lock that the threads delivering
/// commands share), but its calls take `&mut self`: one thread uses it at a time, as in libzmq.
///
/// ```
/// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut push = ctx.socket(SocketType::Push)?;
/// let mut pull = ctx.socket(SocketType::Pull)?;
/// pull.bind("tcp://127.0.0.1:*")?; // port 0: the OS picks one
/// push.connect(&pull.last_endpoint()?)?;
/// push.send("work", SendFlags::empty())?;
/// assert_eq!(pull.recv(RecvFlags::empty())?.as_slice(), b"work");
/// # Ok::<(), ferromq::Error>(())
/// ```
///
/// Laid out in declaration order from a line boundary, with what every send and receive
/// touches first: the context (its termination flag), the core, the send buffers and
/// `rcvmore` share the socket's first cache line, so a call on a socket whose state has gone
/// cold (one of a thousand drained in turn, issue 15) reads one line of it, not three.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Socket {
    ctx: Arc<CtxInner>,
    /// The pattern and command queue, shared with the mailbox; calls with `&mut self` take it
    /// as its owner, those with `&self` as a locker (`pattern/mailbox.rs`).
    core: Owner,
    send_buffers: SendBuffers,
    rcvmore: bool,
    /// A frame was sent since a receive last had to wait: the next wait is for an answer.
    sent_last: bool,
    /// The last frame received was a large inproc one (see `STREAM_SPIN_FROM`).
    large_last: bool,
    /// The socket was made on a thread that may run on more than one CPU (see `REPLY_SPIN`).
    several_cpus: bool,
    /// When a receive waits awake for an answer (see `REPLY_SPIN`).
    reply_spin: SpinBackoff,
    /// The metadata of the frame received last (see [`Socket::recv_frame`]).
    metadata: Option<Arc<Metadata>>,
    kind: SocketType,
    id: u64,
    options: Options,
    signal: Arc<Signaler>,
    mailbox: Mailbox,
    last_endpoint: String,
    binds: Vec<BindRecord>,
    connects: Vec<ConnectRecord>,
    monitor: Arc<MonitorHub>,
    /// The socket's tcp and ipc connections, for a receive that borrows its lone one.
    lenders: Arc<Lenders>,
    _active: ActivityGuard,
}

/// A send's outcome: a refused message comes back in the error.
pub type SendResult<M> = std::result::Result<(), SendError<M>>;

/// How long a blocking receive that waits for an answer waits awake (watching the socket's
/// notification count, `Signaler::watch`) before it sleeps in `poll(2)`.
///
/// A reply between two threads of one process comes back in well under a microsecond when
/// both stay awake, while a sleeping thread is woken by an eventfd write (a system call) and,
/// on another CPU that halted meanwhile, an interrupt: on the 2-vCPU VM the inproc round trip
/// took 3 or 22 us a hop as the scheduler placed the threads, libzmq's too (issue 18,
/// session 26: docs/performance.md). Waiting awake costs CPU time, so only where it is likely
/// to pay: the first wait after a send (request-reply; a receiver that only receives would
/// instead turn one wake-up per batch of a stream into one per message, as its writer finds
/// it awake and empty each time: an inproc 64 B stream through the C ABI fell from 19.7 to
/// 5.9 M msg/s when every wait spun), on a thread allowed more than one CPU (on one, the
/// answer cannot come while it spins), and while waits are answered (`SpinBackoff`: one that
/// runs out lets the next 1 ... 64 chances pass).
pub(crate) const REPLY_SPIN: Duration = Duration::from_micros(20);

/// Inproc frames from this size on make the receive that follows wait awake too (see
/// `REPLY_SPIN`), as if it waited for an answer: the next frame of a stream of large ones is
/// usually one copy away, and sleeping on every empty pipe made its sender pay a wake-up per
/// message (an eventfd write, a switch and, across CPUs, an interrupt); at this size spinning
/// costs the pipe no batching worth keeping. Matrix streams of 64 KiB over inproc went from
/// 0.5-0.7 to 1.0-1.4 M msg/s (issue 18, session 28). Not for frames from an I/O thread (tcp,
/// ipc): there the wait may take the CPU that thread needs (a process streaming 64 KiB to
/// itself over tcp on 2 vCPUs lost a quarter in one of two sets with the size gate alone).
const STREAM_SPIN_FROM: usize = 32 * 1024;

/// When a blocking send or receive gives up. The clock is read only before the first wait,
/// as libzmq does, so a call that completes at once costs no `clock_gettime`.
#[derive(Debug, Clone, Copy)]
enum Patience {
    /// DONTWAIT or a timeout of 0: never wait.
    None,
    /// A timeout of -1.
    Forever,
    /// A timeout in ms, not started yet.
    Ms(u64),
    Until(Instant),
}

impl Patience {
    fn new(dontwait: bool, timeout_ms: i32) -> Patience {
        match u64::try_from(timeout_ms) {
            _ if dontwait => Patience::None,
            Ok(0) => Patience::None,
            Ok(ms) => Patience::Ms(ms),
            Err(_) => Patience::Forever,
        }
    }

    /// The instant to stop waiting at (`None`: never); `EAGAIN` if no wait is allowed.
    fn deadline(&mut self) -> Result<Option<Instant>> {
        match *self {
            Patience::None => Err(Error::Again),
            Patience::Forever => Ok(None),
            Patience::Until(at) => Ok(Some(at)),
            Patience::Ms(ms) => {
                let at = Instant::now() + Duration::from_millis(ms);
                *self = Patience::Until(at);
                Ok(Some(at))
            }
        }
    }
}

impl Socket {
    pub(crate) fn new(ctx: Arc<CtxInner>, kind: SocketType) -> Result<Socket> {
        let pattern = pattern::for_type(kind)?;
        let signal = Arc::new(Signaler::new()?);
        let options = Options::for_type(kind);
        let (core, mailbox) = socket_core(pattern, Arc::clone(&signal), options.clone());
        let id = ctx.register(Arc::clone(&signal));
        let active = ctx.activity.enter();
        Ok(Socket {
            ctx,
            id,
            kind,
            options,
            core,
            signal,
            mailbox,
            rcvmore: false,
            sent_last: false,
            large_last: false,
            several_cpus: cpus_allowed().is_some_and(|n| n > 1),
            reply_spin: SpinBackoff::default(),
            metadata: None,
            last_endpoint: String::new(),
            binds: Vec::new(),
            connects: Vec::new(),
            monitor: MonitorHub::new(),
            send_buffers: SendBuffers::default(),
            lenders: Lenders::new(),
            _active: active,
        })
    }

    /// The socket's type.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// assert_eq!(s.socket_type(), ferromq::SocketType::Dealer);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn socket_type(&self) -> SocketType {
        self.kind
    }

    fn link(&self) -> Result<(SocketLink, tokio::runtime::Handle)> {
        let reactor = self.ctx.reactor()?;
        let handle = reactor.handle().ok_or(Error::Term)?.clone();
        Ok((
            SocketLink {
                mailbox: self.mailbox.clone(),
                io: Arc::clone(&reactor.io),
                activity: Arc::clone(&self.ctx.activity),
                pipe_ids: Arc::clone(&self.ctx.pipe_ids),
                kind: self.kind,
                options: self.options.clone(),
                monitor: Arc::clone(&self.monitor),
                zap: self.ctx.zap(),
                lenders: Arc::clone(&self.lenders),
            },
            handle,
        ))
    }

    fn inproc_side(&self) -> InprocSide {
        InprocSide {
            socket_id: self.id,
            mailbox: self.mailbox.clone(),
            kind: self.kind,
            sndhwm: self.options.sndhwm,
            rcvhwm: self.options.rcvhwm,
            conflate: self.options.conflate,
            routing_id: self.options.routing_id.clone(),
            connect_routing_id: self.options.connect_routing_id.clone(),
        }
    }

    /// Binds to an endpoint (`tcp://`, `ipc://`, `inproc://`).
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut rep = ctx.socket(ferromq::SocketType::Rep)?;
    /// rep.bind("inproc://doc-bind")?;
    /// rep.bind("tcp://127.0.0.1:*")?;
    /// assert!(rep.last_endpoint()?.starts_with("tcp://127.0.0.1:"));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn bind(&mut self, endpoint: &str) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        if self.options.use_fd != -1
            && let Some(address) = endpoint.strip_prefix("tcp://")
            && !address.is_empty()
        {
            // libzmq's tcp listener ignores the address when it has USE_FD.
            let fd = self.options.use_fd;
            let (listener, resolved) = adopt_tcp(fd, self.holds_fd(fd))
                .map_err(|e| self.bind_failed(endpoint, e.into()))?;
            self.last_endpoint = self.start_listener(resolved, Bound::Tcp(listener))?;
            return Ok(());
        }
        let parsed = Endpoint::parse(endpoint).map_err(|e| {
            // libzmq's tcp and ipc listeners report an address they cannot resolve as
            // BIND_FAILED; no `://`, an unknown transport or an inproc name fail before any.
            let listened = check_uri(endpoint).is_ok() && !endpoint.starts_with("inproc://");
            if listened {
                self.bind_failed(endpoint, e.into())
            } else {
                e
            }
        })?;
        let resolved = match parsed {
            Endpoint::Inproc(name) => {
                self.ctx.inproc.bind(&name, self.inproc_side())?;
                self.binds.push(BindRecord {
                    resolved: endpoint.to_owned(),
                    binding: Binding::Inproc(name),
                    fd: None,
                });
                endpoint.to_owned()
            }
            Endpoint::Tcp(addr) => {
                let (listener, resolved) =
                    bind_tcp(&addr, &self.options).map_err(|f| self.bind_failed(endpoint, f))?;
                self.start_listener(resolved, Bound::Tcp(listener))?
            }
            Endpoint::Ipc(path) if self.options.use_fd != -1 => {
                // libzmq: the path is only what ZMQ_LAST_ENDPOINT says (`*` included).
                let fd = self.options.use_fd;
                let listener = adopt_listener(fd, FdKind::Ipc, self.holds_fd(fd))
                    .map(UnixListener::from)
                    .map_err(|e| self.bind_failed(endpoint, e.into()))?;
                let resolved = format!("ipc://{path}");
                self.start_listener(resolved, Bound::Ipc(listener, IpcPath::adopted(&path)))?
            }
            Endpoint::Ipc(path) => {
                let (listener, path) = ipc_bind(&path, self.options.backlog)
                    .map_err(|f| self.bind_failed(endpoint, f))?;
                let resolved = format!("ipc://{}", path.path);
                self.start_listener(resolved, Bound::Ipc(listener, path))?
            }
        };
        self.last_endpoint = resolved;
        Ok(())
    }

    /// Reports a failed bind as libzmq does: ZMQ_EVENT_CLOSED for a listening socket that was
    /// made and closed (with the endpoint libzmq's listener knew by then: none for tcp, the
    /// path for ipc), then ZMQ_EVENT_BIND_FAILED with the errno and the address without its
    /// `transport://`, as libzmq's socket_base names it.
    fn bind_failed(&self, endpoint: &str, failure: BindFailure) -> Error {
        if let Some(fd) = failure.closed {
            let known = if endpoint.starts_with("ipc://") {
                endpoint
            } else {
                ""
            };
            self.monitor.emit_fd(EVENT_CLOSED, fd, known);
        }
        let address = endpoint.split_once("://").map_or(endpoint, |(_, a)| a);
        self.monitor
            .emit_errno(EVENT_BIND_FAILED, &failure.error, address);
        failure.error
    }

    /// Whether a listener of this socket owns descriptor `fd` (ZMQ_USE_FD bound twice).
    fn holds_fd(&self, fd: RawFd) -> bool {
        self.binds.iter().any(|b| b.fd == Some(fd))
    }

    fn start_listener(&mut self, resolved: String, bound: Bound) -> Result<String> {
        let (link, handle) = self.link()?;
        let lctl = ListenerCtl::new(self.options.linger);
        let guard = self.ctx.activity.enter();
        let fd = bound.raw_fd();
        self.monitor.emit_fd(EVENT_LISTENING, fd, &resolved);
        handle.spawn(accept_loop(
            link,
            bound,
            Arc::clone(&lctl),
            resolved.clone(),
            guard,
        ));
        self.binds.push(BindRecord {
            resolved: resolved.clone(),
            binding: Binding::Listener(lctl),
            fd: Some(fd),
        });
        Ok(resolved)
    }

    /// Connects to an endpoint. tcp/ipc connect in the background and reconnect as needed.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// // inproc may connect before its bind; the message waits in the pipe.
    /// b.connect("inproc://doc-connect")?;
    /// b.send("early", SendFlags::empty())?;
    /// a.bind("inproc://doc-connect")?;
    /// assert_eq!(a.recv(RecvFlags::empty())?.as_slice(), b"early");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn connect(&mut self, endpoint: &str) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        let parsed = Endpoint::parse(endpoint)?;
        let target = match parsed {
            Endpoint::Inproc(name) => {
                let ids = self
                    .ctx
                    .pipe_ids
                    .fetch_add(2, std::sync::atomic::Ordering::Relaxed);
                let (peer, metadata) = self.ctx.inproc.connect(&name, self.inproc_side(), ids)?;
                let mut core = self.core.lock();
                core.attach(peer);
                if let Some(m) = metadata {
                    core.pattern.identify(ids, m, &self.options);
                }
                core.unlock();
                self.connects.push(ConnectRecord {
                    endpoint: endpoint.to_owned(),
                    ctl: None,
                    pipe: Some(ids),
                });
                self.last_endpoint = endpoint.to_owned();
                return Ok(());
            }
            Endpoint::Tcp(addr) => {
                // As libzmq, the syntax check is all: a name is resolved, and port 0 refused,
                // on each connect attempt (src/connect/resolver.rs), not here.
                crate::connect::endpoint::check_tcp_connect_syntax(&endpoint["tcp://".len()..])?;
                Target::Tcp(addr)
            }
            Endpoint::Ipc(path) => Target::Ipc(path),
        };
        let (link, handle) = self.link()?;
        let ctl = SessionCtl::new(self.options.linger);
        let (held, pipe) = if self.options.immediate {
            (None, None)
        } else {
            let id = link.next_pipe_id();
            let (mut peer, far) =
                socket_pipes(id, self.mailbox.peer_wake(id), self.kind, &self.options);
            peer.assigned_id = self.options.connect_routing_id.clone();
            let mut core = self.core.lock();
            core.attach(peer);
            core.unlock();
            (Some((far, id)), Some(id))
        };
        self.options.connect_routing_id = None;
        let mut core = self.core.lock();
        core.options.connect_routing_id = None;
        core.unlock();
        let guard = self.ctx.activity.enter();
        handle.spawn(connect_loop(
            link,
            target,
            Arc::clone(&ctl),
            held,
            endpoint.to_owned(),
            guard,
        ));
        self.connects.push(ConnectRecord {
            endpoint: endpoint.to_owned(),
            ctl: Some(ctl),
            pipe,
        });
        self.last_endpoint = endpoint.to_owned();
        Ok(())
    }

    /// Stops listening on a bound endpoint and closes the connections it accepted.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.bind("tcp://127.0.0.1:*")?;
    /// let endpoint = s.last_endpoint()?;
    /// s.unbind(&endpoint)?;
    /// assert_eq!(s.unbind(&endpoint), Err(ferromq::Error::NoEnt));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn unbind(&mut self, endpoint: &str) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        check_uri(endpoint)?;
        let pos = self
            .binds
            .iter()
            .position(|b| b.resolved == endpoint)
            .or_else(|| {
                let resolved = resolve_for_unbind(endpoint, self.options.ipv6)?;
                self.binds.iter().position(|b| b.resolved == resolved)
            })
            .ok_or(Error::NoEnt)?;
        let record = self.binds.remove(pos);
        if let Some(fd) = record.fd {
            self.monitor.emit_fd(EVENT_CLOSED, fd, &record.resolved);
        }
        match record.binding {
            Binding::Listener(l) => l.unbind(),
            Binding::Inproc(name) => self.ctx.inproc.unbind(&name, self.id)?,
        }
        Ok(())
    }

    /// Drops a connected endpoint and its pipes.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// s.connect("tcp://127.0.0.1:5555")?; // connects in the background, retrying
    /// s.disconnect("tcp://127.0.0.1:5555")?;
    /// assert_eq!(s.disconnect("tcp://127.0.0.1:5555"), Err(ferromq::Error::NoEnt));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn disconnect(&mut self, endpoint: &str) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        check_uri(endpoint)?;
        let pos = self
            .connects
            .iter()
            .position(|c| c.endpoint == endpoint)
            .ok_or(Error::NoEnt)?;
        let record = self.connects.remove(pos);
        if let Some(ctl) = record.ctl {
            ctl.stop();
        }
        if let Some(id) = record.pipe {
            let mut core = self.core.lock();
            core.pattern.detach(id);
            core.unlock();
        }
        Ok(())
    }

    /// Starts a monitor (libzmq's `zmq_socket_monitor`): a PAIR bound at the inproc
    /// `endpoint` receives the `events` (a mask of `monitor::EVENT_*`) in libzmq's two-frame
    /// format; read them with a PAIR connected there and [`crate::monitor::MonitorEvent`].
    /// A second call replaces the monitor; `EPROTONOSUPPORT` for a non-inproc endpoint.
    ///
    /// ```
    /// use ferromq::monitor::{MonitorEvent, EVENT_LISTENING};
    /// use ferromq::{Context, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Rep)?;
    /// s.monitor("inproc://doc-monitor", EVENT_LISTENING)?;
    /// let mut events = ctx.socket(SocketType::Pair)?;
    /// events.connect("inproc://doc-monitor")?;
    /// s.bind("tcp://127.0.0.1:*")?;
    /// let ev = MonitorEvent::parse(&events.recv_multipart(RecvFlags::empty())?)?;
    /// assert_eq!((ev.event, ev.endpoint), (EVENT_LISTENING, s.last_endpoint()?));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn monitor(&mut self, endpoint: &str, events: u16) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        if !matches!(Endpoint::parse(endpoint)?, Endpoint::Inproc(_)) {
            return Err(Error::ProtoNoSupport);
        }
        // The old monitor gets MONITOR_STOPPED and unbinds first, so its endpoint is reusable.
        self.monitor.stop();
        let mut pair = Socket::new(Arc::clone(&self.ctx), SocketType::Pair)?;
        pair.set_linger(0)?;
        pair.bind(endpoint)?;
        self.monitor.install(Box::new(pair), events)
    }

    /// Stops the monitor (it sends MONITOR_STOPPED if asked for).
    ///
    /// ```
    /// use ferromq::monitor::{MonitorEvent, EVENT_MONITOR_STOPPED};
    /// use ferromq::{Context, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Rep)?;
    /// s.monitor("inproc://doc-stop-monitor", EVENT_MONITOR_STOPPED)?;
    /// let mut events = ctx.socket(SocketType::Pair)?;
    /// events.connect("inproc://doc-stop-monitor")?;
    /// s.stop_monitor();
    /// let ev = MonitorEvent::parse(&events.recv_multipart(RecvFlags::empty())?)?;
    /// assert_eq!(ev.event, EVENT_MONITOR_STOPPED);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn stop_monitor(&mut self) {
        self.monitor.stop();
    }

    /// Sends one message part. A refused part comes back in the error (`EAGAIN` under
    /// `DONTWAIT` or after SNDTIMEO, `ETERM`, the pattern's own errors).
    ///
    /// ```
    /// use ferromq::{Bytes, Context, Error, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-send")?;
    /// b.connect("inproc://doc-send")?;
    /// b.send(Bytes::from_static(b"head"), SendFlags::SNDMORE)?;
    /// b.send("tail", SendFlags::empty())?;
    /// assert_eq!(a.recv_multipart(RecvFlags::empty())?, vec![Bytes::from("head"), Bytes::from("tail")]);
    /// // With no peer, a non-blocking send is refused and the message comes back.
    /// let mut lonely = ctx.socket(SocketType::Push)?;
    /// let refused = lonely.send("kept", SendFlags::DONTWAIT).unwrap_err();
    /// assert_eq!((refused.error(), refused.message().as_slice()), (Error::Again, &b"kept"[..]));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn send(&mut self, msg: impl Into<Msg>, flags: SendFlags) -> SendResult<Msg> {
        let Msg {
            data,
            more: part_more,
            metadata,
        } = msg.into();
        let more = flags.contains(SendFlags::SNDMORE);
        let mut patience =
            Patience::new(flags.contains(SendFlags::DONTWAIT), self.options.sndtimeo);
        let mut frame = data;
        let error = loop {
            match self.try_send_frame(frame, more) {
                Ok(()) => return Ok(()),
                Err((Error::Again, back)) => frame = back,
                Err((e, back)) => {
                    frame = back;
                    break e;
                }
            }
            if let Err(e) = patience.deadline().and_then(|d| self.wait(d)) {
                break e;
            }
        };
        let msg = Msg {
            data: frame,
            more: part_more,
            metadata,
        };
        Err(SendError::new(error, msg))
    }

    /// One attempt to hand a frame to the pattern, never waiting; a refused frame comes back.
    pub(crate) fn try_send_frame(
        &mut self,
        frame: Bytes,
        more: bool,
    ) -> std::result::Result<(), (Error, Bytes)> {
        if self.ctx.is_terminated() {
            return Err((Error::Term, frame));
        }
        // Marked before the try, so that the pattern's answer goes back untouched (see
        // `send_locked`); a refused frame leaves a receive waiting awake once for nothing.
        self.mark_sent();
        let options = &self.options;
        send_locked(&mut self.core, |pattern| pattern.send(frame, more, options))
    }

    /// Sends a copy of `data` as one message part, as `zmq_send` does. The copy goes into
    /// buffers the socket recycles (see `send_buffers`) rather than a fresh allocation, so
    /// prefer this to `send(Bytes::copy_from_slice(data), ..)` for borrowed bytes.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-send-slice")?;
    /// b.connect("inproc://doc-send-slice")?;
    /// let buf = [1u8, 2, 3];
    /// b.send_slice(&buf, SendFlags::empty())?; // `buf` stays ours
    /// assert_eq!(a.recv(RecvFlags::empty())?.as_slice(), &buf);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn send_slice(&mut self, data: &[u8], flags: SendFlags) -> SendResult<Msg> {
        // The first try lends the bytes: the pattern copies them only if it keeps the frame.
        // A refused frame comes back copied, and any wait and retry goes on with that copy.
        let mut refused = Bytes::new();
        match self.try_send_lent(data, flags.contains(SendFlags::SNDMORE), &mut refused) {
            Ok(()) => Ok(()),
            Err(Error::Again) if !flags.contains(SendFlags::DONTWAIT) => self.send(refused, flags),
            Err(e) => Err(SendError::new(e, Msg::new(refused))),
        }
    }

    /// [`Socket::try_send_frame`] of lent bytes; a refused frame comes back copied, in
    /// `refused`. (Not in the `Err`: the answer is then an `Error` alone, which comes back in
    /// a register, and the pattern's answer is read only as far as its tag unless the frame
    /// was refused; see `msg::settled`.)
    fn try_send_lent(&mut self, data: &[u8], more: bool, refused: &mut Bytes) -> Result<()> {
        if self.ctx.is_terminated() {
            *refused = self.copy_to_send(data);
            return Err(Error::Term);
        }
        let (options, buffers) = (&self.options, &mut self.send_buffers);
        let frame = Lent { data, buffers };
        match send_locked(&mut self.core, |pattern| {
            pattern.send_lent(frame, more, options)
        }) {
            Ok(()) => {
                self.mark_sent();
                Ok(())
            }
            Err((e, frame)) => {
                *refused = frame;
                Err(e)
            }
        }
    }

    /// A copy of `data` in the socket's send buffers.
    pub(crate) fn copy_to_send(&mut self, data: &[u8]) -> Bytes {
        self.send_buffers.copy(data)
    }

    /// Receives one message part.
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-recv")?;
    /// b.connect("inproc://doc-recv")?;
    /// assert_eq!(a.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
    /// b.send_multipart(["one", "two"], SendFlags::empty())?;
    /// let first = a.recv(RecvFlags::empty())?;
    /// assert!(first.more && a.rcvmore());
    /// assert_eq!(a.recv(RecvFlags::empty())?.as_slice(), b"two");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn recv(&mut self, flags: RecvFlags) -> Result<Msg> {
        let mut msg = self.recv_frame(flags)?;
        msg.metadata.clone_from(&self.metadata);
        Ok(msg)
    }

    /// [`Socket::recv`] without the frame's metadata in the message (its `metadata` is `None`):
    /// [`Socket::last_metadata`] has it until the next receive. A run of frames from one
    /// connection then takes no reference count: `recv` counts every frame it hands out (an
    /// atomic increment, and a decrement where the message is dropped), which `zmq_msg_recv`
    /// and `zmq_recv` need not, as a `zmq_msg_t` keeps the last frame's metadata in place.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pull)?;
    /// let mut b = ctx.socket(SocketType::Push)?;
    /// a.bind("tcp://127.0.0.1:*")?;
    /// b.connect(&a.last_endpoint()?)?;
    /// b.send("hello", SendFlags::empty())?;
    /// let frame = a.recv_frame(RecvFlags::empty())?;
    /// assert!(frame.metadata.is_none());
    /// let properties = a.last_metadata().expect("a tcp frame carries its peer's metadata");
    /// assert_eq!(properties.get("Socket-Type").map(|v| &v[..]), Some(&b"PUSH"[..]));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn recv_frame(&mut self, flags: RecvFlags) -> Result<Msg> {
        // The timeout is read only once the first try found nothing: a call that completes at
        // once leaves the options' line alone (issue 15: with a thousand sockets drained in
        // turn it was one cold line per call).
        let mut patience = None;
        let mut may_wait_awake = true;
        // While waiting awake for an answer: the watch, when it ends, and the notification
        // count read before the last look (one counted after it changes it).
        let mut awake: Option<(Watch, Instant)> = None;
        let mut seen = 0;
        // Whether this receive waits for an answer (the socket sent since it last waited),
        // as of its first wait, and the connection it borrowed for that (`io/lend.rs`),
        // given back when it returns. Tried again after each wake-up: the connection may
        // have been made, or freed by its I/O thread, meanwhile.
        let mut answer = None;
        let mut borrowed: Option<Borrowed> = None;
        loop {
            if self.ctx.is_terminated() {
                return Err(Error::Term);
            }
            let mut core = self.core.lock();
            let received = ManuallyDrop::new(core.pattern.recv_frame(&mut self.metadata));
            core.unlock();
            match &*received {
                Ok(msg) => {
                    // SAFETY: `received` is not dropped (`ManuallyDrop`) nor used again.
                    let msg = unsafe { crate::msg::settled::received(msg) };
                    self.rcvmore = msg.more;
                    // No metadata: an inproc frame, from a peer's own thread.
                    let large = msg.data.len() >= STREAM_SPIN_FROM && self.metadata.is_none();
                    if large != self.large_last {
                        self.large_last = large;
                    }
                    if awake.is_some() {
                        self.reply_spin.outcome(true);
                    }
                    return Ok(msg);
                }
                Err(Error::Again) => {}
                Err(e) => return Err(*e),
            }
            let dontwait = flags.contains(RecvFlags::DONTWAIT);
            let rcvtimeo = self.options.rcvtimeo;
            let patience = patience.get_or_insert_with(|| Patience::new(dontwait, rcvtimeo));
            let deadline = patience.deadline()?;
            let answer = *answer.get_or_insert(self.sent_last);
            if let Some((_, until)) = &awake {
                if self.signal.wait_awake(seen, *until) {
                    seen = self.signal.seen();
                } else {
                    // Not answered in time: notifiers write the fd again from here on, and
                    // one more look comes before the sleep.
                    awake = None;
                    self.reply_spin.outcome(false);
                }
                continue;
            }
            if std::mem::take(&mut may_wait_awake) && self.reply_due() {
                let until = Instant::now() + REPLY_SPIN;
                let (watch, count) = Watch::start(&self.signal);
                seen = count;
                awake = Some((watch, deadline.map_or(until, |d| d.min(until))));
                continue;
            }
            if answer && borrowed.is_none() {
                borrowed = self.borrow_lone();
            }
            match &borrowed {
                Some(connection) => {
                    if self.wait_borrowed(deadline, connection)? == BorrowedRead::Taken {
                        borrowed = None;
                    }
                }
                None => self.wait(deadline)?,
            }
        }
    }

    /// [`Socket::wait`] with a borrowed connection: a wake-up, or the connection's stream
    /// readable, which is then read into the socket's inbound pipe from this thread.
    fn wait_borrowed(
        &mut self,
        until: Option<Instant>,
        connection: &Borrowed,
    ) -> Result<BorrowedRead> {
        if until.is_some_and(|d| d <= Instant::now()) {
            return Err(Error::Again);
        }
        let (flag, stream) = self.signal.wait_with(connection.poll_fd(), until)?;
        if flag {
            self.signal.drain();
        }
        if !stream.is_empty() {
            return Ok(self.run_borrowed(connection, stream));
        }
        if !flag {
            return Err(Error::Again);
        }
        Ok(BorrowedRead::Read)
    }

    /// Notes a send for [`Socket::reply_due`], storing only when the mark changes: a socket
    /// that only sends writes nothing per message for it.
    #[inline(always)]
    fn mark_sent(&mut self) {
        if !self.sent_last {
            self.sent_last = true;
        }
    }

    /// Whether a receive that found nothing waits awake for a while before it sleeps: only
    /// the first such wait after a send (an answer may be on its way) or any wait after a
    /// large inproc frame (the next of a stream may be, `STREAM_SPIN_FROM`), on a thread that
    /// may run on another CPU than the one that answers, and while such waits are answered in
    /// time (see `REPLY_SPIN`).
    pub(crate) fn reply_due(&mut self) -> bool {
        (std::mem::take(&mut self.sent_last) || self.large_last)
            && self.several_cpus
            && self.reply_spin.chance()
    }

    /// The metadata of the frame [`Socket::recv_frame`] (or `recv`) received last: what its
    /// peer announced in its handshake, and the connection's own properties; `None` for an
    /// inproc peer or before any frame.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("ipc://*")?;
    /// b.connect(&a.last_endpoint()?)?;
    /// assert!(a.last_metadata().is_none());
    /// b.send("hi", SendFlags::empty())?;
    /// let msg = a.recv(RecvFlags::empty())?;
    /// // `recv` hands out the same metadata that the socket keeps.
    /// let kept = a.last_metadata().expect("an ipc frame carries its peer's metadata");
    /// assert!(std::sync::Arc::ptr_eq(kept, msg.metadata.as_ref().unwrap()));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn last_metadata(&self) -> Option<&Arc<Metadata>> {
        self.metadata.as_ref()
    }

    /// Waits for a wake-up; `Again` once the deadline has passed.
    fn wait(&self, until: Option<Instant>) -> Result<()> {
        if until.is_some_and(|d| d <= Instant::now()) {
            return Err(Error::Again);
        }
        if !self.signal.wait(until)? {
            return Err(Error::Again);
        }
        self.signal.drain();
        Ok(())
    }

    /// Sends every part of a message (`SNDMORE` is implied between parts; `DONTWAIT` applies
    /// to the first part, as the pipes take every other part of a message whose first part
    /// they took). A message refused whole comes back whole in the error; should a later part
    /// fail (`ETERM`), the error holds the parts not sent.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// let mut dealer = ctx.socket(SocketType::Dealer)?;
    /// dealer.set_routing_id(b"d1")?;
    /// router.bind("inproc://doc-send-multipart")?;
    /// dealer.connect("inproc://doc-send-multipart")?;
    /// dealer.send("hi", ferromq::SendFlags::empty())?;
    /// let request = router.recv_multipart(RecvFlags::empty())?;
    /// assert_eq!(request[0], "d1");
    /// router.send_multipart([request[0].clone(), "reply".into()], SendFlags::empty())?;
    /// assert_eq!(dealer.recv(RecvFlags::empty())?.as_slice(), b"reply");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn send_multipart(
        &mut self,
        parts: impl IntoIterator<Item = impl Into<Bytes>>,
        flags: SendFlags,
    ) -> SendResult<Multipart> {
        let base = if flags.contains(SendFlags::DONTWAIT) {
            SendFlags::DONTWAIT
        } else {
            SendFlags::empty()
        };
        let mut frames = parts
            .into_iter()
            .map(Into::into)
            .collect::<Vec<Bytes>>()
            .into_iter();
        while let Some(part) = frames.next() {
            let f = if frames.len() > 0 {
                base | SendFlags::SNDMORE
            } else {
                base
            };
            if let Err(e) = self.send(part, f) {
                let error = e.error();
                let rest = std::iter::once(e.into_message().data)
                    .chain(frames)
                    .collect();
                return Err(SendError::new(error, rest));
            }
        }
        Ok(())
    }

    /// Receives every part of a message.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-recv-multipart")?;
    /// b.connect("inproc://doc-recv-multipart")?;
    /// b.send_multipart(["a", "b", "c"], SendFlags::empty())?;
    /// let msg = a.recv_multipart(RecvFlags::empty())?;
    /// assert_eq!(msg.len(), 3);
    /// assert_eq!(msg[2], "c");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn recv_multipart(&mut self, flags: RecvFlags) -> Result<Multipart> {
        let mut parts = Multipart::new();
        loop {
            let msg = self.recv(flags)?;
            let more = msg.more;
            parts.push_part(msg);
            if !more {
                return Ok(parts);
            }
        }
    }

    /// ZMQ_FD: readable whenever the socket's events may have changed (edge-triggered:
    /// check [`Socket::events`] until it reports nothing before waiting again).
    ///
    /// ```
    /// use ferromq::option::ZMQ_FD;
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// // Hand this to an event loop (epoll, tokio's AsyncFd): readable means "check events".
    /// let fd = s.fd();
    /// let mut out = [0u8; 4];
    /// s.get_option_raw(ZMQ_FD, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), fd);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn fd(&self) -> RawFd {
        self.signal.raw_fd()
    }

    /// Whether the socket's context has been shut down (every call then fails with `ETERM`).
    pub(crate) fn is_terminated(&self) -> bool {
        self.ctx.is_terminated()
    }

    /// The socket's signaler, to watch ([`Watch`]).
    pub(crate) fn signal(&self) -> &Arc<Signaler> {
        &self.signal
    }

    /// Whether the socket sent since a receive or poll last waited on it: the next wait is
    /// for an answer (see [`Socket::reply_due`], which clears it).
    pub(crate) fn awaits_answer(&self) -> bool {
        self.sent_last
    }

    /// Borrows the socket's lone tcp or ipc connection for a wait (`io/lend.rs`).
    pub(crate) fn borrow_lone(&self) -> Option<Borrowed> {
        self.lenders.lone().and_then(Lendable::lend)
    }

    /// Runs a borrowed connection once its stream is `ready` (`Borrowed::run`): reads it
    /// into the socket's inbound pipe, writes what output waits.
    pub(crate) fn run_borrowed(
        &self,
        connection: &Borrowed,
        ready: rustix::event::PollFlags,
    ) -> BorrowedRead {
        connection.run(&self.signal, ready)
    }

    /// What a wait awake for an answer came to (see [`Socket::reply_due`]).
    pub(crate) fn reply_outcome(&mut self, answered: bool) {
        self.reply_spin.outcome(answered);
    }

    pub(crate) fn signaler(&self) -> &Signaler {
        &self.signal
    }

    /// ZMQ_EVENTS: what the socket can do now.
    ///
    /// With `&mut self` this is one of the socket's own calls: it takes the core as its owner,
    /// with no locked instruction (a poll loop asks this for every socket on every pass).
    ///
    /// ```
    /// use ferromq::{Context, Events, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-events")?;
    /// b.connect("inproc://doc-events")?;
    /// assert!(!a.events().contains(Events::POLLIN));
    /// b.send("x", SendFlags::empty())?;
    /// assert!(a.events().contains(Events::POLLIN));
    /// assert!(b.events().contains(Events::POLLOUT));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn events(&mut self) -> Events {
        self.signal.drain_if_written();
        let mut core = self.core.lock();
        let ev = events_of(&mut core);
        core.unlock();
        ev
    }

    /// [`Socket::events`] for a caller that has only `&Socket` (a [`crate::PollItem::socket`]
    /// item, [`Socket::get_option_raw`]): the lockers' protocol, two locked instructions.
    pub(crate) fn current_events(&self) -> Events {
        self.signal.drain_if_written();
        let mut core = self.core.lock_shared();
        let ev = events_of(&mut core);
        core.unlock();
        ev
    }

    /// ZMQ_LAST_ENDPOINT: the endpoint of the last successful bind, as resolved (the port the
    /// system chose for `*`), or of the last connect, as given; libzmq's connect sets it too.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// assert_eq!(s.last_endpoint()?, "");
    /// s.bind("tcp://127.0.0.1:*")?;
    /// let port: u16 = s.last_endpoint()?.rsplit(':').next().unwrap_or("").parse().unwrap_or(0);
    /// assert_ne!(port, 0);
    /// s.connect("tcp://127.0.0.1:5557")?;
    /// assert_eq!(s.last_endpoint()?, "tcp://127.0.0.1:5557");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn last_endpoint(&self) -> Result<String> {
        Ok(self.last_endpoint.clone())
    }

    /// ZMQ_RCVMORE: the last part received has more parts after it.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-rcvmore")?;
    /// b.connect("inproc://doc-rcvmore")?;
    /// b.send_multipart(["1", "2"], SendFlags::empty())?;
    /// a.recv(RecvFlags::empty())?;
    /// assert!(a.rcvmore());
    /// a.recv(RecvFlags::empty())?;
    /// assert!(!a.rcvmore());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn rcvmore(&self) -> bool {
        self.rcvmore
    }

    /// Sets an option by libzmq's number and raw value bytes (C `int`s in native order), under
    /// the rules of [`option::TABLE`].
    ///
    /// ```
    /// use ferromq::option::{ZMQ_LINGER, ZMQ_SNDHWM};
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// s.set_option_raw(ZMQ_SNDHWM, &50i32.to_ne_bytes())?;
    /// assert_eq!(s.set_option_raw(ZMQ_LINGER, &[0u8; 2]), Err(ferromq::Error::Invalid)); // not an int
    /// let mut out = [0u8; 4];
    /// s.get_option_raw(ZMQ_SNDHWM, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), 50);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_option_raw(&mut self, option: i32, value: &[u8]) -> Result<()> {
        self.set_option_input(option, option::Input::of(value))
    }

    /// [`Socket::set_option_raw`] with the C caller's NULL-ness of the value (libzmq clears
    /// some string options on `(NULL, 0)` and refuses `("", 0)`).
    ///
    /// ```
    /// use ferromq::option::{Input, ZMQ_MECHANISM, ZMQ_PLAIN_USERNAME};
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_option_input(ZMQ_PLAIN_USERNAME, Input::of(b"admin"))?;
    /// // A C caller's (NULL, 0) turns PLAIN off again; ("", 0) is refused, as in libzmq.
    /// s.set_option_input(ZMQ_PLAIN_USERNAME, Input { bytes: &[], null: true })?;
    /// let mut out = [0u8; 4];
    /// s.get_option_raw(ZMQ_MECHANISM, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), 0); // ZMQ_NULL
    /// let empty = s.set_option_input(ZMQ_PLAIN_USERNAME, Input::of(b""));
    /// assert_eq!(empty, Err(ferromq::Error::Invalid));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_option_input(&mut self, option: i32, value: option::Input<'_>) -> Result<()> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        let spec = option::spec(option).ok_or(Error::Invalid)?;
        if !spec.types.contains(self.kind.to_raw()) {
            return Err(Error::Invalid);
        }
        // The table checks and stores the value; the pattern then acts on its own options.
        self.options.set(option, value)?;
        let mut core = self.core.lock();
        core.options = self.options.clone();
        if matches!(option, option::ZMQ_SNDHWM | option::ZMQ_RCVHWM) {
            core.apply_hwms();
        }
        let r = match core.pattern.set_option(option, value.bytes) {
            Some(r) => r,
            None if matches!(option, option::ZMQ_SUBSCRIBE | option::ZMQ_UNSUBSCRIBE) => {
                Err(Error::Invalid)
            }
            None => Ok(()),
        };
        core.unlock();
        r
    }

    /// Reads an option by libzmq's number into `out` (the caller's whole buffer, whose size
    /// the table's rule checks); returns the length written.
    ///
    /// ```
    /// use ferromq::option::ZMQ_TYPE;
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Router)?;
    /// let mut out = [0u8; 4];
    /// assert_eq!(s.get_option_raw(ZMQ_TYPE, &mut out)?, 4);
    /// assert_eq!(i32::from_ne_bytes(out), 6); // ZMQ_ROUTER
    /// assert_eq!(s.get_option_raw(ZMQ_TYPE, &mut [0u8; 2]), Err(ferromq::Error::Invalid));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn get_option_raw(&self, option: i32, out: &mut [u8]) -> Result<usize> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        if option == option::ZMQ_EVENTS {
            return put_events(self.current_events(), out);
        }
        if let Some(r) = self.own_option(option, out) {
            return r;
        }
        let core = self.core.lock_shared();
        let own = core.pattern.get_option(option, out);
        core.unlock();
        own.unwrap_or_else(|| self.options.get(option, out).unwrap_or(Err(Error::Invalid)))
    }

    /// [`Socket::get_option_raw`] as one of the socket's own calls: ZMQ_EVENTS and the
    /// pattern's options take the core as its owner, with no locked instruction, where
    /// `get_option_raw` (`&self`) pays two. `zmq_getsockopt` and `zmq_poll` read through this
    /// (a C caller uses a socket from one thread at a time).
    ///
    /// ```
    /// use ferromq::option::{ZMQ_EVENTS, ZMQ_SNDHWM};
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// let mut out = [0u8; 4];
    /// s.get_option_raw_mut(ZMQ_SNDHWM, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), 1000);
    /// s.get_option_raw_mut(ZMQ_EVENTS, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), 0); // no peer: cannot send yet
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn get_option_raw_mut(&mut self, option: i32, out: &mut [u8]) -> Result<usize> {
        if self.ctx.is_terminated() {
            return Err(Error::Term);
        }
        if option == option::ZMQ_EVENTS {
            return put_events(self.events(), out);
        }
        if let Some(r) = self.own_option(option, out) {
            return r;
        }
        let core = self.core.lock();
        let own = core.pattern.get_option(option, out);
        core.unlock();
        own.unwrap_or_else(|| self.options.get(option, out).unwrap_or(Err(Error::Invalid)))
    }

    /// The options the socket answers itself, without its core (ZMQ_EVENTS aside).
    fn own_option(&self, option: i32, out: &mut [u8]) -> Option<Result<usize>> {
        // libzmq's do_getsockopt<int> for the socket's own values: at least sizeof (int), the
        // rest zero-filled.
        let own = |v: i32, out: &mut [u8]| option::put(out, &v.to_ne_bytes());
        Some(match option {
            option::ZMQ_RCVMORE => own(i32::from(self.rcvmore), out),
            option::ZMQ_FD => own(self.fd(), out),
            option::ZMQ_TYPE => option::put_exact(out, &self.kind.to_raw().to_ne_bytes()),
            option::ZMQ_LAST_ENDPOINT => {
                // A C string, with its NUL, as libzmq returns it.
                let mut s = self.last_endpoint.clone().into_bytes();
                s.push(0);
                option::put(out, &s)
            }
            _ => return None,
        })
    }

    /// Sets an option by its typed key, through the same table rules as
    /// [`Socket::set_option_raw`] and `zmq_setsockopt`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ferromq::option::typed::{ZMQ_LINGER, ZMQ_SNDHWM};
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// s.set(ZMQ_LINGER, Some(Duration::from_millis(250)))?;
    /// s.set(ZMQ_SNDHWM, 10)?;
    /// assert_eq!(s.get(ZMQ_LINGER)?, Some(Duration::from_millis(250)));
    /// assert_eq!(s.get(ZMQ_SNDHWM)?, 10);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set<T: option::typed::OptionValue>(
        &mut self,
        key: option::typed::Opt<T>,
        value: T,
    ) -> Result<()> {
        let raw = value.encode(key.unit())?;
        self.set_option_raw(key.number(), &raw)
    }

    /// Reads an option by its typed key (`EINVAL` for a write-only one).
    ///
    /// ```
    /// use ferromq::option::typed::{ZMQ_RCVHWM, ZMQ_RCVTIMEO};
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Pull)?;
    /// assert_eq!(s.get(ZMQ_RCVHWM)?, 1000); // libzmq's default
    /// assert_eq!(s.get(ZMQ_RCVTIMEO)?, None); // -1: wait forever
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn get<T: option::typed::OptionValue>(&self, key: option::typed::Opt<T>) -> Result<T> {
        let mut raw = [0u8; 8];
        let out = &mut raw[..T::SIZE];
        let n = self.get_option_raw(key.number(), out)?;
        T::decode(&out[..n], key.unit())
    }

    fn set_int(&mut self, option: i32, v: i32) -> Result<()> {
        self.set_option_raw(option, &v.to_ne_bytes())
    }

    /// ZMQ_SNDHWM (messages, 0 = none); applies to existing peers' pipes too, as in libzmq.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// s.set_sndhwm(10)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_SNDHWM)?, 10);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_sndhwm(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_SNDHWM, v)
    }
    /// ZMQ_RCVHWM.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.set_rcvhwm(0)?; // no limit
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_RCVHWM)?, 0);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_rcvhwm(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_RCVHWM, v)
    }
    /// ZMQ_LINGER (ms, -1 = forever).
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Push)?;
    /// s.set_linger(0)?; // drop unsent messages on close
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_LINGER)?, Some(Duration::ZERO));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_linger(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_LINGER, v)
    }
    /// ZMQ_SNDTIMEO (ms, -1 = forever).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Push)?; // no peer: a send must wait
    /// s.set_sndtimeo(20)?;
    /// let start = Instant::now();
    /// assert_eq!(s.send("x", SendFlags::empty()).unwrap_err().error(), Error::Again);
    /// assert!(start.elapsed() >= Duration::from_millis(20));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_sndtimeo(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_SNDTIMEO, v)
    }
    /// ZMQ_RCVTIMEO (ms, -1 = forever).
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Pull)?;
    /// s.set_rcvtimeo(10)?;
    /// assert_eq!(s.recv(RecvFlags::empty()).err(), Some(Error::Again));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_rcvtimeo(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_RCVTIMEO, v)
    }
    /// ZMQ_ROUTING_ID.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// let mut dealer = ctx.socket(SocketType::Dealer)?;
    /// dealer.set_routing_id(b"worker-1")?;
    /// router.bind("inproc://doc-routing-id")?;
    /// dealer.connect("inproc://doc-routing-id")?;
    /// dealer.send("ready", SendFlags::empty())?;
    /// assert_eq!(router.recv_multipart(RecvFlags::empty())?[0], "worker-1");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_routing_id(&mut self, id: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_ROUTING_ID, id)
    }
    /// Makes this socket a CURVE server with these long-term keys (ZMQ_CURVE_SERVER,
    /// ZMQ_CURVE_SECRETKEY, ZMQ_CURVE_PUBLICKEY); connections made afterwards use them.
    ///
    /// ```
    /// use ferromq::{Context, CurveKeyPair, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let server_keys = CurveKeyPair::generate().ok_or(ferromq::Error::NoMem)?; // None: no OS randomness
    /// let client_keys = CurveKeyPair::generate().ok_or(ferromq::Error::NoMem)?;
    /// let mut server = ctx.socket(SocketType::Rep)?;
    /// server.set_curve_server(&server_keys)?;
    /// server.bind("tcp://127.0.0.1:*")?;
    /// let mut client = ctx.socket(SocketType::Req)?;
    /// client.set_curve_client(&client_keys, &server_keys.public)?;
    /// client.connect(&server.last_endpoint()?)?;
    /// client.send("secret", SendFlags::empty())?;
    /// assert_eq!(server.recv(RecvFlags::empty())?.as_slice(), b"secret");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_curve_server(&mut self, keys: &crate::CurveKeyPair) -> Result<()> {
        self.set_int(option::ZMQ_CURVE_SERVER, 1)?;
        let secret = zeroize::Zeroizing::new(keys.secret_bytes());
        self.set_option_raw(option::ZMQ_CURVE_SECRETKEY, &secret[..])?;
        self.set_option_raw(option::ZMQ_CURVE_PUBLICKEY, &keys.public)
    }
    /// Makes this socket a CURVE client of the server whose public key is `server`, with our
    /// long-term keys (ZMQ_CURVE_SERVERKEY, ZMQ_CURVE_PUBLICKEY, ZMQ_CURVE_SECRETKEY).
    ///
    /// ```
    /// use ferromq::option::{security::MechanismKind, ZMQ_MECHANISM};
    /// let ctx = ferromq::Context::new();
    /// let server = ferromq::CurveKeyPair::generate().ok_or(ferromq::Error::NoMem)?;
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// let ours = ferromq::CurveKeyPair::generate().ok_or(ferromq::Error::NoMem)?;
    /// s.set_curve_client(&ours, &server.public)?;
    /// let mut out = [0u8; 4];
    /// s.get_option_raw(ZMQ_MECHANISM, &mut out)?;
    /// assert_eq!(i32::from_ne_bytes(out), MechanismKind::Curve.to_raw());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_curve_client(
        &mut self,
        keys: &crate::CurveKeyPair,
        server: &[u8; 32],
    ) -> Result<()> {
        self.set_option_raw(option::ZMQ_CURVE_SERVERKEY, server)?;
        let secret = zeroize::Zeroizing::new(keys.secret_bytes());
        self.set_option_raw(option::ZMQ_CURVE_SECRETKEY, &secret[..])?;
        self.set_option_raw(option::ZMQ_CURVE_PUBLICKEY, &keys.public)
    }
    /// ZMQ_PLAIN_SERVER: a PLAIN server (it needs a ZAP handler, as in libzmq), or back to
    /// NULL.
    ///
    /// ```
    /// use ferromq::option::typed::ZMQ_PLAIN_SERVER;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Rep)?;
    /// s.set_plain_server(true)?;
    /// assert!(s.get(ZMQ_PLAIN_SERVER)?);
    /// s.set_plain_server(false)?; // back to NULL
    /// assert!(!s.get(ZMQ_PLAIN_SERVER)?);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_plain_server(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_PLAIN_SERVER, i32::from(on))
    }
    /// ZMQ_PLAIN_USERNAME and ZMQ_PLAIN_PASSWORD: a PLAIN client with these credentials.
    ///
    /// ```
    /// use ferromq::option::{security::MechanismKind, ZMQ_MECHANISM, ZMQ_PLAIN_USERNAME};
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Req)?;
    /// s.set_plain_client(b"admin", b"secret")?;
    /// let mut out = [0u8; 16];
    /// assert_eq!(s.get_option_raw(ZMQ_PLAIN_USERNAME, &mut out)?, 6); // "admin" and its NUL
    /// s.get_option_raw(ZMQ_MECHANISM, &mut out[..4])?;
    /// assert_eq!(i32::from_ne_bytes([out[0], out[1], out[2], out[3]]), MechanismKind::Plain.to_raw());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_plain_client(&mut self, username: &[u8], password: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_PLAIN_USERNAME, username)?;
        self.set_option_raw(option::ZMQ_PLAIN_PASSWORD, password)
    }
    /// ZMQ_ZAP_DOMAIN: the domain this server's ZAP requests name.
    ///
    /// ```
    /// use ferromq::option::ZMQ_ZAP_DOMAIN;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Rep)?;
    /// s.set_zap_domain(b"global")?;
    /// let mut out = [0u8; 16];
    /// let n = s.get_option_raw(ZMQ_ZAP_DOMAIN, &mut out)?;
    /// assert_eq!(&out[..n], b"global\0");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_zap_domain(&mut self, domain: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_ZAP_DOMAIN, domain)
    }
    /// ZMQ_CONNECT_ROUTING_ID: the id this ROUTER gives the peer of its next connect.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// let mut peer = ctx.socket(SocketType::Router)?;
    /// peer.set_routing_id(b"peer")?;
    /// peer.bind("inproc://doc-connect-rid")?;
    /// router.set_connect_routing_id(b"p1")?; // our name for the peer we connect to next
    /// router.connect("inproc://doc-connect-rid")?;
    /// router.send_multipart(["p1", "hello"], SendFlags::empty())?;
    /// assert_eq!(peer.recv_multipart(RecvFlags::empty())?[1], "hello");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_connect_routing_id(&mut self, id: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_CONNECT_ROUTING_ID, id)
    }
    /// ZMQ_ROUTER_MANDATORY.
    ///
    /// ```
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// router.set_router_mandatory(true)?; // an unknown peer is an error, not a silent drop
    /// let refused = router.send_multipart(["nobody", "x"], SendFlags::empty()).unwrap_err();
    /// assert_eq!(refused.error(), Error::HostUnreachable);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_router_mandatory(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_ROUTER_MANDATORY, i32::from(on))
    }
    /// ZMQ_ROUTER_HANDOVER.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut router = ctx.socket(ferromq::SocketType::Router)?;
    /// router.set_router_handover(true)?; // a new peer with a known id takes over
    /// assert_eq!(
    ///     ctx.socket(ferromq::SocketType::Dealer)?.set_router_handover(true),
    ///     Err(ferromq::Error::Invalid) // ROUTER only
    /// );
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_router_handover(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_ROUTER_HANDOVER, i32::from(on))
    }
    /// ZMQ_RECONNECT_IVL (ms). As in libzmq, -1 (and 0) mean no reconnect: once its
    /// connection is lost, or an attempt fails, a connected endpoint is given up.
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_reconnect_ivl(250)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_RECONNECT_IVL)?, Some(Duration::from_millis(250)));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_reconnect_ivl(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_RECONNECT_IVL, v)
    }
    /// ZMQ_RECONNECT_IVL_MAX (ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_reconnect_ivl_max(5_000)?; // back off up to 5 s
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_RECONNECT_IVL_MAX)?, Duration::from_secs(5));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_reconnect_ivl_max(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_RECONNECT_IVL_MAX, v)
    }
    /// ZMQ_HANDSHAKE_IVL (ms, 0 = none).
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Rep)?;
    /// s.set_handshake_ivl(2_000)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_HANDSHAKE_IVL)?, Duration::from_secs(2));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_handshake_ivl(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_HANDSHAKE_IVL, v)
    }
    /// ZMQ_HEARTBEAT_IVL (ms, 0 = none): each connection made afterwards sends a ZMTP PING
    /// this often.
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_heartbeat_ivl(1_000)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_HEARTBEAT_IVL)?, Duration::from_secs(1));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_heartbeat_ivl(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_HEARTBEAT_IVL, v)
    }
    /// ZMQ_HEARTBEAT_TTL (ms, sent in deciseconds): how long the peer may wait for traffic
    /// after our PING before it closes the connection.
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_heartbeat_ttl(3_000)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_HEARTBEAT_TTL)?, Duration::from_secs(3));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_heartbeat_ttl(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_HEARTBEAT_TTL, v)
    }
    /// ZMQ_HEARTBEAT_TIMEOUT (ms; the interval by default): how long after a PING we wait for
    /// any traffic before the connection is closed (and, when connecting, remade).
    ///
    /// ```
    /// use std::time::Duration;
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Dealer)?;
    /// s.set_heartbeat_timeout(1_500)?;
    /// assert_eq!(
    ///     s.get(ferromq::option::typed::ZMQ_HEARTBEAT_TIMEOUT)?,
    ///     Some(Duration::from_millis(1_500))
    /// );
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_heartbeat_timeout(&mut self, v: i32) -> Result<()> {
        self.set_int(option::ZMQ_HEARTBEAT_TIMEOUT, v)
    }
    /// ZMQ_IMMEDIATE.
    ///
    /// ```
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Push)?;
    /// s.set_immediate(true)?; // queue only to completed connections
    /// s.connect("ipc:///nonexistent/ferromq-doc.sock")?; // nobody can ever be there
    /// assert_eq!(s.send("x", SendFlags::DONTWAIT).unwrap_err().error(), Error::Again);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_immediate(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_IMMEDIATE, i32::from(on))
    }
    /// ZMQ_IPV6.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.set_ipv6(true)?;
    /// assert!(s.get(ferromq::option::typed::ZMQ_IPV6)?);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_ipv6(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_IPV6, i32::from(on))
    }
    /// ZMQ_MAXMSGSIZE (bytes, -1 = none).
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.set_maxmsgsize(1 << 20)?; // peers sending more are disconnected
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_MAXMSGSIZE)?, Some(1 << 20));
    /// s.set_maxmsgsize(-1)?;
    /// assert_eq!(s.get(ferromq::option::typed::ZMQ_MAXMSGSIZE)?, None);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_maxmsgsize(&mut self, v: i64) -> Result<()> {
        self.set_option_raw(option::ZMQ_MAXMSGSIZE, &v.to_ne_bytes())
    }
    /// ZMQ_SUBSCRIBE: a SUB receives messages starting with `topic` (counted: each call
    /// needs its own unsubscribe); an XPUB in XPUB_MANUAL subscribes its last peer. `EINVAL`
    /// on other types.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut publisher = ctx.socket(SocketType::Pub)?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// publisher.bind("inproc://doc-subscribe")?;
    /// sub.connect("inproc://doc-subscribe")?;
    /// sub.set_subscribe(b"weather.")?;
    /// // inproc subscriptions reach the PUB at connect/subscribe time.
    /// publisher.send("sports.score", SendFlags::empty())?;
    /// publisher.send("weather.rain", SendFlags::empty())?;
    /// assert_eq!(sub.recv(RecvFlags::empty())?.as_slice(), b"weather.rain");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_subscribe(&mut self, topic: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_SUBSCRIBE, topic)
    }
    /// ZMQ_UNSUBSCRIBE: drops one subscription made with [`Socket::set_subscribe`].
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut publisher = ctx.socket(SocketType::Pub)?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// publisher.bind("inproc://doc-unsubscribe")?;
    /// sub.connect("inproc://doc-unsubscribe")?;
    /// sub.set_subscribe(b"")?;
    /// sub.set_unsubscribe(b"")?;
    /// publisher.send("dropped", SendFlags::empty())?;
    /// assert_eq!(sub.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_unsubscribe(&mut self, topic: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_UNSUBSCRIBE, topic)
    }
    /// ZMQ_CONFLATE: each peer's pipes hold only the newest message, with no HWM (on DEALER,
    /// PULL, PUSH, PUB and SUB, as libzmq; other types ignore it). Set before bind/connect.
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut pull = ctx.socket(SocketType::Pull)?;
    /// let mut push = ctx.socket(SocketType::Push)?;
    /// pull.set_conflate(true)?;
    /// push.set_conflate(true)?;
    /// pull.bind("inproc://doc-conflate")?;
    /// push.connect("inproc://doc-conflate")?;
    /// for n in 0..5 {
    ///     push.send(format!("v{n}"), SendFlags::empty())?;
    /// }
    /// assert_eq!(pull.recv(RecvFlags::empty())?.as_slice(), b"v4"); // only the newest
    /// assert_eq!(pull.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_conflate(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_CONFLATE, i32::from(on))
    }
    /// ZMQ_XPUB_VERBOSE: an XPUB passes every subscription up, not only new ones.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut xpub = ctx.socket(SocketType::XPub)?;
    /// xpub.set_xpub_verbose(true)?;
    /// xpub.bind("inproc://doc-xpub-verbose")?;
    /// let mut subs = [ctx.socket(SocketType::Sub)?, ctx.socket(SocketType::Sub)?];
    /// for s in &mut subs {
    ///     s.connect("inproc://doc-xpub-verbose")?;
    ///     s.set_subscribe(b"t")?;
    /// }
    /// // Both subscriptions come up, not just the first.
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x01t");
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x01t");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_xpub_verbose(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_XPUB_VERBOSE, i32::from(on))
    }
    /// ZMQ_XPUB_VERBOSER: an XPUB passes every subscription and unsubscription up.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut xpub = ctx.socket(SocketType::XPub)?;
    /// xpub.set_xpub_verboser(true)?;
    /// xpub.bind("inproc://doc-xpub-verboser")?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// sub.connect("inproc://doc-xpub-verboser")?;
    /// sub.set_subscribe(b"t")?;
    /// sub.set_unsubscribe(b"t")?;
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x01t");
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x00t");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_xpub_verboser(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_XPUB_VERBOSER, i32::from(on))
    }
    /// ZMQ_XPUB_MANUAL: the application subscribes peers itself (ZMQ_SUBSCRIBE after a
    /// subscription message was received applies to the peer it came from).
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut xpub = ctx.socket(SocketType::XPub)?;
    /// xpub.set_xpub_manual(true)?;
    /// xpub.bind("inproc://doc-xpub-manual")?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// sub.connect("inproc://doc-xpub-manual")?;
    /// sub.set_subscribe(b"a")?;
    /// sub.set_subscribe(b"b")?;
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x01a");
    /// assert_eq!(xpub.recv(RecvFlags::empty())?.as_slice(), b"\x01b");
    /// xpub.set_subscribe(b"b")?; // we decide: this peer gets "b", not "a"
    /// xpub.send("a-topic", SendFlags::empty())?;
    /// xpub.send("b-topic", SendFlags::empty())?;
    /// assert_eq!(sub.recv(RecvFlags::empty())?.as_slice(), b"b-topic");
    /// assert_eq!(sub.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_xpub_manual(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_XPUB_MANUAL, i32::from(on))
    }
    /// ZMQ_XPUB_NODROP: PUB/XPUB sends wait (or fail with `EAGAIN`) at SNDHWM.
    ///
    /// ```
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut publisher = ctx.socket(SocketType::Pub)?;
    /// publisher.set_xpub_nodrop(true)?;
    /// publisher.set_sndhwm(1)?;
    /// publisher.bind("inproc://doc-nodrop")?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// sub.set_rcvhwm(1)?;
    /// sub.connect("inproc://doc-nodrop")?;
    /// sub.set_subscribe(b"")?;
    /// let mut refused = None;
    /// for _ in 0..10 {
    ///     if let Err(e) = publisher.send("x", SendFlags::DONTWAIT) {
    ///         refused = Some(e.error());
    ///         break;
    ///     }
    /// }
    /// assert_eq!(refused, Some(Error::Again)); // full: refused, not dropped
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_xpub_nodrop(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_XPUB_NODROP, i32::from(on))
    }
    /// ZMQ_XPUB_WELCOME_MSG: sent to each new subscriber (empty = none).
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut xpub = ctx.socket(SocketType::XPub)?;
    /// xpub.set_xpub_welcome_msg(b"welcome")?;
    /// xpub.bind("inproc://doc-welcome")?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// sub.set_subscribe(b"welcome")?;
    /// sub.connect("inproc://doc-welcome")?;
    /// assert_eq!(sub.recv(RecvFlags::empty())?.as_slice(), b"welcome");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_xpub_welcome_msg(&mut self, msg: &[u8]) -> Result<()> {
        self.set_option_raw(option::ZMQ_XPUB_WELCOME_MSG, msg)
    }
    /// ZMQ_INVERT_MATCHING: PUB/XPUB/SUB deliver what does not match.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut publisher = ctx.socket(SocketType::Pub)?;
    /// let mut sub = ctx.socket(SocketType::Sub)?;
    /// publisher.set_invert_matching(true)?;
    /// sub.set_invert_matching(true)?;
    /// publisher.bind("inproc://doc-invert")?;
    /// sub.connect("inproc://doc-invert")?;
    /// sub.set_subscribe(b"noise")?; // everything but "noise..."
    /// publisher.send("noise.1", SendFlags::empty())?;
    /// publisher.send("signal", SendFlags::empty())?;
    /// assert_eq!(sub.recv(RecvFlags::empty())?.as_slice(), b"signal");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_invert_matching(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_INVERT_MATCHING, i32::from(on))
    }
    /// ZMQ_REQ_RELAXED: a REQ may send a new request without waiting for the reply.
    ///
    /// ```
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut strict = ctx.socket(SocketType::Req)?;
    /// strict.connect("inproc://doc-relaxed")?;
    /// strict.send("1", SendFlags::empty())?;
    /// assert_eq!(strict.send("2", SendFlags::empty()).unwrap_err().error(), Error::Fsm);
    /// let mut relaxed = ctx.socket(SocketType::Req)?;
    /// relaxed.set_req_relaxed(true)?;
    /// relaxed.connect("inproc://doc-relaxed")?;
    /// relaxed.send("1", SendFlags::empty())?;
    /// relaxed.send("2", SendFlags::empty())?; // no reply needed first
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_req_relaxed(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_REQ_RELAXED, i32::from(on))
    }
    /// ZMQ_REQ_CORRELATE: a REQ tags requests with an id and accepts only matching replies.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// router.bind("inproc://doc-correlate")?;
    /// let mut req = ctx.socket(SocketType::Req)?;
    /// req.set_req_correlate(true)?;
    /// req.connect("inproc://doc-correlate")?;
    /// req.send("q", SendFlags::empty())?;
    /// let request = router.recv_multipart(RecvFlags::empty())?;
    /// // [peer id, request id (4 bytes), "", "q"]
    /// assert_eq!((request.len(), request[1].len(), &request[3][..]), (4, 4, &b"q"[..]));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn set_req_correlate(&mut self, on: bool) -> Result<()> {
        self.set_int(option::ZMQ_REQ_CORRELATE, i32::from(on))
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let linger = self.options.linger;
        for b in self.binds.drain(..) {
            if let Some(fd) = b.fd {
                self.monitor.emit_fd(EVENT_CLOSED, fd, &b.resolved);
            }
            match b.binding {
                Binding::Listener(l) => l.close(linger),
                Binding::Inproc(name) => {
                    let _ = self.ctx.inproc.unbind(&name, self.id);
                }
            }
        }
        for c in self.connects.drain(..) {
            if let Some(ctl) = c.ctl {
                ctl.close(linger);
            }
        }
        self.monitor.stop();
        self.ctx.unregister(self.id);
    }
}

/// A monitor's PAIR is where the connection tasks' events go (`crate::io::monitor` knows only
/// this trait, not sockets).
impl EventSink for Socket {
    fn offer(&mut self, [head, endpoint]: [Bytes; 2]) {
        if self
            .send(head, SendFlags::SNDMORE | SendFlags::DONTWAIT)
            .is_ok()
        {
            let _ = self.send(endpoint, SendFlags::DONTWAIT);
        }
    }
}

/// ZMQ_EVENTS of a held core.
fn events_of(core: &mut Core) -> Events {
    let mut ev = Events::empty();
    if core.pattern.has_in() {
        ev = ev | Events::POLLIN;
    }
    if core.pattern.has_out() {
        ev = ev | Events::POLLOUT;
    }
    ev
}

/// ZMQ_EVENTS as libzmq's do_getsockopt<int> writes it: at least sizeof (int), the rest
/// zero-filled.
fn put_events(ev: Events, out: &mut [u8]) -> Result<usize> {
    option::put(out, &i32::from(ev.bits()).to_ne_bytes())
}

/// One send on the locked pattern, answered with the pattern's tag alone unless the frame was
/// refused: a move of the whole answer reads it back with wide loads, which wait for the
/// pattern's narrower stores to complete (see `msg::settled`). Both send paths go through here.
#[inline(always)]
fn send_locked(
    owner: &mut Owner,
    send: impl FnOnce(&mut dyn pattern::Pattern) -> pattern::SendResult,
) -> pattern::SendResult {
    let mut core = owner.lock();
    let sent = send(core.pattern.as_mut());
    let ok = sent.is_ok();
    core.unlock();
    if ok {
        std::mem::forget(sent);
        return Ok(());
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Context;

    #[test]
    fn inproc_pair_round_trip_connect_before_bind() {
        let ctx = Context::new();
        let mut a = ctx.socket(SocketType::Pair).unwrap();
        let mut b = ctx.socket(SocketType::Pair).unwrap();
        a.connect("inproc://unit-pair").unwrap();
        a.send("early", SendFlags::empty()).unwrap();
        b.bind("inproc://unit-pair").unwrap();
        b.set_rcvtimeo(2000).unwrap();
        assert_eq!(b.recv(RecvFlags::empty()).unwrap().as_slice(), b"early");
        b.send_multipart(["x", "y"], SendFlags::empty()).unwrap();
        a.set_rcvtimeo(2000).unwrap();
        assert_eq!(a.recv_multipart(RecvFlags::empty()).unwrap().len(), 2);
    }

    #[test]
    fn nonblocking_recv_is_again_and_timeout_is_again() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Pull).unwrap();
        assert_eq!(s.recv(RecvFlags::DONTWAIT), Err(Error::Again));
        s.set_rcvtimeo(20).unwrap();
        assert_eq!(s.recv(RecvFlags::empty()), Err(Error::Again));
        let refused = s.send("x", SendFlags::empty()).unwrap_err();
        assert_eq!(refused.error(), Error::NotSup);
        assert_eq!(refused.into_message().as_slice(), b"x");
    }

    #[test]
    fn a_refused_send_hands_the_message_back() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Push).unwrap();
        // No peer: DONTWAIT refuses at once, SNDTIMEO after waiting; both give it back.
        let refused = s
            .send_multipart(["a", "b"], SendFlags::DONTWAIT)
            .unwrap_err();
        assert_eq!(refused.error(), Error::Again);
        assert_eq!(
            refused.into_message(),
            vec![Bytes::from("a"), Bytes::from("b")]
        );
        s.set_sndtimeo(10).unwrap();
        let refused = s.send(Bytes::from_static(b"late"), SendFlags::empty());
        assert_eq!(refused.unwrap_err().into_message().as_slice(), b"late");
    }

    #[test]
    fn shutdown_unblocks_with_eterm() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Pull).unwrap();
        let c2 = ctx.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c2.shutdown();
        });
        assert_eq!(s.recv(RecvFlags::empty()), Err(Error::Term));
        t.join().unwrap();
        drop(s);
        ctx.term();
    }

    #[test]
    fn raw_options_and_events() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Dealer).unwrap();
        let mut out = [0u8; 4];
        s.get_option_raw(option::ZMQ_TYPE, &mut out).unwrap();
        assert_eq!(i32::from_ne_bytes(out), 5);
        assert_eq!(s.set_router_mandatory(true), Err(Error::Invalid));
        assert_eq!(s.events(), Events::empty());
        s.bind("inproc://unit-ev").unwrap();
        let mut peer = ctx.socket(SocketType::Dealer).unwrap();
        peer.connect("inproc://unit-ev").unwrap();
        peer.send("m", SendFlags::empty()).unwrap();
        assert_eq!(s.events(), Events::POLLIN | Events::POLLOUT);
    }

    /// Only the first wait after a send is awake, and only on a thread allowed more than one
    /// CPU: a receiver that only receives sleeps at once, as before.
    #[test]
    fn only_the_first_wait_after_a_send_is_awake() {
        let several = cpus_allowed().is_some_and(|n| n > 1);
        let ctx = Context::new();
        let mut a = ctx.socket(SocketType::Pair).unwrap();
        let mut b = ctx.socket(SocketType::Pair).unwrap();
        a.bind("inproc://unit-reply-due").unwrap();
        b.connect("inproc://unit-reply-due").unwrap();
        assert!(!a.reply_due(), "nothing sent yet");
        a.send("ping", SendFlags::empty()).unwrap();
        assert_eq!(a.reply_due(), several);
        assert!(!a.reply_due(), "one wait awake per send");
        b.send_slice(b"pong", SendFlags::empty()).unwrap();
        assert_eq!(b.reply_due(), several, "send_slice counts as a send");
    }

    /// A large inproc frame makes every following wait awake until a small one comes; a large
    /// frame from an I/O thread (tcp, ipc) does not.
    #[test]
    fn waits_after_a_large_inproc_frame_are_awake() {
        let several = cpus_allowed().is_some_and(|n| n > 1);
        let ctx = Context::new();
        let mut a = ctx.socket(SocketType::Pair).unwrap();
        let mut b = ctx.socket(SocketType::Pair).unwrap();
        a.bind("inproc://unit-stream-spin").unwrap();
        b.connect("inproc://unit-stream-spin").unwrap();
        let large = vec![1u8; STREAM_SPIN_FROM];
        b.send_slice(&large, SendFlags::empty()).unwrap();
        a.recv(RecvFlags::empty()).unwrap();
        assert_eq!(a.reply_due(), several);
        assert_eq!(a.reply_due(), several, "every wait while the stream lasts");
        b.send_slice(&large[..STREAM_SPIN_FROM - 1], SendFlags::empty())
            .unwrap();
        a.recv(RecvFlags::empty()).unwrap();
        assert!(!a.reply_due(), "a smaller frame ends it");

        let mut c = ctx.socket(SocketType::Pair).unwrap();
        let mut d = ctx.socket(SocketType::Pair).unwrap();
        c.bind("tcp://127.0.0.1:*").unwrap();
        d.connect(&c.last_endpoint().unwrap()).unwrap();
        d.send_slice(&large, SendFlags::empty()).unwrap();
        c.recv(RecvFlags::empty()).unwrap();
        assert!(!c.reply_due(), "a frame over tcp comes from the I/O thread");
    }

    /// A stream of large inproc messages whose sender pauses now and then, longer than a wait
    /// awake: every message arrives, whether the receiver caught it awake (the notification
    /// only counted) or asleep (the eventfd written).
    #[test]
    fn a_large_inproc_stream_with_pauses_loses_nothing() {
        const MESSAGES: u32 = 3_000;
        let ctx = Context::new();
        let mut rx = ctx.socket(SocketType::Pull).unwrap();
        let mut tx = ctx.socket(SocketType::Push).unwrap();
        rx.bind("inproc://unit-stream-pauses").unwrap();
        tx.connect("inproc://unit-stream-pauses").unwrap();
        rx.set_rcvtimeo(10_000).unwrap();
        let sender = std::thread::spawn(move || {
            let mut body = vec![0u8; 64 * 1024];
            for i in 0..MESSAGES {
                body[..4].copy_from_slice(&i.to_le_bytes());
                tx.send_slice(&body, SendFlags::empty()).unwrap();
                if i % 300 == 0 {
                    std::thread::sleep(REPLY_SPIN * 50);
                }
            }
        });
        for i in 0..MESSAGES {
            let m = rx.recv(RecvFlags::empty()).unwrap();
            assert_eq!(m.as_slice()[..4], i.to_le_bytes());
        }
        sender.join().unwrap();
    }

    /// Request-reply between two threads: every answer arrives, whether it came while the
    /// requester waited awake (its notification counted, the eventfd left alone) or after
    /// that wait ran out and it slept (the eventfd written). A lost notification would leave
    /// a receive waiting for its timeout, and the test would fail on `EAGAIN`.
    #[test]
    fn answers_arrive_whether_the_requester_waits_awake_or_asleep() {
        const ROUND_TRIPS: u32 = 5_000;
        let ctx = Context::new();
        let mut req = ctx.socket(SocketType::Req).unwrap();
        let mut rep = ctx.socket(SocketType::Rep).unwrap();
        rep.bind("inproc://unit-reply-spin").unwrap();
        req.connect("inproc://unit-reply-spin").unwrap();
        req.set_rcvtimeo(10_000).unwrap();
        rep.set_rcvtimeo(10_000).unwrap();
        let server = std::thread::spawn(move || {
            for i in 0..ROUND_TRIPS {
                let m = rep.recv(RecvFlags::empty()).unwrap();
                if i % 500 == 0 {
                    // Longer than a wait awake: the requester is asleep when this comes.
                    std::thread::sleep(REPLY_SPIN * 50);
                }
                rep.send(m, SendFlags::empty()).unwrap();
            }
        });
        for i in 0..ROUND_TRIPS {
            req.send_slice(&i.to_le_bytes(), SendFlags::empty())
                .unwrap();
            let answer = req.recv(RecvFlags::empty()).unwrap();
            assert_eq!(answer.as_slice(), i.to_le_bytes());
        }
        server.join().unwrap();
    }
}
