//! Codec micro-benchmarks: `FrameDecoder` over a buffer of many frames and the batching
//! `Encoder` filled and drained, for 64 B and 64 KiB bodies.
//!
//! Each size is measured twice, in frames/s (`codec/decode/64B`) and in bytes/s
//! (`codec/decode-bytes/64B`), because the two sizes answer different questions: per-frame
//! overhead for small messages, memory bandwidth for large ones.
//!
//! Run: `cargo bench -p ferromq-benches --bench codec -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::io::IoSlice;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ferromq_zmtp::{Decoded, Encoder, FrameDecoder};

/// Body sizes and how many frames one iteration handles (about 0.6 and 6.5 MB of wire bytes).
const CASES: [(&str, usize, usize); 2] = [("64B", 64, 10_000), ("64KiB", 64 * 1024, 100)];

/// The wire bytes of `count` single-part message frames of `size` bytes, from our encoder.
fn wire(size: usize, count: usize) -> Vec<u8> {
    let body = Bytes::from(vec![0x5A; size]);
    let mut encoder = Encoder::new();
    for _ in 0..count {
        encoder.push_frame(&body, false);
    }
    let mut out = Vec::with_capacity(encoder.len());
    drain(&mut encoder, |slice| out.extend_from_slice(slice));
    out
}

/// Hands every pending slice to `sink` and advances past it, as a vectored write would.
fn drain(encoder: &mut Encoder, mut sink: impl FnMut(&[u8])) {
    while !encoder.is_empty() {
        let mut slices = [IoSlice::new(&[]); 64];
        let n = encoder.io_slices(&mut slices);
        let mut written = 0;
        for slice in &slices[..n] {
            sink(slice);
            written += slice.len();
        }
        encoder.advance(written);
    }
}

/// Decodes every frame in `buf`; returns how many there were.
fn decode_all(decoder: &mut FrameDecoder, buf: &mut BytesMut) -> usize {
    let mut frames = 0;
    while let Ok(Decoded::Frame(frame)) = decoder.decode(buf) {
        black_box(&frame.body);
        frames += 1;
    }
    frames
}

fn bench_decode(c: &mut Criterion) {
    for (group_name, per_byte) in [("codec/decode", false), ("codec/decode-bytes", true)] {
        let mut group = c.benchmark_group(group_name);
        for (label, size, count) in CASES {
            let wire = wire(size, count);
            group.throughput(if per_byte {
                Throughput::Bytes(wire.len() as u64)
            } else {
                Throughput::Elements(count as u64)
            });
            let mut decoder = FrameDecoder::new(None);
            group.bench_function(label, |b| {
                b.iter_batched_ref(
                    || BytesMut::from(&wire[..]),
                    |buf| assert_eq!(decode_all(&mut decoder, buf), count),
                    BatchSize::LargeInput,
                );
            });
        }
        group.finish();
    }
}

fn bench_encode(c: &mut Criterion) {
    for (group_name, per_byte) in [("codec/encode", false), ("codec/encode-bytes", true)] {
        let mut group = c.benchmark_group(group_name);
        for (label, size, count) in CASES {
            let body = Bytes::from(vec![0x5A; size]);
            let wire_len = wire(size, count).len();
            group.throughput(if per_byte {
                Throughput::Bytes(wire_len as u64)
            } else {
                Throughput::Elements(count as u64)
            });
            // One encoder for all iterations: the steady state reuses its batch buffer.
            let mut encoder = Encoder::new();
            group.bench_function(label, |b| {
                b.iter(|| {
                    for _ in 0..count {
                        encoder.push_frame(&body, false);
                    }
                    let mut written = 0;
                    drain(&mut encoder, |slice| written += black_box(slice).len());
                    assert_eq!(written, wire_len);
                });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_decode, bench_encode);
criterion_main!(benches);
