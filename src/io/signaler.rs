//! The socket's one wake-up channel: an eventfd that is also its ZMQ_FD.
//!
//! Everything that may change what a socket can do (a pipe became readable or writable, a
//! command arrived, the context shut down) calls [`Signaler::notify`]. The socket drains it
//! before looking at its state, so a notification is never lost: either the state change is
//! seen by the look that follows the drain, or the fd stays readable. A drain before a look
//! reads the fd only if it was written since it was last drained
//! ([`Signaler::drain_if_written`]); skipping one can only leave the fd readable, never clear
//! a notification the look has not seen.
//!
//! A thread may also wait for a notification awake ([`Signaler::watch`]), watching a counter
//! in memory. While it does, notifiers only count: the eventfd write, a system call, and the
//! wake-up of a sleeping thread are what waiting awake saves. Nothing is lost that way either:
//! a notification counted while the watcher was awake was counted before its
//! [`Signaler::unwatch`], so the look that follows `unwatch` sees its state change; and the
//! socket's thread is inside a call then, after which a ZMQ_FD user reads ZMQ_EVENTS anyway.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferromq_pipe::Notify;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};

use crate::error::{Error, Result};
use crate::io::spin_backoff::spin_until;

/// An eventfd used as a level-triggered "something changed" flag.
#[derive(Debug)]
pub(crate) struct Signaler {
    fd: OwnedFd,
    /// `AWAKE` while a thread watches; above it, notifications counted (wrapping).
    state: AtomicU32,
    /// Writes to the fd, counted once each has returned (wrapping).
    written: AtomicU32,
    /// `written` as read just before the fd was last cleared.
    cleared: AtomicU32,
}

/// The bit of `Signaler::state` set while a thread waits awake.
const AWAKE: u32 = 1;
/// What one notification adds to `Signaler::state`.
const COUNT: u32 = 2;

impl Signaler {
    pub(crate) fn new() -> Result<Signaler> {
        let fd = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)
            .map_err(|e| Error::from_errno(e.raw_os_error()))?;
        Ok(Signaler {
            fd,
            state: AtomicU32::new(0),
            written: AtomicU32::new(0),
            cleared: AtomicU32::new(0),
        })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub(crate) fn borrowed(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Starts waiting awake: notifications from now on are counted instead of written to
    /// the fd, until [`Signaler::unwatch`]. Returns the count to compare with.
    pub(crate) fn watch(&self) -> u32 {
        self.state.fetch_or(AWAKE, Ordering::AcqRel) | AWAKE
    }

    /// Spins until a notification is counted after `seen` (true) or `until` (false).
    pub(crate) fn wait_awake(&self, seen: u32, until: Instant) -> bool {
        spin_until(until, || self.seen() != seen)
    }

    /// The count as it is now, to pass to [`Signaler::wait_awake`].
    pub(crate) fn seen(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    /// Stops waiting awake; the caller looks at the socket's state again before it sleeps.
    pub(crate) fn unwatch(&self) {
        self.state.fetch_and(!AWAKE, Ordering::AcqRel);
    }

    /// Clears the flag: after a wake-up on the fd.
    pub(crate) fn drain(&self) {
        let written = self.written.load(Ordering::Acquire);
        let mut buf = [0u8; 8];
        // EAGAIN means it was clear already; nothing else can fail on a valid eventfd.
        let _ = rustix::io::read(&self.fd, &mut buf);
        // A write that lands after the read but was counted before it leaves `written` ahead
        // of this: the next `drain_if_written` reads again, for nothing.
        self.cleared.store(written, Ordering::Relaxed);
    }

    /// Clears the flag before a look at the socket's state, as ZMQ_EVENTS does, with no
    /// system call when nothing was written since it was last cleared: a poll loop whose
    /// sockets have input looks at each of them on every pass, and a read(2) per look was
    /// most of its cost (issue 18). A write is counted only once it has returned, so a write
    /// in flight may be left in the fd here: the fd is then readable for a change the look
    /// may already see, which costs a waiter one wake-up, and whoever wakes for it clears it
    /// with [`Signaler::drain`].
    pub(crate) fn drain_if_written(&self) {
        if self.written.load(Ordering::Acquire) != self.cleared.load(Ordering::Relaxed) {
            self.drain();
        }
    }

    /// Waits until the flag is set or the deadline passes; returns whether it was set.
    /// A signal delivered meanwhile ends the wait with `EINTR`, as libzmq's blocking calls
    /// do, so SIGALRM or Ctrl-C can stop a C or Python program blocked in a receive.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> Result<bool> {
        let fd = self.fd.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        Ok(poll_until(&mut fds, deadline)? > 0)
    }

    /// [`Signaler::wait`], also ending when a borrowed connection's `stream` is ready as
    /// asked (`lend.rs`). Returns whether the flag was set, and the stream's readiness.
    pub(crate) fn wait_with(
        &self,
        stream: PollFd<'_>,
        deadline: Option<Instant>,
    ) -> Result<(bool, PollFlags)> {
        let fd = self.fd.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN), stream];
        poll_until(&mut fds, deadline)?;
        Ok((!fds[0].revents().is_empty(), fds[1].revents()))
    }
}

/// A thread's watch of a signaler's count ([`Signaler::watch`]), ended when dropped, so that
/// every way out of the wait ends it.
#[derive(Debug)]
pub(crate) struct Watch(Arc<Signaler>);

impl Watch {
    /// Starts watching; returns the watch and the count to compare with.
    pub(crate) fn start(signal: &Arc<Signaler>) -> (Watch, u32) {
        let count = signal.watch();
        (Watch(Arc::clone(signal)), count)
    }

    /// The watched count as it is now.
    pub(crate) fn seen(&self) -> u32 {
        self.0.seen()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.unwatch();
    }
}

impl Notify for Signaler {
    fn notify(&self) {
        // Counted after the state change the caller made (`Release`), so a watcher that sees
        // the count, or unwatches after it, sees the change.
        if self.state.fetch_add(COUNT, Ordering::AcqRel) & AWAKE != 0 {
            return;
        }
        // A full counter (2^64 - 2) would return EAGAIN; it is readable then anyway.
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
        self.written.fetch_add(1, Ordering::Release);
    }
}

/// `poll(2)` until `deadline` (`None`: for ever); the number of fds ready. EINTR is an error,
/// as in libzmq's blocking calls.
fn poll_until(fds: &mut [PollFd<'_>], deadline: Option<Instant>) -> Result<usize> {
    let timeout =
        deadline.map(|d| duration_to_timespec(d.saturating_duration_since(Instant::now())));
    poll(fds, timeout.as_ref()).map_err(|e| Error::from_errno(e.raw_os_error()))
}

fn duration_to_timespec(d: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_wakes_a_wait_and_drain_clears() {
        let s = Signaler::new().unwrap();
        assert!(!s.wait(Some(Instant::now())).unwrap());
        s.notify();
        s.notify();
        assert!(s.wait(None).unwrap());
        s.drain();
        assert!(!s
            .wait(Some(Instant::now() + Duration::from_millis(5)))
            .unwrap());
    }

    /// `drain_if_written` reads the fd only when a notification wrote it since it was last
    /// cleared: a byte written behind the signaler's back (no count) is left there, where
    /// `drain`, for a waiter the fd woke, clears it whatever.
    #[test]
    fn drain_if_written_reads_only_after_a_write() {
        let s = Signaler::new().unwrap();
        let soon = || Some(Instant::now() + Duration::from_millis(5));
        s.notify();
        s.drain_if_written();
        assert!(!s.wait(soon()).unwrap(), "a counted write is cleared");
        rustix::io::write(&s.fd, &1u64.to_ne_bytes()).unwrap();
        s.drain_if_written();
        assert!(s.wait(soon()).unwrap(), "no write counted since: no read");
        s.drain();
        assert!(!s.wait(soon()).unwrap());
        s.notify();
        s.drain_if_written();
        assert!(!s.wait(soon()).unwrap());
    }

    /// While a thread watches, a notification is counted and the fd left alone; after
    /// `unwatch` they go to the fd again.
    #[test]
    fn a_watcher_sees_the_count_and_the_fd_stays_clear() {
        let s = Arc::new(Signaler::new().unwrap());
        let seen = s.watch();
        assert!(!s.wait_awake(seen, Instant::now() + Duration::from_micros(50)));
        let notifier = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.notify())
        };
        assert!(s.wait_awake(seen, Instant::now() + Duration::from_secs(10)));
        notifier.join().unwrap();
        s.unwatch();
        assert!(
            !s.wait(Some(Instant::now())).unwrap(),
            "counted, not written"
        );
        s.notify();
        assert!(
            s.wait(Some(Instant::now())).unwrap(),
            "written once unwatched"
        );
    }
}
