//! `zmq_send`, `zmq_send_const`, `zmq_msg_send`, `zmq_sendmsg`.
//!
//! `zmq_msg_send` hands the message's `Bytes` to the runtime without copying and leaves the
//! `zmq_msg_t` empty, as libzmq does. On failure libzmq leaves the message untouched: the body
//! moves into `Socket::send`, which gives it back with the error, so a message is never shared
//! with the runtime just in case (a clone of a `Bytes` made from a `Vec` allocates, once per
//! message).

use core::ffi::{c_int, c_void};

use bytes::Bytes;
use ferromq::{Error, Msg, SendFlags};

use crate::boundary::{guard, Errno};
use crate::errno::EFAULT;
use crate::msg::cell;
use crate::msg::foreign::ForeignBuffer;
use crate::msg::zmq_msg_t;
use crate::socket::{errno_of, socket, socket_in_use};

/// libzmq returns sizes as `int`, clipped to `INT_MAX`.
pub fn clipped(size: usize) -> c_int {
    c_int::try_from(size).unwrap_or(c_int::MAX)
}

fn flags_of(flags: c_int) -> SendFlags {
    SendFlags::from_bits_truncate(flags)
}

/// Sends `msg` on the socket behind `s`: once without waiting, and only if that finds no room
/// and `flags` allow waiting, again with the socket counted in use while it waits (see
/// `socket_in_use`). A refused message comes back with the errno.
///
/// # Safety
/// As for [`socket`].
#[inline(always)]
unsafe fn send_msg(s: *mut c_void, msg: Msg, flags: c_int) -> Result<(), (Errno, Msg)> {
    let flags = flags_of(flags);
    // SAFETY: tag-checked; one thread per socket per the C contract.
    let handle = match unsafe { socket(s) } {
        Ok(handle) => handle,
        Err(e) => return Err((e, msg)),
    };
    match handle.socket.send(msg, flags | SendFlags::DONTWAIT) {
        Ok(()) => Ok(()),
        Err(refused) => {
            // SAFETY: forwarded; `handle` is not used past this point.
            unsafe { send_refused(s, refused, flags) }
        }
    }
}

/// [`send_msg`] when its first try was refused: waits and tries again if that is allowed.
///
/// # Safety
/// As for [`socket`].
#[cold]
#[inline(never)]
unsafe fn send_refused(
    s: *mut c_void,
    refused: ferromq::SendError<Msg>,
    flags: SendFlags,
) -> Result<(), (Errno, Msg)> {
    let error = refused.error();
    let msg = refused.into_message();
    if error != Error::Again || flags.contains(SendFlags::DONTWAIT) {
        return Err((errno_of(error), msg));
    }
    // SAFETY: forwarded caller contract.
    match unsafe { socket_in_use(s) } {
        Ok(mut held) => held
            .socket
            .send(msg, flags)
            .map_err(|refused| (errno_of(refused.error()), refused.into_message())),
        Err(e) => Err((e, msg)),
    }
}

fn send_body(s: *mut c_void, body: Bytes, flags: c_int) -> Result<c_int, Errno> {
    let size = body.len();
    // SAFETY: forwarded caller contract.
    unsafe { send_msg(s, Msg::new(body), flags) }.map_err(|(e, _)| e)?;
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
        let handle = unsafe { socket(s) }?;
        let data: &[u8] = if len == 0 {
            &[]
        } else if buf.is_null() {
            return Err(Errno(EFAULT));
        } else {
            // SAFETY: non-NULL and readable for `len` bytes per the contract.
            unsafe { core::slice::from_raw_parts(buf.cast(), len) }
        };
        // Once without waiting; when that finds no room, the copy it made goes to `send_msg`.
        let dontwait = flags_of(flags) | SendFlags::DONTWAIT;
        if let Err(refused) = handle.socket.send_slice(data, dontwait) {
            // SAFETY: forwarded caller contract; `handle` is not used past this point.
            unsafe { send_refused(s, refused, flags_of(flags)) }.map_err(|(e, _)| e)?;
        }
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
        unsafe { socket(s) }?;
        if buf.is_null() && len != 0 {
            return Err(Errno(EFAULT));
        }
        // SAFETY: the caller guarantees the buffer is constant and outlives the message.
        let owner =
            unsafe { ForeignBuffer::new(buf.cast_mut().cast(), len, None, core::ptr::null_mut()) };
        send_body(s, Bytes::from_owner(owner), flags)
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
        unsafe { socket(s) }?;
        // SAFETY: forwarded caller contract; the view ends before the slot is rewritten.
        let cell = unsafe { cell::get_mut(msg) }?;
        let body = cell.take_body();
        let size = body.len();
        // SAFETY: forwarded caller contract.
        if let Err((errno, refused)) = unsafe { send_msg(s, Msg::new(body), flags) } {
            cell.body = refused.data;
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
