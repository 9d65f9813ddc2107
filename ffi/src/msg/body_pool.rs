//! `zmq_msg_init_size` bodies of their own allocation, taken back when their message is gone.
//!
//! A body that the calling thread's recycled buffers cannot hold (every one still held by
//! messages in flight, or a body over 256 KiB) needs memory of its own. A sender ahead of its
//! receiver has up to SNDHWM messages in flight, so at 64-256 KiB that is most bodies. Such a
//! body must hold initialised bytes (Rust copies bodies the caller never wrote), so a fresh one
//! comes from `calloc`, and glibc's `calloc` clears reused heap memory with a `memset`: three
//! quarters of the sending process's own time in libzmq's `remote_thr` at 256 KiB over tcp
//! (issue 18; libzmq's `malloc` clears nothing). Here a body's memory goes back to the pool of
//! the thread that made it when its last reference is dropped (on whichever thread), and the
//! next body of about its size reuses it: initialised once, when first made, and never again.
//!
//! How much is kept: a sender blocked at its high-water mark wakes to a burst of room, as many
//! bodies as were read or written meanwhile (on a busy machine, all of them), so any fixed
//! share of what is in flight misses the rest (a pool that kept what was in flight plus
//! 32 MiB still cleared a third of inproc_thr's 64 KiB bodies). So while any of its bodies is
//! in flight the pool keeps every body given back, up to `MAX_KEPT_BYTES`: memory the stream
//! held at once anyway (its messages are bounded by the high-water marks), reused the way
//! `malloc` reuses freed memory. When the last body comes back the stream has drained (on a
//! busy machine that happens mid-stream, whenever the sender loses its CPU long enough), and
//! what the pool held unused all along since the previous drain (its low-water mark) is
//! freed, down to `MIN_KEPT_BYTES`: a stream that keeps using its bodies keeps them, one that
//! stopped gives them back at its next message.
//!
//! The price: a mutex taken once to take a body and once to give it back (uncontended but for
//! the moment of a hand-over, far below a body's copy into the kernel), one small allocation
//! per message for `Bytes`' shared header (its body the only one libzmq makes), and up to
//! `MIN_KEPT_BYTES` held per thread for reuse (up to the most its stream had in flight, after
//! a burst until it next sends) until the thread exits and its last body is gone.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use crate::boundary::Errno;
use crate::errno::ENOMEM;

/// Bytes of free bodies a pool keeps at least when it trims.
const MIN_KEPT_BYTES: usize = 32 * 1024 * 1024;

/// Bytes of free bodies a pool keeps at most.
const MAX_KEPT_BYTES: usize = 256 * 1024 * 1024;

/// Free bodies looked at for one of the right size, most recent first (a bound on the time the
/// lock is held when sizes vary).
const LOOK_AT: usize = 64;

/// The free bodies of one C thread's messages.
#[derive(Debug, Default)]
pub struct BodyPool {
    free: Mutex<Free>,
}

#[derive(Debug, Default)]
struct Free {
    /// Most recently given back last (the likeliest to be in cache).
    bodies: VecDeque<Box<[u8]>>,
    /// Their bytes.
    bytes: usize,
    /// Bytes of the bodies handed out and not given back yet.
    live: usize,
    /// The least `bytes` since the last drain: free bodies no take needed.
    low: usize,
}

impl BodyPool {
    /// A body of `size` (> 0) bytes: a free one of at least `size` and at most twice that,
    /// else a fresh zeroed allocation; `ENOMEM` when it cannot be had.
    pub fn body(self: &Arc<Self>, size: usize) -> Result<Bytes, Errno> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let n = free.bodies.len();
        let fits = (n.saturating_sub(LOOK_AT)..n)
            .rev()
            .find(|&i| (size..=size.saturating_mul(2)).contains(&free.bodies[i].len()));
        let memory = match fits.and_then(|i| free.bodies.remove(i)) {
            Some(memory) => {
                free.bytes -= memory.len();
                memory
            }
            None => zeroed(size)?,
        };
        free.low = free.low.min(free.bytes);
        free.live += memory.len();
        drop(free);
        Ok(Bytes::from_owner(PooledBody {
            memory,
            len: size,
            home: Arc::clone(self),
        }))
    }

    fn give_back(&self, memory: Box<[u8]>) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.live -= memory.len();
        free.bytes += memory.len();
        free.bodies.push_back(memory);
        let keep = if free.live == 0 {
            // Drained: what stayed unused since the last drain goes.
            let unused = free.low.min(free.bytes);
            let keep = (free.bytes - unused).clamp(MIN_KEPT_BYTES, MAX_KEPT_BYTES);
            free.low = keep.min(free.bytes);
            keep
        } else {
            MAX_KEPT_BYTES
        };
        // The oldest go first; freed after the lock is released.
        let mut surplus = Vec::new();
        while free.bytes > keep {
            let Some(oldest) = free.bodies.pop_front() else {
                break;
            };
            free.bytes -= oldest.len();
            surplus.push(oldest);
        }
        drop(free);
        drop(surplus);
    }

    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        (free.bodies.len(), free.bytes)
    }
}

/// The owner behind a pooled body's `Bytes`: its first `len` bytes are the body.
struct PooledBody {
    memory: Box<[u8]>,
    len: usize,
    home: Arc<BodyPool>,
}

impl AsRef<[u8]> for PooledBody {
    fn as_ref(&self) -> &[u8] {
        &self.memory[..self.len]
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        self.home.give_back(std::mem::take(&mut self.memory));
    }
}

/// `size` (> 0) zeroed bytes from the allocator (calloc: fresh pages are zeroed lazily by the
/// kernel, without a pass over them), or `ENOMEM`.
fn zeroed(size: usize) -> Result<Box<[u8]>, Errno> {
    let layout = std::alloc::Layout::array::<u8>(size).map_err(|_| Errno(ENOMEM))?;
    // SAFETY: `layout` has a non-zero size (callers never ask for 0 bytes).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Errno(ENOMEM));
    }
    // SAFETY: `ptr` was allocated by the global allocator with `layout` (align 1, `size`
    // bytes), all of them zero-initialised, which is exactly what a `Vec<u8>` of length and
    // capacity `size` owns; a Vec whose length is its capacity becomes a boxed slice without
    // reallocating.
    let vec = unsafe { Vec::from_raw_parts(ptr, size, size) };
    Ok(vec.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_body_is_reused_without_a_fresh_allocation() {
        let pool = Arc::new(BodyPool::default());
        let first = pool.body(300_000).unwrap();
        let at = first.as_ptr();
        assert_eq!(first.len(), 300_000);
        assert!(first.iter().all(|&b| b == 0), "fresh bodies are zeroed");
        // Dropped on another thread, as the I/O thread drops a written body.
        std::thread::spawn(move || drop(first)).join().unwrap();
        assert_eq!(pool.kept(), (1, 300_000));
        let again = pool.body(250_000).unwrap();
        assert_eq!(again.as_ptr(), at, "the same memory, cut to the new size");
        assert_eq!(again.len(), 250_000);
        assert_eq!(pool.kept(), (0, 0));
    }

    #[test]
    fn live_bodies_are_distinct_and_sizes_far_apart_are_not_mixed() {
        let pool = Arc::new(BodyPool::default());
        let a = pool.body(100_000).unwrap();
        let b = pool.body(100_000).unwrap();
        let (pa, pb) = (a.as_ptr() as usize, b.as_ptr() as usize);
        assert!(pa + 100_000 <= pb || pb + 100_000 <= pa);
        drop(a);
        // Over twice the size asked for: kept for a body that needs it, not this one.
        let small = pool.body(1_000).unwrap();
        assert_ne!(small.as_ptr() as usize, pa);
        let big = pool.body(200_000).unwrap();
        assert_ne!(big.as_ptr() as usize, pa, "too small");
        assert_eq!(pool.kept().0, 1);
        drop((b, small, big));
    }

    /// While a body is in flight, every one given back is kept (up to the maximum) for the
    /// sender's next burst; at a drain, what no take needed since the previous one goes.
    #[test]
    fn what_is_kept_follows_what_is_in_flight() {
        let pool = Arc::new(BodyPool::default());
        let size = 1 << 20;
        let (min, max) = (MIN_KEPT_BYTES / size, MAX_KEPT_BYTES / size);
        let mut live: Vec<Bytes> = (0..max + 8).map(|_| pool.body(size).unwrap()).collect();
        // All but one read and dropped: every one kept, up to the maximum.
        let last = live.pop().unwrap();
        drop(live);
        assert_eq!(pool.kept(), (max, MAX_KEPT_BYTES));
        let again: Vec<Bytes> = (0..max).map(|_| pool.body(size).unwrap()).collect();
        assert_eq!(pool.kept(), (0, 0), "a burst reuses every one");
        drop(again);
        drop(last);
        // Drained right after a burst that used every body: all kept for the next one.
        assert_eq!(pool.kept(), (max, MAX_KEPT_BYTES));
        // A stream of one message at a time: the rest were not needed, and go at the next
        // drain.
        drop(pool.body(size).unwrap());
        assert_eq!(pool.kept(), (min, MIN_KEPT_BYTES));
        drop(pool.body(size).unwrap());
        assert_eq!(pool.kept(), (min, MIN_KEPT_BYTES));
    }

    #[test]
    fn an_impossible_size_is_enomem() {
        let pool = Arc::new(BodyPool::default());
        assert_eq!(pool.body(usize::MAX).err(), Some(Errno(ENOMEM)));
    }
}
