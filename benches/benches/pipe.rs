//! ferromq-pipe throughput: 64-byte `Bytes` frames pushed and popped on one thread in batches
//! of 1000, and streamed from one thread to another with HWM 1000 and real wake-ups.
//!
//! Frames are clones of one static 64-byte `Bytes`, so a clone or drop costs no atomic
//! reference count and the figures are the pipe's own cost.

use std::hint::black_box;
use std::sync::{Arc, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferromq_pipe::{pipe, Notify, Read};

static BODY: [u8; 64] = [0; 64];
const BATCH: u64 = 1000;
const HWM: usize = 1000;

/// Wakes a parked thread, as the runtime's eventfd wakes a socket.
#[derive(Default)]
struct Unpark(OnceLock<Thread>);

impl Notify for Unpark {
    fn notify(&self) {
        if let Some(thread) = self.0.get() {
            thread.unpark();
        }
    }
}

fn single_thread(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipe/single-thread");
    group.throughput(Throughput::Elements(BATCH));
    let frame = Bytes::from_static(&BODY);
    let (mut writer, mut reader) =
        pipe::<Bytes>(0, Arc::new(Unpark::default()), Arc::new(Unpark::default()));
    group.bench_function("64B/batch-1000", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                if writer.try_write(frame.clone(), false).is_err() {
                    unreachable!("unlimited pipe refused");
                }
            }
            writer.flush();
            for _ in 0..BATCH {
                if let Read::Item { item, .. } = reader.read() {
                    black_box(item);
                }
            }
        });
    });
    group.finish();
}

/// Streams `frames` frames to a reader thread and times it until the reader has them all
/// (the thread start is inside the timing; criterion's large iteration counts amortise it).
fn stream(frames: u64, flush_every: u64) -> Duration {
    let reader_wake = Arc::new(Unpark::default());
    let writer_wake = Arc::new(Unpark::default());
    let (mut writer, mut reader) = pipe::<Bytes>(HWM, reader_wake.clone(), writer_wake.clone());
    let _ = writer_wake.0.set(thread::current());
    let consumer = thread::spawn(move || {
        let _ = reader_wake.0.set(thread::current());
        let mut received = 0;
        while received < frames {
            match reader.read() {
                Read::Item { item, .. } => {
                    black_box(item);
                    received += 1;
                }
                Read::Empty => thread::park(),
                Read::Closed => break,
            }
        }
        received
    });
    let frame = Bytes::from_static(&BODY);
    let started = Instant::now();
    for sent in 1..=frames {
        let mut item = frame.clone();
        while let Err(back) = writer.try_write(item, false) {
            writer.flush();
            thread::park();
            item = back;
        }
        if sent % flush_every == 0 {
            writer.flush();
        }
    }
    writer.flush();
    let received = consumer.join().expect("reader thread");
    let elapsed = started.elapsed();
    assert_eq!(received, frames);
    elapsed
}

fn cross_thread(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipe/cross-thread");
    group.throughput(Throughput::Elements(1));
    for flush_every in [1, 64] {
        group.bench_function(format!("64B/flush-every-{flush_every}"), |b| {
            b.iter_custom(|iters| stream(iters, flush_every));
        });
    }
    group.finish();
}

criterion_group!(benches, single_thread, cross_thread);
criterion_main!(benches);
