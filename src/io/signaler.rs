//! The socket's one wake-up channel: an eventfd that is also its ZMQ_FD.
//!
//! Everything that may change what a socket can do (a pipe became readable or writable, a
//! command arrived, the context shut down) calls [`Signaler::notify`]. The socket drains it
//! before looking at its state, so a notification is never lost: either the state change is
//! seen by the look that follows the drain, or the fd stays readable.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use ferromq_pipe::Notify;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};

use crate::error::{Error, Result};

/// An eventfd used as a level-triggered "something changed" flag.
#[derive(Debug)]
pub(crate) struct Signaler {
    fd: OwnedFd,
}

impl Signaler {
    pub(crate) fn new() -> Result<Signaler> {
        let fd = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)
            .map_err(|e| Error::from_errno(e.raw_os_error()))?;
        Ok(Signaler { fd })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub(crate) fn borrowed(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Clears the flag.
    pub(crate) fn drain(&self) {
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
}
