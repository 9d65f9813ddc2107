//! The state both ends of a pipe see, and the clean-up done by whichever end leaves last.

use std::fmt;
use std::ptr;
use std::sync::atomic::Ordering;

use crate::chunk::{slot_index, starts_chunk, Chunk};
use crate::notify::Notify;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, CachePadded};

/// Value of [`Shared::published`] while the reader is asleep (libzmq's `c == NULL`): it found
/// the pipe empty and the next flush must wake it. Positions never reach it (2^64 frames).
pub(crate) const ASLEEP: u64 = u64::MAX;

/// Value of [`Shared::wake_writer_at`] when the writer is not waiting for space.
pub(crate) const NOT_WAITING: u64 = 0;

/// The words both ends touch on every message, on one cache line of their own: the writer
/// checks `reader_closed` and the HWM before a message and swaps `published` after it, so a
/// send to a pipe whose line has gone cold (a ROUTER with a thousand peers, issue 15) misses
/// the cache once for all three rather than once each. Besides `published` these words are
/// written only when an end closes or an application changes the HWM, so keeping them beside
/// it adds no traffic between the two ends' cores.
pub(crate) struct Front {
    /// End of the published frames (an absolute position), or [`ASLEEP`]. The writer moves it
    /// forward on flush; the reader swaps in `ASLEEP` when it has consumed everything. Both
    /// use compare-and-swap, so each knows whether the other got there first.
    pub(crate) published: AtomicU64,
    /// The limit in complete messages (0 = unlimited), which the socket may change while the
    /// pipe is in use (ZMQ_SNDHWM after connect); see [`crate::Hwm`].
    pub(crate) hwm: AtomicU64,
    pub(crate) reader_closed: AtomicBool,
    pub(crate) writer_closed: AtomicBool,
    /// Set for good by the writer before it publishes the first frame that has more frames
    /// after it. Until then every frame is a whole message, and the reader knows each frame's
    /// `more` without reading it from the chunk's head (`Chunk`).
    pub(crate) multipart: AtomicBool,
    /// Called by a flush that finds the reader asleep. Here rather than with the rest of
    /// `Shared`: that flush has just loaded this line for its compare-and-swap, and a wake-up
    /// is the common case when a socket sends to one of many peers in turn, each of which has
    /// drained its one message and gone to sleep (a ROUTER's tcp peers, issue 15), where a
    /// line of `Shared` read for it was cold every time.
    pub(crate) reader_wake: std::sync::Arc<dyn Notify>,
}

/// Both ends and the HWM handles hold the front line: its own allocation, so that a [`crate::Hwm`]
/// needs no type parameter and keeps neither end's frames alive.
pub(crate) type FrontCell = std::sync::Arc<CachePadded<Front>>;

pub(crate) fn front(hwm: usize, reader_wake: std::sync::Arc<dyn Notify>) -> FrontCell {
    std::sync::Arc::new(CachePadded(Front {
        // A new reader counts as asleep, so the first flush always wakes it: a socket may
        // wait on its wake-up fd before it ever reads.
        published: AtomicU64::new(ASLEEP),
        hwm: AtomicU64::new(u64::try_from(hwm).unwrap_or(u64::MAX)),
        reader_closed: AtomicBool::new(false),
        writer_closed: AtomicBool::new(false),
        multipart: AtomicBool::new(false),
        reader_wake,
    }))
}

/// The state both ends see that is not on the front line.
pub(crate) struct Shared<T> {
    /// Complete messages the reader has consumed, published every few messages and whenever
    /// the reader goes to sleep or must wake the writer.
    pub(crate) msgs_read: CachePadded<AtomicU64>,
    /// Read count at which a refused writer wants `writer_wake`, or [`NOT_WAITING`].
    pub(crate) wake_writer_at: CachePadded<AtomicU64>,
    /// One retired chunk kept for reuse, so a steady flow allocates nothing.
    pub(crate) spare: AtomicPtr<Chunk<T>>,
    /// Where the reader stood when it was dropped: the clean-up starts there.
    pub(crate) reader_head: AtomicPtr<Chunk<T>>,
    pub(crate) reader_position: AtomicU64,
    /// End of the frames the writer left behind when it was dropped.
    pub(crate) writer_end: AtomicU64,
    pub(crate) writer_wake: std::sync::Arc<dyn Notify>,
}

impl<T> Shared<T> {
    pub(crate) fn new(first_chunk: *mut Chunk<T>, writer_wake: std::sync::Arc<dyn Notify>) -> Self {
        Self {
            msgs_read: CachePadded(AtomicU64::new(0)),
            wake_writer_at: CachePadded(AtomicU64::new(NOT_WAITING)),
            spare: AtomicPtr::new(ptr::null_mut()),
            reader_head: AtomicPtr::new(first_chunk),
            reader_position: AtomicU64::new(0),
            writer_end: AtomicU64::new(0),
            writer_wake,
        }
    }

    /// Hands a chunk nobody reads or writes any more to the spare slot; the chunk it displaces
    /// (if any) is freed. A chunk on small pages (a pipe's first) is freed instead, so that the
    /// writer's next chunk comes from huge pages (see [`Chunk`]).
    ///
    /// # Safety
    /// The caller owns `chunk` exclusively and all its slots are vacant.
    pub(crate) unsafe fn recycle(&self, chunk: *mut Chunk<T>) {
        // SAFETY: the caller owns the chunk.
        if !unsafe { (*chunk).is_huge() } {
            // SAFETY: exclusively ours with every slot vacant, as the caller guarantees.
            unsafe { Chunk::free(chunk) };
            return;
        }
        // SAFETY: the caller owns the chunk; resetting the link makes it look fresh.
        unsafe { (*chunk).reset() };
        let displaced = self.spare.swap(chunk, Ordering::AcqRel);
        if !displaced.is_null() {
            // SAFETY: the swap took the displaced chunk out of the spare slot, so this thread is
            // its only owner; chunks enter the spare slot only with vacant slots.
            unsafe { Chunk::free(displaced) };
        }
    }

    /// Takes the spare chunk, if there is one.
    pub(crate) fn take_spare(&self) -> Option<*mut Chunk<T>> {
        let chunk = self.spare.swap(ptr::null_mut(), Ordering::AcqRel);
        (!chunk.is_null()).then_some(chunk)
    }
}

impl<T> Drop for Shared<T> {
    /// Both ends are gone: drop the frames still queued and free every chunk. Each end left
    /// its final position behind; the frames between them are exactly the live ones.
    fn drop(&mut self) {
        let mut chunk = self.reader_head.load(Ordering::Acquire);
        let mut position = self.reader_position.load(Ordering::Acquire);
        let end = self.writer_end.load(Ordering::Acquire);
        while position < end {
            // SAFETY: positions in [reader_position, writer_end) were written and never read,
            // and with both ends dropped this is the only thread left.
            drop(unsafe { (*chunk).take(slot_index(position)) });
            position += 1;
            if starts_chunk(position) {
                // SAFETY: the writer links a chunk's successor as soon as the chunk fills, so
                // the chain reaches every chunk up to the writer's tail.
                let next = unsafe { (*chunk).next().load(Ordering::Acquire) };
                // SAFETY: every slot of `chunk` is now vacant and nothing else references it.
                unsafe { Chunk::free(chunk) };
                chunk = next;
            }
        }
        while !chunk.is_null() {
            // SAFETY: the chunks from here to the tail hold no values any more.
            let next = unsafe { (*chunk).next().load(Ordering::Acquire) };
            // SAFETY: as above; each chunk of the chain is freed once.
            unsafe { Chunk::free(chunk) };
            chunk = next;
        }
        if let Some(spare) = self.take_spare() {
            // SAFETY: the spare chunk is vacant and no longer reachable by anyone else.
            unsafe { Chunk::free(spare) };
        }
    }
}

impl fmt::Debug for Front {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Front")
            .field("published", &self.published.load(Ordering::Relaxed))
            .field("hwm", &self.hwm.load(Ordering::Relaxed))
            .field("reader_closed", &self.reader_closed.load(Ordering::Relaxed))
            .field("writer_closed", &self.writer_closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("msgs_read", &self.msgs_read.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
