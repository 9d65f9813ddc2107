//! Where copies of outgoing bodies live: buffers a socket recycles instead of one allocation
//! per message.
//!
//! `Socket::send_slice` (and `zmq_send` over the C ABI) must copy the caller's bytes. With one
//! heap allocation per copy, the sending thread mallocs and another thread frees: the I/O
//! thread once the frame is written, or the receiving socket over inproc. glibc serialises
//! those cross-thread frees with the sender's mallocs on the arena lock; at 256 B-1 KiB over
//! inproc that lock bounded ferromq and libzmq alike. For large bodies each allocation is
//! fresh memory (or an mmap) to fault in, and how often that happens depends on glibc's
//! adaptive thresholds, which is what made the 128-256 KiB rows swing from run to run (see
//! docs/performance.md).
//!
//! - Small bodies (up to `MAX_SMALL`) are cut from one 64 KiB slab: one allocation per slab,
//!   and an atomic increment and decrement per message. When every message cut from a full
//!   slab has been dropped, the slab is taken back as it is.
//! - Large bodies (up to `MAX_RECYCLED`) each get a buffer of their own, and when the last
//!   handle to it is dropped (on whichever thread) the buffer goes back to the socket that sent
//!   it, already faulted in, for its next large copy. What matters is the flow of buffers
//!   coming back, not which one: with RCVHWM messages in flight the oldest one is usually
//!   back by the time a new one is wanted.
//! - Larger bodies get their own allocation.
//!
//! The price: a live message keeps its buffer alive (a small one its whole slab, as a
//! received tcp frame keeps its read buffer), and a socket that has sent large messages keeps
//! up to `KEPT` buffers of at most `MAX_RECYCLED` (2 MiB in all) for reuse until it is closed,
//! and for as long after as messages it sent are alive.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};

/// Slab size: under glibc's mmap threshold (128 KiB), so a slab is an ordinary heap block.
const SLAB: usize = 64 * 1024;

/// Largest body cut from the slab.
const MAX_SMALL: usize = 4 * 1024;

/// Large buffers kept for reuse.
const KEPT: usize = 8;

/// Largest body copied into a recycled buffer.
const MAX_RECYCLED: usize = 256 * 1024;

/// The buffers a socket's outgoing copies go into; used only by the socket's thread.
#[derive(Debug, Default)]
pub(crate) struct SendBuffers {
    slab: BytesMut,
    returned: Arc<Returned>,
}

/// Large buffers whose messages are gone, on their way back to the socket that sent them.
#[derive(Debug, Default)]
struct Returned {
    bufs: Mutex<Vec<Vec<u8>>>,
}

/// A large body: its buffer goes back to `home` when the last handle to it drops.
struct Homing {
    buf: Vec<u8>,
    home: Arc<Returned>,
}

impl AsRef<[u8]> for Homing {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Homing {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        // A poisoned lock (a panic elsewhere while holding it) only costs the reuse.
        if let Ok(mut bufs) = self.home.bufs.lock() {
            if bufs.len() < KEPT {
                bufs.push(buf);
            }
        }
    }
}

impl SendBuffers {
    /// A `Bytes` holding a copy of `data`.
    pub(crate) fn copy(&mut self, data: &[u8]) -> Bytes {
        let len = data.len();
        if len == 0 {
            Bytes::new()
        } else if len <= MAX_SMALL {
            if self.slab.capacity() < len {
                // Takes the slab back when no message still points into it; otherwise
                // allocates a fresh one and leaves the old one to its messages.
                self.slab.reserve(SLAB);
            }
            cut(&mut self.slab, data)
        } else if len <= MAX_RECYCLED {
            let reused = self.returned.bufs.lock().ok().and_then(|mut b| b.pop());
            let mut buf = reused.unwrap_or_default();
            buf.clear();
            // Exact, so a kept buffer never outgrows `MAX_RECYCLED`.
            buf.reserve_exact(len);
            buf.extend_from_slice(data);
            Bytes::from_owner(Homing {
                buf,
                home: Arc::clone(&self.returned),
            })
        } else {
            Bytes::copy_from_slice(data)
        }
    }
}

/// Copies `data` to the front of `buf`'s free room and splits it off as its own `Bytes`.
fn cut(buf: &mut BytesMut, data: &[u8]) -> Bytes {
    buf.extend_from_slice(data);
    buf.split().freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_equal_and_independent() {
        let mut bufs = SendBuffers::default();
        let a = bufs.copy(b"hello");
        let b = bufs.copy(b"world!");
        assert_eq!(&a[..], b"hello");
        assert_eq!(&b[..], b"world!");
        assert!(bufs.copy(b"").is_empty());
    }

    #[test]
    fn small_copies_share_one_slab() {
        let mut bufs = SendBuffers::default();
        let a = bufs.copy(&[1; 100]);
        let b = bufs.copy(&[2; 100]);
        // Adjacent in one allocation.
        assert_eq!(a.as_ptr() as usize + 100, b.as_ptr() as usize);
        assert_eq!(&a[..], &[1; 100][..]);
        assert_eq!(&b[..], &[2; 100][..]);
    }

    #[test]
    fn full_slab_is_reused_once_its_messages_are_gone() {
        let mut bufs = SendBuffers::default();
        let first = bufs.copy(&[7; 1000]);
        let base = first.as_ptr() as usize;
        drop(first);
        // Nothing points into the slab while it fills: once full, copies start over in it.
        let reused = (0..SLAB / 1000 + 1).any(|_| {
            let b = bufs.copy(&[9; 1000]);
            assert_eq!(&b[..], &[9; 1000][..]);
            b.as_ptr() as usize == base
        });
        assert!(reused);
    }

    #[test]
    fn live_messages_keep_their_bytes_when_buffers_move_on() {
        let mut bufs = SendBuffers::default();
        for size in [1000, 100_000] {
            let kept: Vec<Bytes> = (0..40u8).map(|i| bufs.copy(&vec![i; size])).collect();
            for (i, b) in kept.iter().enumerate() {
                assert_eq!(b.len(), size);
                assert!(b.iter().all(|&x| x == i as u8));
            }
        }
    }

    #[test]
    fn large_buffer_comes_back_once_its_message_is_gone() {
        let mut bufs = SendBuffers::default();
        let first = bufs.copy(&[1; 200_000]);
        let base = first.as_ptr() as usize;
        // Dropped on another thread, as the I/O thread or a receiving socket would.
        std::thread::spawn(move || drop(first)).join().unwrap();
        let second = bufs.copy(&[2; 150_000]);
        assert_eq!(second.as_ptr() as usize, base);
        assert!(second.iter().all(|&x| x == 2));
        // Still alive: the next copy goes elsewhere and leaves it alone.
        let third = bufs.copy(&[3; 150_000]);
        assert_ne!(third.as_ptr() as usize, base);
        assert!(second.iter().all(|&x| x == 2));
        assert!(third.iter().all(|&x| x == 3));
    }

    #[test]
    fn at_most_kept_buffers_wait_for_reuse() {
        let mut bufs = SendBuffers::default();
        let live: Vec<Bytes> = (0..3 * KEPT).map(|_| bufs.copy(&[5; 10_000])).collect();
        drop(live);
        assert_eq!(bufs.returned.bufs.lock().unwrap().len(), KEPT);
    }

    #[test]
    fn kept_buffers_stay_within_the_recycled_size() {
        let mut bufs = SendBuffers::default();
        drop(bufs.copy(&[1; 200_000]));
        drop(bufs.copy(&[2; MAX_RECYCLED]));
        let kept = bufs.returned.bufs.lock().unwrap();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].capacity() <= MAX_RECYCLED);
    }

    #[test]
    fn oversized_bodies_get_their_own_allocation() {
        let mut bufs = SendBuffers::default();
        let big = vec![3u8; MAX_RECYCLED + 1];
        let a = bufs.copy(&big);
        let small = bufs.copy(b"x");
        assert_eq!(&a[..], &big[..]);
        assert_eq!(&small[..], b"x");
    }
}
