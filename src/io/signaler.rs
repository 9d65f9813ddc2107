//! The socket's one wake-up channel: an eventfd that is also its ZMQ_FD.
//!
//! Everything that may change what a socket can do (a pipe became readable or writable, a
//! command arrived, the context shut down) calls [`Signaler::notify`]. The socket drains it
//! before looking at its state, so a notification is never lost: either the state change is
//! seen by the look that follows the drain, or the fd stays readable.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ferromq_pipe::Notify;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};

use crate::error::{Error, Result};

/// An eventfd used as a level-triggered "something changed" flag.
#[derive(Debug)]
pub(crate) struct Signaler {
    fd: OwnedFd,
    /// Set by every notify after its write, cleared by a drain before its read, so that a
    /// drain with nothing to take costs a load rather than a `read(2)`: a poll loop drains
    /// every polled socket on every pass (ZMQ_EVENTS), mostly with nothing written since the
    /// last pass. While it is clear the eventfd is empty, or a notify that wrote has yet to
    /// set it (it does right after): never readable for good with the flag clear, which would
    /// wake every poll at once from then on.
    signaled: AtomicBool,
}

impl Signaler {
    pub(crate) fn new() -> Result<Signaler> {
        let fd = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)
            .map_err(|e| Error::from_errno(e.raw_os_error()))?;
        Ok(Signaler {
            fd,
            signaled: AtomicBool::new(false),
        })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub(crate) fn borrowed(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Clears the flag. What a caller looks at after this is either seen by that look or
    /// leaves the fd readable: a notify's state change comes before its write, and a write
    /// is either taken by this read (which then comes after it) or still in the fd.
    #[inline]
    pub(crate) fn drain(&self) {
        // Clear: nothing was written since the last drain, or a write's flag is still to
        // come, and the fd stays readable for that one (the next drain takes it).
        if self.signaled.load(Ordering::Relaxed) {
            self.drain_written();
        }
    }

    /// The flag was set: clears it, then takes what was written.
    #[inline(never)]
    fn drain_written(&self) {
        // Cleared before the read. A notify whose flag store comes after this swap (in the
        // flag's modification order) leaves the flag set. One whose store comes before it
        // wrote before this read, which takes that write: the eventfd's lock orders the write
        // and the read, and were the write after the read, this swap would happen before the
        // store, so come before it.
        self.signaled.swap(false, Ordering::Acquire);
        let mut buf = [0u8; 8];
        // EAGAIN means it was clear already; nothing else can fail on a valid eventfd.
        let _ = rustix::io::read(&self.fd, &mut buf);
    }

    /// Waits until the flag is set or the deadline passes; returns whether it was set.
    /// A signal delivered meanwhile ends the wait with `EINTR`, as libzmq's blocking calls
    /// do, so SIGALRM or Ctrl-C can stop a C or Python program blocked in a receive.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> Result<bool> {
        let timeout = match deadline {
            None => None,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                Some(duration_to_timespec(left))
            }
        };
        let fd = self.fd.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(Error::from_errno(e.raw_os_error())),
        }
    }
}

impl Notify for Signaler {
    fn notify(&self) {
        // A full counter (2^64 - 2) would return EAGAIN; it is readable then anyway.
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
        // After the write (see `signaled`).
        self.signaled.store(true, Ordering::Release);
    }
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

    /// Notifies racing drains never leave the fd readable with the flag clear (which the
    /// fast drain would never clear: every poll after would return at once), and a drain
    /// after the last notify leaves it empty.
    #[test]
    fn drains_racing_notifies_leave_nothing_readable() {
        let s = std::sync::Arc::new(Signaler::new().unwrap());
        for _ in 0..20 {
            let notifier = {
                let s = std::sync::Arc::clone(&s);
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        s.notify();
                    }
                })
            };
            while !notifier.is_finished() {
                s.drain();
            }
            notifier.join().unwrap();
            s.drain();
            assert!(
                !s.wait(Some(Instant::now())).unwrap(),
                "readable after a drain"
            );
            // Nothing written since: a drain skips the read and the fd stays empty.
            s.drain();
            assert!(!s.signaled.load(Ordering::Relaxed));
        }
    }
}
