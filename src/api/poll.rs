//! `poll` over sockets and raw file descriptors together, as `zmq_poll` does.
//!
//! A socket is ready when its ZMQ_EVENTS say so; its ZMQ_FD (the eventfd every wake-up
//! lands on) only tells us *when to look again*, which is libzmq's edge-triggered meaning.
//! So each round asks the sockets first, then waits on all fds in one `poll(2)`: the sockets'
//! eventfds for input, the raw fds for what the caller asked. A look clears a socket's fd
//! only if it was written since it was last cleared (a read(2) per look was the larger part
//! of a poll loop's cost when its sockets had input: issue 18); a fd that woke the poll is
//! cleared whatever. A raw fd reports what the kernel says (anything beyond in/out/pri, such
//! as HUP or NVAL, becomes `POLLERR`), as libzmq.
//! A set of exclusively held sockets alone, one of which has sent since it last waited, first
//! waits awake for an answer, as a blocking receive does ([`Awake`]).

use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::api::flags::{POLLERR, POLLIN, POLLOUT, POLLPRI};
use crate::api::socket::{Socket, REPLY_SPIN};
use crate::error::{Error, Result};
use crate::io::lend::{Borrowed, BorrowedRead};
use crate::io::signaler::Watch;
use crate::io::spin_backoff::spin_until;

#[derive(Debug)]
enum Target<'a> {
    /// Shared: its events are read as a locker (two locked instructions per pass).
    Socket(&'a Socket),
    /// Exclusive: read as the socket's owner, with no locked instruction.
    SocketMut(&'a mut Socket),
    Fd(BorrowedFd<'a>),
}

/// One entry of a [`poll`] set: a socket or a file descriptor.
///
/// ```
/// use ferromq::{poll, Context, PollItem, SendFlags, SocketType, POLLIN};
/// let ctx = Context::new();
/// let (mut a, mut b) = (ctx.socket(SocketType::Pair)?, ctx.socket(SocketType::Pair)?);
/// let mut idle = ctx.socket(SocketType::Pull)?;
/// a.bind("inproc://doc-pollitem")?;
/// b.connect("inproc://doc-pollitem")?;
/// b.send("x", SendFlags::empty())?;
/// let mut items = [PollItem::socket(&a, POLLIN), PollItem::socket(&idle, POLLIN)];
/// assert_eq!(poll(&mut items, 1000)?, 1);
/// assert!(items[0].is_readable() && !items[1].is_readable());
/// # let _ = &mut idle;
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug)]
pub struct PollItem<'a> {
    target: Target<'a>,
    events: i16,
    revents: i16,
}

impl<'a> PollItem<'a> {
    /// Polls `socket` for `events` (`POLLIN` | `POLLOUT`).
    ///
    /// ```
    /// use ferromq::{poll, Context, PollItem, SocketType, POLLOUT};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-pollitem-socket")?;
    /// b.connect("inproc://doc-pollitem-socket")?;
    /// let mut items = [PollItem::socket(&b, POLLOUT)];
    /// assert_eq!(poll(&mut items, 0)?, 1); // connected: room to send
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn socket(socket: &'a Socket, events: i16) -> PollItem<'a> {
        PollItem {
            target: Target::Socket(socket),
            events,
            revents: 0,
        }
    }

    /// Polls `socket` for `events`, as [`PollItem::socket`] does, holding it exclusively: each
    /// pass reads its events as one of the socket's own calls ([`Socket::events`]), with no
    /// locked instruction where a shared item pays two. The item gives the socket back when
    /// the set goes, so a poll loop rebuilds its set each time round (the set is a few words;
    /// `zmq_poll` rebuilds its own on every call too).
    ///
    /// ```
    /// use ferromq::{poll, Context, PollItem, RecvFlags, SendFlags, SocketType, POLLIN};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-pollitem-socket-mut")?;
    /// b.connect("inproc://doc-pollitem-socket-mut")?;
    /// b.send("x", SendFlags::empty())?;
    /// let mut items = [PollItem::socket_mut(&mut a, POLLIN)];
    /// assert_eq!(poll(&mut items, 1000)?, 1);
    /// assert!(items[0].is_readable());
    /// assert_eq!(a.recv(RecvFlags::empty())?.as_slice(), b"x"); // the items gave `a` back
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn socket_mut(socket: &'a mut Socket, events: i16) -> PollItem<'a> {
        PollItem {
            target: Target::SocketMut(socket),
            events,
            revents: 0,
        }
    }

    /// Polls a file descriptor for `events` (`POLLIN` | `POLLOUT` | `POLLPRI`; `POLLERR` is
    /// always reported). A C caller's raw fd becomes one with `BorrowedFd::borrow_raw` at the
    /// boundary, where its lifetime is the caller's promise.
    ///
    /// ```
    /// use std::io::Write;
    /// use std::os::fd::AsFd;
    /// use ferromq::{poll, PollItem, POLLIN};
    /// let (mut w, r) = std::os::unix::net::UnixStream::pair().map_err(ferromq::Error::from)?;
    /// w.write_all(b"!").map_err(ferromq::Error::from)?;
    /// let mut items = [PollItem::fd(r.as_fd(), POLLIN)];
    /// assert_eq!(poll(&mut items, 1000)?, 1);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn fd(fd: BorrowedFd<'a>, events: i16) -> PollItem<'a> {
        PollItem {
            target: Target::Fd(fd),
            events,
            revents: 0,
        }
    }

    /// What was ready at the last `poll`.
    ///
    /// ```
    /// use ferromq::{poll, Context, PollItem, SocketType, POLLIN, POLLOUT};
    /// let ctx = Context::new();
    /// let mut a = ctx.socket(SocketType::Pair)?;
    /// let mut b = ctx.socket(SocketType::Pair)?;
    /// a.bind("inproc://doc-revents")?;
    /// b.connect("inproc://doc-revents")?;
    /// let mut items = [PollItem::socket(&b, POLLIN | POLLOUT)];
    /// poll(&mut items, 0)?;
    /// assert_eq!(items[0].revents(), POLLOUT); // nothing to read yet
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn revents(&self) -> i16 {
        self.revents
    }

    /// Whether `POLLIN` was ready.
    ///
    /// ```
    /// use ferromq::{poll, Context, PollItem, SocketType, POLLIN};
    /// let ctx = Context::new();
    /// let s = ctx.socket(SocketType::Pull)?;
    /// let mut items = [PollItem::socket(&s, POLLIN)];
    /// assert_eq!(poll(&mut items, 0)?, 0);
    /// assert!(!items[0].is_readable());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn is_readable(&self) -> bool {
        self.revents & POLLIN != 0
    }

    /// Whether `POLLOUT` was ready.
    ///
    /// ```
    /// use ferromq::{poll, Context, PollItem, SocketType, POLLOUT};
    /// let ctx = Context::new();
    /// let s = ctx.socket(SocketType::Pub)?; // a PUB can always send (it drops without peers)
    /// let mut items = [PollItem::socket(&s, POLLOUT)];
    /// poll(&mut items, 0)?;
    /// assert!(items[0].is_writable());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn is_writable(&self) -> bool {
        self.revents & POLLOUT != 0
    }

    /// Whether the fd reported an error or hang-up.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// use ferromq::{poll, PollItem, POLLIN};
    /// let (w, r) = std::os::unix::net::UnixStream::pair().map_err(ferromq::Error::from)?;
    /// drop(w); // the peer hangs up: POLLHUP, which zmq_poll reports as POLLERR
    /// let mut items = [PollItem::fd(r.as_fd(), POLLIN)];
    /// poll(&mut items, 1000)?;
    /// assert!(items[0].is_error());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn is_error(&self) -> bool {
        self.revents & POLLERR != 0
    }

    /// The socket polled, shared or held; `None` for a raw fd.
    fn polled_socket(&self) -> Option<&Socket> {
        match self.target {
            Target::Socket(s) => Some(s),
            Target::SocketMut(ref s) => Some(s),
            Target::Fd(_) => None,
        }
    }

    fn poll_fd(&self) -> PollFd<'_> {
        match self.target {
            Target::Socket(s) => PollFd::from_borrowed_fd(s.signaler().borrowed(), PollFlags::IN),
            Target::SocketMut(ref s) => {
                PollFd::from_borrowed_fd(s.signaler().borrowed(), PollFlags::IN)
            }
            Target::Fd(fd) => {
                let mut flags = PollFlags::empty();
                if self.events & POLLIN != 0 {
                    flags |= PollFlags::IN;
                }
                if self.events & POLLOUT != 0 {
                    flags |= PollFlags::OUT;
                }
                if self.events & POLLPRI != 0 {
                    flags |= PollFlags::PRI;
                }
                PollFd::from_borrowed_fd(fd, flags)
            }
        }
    }
}

/// An fd's kernel readiness in `zmq_poll` terms.
fn fd_revents(got: PollFlags) -> i16 {
    let mut r = 0;
    if got.contains(PollFlags::IN) {
        r |= POLLIN;
    }
    if got.contains(PollFlags::OUT) {
        r |= POLLOUT;
    }
    if got.contains(PollFlags::PRI) {
        r |= POLLPRI;
    }
    if got.intersects(!(PollFlags::IN | PollFlags::OUT | PollFlags::PRI)) {
        r |= POLLERR;
    }
    r
}

fn timespec(d: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

/// One `poll(2)` over every item's fd; `None` waits forever. A signal ends it with
/// `EINTR`, as `zmq_poll` returns it.
fn wait(items: &[PollItem<'_>], timeout: Option<Duration>) -> Result<Vec<PollFlags>> {
    wait_with(items, None, timeout).map(|(kernel, _)| kernel)
}

/// [`wait`], also on a borrowed connection's stream (`io/lend.rs`): returns the items'
/// readiness and the stream's.
fn wait_with(
    items: &[PollItem<'_>],
    stream: Option<PollFd<'_>>,
    timeout: Option<Duration>,
) -> Result<(Vec<PollFlags>, PollFlags)> {
    let mut fds: Vec<PollFd<'_>> = items.iter().map(PollItem::poll_fd).collect();
    let borrowed = stream.is_some();
    fds.extend(stream);
    let ts = timeout.map(timespec);
    if let Err(e) = rustix::event::poll(&mut fds, ts.as_ref()) {
        return Err(Error::from_errno(e.raw_os_error()));
    }
    let stream = if borrowed {
        fds.pop().map_or(PollFlags::empty(), |fd| fd.revents())
    } else {
        PollFlags::empty()
    };
    Ok((fds.iter().map(PollFd::revents).collect(), stream))
}

/// The first socket held exclusively (`PollItem::socket_mut`, as `zmq_poll` holds each C
/// socket) that polls for input and waits for an answer: a poll borrows its lone connection,
/// as a blocking receive does (`io/lend.rs`), and then waits on its stream too and reads it
/// itself, rather than waiting for the I/O thread to read it and wake the socket. Asked once
/// per poll, at its first wait, before `Awake::start` clears what it reads.
fn answer_awaited(items: &[PollItem<'_>]) -> Option<usize> {
    items.iter().position(|item| match &item.target {
        Target::SocketMut(s) => item.events & POLLIN != 0 && s.awaits_answer(),
        _ => false,
    })
}

/// Borrows the lone connection of item `i`'s socket (see [`answer_awaited`]).
fn borrow_for(items: &[PollItem<'_>], i: usize) -> Option<(usize, Borrowed)> {
    match &items.get(i)?.target {
        Target::SocketMut(s) => s.borrow_lone().map(|b| (i, b)),
        _ => None,
    }
}

/// Waits until one of `items` is ready or `timeout_ms` passes (-1 = forever, 0 = check
/// once); returns how many items are ready. `ETERM` once a polled socket's context is
/// terminated; `EINTR` when a signal arrives while waiting. An empty set sleeps out the timeout (`EINVAL`
/// with -1, which would never return).
///
/// ```
/// use std::time::{Duration, Instant};
/// use ferromq::{poll, Context, PollItem, SocketType, POLLIN};
/// let ctx = Context::new();
/// let s = ctx.socket(SocketType::Pull)?;
/// let start = Instant::now();
/// let mut items = [PollItem::socket(&s, POLLIN)];
/// assert_eq!(poll(&mut items, 20)?, 0); // timed out, nothing ready
/// assert!(start.elapsed() >= Duration::from_millis(20));
/// # Ok::<(), ferromq::Error>(())
/// ```
pub fn poll(items: &mut [PollItem<'_>], timeout_ms: i64) -> Result<usize> {
    let until = u64::try_from(timeout_ms)
        .ok()
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    if items.is_empty() {
        let Some(d) = until else {
            return Err(Error::Invalid);
        };
        std::thread::sleep(d.saturating_duration_since(Instant::now()));
        return Ok(0);
    }
    // The first round looks without waiting so raw fds are checked even at timeout 0; a set
    // of sockets alone needs no syscall for it (their events are read from their state).
    let has_fds = items
        .iter()
        .any(|item| matches!(item.target, Target::Fd(_)));
    let mut kernel = if has_fds {
        wait(items, Some(Duration::ZERO))?
    } else {
        vec![PollFlags::empty(); items.len()]
    };
    let mut may_wait_awake = !has_fds;
    let mut awake: Option<Awake> = None;
    // The item whose answer this poll waits for, as of its first wait (`answer_awaited`),
    // and the connection borrowed for it, given back when the poll returns.
    let mut answer: Option<Option<usize>> = None;
    let mut borrowed: Option<(usize, Borrowed)> = None;
    loop {
        let mut ready = 0;
        for (item, got) in items.iter_mut().zip(&kernel) {
            item.revents = match item.target {
                // A context being terminated ends the poll, as libzmq's does (its
                // ZMQ_EVENTS fails with ETERM), so a proxy or poll loop in another
                // thread lets `zmq_ctx_term` finish.
                Target::Socket(s) if s.is_terminated() => return Err(Error::Term),
                Target::Socket(s) => s.current_events().bits() & item.events,
                Target::SocketMut(ref s) if s.is_terminated() => return Err(Error::Term),
                Target::SocketMut(ref mut s) => s.events().bits() & item.events,
                Target::Fd(_) => fd_revents(*got),
            };
            if item.revents != 0 {
                ready += 1;
            }
        }
        if ready > 0 {
            if let Some(a) = awake.take() {
                a.outcome(items, true);
            }
            return Ok(ready);
        }
        let left = match until {
            Some(d) => {
                let now = Instant::now();
                if d <= now {
                    return Ok(0);
                }
                Some(d - now)
            }
            None => None,
        };
        let answer = *answer.get_or_insert_with(|| answer_awaited(items));
        if let Some(a) = &mut awake {
            if !a.wait() {
                // Not answered in time: one more look, then the kernel's wait.
                if let Some(a) = awake.take() {
                    a.outcome(items, false);
                }
            }
            continue;
        }
        if std::mem::take(&mut may_wait_awake) {
            awake = Awake::start(items, until);
            if awake.is_some() {
                continue;
            }
        }
        if borrowed.is_none()
            && let Some(i) = answer
        {
            borrowed = borrow_for(items, i);
        }
        let stream = borrowed.as_ref().map(|(_, b)| b.poll_fd());
        let (woken, ready) = wait_with(items, stream, left)?;
        kernel = woken;
        if !ready.is_empty()
            && let Some((i, connection)) = &borrowed
            && let Some(PollItem {
                target: Target::SocketMut(s),
                ..
            }) = items.get_mut(*i)
            && s.run_borrowed(connection, ready) == BorrowedRead::Taken
        {
            borrowed = None;
        }
        // A socket whose fd woke us has it cleared here whatever the count of writes says
        // (see `Signaler::drain_if_written`: a write counted late would otherwise leave it
        // readable, and the next `poll(2)` would return at once again).
        for (item, got) in items.iter().zip(&kernel) {
            if let Some(s) = item.polled_socket().filter(|_| got.contains(PollFlags::IN)) {
                s.signaler().drain();
            }
        }
    }
}

/// A poll of sockets alone, all held exclusively (`PollItem::socket_mut`), that waits awake
/// for an answer before its `poll(2)`, as a blocking receive does (`REPLY_SPIN`,
/// `api/socket.rs`): when one of them has sent since it last waited, every socket's signaler
/// is watched for up to that long. A set with raw fds never does (their readiness needs a
/// system call to see), nor one with a shared socket (see `Awake::start`).
struct Awake {
    /// Each item's watch and the count read before the last look.
    watches: Vec<(Watch, u32)>,
    until: Instant,
    /// The item whose send made this wait, which keeps the backoff.
    due: usize,
}

impl Awake {
    fn start(items: &mut [PollItem<'_>], deadline: Option<Instant>) -> Option<Awake> {
        // Only sockets held exclusively: a watch keeps notifications off the socket's fd, and
        // a shared socket may be polled by another thread asleep on that fd meanwhile.
        if !items
            .iter()
            .all(|item| matches!(item.target, Target::SocketMut(_)))
        {
            return None;
        }
        let due = items.iter_mut().position(|item| match &mut item.target {
            Target::SocketMut(s) => s.reply_due(),
            _ => false,
        })?;
        let until = Instant::now() + REPLY_SPIN;
        let watches = items
            .iter()
            .filter_map(|item| match &item.target {
                Target::SocketMut(s) => Some(Watch::start(s.signal())),
                _ => None,
            })
            .collect();
        Some(Awake {
            watches,
            until: deadline.map_or(until, |d| d.min(until)),
            due,
        })
    }

    /// Spins until a watched count moves (true: look again, with the counts read now) or
    /// the wait runs out (false).
    fn wait(&mut self) -> bool {
        let moved = spin_until(self.until, || {
            self.watches
                .iter()
                .any(|(watch, seen)| watch.seen() != *seen)
        });
        if moved {
            for (watch, seen) in &mut self.watches {
                *seen = watch.seen();
            }
        }
        moved
    }

    /// Ends the watches and tells the socket that made the wait how it went.
    fn outcome(self, items: &mut [PollItem<'_>], answered: bool) {
        if let Some(PollItem {
            target: Target::SocketMut(s),
            ..
        }) = items.get_mut(self.due)
        {
            s.reply_outcome(answered);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, RecvFlags, SendFlags, SocketType};
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn fd_flags_map_like_zmq_poll() {
        assert_eq!(fd_revents(PollFlags::IN), POLLIN);
        assert_eq!(fd_revents(PollFlags::OUT | PollFlags::IN), POLLIN | POLLOUT);
        assert_eq!(fd_revents(PollFlags::HUP), POLLERR);
        assert_eq!(
            fd_revents(PollFlags::PRI | PollFlags::ERR),
            POLLPRI | POLLERR
        );
        assert_eq!(fd_revents(PollFlags::empty()), 0);
    }

    /// Polls that find input at their first look, then polls that must wait: a wait lasts
    /// out its timeout (a fd left readable would end it early or spin it) and still wakes for
    /// a message that comes while it sleeps, shared item or exclusive.
    #[test]
    fn a_stale_fd_neither_ends_a_wait_early_nor_hides_a_wake_up() {
        let ctx = Context::new();
        let mut a = ctx.socket(SocketType::Pair).unwrap();
        let mut b = ctx.socket(SocketType::Pair).unwrap();
        a.bind("inproc://poll-stale-fd").unwrap();
        b.connect("inproc://poll-stale-fd").unwrap();
        for exclusive in [false, true] {
            // Receiving until empty puts the reader to sleep, so the next message writes the fd.
            assert_eq!(a.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
            b.send("first", SendFlags::empty()).unwrap();
            let ready = |a: &mut Socket, ms| {
                if exclusive {
                    poll(&mut [PollItem::socket_mut(a, POLLIN)], ms)
                } else {
                    poll(&mut [PollItem::socket(a, POLLIN)], ms)
                }
            };
            assert_eq!(ready(&mut a, 1000).unwrap(), 1);
            assert_eq!(a.recv(RecvFlags::empty()).unwrap().as_slice(), b"first");
            let t = Instant::now();
            assert_eq!(ready(&mut a, 40).unwrap(), 0);
            assert!(t.elapsed() >= Duration::from_millis(40), "{exclusive}");
            let sender = std::thread::scope(|scope| {
                scope.spawn(|| {
                    std::thread::sleep(Duration::from_millis(20));
                    b.send("second", SendFlags::empty())
                });
                ready(&mut a, 5000)
            });
            assert_eq!(sender.unwrap(), 1);
            assert_eq!(a.recv(RecvFlags::empty()).unwrap().as_slice(), b"second");
        }
    }

    #[test]
    fn timeouts_zero_and_empty_sets() {
        let (r, _w) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut items = [PollItem::fd(r.as_fd(), POLLIN)];
        assert_eq!(poll(&mut items, 0).unwrap(), 0);
        let t = Instant::now();
        assert_eq!(poll(&mut items, 30).unwrap(), 0);
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert_eq!(poll(&mut [], 1).unwrap(), 0);
        assert_eq!(poll(&mut [], -1), Err(Error::Invalid));
    }

    #[test]
    fn socket_and_fd_in_one_set() {
        let ctx = Context::new();
        let mut a = ctx.socket(SocketType::Pair).unwrap();
        let mut b = ctx.socket(SocketType::Pair).unwrap();
        a.bind("inproc://unit-poll").unwrap();
        b.connect("inproc://unit-poll").unwrap();
        let (mut r, mut w) = std::os::unix::net::UnixStream::pair().unwrap();
        b.send("x", SendFlags::empty()).unwrap();
        let mut items = [
            PollItem::socket(&a, POLLIN),
            PollItem::fd(r.as_fd(), POLLIN),
        ];
        assert_eq!(poll(&mut items, -1).unwrap(), 1);
        assert!(items[0].is_readable() && !items[1].is_readable());
        w.write_all(b"!").unwrap();
        assert_eq!(poll(&mut items, 0).unwrap(), 2);
        drop(w);
        let mut buf = [0u8; 4];
        r.read_exact(&mut buf[..1]).unwrap();
        let mut items = [PollItem::fd(r.as_fd(), POLLIN)];
        poll(&mut items, 1000).unwrap();
        // A closed writer: readable (EOF), with HUP as POLLERR, as zmq_poll reports it.
        assert!(items[0].is_readable() || items[0].is_error());
    }

    /// Request-reply through a poll loop (send, poll, receive), as CZMQ's and C programs'
    /// loops do: every answer is reported, whether it came while the poll waited awake (its
    /// notification counted, the eventfd left alone) or after that wait ran out and it slept.
    /// A lost notification would leave the poll waiting out its timeout and return 0.
    #[test]
    fn a_poll_loop_sees_every_answer_awake_or_asleep() {
        const ROUND_TRIPS: u32 = 3_000;
        let ctx = Context::new();
        let mut client = ctx.socket(SocketType::Dealer).unwrap();
        let mut server = ctx.socket(SocketType::Dealer).unwrap();
        server.bind("inproc://unit-poll-awake").unwrap();
        client.connect("inproc://unit-poll-awake").unwrap();
        server.set_rcvtimeo(10_000).unwrap();
        let echo = std::thread::spawn(move || {
            for i in 0..ROUND_TRIPS {
                let m = server.recv(crate::RecvFlags::empty()).unwrap();
                if i % 500 == 0 {
                    // Longer than a wait awake: the poll is asleep when this comes.
                    std::thread::sleep(REPLY_SPIN * 50);
                }
                server.send(m, SendFlags::empty()).unwrap();
            }
        });
        for i in 0..ROUND_TRIPS {
            client
                .send_slice(&i.to_le_bytes(), SendFlags::empty())
                .unwrap();
            let mut items = [PollItem::socket_mut(&mut client, POLLIN)];
            assert_eq!(poll(&mut items, 10_000).unwrap(), 1);
            let answer = client.recv(crate::RecvFlags::DONTWAIT).unwrap();
            assert_eq!(answer.as_slice(), i.to_le_bytes());
        }
        echo.join().unwrap();
    }

    /// A poll for an answer on a socket held exclusively with one tcp or ipc connection
    /// borrows it and reads the answer itself (`io/lend.rs`), beside a pipe's fd; a poll
    /// that times out gives it back, so an answer that comes afterwards is still seen.
    #[test]
    fn a_poll_for_an_answer_reads_it_from_a_lone_connection() {
        use crate::io::lend::{borrowed_reads, borrows};
        let ctx = Context::new();
        for endpoint in ["tcp://127.0.0.1:*", "ipc://*"] {
            let mut client = ctx.socket(SocketType::Dealer).unwrap();
            let mut server = ctx.socket(SocketType::Dealer).unwrap();
            server.set_rcvtimeo(10_000).unwrap();
            server.bind(endpoint).unwrap();
            client.connect(&server.last_endpoint().unwrap()).unwrap();
            // A fd that stays quiet, so that the set is not sockets alone.
            let (reader, _writer) = std::os::unix::net::UnixStream::pair().unwrap();
            let echo = std::thread::spawn(move || {
                for i in 0..200 {
                    let m = server.recv(crate::RecvFlags::empty()).unwrap();
                    if i == 100 {
                        // Past the poll's timeout below.
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    server.send(m, SendFlags::empty()).unwrap();
                }
            });
            let (borrowed_before, reads_before) = (borrows(), borrowed_reads());
            for i in 0u32..200 {
                client
                    .send_slice(&i.to_le_bytes(), SendFlags::empty())
                    .unwrap();
                let fd = reader.as_fd();
                let mut items = [
                    PollItem::socket_mut(&mut client, POLLIN),
                    PollItem::fd(fd, POLLIN),
                ];
                if i == 100 {
                    assert_eq!(poll(&mut items, 20).unwrap(), 0, "{endpoint}");
                }
                assert_eq!(poll(&mut items, 10_000).unwrap(), 1, "{endpoint}");
                let answer = client.recv(crate::RecvFlags::DONTWAIT).unwrap();
                assert_eq!(answer.as_slice(), i.to_le_bytes());
            }
            assert!(borrows() > borrowed_before, "{endpoint}: no poll borrowed");
            assert!(
                borrowed_reads() > reads_before,
                "{endpoint}: no answer read"
            );
            echo.join().unwrap();
        }
    }
}
