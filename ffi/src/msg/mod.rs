//! `zmq_msg_*`: messages the C caller holds in its own 64-byte `zmq_msg_t`.
//!
//! The body is a `bytes::Bytes`, the same type the codec and the pipes carry, so a message
//! moves between C and the runtime without copying, and a zero-copy `zmq_msg_init_data` buffer
//! is released by whichever side drops the last reference.

pub(crate) mod bodies;
pub(crate) mod cell;
pub(crate) mod foreign;
pub(crate) mod props;

use core::ffi::{c_char, c_int, c_void, CStr};

use bytes::Bytes;

pub use cell::zmq_msg_t;
use cell::{Kind, MsgCell};
use foreign::ForeignBuffer;

use crate::boundary::{guard, non_null_const, Errno};
use crate::consts::{ZMQ_MORE, ZMQ_SHARED, ZMQ_SRCFD};
use crate::errno::{EFAULT, EINVAL};

/// Initialises an empty message.
///
/// # Safety
/// `msg` is NULL or points to writable `zmq_msg_t` storage.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init(msg: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { cell::put_empty(msg) }.map(|()| 0))
}

/// Initialises a message of `size` bytes, unfilled (as libzmq's), to be written through
/// `zmq_msg_data`.
///
/// # Safety
/// As for [`zmq_msg_init`].
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_size(msg: *mut zmq_msg_t, size: usize) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { cell::put_sized(msg, size) }.map(|()| 0))
}

/// Wraps the caller's buffer without copying. `ffn(data, hint)` is called exactly once, when the
/// last copy of the message is released (possibly on another thread); without `ffn` the buffer
/// is a constant that must outlive every use.
///
/// # Safety
/// `msg` as for [`zmq_msg_init`]; `data` is NULL with `size` 0, or valid for reads of `size`
/// bytes until `ffn` is called (forever without `ffn`).
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_data(
    msg: *mut zmq_msg_t,
    data: *mut c_void,
    size: usize,
    ffn: Option<unsafe extern "C" fn(data: *mut c_void, hint: *mut c_void)>,
    hint: *mut c_void,
) -> c_int {
    guard(|| {
        if data.is_null() && size != 0 {
            return Err(Errno(EFAULT));
        }
        if msg.is_null() {
            return Err(Errno(EFAULT));
        }
        let kind = if ffn.is_some() {
            Kind::Long
        } else {
            Kind::Constant
        };
        // SAFETY: the buffer contract is the caller's, forwarded.
        let owner = unsafe { ForeignBuffer::new(data.cast(), size, ffn, hint) };
        let cell = MsgCell::new(Bytes::from_owner(owner), kind);
        // SAFETY: forwarded caller contract.
        unsafe { cell::put(msg, cell) }.map(|()| 0)
    })
}

/// Releases the message; a closed, zeroed or never-initialised message is `EFAULT`.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_close(msg: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { cell::release(msg) }.map(|()| 0))
}

/// Moves `src` into `dest` (which must hold a live message, released first); `src` becomes
/// empty.
///
/// # Safety
/// Both are NULL or point to `zmq_msg_t`s.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_move(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract; no reference into either slot is held across a write.
    guard(|| unsafe {
        cell::get(src)?;
        cell::release(dest)?;
        if dest == src {
            // libzmq closes the message, then re-initialises the source: it ends up empty.
            return cell::put(dest, MsgCell::empty()).map(|()| 0);
        }
        let moved = cell::take(src)?;
        cell::put(dest, moved)?;
        cell::put(src, MsgCell::empty()).map(|()| 0)
    })
}

/// Makes `dest` (which must hold a live message, released first) a copy of `src`: long messages
/// share their body and both report `ZMQ_SHARED`; very small ones are duplicated.
///
/// # Safety
/// Both are NULL or point to `zmq_msg_t`s.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_copy(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract; the mutable view of `src` ends before `dest` is written.
    guard(|| unsafe {
        cell::get(src)?;
        if dest == src {
            return Ok(0);
        }
        cell::release(dest)?;
        let copy = cell::get_mut(src)?.copy();
        cell::put(dest, copy).map(|()| 0)
    })
}

/// The message body, writable; NULL (`EFAULT`) for a message that is not live.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`. Writing through the pointer is allowed for
/// messages from `zmq_msg_init_size`, as in libzmq; what a write does to shared copies is
/// unspecified there too.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_data(msg: *mut zmq_msg_t) -> *mut c_void {
    // SAFETY: forwarded caller contract.
    guard(|| Ok(unsafe { cell::get(msg) }?.body.as_ptr().cast_mut().cast()))
}

/// The body's size in bytes; 0 (`EFAULT`) for a message that is not live.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_size(msg: *const zmq_msg_t) -> usize {
    // SAFETY: forwarded caller contract.
    guard(|| Ok(unsafe { cell::get(msg) }?.body.len()))
}

/// 1 if more frames of the same message follow this one, else 0.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_more(msg: *const zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| Ok(c_int::from(unsafe { cell::get(msg) }?.more))).max(0)
}

/// `ZMQ_MORE` or `ZMQ_SHARED` (1 or 0), or `ZMQ_SRCFD` (the fd the message came in on); any
/// other property is `EINVAL`.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_get(msg: *const zmq_msg_t, property: c_int) -> c_int {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let cell = unsafe { cell::get(msg) }?;
        match property {
            ZMQ_MORE => Ok(c_int::from(cell.more)),
            ZMQ_SHARED => Ok(c_int::from(cell.is_shared())),
            // libzmq reads the private `__fd` property: -1 with EINVAL where there is none
            // (inproc, or a message not received).
            ZMQ_SRCFD => cell
                .metadata
                .as_ref()
                .and_then(|m| m.get(ferromq::connection_props::SRCFD_PROPERTY))
                .and_then(|v| core::str::from_utf8(v).ok()?.parse().ok())
                .ok_or(Errno(EINVAL)),
            _ => Err(Errno(EINVAL)),
        }
    })
}

/// libzmq 4.3 defines no settable message property: always `EINVAL`.
#[no_mangle]
pub extern "C" fn zmq_msg_set(_msg: *mut zmq_msg_t, _property: c_int, _value: c_int) -> c_int {
    guard(|| Err(Errno(EINVAL)))
}

/// A metadata property of a received message ("Socket-Type", "Identity", "User-Id",
/// "Peer-Address", user properties the peer announced), looked up by its exact name as libzmq
/// does ("Identity" falling back to "Routing-Id"); NULL with `EINVAL` for a property the
/// message does not have. The string belongs to the message and lives until it is closed.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`; `property` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_gets(
    msg: *const zmq_msg_t,
    property: *const c_char,
) -> *const c_char {
    guard(|| {
        let property = non_null_const(property)?;
        // SAFETY: forwarded caller contract.
        let cell = unsafe { cell::get(msg) }?;
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(property.as_ptr()) }
            .to_str()
            .map_err(|_| Errno(EINVAL))?;
        let metadata = cell.metadata.as_ref().ok_or(Errno(EINVAL))?;
        let table = cell
            .props
            .get_or_init(|| Box::new(props::Props::new(metadata)));
        let value = table.get(name).ok_or(Errno(EINVAL))?;
        Ok(value.as_ptr().cast())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;
    use core::mem::MaybeUninit;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn uninit() -> MaybeUninit<zmq_msg_t> {
        MaybeUninit::zeroed()
    }

    unsafe extern "C" fn count_free(_data: *mut c_void, hint: *mut c_void) {
        // SAFETY: tests pass a live AtomicUsize as hint.
        unsafe { &*hint.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn init_size_data_size_close() {
        let mut m = uninit();
        let m = m.as_mut_ptr();
        // SAFETY: m is valid storage throughout.
        unsafe {
            assert_eq!(zmq_msg_init_size(m, 5), 0);
            assert_eq!(zmq_msg_size(m), 5);
            core::ptr::copy_nonoverlapping(b"hello".as_ptr(), zmq_msg_data(m).cast(), 5);
            let body = core::slice::from_raw_parts(zmq_msg_data(m).cast::<u8>(), 5);
            assert_eq!(body, b"hello");
            assert_eq!(zmq_msg_more(m), 0);
            assert_eq!(zmq_msg_close(m), 0);
            assert_eq!(zmq_msg_close(m), -1);
            assert_eq!(errno(), EFAULT);
            assert!(zmq_msg_data(m).is_null());
        }
    }

    #[test]
    fn zero_copy_free_once_across_copies_and_moves() {
        let calls = AtomicUsize::new(0);
        let hint = (&calls as *const AtomicUsize).cast_mut().cast();
        let mut buf = *b"payload-larger-than-a-very-small-message";
        let (mut a, mut b, mut c) = (uninit(), uninit(), uninit());
        let (a, b, c) = (a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr());
        // SAFETY: storage and buffer outlive the messages.
        unsafe {
            let data = buf.as_mut_ptr().cast();
            assert_eq!(
                zmq_msg_init_data(a, data, buf.len(), Some(count_free), hint),
                0
            );
            assert_eq!(zmq_msg_data(a), data, "zero copy");
            assert_eq!(zmq_msg_get(a, ZMQ_SHARED), 0);
            zmq_msg_init(b);
            zmq_msg_init(c);
            assert_eq!(zmq_msg_copy(b, a), 0);
            assert_eq!(zmq_msg_get(a, ZMQ_SHARED), 1);
            assert_eq!(zmq_msg_get(b, ZMQ_SHARED), 1);
            assert_eq!(zmq_msg_move(c, b), 0);
            assert_eq!(zmq_msg_size(b), 0, "moved-from is empty");
            assert_eq!(zmq_msg_close(a), 0);
            assert_eq!(zmq_msg_close(b), 0);
            assert_eq!(calls.load(Ordering::SeqCst), 0);
            assert_eq!(zmq_msg_data(c), data);
            assert_eq!(zmq_msg_close(c), 0);
            assert_eq!(calls.load(Ordering::SeqCst), 1);
        }
    }

    #[test]
    fn constant_message_is_shared_and_never_freed() {
        static TEXT: [u8; 3] = *b"abc";
        let mut m = uninit();
        let m = m.as_mut_ptr();
        // SAFETY: TEXT is static; storage is valid.
        unsafe {
            let rc = zmq_msg_init_data(
                m,
                TEXT.as_ptr().cast_mut().cast(),
                3,
                None,
                core::ptr::null_mut(),
            );
            assert_eq!(rc, 0);
            assert_eq!(zmq_msg_get(m, ZMQ_SHARED), 1);
            assert_eq!(zmq_msg_close(m), 0);
        }
    }

    #[test]
    fn errors_follow_libzmq() {
        let mut m = uninit();
        let m = m.as_mut_ptr();
        let mut other = uninit();
        let other = other.as_mut_ptr();
        // SAFETY: storage is valid; NULLs are rejected before use.
        unsafe {
            assert_eq!(zmq_msg_init(core::ptr::null_mut()), -1);
            assert_eq!(errno(), EFAULT);
            assert_eq!(zmq_msg_close(m), -1, "zeroed storage is not a message");
            assert_eq!(errno(), EFAULT);
            let rc = zmq_msg_init_data(m, core::ptr::null_mut(), 4, None, core::ptr::null_mut());
            assert_eq!((rc, errno()), (-1, EFAULT));
            zmq_msg_init(m);
            assert_eq!(zmq_msg_get(m, 42), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_msg_set(m, ZMQ_MORE, 1), -1);
            assert_eq!(errno(), EINVAL);
            assert!(zmq_msg_gets(m, c"Socket-Type".as_ptr()).is_null());
            assert_eq!(errno(), EINVAL);
            assert!(zmq_msg_gets(m, core::ptr::null()).is_null());
            assert_eq!(errno(), EFAULT);
            assert_eq!(zmq_msg_copy(other, m), -1, "dest must be a live message");
            assert_eq!(errno(), EFAULT);
            assert_eq!(zmq_msg_move(m, other), -1, "src must be a live message");
            assert_eq!(zmq_msg_size(m), 0);
            assert_eq!(zmq_msg_move(m, m), 0);
            assert_eq!(zmq_msg_close(m), 0);
        }
    }
}
