//! A lock-free single-producer/single-consumer message pipe with high-water marks and lazy
//! wake-ups: the queue between an I/O thread and a socket.
//!
//! ```text
//!   writer thread                                          reader thread
//!   try_write(frame, more) ─┐                          ┌─> read() -> Item | Empty | Closed
//!   flush() ──publish──> [chunk]->[chunk]->[chunk] ────┘
//!        │                      ▲ one spare chunk recycled: steady flow allocates nothing
//!        └─ reader_wake.notify() only if the reader had found the pipe empty
//!   writer_wake.notify() <── reader frees room after a refusal (HWM) or closes
//! ```
//!
//! The design is libzmq's `ypipe`/`yqueue`/`pipe` in Rust:
//!
//! - Frames go into a linked list of fixed-size chunks; the reader hands each consumed chunk
//!   back through a single spare slot, so a steady flow allocates nothing. Chunks are carved
//!   from 2 MiB slabs shared by all pipes (`slab`): a pipe's first chunk on small pages, the
//!   ones after it on huge pages, so that many busy pipes' chunks do not take a TLB entry each
//!   while an idle pipe stays resident only where written.
//! - One shared word, `published`, holds the end of what the writer has flushed, or a
//!   sentinel that says "the reader found the pipe empty and sleeps". The writer publishes
//!   with a compare-and-swap from its previous value: if that fails, the reader is asleep and
//!   gets exactly one `reader_wake.notify()`. While both sides are busy, no wake-up is sent.
//! - Only complete messages are published: frames written with `more = true` wait for the
//!   frame that ends their message, so the reader sees a message whole or not at all.
//! - The high-water mark counts complete messages. The reader reports its count back in
//!   batches; a refused writer leaves a target count and the reader wakes it once the target
//!   is reached, with a fence on each side so that neither misses the other.
//!
//! Why not a general-purpose channel: those signal per message or per state change, while a
//! socket needs its wake-up fd touched only on the empty-to-non-empty edge, batch publication,
//! message atomicity and a HWM in messages rather than items.
//!
//! # Checking the unsafe code
//!
//! The protocol is model-checked with [loom](https://docs.rs/loom) (the chunk size shrinks to
//! two slots so the models cross chunk boundaries):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p ferromq-pipe --release
//! ```
//!
//! (only the loom models run then; the other tests need the real atomics). A separate
//! `CARGO_TARGET_DIR` for it avoids rebuilding the normal build's dependencies each time.
#![deny(unsafe_op_in_unsafe_fn)]

mod chunk;
mod conflate;
mod ends;
mod hwm;
mod notify;
mod prefetch;
mod reader;
mod shared;
mod slab;
mod sync;
mod writer;

#[cfg(all(test, loom))]
mod loom_tests;

pub use ends::{Reader, Writer};
pub use hwm::Hwm;
pub use notify::Notify;
pub use prefetch::prefetch;
pub use reader::Read;

use chunk::Chunk;
use conflate::{ConflateReader, ConflateWriter, Slot};
use reader::QueueReader;
use shared::Shared;
use sync::Arc;
use writer::QueueWriter;

/// Creates a pipe holding at most `hwm` complete messages (0 = unlimited).
///
/// `reader_wake` is called when the reader had found the pipe empty and a flush published
/// more, or the writer closed; `writer_wake` when the writer had been refused and the reader
/// freed room, or the reader closed.
pub fn pipe<T: Send>(
    hwm: usize,
    reader_wake: std::sync::Arc<dyn Notify>,
    writer_wake: std::sync::Arc<dyn Notify>,
) -> (Writer<T>, Reader<T>) {
    let first_chunk = Chunk::alloc();
    let shared = Arc::new(Shared::new(first_chunk, writer_wake));
    let front = shared::front(hwm, reader_wake);
    let writer = QueueWriter::new(
        Arc::clone(&shared),
        shared::FrontCell::clone(&front),
        first_chunk,
    );
    let reader = QueueReader::new(shared, front, first_chunk);
    (Writer::queue(writer), Reader::queue(reader))
}

/// Creates a conflating pipe (ZMQ_CONFLATE): it holds only the newest complete message, so the
/// reader always gets the latest and memory stays one message however slow the reader is.
///
/// The ends keep the queue's contract except for the HWM: a flush that makes the pipe
/// non-empty wakes a reader that had found it empty, the reader reads `Closed` after the last
/// message once the writer is gone, the writer is never refused (`can_write` is always true)
/// and `writer_wake` is called only when the reader closes. A message replaces the previous
/// one whole, so the reader never sees frames of two messages mixed.
pub fn pipe_conflate<T: Send>(
    reader_wake: std::sync::Arc<dyn Notify>,
    writer_wake: std::sync::Arc<dyn Notify>,
) -> (Writer<T>, Reader<T>) {
    let slot = Arc::new(Slot::new(reader_wake, writer_wake));
    let writer = ConflateWriter::new(Arc::clone(&slot));
    let reader = ConflateReader::new(slot);
    (Writer::conflate(writer), Reader::conflate(reader))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};

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

    fn counted_pipe<T: Send>(
        hwm: usize,
    ) -> (
        Writer<T>,
        Reader<T>,
        std::sync::Arc<Counter>,
        std::sync::Arc<Counter>,
    ) {
        let reader_wake = std::sync::Arc::new(Counter::default());
        let writer_wake = std::sync::Arc::new(Counter::default());
        let (w, r) = pipe(hwm, reader_wake.clone(), writer_wake.clone());
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
    fn frames_arrive_in_order_across_chunks() {
        let (mut w, mut r, _, _) = counted_pipe::<u32>(0);
        for i in 0..1000 {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        for i in 0..1000 {
            assert_eq!(item(r.read()), (i, false));
        }
        assert_eq!(r.read(), Read::Empty);
    }

    #[test]
    fn more_flags_survive_chunk_reuse_and_rollback() {
        // Frames whose flags change from round to round, over several chunks that are
        // recycled between rounds, with an unfinished message rolled back now and then: every
        // frame must read back with the flag it was written with, not one a slot kept from an
        // earlier round.
        let (mut w, mut r, _, _) = counted_pipe::<u32>(0);
        for round in 0..8u32 {
            let mut sent = Vec::new();
            for i in 0..700u32 {
                let more = (i + round) % 3 != 0 && i != 699;
                w.try_write(i, more).unwrap();
                sent.push((i, more));
            }
            w.flush();
            if round % 2 == 1 {
                for i in 0..5 {
                    w.try_write(1000 + i, true).unwrap();
                }
                w.rollback();
            }
            for expected in sent {
                assert_eq!(item(r.read()), expected, "round {round}");
            }
            assert_eq!(r.read(), Read::Empty);
        }
    }

    #[test]
    fn multipart_message_is_invisible_until_its_last_frame() {
        let (mut w, mut r, _, _) = counted_pipe::<u32>(0);
        w.try_write(1, true).unwrap();
        w.try_write(2, true).unwrap();
        w.flush();
        assert_eq!(r.read(), Read::Empty);
        assert!(!r.has_message());
        w.try_write(3, false).unwrap();
        w.flush();
        assert!(r.has_message());
        assert_eq!(item(r.read()), (1, true));
        assert_eq!(item(r.read()), (2, true));
        assert_eq!(item(r.read()), (3, false));
        assert_eq!(r.read(), Read::Empty);
    }

    #[test]
    fn flush_publishes_complete_messages_only() {
        let (mut w, mut r, _, _) = counted_pipe::<u32>(0);
        w.try_write(1, false).unwrap();
        w.try_write(2, true).unwrap();
        w.flush();
        assert_eq!(item(r.read()), (1, false));
        assert_eq!(r.read(), Read::Empty);
        w.try_write(3, false).unwrap();
        w.flush();
        assert_eq!(item(r.read()), (2, true));
        assert_eq!(item(r.read()), (3, false));
    }

    #[test]
    fn hwm_refuses_only_the_first_frame_of_a_message() {
        let (mut w, mut r, _, writer_wake) = counted_pipe::<u32>(2);
        w.try_write(1, false).unwrap();
        // Second message starts below the HWM; all its frames go in, crossing chunks.
        for i in 0..600 {
            w.try_write(i, true).unwrap();
        }
        w.try_write(600, false).unwrap();
        assert!(!w.can_write());
        assert_eq!(w.try_write(7, false), Err(7));
        assert_eq!(w.try_write(8, true), Err(8));
        w.flush();
        assert_eq!(item(r.read()), (1, false));
        assert_eq!(
            writer_wake.get(),
            1,
            "one message freed reaches hwm - lwm = 1"
        );
        assert!(w.can_write());
        w.try_write(9, false).unwrap();
        w.flush();
        for i in 0..600 {
            assert_eq!(item(r.read()), (i, true));
        }
        assert_eq!(item(r.read()), (600, false));
        assert_eq!(item(r.read()), (9, false));
        assert_eq!(writer_wake.get(), 1);
    }

    #[test]
    fn a_raised_hwm_admits_at_once() {
        let (mut w, _r, _, _) = counted_pipe::<u32>(2);
        w.try_write(1, false).unwrap();
        w.try_write(2, false).unwrap();
        assert_eq!(w.try_write(3, false), Err(3));
        w.hwm().unwrap().set(3);
        w.try_write(3, false).unwrap();
        assert_eq!(w.try_write(4, false), Err(4));
        w.hwm().unwrap().set(0);
        for i in 4..1000 {
            w.try_write(i, false).unwrap();
        }
    }

    #[test]
    fn a_hwm_set_on_an_unlimited_pipe_in_use_holds_and_wakes_the_writer() {
        let (mut w, mut r, _, writer_wake) = counted_pipe::<u32>(0);
        // The reader is busy (never asleep) when the limit arrives.
        for i in 0..10 {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        assert_eq!(item(r.read()), (0, false));
        let hwm = w.hwm().unwrap();
        hwm.set(4);
        assert_eq!(hwm.get(), 4);
        assert_eq!(w.try_write(10, false), Err(10), "9 in flight, limit 4");
        // The reader took its batch at its last refill, when there was no limit: it publishes
        // nothing (and so wakes nobody) until it has drained what it saw and goes to sleep.
        for i in 1..10 {
            assert_eq!(item(r.read()), (i, false));
            assert_eq!(writer_wake.get(), 0, "nothing published after {i}");
        }
        assert_eq!(r.read(), Read::Empty);
        assert_eq!(writer_wake.get(), 1);
        for i in 10..14 {
            w.try_write(i, false).unwrap();
        }
        assert_eq!(w.try_write(14, false), Err(14), "4 in flight, limit 4");
        w.flush();
        // Its refill took the new limit's batch (2): the writer, whose target is 2 messages
        // on, is woken with the count published after the second.
        assert_eq!(item(r.read()), (10, false));
        assert_eq!(writer_wake.get(), 1);
        assert_eq!(item(r.read()), (11, false));
        assert_eq!(writer_wake.get(), 2);
        for i in 12..14 {
            assert_eq!(item(r.read()), (i, false));
        }
        assert_eq!(r.read(), Read::Empty);
        assert!(w.can_write());
    }

    #[test]
    fn a_lowered_hwm_drops_nothing_already_queued() {
        let (mut w, mut r, _, _) = counted_pipe::<u32>(100);
        for i in 0..50 {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        w.hwm().unwrap().set(10);
        assert_eq!(w.try_write(50, false), Err(50));
        for i in 0..50 {
            assert_eq!(item(r.read()), (i, false));
        }
        assert_eq!(r.read(), Read::Empty);
        w.try_write(50, false).unwrap();
    }

    #[test]
    fn a_conflating_pipe_has_no_hwm_handle() {
        let (w, _r) = pipe_conflate::<u32>(
            std::sync::Arc::new(Counter::default()),
            std::sync::Arc::new(Counter::default()),
        );
        assert!(w.hwm().is_none());
    }

    /// An unbounded pipe of `u32`s, conflating or not, and the counter its reader's wake-ups go to.
    fn unbounded_pair(conflate: bool) -> (Writer<u32>, Reader<u32>, std::sync::Arc<Counter>) {
        let reader_wake = std::sync::Arc::new(Counter::default());
        let writer_wake = std::sync::Arc::new(Counter::default());
        let (w, r) = if conflate {
            pipe_conflate::<u32>(reader_wake.clone(), writer_wake)
        } else {
            pipe::<u32>(0, reader_wake.clone(), writer_wake)
        };
        (w, r, reader_wake)
    }

    #[test]
    fn read_awake_each_takes_frames_in_order_and_stays_awake() {
        for conflate in [false, true] {
            let (mut w, mut r, reader_wake) = unbounded_pair(conflate);
            for (i, more) in [(1, true), (2, false), (3, false)] {
                w.try_write(i, more).unwrap();
            }
            w.flush();
            assert_eq!(reader_wake.get(), 1);
            let mut seen = Vec::new();
            // Stopped by `f` after the first frame: the rest stays for the next call.
            assert!(!r.read_awake_each(|i, more| {
                seen.push((i, more));
                false
            }));
            assert!(r.read_awake_each(|i, more| {
                seen.push((i, more));
                true
            }));
            if conflate {
                // Only the newest whole message.
                assert_eq!(seen, [(3, false)]);
            } else {
                assert_eq!(seen, [(1, true), (2, false), (3, false)]);
            }
            // Empty, but awake: the next flush costs no wake-up, and is seen.
            w.try_write(4, false).unwrap();
            w.flush();
            assert_eq!(reader_wake.get(), 1);
            seen.clear();
            assert!(r.read_awake_each(|i, more| {
                seen.push((i, more));
                true
            }));
            assert_eq!(seen, [(4, false)]);
            assert_eq!(r.read(), Read::Empty);
            w.try_write(5, false).unwrap();
            w.flush();
            assert_eq!(
                reader_wake.get(),
                2,
                "asleep after `read`: the flush wakes it"
            );
        }
    }

    #[test]
    fn read_awake_arms_no_wake_up_until_a_sleeping_read() {
        for conflate in [false, true] {
            let (mut w, mut r, reader_wake) = unbounded_pair(conflate);
            // A new reader counts as asleep: the first flush wakes it.
            w.try_write(1, false).unwrap();
            w.flush();
            assert_eq!(reader_wake.get(), 1);
            assert_eq!(item(r.read_awake()), (1, false));
            assert_eq!(r.read_awake(), Read::Empty);
            // Still awake: what comes now is seen by the next read and costs no wake-up.
            w.try_write(2, false).unwrap();
            w.flush();
            assert_eq!(reader_wake.get(), 1);
            assert_eq!(item(r.read_awake()), (2, false));
            assert_eq!(r.read_awake(), Read::Empty);
            w.try_write(3, false).unwrap();
            w.flush();
            assert_eq!(reader_wake.get(), 1);
            // The sleeping read finds what came before it rather than going to sleep.
            assert_eq!(item(r.read()), (3, false));
            assert_eq!(r.read(), Read::Empty);
            w.try_write(4, false).unwrap();
            w.flush();
            assert_eq!(reader_wake.get(), 2, "asleep now: the flush wakes it");
            assert_eq!(item(r.read_awake()), (4, false));
            drop(w);
            assert_eq!(
                r.read_awake(),
                Read::Empty,
                "only a sleeping read reports Closed"
            );
            assert_eq!(r.read(), Read::Closed);
        }
    }

    #[test]
    fn refused_writer_is_woken_once_after_half_the_hwm_is_read() {
        let (mut w, mut r, _, writer_wake) = counted_pipe::<u32>(4);
        for i in 0..4 {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        assert_eq!(w.try_write(4, false), Err(4));
        assert_eq!(
            w.try_write(4, false),
            Err(4),
            "a second refusal re-arms, not doubles"
        );
        item(r.read());
        assert_eq!(writer_wake.get(), 0);
        item(r.read());
        assert_eq!(writer_wake.get(), 1);
        item(r.read());
        item(r.read());
        assert_eq!(r.read(), Read::Empty);
        assert_eq!(writer_wake.get(), 1);
        w.try_write(4, false).unwrap();
        w.try_write(5, false).unwrap();
    }

    #[test]
    fn can_write_false_arms_the_wake_up() {
        let (mut w, mut r, _, writer_wake) = counted_pipe::<u32>(1);
        w.try_write(0, false).unwrap();
        w.flush();
        assert!(!w.can_write());
        item(r.read());
        assert_eq!(writer_wake.get(), 1);
        assert!(w.can_write());
    }

    #[test]
    fn flush_wakes_only_a_sleeping_reader() {
        let (mut w, mut r, reader_wake, _) = counted_pipe::<u32>(0);
        // A new reader counts as asleep: the first flush wakes it.
        w.try_write(0, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 1);
        // Busy reader (has not drained the pipe): flushing costs no wake-up.
        w.try_write(1, false).unwrap();
        w.flush();
        w.flush();
        assert_eq!(reader_wake.get(), 1);
        item(r.read());
        item(r.read());
        assert_eq!(r.read(), Read::Empty);
        assert_eq!(r.read(), Read::Empty);
        w.flush();
        assert_eq!(reader_wake.get(), 1, "an empty flush publishes nothing");
        w.try_write(2, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 2, "asleep reader: exactly one wake-up");
        w.try_write(3, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 2);
        assert!(r.has_message());
        item(r.read());
        item(r.read());
        assert!(!r.has_message(), "has_message puts the reader to sleep");
        w.try_write(4, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 3);
    }

    #[test]
    fn writer_drop_publishes_whole_messages_then_closes() {
        let (mut w, mut r, reader_wake, _) = counted_pipe::<u32>(0);
        w.try_write(1, false).unwrap();
        w.try_write(2, true).unwrap();
        drop(w);
        assert_eq!(reader_wake.get(), 1);
        assert_eq!(item(r.read()), (1, false));
        assert_eq!(r.read(), Read::Closed);
        assert_eq!(r.read(), Read::Closed);
        assert!(!r.has_message());
    }

    #[test]
    fn writer_drop_wakes_a_sleeping_reader_once() {
        let (mut w, mut r, reader_wake, _) = counted_pipe::<u32>(0);
        w.try_write(1, false).unwrap();
        w.flush();
        item(r.read());
        assert_eq!(r.read(), Read::Empty);
        let before = reader_wake.get();
        drop(w);
        assert_eq!(reader_wake.get(), before + 1);
        assert_eq!(r.read(), Read::Closed);
    }

    #[test]
    fn reader_drop_closes_and_drops_queued_items() {
        let token = std::sync::Arc::new(());
        let (mut w, r, _, writer_wake) = counted_pipe(2);
        w.try_write(token.clone(), true).unwrap();
        w.try_write(token.clone(), false).unwrap();
        w.flush();
        w.try_write(token.clone(), true).unwrap();
        assert!(!w.is_closed());
        drop(r);
        assert!(w.is_closed());
        assert_eq!(writer_wake.get(), 1);
        // Writes to a closed pipe are accepted and dropped at once, even past the HWM.
        for _ in 0..1000 {
            w.try_write(token.clone(), false).unwrap();
        }
        assert_eq!(std::sync::Arc::strong_count(&token), 4);
        drop(w);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }

    #[test]
    fn dropping_both_ends_drops_every_item_in_either_order() {
        for reader_first in [false, true] {
            let token = std::sync::Arc::new(());
            let (mut w, mut r, _, _) = counted_pipe(0);
            for i in 0..700 {
                w.try_write(token.clone(), i % 3 != 2).unwrap();
            }
            w.flush();
            for _ in 0..300 {
                item(r.read());
            }
            w.try_write(token.clone(), true).unwrap();
            if reader_first {
                drop(r);
                drop(w);
            } else {
                drop(w);
                drop(r);
            }
            assert_eq!(std::sync::Arc::strong_count(&token), 1);
        }
    }

    #[test]
    fn rollback_drops_only_the_unfinished_message() {
        let token = std::sync::Arc::new(());
        let (mut w, mut r, _, _) = counted_pipe(0);
        w.try_write((1, token.clone()), false).unwrap();
        w.flush();
        w.try_write((2, token.clone()), false).unwrap();
        for _ in 0..600 {
            w.try_write((3, token.clone()), true).unwrap();
        }
        w.rollback();
        assert_eq!(std::sync::Arc::strong_count(&token), 3);
        w.try_write((4, token.clone()), false).unwrap();
        w.flush();
        let ids: Vec<i32> = std::iter::from_fn(|| match r.read() {
            Read::Item { item, .. } => Some(item.0),
            _ => None,
        })
        .collect();
        assert_eq!(ids, [1, 2, 4]);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }

    /// The first chunk ends early (`FIRST_CHUNK_SLOTS`): a message cut off across that
    /// boundary is rolled back whole, one that straddles it arrives whole, and frames still
    /// queued on both sides of it when both ends go are dropped, each once.
    #[test]
    fn messages_straddle_the_end_of_the_first_chunk() {
        let first = chunk::FIRST_CHUNK_SLOTS as u32;
        let token = std::sync::Arc::new(());
        let (mut w, mut r, _, _) = counted_pipe(0);
        for i in 0..first - 2 {
            w.try_write((i, token.clone()), false).unwrap();
        }
        // Positions first - 2 to first: cut off, then again as a whole message.
        for i in 0..3 {
            w.try_write((200 + i, token.clone()), true).unwrap();
        }
        w.rollback();
        assert_eq!(std::sync::Arc::strong_count(&token), first as usize - 1);
        for i in 0..3 {
            w.try_write((100 + i, token.clone()), i < 2).unwrap();
        }
        w.try_write((300, token.clone()), false).unwrap();
        w.flush();
        for i in 0..first - 3 {
            assert_eq!(item(r.read()).0 .0, i);
        }
        // One message before the boundary, the straddling one and one after it stay queued.
        drop(w);
        drop(r);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }

    #[test]
    fn steady_flow_allocates_no_chunks() {
        let (mut w, mut r, _, _) = counted_pipe::<u64>(1000);
        // A window of 500 messages in flight, as a busy socket would keep.
        for i in 0..500 {
            w.try_write(i, false).unwrap();
        }
        let mut next = 500;
        let mut pump = |w: &mut Writer<u64>, r: &mut Reader<u64>, rounds: u64| {
            for _ in 0..rounds {
                w.try_write(next, true).unwrap();
                w.try_write(next, false).unwrap();
                next += 1;
                w.flush();
                item(r.read());
                item(r.read());
            }
        };
        pump(&mut w, &mut r, 2000);
        let warm = w.chunk_allocations();
        pump(&mut w, &mut r, if cfg!(miri) { 2000 } else { 100_000 });
        assert_eq!(w.chunk_allocations(), warm);
        assert!(warm <= 8, "{warm} chunks for a 1000-frame window");
    }

    #[test]
    fn unlimited_hwm_never_refuses() {
        let (mut w, _r, _, _) = counted_pipe::<u32>(0);
        for i in 0..if cfg!(miri) { 3000 } else { 100_000 } {
            w.try_write(i, false).unwrap();
        }
        assert!(w.can_write());
    }

    #[test]
    #[cfg_attr(miri, ignore = "65,536 messages")]
    fn an_unlimited_reader_that_never_sleeps_still_publishes_every_read() {
        // Without a HWM the reader counts unpublished reads until it sleeps; 2^16 of them in
        // one stretch must neither overflow the count nor wrap it to "nothing to publish".
        let (mut w, mut r, _, _) = counted_pipe::<u32>(0);
        let n = 1u32 << 16;
        for i in 0..n {
            w.try_write(i, false).unwrap();
        }
        w.flush();
        for i in 0..n {
            assert_eq!(item(r.read()), (i, false));
        }
        assert_eq!(r.read(), Read::Empty);
        // The writer sees all of them read: a limit set now finds nothing in flight.
        w.hwm().unwrap().set(4);
        for i in 0..4 {
            w.try_write(i, false).unwrap();
        }
        assert_eq!(w.try_write(4, false), Err(4), "4 in flight, limit 4");
    }

    #[test]
    fn ends_are_send() {
        fn assert_send<S: Send>() {}
        assert_send::<Writer<Vec<u8>>>();
        assert_send::<Reader<Vec<u8>>>();
    }

    mod model {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Write { more: bool },
            Flush,
            Read,
            HasMessage,
            CanWrite,
            Rollback,
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => any::<bool>().prop_map(|more| Op::Write { more }),
                2 => Just(Op::Flush),
                4 => Just(Op::Read),
                1 => Just(Op::HasMessage),
                1 => Just(Op::CanWrite),
                1 => Just(Op::Rollback),
            ]
        }

        /// The reference: what the reader may see, what the writer holds back, and which
        /// wake-ups are due.
        #[derive(Default)]
        struct Model {
            published: VecDeque<(u32, bool)>,
            unflushed: Vec<(u32, bool)>,
            partial: Vec<(u32, bool)>,
            msgs_written: u64,
            msgs_read: u64,
            reader_asleep: bool,
            reader_wakes: usize,
            writer_target: Option<u64>,
            writer_wakes: usize,
            /// Messages read since the reader last published its count.
            unpublished: u64,
        }

        impl Model {
            /// The reader publishes its count, and looks at the writer's target, once a batch.
            fn message_read(&mut self, batch: u64) {
                self.msgs_read += 1;
                self.unpublished += 1;
                if self.unpublished >= batch {
                    self.unpublished = 0;
                    self.check_writer_target();
                }
            }

            /// Going to sleep, the reader publishes its count and looks at the target.
            fn sleep(&mut self) {
                self.reader_asleep = true;
                self.unpublished = 0;
                self.check_writer_target();
            }

            fn check_writer_target(&mut self) {
                if self.writer_target.is_some_and(|t| self.msgs_read >= t) {
                    self.writer_target = None;
                    self.writer_wakes += 1;
                }
            }
        }

        fn run(hwm: usize, ops: Vec<Op>) -> Result<(), TestCaseError> {
            let (mut w, mut r, reader_wake, writer_wake) = counted_pipe::<u32>(hwm);
            let hwm = hwm as u64;
            let batch = hwm.div_ceil(2).min(64);
            let wake_batch = hwm.div_ceil(2).min(1024);
            let mut m = Model {
                reader_asleep: true,
                ..Model::default()
            };
            let mut next = 0u32;
            for op in ops {
                match op {
                    Op::Write { more } => {
                        let first = m.partial.is_empty();
                        let in_flight = m.msgs_written - m.msgs_read;
                        match w.try_write(next, more) {
                            Ok(()) => {
                                prop_assert!(hwm == 0 || !first || in_flight < hwm);
                                if first {
                                    m.writer_target = None;
                                }
                                m.partial.push((next, more));
                                if !more {
                                    m.unflushed.append(&mut m.partial);
                                    m.msgs_written += 1;
                                }
                            }
                            Err(back) => {
                                prop_assert_eq!(back, next);
                                prop_assert!(first, "refused inside a message");
                                prop_assert!(hwm > 0 && in_flight + batch > hwm);
                                m.writer_target = Some(m.msgs_written - hwm + wake_batch);
                            }
                        }
                        next += 1;
                    }
                    Op::Flush => {
                        w.flush();
                        if !m.unflushed.is_empty() {
                            m.published.extend(m.unflushed.drain(..));
                            if m.reader_asleep {
                                m.reader_asleep = false;
                                m.reader_wakes += 1;
                            }
                        }
                    }
                    Op::Read => match (r.read(), m.published.pop_front()) {
                        (Read::Item { item, more }, Some(expected)) => {
                            prop_assert_eq!((item, more), expected);
                            if !more && hwm > 0 {
                                m.message_read(batch);
                            }
                        }
                        (Read::Empty, None) => m.sleep(),
                        (got, expected) => {
                            prop_assert!(false, "read {got:?}, model has {expected:?}");
                        }
                    },
                    Op::HasMessage => {
                        let has = r.has_message();
                        prop_assert_eq!(has, !m.published.is_empty());
                        if !has {
                            m.sleep();
                        }
                    }
                    Op::CanWrite => {
                        let can = w.can_write();
                        let in_flight = m.msgs_written - m.msgs_read;
                        if !m.partial.is_empty() || hwm == 0 {
                            prop_assert!(can);
                        } else if can {
                            prop_assert!(in_flight < hwm);
                            m.writer_target = None;
                        } else {
                            prop_assert!(in_flight + batch > hwm);
                            m.writer_target = Some(m.msgs_written - hwm + wake_batch);
                        }
                    }
                    Op::Rollback => {
                        w.rollback();
                        m.partial.clear();
                    }
                }
                prop_assert_eq!(reader_wake.get(), m.reader_wakes);
                prop_assert_eq!(writer_wake.get(), m.writer_wakes);
            }
            drop(w);
            m.published.extend(m.unflushed.drain(..));
            while let Some(expected) = m.published.pop_front() {
                let (item, more) = item(r.read());
                prop_assert_eq!((item, more), expected);
            }
            prop_assert_eq!(r.read(), Read::Closed);
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 512 }))]

            #[test]
            fn pipe_matches_a_vecdeque_model(
                hwm in prop_oneof![Just(0usize), 1usize..6, 100usize..300],
                ops in proptest::collection::vec(op(), 0..600),
            ) {
                run(hwm, ops)?;
            }
        }
    }
}
