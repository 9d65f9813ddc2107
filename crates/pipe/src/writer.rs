//! The producing end: stages frames, publishes whole messages on flush, enforces the HWM.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::chunk::{slot_index, starts_chunk, Chunk};
use crate::hwm::Hwm;
use crate::shared::{Front, FrontCell, Shared, ASLEEP, NOT_WAITING};
use crate::sync::{fence, Arc};

/// Most messages the writer waits to be freed before it is woken after a refusal (libzmq caps
/// its low-water-mark distance the same way, `max_wm_delta`).
const MAX_WAKE_BATCH: u64 = 1024;

/// The producing end of a pipe. `Send`, not `Sync`: one thread writes at a time.
///
/// Positions count frames from the start of the pipe:
///
/// ```text
///   ... read ... | flushed ......... | complete ....... | end
///                ^ visible to reader ^ whole messages  ^ frames of the message being written
/// ```
///
/// `repr(C)` with the fields every message touches first: they fill one cache line (the
/// `Writer` enum's tag aside, which goes before or after them), so that a send to a peer whose
/// pipe has gone cold misses once for the writer's own state (issue 15).
#[repr(C)]
pub(crate) struct QueueWriter<T> {
    /// The words both ends touch on each message: `published`, the closed flags, the HWM.
    front: FrontCell,
    /// Chunk that holds position `end` (always allocated before `end` reaches it).
    tail: *mut Chunk<T>,
    /// Next position to write.
    end: u64,
    /// End of the last complete message written; `flush` publishes up to here.
    complete: u64,
    /// What the writer last stored in `published`.
    flushed: u64,
    /// Complete messages written so far.
    msgs_written: u64,
    /// The reader's message count as last seen; stale by at most a publication interval.
    peer_read: u64,
    // Above: one cache line. Below: what only chunk boundaries, rollback and drop need.
    /// While a message of several frames is being written, the chunk that holds position
    /// `complete`, where `rollback` starts (recorded by its first frame; between messages
    /// that chunk is `tail`, so the field is stale then and never read).
    complete_chunk: *mut Chunk<T>,
    shared: Arc<Shared<T>>,
    /// Chunks this end has allocated, to prove a steady flow allocates none.
    chunk_allocations: u64,
}

// SAFETY: the raw chunk pointers are the writer's private view of memory owned by the pipe
// protocol; the only values that cross threads are `T`s, which are `Send`. `QueueWriter` stays
// `!Sync` (raw pointers), so one thread at a time drives it.
unsafe impl<T: Send> Send for QueueWriter<T> {}

impl<T> QueueWriter<T> {
    pub(crate) fn new(
        shared: Arc<Shared<T>>,
        front: FrontCell,
        first_chunk: *mut Chunk<T>,
    ) -> Self {
        Self {
            front,
            tail: first_chunk,
            end: 0,
            complete: 0,
            flushed: 0,
            msgs_written: 0,
            peer_read: 0,
            complete_chunk: first_chunk,
            shared,
            chunk_allocations: 1,
        }
    }

    /// Writes one frame; `more` says further frames of the same message follow. The frame
    /// stays invisible to the reader until its message is complete and [`Self::flush`]ed.
    ///
    /// Only the first frame of a message can be refused, and only when the pipe already holds
    /// `hwm` complete messages; the item comes back and `writer_wake` will be notified once
    /// the reader has freed space (or closed). Once the reader is gone frames are accepted
    /// and dropped at once; [`Self::is_closed`] tells the caller.
    pub fn try_write(&mut self, item: T, more: bool) -> Result<(), T> {
        if self.front.reader_closed.load(Ordering::Acquire) {
            return Ok(());
        }
        if !self.in_message() {
            if !self.has_room() {
                return Err(item);
            }
            if more {
                // Between messages the chunk holding `complete` is `tail`; a message of one
                // frame is complete at once and never rolled back.
                self.complete_chunk = self.tail;
                if !self.front.multipart.load(Ordering::Relaxed) {
                    // Published (and so seen by the reader) no later than this frame.
                    self.front.multipart.store(true, Ordering::Relaxed);
                }
            }
        }
        // SAFETY: position `end` is in `tail` and vacant: the reader never reads past
        // `published`, which is at most `complete` <= `end`, and the slot was vacated (or never
        // used) before the chunk came back to the writer.
        unsafe { (*self.tail).write(slot_index(self.end), item, more) };
        self.end += 1;
        if starts_chunk(self.end) {
            let next = self.fresh_chunk();
            // SAFETY: `tail` is live while the writer holds positions in it. Linking before
            // any flush covers position `end` lets the reader always find the next chunk.
            unsafe { (*self.tail).next().store(next, Ordering::Release) };
            self.tail = next;
        }
        if !more {
            self.complete = self.end;
            self.msgs_written += 1;
        }
        Ok(())
    }

    /// Whether the first frame of the next message would be accepted. A `false` arms the same
    /// wake-up as a refused [`Self::try_write`]. In the middle of a message it is `true`.
    ///
    /// A caller asks before it writes (a ROUTER on the routing id frame, before the body), so
    /// this also starts loading the slot the next frame goes to: with many peers that slot's
    /// line is cold, and the flush's compare-and-swap would otherwise wait for the write to
    /// it (issue 15). When the reader is asleep, the flush will wake it: the wake-up's first
    /// line (the object behind `reader_wake`) is started too, for the same reason; the front
    /// line it reads that from is the one this check reads anyway.
    ///
    /// And the slot after it, where the following message starts if this one is one frame:
    /// with a thousand peers that message comes a thousand sends later, and the lines it will
    /// write were last touched a whole chunk ago (256 messages to this pipe, a quarter of a
    /// million sends), so they come from memory, while a line loaded now is still in the
    /// second-level cache then (issue 15: ROUTER send to 1,000 peers 131 -> 111 ns). Not
    /// across a chunk boundary, where the next chunk is not chosen yet.
    pub fn can_write(&self) -> bool {
        let index = slot_index(self.end);
        // SAFETY: `tail` is live while the writer holds positions in it and both indices lie
        // in it; only slot addresses are used.
        unsafe {
            (*self.tail).prefetch(index);
            if !starts_chunk(self.end + 1) {
                (*self.tail).prefetch(index + 1);
            }
        }
        if self.front.published.load(Ordering::Relaxed) == ASLEEP {
            crate::prefetch(std::sync::Arc::as_ptr(&self.front.reader_wake).cast::<()>() as usize);
        }
        self.in_message() || self.front.reader_closed.load(Ordering::Acquire) || self.check_room().0
    }

    /// The address of the slot the message after the next one starts at if the next one is
    /// a single frame, or 0 where that slot is in a chunk not chosen yet: a hint for
    /// [`crate::Writer::prefetch_slot`] by a caller that will name this pipe again before it
    /// reads the writer (a ROUTER's routing entry, issue 15). Stale once anything else is
    /// written, and the chunk may be gone by the time it is used: a prefetch is harmless.
    #[inline]
    pub fn slot_after_next(&self) -> usize {
        if starts_chunk(self.end + 1) {
            return 0;
        }
        // SAFETY: `tail` is live while the writer holds positions in it, and the index lies
        // in it (the position after `end` does not start a chunk); only the address is used.
        unsafe { (*self.tail).slot_address(slot_index(self.end) + 1) }
    }

    /// Publishes every complete message written so far (the frames of an unfinished message
    /// stay back) and wakes the reader only if it had gone to sleep on an empty pipe.
    pub fn flush(&mut self) {
        if self.complete == self.flushed {
            return;
        }
        let published = &self.front.published;
        let result = published.compare_exchange(
            self.flushed,
            self.complete,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        self.flushed = self.complete;
        if let Err(seen) = result {
            // Only the reader changes `published` besides us, and only to ASLEEP: it drained
            // the pipe and waits for us. Nobody else writes it now, so a plain store is enough.
            debug_assert_eq!(seen, ASLEEP);
            published.store(self.complete, Ordering::Release);
            self.front.reader_wake.notify();
        }
    }

    /// Drops the frames of the message being written (the connection died half way through
    /// it); complete messages, flushed or not, stay.
    pub fn rollback(&mut self) {
        if !self.in_message() {
            return;
        }
        let mut chunk = self.complete_chunk;
        let mut position = self.complete;
        while position < self.end {
            // SAFETY: positions in [complete, end) were written by this end and are beyond
            // anything published, so only this thread can reach them.
            drop(unsafe { (*chunk).take(slot_index(position)) });
            // SAFETY: as above; the slot will be written again, and its flag must be clear.
            unsafe { (*chunk).clear_more(slot_index(position)) };
            position += 1;
            if starts_chunk(position) {
                // SAFETY: the chunk's successor was linked when the chunk filled.
                chunk = unsafe { (*chunk).next().load(Ordering::Acquire) };
            }
        }
        // Chunks after the one holding `complete` were never published: take them back.
        // SAFETY: `complete_chunk` is live; the reader reads its link only after consuming
        // its last slot, which lies beyond `complete` and so is not published.
        let mut spare = unsafe {
            (*self.complete_chunk)
                .next()
                .swap(std::ptr::null_mut(), Ordering::AcqRel)
        };
        while !spare.is_null() {
            // SAFETY: unlinked above and unpublished, so exclusively ours, and its slots were
            // vacated by the loop above.
            let next = unsafe { (*spare).next().load(Ordering::Acquire) };
            // SAFETY: as above.
            unsafe { self.shared.recycle(spare) };
            spare = next;
        }
        self.tail = self.complete_chunk;
        self.end = self.complete;
    }

    /// The address of the front line, for [`crate::prefetch`].
    pub fn front_line(&self) -> usize {
        std::ptr::from_ref::<Front>(&self.front) as usize
    }

    /// A handle that changes this pipe's HWM.
    pub fn hwm(&self) -> Hwm {
        Hwm(FrontCell::clone(&self.front))
    }

    fn limit(&self) -> u64 {
        self.front.hwm.load(Ordering::Relaxed)
    }

    /// Whether the reader has been dropped; writes are then pointless (and discarded).
    pub fn is_closed(&self) -> bool {
        self.front.reader_closed.load(Ordering::Acquire)
    }

    fn in_message(&self) -> bool {
        self.end != self.complete
    }

    /// Room for one more message, judged first from the cached read count so that the common
    /// case touches no shared cache line.
    fn has_room(&mut self) -> bool {
        let hwm = self.limit();
        if hwm == 0 || self.msgs_written - self.peer_read < hwm {
            return true;
        }
        let (room, peer_read) = self.check_room();
        self.peer_read = peer_read;
        room
    }

    /// Reads the reader's count; when the pipe is full, arms the wake-up and checks again.
    /// Returns whether there is room and the freshest read count seen.
    fn check_room(&self) -> (bool, u64) {
        let hwm = self.limit();
        if hwm == 0 {
            return (true, self.peer_read);
        }
        let shared = &self.shared;
        let fits = |read: u64| self.msgs_written - read < hwm;
        let read = shared.msgs_read.load(Ordering::Acquire).max(self.peer_read);
        if fits(read) {
            // A target armed by an earlier refusal is moot now that the writer goes on.
            if shared.wake_writer_at.load(Ordering::Relaxed) != NOT_WAITING {
                shared.wake_writer_at.store(NOT_WAITING, Ordering::Relaxed);
            }
            return (true, read);
        }
        // Wake me when in-flight has dropped by `wake_batch`. The fence pairs with the one the
        // reader runs between publishing its count and looking at this target: either the
        // reader sees the target or the re-read below sees the reader's count.
        let wake_batch = hwm.div_ceil(2).min(MAX_WAKE_BATCH);
        let target = self.msgs_written - hwm + wake_batch;
        shared.wake_writer_at.store(target, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let read = shared.msgs_read.load(Ordering::Acquire).max(read);
        if fits(read) {
            shared.wake_writer_at.store(NOT_WAITING, Ordering::Relaxed);
            return (true, read);
        }
        (false, read)
    }

    /// A vacant chunk: the spare one the reader retired, else a new one on huge pages.
    fn fresh_chunk(&mut self) -> *mut Chunk<T> {
        if let Some(chunk) = self.shared.take_spare() {
            return chunk;
        }
        self.chunk_allocations += 1;
        Chunk::alloc_huge()
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn chunk_allocations(&self) -> u64 {
        self.chunk_allocations
    }

    /// Whether the chunk being written is on huge pages.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn tail_is_huge(&self) -> bool {
        // SAFETY: `tail` is live while the writer holds positions in it.
        unsafe { (*self.tail).is_huge() }
    }

    /// The addresses of the fields every message touches, first to last byte.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn hot_fields(&self) -> std::ops::Range<usize> {
        let start = std::ptr::from_ref(&self.front) as usize;
        let end = std::ptr::from_ref(&self.peer_read) as usize + std::mem::size_of::<u64>();
        start..end
    }
}

impl<T> Drop for QueueWriter<T> {
    /// Publishes what is complete, drops the unfinished message and tells the reader the pipe
    /// is closed; it drains what was published and then reads `Closed`.
    fn drop(&mut self) {
        self.rollback();
        self.flush();
        let shared = &self.shared;
        shared.writer_end.store(self.end, Ordering::Release);
        self.front.writer_closed.store(true, Ordering::Release);
        // Pairs with the reader's fence between going to sleep and checking `writer_closed`:
        // either it sees the flag or we see it asleep and wake it.
        fence(Ordering::SeqCst);
        if self.front.published.load(Ordering::Acquire) == ASLEEP {
            self.front.reader_wake.notify();
        }
    }
}

impl<T> fmt::Debug for QueueWriter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueWriter")
            .field("end", &self.end)
            .field("complete", &self.complete)
            .field("flushed", &self.flushed)
            .field("msgs_written", &self.msgs_written)
            .field("front", &self.front)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}
