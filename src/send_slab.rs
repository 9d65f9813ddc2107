//! Copies of small outgoing bodies, carved from a shared slab instead of one allocation each.
//!
//! `Socket::send_slice` (and `zmq_send` over the C ABI) must copy the caller's bytes. With one
//! heap allocation per copy the sending thread mallocs and another thread frees: the I/O thread
//! once the frame is written, or the receiving socket over inproc. glibc serialises those
//! cross-thread frees with the sender's mallocs on the arena lock, and at 256 B-1 KiB over
//! inproc that lock bounded ferromq and libzmq alike (docs/performance.md, "inproc 1 KiB").
//! Cutting the copies out of one slab turns that into one allocation per slab; each message
//! then costs an atomic increment and decrement. When every message cut from a slab has been
//! dropped by the time it is full, the slab is taken back without allocating at all.
//!
//! The price: a message the application keeps alive keeps its slab alive, as a received tcp
//! frame keeps its read buffer alive. Bodies over `MAX_PART` get their own allocation, where
//! the malloc is small next to the copy and a slab would waste its tail.

use bytes::{Bytes, BytesMut};

/// Slab size: under glibc's mmap threshold (128 KiB), so a slab is an ordinary heap block.
const SLAB: usize = 64 * 1024;

/// Largest body cut from a slab.
const MAX_PART: usize = 4 * 1024;

/// The slab outgoing copies are cut from; one per socket, used only by the socket's thread.
#[derive(Debug, Default)]
pub(crate) struct SendSlab {
    buf: BytesMut,
}

impl SendSlab {
    /// A `Bytes` holding a copy of `data`.
    pub(crate) fn copy(&mut self, data: &[u8]) -> Bytes {
        if data.is_empty() {
            return Bytes::new();
        }
        if data.len() > MAX_PART {
            return Bytes::copy_from_slice(data);
        }
        if self.buf.capacity() < data.len() {
            // Takes the slab back when no message still points into it; otherwise
            // allocates a fresh one of the same size and leaves the old one to its messages.
            self.buf.reserve(SLAB);
        }
        self.buf.extend_from_slice(data);
        self.buf.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_equal_and_independent() {
        let mut slab = SendSlab::default();
        let a = slab.copy(b"hello");
        let b = slab.copy(b"world!");
        assert_eq!(&a[..], b"hello");
        assert_eq!(&b[..], b"world!");
        assert!(slab.copy(b"").is_empty());
    }

    #[test]
    fn small_copies_share_one_slab() {
        let mut slab = SendSlab::default();
        let a = slab.copy(&[1; 100]);
        let b = slab.copy(&[2; 100]);
        // Adjacent in one allocation.
        assert_eq!(a.as_ptr() as usize + 100, b.as_ptr() as usize);
        assert_eq!(&a[..], &[1; 100][..]);
        assert_eq!(&b[..], &[2; 100][..]);
    }

    #[test]
    fn full_slab_is_reused_once_its_messages_are_gone() {
        let mut slab = SendSlab::default();
        let first = slab.copy(&[7; 1000]);
        let base = first.as_ptr() as usize;
        drop(first);
        // Nothing points into the slab while it fills: once full, copies start over in it.
        let reused = (0..SLAB / 1000 + 1).any(|_| {
            let b = slab.copy(&[9; 1000]);
            assert_eq!(&b[..], &[9; 1000][..]);
            b.as_ptr() as usize == base
        });
        assert!(reused);
    }

    #[test]
    fn live_messages_keep_their_bytes_when_the_slab_moves_on() {
        let mut slab = SendSlab::default();
        let kept: Vec<Bytes> = (0..200u8).map(|i| slab.copy(&[i; 1000])).collect();
        for (i, b) in kept.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8));
            assert_eq!(b.len(), 1000);
        }
    }

    #[test]
    fn large_bodies_get_their_own_allocation() {
        let mut slab = SendSlab::default();
        let big = vec![3u8; MAX_PART + 1];
        let a = slab.copy(&big);
        let small = slab.copy(b"x");
        assert_eq!(&a[..], &big[..]);
        assert_eq!(&small[..], b"x");
    }
}
