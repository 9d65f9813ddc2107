//! Caller-owned memory inside a `Bytes`, for zero-copy `zmq_msg_init_data`.
//!
//! `Bytes::from_owner` keeps the owner alive until the last clone of the `Bytes` drops, then
//! drops it once; dropping a [`ForeignBuffer`] calls the caller's free function, so the C
//! contract "ffn is called exactly once, when the message data is no longer needed" is the
//! reference count of `Bytes` itself, across `zmq_msg_copy` and (later) the socket pipes.

use core::ffi::c_void;

/// libzmq's `zmq_free_fn`: releases `data`, with the caller's `hint`. (Exports spell the type
/// out so cbindgen renders it as a nullable function pointer.)
pub type FreeFn = unsafe extern "C" fn(data: *mut c_void, hint: *mut c_void);

/// A buffer the C caller owns, released with its own free function (or never, for a
/// constant message).
#[derive(Debug)]
pub struct ForeignBuffer {
    data: *mut u8,
    len: usize,
    free: Option<FreeFn>,
    hint: *mut c_void,
}

impl ForeignBuffer {
    /// # Safety
    /// `data` is NULL with `len == 0`, or valid for reads of `len` bytes until `free` is called
    /// (or forever, when `free` is `None`); `free(data, hint)` may be called from any thread.
    pub unsafe fn new(data: *mut u8, len: usize, free: Option<FreeFn>, hint: *mut c_void) -> Self {
        Self {
            data,
            len,
            free,
            hint,
        }
    }
}

// SAFETY: the buffer is only read through shared references, and libzmq's contract (which C
// callers already follow) lets the free function run on whichever thread drops the message
// last, an I/O thread included.
unsafe impl Send for ForeignBuffer {}

impl AsRef<[u8]> for ForeignBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.data.is_null() {
            return &[];
        }
        // SAFETY: non-NULL and valid for `len` bytes until drop, per `new`'s contract.
        unsafe { core::slice::from_raw_parts(self.data, self.len) }
    }
}

impl Drop for ForeignBuffer {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: called once (drop runs once), with the pointer and hint the caller gave.
            unsafe { free(self.data.cast(), self.hint) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::sync::atomic::{AtomicUsize, Ordering};

    unsafe extern "C" fn count_free(data: *mut c_void, hint: *mut c_void) {
        // SAFETY: the tests pass a pointer to a live AtomicUsize as hint.
        let counter = unsafe { &*hint.cast::<AtomicUsize>() };
        assert!(!data.is_null());
        counter.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn free_runs_once_after_last_clone() {
        let calls = AtomicUsize::new(0);
        let mut buf = *b"hello";
        // SAFETY: buf outlives every clone below; count_free only counts.
        let owner = unsafe {
            ForeignBuffer::new(
                buf.as_mut_ptr(),
                buf.len(),
                Some(count_free),
                (&calls as *const AtomicUsize).cast_mut().cast(),
            )
        };
        let a = Bytes::from_owner(owner);
        assert_eq!(a.as_ptr(), buf.as_ptr(), "zero copy");
        let b = a.clone();
        let c = b.slice(1..3);
        drop(a);
        drop(b);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(&c[..], b"el");
        drop(c);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn null_empty_buffer() {
        // SAFETY: NULL with length 0 is allowed and never read.
        let owner =
            unsafe { ForeignBuffer::new(core::ptr::null_mut(), 0, None, core::ptr::null_mut()) };
        assert!(Bytes::from_owner(owner).is_empty());
    }
}
