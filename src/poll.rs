//! `poll` over sockets: a simple, correct loop on ZMQ_EVENTS and the sockets' eventfds
//! (the later async/poll work extends it to raw fds).

use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::error::{Error, Result};
use crate::socket::Socket;

/// One entry of a [`poll`] set.
#[derive(Debug)]
pub struct PollItem<'a> {
    socket: &'a Socket,
    events: i16,
    revents: i16,
}

impl<'a> PollItem<'a> {
    /// Polls `socket` for `events` (`POLLIN` | `POLLOUT`).
    pub fn socket(socket: &'a Socket, events: i16) -> PollItem<'a> {
        PollItem {
            socket,
            events,
            revents: 0,
        }
    }

    /// What was ready at the last `poll`.
    pub fn revents(&self) -> i16 {
        self.revents
    }

    /// Whether `POLLIN` was ready.
    pub fn is_readable(&self) -> bool {
        self.revents & crate::POLLIN != 0
    }

    /// Whether `POLLOUT` was ready.
    pub fn is_writable(&self) -> bool {
        self.revents & crate::POLLOUT != 0
    }
}

/// Waits until one of `items` is ready or `timeout_ms` passes (-1 = forever, 0 = check
/// once); returns how many items are ready.
pub fn poll(items: &mut [PollItem<'_>], timeout_ms: i64) -> Result<usize> {
    let until = u64::try_from(timeout_ms)
        .ok()
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    loop {
        let mut ready = 0;
        for item in items.iter_mut() {
            let ev = item.socket.current_events().bits();
            item.revents = ev & item.events;
            if item.revents != 0 {
                ready += 1;
            }
        }
        if ready > 0 {
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
        let mut fds: Vec<PollFd<'_>> = items
            .iter()
            .map(|i| PollFd::from_borrowed_fd(i.socket.signaler().borrowed(), PollFlags::IN))
            .collect();
        let timeout = left.map(|d| rustix::event::Timespec {
            tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(d.subsec_nanos()),
        });
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(Error::from_errno(e.raw_os_error())),
        }
    }
}
