//! The async API: a [`Socket`] driven from tokio by its readiness fd.
//!
//! No thread per socket: the socket's eventfd (its ZMQ_FD) is registered with the tokio
//! reactor, and an operation that would block awaits that fd. The eventfd only says "look
//! again" (edge-triggered, as libzmq's ZMQ_FD), so each wait clears tokio's readiness and
//! drains the eventfd *before* retrying: a wake-up arriving after that retry re-arms the
//! fd, and one that arrived before it is seen by the retry itself, so none is lost.
//!
//! # Cancel safety
//!
//! Every operation is written as a `poll_*` function whose only suspension point is that
//! readiness wait, and whatever it has taken from the socket is kept in the `AsyncSocket`,
//! not in the future. So dropping a future (a `select!` branch that lost, a timeout) loses
//! nothing: the parts of a message received so far wait for the next receive, and a
//! multipart send hands the socket either all of its parts or none of them. The pipes take
//! every part of a message once they took its first (libzmq's HWM counts whole messages),
//! so the parts after the first are handed over in the same poll, with no wait between.
//!
//! Tokio keeps one read waker per fd, and both directions of a socket wait on the same fd;
//! when the two are polled from different tasks (a `Stream` and a `Sink` split apart), the
//! later registration displaces the earlier. So each direction keeps its task's waker here,
//! and whichever task the fd wakes passes the wake-up on to the other, both when it finds the
//! fd ready and when its own operation completes (the event may have been the other's).
//!
//! # Cooperative scheduling
//!
//! A task looping on `recv().await` over a socket that always has a message waiting (or on
//! `send` into one that always has room) never waits, so without help it would never give its
//! worker back and the other tasks there would starve. So the operations spend tokio's task
//! budget (`tokio::task::coop`: 128 units each time a task is polled), as tokio's own sockets
//! and channels do, one unit every [`OPS_PER_UNIT`] (8) operations of a socket; once the
//! budget is spent the operation returns `Pending` before it touches the socket, and the task
//! is polled again after the others had a turn. An operation is one call: a part for `recv`
//! and `send`, a message for `recv_multipart`, `send_multipart`, the `Stream` and the `Sink`
//! (and the public `poll_recv*`, for futures built on them). A `DONTWAIT` call whose task has
//! spent its budget yields too, before it tries. A task that must not yield can opt out with `tokio::task::coop::unconstrained`.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

use bytes::Bytes;
use tokio::io::unix::AsyncFd;
use tokio::task::coop;

use crate::api::flags::{RecvFlags, SendFlags};
use crate::api::multipart::Multipart;
use crate::api::send_error::SendError;
use crate::api::socket::{SendResult, Socket};
use crate::error::{Error, Result};
use crate::msg::{Metadata, Msg};

/// Operations per unit of tokio's task budget. tokio's budget (128 units a poll) is sized for
/// its own resources, where a unit is a socket read or a channel receive; a message through a
/// ferromq pipe costs 50-100 ns, and spending a unit (a thread-local update) on each one, plus
/// a return to the scheduler every 128 messages, cost the spawned inproc pair 10-45% of its
/// throughput (docs/performance.md). So a unit is 8 operations of a socket, and a task looping
/// over a socket that never waits yields every 1,024. A unit every 32 operations (a yield
/// every 4,096) was tried: it saved wake-ups when the two workers shared a busy CPU, but on an
/// idle machine the spawned tcp pair was about 10% slower with it (session 15), and the longer
/// a loop holds its worker, the longer the other tasks there wait.
const OPS_PER_UNIT: u8 = 8;

/// Which operation waits: each keeps its own task's waker.
#[derive(Debug, Clone, Copy)]
enum Dir {
    Recv = 0,
    Send = 1,
}

/// A socket for async code on tokio. Create it inside a runtime with I/O enabled.
///
/// The operations spend tokio's task budget (`tokio::task::coop`), as tokio's own sockets
/// do, one unit every 8 operations: a task looping over a socket that always has a message
/// (or always has room) yields to the other tasks on its worker every 1,024 instead of starving
/// them; `tokio::task::coop::unconstrained` opts a task out.
///
/// Every future it returns is `Send`, so the socket can move into `tokio::spawn` on the
/// multi-thread runtime:
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> ferromq::Result<()> {
/// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut rep = AsyncSocket::new(ctx.socket(SocketType::Rep)?)?;
/// rep.get_mut().bind("inproc://doc-async")?;
/// let mut req = AsyncSocket::new(ctx.socket(SocketType::Req)?)?;
/// req.get_mut().connect("inproc://doc-async")?;
/// let server = tokio::spawn(async move {
///     let m = rep.recv().await?;
///     // A refused send carries the message back; `?` keeps just the error.
///     rep.send(m, SendFlags::empty()).await?;
///     Ok::<(), ferromq::Error>(())
/// });
/// req.send("ping", SendFlags::empty()).await?;
/// assert_eq!(req.recv().await?.as_slice(), b"ping");
/// server.await.expect("server task")?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct AsyncSocket {
    /// A duplicate of the socket's eventfd (same counter, same readiness), owned here so
    /// the registration can never outlive the descriptor it names.
    ready: AsyncFd<OwnedFd>,
    socket: Socket,
    /// The parts of a message received so far, kept here so a dropped receive loses none.
    inbound: Vec<Msg>,
    /// The frames of a message not yet wholly handed to the socket: the `Sink`'s buffered
    /// message, or the parts after the first that a pattern refused (none does today: the
    /// pipes take every part once they took the first); always finished before the next.
    outbound: VecDeque<Bytes>,
    /// The task waiting in each direction (see the module's last paragraph).
    wakers: [Option<Waker>; 2],
    /// Operations left before the next one takes a unit of tokio's budget (see
    /// [`OPS_PER_UNIT`]).
    credit: u8,
    /// The direction returned `Pending` on the fd and has not run since: its next poll
    /// consumes the wake-up (clears tokio's readiness, drains the eventfd) before it tries,
    /// as the blocking API drains right after its `ppoll`. Left for the next wait instead,
    /// the stale readiness sent that wait round once more (a drain, a retry that often
    /// found the pipe empty again), and the sender a second wake-up per park
    /// (docs/performance.md).
    parked: [bool; 2],
}

impl AsyncSocket {
    /// Wraps `socket`; must be called inside a tokio runtime with I/O enabled (`EINVAL`
    /// outside any runtime).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// let ctx = ferromq::Context::new();
    /// let sock = ferromq::AsyncSocket::new(ctx.socket(ferromq::SocketType::Pull)?)?;
    /// assert_eq!(sock.get_ref().socket_type(), ferromq::SocketType::Pull);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(socket: Socket) -> Result<AsyncSocket> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::Invalid);
        }
        let fd = socket.signaler().borrowed().try_clone_to_owned()?;
        // Deprecated because a bare `AsRawFd` may close under the reactor; an `OwnedFd`
        // held by the `AsyncFd` itself cannot, which is the I/O safety the new API wants.
        #[allow(deprecated)]
        let ready = AsyncFd::with_interest(fd, tokio::io::Interest::READABLE)?;
        Ok(AsyncSocket {
            ready,
            socket,
            inbound: Vec::new(),
            outbound: VecDeque::new(),
            wakers: [None, None],
            credit: 0,
            parked: [false; 2],
        })
    }

    /// The socket, for options, bind and connect.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// let ctx = ferromq::Context::new();
    /// let sock = ferromq::AsyncSocket::new(ctx.socket(ferromq::SocketType::Sub)?)?;
    /// assert_eq!(sock.get_ref().get(ferromq::option::typed::ZMQ_RCVHWM)?, 1000);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get_ref(&self) -> &Socket {
        &self.socket
    }

    /// The socket, mutably (bind, connect, options).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// let ctx = ferromq::Context::new();
    /// let mut sock = ferromq::AsyncSocket::new(ctx.socket(ferromq::SocketType::Rep)?)?;
    /// sock.get_mut().set_linger(0)?;
    /// sock.get_mut().bind("tcp://127.0.0.1:*")?;
    /// assert!(sock.get_ref().last_endpoint()?.starts_with("tcp://"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut Socket {
        &mut self.socket
    }

    /// Gives the socket back. Parts of a partly received message, and the rest of a message
    /// whose sending a dropped future or the `Sink` left unfinished, are dropped with it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use ferromq::{AsyncSocket, Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// a.get_mut().bind("inproc://doc-into-inner")?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// b.connect("inproc://doc-into-inner")?;
    /// b.send("x", SendFlags::empty())?;
    /// let mut blocking = a.into_inner(); // back to the blocking API
    /// assert_eq!(blocking.recv(RecvFlags::empty())?.as_slice(), b"x");
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_inner(self) -> Socket {
        let AsyncSocket { ready, socket, .. } = self;
        drop(ready);
        socket
    }

    /// Takes a unit of the task's budget if this operation starts a new one (`Some`, to be
    /// committed by [`AsyncSocket::spent`] if the operation completes); `Pending` once the
    /// budget is spent, with the task scheduled again behind the others.
    #[inline(always)]
    fn poll_budget(&mut self, cx: &mut Context<'_>) -> Poll<Option<coop::RestoreOnPending>> {
        if self.credit > 0 {
            return Poll::Ready(None);
        }
        coop::poll_proceed(cx).map(Some)
    }

    /// Counts a completed operation against the unit [`AsyncSocket::poll_budget`] took.
    #[inline(always)]
    fn spent(&mut self, unit: Option<coop::RestoreOnPending>) {
        match unit {
            Some(unit) => {
                unit.made_progress();
                self.credit = OPS_PER_UNIT - 1;
            }
            None => self.credit -= 1,
        }
    }

    /// Runs `op` under a unit of the task's budget, spent only if `op` completes.
    #[inline(always)]
    fn budgeted<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(&mut Self, &mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        let coop = ready!(self.poll_budget(cx));
        let done = op(self, cx);
        if done.is_ready() {
            self.spent(coop);
        }
        done
    }

    /// Wakes the task waiting in the other direction, if any: an operation that completes
    /// without polling the fd may have been woken by tokio for the other's event (see
    /// `poll_op`), and with no `Context` at hand it cannot tell its own waker apart.
    fn wake_other(&mut self, dir: Dir) {
        let other = match dir {
            Dir::Recv => Dir::Send,
            Dir::Send => Dir::Recv,
        };
        if let Some(w) = self.wakers[other as usize].take() {
            w.wake();
        }
    }

    /// Polls to hand one part to the socket, after what a cancelled call left in `outbound`;
    /// `slot` keeps the part until the socket takes it, so the caller decides what a cancel
    /// does with it. Counts against the task's budget once it completes (`DONTWAIT`: once
    /// it has tried).
    ///
    /// The first try comes before any of the waiting machinery, and this function and
    /// [`AsyncSocket::poll_recv_now`] are inlined into the futures `send` and `recv` return:
    /// most sends find room and most receives find a message, and an out-of-line call or a
    /// nested future per message cost 50-150 instructions more than the blocking API
    /// (callgrind, docs/performance.md).
    #[inline(always)]
    fn poll_send_part(
        &mut self,
        cx: &mut Context<'_>,
        slot: &mut Option<Bytes>,
        more: bool,
        dontwait: bool,
    ) -> Poll<Result<()>> {
        self.budgeted(cx, |this, cx| {
            if this.outbound.is_empty()
                && !this.parked[Dir::Send as usize]
                && let Some(frame) = slot.take()
            {
                match this.socket.try_send_frame(frame, more) {
                    Ok(()) => {
                        this.wake_other(Dir::Send);
                        return Poll::Ready(Ok(()));
                    }
                    Err((e, back)) => {
                        *slot = Some(back);
                        if e != Error::Again {
                            return Poll::Ready(Err(e));
                        }
                    }
                }
            }
            this.poll_send_wait(cx, slot, more, dontwait)
        })
    }

    /// The rest of [`AsyncSocket::poll_send_part`], out of line: finishes `outbound`, then
    /// waits for room for `slot` (under `DONTWAIT`, `EAGAIN` rather than waiting).
    fn poll_send_wait(
        &mut self,
        cx: &mut Context<'_>,
        slot: &mut Option<Bytes>,
        more: bool,
        dontwait: bool,
    ) -> Poll<Result<()>> {
        let sent = match self.poll_flush_outbound(cx) {
            Poll::Ready(Ok(())) => self.poll_send_frame(cx, slot, more),
            other => other,
        };
        match sent {
            Poll::Pending if dontwait => Poll::Ready(Err(Error::Again)),
            sent => sent,
        }
    }

    /// [`AsyncSocket::poll_recv`] with the first try inlined (see
    /// [`AsyncSocket::poll_send_part`]).
    #[inline(always)]
    fn poll_recv_now(&mut self, cx: &mut Context<'_>) -> Poll<Result<Msg>> {
        self.budgeted(cx, |this, cx| {
            if !this.inbound.is_empty() || this.parked[Dir::Recv as usize] {
                return this.poll_part(cx);
            }
            match this.socket.recv(RecvFlags::DONTWAIT) {
                Err(Error::Again) => this.poll_part(cx),
                done => {
                    this.wake_other(Dir::Recv);
                    Poll::Ready(done)
                }
            }
        })
    }

    /// Runs `op` until it stops saying `EAGAIN`, parking the task on the socket's fd between
    /// tries.
    fn poll_op<T>(
        &mut self,
        cx: &mut Context<'_>,
        dir: Dir,
        mut op: impl FnMut(&mut Socket) -> Result<T>,
    ) -> Poll<Result<T>> {
        if std::mem::take(&mut self.parked[dir as usize])
            && let Poll::Ready(Ok(mut guard)) = self.ready.poll_read_ready(cx)
        {
            // Woken by the fd (or by the other direction, which may have cleared it, hence
            // no `Pending` here: the try below runs either way).
            guard.clear_ready();
            self.socket.signaler().drain();
            for w in self.wakers.iter_mut().filter_map(Option::take) {
                if !w.will_wake(cx.waker()) {
                    w.wake();
                }
            }
        }
        loop {
            match op(&mut self.socket) {
                Err(Error::Again) => {}
                done => {
                    // Tokio may have woken this task for an event the other direction was
                    // waiting for (its registration displaced by ours): pass it on.
                    let other = match dir {
                        Dir::Recv => Dir::Send,
                        Dir::Send => Dir::Recv,
                    };
                    if let Some(w) = self.wakers[other as usize].take()
                        && !w.will_wake(cx.waker())
                    {
                        w.wake();
                    }
                    return Poll::Ready(done);
                }
            }
            match self.ready.poll_read_ready(cx) {
                Poll::Ready(Ok(mut guard)) => {
                    guard.clear_ready();
                    self.socket.signaler().drain();
                    // The fd fired: whoever waits in the other direction may proceed too.
                    for w in self.wakers.iter_mut().filter_map(Option::take) {
                        if !w.will_wake(cx.waker()) {
                            w.wake();
                        }
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                Poll::Pending => {
                    self.wakers[dir as usize] = Some(cx.waker().clone());
                    self.parked[dir as usize] = true;
                    return Poll::Pending;
                }
            }
        }
    }

    /// Polls to hand the frame in `slot` to the socket; the frame stays in `slot` until the
    /// socket takes it, so the caller decides what a cancel does with it.
    fn poll_send_frame(
        &mut self,
        cx: &mut Context<'_>,
        slot: &mut Option<Bytes>,
        more: bool,
    ) -> Poll<Result<()>> {
        self.poll_op(cx, Dir::Send, |s| {
            let Some(frame) = slot.take() else {
                return Ok(());
            };
            s.try_send_frame(frame, more).map_err(|(e, back)| {
                *slot = Some(back);
                e
            })
        })
    }

    /// Polls for one message part (the next part of a message whose receive was
    /// interrupted comes first). Counts against the task's budget when it is ready;
    /// `Pending`, the task scheduled again behind the others, when the budget is spent.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use std::future::poll_fn;
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// a.get_mut().bind("inproc://doc-poll-recv")?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// b.connect("inproc://doc-poll-recv")?;
    /// b.send("x", SendFlags::empty())?;
    /// // The building block of a hand-written future or a `Stream`.
    /// let part = poll_fn(|cx| a.poll_recv(cx)).await?;
    /// assert_eq!(part.as_slice(), b"x");
    /// # Ok(())
    /// # }
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Msg>> {
        self.budgeted(cx, Self::poll_part)
    }

    /// [`AsyncSocket::poll_recv`] without the budget.
    fn poll_part(&mut self, cx: &mut Context<'_>) -> Poll<Result<Msg>> {
        if !self.inbound.is_empty() {
            return Poll::Ready(Ok(self.inbound.remove(0)));
        }
        self.poll_op(cx, Dir::Recv, |s| s.recv(RecvFlags::DONTWAIT))
    }

    /// Polls for a whole message, counting against the task's budget as
    /// [`AsyncSocket::poll_recv`] does.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use std::future::poll_fn;
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// a.get_mut().bind("inproc://doc-poll-recv-mp")?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// b.connect("inproc://doc-poll-recv-mp")?;
    /// b.send_multipart(["k", "v"], SendFlags::empty())?;
    /// let msg = poll_fn(|cx| a.poll_recv_multipart(cx)).await?;
    /// assert_eq!(msg.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn poll_recv_multipart(&mut self, cx: &mut Context<'_>) -> Poll<Result<Multipart>> {
        self.budgeted(cx, Self::poll_parts)
    }

    /// [`AsyncSocket::poll_recv_multipart`] without the budget.
    fn poll_parts(&mut self, cx: &mut Context<'_>) -> Poll<Result<Multipart>> {
        loop {
            let part = match self.poll_op(cx, Dir::Recv, |s| s.recv(RecvFlags::DONTWAIT)) {
                Poll::Ready(Ok(part)) => part,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            let last = !part.more;
            self.inbound.push(part);
            if last {
                let mut msg = Multipart::new();
                for part in self.inbound.drain(..) {
                    msg.push_part(part);
                }
                return Poll::Ready(Ok(msg));
            }
        }
    }

    /// [`AsyncSocket::poll_flush_outbound`] for the `Sink`, counting against the task's
    /// budget when there was a message to hand over.
    pub(crate) fn poll_flush_queued(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if self.outbound.is_empty() {
            return Poll::Ready(Ok(()));
        }
        self.budgeted(cx, Self::poll_flush_outbound)
    }

    /// Hands the rest of `outbound` to the socket; ready once it is empty. An error before
    /// the first frame went in drops the message (it was refused whole); after, the parts
    /// the socket has are completed by the pattern's own rules (ETERM: nothing is sent).
    pub(crate) fn poll_flush_outbound(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        while let Some(frame) = self.outbound.pop_front() {
            let more = !self.outbound.is_empty();
            let mut slot = Some(frame);
            let sent = self.poll_send_frame(cx, &mut slot, more);
            match sent {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => {
                    self.outbound.clear();
                    return Poll::Ready(Err(e));
                }
                Poll::Pending => {
                    if let Some(frame) = slot {
                        self.outbound.push_front(frame);
                    }
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Parks a whole message for [`AsyncSocket::poll_flush_outbound`] (the `Sink`'s
    /// `start_send`); `EFSM` if the previous one was not handed over yet (`poll_ready` first).
    pub(crate) fn queue_outbound(&mut self, msg: Multipart) -> Result<()> {
        if !self.outbound.is_empty() {
            return Err(Error::Fsm);
        }
        self.outbound = msg.into_frames().into();
        Ok(())
    }

    /// Sends one message part (`SNDMORE`: others follow), waiting while the socket cannot
    /// take it (HWM reached, no peer yet); with `DONTWAIT` it tries once and a refused part
    /// comes back in the error, as from [`Socket::send`].
    ///
    /// Cancel safety: dropped before it completes, the part was not sent. Parts sent with
    /// `SNDMORE` before it stay in the socket, so a multipart message sent part by part can
    /// be left half sent by a cancel; use [`AsyncSocket::send_multipart`] where futures may
    /// be dropped.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut pull = AsyncSocket::new(ctx.socket(SocketType::Pull)?)?;
    /// pull.get_mut().bind("tcp://127.0.0.1:*")?;
    /// let mut push = AsyncSocket::new(ctx.socket(SocketType::Push)?)?;
    /// push.get_mut().connect(&pull.get_ref().last_endpoint()?)?;
    /// push.send("job", SendFlags::empty()).await?; // waits for the connection, not a thread
    /// assert_eq!(pull.recv().await?.as_slice(), b"job");
    /// # Ok(())
    /// # }
    /// ```
    pub fn send(
        &mut self,
        msg: impl Into<Msg>,
        flags: SendFlags,
    ) -> impl Future<Output = SendResult<Msg>> + Send + '_ {
        let Msg {
            data,
            more,
            metadata,
        } = msg.into();
        SendPart {
            socket: self,
            slot: Some(data),
            more: flags.contains(SendFlags::SNDMORE),
            dontwait: flags.contains(SendFlags::DONTWAIT),
            msg_more: more,
            metadata,
        }
    }

    /// Sends a copy of `data` as one message part, like [`Socket::send_slice`]; cancel safe
    /// as [`AsyncSocket::send`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// a.get_mut().bind("inproc://doc-async-slice")?;
    /// let mut b = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// b.get_mut().connect("inproc://doc-async-slice")?;
    /// let buf = vec![7u8; 64];
    /// b.send_slice(&buf, SendFlags::empty()).await?;
    /// assert_eq!(a.recv().await?.as_slice(), &buf[..]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn send_slice(
        &mut self,
        data: &[u8],
        flags: SendFlags,
    ) -> impl Future<Output = SendResult<Msg>> + Send + '_ {
        // Copied now, so the future does not borrow `data`.
        let body = self.socket.copy_to_send(data);
        SendPart {
            socket: self,
            slot: Some(body),
            more: flags.contains(SendFlags::SNDMORE),
            dontwait: flags.contains(SendFlags::DONTWAIT),
            msg_more: false,
            metadata: None,
        }
    }

    /// Receives one message part, waiting until one arrives.
    ///
    /// Cancel safety: cancel safe. A part is taken from the socket only in the poll that
    /// returns it, so a dropped future took nothing.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use std::time::Duration;
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair)?)?;
    /// a.get_mut().bind("inproc://doc-async-recv")?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// b.connect("inproc://doc-async-recv")?;
    /// // A receive dropped by a timeout takes nothing from the socket.
    /// assert!(tokio::time::timeout(Duration::from_millis(5), a.recv()).await.is_err());
    /// b.send("late", SendFlags::empty())?;
    /// assert_eq!(a.recv().await?.as_slice(), b"late");
    /// # Ok(())
    /// # }
    /// ```
    pub fn recv(&mut self) -> impl Future<Output = Result<Msg>> + Send + '_ {
        RecvPart { socket: self }
    }

    /// Sends every part of a message, waiting while the socket cannot take its first part
    /// (`DONTWAIT`: tries once). A message refused whole comes back whole in the error.
    ///
    /// Cancel safety: all or nothing. Dropped while it waits, no part was sent; once the
    /// socket has taken the first part it takes the others in the same poll, so the message
    /// is never left half sent in the pipe.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = AsyncSocket::new(ctx.socket(SocketType::Router)?)?;
    /// router.get_mut().bind("inproc://doc-async-mp")?;
    /// let mut dealer = AsyncSocket::new(ctx.socket(SocketType::Dealer)?)?;
    /// dealer.get_mut().set_routing_id(b"d")?;
    /// dealer.get_mut().connect("inproc://doc-async-mp")?;
    /// dealer.send_multipart(["", "request"], SendFlags::empty()).await?;
    /// let msg = router.recv_multipart().await?;
    /// router.send_multipart([msg[0].clone(), "".into(), "reply".into()], SendFlags::empty()).await?;
    /// assert_eq!(dealer.recv_multipart().await?[1], "reply");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_multipart(
        &mut self,
        parts: impl IntoIterator<Item = impl Into<Bytes>>,
        flags: SendFlags,
    ) -> SendResult<Multipart> {
        let mut frames: VecDeque<Bytes> = parts.into_iter().map(Into::into).collect();
        let Some(first) = frames.pop_front() else {
            return Ok(());
        };
        let more = !frames.is_empty();
        let dontwait = flags.contains(SendFlags::DONTWAIT);
        let mut slot = Some(first);
        if let Err(e) = poll_fn(|cx| self.poll_send_part(cx, &mut slot, more, dontwait)).await {
            frames.push_front(slot.take().unwrap_or_default());
            return Err(SendError::new(e, frames.into_iter().collect()));
        }
        self.outbound = frames;
        // Only ETERM fails here, with no part left to hand back.
        self.finish_outbound()
            .await
            .map_err(|e| SendError::new(e, Multipart::new()))
    }

    /// Completes a message an earlier cancelled call or the `Sink` left in `outbound`.
    async fn finish_outbound(&mut self) -> Result<()> {
        poll_fn(|cx| self.poll_flush_outbound(cx)).await
    }

    /// Receives every part of a message.
    ///
    /// Cancel safety: cancel safe. Parts taken before the future was dropped wait in the
    /// `AsyncSocket` and begin the message the next receive returns.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// use ferromq::{AsyncSocket, Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut sub = AsyncSocket::new(ctx.socket(SocketType::Sub)?)?;
    /// sub.get_mut().set_subscribe(b"")?;
    /// sub.get_mut().connect("inproc://doc-async-recv-mp")?;
    /// let mut publisher = AsyncSocket::new(ctx.socket(SocketType::Pub)?)?;
    /// publisher.get_mut().bind("inproc://doc-async-recv-mp")?;
    /// publisher.send_multipart(["topic", "data"], SendFlags::empty()).await?;
    /// assert_eq!(sub.recv_multipart().await?, vec!["topic".into(), "data".into()]);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn recv_multipart(&mut self) -> Result<Multipart> {
        poll_fn(|cx| self.poll_recv_multipart(cx)).await
    }
}

/// The future of [`AsyncSocket::send`] and [`AsyncSocket::send_slice`]: a struct rather
/// than an `async fn` or `poll_fn`, so that its `poll` can be forced inline into the caller's
/// loop (neither was, once the budget made the body larger; docs/performance.md).
struct SendPart<'a> {
    socket: &'a mut AsyncSocket,
    /// The part, until the socket takes it (dropped with the future on a cancel).
    slot: Option<Bytes>,
    more: bool,
    dontwait: bool,
    /// What a refused part goes back with.
    msg_more: bool,
    metadata: Option<Arc<Metadata>>,
}

impl Future for SendPart<'_> {
    type Output = SendResult<Msg>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<SendResult<Msg>> {
        let this = self.get_mut();
        ready!(this
            .socket
            .poll_send_part(cx, &mut this.slot, this.more, this.dontwait))
        .map_err(|e| {
            let msg = Msg {
                data: this.slot.take().unwrap_or_default(),
                more: this.msg_more,
                metadata: this.metadata.take(),
            };
            SendError::new(e, msg)
        })?;
        Poll::Ready(Ok(()))
    }
}

/// The future of [`AsyncSocket::recv`], a struct for the reason [`SendPart`] is.
struct RecvPart<'a> {
    socket: &'a mut AsyncSocket,
}

impl Future for RecvPart<'_> {
    type Output = Result<Msg>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Msg>> {
        self.get_mut().socket.poll_recv_now(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, SocketType};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Two connected PAIRs over inproc; call inside a runtime.
    fn pair(ctx: &Context, endpoint: &str) -> (AsyncSocket, AsyncSocket) {
        let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
        let mut b = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
        a.get_mut().bind(endpoint).unwrap();
        b.get_mut().connect(endpoint).unwrap();
        (a, b)
    }

    #[test]
    fn outside_a_runtime_is_einval() {
        let ctx = Context::new();
        let s = ctx.socket(SocketType::Pair).unwrap();
        assert_eq!(AsyncSocket::new(s).err(), Some(Error::Invalid));
    }

    /// Polls `f` once with a waker that does nothing.
    fn poll_once<F: std::future::Future>(f: F) -> Poll<F::Output> {
        let mut f = std::pin::pin!(f);
        f.as_mut()
            .poll(&mut std::task::Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_send_or_receive_that_can_complete_does_so_in_its_first_poll() {
        let rt = runtime();
        let _in = rt.enter();
        let ctx = Context::new();
        let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
        let mut b = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
        a.get_mut().bind("inproc://unit-async-first-poll").unwrap();
        b.get_mut()
            .connect("inproc://unit-async-first-poll")
            .unwrap();
        assert!(poll_once(a.recv()).is_pending());
        assert!(matches!(
            poll_once(b.send("x", SendFlags::empty())),
            Poll::Ready(Ok(()))
        ));
        assert!(matches!(
            poll_once(b.send_slice(b"y", SendFlags::empty())),
            Poll::Ready(Ok(()))
        ));
        for want in [&b"x"[..], b"y"] {
            match poll_once(a.recv()) {
                Poll::Ready(Ok(m)) => assert_eq!(m.as_slice(), want),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_first_try_never_overtakes_a_message_left_unfinished() {
        let rt = runtime();
        rt.block_on(async {
            let ctx = Context::new();
            let (mut a, mut b) = pair(&ctx, "inproc://unit-async-order");
            // What the Sink's start_send leaves for a later flush.
            b.queue_outbound(Multipart::from(["m1", "m2"])).unwrap();
            b.send("after", SendFlags::empty()).await.unwrap();
            assert_eq!(
                a.recv_multipart().await.unwrap(),
                vec![Bytes::from("m1"), Bytes::from("m2")]
            );
            assert_eq!(a.recv().await.unwrap().as_slice(), b"after");
            // A part received before a cancel comes before the socket's next one.
            b.send_multipart(["p1", "p2"], SendFlags::empty())
                .await
                .unwrap();
            b.send("next", SendFlags::empty()).await.unwrap();
            assert_eq!(a.recv().await.unwrap().as_slice(), b"p1");
            a.inbound.push(a.socket.recv(RecvFlags::DONTWAIT).unwrap());
            assert_eq!(a.recv().await.unwrap().as_slice(), b"p2");
            assert_eq!(a.recv().await.unwrap().as_slice(), b"next");
        });
    }

    /// A receive that waited and was woken consumes the wake-up before it completes, as the
    /// blocking API drains after its `ppoll`: left set, it sent the next empty receive round
    /// the fd once more, and cost the sender a second wake-up per wait (the spawned pair
    /// went from one eventfd write per park to two; docs/performance.md).
    #[test]
    fn a_receive_woken_by_the_fd_leaves_it_drained() {
        let rt = runtime();
        rt.block_on(async {
            let ctx = Context::new();
            let (mut a, mut b) = pair(&ctx, "inproc://unit-async-drained");
            // `a` waits in `recv` first; `b` sends once it has.
            async fn woken(a: &mut AsyncSocket, b: &mut AsyncSocket, text: &'static str) {
                let recv = async { a.recv().await.unwrap() };
                let send = async {
                    tokio::task::yield_now().await;
                    b.send(text, SendFlags::empty()).await.unwrap();
                };
                let (got, ()) = tokio::join!(recv, send);
                assert_eq!(got.as_slice(), text.as_bytes());
            }
            woken(&mut a, &mut b, "x").await;
            let now = std::time::Instant::now();
            assert!(!a.socket.signaler().wait(Some(now)).unwrap());
            // The wait after it still sees the next message.
            woken(&mut a, &mut b, "y").await;
        });
    }

    #[test]
    fn inproc_round_trip_waits_without_a_thread() {
        let rt = runtime();
        rt.block_on(async {
            let ctx = Context::new();
            let (mut a, mut b) = pair(&ctx, "inproc://unit-async");
            // The receiver waits first; the sender runs on the same (only) thread.
            let recv = async { a.recv_multipart().await.unwrap() };
            let send = async {
                tokio::task::yield_now().await;
                b.send_multipart(["x", "y"], SendFlags::empty())
                    .await
                    .unwrap();
            };
            let (got, ()) = tokio::join!(recv, send);
            assert_eq!(got, vec![Bytes::from("x"), Bytes::from("y")]);
        });
    }
}
