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
//! So copies go into up to `KEPT` buffers of `SLOT` bytes each (`BytesMut`s whose cut-off
//! parts are the messages). A message costs no allocation and no lock: cutting it off is one
//! atomic increment of its buffer's count, dropping it (on whichever thread) one decrement.
//! A buffer whose messages are all gone is taken back whole and starts over from its first
//! byte (`BytesMut::try_reclaim`, which never allocates), so a sender whose receiver keeps up
//! touches the same cache-hot bytes each time. Small copies (up to `MAX_SMALL`) are otherwise
//! cut one after another from the room left in the current buffer; the smallest (up to
//! `MAX_QUICK`) look whether a buffer can start over only once per `LOOK_EVERY` bytes (for a
//! 16-byte copy the look cost as much as the rest of the cut: issue 18). A larger copy takes a
//! free buffer from its start. Only when none is free does the socket make a new buffer (two
//! allocations, the buffer and its shared count, at most `KEPT` times) or, with `KEPT` buffers
//! all still held by messages in flight, copy into memory of its own: a body of the sending
//! thread's [`body_pool`] from 32 KiB to 8 MiB (`POOLED_COPIES`), reused once its message is
//! gone, else an allocation (one, as libzmq makes for every message). Bodies over `SLOT` always
//! get their own. A stream of large messages has up to its high-water marks in flight, far
//! more than `KEPT` buffers hold, so most of its copies take the pool's bodies.
//!
//! Buffers start small and double (`FIRST` bytes, then twice the last, up to `SLOT`): a socket
//! that sends now and then, like each of 10,000 idle DEALERs that said hello, holds 8 KiB, not
//! 256 KiB (which, once glibc has raised its mmap threshold, comes from the heap zeroed by
//! calloc, so all of it resident: issue 15's memory per idle connection). A busy sender reaches
//! `SLOT`-sized buffers after five.
//!
//! The price: a live message keeps its whole buffer alive (as a received tcp frame keeps its
//! read buffer), and a socket that has sent keeps up to `KEPT` buffers (3 MiB in all) for reuse
//! until it is closed, and for as long after as messages it sent are alive. Fewer was too few:
//! with eight (1 MiB in all, the first five being smaller) a 1 KiB stream over inproc, up to
//! SNDHWM + RCVHWM = 2,000 messages in flight, found every buffer held 40% of the time and
//! paid an allocation of its own for those bodies; inproc_thr 1 KiB went from 2.9 to 4.5 M
//! msg/s with sixteen (issue 18).

use bytes::{Bytes, BytesMut};

use super::body_pool;

/// Size of one recycled buffer, and the largest body copied into one.
pub const SLOT: usize = 256 * 1024;

/// Buffers kept for reuse: room for 2 MiB in flight (a 1 KiB stream at the default HWMs).
const KEPT: usize = 16;

/// Size of a socket's first buffer; each next one is twice the last, up to `SLOT`.
const FIRST: usize = 8 * 1024;

/// Largest copy cut from the room left behind earlier ones; larger ones take a buffer whose
/// messages are all gone, from its start.
const MAX_SMALL: usize = 4 * 1024;

/// Bytes of small copies cut from the current buffer between two looks at whether a buffer's
/// messages are all gone.
const LOOK_EVERY: usize = 4 * 1024;

/// Largest copy that may skip the look. Larger ones look every time, as the look costs little
/// beside their copy, and a look only every few of them let a sender with a few messages in
/// flight miss the moments its buffer was free and make buffers it did not need
/// (`tests/tests/runtime_alloc.rs` at 1 KiB).
const MAX_QUICK: usize = 256;

/// The buffers outgoing copies are cut from; used only by the thread that owns them (a
/// socket's, or, for `zmq_msg_init_size`, a C caller's thread).
#[derive(Debug, Default)]
pub struct SendBuffers {
    /// Each buffer and its size (its capacity when whole).
    slots: Vec<(BytesMut, usize)>,
    /// The slot copies are being cut from.
    current: usize,
    /// Bytes cut from it by the quick path since the buffers were last looked at.
    cut_since_look: usize,
}

impl SendBuffers {
    /// A `Bytes` holding a copy of `data`.
    pub(crate) fn copy(&mut self, data: &[u8]) -> Bytes {
        if data.is_empty() {
            return Bytes::new();
        }
        match self.room(data.len()) {
            Some(buf) => {
                buf.extend_from_slice(data);
                buf.split().freeze()
            }
            None if body_pool::POOLED_COPIES.contains(&data.len()) => {
                body_pool::copy(data).unwrap_or_else(|| Bytes::copy_from_slice(data))
            }
            None => Bytes::copy_from_slice(data),
        }
    }

    /// An empty buffer with room for at least `len` more bytes, from which the caller cuts its
    /// body (`split().freeze()`) once it has put `len` bytes there; `None` when `len` is over
    /// `SLOT` or every kept buffer is still held by messages in flight: then the body deserves
    /// an allocation of its own. `len` 0 is the caller's to avoid (an empty cut is pointless).
    #[doc(hidden)]
    #[inline]
    pub fn room(&mut self, len: usize) -> Option<&mut BytesMut> {
        // A small copy that fits in what is left of the current buffer goes there at once, with
        // no look at the other buffers nor at whether this one's messages are all gone (which
        // reads the count the receiving thread writes as it drops them): that look is made once
        // per `LOOK_EVERY` bytes cut, often enough that a buffer whose messages are gone soon
        // starts over (walking on through 256 KiB instead cost more in cache misses than the
        // look saved: issue 18).
        if len <= MAX_QUICK
            && self.cut_since_look + len <= LOOK_EVERY
            && let Some((slot, _)) = self.slots.get(self.current)
            && slot.capacity() - slot.len() >= len
        {
            self.cut_since_look += len;
            return Some(&mut self.slots[self.current].0);
        }
        self.find_room(len)
    }

    /// [`Self::room`] with a look at every buffer.
    #[inline(never)]
    fn find_room(&mut self, len: usize) -> Option<&mut BytesMut> {
        if len > SLOT {
            return None;
        }
        self.cut_since_look = 0;
        let n = self.slots.len();
        let order = |current: usize| (0..n).map(move |i| (current + i) % n);
        // A buffer whose messages are all gone starts over from its first byte: a sender
        // whose receiver keeps up (request-reply, a latency test) reuses the same cache-hot
        // bytes instead of walking through 256 KiB of them. Small copies first try the room
        // left in the current buffer; a large one always takes a buffer from its start, so
        // alternating between two buffers is all a ping-pong of large messages touches.
        let small = len <= MAX_SMALL;
        let free = order(self.current).find(|&i| {
            let (slot, size) = &mut self.slots[i];
            (slot.try_reclaim(*size) && len <= *size) || (small && slot.try_reclaim(len))
        });
        let at = match free {
            Some(at) => at,
            None if n < KEPT => {
                // Zeroed once when made (calloc), so every byte later cut from it has been
                // initialised: `zmq_msg_init_size` hands bodies out unfilled, and an unfilled
                // body must still hold initialised bytes for Rust to copy it soundly. Reuse
                // never de-initialises them (`try_reclaim` stays within this allocation).
                let last = self.slots.last().map_or(FIRST / 2, |(_, size)| *size);
                let size = (last * 2).max(len.next_power_of_two()).min(SLOT);
                let mut slot = BytesMut::zeroed(size);
                slot.clear();
                self.slots.push((slot, size));
                n
            }
            None => return None,
        };
        self.current = at;
        Some(&mut self.slots[at].0)
    }
}

/// Whether `f` left the send buffers as it found them: the copy after it lands right after
/// the copy before it (for tests of frames that must not be copied).
#[cfg(test)]
pub(crate) fn copies_nothing(buffers: &mut SendBuffers, f: impl FnOnce(&mut SendBuffers)) -> bool {
    let mark = buffers.copy(b"mark");
    f(buffers);
    let next = buffers.copy(b"next");
    next.as_ptr() as usize == mark.as_ptr() as usize + 4
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
    fn copies_are_cut_one_after_another() {
        let mut bufs = SendBuffers::default();
        let a = bufs.copy(&[1; 100]);
        let b = bufs.copy(&[2; 100]);
        // Adjacent in one allocation.
        assert_eq!(a.as_ptr() as usize + 100, b.as_ptr() as usize);
        assert_eq!(&a[..], &[1; 100][..]);
        assert_eq!(&b[..], &[2; 100][..]);
    }

    #[test]
    fn a_buffer_whose_messages_are_gone_starts_over() {
        let mut bufs = SendBuffers::default();
        // Large copies take a buffer from its start whenever its messages are gone.
        let first = bufs.copy(&[1; 10_000]);
        let base = first.as_ptr() as usize;
        drop(first);
        let second = bufs.copy(&[2; 10_000]);
        assert_eq!(second.as_ptr() as usize, base, "the same bytes again");
        // Small ones follow on in the room left by a live one.
        let third = bufs.copy(&[3; 1000]);
        assert_eq!(third.as_ptr() as usize, base + 10_000, "after a live one");
        drop(second);
        let fourth = bufs.copy(&[4; 100]);
        assert_eq!(fourth.as_ptr() as usize, base + 11_000, "after a live one");
        drop((third, fourth));
        // The smallest do not look back at every copy, but within LOOK_EVERY bytes.
        let fifth = bufs.copy(&[5; 100]);
        assert_eq!(fifth.as_ptr() as usize, base + 11_100, "no look back yet");
        drop(fifth);
        let back =
            (0..LOOK_EVERY / 100 + 1).any(|_| bufs.copy(&[6; 100]).as_ptr() as usize == base);
        assert!(back, "a look back within LOOK_EVERY bytes");
        // A larger small one looks every time.
        let sixth = bufs.copy(&[7; 1000]);
        assert_eq!(sixth.as_ptr() as usize, base, "all gone: from the start");
    }

    #[test]
    fn a_full_buffer_is_reused_once_its_messages_are_gone() {
        let mut bufs = SendBuffers::default();
        let first = bufs.copy(&[7; 1000]);
        let base = first.as_ptr() as usize;
        drop(first);
        // Nothing points into the buffer while it fills: once full, copies start over in it.
        let reused = (0..SLOT / 1000 + 1).any(|_| {
            let b = bufs.copy(&[9; 1000]);
            assert_eq!(&b[..], &[9; 1000][..]);
            b.as_ptr() as usize == base
        });
        assert!(reused);
        assert_eq!(bufs.slots.len(), 1);
    }

    #[test]
    fn live_messages_keep_their_bytes_when_buffers_move_on() {
        let mut bufs = SendBuffers::default();
        for size in [1000, 100_000, SLOT] {
            let kept: Vec<Bytes> = (0..40u8).map(|i| bufs.copy(&vec![i; size])).collect();
            for (i, b) in kept.iter().enumerate() {
                assert_eq!(b.len(), size);
                assert!(b.iter().all(|&x| x == i as u8));
            }
        }
    }

    #[test]
    fn a_buffer_comes_back_once_its_message_is_gone() {
        let mut bufs = SendBuffers::default();
        let first = bufs.copy(&[1; SLOT]);
        let base = first.as_ptr() as usize;
        // Dropped on another thread, as the I/O thread or a receiving socket would.
        std::thread::spawn(move || drop(first)).join().unwrap();
        let second = bufs.copy(&[2; 150_000]);
        assert_eq!(second.as_ptr() as usize, base);
        assert!(second.iter().all(|&x| x == 2));
        // Still alive and no room after it: the next copy goes elsewhere, leaving it alone.
        let third = bufs.copy(&[3; 150_000]);
        assert_ne!(third.as_ptr() as usize, base);
        assert!(second.iter().all(|&x| x == 2));
        assert!(third.iter().all(|&x| x == 3));
    }

    #[test]
    fn at_most_kept_buffers_then_allocations_of_their_own() {
        let mut bufs = SendBuffers::default();
        let live: Vec<Bytes> = (0..3 * KEPT).map(|_| bufs.copy(&[5; SLOT])).collect();
        assert_eq!(bufs.slots.len(), KEPT);
        assert!(live.iter().all(|b| b.len() == SLOT));
        drop(live);
        assert!(bufs.room(SLOT).is_some(), "a kept buffer is free again");
    }

    /// Past the kept buffers, a large copy takes a pooled body, and the next large copy after
    /// its message is gone reuses that memory rather than asking the allocator again.
    #[test]
    fn large_copies_past_the_kept_buffers_reuse_pooled_bodies() {
        let mut bufs = SendBuffers::default();
        let held: Vec<Bytes> = (0..KEPT).map(|_| bufs.copy(&[5; SLOT])).collect();
        let size = 64 * 1024;
        let first = bufs.copy(&[6; 64 * 1024]);
        assert!(first.iter().all(|&b| b == 6));
        let at = first.as_ptr();
        let kept = body_pool::kept_here().1;
        drop(first);
        assert!(
            body_pool::kept_here().1 >= kept + size,
            "given back to the pool"
        );
        let again = bufs.copy(&[7; 64 * 1024]);
        assert_eq!(again.as_ptr(), at, "the pooled body came back");
        assert!(again.len() == size && again.iter().all(|&b| b == 7));
        // A small copy past the kept buffers is an allocation of its own, as before.
        let small = bufs.copy(&[8; 100]);
        assert!(small.iter().all(|&b| b == 8));
        drop(held);
    }

    #[test]
    fn buffers_start_small_and_double() {
        let mut bufs = SendBuffers::default();
        let _hello = bufs.copy(&[1; 16]);
        assert_eq!(bufs.slots[0].1, FIRST, "one small send holds FIRST bytes");
        let live: Vec<Bytes> = (0..KEPT).map(|_| bufs.copy(&[2; MAX_SMALL])).collect();
        let sizes: Vec<usize> = bufs.slots.iter().map(|(_, size)| *size).collect();
        assert!(
            sizes.windows(2).all(|w| w[1] == (w[0] * 2).min(SLOT)),
            "{sizes:?}"
        );
        // A body larger than the next size gets a buffer that holds it.
        let big = bufs.copy(&[3; 100_000]);
        assert!(bufs.slots.iter().any(|(_, size)| *size >= 100_000));
        assert!(live.iter().all(|b| b[..] == [2; MAX_SMALL]) && big[..] == [3; 100_000]);
    }

    #[test]
    fn oversized_bodies_get_their_own_allocation() {
        let mut bufs = SendBuffers::default();
        let big = vec![3u8; SLOT + 1];
        let a = bufs.copy(&big);
        let small = bufs.copy(b"x");
        assert_eq!(&a[..], &big[..]);
        assert_eq!(&small[..], b"x");
        assert!(bufs.room(SLOT + 1).is_none());
    }
}
