//! Two threads push a million frames through pipes with random HWMs and flush patterns, and
//! block on the wake-ups exactly as a socket would: a lost wake-up hangs a side, which the
//! bounded waits turn into a failure.

#![cfg(not(loom))]

use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ferromq_pipe::{pipe, Notify, Read};

/// Longest a side may wait for a wake-up that is due; far above any scheduling delay.
const WAKE_TIMEOUT: Duration = Duration::from_secs(20);

/// A level-triggered event, like the eventfd the runtime uses.
#[derive(Default)]
struct Event {
    raised: Mutex<bool>,
    cond: Condvar,
}

impl Notify for Event {
    fn notify(&self) {
        let mut raised = self.raised.lock().unwrap();
        *raised = true;
        self.cond.notify_one();
    }
}

impl Event {
    /// Waits for a notification and consumes it; panics when none comes (a lost wake-up).
    fn wait(&self, who: &str) {
        let raised = self.raised.lock().unwrap();
        let (mut raised, timeout) = self
            .cond
            .wait_timeout_while(raised, WAKE_TIMEOUT, |raised| !*raised)
            .unwrap();
        assert!(!timeout.timed_out(), "{who} lost a wake-up");
        *raised = false;
    }
}

/// xorshift64*: deterministic, dependency-free randomness for the workload.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A frame names its message, its place in it and the message's length, so the reader can
/// check order and atomicity on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    message: u64,
    index: u32,
    len: u32,
}

fn run(seed: u64, hwm: usize, frames: u64, max_parts: u64) {
    // Printed first so that a failing run names the workload that reproduces it.
    eprintln!("seed {seed:#x} hwm {hwm}: {frames} frames of messages up to {max_parts} frames");
    let reader_event = Arc::new(Event::default());
    let writer_event = Arc::new(Event::default());
    let (mut writer, mut reader) = pipe::<Frame>(hwm, reader_event.clone(), writer_event.clone());

    let producer = thread::spawn(move || {
        let mut rng = Rng(seed | 1);
        let mut written = 0;
        let mut message = 0;
        let mut refusals = 0u64;
        while written < frames {
            let len = (1 + rng.below(max_parts)).min(frames - written);
            for index in 0..len {
                let mut frame = Frame {
                    message,
                    index: index as u32,
                    len: len as u32,
                };
                let more = index + 1 < len;
                loop {
                    match writer.try_write(frame, more) {
                        Ok(()) => break,
                        Err(back) => {
                            assert_eq!(index, 0, "refused inside a message");
                            refusals += 1;
                            writer.flush();
                            writer_event.wait("writer");
                            frame = back;
                        }
                    }
                }
                // Flush at random points, including with a message half written.
                if rng.below(8) == 0 {
                    writer.flush();
                }
            }
            written += len;
            message += 1;
        }
        // Dropping the writer flushes and closes.
        refusals
    });

    let consumer = thread::spawn(move || {
        let mut expected = Frame {
            message: 0,
            index: 0,
            len: 0,
        };
        let mut read = 0u64;
        let mut sleeps = 0u64;
        loop {
            match reader.read() {
                Read::Item { item, more } => {
                    assert_eq!(item.message, expected.message, "frame out of order");
                    assert_eq!(item.index, expected.index, "frame out of order");
                    assert_eq!(more, item.index + 1 < item.len, "wrong more flag");
                    read += 1;
                    if more {
                        expected.index += 1;
                    } else {
                        expected.message += 1;
                        expected.index = 0;
                    }
                }
                Read::Empty => {
                    assert_eq!(expected.index, 0, "message torn: its tail is not there");
                    sleeps += 1;
                    reader_event.wait("reader");
                }
                Read::Closed => break,
            }
        }
        (read, sleeps)
    });

    let refusals = producer.join().expect("writer thread");
    let (read, sleeps) = consumer.join().expect("reader thread");
    assert_eq!(read, frames);
    eprintln!("  done: {refusals} refusals, {sleeps} reader sleeps");
}

#[test]
fn million_multipart_frames_with_random_hwm() {
    let started = Instant::now();
    let seed = 0x5EED_F00D_u64 ^ u64::from(std::process::id());
    let mut rng = Rng(seed);
    let hwm = 2 + rng.below(2000) as usize;
    run(seed, hwm, 1_000_000, 4);
    assert!(started.elapsed() < Duration::from_secs(120));
}

#[test]
fn tight_hwm_wakes_the_writer_every_message() {
    run(7, 1, 50_000, 3);
    run(11, 3, 50_000, 5);
}

#[test]
fn unlimited_hwm() {
    run(13, 0, 200_000, 4);
}
