//! Model checks of the cross-thread handshakes. Each model is small enough for loom to explore
//! every interleaving in seconds; chunks hold two slots under loom, so the models also cross
//! chunk boundaries and race the recycling of retired chunks.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicUsize;
use loom::thread;

use crate::{pipe, pipe_conflate, Notify, Read, Reader, Writer};

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

fn counted_pipe(hwm: usize) -> (Writer<u32>, Reader<u32>, Wakes, Wakes) {
    let reader_wake = std::sync::Arc::new(Counter::default());
    let writer_wake = std::sync::Arc::new(Counter::default());
    let (w, r) = pipe(hwm, reader_wake.clone(), writer_wake.clone());
    (w, r, reader_wake, writer_wake)
}

/// A flush racing a reader that is about to fall asleep: either the reader sees the data or
/// it is asleep and the flush wakes it, exactly once.
#[test]
fn flush_never_misses_a_sleeping_reader() {
    loom::model(|| {
        let (mut w, mut r, reader_wake, _) = counted_pipe(0);
        // Start with the reader awake (it has consumed a first message).
        w.try_write(0, false).unwrap();
        w.flush();
        assert_eq!(
            r.read(),
            Read::Item {
                item: 0,
                more: false
            }
        );
        let wakes_before = reader_wake.get();
        let writer = thread::spawn(move || {
            w.try_write(1, true).unwrap();
            w.try_write(2, false).unwrap();
            w.flush();
            w
        });
        let first = r.read();
        let w = writer.join().unwrap();
        let wakes = reader_wake.get() - wakes_before;
        match first {
            Read::Item { item, more } => {
                assert_eq!((item, more), (1, true));
                assert_eq!(wakes, 0, "a busy reader costs no wake-up");
            }
            Read::Empty => {
                assert_eq!(wakes, 1, "a sleeping reader is woken exactly once");
                assert_eq!(
                    r.read(),
                    Read::Item {
                        item: 1,
                        more: true
                    }
                );
            }
            Read::Closed => panic!("closed while the writer lives"),
        }
        assert_eq!(
            r.read(),
            Read::Item {
                item: 2,
                more: false
            }
        );
        drop(w);
    });
}

/// The I/O thread's turn: reads that leave the pipe awake, then one that may put it to sleep,
/// racing two flushes. Whatever the interleaving, a reader that ends asleep is woken for what
/// it has not read, and one that read everything cost the writer no wake-up after it fell
/// asleep with nothing pending.
#[test]
fn awake_reads_then_a_sleeping_read_miss_nothing() {
    loom::model(|| {
        let (mut w, mut r, reader_wake, _) = counted_pipe(0);
        w.try_write(0, false).unwrap();
        w.flush();
        assert_eq!(reader_wake.get(), 1, "a new reader counts as asleep");
        let writer = thread::spawn(move || {
            w.try_write(1, false).unwrap();
            w.flush();
            w.try_write(2, false).unwrap();
            w.flush();
            w
        });
        let mut got = Vec::new();
        while let Read::Item { item, .. } = r.read_awake() {
            got.push(item);
        }
        let slept = loop {
            match r.read() {
                Read::Item { item, .. } => got.push(item),
                Read::Empty => break true,
                Read::Closed => panic!("closed while the writer lives"),
            }
        };
        let w = writer.join().unwrap();
        let wakes = reader_wake.get() - 1;
        assert!(slept);
        if got.len() < 3 {
            assert_eq!(wakes, 1, "asleep with messages pending: woken once");
            while let Read::Item { item, .. } = r.read() {
                got.push(item);
            }
        } else {
            assert_eq!(wakes, 0, "read everything: no wake-up was needed or sent");
        }
        assert_eq!(got, [0, 1, 2]);
        drop(w);
    });
}

/// Frames crossing chunk boundaries while the reader retires and recycles chunks: order is
/// kept and every sleep is matched by a wake-up.
#[test]
fn chunk_recycling_races_keep_order() {
    loom::model(|| {
        let (mut w, mut r, reader_wake, _) = counted_pipe(0);
        let writer = thread::spawn(move || {
            for i in 0..3 {
                w.try_write(i, false).unwrap();
                w.flush();
            }
        });
        let mut next = 0;
        let mut sleeps = 0;
        for _ in 0..3 {
            match r.read() {
                Read::Item { item, .. } => {
                    assert_eq!(item, next);
                    next += 1;
                }
                Read::Empty => sleeps += 1,
                Read::Closed => break,
            }
        }
        writer.join().unwrap();
        // The writer is gone: drain, then Closed.
        loop {
            match r.read() {
                Read::Item { item, .. } => {
                    assert_eq!(item, next);
                    next += 1;
                }
                Read::Empty => panic!("Empty after the writer closed and was joined"),
                Read::Closed => break,
            }
        }
        assert_eq!(next, 3);
        // Wake-ups stay lazy: the first flush (a new reader counts as asleep), one per sleep
        // the loop saw, and possibly one for the close; never one per message.
        assert!(reader_wake.get() <= sleeps + 2);
        assert!(reader_wake.get() >= 1);
    });
}

/// A writer refused at the HWM racing the reader that frees the room: if the refusal stands,
/// the reader wakes the writer, once.
#[test]
fn hwm_refusal_is_always_followed_by_a_wake_up() {
    loom::model(|| {
        let (mut w, mut r, _, writer_wake) = counted_pipe(1);
        w.try_write(0, false).unwrap();
        w.flush();
        let writer = thread::spawn(move || {
            let refused = w.try_write(1, false).is_err();
            (w, refused)
        });
        assert_eq!(
            r.read(),
            Read::Item {
                item: 0,
                more: false
            }
        );
        let second = r.read();
        let (mut w, refused) = writer.join().unwrap();
        if refused {
            assert_eq!(writer_wake.get(), 1, "refused writer must be woken");
            w.try_write(1, false).unwrap();
        } else {
            assert!(writer_wake.get() <= 1);
        }
        if second == Read::Empty {
            w.flush();
            assert_eq!(
                r.read(),
                Read::Item {
                    item: 1,
                    more: false
                }
            );
        }
        drop(w);
    });
}

/// The writer closing while the reader falls asleep: the reader either sees Closed or is
/// woken to see it.
#[test]
fn writer_close_never_strands_the_reader() {
    loom::model(|| {
        let (mut w, mut r, reader_wake, _) = counted_pipe(0);
        // Start with the reader awake, so that it must fall asleep during the race.
        w.try_write(0, false).unwrap();
        w.flush();
        assert_eq!(
            r.read(),
            Read::Item {
                item: 0,
                more: false
            }
        );
        let wakes_before = reader_wake.get();
        let writer = thread::spawn(move || drop(w));
        let first = r.read();
        writer.join().unwrap();
        match first {
            Read::Closed => {}
            Read::Empty => {
                assert!(
                    reader_wake.get() > wakes_before,
                    "sleeping reader not told of close"
                );
                assert_eq!(r.read(), Read::Closed);
            }
            Read::Item { .. } => panic!("nothing was written"),
        }
    });
}

/// The reader closing while the writer writes: the writer learns of it and is woken, and the
/// last end out drops what is left.
#[test]
fn reader_close_is_seen_by_the_writer() {
    loom::model(|| {
        let token = loom::sync::Arc::new(());
        let (mut w, r, _, writer_wake) = {
            let reader_wake = std::sync::Arc::new(Counter::default());
            let writer_wake = std::sync::Arc::new(Counter::default());
            let (w, r) = pipe(0, reader_wake.clone(), writer_wake.clone());
            (w, r, reader_wake, writer_wake)
        };
        let t = token.clone();
        let writer = thread::spawn(move || {
            w.try_write(t.clone(), false).unwrap();
            w.flush();
            w.try_write(t, false).unwrap();
            w
        });
        drop(r);
        let w = writer.join().unwrap();
        assert!(w.is_closed());
        assert_eq!(writer_wake.get(), 1);
        drop(w);
        assert_eq!(loom::sync::Arc::strong_count(&token), 1);
    });
}

/// A wake-up that is remembered until waited for, like the runtime's eventfd.
#[derive(Debug, Default)]
struct Event(loom::sync::Notify);

impl Notify for Event {
    fn notify(&self) {
        self.0.notify();
    }
}

/// The whole protocol with both sides blocking on their wake-ups, as a socket and an I/O
/// thread do: HWM 1 forces a refusal and a writer wake-up per message, the reader sleeps on
/// every empty pipe, and the close must wake it at the end. A single lost wake-up leaves a
/// thread waiting forever, which loom reports as a deadlock.
#[test]
fn blocking_ends_never_deadlock() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let reader_wake = std::sync::Arc::new(Event::default());
        let writer_wake = std::sync::Arc::new(Event::default());
        let (mut w, mut r) = pipe::<u32>(1, reader_wake.clone(), writer_wake.clone());
        let writer = thread::spawn(move || {
            for (item, more) in [(0, true), (1, false), (2, false)] {
                let mut item = item;
                while let Err(back) = w.try_write(item, more) {
                    w.flush();
                    writer_wake.0.wait();
                    item = back;
                }
                if !more {
                    w.flush();
                }
            }
        });
        let mut expected = 0;
        loop {
            match r.read() {
                Read::Item { item, more } => {
                    assert_eq!(item, expected);
                    assert_eq!(more, item == 0);
                    expected += 1;
                }
                Read::Empty => reader_wake.0.wait(),
                Read::Closed => break,
            }
        }
        assert_eq!(expected, 3);
        writer.join().unwrap();
    });
}

/// A conflating pipe with a blocking reader: flushes and the close race the reader falling
/// asleep. A lost wake-up is a deadlock; the reader sees only increasing values, whole
/// messages, and always the last one.
#[test]
fn conflating_reader_never_misses_a_wake_up_or_the_newest() {
    loom::model(|| {
        let reader_wake = std::sync::Arc::new(Event::default());
        let (mut w, mut r) =
            pipe_conflate::<u32>(reader_wake.clone(), std::sync::Arc::new(Event::default()));
        let writer = thread::spawn(move || {
            for i in 0..2 {
                w.try_write(i, true).unwrap();
                w.try_write(i, false).unwrap();
                w.flush();
            }
        });
        let mut last = None;
        loop {
            match r.read() {
                Read::Item { item, more: true } => {
                    assert!(last.map_or(true, |l| item > l));
                    assert_eq!(r.read(), Read::Item { item, more: false });
                    last = Some(item);
                }
                Read::Item { more: false, .. } => panic!("a torn message"),
                Read::Empty => reader_wake.0.wait(),
                Read::Closed => break,
            }
        }
        assert_eq!(last, Some(1));
        writer.join().unwrap();
    });
}

/// The reader closing while the writer writes: the writer is woken once, sees the close,
/// and every value is dropped exactly once by whoever leaves last.
#[test]
fn conflating_reader_drop_races_writes() {
    loom::model(|| {
        let token = loom::sync::Arc::new(());
        let writer_wake = std::sync::Arc::new(Counter::default());
        let (mut w, r) = pipe_conflate::<loom::sync::Arc<()>>(
            std::sync::Arc::new(Counter::default()),
            writer_wake.clone(),
        );
        let t = token.clone();
        let writer = thread::spawn(move || {
            for _ in 0..2 {
                w.try_write(t.clone(), false).unwrap();
                w.flush();
            }
            w
        });
        drop(r);
        let w = writer.join().unwrap();
        assert!(w.is_closed());
        assert_eq!(writer_wake.get(), 1);
        drop(w);
        assert_eq!(loom::sync::Arc::strong_count(&token), 1);
    });
}
