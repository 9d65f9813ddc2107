//! Outgoing frame encoder that prepares vectored writes.
//!
//! Small frames are copied, header and body, into one batch buffer, so a burst of small
//! messages leaves in a single `write`. A body above the copy threshold is not copied: it is
//! queued as a `Bytes` clone (a reference count) and handed out as its own [`IoSlice`] between
//! the batch bytes before it and after it. The batch buffer is reused once the bytes written
//! from it have been released, so the steady state does not allocate per message.
//!
//! ```text
//! push_frame(a) push_frame(big) push_frame(b)
//!   batch buffer: [ hdr(a) a hdr(big) | hdr(b) b ]    queue: [ Batch(run 1), Body(big) ]
//!   io_slices -> [ hdr(a) a hdr(big) ] [ big ] [ hdr(b) b ]   (the tail after the queue)
//! ```

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::command::Command;
use crate::curve_message::{CurveSender, MESSAGE_OVERHEAD};
use crate::frame::{header_len, put_header};

/// Default copy threshold: bodies up to this size are copied into the batch buffer.
pub const DEFAULT_COPY_THRESHOLD: usize = 8192;

/// One run of pending bytes, in wire order.
#[derive(Debug)]
enum Chunk {
    /// The next `n` bytes of the batch buffer.
    Batch(usize),
    /// A body queued by reference.
    Body(Bytes),
}

/// Queues frames for sending and exposes them as `IoSlice`s.
#[derive(Debug)]
pub struct Encoder {
    /// Runs that precede the unsealed tail of `batch` on the wire.
    queue: VecDeque<Chunk>,
    /// Copied headers and small bodies. Its first `sealed` bytes belong to `Chunk::Batch`
    /// entries of `queue`; the rest is the tail that follows everything queued.
    batch: BytesMut,
    sealed: usize,
    /// Total pending bytes.
    pending: usize,
    copy_threshold: usize,
    /// CURVE: every frame and command goes out boxed in a MESSAGE.
    curve: Option<CurveSender>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// An encoder copying bodies up to [`DEFAULT_COPY_THRESHOLD`] bytes.
    pub fn new() -> Self {
        Self::with_copy_threshold(DEFAULT_COPY_THRESHOLD)
    }

    /// An encoder copying bodies up to `copy_threshold` bytes and queueing larger ones by
    /// reference.
    pub fn with_copy_threshold(copy_threshold: usize) -> Self {
        Self {
            queue: VecDeque::new(),
            batch: BytesMut::new(),
            sealed: 0,
            pending: 0,
            copy_threshold,
            curve: None,
        }
    }

    /// Boxes every frame and command from now on (a completed CURVE handshake).
    pub fn set_curve(&mut self, sender: CurveSender) {
        self.curve = Some(sender);
    }

    /// Queues one message frame. The short size form is used exactly when the body is at most
    /// 255 bytes, as libzmq does.
    pub fn push_frame(&mut self, body: &Bytes, more: bool) {
        if let Some(curve) = self.curve.as_mut() {
            let len = MESSAGE_OVERHEAD + body.len();
            if len <= self.copy_threshold {
                // Boxed straight into the batch: no buffer of its own.
                self.pending += header_len(len) + len;
                self.batch.reserve(header_len(len) + len);
                put_header(&mut self.batch, len, false, false);
                curve.encode_into(body, more, false, &mut self.batch);
                return;
            }
            let boxed = curve.encode(body, more, false);
            return self.push_plain_frame(&boxed, false);
        }
        self.push_plain_frame(body, more);
    }

    fn push_plain_frame(&mut self, body: &Bytes, more: bool) {
        let len = body.len();
        self.pending += header_len(len) + len;
        if len <= self.copy_threshold {
            self.batch.reserve(header_len(len) + len);
            put_header(&mut self.batch, len, more, false);
            self.batch.put_slice(body);
        } else {
            put_header(&mut self.batch, len, more, false);
            self.queue
                .push_back(Chunk::Batch(self.batch.len() - self.sealed));
            self.sealed = self.batch.len();
            self.queue.push_back(Chunk::Body(body.clone()));
        }
    }

    /// Queues one command frame (always copied).
    pub fn push_command(&mut self, cmd: &Command) {
        if let Some(curve) = self.curve.as_mut() {
            let mut body = BytesMut::with_capacity(cmd.encoded_len());
            cmd.encode(&mut body);
            let boxed = curve.encode(&body, false, true);
            return self.push_plain_frame(&boxed, false);
        }
        let len = cmd.encoded_len();
        self.batch.reserve(header_len(len) + len);
        let before = self.batch.len();
        put_header(&mut self.batch, len, false, true);
        cmd.encode(&mut self.batch);
        self.pending += self.batch.len() - before;
    }

    /// Queues a body with no frame header (a raw STREAM connection, or a ZMTP 1.0 frame
    /// whose header the caller wrote with [`Encoder::push_raw`]): copied up to the copy
    /// threshold, queued by reference above it.
    pub fn push_body(&mut self, body: &Bytes) {
        let len = body.len();
        self.pending += len;
        if len <= self.copy_threshold {
            self.batch.put_slice(body);
        } else {
            if self.batch.len() > self.sealed {
                self.queue
                    .push_back(Chunk::Batch(self.batch.len() - self.sealed));
                self.sealed = self.batch.len();
            }
            self.queue.push_back(Chunk::Body(body.clone()));
        }
    }

    /// Queues bytes as they are (e.g. a greeting).
    pub fn push_raw(&mut self, bytes: &[u8]) {
        self.batch.put_slice(bytes);
        self.pending += bytes.len();
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.pending == 0
    }

    /// Pending bytes.
    pub fn len(&self) -> usize {
        self.pending
    }

    /// Pending bytes held in the encoder's own buffer (headers, commands and the bodies it
    /// copied), as opposed to bodies queued by reference.
    pub fn copied(&self) -> usize {
        self.batch.len()
    }

    /// Fills `out` with the pending bytes in wire order; returns how many slices it filled.
    pub fn io_slices<'a>(&'a self, out: &mut [IoSlice<'a>]) -> usize {
        self.io_slices_within(out, usize::MAX)
    }

    /// [`Encoder::io_slices`] for at most the first `limit` pending bytes.
    pub fn io_slices_within<'a>(&'a self, out: &mut [IoSlice<'a>], limit: usize) -> usize {
        let mut offset = 0;
        let queued = self.queue.iter().map(|chunk| match chunk {
            Chunk::Batch(n) => {
                let run = &self.batch[offset..offset + n];
                offset += n;
                run
            }
            Chunk::Body(b) => &b[..],
        });
        let chunks = queued
            .chain(Some(&self.batch[self.sealed..]))
            .filter(|s| !s.is_empty());
        let mut n = 0;
        let mut left = limit;
        for (slot, chunk) in out.iter_mut().zip(chunks) {
            if left == 0 {
                break;
            }
            let take = chunk.len().min(left);
            *slot = IoSlice::new(&chunk[..take]);
            left -= take;
            n += 1;
        }
        n
    }

    /// Marks `n` bytes as written. `n` larger than [`Encoder::len`] is clamped.
    pub fn advance(&mut self, n: usize) {
        let mut n = n.min(self.pending);
        self.pending -= n;
        while n > 0 {
            match self.queue.front_mut() {
                None => {
                    self.batch.advance(n);
                    break;
                }
                Some(Chunk::Batch(len)) => {
                    let take = n.min(*len);
                    self.batch.advance(take);
                    self.sealed -= take;
                    *len -= take;
                    n -= take;
                    if *len == 0 {
                        self.queue.pop_front();
                    }
                }
                Some(Chunk::Body(body)) => {
                    let take = n.min(body.len());
                    body.advance(take);
                    n -= take;
                    if body.is_empty() {
                        self.queue.pop_front();
                    }
                }
            }
        }
        if self.batch.is_empty() {
            // The next `reserve` then moves back to the start of the same allocation.
            self.batch.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::Metadata;

    fn slices(enc: &Encoder) -> Vec<Vec<u8>> {
        let mut out = [IoSlice::new(&[]); 16];
        let n = enc.io_slices(&mut out);
        out[..n].iter().map(|s| s.to_vec()).collect()
    }

    fn concat(enc: &Encoder) -> Vec<u8> {
        slices(enc).concat()
    }

    /// `copied` counts what the encoder's own buffer holds (headers, small bodies), not the
    /// large bodies queued by reference, and falls as bytes are written.
    #[test]
    fn copied_counts_headers_and_small_bodies_only() {
        let mut enc = Encoder::with_copy_threshold(4);
        enc.push_frame(&Bytes::from_static(b"ab"), true);
        enc.push_frame(&Bytes::from(vec![7u8; 300]), false);
        // 2 + 2 copied for the small frame, 9 for the long frame's header; 300 by reference.
        assert_eq!(enc.copied(), 13);
        assert_eq!(enc.len(), 313);
        enc.advance(4);
        assert_eq!(enc.copied(), 9);
        enc.advance(9 + 100);
        assert_eq!(enc.copied(), 0);
        assert_eq!(enc.len(), 200);
    }

    #[test]
    fn bodies_go_out_without_headers_in_order() {
        let mut enc = Encoder::with_copy_threshold(4);
        enc.push_body(&Bytes::from_static(b"ab"));
        enc.push_body(&Bytes::from_static(b"large"));
        enc.push_body(&Bytes::from_static(b"larger"));
        enc.push_body(&Bytes::from_static(b"c"));
        assert_eq!(
            slices(&enc),
            vec![
                b"ab".to_vec(),
                b"large".to_vec(),
                b"larger".to_vec(),
                b"c".to_vec()
            ]
        );
        assert_eq!(enc.len(), 14);
        enc.advance(8);
        assert_eq!(concat(&enc), b"argerc".to_vec());
        enc.advance(6);
        assert!(enc.is_empty());
    }

    #[test]
    fn small_frames_batch_into_one_slice() {
        let mut enc = Encoder::new();
        enc.push_frame(&Bytes::from_static(b"ab"), true);
        enc.push_frame(&Bytes::new(), false);
        enc.push_raw(b"raw");
        assert_eq!(slices(&enc), vec![b"\x01\x02ab\x00\x00raw".to_vec()]);
        assert_eq!(enc.len(), 9);
        enc.advance(9);
        assert!(enc.is_empty());
        assert_eq!(enc.io_slices(&mut [IoSlice::new(&[])]), 0);
    }

    #[test]
    fn short_long_boundary() {
        let mut enc = Encoder::new();
        enc.push_frame(&Bytes::from(vec![1u8; 255]), false);
        let wire = concat(&enc);
        assert_eq!(&wire[..2], &[0x00, 0xFF]);
        assert_eq!(wire.len(), 257);
        let mut enc = Encoder::new();
        enc.push_frame(&Bytes::from(vec![1u8; 256]), true);
        let wire = concat(&enc);
        assert_eq!(&wire[..9], &[0x03, 0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(wire.len(), 265);
    }

    #[test]
    fn command_rfc37_ready_vector() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", Bytes::from_static(b"DEALER"))
            .unwrap();
        m.insert("Identity", Bytes::new()).unwrap();
        let mut enc = Encoder::new();
        enc.push_command(&Command::Ready(m));
        assert_eq!(
            concat(&enc),
            b"\x04\x29\x05READY\x0bSocket-Type\0\0\0\x06DEALER\x08Identity\0\0\0\0".to_vec()
        );
        assert_eq!(enc.len(), 43);
    }

    #[test]
    fn large_bodies_are_separate_slices_without_copy() {
        let mut enc = Encoder::with_copy_threshold(4);
        let big = Bytes::from(vec![9u8; 300]);
        enc.push_frame(&Bytes::from_static(b"hi"), true);
        enc.push_frame(&big, true);
        enc.push_frame(&Bytes::from_static(b"yo"), false);
        let mut out = [IoSlice::new(&[]); 8];
        let n = enc.io_slices(&mut out);
        assert_eq!(n, 3);
        assert_eq!(&out[0][..], b"\x01\x02hi\x03\0\0\0\0\0\0\x01\x2c");
        assert_eq!(
            out[1].as_ptr(),
            big.as_ptr(),
            "large body handed out by reference"
        );
        assert_eq!(out[1].len(), 300);
        assert_eq!(&out[2][..], b"\x00\x02yo");
        assert_eq!(enc.len(), 13 + 300 + 4);
        // A too-small slice array gets the first chunks only.
        let mut one = [IoSlice::new(&[])];
        assert_eq!(enc.io_slices(&mut one), 1);
        assert_eq!(one[0].len(), 13);
    }

    /// A limited fill is the same bytes as the full one, cut after `limit` of them, for every
    /// limit: inside the batch, at a chunk's end, inside a body queued by reference, past all.
    #[test]
    fn slices_within_a_limit_are_a_prefix_of_the_whole() {
        let mut enc = Encoder::with_copy_threshold(4);
        let big = Bytes::from(vec![9u8; 300]);
        enc.push_frame(&Bytes::from_static(b"hi"), true);
        enc.push_frame(&big, true);
        enc.push_frame(&Bytes::from_static(b"yo"), false);
        let whole = concat(&enc);
        for limit in 0..=whole.len() + 1 {
            let mut out = [IoSlice::new(&[]); 8];
            let n = enc.io_slices_within(&mut out, limit);
            let got: Vec<u8> = out[..n].iter().flat_map(|s| s.to_vec()).collect();
            assert_eq!(got, whole[..limit.min(whole.len())], "limit {limit}");
            assert!(out[..n].iter().all(|s| !s.is_empty()), "limit {limit}");
        }
    }

    #[test]
    fn partial_advance_across_slices() {
        let mut enc = Encoder::with_copy_threshold(0);
        let a = Bytes::from_static(b"AAAA");
        let b = Bytes::from_static(b"BBBB");
        enc.push_frame(&a, true);
        enc.push_frame(&b, false);
        let full = concat(&enc);
        assert_eq!(full, b"\x01\x04AAAA\x00\x04BBBB".to_vec());
        let mut written = Vec::new();
        for step in [1, 3, 4, 1, 3] {
            let now = concat(&enc);
            written.extend_from_slice(&now[..step]);
            enc.advance(step);
            assert_eq!(enc.len(), full.len() - written.len());
            assert_eq!(concat(&enc), full[written.len()..].to_vec());
        }
        assert!(enc.is_empty());
        assert_eq!(written, full);
        enc.advance(5);
        assert!(enc.is_empty());
    }

    #[test]
    fn batch_buffer_is_reused_with_large_bodies() {
        let mut enc = Encoder::with_copy_threshold(16);
        let small = Bytes::from_static(&[1u8; 8]);
        let big = Bytes::from(vec![2u8; 64]);
        let mut starts = Vec::new();
        for _ in 0..50 {
            enc.push_frame(&small, true);
            enc.push_frame(&big, false);
            enc.push_frame(&small, false);
            let mut out = [IoSlice::new(&[]); 4];
            assert_eq!(enc.io_slices(&mut out), 3);
            starts.push(out[0].as_ptr() as usize);
            let n = enc.len();
            enc.advance(n);
        }
        // After the first rounds the same allocation is handed out every time.
        assert!(starts[2..].windows(2).all(|w| w[0] == w[1]), "{starts:?}");
        assert!(enc.queue.capacity() <= 4);
    }

    #[test]
    fn batch_buffer_is_reused() {
        let mut enc = Encoder::new();
        let body = Bytes::from_static(&[5u8; 64]);
        enc.push_frame(&body, false);
        let first = enc.batch.as_ptr();
        for _ in 0..100 {
            let n = enc.len();
            enc.advance(n);
            enc.push_frame(&body, false);
            assert_eq!(enc.batch.as_ptr(), first);
        }
    }
}
