//! A pattern's answer, taken from where the pattern stored it without a wide load across
//! narrower stores. A pattern's `recv` and `send` return through memory (the values are too
//! large for registers), writing each field with its own width (a frame's words, its one-byte
//! `more`, a four-byte tag for `Ok(())`). A plain move of the value reads it 16 bytes at a
//! time, and such a load waits until the stores it spans have completed instead of taking
//! their data from the store buffer. `perf annotate` of `scale inproc 1 .. router` put
//! a third of `Socket::recv`'s and of `send_slice`'s samples on those loads (issue 18,
//! session 17). The C ABI crate reads `Socket::recv`'s answer the same way.

use std::mem::{size_of, MaybeUninit};
use std::ptr::{addr_of, read_volatile};

use bytes::Bytes;

use super::Msg;

/// A received frame, field by field: the body a word at a time, the metadata pointer and
/// the `more` byte (which is also where `Result` keeps its tag) each with its own width.
///
/// # Safety
/// The copy owns what `msg` owns: the caller must not drop `msg`.
#[inline(always)]
pub unsafe fn received(msg: &Msg) -> Msg {
    // SAFETY: each read is of a live field of `msg`, at its own type; ownership per the
    // contract. Volatile keeps the loads at these widths.
    unsafe {
        Msg {
            data: body(&msg.data),
            metadata: read_volatile(addr_of!(msg.metadata)),
            more: read_volatile(addr_of!(msg.more)),
        }
    }
}

/// A copy of `body`'s bytes, a word at a time.
///
/// # Safety
/// The copy owns what `body` owns: the caller must not drop `body`.
#[inline(always)]
pub unsafe fn body(body: &Bytes) -> Bytes {
    const WORDS: usize = size_of::<Bytes>() / size_of::<usize>();
    const _: () = assert!(size_of::<Bytes>() == WORDS * size_of::<usize>());
    let from = std::ptr::from_ref(body).cast::<MaybeUninit<usize>>();
    let mut words = [MaybeUninit::<usize>::uninit(); WORDS];
    for (i, word) in words.iter_mut().enumerate() {
        // SAFETY: `from` points to the body's `WORDS` words (sizes asserted equal).
        *word = unsafe { read_volatile(from.add(i)) };
    }
    // SAFETY: every byte of `body`, same size (asserted); ownership per the contract.
    unsafe { std::mem::transmute::<[MaybeUninit<usize>; WORDS], Bytes>(words) }
}
