//! The consuming end: reads published frames, goes to sleep on an empty pipe, frees HWM room.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::chunk::{slot_index, starts_chunk, Chunk};
use crate::shared::{FrontCell, Shared, ASLEEP, NOT_WAITING};
use crate::sync::{fence, Arc};

/// Most messages the reader consumes before it tells the writer (one plain store per batch
/// rather than a shared-line write per message).
const MAX_PUBLISH_BATCH: u64 = 64;

/// What [`crate::Reader::read`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read<T> {
    /// The next frame; `more` says further frames of the same message follow (and are
    /// already in the pipe: only whole messages become visible).
    Item { item: T, more: bool },
    /// Nothing to read. The reader is now asleep: the next flush will call `reader_wake`.
    Empty,
    /// The writer is gone and everything it published has been read.
    Closed,
}

/// Outcome of looking past the frames the reader already knew about.
enum Refill {
    Ready,
    Empty,
    Closed,
}

/// The consuming end of a pipe. `Send`, not `Sync`: one thread reads at a time.
pub(crate) struct QueueReader<T> {
    /// The words both ends touch on each message: `published`, the closed flags, the HWM.
    front: FrontCell,
    shared: Arc<Shared<T>>,
    /// Chunk that holds position `position`.
    head: *mut Chunk<T>,
    /// Next position to read.
    position: u64,
    /// End of the published frames as last seen.
    limit: u64,
    /// Complete messages read.
    msgs_read: u64,
    /// Messages read since `msgs_read` was last published (at most [`MAX_PUBLISH_BATCH`] with
    /// a HWM; without one it saturates, since only "none" and "a batch" matter).
    /// This, `publish_batch` and `multipart` take 8 bytes so that the reader fits 56, and a
    /// socket's peer keeps what a receive reads of it on one line (`Peer` in the runtime,
    /// issue 15).
    unpublished: u16,
    /// Publish `msgs_read` after this many messages; 0 = no HWM, only when going to sleep.
    /// It follows the HWM (which the socket may change) on each refill.
    publish_batch: u16,
    /// `Front::multipart` as of the last look at `published`: while it is false, every frame
    /// up to `limit` is a whole message.
    multipart: bool,
}

// SAFETY: the raw chunk pointer is the reader's private view of memory owned by the pipe
// protocol; the only values that cross threads are `T`s, which are `Send`. `QueueReader` stays
// `!Sync` (raw pointers), so one thread at a time drives it.
unsafe impl<T: Send> Send for QueueReader<T> {}

impl<T> QueueReader<T> {
    pub(crate) fn new(
        shared: Arc<Shared<T>>,
        front: FrontCell,
        first_chunk: *mut Chunk<T>,
    ) -> Self {
        let publish_batch = publish_batch(front.hwm.load(Ordering::Relaxed));
        Self {
            front,
            shared,
            head: first_chunk,
            position: 0,
            limit: 0,
            msgs_read: 0,
            unpublished: 0,
            publish_batch,
            multipart: false,
        }
    }

    /// Takes the next frame. Frames come in the order written, a message's frames back to
    /// back, and only once the whole message was flushed.
    pub fn read(&mut self) -> Read<T> {
        if self.position == self.limit {
            match self.refill() {
                Refill::Ready => {}
                Refill::Empty => return Read::Empty,
                Refill::Closed => return Read::Closed,
            }
        }
        let (item, more) = self.take();
        Read::Item { item, more }
    }

    /// The frame at `position`, which must be below `limit`.
    #[inline(always)]
    fn take(&mut self) -> (T, bool) {
        debug_assert!(self.position < self.limit);
        let index = slot_index(self.position);
        // SAFETY: `position < limit` (the callers' check), and `limit` came from an acquire of
        // `published`, which the writer released after writing every slot below it; the
        // writer never touches a published slot again, so the slot is initialised and ours
        // alone.
        let item = unsafe { (*self.head).take(index) };
        // The last frame published ends a message (only whole messages are published), so
        // its flag is known without reading the chunk's head: with many pipes drained in
        // turn, each holding a message or two, that line would be one more cold read.
        // SAFETY: as above (the flag was written with the slot); read before the chunk can
        // be retired and its flags cleared below.
        let more = self.multipart
            && self.position + 1 != self.limit
            && unsafe { (*self.head).more(index) };
        self.position += 1;
        if starts_chunk(self.position) {
            self.retire_head();
        }
        if !more {
            self.message_read();
        }
        (item, more)
    }

    /// Hands the frames published so far to `f`, in order, until `f` returns `false` (then
    /// `false`) or none is left (then `true`), leaving the reader awake as
    /// [`Self::read_awake`] does.
    ///
    /// Each frame goes to `f` as a value, not as a returned [`Read`]: a returned `Read` is
    /// stored on the stack a word at a time and copied on by the caller with wider loads,
    /// which wait for those stores to retire (no store forwarding across them). That wait was
    /// the largest part of a sending I/O thread's own time at 64 B (issue 18, session 15).
    #[inline]
    pub fn read_awake_each(&mut self, mut f: impl FnMut(T, bool) -> bool) -> bool {
        loop {
            if self.position == self.limit {
                let seen = self.front.published.load(Ordering::Acquire);
                if seen == ASLEEP || seen == self.position {
                    return true;
                }
                self.saw(seen);
            }
            let (item, more) = self.take();
            if !f(item, more) {
                return false;
            }
        }
    }

    /// Takes the next frame as [`Self::read`] does, but an empty pipe leaves the reader awake:
    /// `Empty` here arms no wake-up, so flushes go on costing the writer nothing. A caller that
    /// is about to wait must end with [`Self::read`] (which goes to sleep, or finds what came
    /// meanwhile); this one is for the reads in the middle of its turn.
    pub fn read_awake(&mut self) -> Read<T> {
        if self.position == self.limit {
            let seen = self.front.published.load(Ordering::Acquire);
            if seen == ASLEEP || seen == self.position {
                return Read::Empty;
            }
            self.saw(seen);
        }
        self.read()
    }

    /// Takes `seen`, a value of `published` read with acquire, as the new `limit`; the flag
    /// read after it covers every frame below it.
    #[inline(always)]
    fn saw(&mut self, seen: u64) {
        self.limit = seen;
        self.multipart = self.front.multipart.load(Ordering::Relaxed);
    }

    /// A handle that changes this pipe's HWM.
    pub fn hwm(&self) -> crate::Hwm {
        crate::Hwm(FrontCell::clone(&self.front))
    }

    /// Whether a frame is ready to read, without taking it. A `false` puts the reader to
    /// sleep exactly as [`Self::read`] returning `Empty` does (or means the pipe is closed).
    pub fn has_message(&mut self) -> bool {
        self.position != self.limit || matches!(self.refill(), Refill::Ready)
    }

    /// Looks for newly published frames; when there are none, goes to sleep, and tells the
    /// writer how much room it has (it may be waiting for exactly that).
    fn refill(&mut self) -> Refill {
        self.publish_batch = publish_batch(self.front.hwm.load(Ordering::Relaxed));
        let seen = self.front.published.load(Ordering::Acquire);
        if seen != ASLEEP && seen != self.position {
            self.saw(seen);
            return Refill::Ready;
        }
        if seen != ASLEEP {
            if let Err(seen) = self.front.published.compare_exchange(
                self.position,
                ASLEEP,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                // Only the writer moves `published` forward: it flushed meanwhile.
                self.saw(seen);
                return Refill::Ready;
            }
        }
        // Pairs with the fences in the writer's drop and in its HWM check: either they see us
        // asleep (and our read count), or we see their flag (and their target) below.
        self.publish_reads(Ordering::Relaxed);
        fence(Ordering::SeqCst);
        self.wake_writer_if_waiting();
        if self.front.writer_closed.load(Ordering::Acquire) {
            // The final flush happened before the flag was set; anything it published counts.
            let seen = self.front.published.load(Ordering::Acquire);
            if seen != ASLEEP && seen != self.position {
                self.saw(seen);
                return Refill::Ready;
            }
            return Refill::Closed;
        }
        Refill::Empty
    }

    /// The head chunk is consumed: move to its successor and hand it back for reuse.
    fn retire_head(&mut self) {
        let retired = self.head;
        // SAFETY: the writer linked the successor when it filled this chunk, before the flush
        // that published the slot just read, and our acquire of `published` saw that flush.
        self.head = unsafe { (*retired).next().load(Ordering::Acquire) };
        debug_assert!(!self.head.is_null(), "successor linked before publication");
        // SAFETY: every slot of the retired chunk has been read and the writer moved past it,
        // so nobody else references it any more.
        unsafe { self.shared.recycle(retired) };
    }

    /// Counts a consumed message toward the writer's HWM; each batch's count is published and,
    /// with it, a waiting writer woken once its target is reached.
    ///
    /// The target is looked at only when a batch is published (and when the reader goes to
    /// sleep, in [`Self::refill`]), as libzmq's reader tells its writer only every `lwm`
    /// messages: its word has a line of its own, and reading it on every message cost a
    /// socket that drains many pipes in turn one cold line per message (issue 15). A writer
    /// is then woken up to a batch (at most 63 messages) after its target; with the default
    /// HWM of 1,000 over 400 messages are still queued for the reader then.
    #[inline]
    fn message_read(&mut self) {
        self.msgs_read += 1;
        // Without a HWM nothing publishes until the reader sleeps, and a reader that never
        // finds the pipe empty can read past u16::MAX first: the count saturates (it is only
        // compared with a batch of at most MAX_PUBLISH_BATCH, and tested for zero).
        self.unpublished = self.unpublished.saturating_add(1);
        if self.publish_batch != 0 && self.unpublished >= self.publish_batch {
            self.publish_reads(Ordering::Release);
            let target = self.shared.wake_writer_at.load(Ordering::Relaxed);
            if target != NOT_WAITING && self.msgs_read >= target {
                self.wake_writer_if_waiting();
            }
        }
    }

    /// Stores the read count for the writer. Also done without a HWM (on going to sleep or
    /// when a writer waits), since one may be set while the pipe is in use.
    fn publish_reads(&mut self, order: Ordering) {
        if self.unpublished != 0 {
            self.shared.msgs_read.store(self.msgs_read, order);
            self.unpublished = 0;
        }
    }

    /// Clears a reached wake-up target and notifies the writer; the compare-and-swap makes
    /// sure one target earns one notification.
    fn wake_writer_if_waiting(&self) {
        let wake_at = &self.shared.wake_writer_at;
        let mut target = wake_at.load(Ordering::Acquire);
        while target != NOT_WAITING && self.msgs_read >= target {
            match wake_at.compare_exchange(target, NOT_WAITING, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.shared.writer_wake.notify();
                    return;
                }
                Err(current) => target = current,
            }
        }
    }
}

/// How many reads the reader batches before telling the writer, for a HWM of `hwm`.
fn publish_batch(hwm: u64) -> u16 {
    // At most MAX_PUBLISH_BATCH, so the narrowing loses nothing.
    hwm.div_ceil(2).min(MAX_PUBLISH_BATCH) as u16
}

impl<T> Drop for QueueReader<T> {
    /// Closes the pipe: the writer sees [`crate::Writer::is_closed`] and is woken; frames still
    /// queued are dropped by whichever end leaves last.
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.reader_head.store(self.head, Ordering::Relaxed);
        shared
            .reader_position
            .store(self.position, Ordering::Relaxed);
        self.front.reader_closed.store(true, Ordering::Release);
        shared.writer_wake.notify();
    }
}

impl<T> fmt::Debug for QueueReader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueReader")
            .field("position", &self.position)
            .field("limit", &self.limit)
            .field("msgs_read", &self.msgs_read)
            .field("front", &self.front)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}
