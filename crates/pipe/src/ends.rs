//! The two public pipe ends, each either a queue end or a conflating end.
//!
//! One type for both kinds keeps the runtime's `Writer<Bytes>`/`Reader<Bytes>` unchanged
//! whatever the socket's options; the price is one predictable branch per call.

use std::fmt;

use crate::conflate::{ConflateReader, ConflateWriter};
use crate::reader::{QueueReader, Read};
use crate::writer::QueueWriter;

/// The producing end of a pipe. `Send`, not `Sync`: one thread writes at a time.
pub struct Writer<T>(WriterKind<T>);

enum WriterKind<T> {
    Queue(QueueWriter<T>),
    Conflate(ConflateWriter<T>),
}

impl<T> Writer<T> {
    pub(crate) fn queue(writer: QueueWriter<T>) -> Self {
        Self(WriterKind::Queue(writer))
    }

    pub(crate) fn conflate(writer: ConflateWriter<T>) -> Self {
        Self(WriterKind::Conflate(writer))
    }

    /// Writes one frame; `more` says further frames of the same message follow. The frame
    /// stays invisible to the reader until its message is complete and [`Writer::flush`]ed.
    ///
    /// Only the first frame of a message can be refused, and only when the pipe already holds
    /// `hwm` complete messages; the item comes back and `writer_wake` will be notified once
    /// the reader has freed space (or closed). Once the reader is gone frames are accepted
    /// and dropped at once; [`Writer::is_closed`] tells the caller. A conflating pipe never
    /// refuses: a complete message replaces the one before it.
    #[inline]
    pub fn try_write(&mut self, item: T, more: bool) -> Result<(), T> {
        match &mut self.0 {
            WriterKind::Queue(w) => w.try_write(item, more),
            WriterKind::Conflate(w) => {
                w.try_write(item, more);
                Ok(())
            }
        }
    }

    /// Whether the first frame of the next message would be accepted. A `false` arms the same
    /// wake-up as a refused [`Writer::try_write`]. In the middle of a message it is `true`;
    /// on a conflating pipe always.
    #[inline]
    pub fn can_write(&self) -> bool {
        match &self.0 {
            WriterKind::Queue(w) => w.can_write(),
            WriterKind::Conflate(_) => true,
        }
    }

    /// Publishes every complete message written so far (the frames of an unfinished message
    /// stay back) and wakes the reader only if it had gone to sleep on an empty pipe. A
    /// conflating pipe publishes only the newest, replacing one the reader has not taken.
    #[inline]
    pub fn flush(&mut self) {
        match &mut self.0 {
            WriterKind::Queue(w) => w.flush(),
            WriterKind::Conflate(w) => w.flush(),
        }
    }

    /// Drops the frames of the message being written (the connection died half way through
    /// it); complete messages, flushed or not, stay.
    pub fn rollback(&mut self) {
        match &mut self.0 {
            WriterKind::Queue(w) => w.rollback(),
            WriterKind::Conflate(w) => w.rollback(),
        }
    }

    /// Whether the reader has been dropped; writes are then pointless (and discarded).
    #[inline]
    pub fn is_closed(&self) -> bool {
        match &self.0 {
            WriterKind::Queue(w) => w.is_closed(),
            WriterKind::Conflate(w) => w.is_closed(),
        }
    }

    /// The address of the line the writer reads and swaps on every message (a queue pipe's
    /// `published`, closed flags and HWM; 0 for a conflating pipe), for [`crate::prefetch`]
    /// by a caller that can name the pipe before it has read the writer (a ROUTER's routing
    /// entry). The pipe may be gone by the time the address is used: a prefetch is harmless.
    pub fn front_line(&self) -> usize {
        match &self.0 {
            WriterKind::Queue(w) => w.front_line(),
            WriterKind::Conflate(_) => 0,
        }
    }

    /// The address of the slot that the message after the next one will start at, if the
    /// next one is a single frame; 0 where it is not known yet (the next chunk is not chosen)
    /// and for a conflating pipe. A hint for [`Writer::prefetch_slot`], for a caller that can
    /// name the pipe before it has read the writer (a ROUTER's routing entry).
    #[inline]
    pub fn slot_after_next(&self) -> usize {
        match &self.0 {
            WriterKind::Queue(w) => w.slot_after_next(),
            WriterKind::Conflate(_) => 0,
        }
    }

    /// Starts loading the lines of the slot at `hint` (from [`Writer::slot_after_next`]),
    /// which the next write to that pipe will store to. Any value will do: 0 does nothing, and
    /// a stale hint or one into a chunk since freed costs at most a useless load.
    #[inline]
    pub fn prefetch_slot(hint: usize) {
        if hint != 0 {
            crate::chunk::prefetch_slot::<T>(hint);
        }
    }

    /// A handle that changes the pipe's HWM; `None` for a conflating pipe, which has none.
    pub fn hwm(&self) -> Option<crate::Hwm> {
        match &self.0 {
            WriterKind::Queue(w) => Some(w.hwm()),
            WriterKind::Conflate(_) => None,
        }
    }

    /// Chunks a queue writer has allocated (0 for a conflating one).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn chunk_allocations(&self) -> u64 {
        match &self.0 {
            WriterKind::Queue(w) => w.chunk_allocations(),
            WriterKind::Conflate(_) => 0,
        }
    }
}

impl<T> fmt::Debug for Writer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            WriterKind::Queue(w) => w.fmt(f),
            WriterKind::Conflate(w) => w.fmt(f),
        }
    }
}

/// The consuming end of a pipe. `Send`, not `Sync`: one thread reads at a time.
pub struct Reader<T>(ReaderKind<T>);

enum ReaderKind<T> {
    Queue(QueueReader<T>),
    Conflate(ConflateReader<T>),
}

impl<T> Reader<T> {
    pub(crate) fn queue(reader: QueueReader<T>) -> Self {
        Self(ReaderKind::Queue(reader))
    }

    pub(crate) fn conflate(reader: ConflateReader<T>) -> Self {
        Self(ReaderKind::Conflate(reader))
    }

    /// Takes the next frame. Frames come in the order written, a message's frames back to
    /// back, and only once the whole message was flushed. A conflating pipe yields the newest
    /// message flushed since the last read, whole.
    #[inline]
    pub fn read(&mut self) -> Read<T> {
        match &mut self.0 {
            ReaderKind::Queue(r) => r.read(),
            ReaderKind::Conflate(r) => r.read(),
        }
    }

    /// Takes the next frame as [`Reader::read`] does, but `Empty` leaves the reader awake: the
    /// writer's flushes stay free of wake-ups while the reader's thread is busy anyway (an I/O
    /// thread writing to its socket between two reads). A reader that then waits for its
    /// wake-up must first get `Empty` from [`Reader::read`] (or `false` from
    /// [`Reader::has_message`]), which declares it asleep or finds what came meanwhile.
    #[inline]
    pub fn read_awake(&mut self) -> Read<T> {
        match &mut self.0 {
            ReaderKind::Queue(r) => r.read_awake(),
            ReaderKind::Conflate(r) => r.read_awake(),
        }
    }

    /// Hands each frame [`Reader::read_awake`] would return to `f`, in order, until `f`
    /// returns `false` (then `false`) or the pipe is empty (then `true`; the reader stays
    /// awake, as after `read_awake`). For a reader that takes many frames in a row: a frame
    /// passed as a value costs none of the stack round trip of a returned [`Read`].
    #[inline]
    pub fn read_awake_each(&mut self, mut f: impl FnMut(T, bool) -> bool) -> bool {
        match &mut self.0 {
            ReaderKind::Queue(r) => r.read_awake_each(f),
            ReaderKind::Conflate(r) => loop {
                match r.read_awake() {
                    Read::Item { item, more } => {
                        if !f(item, more) {
                            return false;
                        }
                    }
                    Read::Empty | Read::Closed => return true,
                }
            },
        }
    }

    /// Whether a frame is ready to read, without taking it. A `false` puts the reader to
    /// sleep exactly as [`Reader::read`] returning `Empty` does (or means the pipe is closed).
    #[inline]
    pub fn has_message(&mut self) -> bool {
        match &mut self.0 {
            ReaderKind::Queue(r) => r.has_message(),
            ReaderKind::Conflate(r) => r.has_message(),
        }
    }

    /// A handle that changes the pipe's HWM; `None` for a conflating pipe, which has none.
    pub fn hwm(&self) -> Option<crate::Hwm> {
        match &self.0 {
            ReaderKind::Queue(r) => Some(r.hwm()),
            ReaderKind::Conflate(_) => None,
        }
    }
}

impl<T> fmt::Debug for Reader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ReaderKind::Queue(r) => r.fmt(f),
            ReaderKind::Conflate(r) => r.fmt(f),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    struct Nobody;

    impl crate::Notify for Nobody {
        fn notify(&self) {}
    }

    /// A socket keeps its writers 64-byte aligned (`Peer` in the runtime); the fields a
    /// message touches must then lie in the writer's first line, wherever the enum puts its
    /// tag (issue 15: one cold line per send for the writer's own state).
    #[test]
    fn a_queue_writers_hot_fields_fit_its_first_line() {
        let (w, _r) =
            crate::pipe::<[u64; 4]>(0, std::sync::Arc::new(Nobody), std::sync::Arc::new(Nobody));
        let base = std::ptr::from_ref(&w) as usize;
        let WriterKind::Queue(q) = &w.0 else {
            panic!("a queue pipe");
        };
        let hot = q.hot_fields();
        assert!(
            hot.start >= base && hot.end <= base + 64,
            "{hot:x?} from {base:x}"
        );
    }

    /// An idle pipe writes to its first chunk, on small pages (resident only where written); a
    /// busy one moves on to chunks on huge pages after its first 64 messages and stays there,
    /// its first chunk freed rather than recycled (issue 15).
    #[test]
    fn a_busy_pipe_moves_to_huge_pages() {
        let (mut w, mut r) =
            crate::pipe::<u64>(0, std::sync::Arc::new(Nobody), std::sync::Arc::new(Nobody));
        let huge = |w: &Writer<u64>| match &w.0 {
            WriterKind::Queue(q) => q.tail_is_huge(),
            WriterKind::Conflate(_) => panic!("a queue pipe"),
        };
        let chunk = crate::chunk::CHUNK_SIZE as u64;
        let first = crate::chunk::FIRST_CHUNK_SLOTS as u64;
        for i in 0..4 * chunk {
            assert_eq!(huge(&w), i >= first, "message {i}");
            w.try_write(i, false).unwrap();
            w.flush();
            assert!(matches!(r.read(), crate::Read::Item { item, .. } if item == i));
        }
        assert_eq!(
            w.chunk_allocations(),
            3,
            "the first chunk, then two on huge pages in turn"
        );
    }

    /// A flush that wakes the reader finds the wake-up on the line it has just swapped
    /// `published` on (issue 15: one cold line less per wake-up).
    #[test]
    fn the_front_line_holds_the_readers_wake_up() {
        // The cell that holds it starts a line (`CachePadded`).
        assert!(std::mem::size_of::<crate::shared::Front>() <= 64);
    }
}
