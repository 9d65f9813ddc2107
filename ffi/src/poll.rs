//! `zmq_poll` over ferromq sockets and plain file descriptors together.
//!
//! Each socket contributes its ZMQ_FD (an eventfd, readable whenever its events may have
//! changed) and each plain item its own fd to one `poll(2)` set. After every wake-up the
//! sockets' ZMQ_EVENTS are read, which drains their eventfds before looking at their state,
//! so a change that lands after the look re-arms the fd and is never lost: the edge-triggered
//! contract libzmq documents for ZMQ_FD, applied here on the caller's behalf. The first pass
//! polls with a zero timeout, as libzmq does, so ready items return without sleeping.

use core::ffi::{c_int, c_long, c_short};
use std::time::{Duration, Instant};

use ferromq::option::ZMQ_EVENTS;
use ferromq::Socket;

use crate::boundary::{guard, Errno};
use crate::consts::{ZMQ_POLLERR, ZMQ_POLLIN, ZMQ_POLLOUT, ZMQ_POLLPRI};
use crate::errno::{EFAULT, EINTR, EINVAL};
use crate::pollitem::zmq_pollitem_t;
use crate::socket::{errno_of, socket, socket_in_use};

/// The ZMQ_POLL* bits a plain fd's `poll(2)` result stands for.
fn fd_revents(revents: c_short) -> c_short {
    let mut out = 0;
    if revents & libc::POLLIN != 0 {
        out |= ZMQ_POLLIN as c_short;
    }
    if revents & libc::POLLOUT != 0 {
        out |= ZMQ_POLLOUT as c_short;
    }
    if revents & libc::POLLPRI != 0 {
        out |= ZMQ_POLLPRI as c_short;
    }
    if revents & !(libc::POLLIN | libc::POLLOUT | libc::POLLPRI) != 0 {
        out |= ZMQ_POLLERR as c_short;
    }
    out
}

/// The `poll(2)` events a plain fd item asks for.
fn fd_events(events: c_short) -> c_short {
    let mut out = 0;
    if events & ZMQ_POLLIN as c_short != 0 {
        out |= libc::POLLIN;
    }
    if events & ZMQ_POLLOUT as c_short != 0 {
        out |= libc::POLLOUT;
    }
    if events & ZMQ_POLLPRI as c_short != 0 {
        out |= libc::POLLPRI;
    }
    out
}

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

/// One `poll(2)` call; `EINTR` is reported, as libzmq does.
fn wait(fds: &mut [libc::pollfd], timeout_ms: c_int) -> Result<(), Errno> {
    let n = libc::nfds_t::try_from(fds.len()).map_err(|_| Errno(EINVAL))?;
    // SAFETY: `fds` is a valid, exclusively borrowed array of `n` pollfd structs.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), n, timeout_ms) };
    if rc < 0 {
        let e = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(EINTR);
        return Err(Errno(e));
    }
    Ok(())
}

/// Milliseconds left until `deadline`, rounded up, as `poll(2)` wants them.
fn ms_left(deadline: Instant) -> c_int {
    let left = deadline.saturating_duration_since(Instant::now());
    let ms = left.as_micros().div_ceil(1000);
    c_int::try_from(ms).unwrap_or(c_int::MAX)
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
        let deadline = u64::try_from(timeout)
            .ok()
            .map(|ms| Instant::now() + Duration::from_millis(ms));
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
        let mut fds = Vec::with_capacity(count);
        // Every socket is held in use until the poll returns: zmq_close from another thread
        // is EBUSY meanwhile rather than a free under this call. One entry per item, `None`
        // for a plain fd.
        let mut held = Vec::with_capacity(count);
        for item in items.iter() {
            let (fd, events) = if item.socket.is_null() {
                held.push(None);
                (item.fd, fd_events(item.events))
            } else {
                // SAFETY: tag-checked; exclusive until the guard drops, as above.
                let handle = unsafe { socket_in_use(item.socket) }?;
                let fd = handle.socket.fd();
                held.push(Some(handle));
                (fd, libc::POLLIN)
            };
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
        }
        // The sockets-only pass above was the first look; otherwise this one is, without
        // waiting, so plain fds are checked even at timeout 0.
        let mut first = !sockets_only;
        loop {
            let timeout_ms = match (first, deadline) {
                (true, _) => 0,
                (false, None) => -1,
                (false, Some(d)) => ms_left(d),
            };
            wait(&mut fds, timeout_ms)?;
            let mut ready = 0;
            for ((item, pfd), handle) in items.iter_mut().zip(&fds).zip(&mut held) {
                item.revents = match handle {
                    None => fd_revents(pfd.revents) & (item.events | ZMQ_POLLERR as c_short),
                    Some(handle) => socket_events(&mut handle.socket)? & item.events,
                };
                if item.revents != 0 {
                    ready += 1;
                }
            }
            if ready > 0 {
                return Ok(ready);
            }
            match deadline {
                Some(d) if d <= Instant::now() => return Ok(0),
                _ => {}
            }
            first = false;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_event_translation() {
        assert_eq!(fd_events(ZMQ_POLLIN as c_short), libc::POLLIN);
        assert_eq!(
            fd_revents(libc::POLLIN | libc::POLLHUP),
            (ZMQ_POLLIN | ZMQ_POLLERR) as c_short
        );
        assert_eq!(fd_revents(libc::POLLOUT), ZMQ_POLLOUT as c_short);
    }

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
            assert_eq!(zmq_poll(core::ptr::null_mut(), 1, 0), -1);
            assert_eq!(crate::errno::errno(), EFAULT);
            libc::close(p[0]);
            libc::close(p[1]);
        }
    }
}
