//! `zmq_send`, `zmq_send_const`, `zmq_msg_send`, `zmq_sendmsg`.
//!
//! `zmq_msg_send` hands the message's `Bytes` to the runtime without copying and leaves the
//! `zmq_msg_t` empty, as libzmq does. On failure libzmq leaves the message untouched: the body
//! moves into `Socket::send`, which gives it back with the error, so a message is never shared
//! with the runtime just in case (a clone of a `Bytes` made from a `Vec` allocates, once per
//! message).

use core::ffi::{c_int, c_void};

use bytes::Bytes;
use ferromq::{Msg, SendFlags};

use crate::boundary::{guard, Errno};
use crate::errno::EFAULT;
use crate::msg::cell;
use crate::msg::foreign::ForeignBuffer;
use crate::msg::zmq_msg_t;
use crate::socket::{errno_of, socket_in_use, SocketHandle};

/// libzmq returns sizes as `int`, clipped to `INT_MAX`.
pub fn clipped(size: usize) -> c_int {
    c_int::try_from(size).unwrap_or(c_int::MAX)
}

fn flags_of(flags: c_int) -> SendFlags {
    SendFlags::from_bits_truncate(flags)
}

fn send_body(handle: &mut SocketHandle, body: Bytes, flags: c_int) -> Result<c_int, Errno> {
    let size = body.len();
    handle
        .socket
        .send(Msg::new(body), flags_of(flags))
        .map_err(errno_of)?;
    Ok(clipped(size))
}

/// Sends a copy of `len` bytes from `buf`; returns `len` (clipped to `INT_MAX`).
///
/// # Safety
/// `s` is NULL or a readable pointer (tag-checked); `buf` is NULL with `len` 0, or readable for
/// `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_send(
    s: *mut c_void,
    buf: *const c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        let mut handle = unsafe { socket_in_use(s) }?;
        let data: &[u8] = if len == 0 {
            &[]
        } else if buf.is_null() {
            return Err(Errno(EFAULT));
        } else {
            // SAFETY: non-NULL and readable for `len` bytes per the contract.
            unsafe { core::slice::from_raw_parts(buf.cast(), len) }
        };
        handle
            .socket
            .send_slice(data, flags_of(flags))
            .map_err(errno_of)?;
        Ok(clipped(len))
    })
}

/// Sends `len` bytes from `buf` without copying: the buffer must stay valid and unchanged for
/// as long as the message may be in flight (libzmq's contract: a constant).
///
/// # Safety
/// As for [`zmq_send`], and `buf` outlives every use of the message.
#[no_mangle]
pub unsafe extern "C" fn zmq_send_const(
    s: *mut c_void,
    buf: *const c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        let mut handle = unsafe { socket_in_use(s) }?;
        if buf.is_null() && len != 0 {
            return Err(Errno(EFAULT));
        }
        // SAFETY: the caller guarantees the buffer is constant and outlives the message.
        let owner =
            unsafe { ForeignBuffer::new(buf.cast_mut().cast(), len, None, core::ptr::null_mut()) };
        send_body(&mut handle, Bytes::from_owner(owner), flags)
    })
}

/// Sends the message (one frame; `ZMQ_SNDMORE` says more follow) and leaves `msg` empty;
/// returns its size. On failure `msg` is unchanged.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`; `s` as for [`zmq_send`].
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_send(msg: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        let mut handle = unsafe { socket_in_use(s) }?;
        // SAFETY: forwarded caller contract; the view ends before the slot is rewritten.
        let cell = unsafe { cell::get_mut(msg) }?;
        let body = core::mem::take(&mut cell.body);
        let size = body.len();
        if let Err(refused) = handle.socket.send(Msg::new(body), flags_of(flags)) {
            let errno = errno_of(refused.error());
            cell.body = refused.into_message().data;
            return Err(errno);
        }
        cell.clear();
        Ok(clipped(size))
    })
}

/// Legacy form of [`zmq_msg_send`] with the socket first.
///
/// # Safety
/// As for [`zmq_msg_send`].
#[no_mangle]
pub unsafe extern "C" fn zmq_sendmsg(s: *mut c_void, msg: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { zmq_msg_send(msg, s, flags) }
}
