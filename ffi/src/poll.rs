//! `zmq_poll` over ferromq sockets and plain file descriptors together.
//!
//! A set of sockets alone is first looked at here, from their state, with neither a system
//! call nor the in-use count. Anything that must wait goes to the Rust API's [`ferromq::poll`]
//! (one loop for both: its ZMQ_FD handling, its `poll(2)` and its wait awake for an answer),
//! with every socket held in use for the call and held exclusively, as libzmq's rule that a
//! socket is used by one thread at a time allows.

use core::ffi::{c_int, c_long, c_short};
use std::os::fd::BorrowedFd;
use std::time::Duration;

use ferromq::option::ZMQ_EVENTS;
use ferromq::{PollItem, Socket};

use crate::boundary::{guard, Errno};
use crate::errno::{EFAULT, EINTR, EINVAL};
use crate::pollitem::zmq_pollitem_t;
use crate::socket::{errno_of, socket, socket_in_use};

/// A socket item's ZMQ_EVENTS (`ETERM` once its context is shut down), read as one of the
/// socket's own calls ([`ferromq::Socket::get_option_raw_mut`]): no locked instruction on a
/// poll pass, where the `&Socket` read pays two per socket.
fn socket_events(socket: &mut Socket) -> Result<c_short, Errno> {
    let mut out = [0u8; 4];
    socket
        .get_option_raw_mut(ZMQ_EVENTS, &mut out)
        .map_err(errno_of)?;
    Ok(c_short::try_from(c_int::from_ne_bytes(out)).unwrap_or(0))
}

/// `poll(2)` over no fd at all: sleeps out `timeout` ms (negative: forever) unless a signal
/// comes first (`EINTR`), as a set of negative fds, which `poll(2)` ignores, would.
fn wait_for_nothing(timeout: c_long) -> Result<(), Errno> {
    let ms = c_int::try_from(timeout).unwrap_or(if timeout < 0 { -1 } else { c_int::MAX });
    // SAFETY: no fd is passed, so no pointer is read.
    if unsafe { libc::poll(core::ptr::null_mut(), 0, ms) } < 0 {
        let e = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(EINTR);
        return Err(Errno(e));
    }
    Ok(())
}

/// Waits until one of `nitems` items is ready or `timeout` ms pass (-1: forever, 0: check once);
/// sets each item's `revents` and returns how many are ready.
///
/// # Safety
/// `items` is NULL or points to `nitems` writable `zmq_pollitem_t`s whose non-NULL `socket`
/// fields are readable pointers (tag-checked) to sockets used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn zmq_poll(
    items: *mut zmq_pollitem_t,
    nitems: c_int,
    timeout: c_long,
) -> c_int {
    guard(|| {
        let count = usize::try_from(nitems).map_err(|_| Errno(EINVAL))?;
        if count == 0 {
            if let Ok(ms) = u64::try_from(timeout) {
                std::thread::sleep(Duration::from_millis(ms));
            }
            return Ok(0);
        }
        if items.is_null() {
            return Err(Errno(EFAULT));
        }
        // SAFETY: non-NULL and valid for `count` items per the contract.
        let items = unsafe { core::slice::from_raw_parts_mut(items, count) };
        // A set of sockets alone: the first pass only reads their events, with neither a
        // `poll(2)` (no plain fd to ask the kernel about) nor the in-use count (this pass never
        // sleeps, so a close cannot find it asleep inside a socket: the rule `zmq_recv` follows,
        // see `socket_in_use`). A poll loop whose sockets have input pays no syscall for it.
        let sockets_only = items.iter().all(|item| !item.socket.is_null());
        if sockets_only {
            let mut ready = 0;
            for item in items.iter_mut() {
                // SAFETY: tag-checked; the caller uses the socket from this thread only during
                // the call (the contract above, libzmq's rule for its sockets), so the handle is
                // exclusive while its events are read as the socket's owner.
                let handle = unsafe { socket(item.socket) }?;
                item.revents = socket_events(&mut handle.socket)? & item.events;
                if item.revents != 0 {
                    ready += 1;
                }
            }
            if ready > 0 || timeout == 0 {
                return Ok(ready);
            }
        }
        // Every socket is held in use until the poll returns: zmq_close from another thread
        // is EBUSY meanwhile rather than a free under this call.
        let mut held = Vec::with_capacity(count);
        for item in items.iter().filter(|item| !item.socket.is_null()) {
            // SAFETY: tag-checked; exclusive until the guard drops, as above.
            held.push(unsafe { socket_in_use(item.socket) }?);
        }
        // The Rust API's poll does the rest, waiting awake for an answer as it does (a set of
        // sockets alone, each held exclusively here, one of which has sent). A negative fd is
        // left out: `poll(2)` ignores one, and its `revents` stays 0.
        let mut sockets = held.iter_mut();
        let mut set = Vec::with_capacity(count);
        for item in items.iter() {
            if item.socket.is_null() {
                if item.fd >= 0 {
                    // SAFETY: the caller's fd, open for the call per libzmq's contract, and
                    // not -1 (the one value a `BorrowedFd` cannot hold).
                    let fd = unsafe { BorrowedFd::borrow_raw(item.fd) };
                    set.push(PollItem::fd(fd, item.events));
                }
            } else if let Some(handle) = sockets.next() {
                set.push(PollItem::socket_mut(&mut handle.socket, item.events));
            }
        }
        if set.is_empty() {
            wait_for_nothing(timeout)?;
            for item in items.iter_mut() {
                item.revents = 0;
            }
            return Ok(0);
        }
        let ready = ferromq::poll(&mut set, timeout).map_err(errno_of)?;
        let mut revents = set.iter().map(PollItem::revents);
        for item in items.iter_mut() {
            item.revents = if item.socket.is_null() && item.fd < 0 {
                0
            } else {
                revents.next().unwrap_or(0)
            };
        }
        c_int::try_from(ready).map_err(|_| Errno(EINVAL))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{ZMQ_POLLIN, ZMQ_POLLOUT};
    use std::time::Instant;

    /// A set of sockets alone: the first pass answers without `poll(2)` (timeout 0, or a socket
    /// ready), and a pass that finds nothing goes on to wait, counted in use, for the timeout.
    #[test]
    fn sockets_alone_first_pass_then_wait() {
        use crate::consts::{ZMQ_PULL, ZMQ_PUSH};
        use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
        use crate::recv::zmq_recv;
        use crate::send::zmq_send;
        use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_socket};
        let ctx = zmq_ctx_new();
        // SAFETY: ctx and the sockets are live until closed; buffers and items are local.
        unsafe {
            let pull = zmq_socket(ctx, ZMQ_PULL);
            let push = zmq_socket(ctx, ZMQ_PUSH);
            assert_eq!(zmq_bind(pull, c"inproc://unit-zmq-poll".as_ptr()), 0);
            assert_eq!(zmq_connect(push, c"inproc://unit-zmq-poll".as_ptr()), 0);
            let mut items = [
                zmq_pollitem_t {
                    socket: pull,
                    fd: 0,
                    events: ZMQ_POLLIN as c_short,
                    revents: -1,
                },
                zmq_pollitem_t {
                    socket: push,
                    fd: 0,
                    events: ZMQ_POLLIN as c_short,
                    revents: -1,
                },
            ];
            assert_eq!(zmq_poll(items.as_mut_ptr(), 2, 0), 0);
            assert_eq!((items[0].revents, items[1].revents), (0, 0));
            let start = Instant::now();
            assert_eq!(zmq_poll(items.as_mut_ptr(), 2, 30), 0);
            assert!(start.elapsed() >= Duration::from_millis(25));
            assert_eq!(zmq_send(push, b"x".as_ptr().cast(), 1, 0), 1);
            assert_eq!(zmq_poll(items.as_mut_ptr(), 2, -1), 1);
            assert_eq!(items[0].revents, ZMQ_POLLIN as c_short);
            let mut buf = [0u8; 4];
            assert_eq!(zmq_recv(pull, buf.as_mut_ptr().cast(), buf.len(), 0), 1);
            assert_eq!(zmq_poll(items.as_mut_ptr(), 2, 0), 0);
            assert_eq!(zmq_close(push), 0);
            assert_eq!(zmq_close(pull), 0);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }

    #[test]
    fn plain_pipe_fd_and_timeouts() {
        let mut p = [0 as c_int; 2];
        // SAFETY: p has room for two fds.
        assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
        let mut item = zmq_pollitem_t {
            socket: core::ptr::null_mut(),
            fd: p[0],
            events: ZMQ_POLLIN as c_short,
            revents: 0,
        };
        // SAFETY: one valid item; fds are ours.
        unsafe {
            let start = Instant::now();
            assert_eq!(zmq_poll(&mut item, 1, 30), 0);
            assert!(start.elapsed() >= Duration::from_millis(25));
            assert_eq!(libc::write(p[1], b"x".as_ptr().cast(), 1), 1);
            assert_eq!(zmq_poll(&mut item, 1, -1), 1);
            assert_eq!(item.revents, ZMQ_POLLIN as c_short);
            // A negative fd is ignored, as poll(2) ignores it; the pipe's ends still report.
            let mut pair = [
                zmq_pollitem_t {
                    socket: core::ptr::null_mut(),
                    fd: -1,
                    events: ZMQ_POLLIN as c_short,
                    revents: -1,
                },
                zmq_pollitem_t {
                    socket: core::ptr::null_mut(),
                    fd: p[1],
                    events: ZMQ_POLLOUT as c_short,
                    revents: -1,
                },
            ];
            assert_eq!(zmq_poll(pair.as_mut_ptr(), 2, -1), 1);
            assert_eq!(
                (pair[0].revents, pair[1].revents),
                (0, ZMQ_POLLOUT as c_short)
            );
            let start = Instant::now();
            assert_eq!(zmq_poll(pair.as_mut_ptr(), 1, 30), 0);
            assert!(start.elapsed() >= Duration::from_millis(25));
            assert_eq!(pair[0].revents, 0);
            assert_eq!(zmq_poll(core::ptr::null_mut(), 1, 0), -1);
            assert_eq!(crate::errno::errno(), EFAULT);
            libc::close(p[0]);
            libc::close(p[1]);
        }
    }
}
