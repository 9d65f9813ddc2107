//! Where `zmq_msg_init_size` bodies come from: buffers each C thread recycles.
//!
//! libzmq mallocs every body over 33 bytes and the receiver frees it, on another thread: the
//! cross-thread free and the sender's next malloc meet on glibc's arena lock, and a large body
//! is fresh memory to fault in whenever glibc's adaptive thresholds send it to `mmap`. Here a
//! body is cut from the calling thread's [`SendBuffers`] (what `zmq_send` copies into, per
//! socket), so in a steady stream a message costs a reference count, not an allocation; when
//! every kept buffer is still held by messages in flight, or the body is over 256 KiB, it is
//! memory of its own, as in libzmq, taken back for reuse when its message is gone
//! (`ferromq::body_pool`).
//!
//! The price, as for sockets: a live message keeps its whole buffer (256 KiB) alive, and a
//! thread that has made messages keeps up to 3 MiB for reuse until it exits.

use core::cell::RefCell;

use bytes::Bytes;
use ferromq::send_buffers::SendBuffers;

use crate::boundary::Errno;
use crate::errno::ENOMEM;

thread_local! {
    static BODIES: RefCell<SendBuffers> = RefCell::new(SendBuffers::default());
}

/// [`body_into`] returning the body (for tests: `zmq_msg_init_size` places it in the message).
#[cfg(test)]
pub fn body(size: usize) -> Result<Bytes, Errno> {
    let mut body = core::mem::MaybeUninit::<Bytes>::uninit();
    // SAFETY: `body` is writable, and read only once `body_into` has written it (`Ok`).
    unsafe {
        body_into(body.as_mut_ptr(), size)?;
        Ok(body.assume_init())
    }
}

/// A body of `size` bytes for the caller to fill through `zmq_msg_data`, not filled per
/// message (it holds a previous message's bytes or zeros, as libzmq's `malloc`ed body holds
/// whatever it holds), written to `dst`; `ENOMEM` when it cannot be allocated.
///
/// Written rather than returned: a returned `Bytes` went through a copy on
/// the stack, stored in pieces and read back by `zmq_msg_init_size` with wide loads, which
/// wait for those stores to complete (no store forwarding across pieces): about half of
/// `zmq_msg_init_size`'s own samples in `inproc_thr 64` (issue 18, session 15).
///
/// # Safety
/// `dst` is valid for writing a `Bytes`; what it held is overwritten, not dropped.
#[inline(always)]
pub unsafe fn body_into(dst: *mut Bytes, size: usize) -> Result<(), Errno> {
    if size == 0 {
        // SAFETY: forwarded caller contract.
        unsafe { dst.write(Bytes::new()) };
        return Ok(());
    }
    let placed = BODIES
        .try_with(|bodies| {
            let Ok(mut bodies) = bodies.try_borrow_mut() else {
                return false;
            };
            let Some(buf) = bodies.room(size) else {
                return false;
            };
            // SAFETY: `room` leaves at least `size` bytes of capacity, within a buffer that
            // was zeroed when it was made (`SendBuffers::room`) and never de-initialised since,
            // so the bytes are initialised: a previous message's, or zeros. As with libzmq's
            // `malloc`ed body, they are the C caller's to overwrite through `zmq_msg_data`.
            unsafe { buf.set_len(size) };
            // SAFETY: forwarded caller contract.
            unsafe { dst.write(buf.split().freeze()) };
            true
        })
        .unwrap_or(false);
    if !placed {
        let body = pooled(size)?;
        // SAFETY: forwarded caller contract.
        unsafe { dst.write(body) };
    }
    Ok(())
}

/// A body from the thread's pool, for when its recycled buffers cannot hold one.
#[cold]
#[inline(never)]
fn pooled(size: usize) -> Result<Bytes, Errno> {
    ferromq::body_pool::body(size).ok_or(Errno(ENOMEM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_have_their_size_and_are_independent() {
        for size in [1, 64, 4096, 256 * 1024, 256 * 1024 + 1] {
            let a = body(size).unwrap();
            let b = body(size).unwrap();
            assert_eq!((a.len(), b.len()), (size, size));
            let (pa, pb) = (a.as_ptr() as usize, b.as_ptr() as usize);
            assert!(
                pa + size <= pb || pb + size <= pa,
                "{size}: overlapping bodies"
            );
        }
        assert!(body(0).unwrap().is_empty());
        assert_eq!(body(usize::MAX).err(), Some(Errno(ENOMEM)));
    }

    #[test]
    fn a_body_is_reused_once_its_message_is_gone() {
        let first = body(200_000).unwrap();
        let at = first.as_ptr();
        drop(first);
        let again = (0..16).any(|_| body(200_000).unwrap().as_ptr() == at);
        assert!(again, "the buffer came back");
    }
}
