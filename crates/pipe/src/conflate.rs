//! The conflating pipe (ZMQ_CONFLATE): a slot that holds only the newest complete message.
//!
//! ```text
//!   writer: partial ──(last frame)──> complete ──flush──> [pending] ──read──> current: reader
//!                                     newer replaces       newer replaces      frames handed out
//! ```
//!
//! libzmq's `ypipe_conflate` is a double buffer of single frames, so a multipart message can
//! be torn (the reader may get its first frame and a later message's last one). Here the unit
//! replaced is the whole message: the reader gets the newest message complete, never a mix.
//!
//! Conflation is not a hot path (its point is to drop messages), so the slot is a mutex; the
//! four frame buffers swap places instead of being reallocated, so a steady flow of messages
//! of a steady size allocates nothing.

use std::collections::VecDeque;
use std::fmt;
use std::mem;
use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use crate::notify::Notify;
use crate::reader::Read;
use crate::sync::{Arc, AtomicBool, Mutex, MutexGuard};

/// What both ends of a conflating pipe see.
pub(crate) struct Slot<T> {
    state: Mutex<State<T>>,
    /// Set by the reader's drop, read by the writer without the lock on every write.
    reader_closed: AtomicBool,
    reader_wake: std::sync::Arc<dyn Notify>,
    writer_wake: std::sync::Arc<dyn Notify>,
}

struct State<T> {
    /// Frames of the newest flushed message the reader has not taken; empty when none.
    pending: VecDeque<T>,
    /// The reader found nothing and waits for `reader_wake` (a new reader starts asleep, as a
    /// queue's does, so the first flush wakes it).
    reader_asleep: bool,
    writer_closed: bool,
}

impl<T> Slot<T> {
    pub(crate) fn new(
        reader_wake: std::sync::Arc<dyn Notify>,
        writer_wake: std::sync::Arc<dyn Notify>,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                pending: VecDeque::new(),
                reader_asleep: true,
                writer_closed: false,
            }),
            reader_closed: AtomicBool::new(false),
            reader_wake,
            writer_wake,
        }
    }

    /// No code panics while holding the lock (values are only swapped under it, never
    /// dropped), so a poisoned lock still guards consistent state.
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("reader_closed", &self.reader_closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The producing end of a conflating pipe.
pub(crate) struct ConflateWriter<T> {
    slot: Arc<Slot<T>>,
    /// Frames of the message being written.
    partial: VecDeque<T>,
    /// The newest complete message written since the last flush; empty when none.
    complete: VecDeque<T>,
}

impl<T> ConflateWriter<T> {
    pub(crate) fn new(slot: Arc<Slot<T>>) -> Self {
        Self {
            slot,
            partial: VecDeque::new(),
            complete: VecDeque::new(),
        }
    }

    /// Never refuses: a finished message replaces the one written before it.
    pub(crate) fn try_write(&mut self, item: T, more: bool) {
        if self.is_closed() {
            return;
        }
        self.partial.push_back(item);
        if !more {
            mem::swap(&mut self.partial, &mut self.complete);
            self.partial.clear();
        }
    }

    /// Replaces the message waiting in the slot with the newest complete one, waking the
    /// reader if it had found the slot empty.
    pub(crate) fn flush(&mut self) {
        if self.complete.is_empty() {
            return;
        }
        let wake = {
            let mut state = self.slot.lock();
            mem::swap(&mut state.pending, &mut self.complete);
            mem::take(&mut state.reader_asleep)
        };
        // The message it displaced (if the reader had not taken it) is dropped outside the lock.
        self.complete.clear();
        if wake {
            self.slot.reader_wake.notify();
        }
    }

    pub(crate) fn rollback(&mut self) {
        self.partial.clear();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.slot.reader_closed.load(Ordering::Acquire)
    }
}

impl<T> Drop for ConflateWriter<T> {
    /// Publishes the newest complete message, drops an unfinished one and tells the reader the
    /// pipe is closed; it reads what was published and then `Closed`.
    fn drop(&mut self) {
        self.rollback();
        self.flush();
        let wake = {
            let mut state = self.slot.lock();
            state.writer_closed = true;
            mem::take(&mut state.reader_asleep)
        };
        if wake {
            self.slot.reader_wake.notify();
        }
    }
}

impl<T> fmt::Debug for ConflateWriter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConflateWriter")
            .field("partial", &self.partial.len())
            .field("complete", &self.complete.len())
            .field("slot", &self.slot)
            .finish()
    }
}

/// The consuming end of a conflating pipe.
pub(crate) struct ConflateReader<T> {
    slot: Arc<Slot<T>>,
    /// The rest of the message being read.
    current: VecDeque<T>,
}

impl<T> ConflateReader<T> {
    pub(crate) fn new(slot: Arc<Slot<T>>) -> Self {
        Self {
            slot,
            current: VecDeque::new(),
        }
    }

    pub(crate) fn read(&mut self) -> Read<T> {
        if self.current.is_empty() {
            if let Some(closed) = self.refill() {
                return closed;
            }
        }
        match self.current.pop_front() {
            Some(item) => Read::Item {
                item,
                more: !self.current.is_empty(),
            },
            None => Read::Empty,
        }
    }

    pub(crate) fn has_message(&mut self) -> bool {
        !self.current.is_empty() || self.refill().is_none()
    }

    /// [`Self::read`] without going to sleep on an empty pipe (see `Reader::read_awake`).
    pub(crate) fn read_awake(&mut self) -> Read<T> {
        if self.current.is_empty() {
            let mut state = self.slot.lock();
            if state.pending.is_empty() {
                return Read::Empty;
            }
            mem::swap(&mut state.pending, &mut self.current);
        }
        self.read()
    }

    /// Takes the pending message into `current`. When there is none, goes to sleep and returns
    /// `Empty`, or `Closed` once the writer is gone.
    fn refill(&mut self) -> Option<Read<T>> {
        let mut state = self.slot.lock();
        if !state.pending.is_empty() {
            mem::swap(&mut state.pending, &mut self.current);
            return None;
        }
        if state.writer_closed {
            return Some(Read::Closed);
        }
        state.reader_asleep = true;
        Some(Read::Empty)
    }
}

impl<T> Drop for ConflateReader<T> {
    /// Closes the pipe: the writer sees `is_closed` and is woken.
    fn drop(&mut self) {
        self.slot.reader_closed.store(true, Ordering::Release);
        self.slot.writer_wake.notify();
    }
}

impl<T> fmt::Debug for ConflateReader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConflateReader")
            .field("current", &self.current.len())
            .field("slot", &self.slot)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::thread;
    use std::time::{Duration, Instant};

    use crate::{pipe_conflate, Notify, Read, Reader, Writer};

    use super::*;

    #[derive(Debug, Default)]
    struct Counter(AtomicUsize);

    impl Notify for Counter {
        fn notify(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Counter {
        fn get(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    type Wakes = std::sync::Arc<Counter>;

    fn counted<T: Send>() -> (Writer<T>, Reader<T>, Wakes, Wakes) {
        let reader_wake = std::sync::Arc::new(Counter::default());
        let writer_wake = std::sync::Arc::new(Counter::default());
        let (w, r) = pipe_conflate(reader_wake.clone(), writer_wake.clone());
        (w, r, reader_wake, writer_wake)
    }

    fn item<T>(read: Read<T>) -> (T, bool) {
        match read {
            Read::Item { item, more } => (item, more),
            Read::Empty => panic!("expected an item, got Empty"),
            Read::Closed => panic!("expected an item, got Closed"),
        }
    }

    #[test]
    fn the_newest_flushed_message_replaces_older_ones() {
        let (mut w, mut r, _, _) = counted::<u32>();
        for i in 0..100 {
            assert!(w.can_write(), "a conflating pipe has no HWM");
            w.try_write(i, false).unwrap();
            w.flush();
        }
        assert!(r.has_message());
        assert_eq!(item(r.read()), (99, false));
        assert_eq!(r.read(), Read::Empty);
        assert!(!r.has_message());
        // Messages written between flushes conflate too.
        for i in 100..110 {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        assert_eq!(item(r.read()), (109, false));
        assert_eq!(r.read(), Read::Empty);
    }

    #[test]
    fn flush_publishes_complete_messages_only() {
        let (mut w, mut r, _, _) = counted::<u32>();
        w.try_write(1, true).unwrap();
        w.flush();
        assert_eq!(r.read(), Read::Empty);
        w.try_write(2, false).unwrap();
        assert_eq!(r.read(), Read::Empty, "not flushed yet");
        w.flush();
        assert_eq!(item(r.read()), (1, true));
        assert_eq!(item(r.read()), (2, false));
        assert_eq!(r.read(), Read::Empty);
    }

    #[test]
    fn multipart_messages_are_replaced_whole_never_mixed() {
        let (mut w, mut r, _, _) = counted::<u32>();
        w.try_write(1, true).unwrap();
        w.try_write(2, false).unwrap();
        w.try_write(3, true).unwrap();
        w.try_write(4, true).unwrap();
        w.try_write(5, false).unwrap();
        w.flush();
        assert_eq!(item(r.read()), (3, true));
        // A newer message flushed while the reader is inside one does not cut it short.
        w.try_write(6, true).unwrap();
        w.try_write(7, false).unwrap();
        w.flush();
        assert_eq!(item(r.read()), (4, true));
        assert_eq!(item(r.read()), (5, false));
        assert_eq!(item(r.read()), (6, true));
        assert_eq!(item(r.read()), (7, false));
        assert_eq!(r.read(), Read::Empty);
    }

    #[test]
    fn reader_is_woken_only_on_empty_to_non_empty() {
        let (mut w, mut r, reader_wake, writer_wake) = counted::<u32>();
        w.try_write(1, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 1, "a new reader counts as asleep");
        w.try_write(2, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 1, "the reader has not looked since");
        assert_eq!(item(r.read()), (2, false));
        w.try_write(3, false).unwrap();
        w.flush();
        assert_eq!(
            reader_wake.get(),
            1,
            "the reader did not find the pipe empty"
        );
        assert_eq!(item(r.read()), (3, false));
        assert_eq!(r.read(), Read::Empty);
        w.try_write(4, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 2);
        assert_eq!(writer_wake.get(), 0, "a conflating writer never waits");
    }

    #[test]
    fn writer_drop_publishes_the_last_message_then_closes() {
        let (mut w, mut r, reader_wake, _) = counted::<u32>();
        assert_eq!(r.read(), Read::Empty);
        w.try_write(1, false).unwrap();
        w.try_write(2, false).unwrap();
        w.try_write(3, true).unwrap();
        drop(w);
        assert_eq!(
            reader_wake.get(),
            1,
            "one wake-up for the flush and the close"
        );
        assert_eq!(item(r.read()), (2, false));
        assert_eq!(r.read(), Read::Closed);
        assert_eq!(r.read(), Read::Closed);
        assert!(!r.has_message());
    }

    #[test]
    fn writer_drop_wakes_a_sleeping_reader_of_an_empty_pipe() {
        let (w, mut r, reader_wake, _) = counted::<u32>();
        assert_eq!(r.read(), Read::Empty);
        drop(w);
        assert_eq!(reader_wake.get(), 1);
        assert_eq!(r.read(), Read::Closed);
    }

    #[test]
    fn reader_drop_closes_and_later_writes_are_dropped() {
        let drops = std::sync::Arc::new(AtomicUsize::new(0));
        let (mut w, r, _, writer_wake) = counted::<Counted>();
        w.try_write(Counted(drops.clone()), false).unwrap();
        w.flush();
        drop(r);
        assert!(w.is_closed());
        assert_eq!(writer_wake.get(), 1);
        w.try_write(Counted(drops.clone()), false).unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped at once");
        drop(w);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn rollback_drops_only_the_unfinished_message() {
        let (mut w, mut r, _, _) = counted::<u32>();
        w.try_write(1, false).unwrap();
        w.try_write(2, true).unwrap();
        w.rollback();
        w.try_write(3, true).unwrap();
        w.try_write(4, false).unwrap();
        w.flush();
        assert_eq!(item(r.read()), (3, true));
        assert_eq!(item(r.read()), (4, false));
        w.try_write(5, true).unwrap();
        w.rollback();
        w.flush();
        assert_eq!(r.read(), Read::Empty);
    }

    /// Counts its drops, to prove every frame is dropped exactly once wherever it was left.
    #[derive(Debug)]
    struct Counted(std::sync::Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_frame_is_dropped_once_in_either_drop_order() {
        for reader_first in [false, true] {
            let drops = std::sync::Arc::new(AtomicUsize::new(0));
            let (mut w, mut r, _, _) = counted::<Counted>();
            let mut written = 0;
            let mut write = |w: &mut Writer<Counted>, more| {
                w.try_write(Counted(drops.clone()), more).unwrap();
                written += 1;
            };
            write(&mut w, true);
            write(&mut w, false);
            w.flush();
            assert!(matches!(r.read(), Read::Item { more: true, .. }));
            // Pending in the slot, complete but unflushed, and half written.
            write(&mut w, false);
            w.flush();
            write(&mut w, false);
            write(&mut w, true);
            if reader_first {
                drop(r);
                drop(w);
            } else {
                drop(w);
                drop(r);
            }
            assert_eq!(drops.load(Ordering::SeqCst), written);
        }
    }

    /// Wakes the reader thread and remembers that it did, so a parked reader can tell a
    /// wake-up from a spurious return.
    #[derive(Debug)]
    struct Unpark {
        reader: thread::Thread,
        woken: std::sync::atomic::AtomicBool,
    }

    impl Notify for Unpark {
        fn notify(&self) {
            self.woken.store(true, Ordering::SeqCst);
            self.reader.unpark();
        }
    }

    #[test]
    fn two_threads_see_increasing_values_and_the_last_one() {
        const MESSAGES: u64 = if cfg!(miri) { 200 } else { 200_000 };
        let wake = std::sync::Arc::new(Unpark {
            reader: thread::current(),
            woken: std::sync::atomic::AtomicBool::new(false),
        });
        let (mut w, mut r) =
            pipe_conflate::<u64>(wake.clone(), std::sync::Arc::new(Counter::default()));
        let writer = thread::spawn(move || {
            for i in 0..MESSAGES {
                w.try_write(i, true).unwrap();
                w.try_write(i, false).unwrap();
                w.flush();
            }
        });
        let mut last = None;
        let mut received = 0u64;
        loop {
            match r.read() {
                Read::Item { item, more: true } => {
                    assert!(last.is_none_or(|l| item > l), "{item} after {last:?}");
                    assert_eq!(r.read(), Read::Item { item, more: false });
                    last = Some(item);
                    received += 1;
                }
                Read::Item { more: false, .. } => panic!("a message's first frame is missing"),
                Read::Empty => {
                    let since = Instant::now();
                    while !wake.woken.swap(false, Ordering::SeqCst) {
                        assert!(since.elapsed() < Duration::from_secs(20), "lost wake-up");
                        thread::park_timeout(Duration::from_millis(100));
                    }
                }
                Read::Closed => break,
            }
        }
        writer.join().unwrap();
        assert_eq!(
            last,
            Some(MESSAGES - 1),
            "the newest message always arrives"
        );
        assert!((1..=MESSAGES).contains(&received));
    }
}
