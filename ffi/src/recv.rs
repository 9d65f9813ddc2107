//! `zmq_recv`, `zmq_msg_recv`, `zmq_recvmsg`.
//!
//! `zmq_recv` copies at most `len` bytes and returns the frame's full size, so a caller sees
//! truncation by comparing the two (libzmq's semantics). `zmq_msg_recv` puts the runtime's
//! `Bytes` in the message without copying, with the peer's metadata for `zmq_msg_gets`.

use core::ffi::{c_int, c_void};

use ferromq::{Error, Msg, RecvFlags};

use crate::boundary::{guard, Errno};
use crate::errno::EFAULT;
use crate::msg::cell;
use crate::msg::zmq_msg_t;
use crate::send::clipped;
use crate::socket::{errno_of, socket, socket_in_use};

fn flags_of(flags: c_int) -> RecvFlags {
    RecvFlags::from_bits_truncate(flags)
}

/// Receives one frame from the socket behind `s` and hands it to `deliver`: once without
/// waiting, and only if there is none and `flags` allow waiting, again with the socket counted
/// in use while it waits (see `socket_in_use`). (The frame goes to `deliver` in place rather
/// than out as a return value: returned, it was copied through the stack once more, and that
/// cost more than the count this saves.)
///
/// # Safety
/// As for [`socket`].
#[inline(always)]
unsafe fn recv_msg<R>(
    s: *mut c_void,
    flags: c_int,
    deliver: impl FnOnce(Msg) -> R,
) -> Result<R, Errno> {
    let flags = flags_of(flags);
    // SAFETY: tag-checked; one thread per socket per the C contract.
    let handle = unsafe { socket(s) }?;
    let received = core::mem::ManuallyDrop::new(handle.socket.recv(flags | RecvFlags::DONTWAIT));
    match &*received {
        // SAFETY: `received` is not dropped (`ManuallyDrop`) nor used again.
        Ok(msg) => Ok(deliver(unsafe { ferromq::settled::received(msg) })),
        Err(Error::Again) if !flags.contains(RecvFlags::DONTWAIT) => {
            // SAFETY: forwarded; `handle` is not used past this point.
            unsafe { recv_waiting(s, flags) }.map(deliver)
        }
        Err(e) => Err(errno_of(*e)),
    }
}

/// [`recv_msg`] when it must wait.
///
/// # Safety
/// As for [`socket`].
#[cold]
#[inline(never)]
unsafe fn recv_waiting(s: *mut c_void, flags: RecvFlags) -> Result<Msg, Errno> {
    // SAFETY: forwarded caller contract.
    let mut held = unsafe { socket_in_use(s) }?;
    held.socket.recv(flags).map_err(errno_of)
}

/// Receives one frame into `buf`, copying at most `len` bytes; returns the frame's size
/// (clipped to `INT_MAX`), which may exceed `len`.
///
/// # Safety
/// `s` is NULL or a readable pointer (tag-checked); `buf` is NULL with `len` 0, or writable for
/// `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_recv(
    s: *mut c_void,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        unsafe { socket(s) }?;
        if buf.is_null() && len != 0 {
            return Err(Errno(EFAULT));
        }
        // SAFETY: forwarded caller contract.
        unsafe {
            recv_msg(s, flags, |msg| {
                let n = msg.len().min(len);
                if n > 0 {
                    // SAFETY: `buf` is writable for `len >= n` bytes and cannot overlap the
                    // received frame, which the runtime owns.
                    core::ptr::copy_nonoverlapping(msg.data.as_ptr(), buf.cast::<u8>(), n);
                }
                clipped(msg.len())
            })
        }
    })
}

/// Receives one frame into `msg` (which must be initialised; its old content is released);
/// returns the frame's size.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`; `s` as for [`zmq_recv`].
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_recv(msg: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        unsafe { socket(s) }?;
        // SAFETY: forwarded caller contract (libzmq also refuses an uninitialised message).
        let cell = unsafe { cell::get_mut(msg) }?;
        // SAFETY: forwarded caller contract.
        unsafe {
            recv_msg(s, flags, |received| {
                let size = received.len();
                cell.set_received(received);
                clipped(size)
            })
        }
    })
}

/// Legacy form of [`zmq_msg_recv`] with the socket first.
///
/// # Safety
/// As for [`zmq_msg_recv`].
#[no_mangle]
pub unsafe extern "C" fn zmq_recvmsg(s: *mut c_void, msg: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { zmq_msg_recv(msg, s, flags) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{ZMQ_DONTWAIT, ZMQ_PAIR, ZMQ_SNDMORE};
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::errno::{errno, ENOTSOCK};
    use crate::msg::{zmq_msg_close, zmq_msg_data, zmq_msg_gets, zmq_msg_init, zmq_msg_more};
    use crate::send::{zmq_msg_send, zmq_send};
    use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_socket};
    use core::mem::MaybeUninit;

    #[test]
    fn truncation_metadata_and_errors() {
        let ctx = zmq_ctx_new();
        // SAFETY: sockets and messages are live while used; buffers are sized as passed.
        unsafe {
            let a = zmq_socket(ctx, ZMQ_PAIR);
            let b = zmq_socket(ctx, ZMQ_PAIR);
            assert_eq!(zmq_bind(a, c"inproc://unit-recv".as_ptr()), 0);
            assert_eq!(zmq_connect(b, c"inproc://unit-recv".as_ptr()), 0);
            let mut buf = [0u8; 4];
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, ZMQ_DONTWAIT), -1);
            assert_eq!(errno(), libc::EAGAIN);

            assert_eq!(zmq_send(b, b"truncated".as_ptr().cast(), 9, ZMQ_SNDMORE), 9);
            assert_eq!(zmq_send(b, b"last".as_ptr().cast(), 4, 0), 4);
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, 0), 9);
            assert_eq!(&buf, b"trun");

            let mut m = MaybeUninit::<zmq_msg_t>::zeroed();
            let m = m.as_mut_ptr();
            assert_eq!(zmq_msg_recv(m, a, 0), -1, "uninitialised message");
            assert_eq!(errno(), EFAULT);
            zmq_msg_init(m);
            assert_eq!(zmq_msg_recv(m, a, 0), 4);
            assert_eq!(zmq_msg_more(m), 0);
            assert_eq!(
                core::slice::from_raw_parts(zmq_msg_data(m).cast::<u8>(), 4),
                b"last"
            );
            // An inproc message carries no metadata, as in libzmq.
            assert!(zmq_msg_gets(m, c"Socket-Type".as_ptr()).is_null());
            assert_eq!(errno(), libc::EINVAL);

            assert_eq!(zmq_msg_send(m, b, 0), 4);
            assert_eq!(crate::msg::zmq_msg_size(m), 0, "sent message is empty");
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, 0), 4);
            assert_eq!(zmq_msg_recv(m, core::ptr::null_mut(), 0), -1);
            assert_eq!(errno(), ENOTSOCK);
            zmq_msg_close(m);
            zmq_close(a);
            zmq_close(b);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
