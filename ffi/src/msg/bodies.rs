//! Where `zmq_msg_init_size` bodies come from: buffers each C thread recycles.
//!
//! libzmq mallocs every body over 33 bytes and the receiver frees it, on another thread: the
//! cross-thread free and the sender's next malloc meet on glibc's arena lock, and a large body
//! is fresh memory to fault in whenever glibc's adaptive thresholds send it to `mmap`. Here a
//! body is cut from the calling thread's [`SendBuffers`] (what `zmq_send` copies into, per
//! socket), so in a steady stream a message costs a reference count, not an allocation; when
//! every kept buffer is still held by messages in flight, or the body is over 256 KiB, it is
//! one allocation of its own, as in libzmq.
//!
//! The price, as for sockets: a live message keeps its whole buffer (256 KiB) alive, and a
//! thread that has made messages keeps up to 2 MiB for reuse until it exits.

use core::cell::RefCell;

use bytes::Bytes;
use ferromq::send_buffers::SendBuffers;

use crate::boundary::Errno;
use crate::errno::ENOMEM;

thread_local! {
    static BODIES: RefCell<SendBuffers> = RefCell::new(SendBuffers::default());
}

/// A body of `size` bytes for the caller to fill through `zmq_msg_data`, not filled per
/// message (it holds a previous message's bytes or zeros, as libzmq's `malloc`ed body holds
/// whatever it holds); `ENOMEM` when it cannot be allocated.
pub fn body(size: usize) -> Result<Bytes, Errno> {
    if size == 0 {
        return Ok(Bytes::new());
    }
    let recycled = BODIES
        .try_with(|bodies| {
            let mut bodies = bodies.try_borrow_mut().ok()?;
            let buf = bodies.room(size)?;
            // SAFETY: `room` leaves at least `size` bytes of capacity, within a buffer that
            // was zeroed when it was made (`SendBuffers::room`) and never de-initialised since,
            // so the bytes are initialised: a previous message's, or zeros. As with libzmq's
            // `malloc`ed body, they are the C caller's to overwrite through `zmq_msg_data`.
            unsafe { buf.set_len(size) };
            Some(buf.split().freeze())
        })
        .ok()
        .flatten();
    match recycled {
        Some(body) => Ok(body),
        None => own_allocation(size),
    }
}

/// One allocation and nothing else: the `Vec`, its length equal to its capacity, becomes the
/// `Bytes` without a second allocation or a copy. Zeroed by the allocator (calloc), so the
/// bytes are initialised; a large body comes from fresh pages the kernel zeroes lazily, so
/// that costs no pass over the memory, unlike the `vec![0; size]`-then-write of before.
fn own_allocation(size: usize) -> Result<Bytes, Errno> {
    let layout = std::alloc::Layout::array::<u8>(size).map_err(|_| Errno(ENOMEM))?;
    // SAFETY: `layout` has a non-zero size (`body` returns early for 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Errno(ENOMEM));
    }
    // SAFETY: `ptr` was allocated by the global allocator with `layout` (align 1, `size`
    // bytes), all of them zero-initialised, which is exactly what a `Vec<u8>` of length and
    // capacity `size` owns.
    let body = unsafe { Vec::from_raw_parts(ptr, size, size) };
    Ok(Bytes::from(body))
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
