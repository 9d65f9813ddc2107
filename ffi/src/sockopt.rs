//! `zmq_setsockopt` / `zmq_getsockopt`: the runtime's option table
//! ([`ferromq::option::TABLE`]) with the C caller's buffer passed whole, so the table's rules
//! decide what libzmq decides: integer options need exactly `sizeof (int)` bytes (8 for the
//! 64-bit ones), the socket's own values (`ZMQ_RCVMORE`, `ZMQ_FD`, `ZMQ_EVENTS`) at least that,
//! strings and blobs a buffer large enough for the value (`ZMQ_LAST_ENDPOINT` with its NUL), the
//! rest of which is zero-filled. On success `*optvallen` becomes the size written.

use core::ffi::{c_int, c_void};

use ferromq::option::{Input, ZMQ_EVENTS, ZMQ_RCVMORE};

use crate::boundary::{guard, non_null, Errno};
use crate::errno::EFAULT;
use crate::socket::{errno_of, registered_socket, socket};

/// Sets a socket option: `optval` holds `optvallen` bytes (a C `int` for integer options).
///
/// # Safety
/// `s` is anything (checked); `optval` is NULL or readable for `optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_setsockopt(
    s: *mut c_void,
    option: c_int,
    optval: *const c_void,
    optvallen: usize,
) -> c_int {
    guard(|| {
        // SAFETY: registry-checked; one thread per socket per the C contract.
        let handle = unsafe { registered_socket(s) }?;
        let value: &[u8] = if optvallen == 0 {
            &[]
        } else if optval.is_null() {
            return Err(Errno(EFAULT));
        } else {
            // SAFETY: non-NULL and readable for `optvallen` bytes per the contract.
            unsafe { core::slice::from_raw_parts(optval.cast(), optvallen) }
        };
        let input = Input {
            bytes: value,
            null: optval.is_null(),
        };
        handle
            .socket
            .set_option_input(option, input)
            .map_err(errno_of)?;
        Ok(0)
    })
}

/// Reads a socket option into `optval`; `*optvallen` is the buffer's size on entry and the
/// value's size on return.
///
/// # Safety
/// `s` is anything (checked); `optvallen` is NULL or points to a `size_t`; `optval` is NULL or
/// writable for `*optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_getsockopt(
    s: *mut c_void,
    option: c_int,
    optval: *mut c_void,
    optvallen: *mut usize,
) -> c_int {
    guard(|| {
        // ZMQ_EVENTS and ZMQ_RCVMORE are read once per message by a classic C loop: they take
        // the per-message check (the tag, as zmq_send and zmq_recv do) rather than the
        // registry's, whose lock is two locked instructions.
        let handle = if matches!(option, ZMQ_EVENTS | ZMQ_RCVMORE) {
            // SAFETY: tag-checked; one thread per socket per the C contract.
            unsafe { socket(s) }?
        } else {
            // SAFETY: registry-checked; one thread per socket per the C contract.
            unsafe { registered_socket(s) }?
        };
        let mut len_ptr = non_null(optvallen)?;
        // SAFETY: non-NULL, points to a size_t per the contract.
        let len = unsafe { len_ptr.as_mut() };
        let out: &mut [u8] = if *len == 0 {
            &mut []
        } else {
            let ptr = non_null(optval)?;
            // SAFETY: non-NULL and writable for `*len` bytes per the contract.
            unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr().cast(), *len) }
        };
        // One of the socket's own calls (one thread per socket): ZMQ_EVENTS and the
        // pattern's options are read without a locked instruction.
        let written = handle
            .socket
            .get_option_raw_mut(option, out)
            .map_err(errno_of)?;
        *len = written;
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{
        ZMQ_DEALER, ZMQ_LAST_ENDPOINT, ZMQ_LINGER, ZMQ_MAXMSGSIZE, ZMQ_SNDHWM, ZMQ_TYPE,
    };
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::errno::errno;
    use crate::errno::EINVAL;
    use crate::socket::{zmq_close, zmq_socket};

    #[test]
    fn sizes_are_checked_as_libzmq_does() {
        let ctx = zmq_ctx_new();
        // SAFETY: ctx and s are live; buffers are local and sized as passed.
        unsafe {
            let s = zmq_socket(ctx, ZMQ_DEALER);
            let hwm: c_int = 10;
            let p = (&hwm as *const c_int).cast();
            assert_eq!(zmq_setsockopt(s, ZMQ_SNDHWM, p, 4), 0);
            assert_eq!(zmq_setsockopt(s, ZMQ_SNDHWM, p, 2), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_setsockopt(s, ZMQ_SNDHWM, core::ptr::null(), 4), -1);
            assert_eq!(errno(), EFAULT);

            let mut out = [0u8; 16];
            let mut len = 4usize;
            assert_eq!(
                zmq_getsockopt(s, ZMQ_SNDHWM, out.as_mut_ptr().cast(), &mut len),
                0
            );
            assert_eq!(c_int::from_ne_bytes(out[..4].try_into().unwrap()), 10);
            let mut len = 8usize;
            assert_eq!(
                zmq_getsockopt(s, ZMQ_TYPE, out.as_mut_ptr().cast(), &mut len),
                -1,
                "options_t ints need exactly sizeof(int)"
            );
            assert_eq!(errno(), EINVAL);
            let mut len = 8usize;
            assert_eq!(
                zmq_getsockopt(s, ZMQ_EVENTS, out.as_mut_ptr().cast(), &mut len),
                0,
                "ZMQ_EVENTS accepts a larger buffer"
            );
            assert_eq!(len, 4);
            let mut len = 4usize;
            assert_eq!(
                zmq_getsockopt(
                    s,
                    ZMQ_LINGER,
                    out.as_mut_ptr().cast(),
                    core::ptr::null_mut()
                ),
                -1
            );
            assert_eq!(errno(), EFAULT);
            assert_eq!(
                zmq_getsockopt(s, ZMQ_MAXMSGSIZE, out.as_mut_ptr().cast(), &mut len),
                -1
            );
            let mut len = 16usize;
            assert_eq!(
                zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out.as_mut_ptr().cast(), &mut len),
                0
            );
            assert_eq!(len, 1, "empty endpoint with its NUL");
            assert_eq!(zmq_close(s), 0);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
