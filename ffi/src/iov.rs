//! `zmq_sendiov` / `zmq_recviov`: a multipart message from or into an array of `struct iovec`,
//! with libzmq 4.3's exact semantics, which are not what the names suggest:
//!
//! - `zmq_sendiov` sends each element as one part with the caller's flags, except that the
//!   last part never has `ZMQ_SNDMORE`: without `ZMQ_SNDMORE` in `flags`, every element is a
//!   message of its own. It returns the size of the last part sent.
//! - `zmq_recviov` receives at most `*count` parts, stopping after a part without the more
//!   flag, into buffers it `malloc`s (the caller `free`s each `iov_base`); `*count` becomes the
//!   number of parts received and is also the return value. Parts beyond `*count` stay queued.
//!
//! Both check the socket first (`ENOTSOCK`), then the array and count (`EINVAL`).

use core::ffi::{c_int, c_void};

use ferromq::{RecvFlags, SendFlags};

use crate::boundary::{guard, Errno};
use crate::consts::ZMQ_SNDMORE;
use crate::errno::{EINVAL, ENOMEM};
use crate::send::clipped;
use crate::socket::{errno_of, socket};

/// Sends `count` parts from `iov`; returns the last part's size.
///
/// # Safety
/// `s` is anything (checked); `iov` is NULL or valid for `count` elements, each `iov_base`
/// valid for `iov_len` bytes (or anything when `iov_len` is 0).
#[no_mangle]
pub unsafe extern "C" fn zmq_sendiov(
    s: *mut c_void,
    iov: *mut libc::iovec,
    count: usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let handle = unsafe { socket(s) }?;
        if count == 0 || iov.is_null() {
            return Err(Errno(EINVAL));
        }
        // SAFETY: non-NULL and valid for `count` elements per the contract.
        let parts = unsafe { core::slice::from_raw_parts(iov, count) };
        let mut sent = 0;
        for (i, part) in parts.iter().enumerate() {
            let data: &[u8] = if part.iov_len == 0 {
                &[]
            } else {
                // SAFETY: valid for `iov_len` bytes per the contract.
                unsafe { core::slice::from_raw_parts(part.iov_base.cast::<u8>(), part.iov_len) }
            };
            let part_flags = if i + 1 == count {
                flags & !ZMQ_SNDMORE
            } else {
                flags
            };
            handle
                .socket
                .send_slice(data, SendFlags::from_bits_truncate(part_flags))
                .map_err(errno_of)?;
            sent = clipped(data.len());
        }
        Ok(sent)
    })
}

/// Receives up to `*count` parts into `malloc`ed buffers; returns the number received.
///
/// # Safety
/// `s` is anything (checked); `count` is NULL or valid; `iov` is NULL or valid for `*count`
/// elements, which are overwritten.
#[no_mangle]
pub unsafe extern "C" fn zmq_recviov(
    s: *mut c_void,
    iov: *mut libc::iovec,
    count: *mut usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let handle = unsafe { socket(s) }?;
        if count.is_null() || iov.is_null() {
            return Err(Errno(EINVAL));
        }
        // SAFETY: non-NULL and valid per the contract.
        let capacity = unsafe { count.read() };
        if capacity == 0 {
            return Err(Errno(EINVAL));
        }
        // SAFETY: as above; libzmq resets the count before the first receive.
        unsafe { count.write(0) };
        let mut received: usize = 0;
        while received < capacity {
            let msg = handle
                .socket
                .recv_frame(RecvFlags::from_bits_truncate(flags))
                .map_err(errno_of)?;
            // SAFETY: malloc of any size is sound; a NULL result is handled below.
            let buf = unsafe { libc::malloc(msg.len()) };
            if buf.is_null() && !msg.is_empty() {
                return Err(Errno(ENOMEM));
            }
            if !msg.is_empty() {
                // SAFETY: `buf` holds `msg.len()` fresh bytes.
                unsafe { core::ptr::copy_nonoverlapping(msg.data.as_ptr(), buf.cast(), msg.len()) };
            }
            // SAFETY: `received < capacity`, in bounds of the caller's array.
            unsafe {
                iov.add(received).write(libc::iovec {
                    iov_base: buf,
                    iov_len: msg.len(),
                })
            };
            received += 1;
            // SAFETY: as above.
            unsafe { count.write(received) };
            if !msg.more {
                break;
            }
        }
        Ok(clipped(received))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{ZMQ_DONTWAIT, ZMQ_PAIR};
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::errno::{errno, ENOTSOCK};
    use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_socket};

    #[test]
    fn round_trip_and_errors() {
        let ctx = zmq_ctx_new();
        // SAFETY: handles from zmq_socket, arrays sized as passed.
        unsafe {
            let a = zmq_socket(ctx, ZMQ_PAIR);
            let b = zmq_socket(ctx, ZMQ_PAIR);
            assert_eq!(zmq_bind(a, c"inproc://unit-iov".as_ptr()), 0);
            assert_eq!(zmq_connect(b, c"inproc://unit-iov".as_ptr()), 0);
            let mut data = [*b"abc", *b"de\0", *b"fgh"];
            let mut out: Vec<libc::iovec> = data
                .iter_mut()
                .enumerate()
                .map(|(i, d)| libc::iovec {
                    iov_base: d.as_mut_ptr().cast(),
                    iov_len: 3 - (i % 2),
                })
                .collect();
            assert_eq!(zmq_sendiov(b, out.as_mut_ptr(), 3, ZMQ_SNDMORE), 3);
            let mut got = [libc::iovec {
                iov_base: core::ptr::null_mut(),
                iov_len: 0,
            }; 2];
            let mut n = 2;
            assert_eq!(zmq_recviov(a, got.as_mut_ptr(), &mut n, 0), 2);
            assert_eq!(
                n, 2,
                "stops at the array's end; the third part stays queued"
            );
            assert_eq!(got[1].iov_len, 2);
            for part in got {
                libc::free(part.iov_base);
            }
            n = 2;
            assert_eq!(zmq_recviov(a, got.as_mut_ptr(), &mut n, 0), 1);
            assert_eq!(n, 1);
            assert_eq!(
                core::slice::from_raw_parts(got[0].iov_base.cast::<u8>(), 3),
                b"fgh"
            );
            libc::free(got[0].iov_base);

            assert_eq!(zmq_recviov(a, got.as_mut_ptr(), &mut n, ZMQ_DONTWAIT), -1);
            assert_eq!(errno(), libc::EAGAIN);
            assert_eq!(n, 0);
            n = 0;
            assert_eq!(zmq_recviov(a, got.as_mut_ptr(), &mut n, 0), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_sendiov(b, out.as_mut_ptr(), 0, 0), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(
                zmq_sendiov(core::ptr::null_mut(), out.as_mut_ptr(), 0, 0),
                -1
            );
            assert_eq!(errno(), ENOTSOCK);
            zmq_close(a);
            zmq_close(b);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
