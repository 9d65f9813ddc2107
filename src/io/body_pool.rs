//! Bodies of their own allocation, taken back when their message is gone: `zmq_msg_init_size`
//! bodies, and copies of 32 KiB to 8 MiB (`Socket::send_slice`, `zmq_send`).
//!
//! A body that the sender's recycled buffers ([`SendBuffers`](super::send_buffers)) cannot
//! hold (every one still held by messages in flight, or a body over 256 KiB) needs memory of
//! its own. A sender ahead of its receiver has up to SNDHWM messages in flight (SNDHWM +
//! RCVHWM over inproc), so at 64-256 KiB that is most bodies. Such a body must hold
//! initialised bytes (Rust copies bodies the caller never wrote). Here a body's memory goes
//! back to the pool of the thread that made it when its last reference is dropped (on
//! whichever thread), and the next body of about its size reuses it: initialised once, when
//! first made, and never again.
//!
//! Copies went to the allocator until session 28 (issue 18). glibc gave a stream's memory back
//! to the kernel whenever the stream drained, and the next burst faulted it in again: the Rust
//! matrix's `send_slice` streams over ipc went from 62-69 k msg/s at 64 KiB and 19.0-19.4 k at
//! 256 KiB to 73-79 k and 20.4-21.5 k with the pool (medians of 5 alternations).
//!
//! Fresh memory: bodies under `MAPPED_FROM` come from `calloc`. Larger ones are pieces of
//! slabs this pool maps itself (`mmap`: zero pages until written, no pass over them), as many
//! pieces per slab as the pool has bytes in flight, up to `SLAB_BYTES`. One `calloc` per body
//! was worse both ways: glibc's `calloc` clears reused heap memory with a `memset` (three
//! quarters of the sending process's own time in `remote_thr` at 256 KiB over tcp; libzmq's
//! `malloc` clears nothing), and from 128 KiB it maps each body on its own, so a sender that
//! ran ahead of its receiver over inproc paid an `mmap`, a page fault and, with the lock held,
//! the receiving thread's wait to give a body back, per message, for up to 2,000 messages at a
//! time (inproc_thr 256 KiB: 1,000-2,000 `mmap`s per 4,096 messages; now 45-106, most of
//! them not the pool's: issue 18, session 15).
//!
//! How much is kept: a sender blocked at its high-water mark wakes to a burst of room, as many
//! bodies as were read or written meanwhile (on a busy machine, all of them), so any fixed
//! share of what is in flight misses the rest (a pool that kept what was in flight plus
//! 32 MiB still cleared a third of inproc_thr's 64 KiB bodies). So the pool keeps every body
//! given back, up to the most bytes its bodies had in flight at once since it last trimmed
//! (and the spare pieces made with them): memory the stream held at once anyway (its messages
//! are bounded by the high-water marks), reused the way `malloc` reuses freed memory. A fixed
//! cap below that (there was one, 256 MiB, half of 2,000 x 256 KiB) freed the rest of every
//! larger burst and made it again for the next.
//!
//! What goes back: at a drain (the last body of the pool comes back) at least `TRIM_AFTER`
//! after the previous trim, whatever the pool held unused all along since then (its low-water
//! mark), down to `MIN_KEPT_BYTES`. A stream drains mid-stream whenever its sender loses the
//! CPU for long enough (every few milliseconds on a busy machine); trimming at every drain
//! freed bodies that the next burst made again, so the time between trims is what tells a
//! stream that stopped from one that paused. A stream that stopped gives its bodies back
//! within two messages sent after `TRIM_AFTER`. A trimmed piece whose slab still has other
//! pieces gives its pages back at once (`madvise`); the slab's mapping goes with its last.
//!
//! The bound, in memory that holds pages: what a pool keeps is at most the most bytes it had
//! in flight at once (which the high-water marks bound: 2,000 x 256 KiB = 512 MiB for inproc
//! at the defaults) plus one slab, or `MIN_KEPT_BYTES` if more; so kept and in flight together
//! are at most twice that. After a trim it keeps at least `MIN_KEPT_BYTES` or what was used
//! since the trim before.
//!
//! The price: a mutex taken once to take a body and once to give it back (uncontended but for
//! the moment of a hand-over, far below a body's copy into the kernel), one small allocation
//! per message for `Bytes`' shared header (its body the only one libzmq makes), a clock read
//! at each drain, and the memory above held for reuse until the thread exits and its last
//! body is gone: a thread that streamed large messages keeps up to `MIN_KEPT_BYTES` once it
//! stops (glibc would have kept freed chunks below its heap's top as well, but given back the
//! top).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// Copies of these sizes are worth a pool's body rather than an allocation of their own.
/// Below, glibc reuses freed memory without giving it back to the kernel. Above, a body is a
/// mapping of its own either way, and a pool would keep a one-off 1 GiB copy for reuse.
pub const POOLED_COPIES: core::ops::RangeInclusive<usize> = MAPPED_FROM..=SLAB_BYTES;

thread_local! {
    static POOL: Arc<BodyPool> = Arc::new(BodyPool::default());
}

/// A body of `size` (> 0) bytes from the calling thread's pool, holding zeros or an earlier
/// body's bytes, for the caller to fill (`zmq_msg_init_size`); `None` when it cannot be had.
pub fn body(size: usize) -> Option<Bytes> {
    with_pool(|pool| pool.body(size))
}

/// A copy of `data` (not empty) in a body from the calling thread's pool; `None` when memory
/// cannot be had.
pub fn copy(data: &[u8]) -> Option<Bytes> {
    with_pool(|pool| pool.copy(data))
}

/// The calling thread's pool's free bodies and their bytes.
#[cfg(test)]
pub(crate) fn kept_here() -> (usize, usize) {
    POOL.with(|pool| pool.kept())
}

fn with_pool(f: impl Fn(&Arc<BodyPool>) -> Option<Bytes>) -> Option<Bytes> {
    POOL.try_with(&f)
        // The thread is exiting (a destructor sends): a pool of this body's own.
        .unwrap_or_else(|_| f(&Arc::new(BodyPool::default())))
}

/// Bytes of free bodies a pool keeps at least when it trims.
const MIN_KEPT_BYTES: usize = 32 * 1024 * 1024;

/// The least time between two trims.
const TRIM_AFTER: Duration = Duration::from_secs(1);

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
    bodies: VecDeque<Memory>,
    /// Their bytes.
    bytes: usize,
    /// Bytes of the bodies handed out and not given back yet.
    live: usize,
    /// The most `live` since the last trim (with the spare pieces made along): what `bytes`
    /// may reach.
    peak: usize,
    /// The least `bytes` since the last trim: free bodies no take needed.
    low: usize,
    /// When the pool last trimmed (`None`: never).
    trimmed: Option<Instant>,
}

impl BodyPool {
    /// A body of `size` (> 0) bytes: a free one of at least `size` and at most twice that,
    /// else fresh memory; `None` when it cannot be had.
    pub fn body(self: &Arc<Self>, size: usize) -> Option<Bytes> {
        let memory = self.take(size)?;
        Some(self.owned(memory, size))
    }

    /// A copy of `data` (not empty) in a body of the pool's.
    pub fn copy(self: &Arc<Self>, data: &[u8]) -> Option<Bytes> {
        let mut memory = self.take(data.len())?;
        memory.bytes_mut()[..data.len()].copy_from_slice(data);
        Some(self.owned(memory, data.len()))
    }

    fn owned(self: &Arc<Self>, memory: Memory, len: usize) -> Bytes {
        Bytes::from_owner(PooledBody {
            memory,
            len,
            home: Arc::clone(self),
        })
    }

    /// Memory for a body of `size` (> 0) bytes, counted in flight.
    fn take(&self, size: usize) -> Option<Memory> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let n = free.bodies.len();
        let fits = (n.saturating_sub(LOOK_AT)..n)
            .rev()
            .find(|&i| (size..=size.saturating_mul(2)).contains(&free.bodies[i].len()));
        // A fresh body and the spare pieces made with it count as in flight for the cap on
        // what is kept (they were made for the burst under way), with what was in flight
        // when none was free: bodies given back while the lock was released were part of it.
        let mut made = 0;
        let memory = match fits.and_then(|i| free.bodies.remove(i)) {
            Some(memory) => {
                free.bytes -= memory.len();
                free.low = free.low.min(free.bytes);
                memory
            }
            None => {
                // Made without the lock, which the receiving thread needs to give bodies
                // back meanwhile (an `mmap` under it made that thread wait on a futex).
                let live = free.live;
                drop(free);
                let (memory, spare) = fresh(size, live)?;
                free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
                let spare_bytes = spare.iter().map(Memory::len).sum::<usize>();
                made = live + memory.len() + spare_bytes;
                free.bytes += spare_bytes;
                free.bodies.extend(spare);
                memory
            }
        };
        free.live += memory.len();
        free.peak = free.peak.max(free.live).max(made);
        Some(memory)
    }

    fn give_back(&self, memory: Memory) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.live -= memory.len();
        free.bytes += memory.len();
        free.bodies.push_back(memory);
        let mut keep = free.peak.max(MIN_KEPT_BYTES);
        if free.live == 0 {
            // Drained: if the last trim is long enough ago, what stayed unused since goes.
            let now = Instant::now();
            if free
                .trimmed
                .is_none_or(|at| now.duration_since(at) >= TRIM_AFTER)
            {
                let unused = free.low.min(free.bytes);
                keep = (free.bytes - unused).max(MIN_KEPT_BYTES);
                free.trimmed = Some(now);
                free.low = keep.min(free.bytes);
                free.peak = free.low;
            }
        }
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
        surplus.into_iter().for_each(Memory::release);
    }

    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        (free.bodies.len(), free.bytes)
    }

    /// Moves the last trim back in time, as if `TRIM_AFTER` had passed.
    #[cfg(test)]
    fn age(&self) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.trimmed = free.trimmed.and_then(|at| at.checked_sub(TRIM_AFTER));
    }
}

/// The owner behind a pooled body's `Bytes`: its first `len` bytes are the body.
struct PooledBody {
    memory: Memory,
    len: usize,
    home: Arc<BodyPool>,
}

impl AsRef<[u8]> for PooledBody {
    fn as_ref(&self) -> &[u8] {
        &self.memory.bytes()[..self.len]
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        let memory = std::mem::replace(&mut self.memory, Memory::Heap(Box::default()));
        self.home.give_back(memory);
    }
}

/// Bodies from this size on are pieces of slabs the pool maps (see the module's comment); below
/// it, pieces rounded to whole pages would waste more than an eighth.
const MAPPED_FROM: usize = 32 * 1024;

/// The most bytes mapped at once: bodies are made in slabs of as many as are in flight
/// (doubling), up to this.
const SLAB_BYTES: usize = 8 * 1024 * 1024;

/// The pages that mapped pieces are rounded to, so that a trimmed piece can give its pages
/// back on its own (`madvise` works on whole pages).
const PAGE: usize = 4096;

/// Memory for one body.
#[derive(Debug)]
enum Memory {
    /// From the allocator, zeroed when made.
    Heap(Box<[u8]>),
    /// The `len` bytes at `offset` in `slab`, no other piece's.
    Mapped {
        slab: Arc<Slab>,
        offset: usize,
        len: usize,
    },
}

impl Memory {
    fn len(&self) -> usize {
        match self {
            Memory::Heap(memory) => memory.len(),
            Memory::Mapped { len, .. } => *len,
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Memory::Heap(memory) => memory,
            // SAFETY: the piece lies within the slab's mapping (`fresh` cuts pieces inside
            // it), which stays mapped while `slab` is held; its bytes are initialised (the
            // kernel maps zero pages, and writes since are the C caller's through
            // `zmq_msg_data`); and no other piece overlaps it, so only this body's owner
            // reads or writes it.
            Memory::Mapped { slab, offset, len } => unsafe {
                core::slice::from_raw_parts(slab.at.as_ptr().add(*offset), *len)
            },
        }
    }

    /// The piece's bytes, to copy a body into before it is handed out.
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Memory::Heap(memory) => memory,
            // SAFETY: as in `bytes`, and `&mut self` makes this the only access to the piece.
            Memory::Mapped { slab, offset, len } => unsafe {
                core::slice::from_raw_parts_mut(slab.at.as_ptr().add(*offset), *len)
            },
        }
    }

    /// Frees memory the pool trims: a mapped piece whose slab stays mapped for other pieces
    /// gives its pages back to the kernel at once (the mapping goes with the slab's last
    /// piece), so what a pool holds in pages is what it keeps and what is in flight.
    fn release(self) {
        let Memory::Mapped { slab, offset, len } = &self else {
            return;
        };
        if Arc::strong_count(slab) > 1 {
            // SAFETY: the range is this piece's (page-aligned: slabs are mapped at page
            // boundaries and pieces are whole pages), no body uses it any more, and
            // MADV_DONTNEED on a private anonymous mapping only makes its next read zeros.
            unsafe {
                libc::madvise(
                    slab.at.as_ptr().add(*offset).cast(),
                    *len,
                    libc::MADV_DONTNEED,
                )
            };
        }
    }
}

/// Anonymous memory mapped for pieces, unmapped when the last piece goes.
#[derive(Debug)]
struct Slab {
    at: core::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the slab is only the mapping's owner; each piece's bytes are reached through the
// single `Memory` that owns the piece (see `Memory::bytes`), and mapping and unmapping are
// thread-safe.
unsafe impl Send for Slab {}
// SAFETY: as above; a shared `Slab` gives access to nothing but its address.
unsafe impl Sync for Slab {}

impl Slab {
    fn map(len: usize) -> Option<Arc<Slab>> {
        // SAFETY: a fresh private anonymous mapping at an address of the kernel's choosing
        // touches no existing memory.
        let at = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return None;
        }
        let at = core::ptr::NonNull::new(at.cast())?;
        Some(Arc::new(Slab { at, len }))
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        // SAFETY: `at` and `len` are the mapping `map` made, and no piece of it is left.
        unsafe { libc::munmap(self.at.as_ptr().cast(), self.len) };
    }
}

/// Fresh memory for a body of `size` (> 0) bytes while `live` bytes of the pool's are in
/// flight, and spare pieces made with it; `None` when it cannot be had.
fn fresh(size: usize, live: usize) -> Option<(Memory, Vec<Memory>)> {
    if size < MAPPED_FROM {
        return Some((Memory::Heap(zeroed(size)?), Vec::new()));
    }
    let len = size.checked_next_multiple_of(PAGE)?;
    let pieces = (live / len).clamp(1, (SLAB_BYTES / len).max(1));
    let slab = Slab::map(len.checked_mul(pieces)?)?;
    let mut all = (0..pieces).map(|i| Memory::Mapped {
        slab: Arc::clone(&slab),
        offset: i * len,
        len,
    });
    let first = all.next()?;
    Some((first, all.collect()))
}

/// `size` (> 0) zeroed bytes from the allocator (calloc: fresh pages are zeroed lazily by the
/// kernel, without a pass over them), or `None`.
fn zeroed(size: usize) -> Option<Box<[u8]>> {
    let layout = std::alloc::Layout::array::<u8>(size).ok()?;
    // SAFETY: `layout` has a non-zero size (callers never ask for 0 bytes).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with `layout` (align 1, `size`
    // bytes), all of them zero-initialised, which is exactly what a `Vec<u8>` of length and
    // capacity `size` owns; a Vec whose length is its capacity becomes a boxed slice without
    // reallocating.
    let vec = unsafe { Vec::from_raw_parts(ptr, size, size) };
    Some(vec.into_boxed_slice())
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
        assert_eq!(pool.kept(), (1, 300_000usize.next_multiple_of(PAGE)));
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

    /// Every body given back is kept while the stream goes on, however many were in flight
    /// (a cap made the rest of each burst again); a trim, at a drain at least `TRIM_AFTER`
    /// after the previous one, frees what no take needed since then.
    #[test]
    fn what_is_kept_follows_what_is_in_flight() {
        let pool = Arc::new(BodyPool::default());
        // Over `SLAB_BYTES`: one body per mapping, so the counts are the bodies'.
        let size = 16 << 20;
        let min = MIN_KEPT_BYTES / size;
        // More than 256 MiB in flight (the old cap), as 2,000 x 256 KiB over inproc are.
        let n = 20;
        let mut live: Vec<Bytes> = (0..n).map(|_| pool.body(size).unwrap()).collect();
        // All but one read and dropped: every one kept.
        let last = live.pop().unwrap();
        drop(live);
        assert_eq!(pool.kept(), (n - 1, (n - 1) * size));
        let again: Vec<Bytes> = (0..n - 1).map(|_| pool.body(size).unwrap()).collect();
        assert_eq!(pool.kept(), (0, 0), "a burst reuses every one");
        drop(again);
        drop(last);
        // Drained right after a burst that used every body: all kept.
        assert_eq!(pool.kept(), (n, n * size));
        // A stream of one message at a time, drained at every message: nothing goes until
        // `TRIM_AFTER` has passed since the last trim...
        for _ in 0..3 {
            drop(pool.body(size).unwrap());
        }
        assert_eq!(pool.kept(), (n, n * size));
        // ... and then what it did not need goes, at the next drain.
        pool.age();
        drop(pool.body(size).unwrap());
        assert_eq!(pool.kept(), (min, MIN_KEPT_BYTES));
        pool.age();
        drop(pool.body(size).unwrap());
        assert_eq!(pool.kept(), (min, MIN_KEPT_BYTES));
    }

    /// Bodies of other sizes do not pile up: what is kept stays within the most that was in
    /// flight at once (or `MIN_KEPT_BYTES`), the oldest going first.
    #[test]
    fn kept_bytes_stay_within_the_peak_in_flight() {
        let pool = Arc::new(BodyPool::default());
        let unit = 16 << 20;
        let (a, b) = (pool.body(unit).unwrap(), pool.body(unit).unwrap());
        drop((a, b));
        assert_eq!(pool.kept(), (2, 2 * unit));
        // Too large for either: a fresh one, 5 units in all with 3 in flight at most.
        let big = pool.body(3 * unit).unwrap();
        drop(big);
        assert_eq!(pool.kept(), (1, 3 * unit), "the two older ones went");
        let again = pool.body(3 * unit).unwrap();
        assert_eq!(pool.kept(), (0, 0));
        drop(again);
    }

    /// A sender ahead of its receiver gets fresh bodies a slab at a time (one mapping for up to
    /// as many as are in flight), each its own bytes, and no more spare than it has in flight.
    #[test]
    fn fresh_bodies_come_in_slabs_of_distinct_pieces() {
        let pool = Arc::new(BodyPool::default());
        let size = 64 * 1024;
        let mut live = Vec::new();
        let mut most_spare = 0;
        for _ in 0..200 {
            live.push(pool.body(size).unwrap());
            let (spare, spare_bytes) = pool.kept();
            assert!(spare < live.len(), "{spare} spare for {} live", live.len());
            assert_eq!(spare_bytes, spare * size);
            most_spare = most_spare.max(spare);
        }
        // Pieces made with the one asked for: a mapping per slab, not per body.
        assert!(most_spare > 0);
        let spare = pool.kept().0;
        let mut at: Vec<usize> = live.iter().map(|b| b.as_ptr() as usize).collect();
        at.sort_unstable();
        assert!(
            at.windows(2).all(|w| w[0] + size <= w[1]),
            "overlapping bodies"
        );
        // The caller writes its bodies (through `zmq_msg_data`): they stay apart.
        let written = live.pop().unwrap();
        assert!(written.iter().all(|&b| b == 0), "fresh pieces are zeroed");
        drop((live, written));
        assert_eq!(pool.kept().0, 200 + spare);
    }

    #[test]
    fn an_impossible_size_is_none() {
        let pool = Arc::new(BodyPool::default());
        assert!(pool.body(usize::MAX).is_none());
    }
}
