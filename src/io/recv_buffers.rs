//! Read buffers an I/O thread's engines hand back and reuse.
//!
//! Received frames are slices of the engine's read buffer, so an engine whose buffer is full
//! while the application still holds frames from it needs a new buffer. Allocating one each
//! time costs a malloc, a cross-thread free when the application drops its frames, and fresh
//! pages to fault in: for 64-256 KiB frames one per frame, at 128 KiB exactly glibc's mmap
//! threshold, and the page faults alone were a third of libzmq's and ferromq's time per
//! message there (docs/performance.md). Instead the engine trades its full buffer for a spare
//! one from this pool whose frames have all been dropped, already faulted in.
//!
//! One pool per I/O thread rather than per connection, so that what is kept for reuse is
//! bounded by threads (at most `SPARES` buffers of up to `MAX_KEPT` each), not by connections.

use bytes::{Bytes, BytesMut};

use crate::error::Error;

/// Buffers kept for reuse.
const SPARES: usize = 4;

/// Largest buffer kept: bigger ones (frames up to the engine's exact-read limit) go back to
/// the allocator.
const MAX_KEPT: usize = 1024 * 1024;

/// The spare read buffers of one I/O thread.
#[derive(Debug, Default)]
pub(crate) struct RecvBuffers {
    /// Oldest first: each a handle that may still share its buffer with live frames, and the
    /// size of that buffer.
    spares: Vec<(BytesMut, usize)>,
}

impl RecvBuffers {
    /// Makes room in `rbuf` (a buffer of `size` bytes in all) for `additional` more bytes
    /// after its pending ones, and returns the size of the buffer it ends up in; `fresh` is
    /// the least size of a newly allocated buffer when none can be reused. A buffer the
    /// allocator refuses is `Error::NoMem` (the connection ends; the process does not abort).
    pub(crate) fn grow(
        &mut self,
        rbuf: &mut BytesMut,
        size: usize,
        additional: usize,
        fresh: usize,
    ) -> Result<usize, Error> {
        // The buffer itself, when it has the room or none of its frames are alive any more.
        if rbuf.try_reclaim(additional) {
            return Ok(size);
        }
        let need = rbuf.len().checked_add(additional).ok_or(Error::NoMem)?;
        let (next, next_size) = self.take(rbuf, need, fresh)?;
        let mut old = std::mem::replace(rbuf, next);
        if size > 0 && size <= MAX_KEPT {
            old.clear();
            if self.spares.len() == SPARES {
                self.spares.remove(0);
            }
            self.spares.push((old, size));
        }
        Ok(next_size)
    }

    /// Lets go of a buffer too large to keep (one reserved for a large body, of `size`
    /// bytes) once that body has been split off: its pending bytes move to a spare or fresh
    /// buffer and the size of that one is returned. The body is then the buffer's only
    /// holder, so the application frees it when it drops the message, as libzmq's user frees
    /// a message, rather than the I/O thread when the engine next grows its buffer or ends:
    /// returning 256 MiB to the kernel took that thread 16-46 ms, in which none of its other
    /// connections moved, and until then the connection kept the whole buffer.
    pub(crate) fn release_large(
        &mut self,
        rbuf: &mut BytesMut,
        size: usize,
        fresh: usize,
    ) -> Result<usize, Error> {
        if size <= MAX_KEPT {
            return Ok(size);
        }
        let (next, next_size) = self.take(rbuf, rbuf.len(), fresh)?;
        *rbuf = next;
        Ok(next_size)
    }

    /// A buffer with room for `need` bytes (a spare whose frames are all dropped, or a new one
    /// of at least `fresh`), holding a copy of the pending bytes of `rbuf`; and its size.
    fn take(
        &mut self,
        rbuf: &BytesMut,
        need: usize,
        fresh: usize,
    ) -> Result<(BytesMut, usize), Error> {
        let reusable = self
            .spares
            .iter_mut()
            .position(|(b, _)| b.try_reclaim(need));
        let (mut next, next_size) = match reusable {
            Some(i) => self.spares.remove(i),
            None => {
                let size = need.max(fresh);
                (try_with_capacity(size)?, size)
            }
        };
        next.extend_from_slice(rbuf);
        Ok((next, next_size))
    }
}

/// `BytesMut::with_capacity` that reports a refused allocation instead of aborting: the size
/// of a large body comes from the peer.
fn try_with_capacity(size: usize) -> Result<BytesMut, Error> {
    let mut vec = Vec::new();
    vec.try_reserve_exact(size).map_err(|_| Error::NoMem)?;
    // Bytes keeps the Vec's allocation, and a unique Bytes turns back into a BytesMut with
    // its capacity: no copy, no zeroing.
    Ok(BytesMut::from(Bytes::from(vec)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: usize = 128 * 1024;

    /// A buffer holding one received frame of `n` bytes, as the engine leaves it.
    fn filled(pool: &mut RecvBuffers, rbuf: &mut BytesMut, size: usize, n: usize) -> usize {
        let size = pool.grow(rbuf, size, n, FRESH).unwrap();
        rbuf.extend_from_slice(&vec![0xAB; n]);
        size
    }

    #[test]
    fn pending_bytes_move_to_the_new_buffer() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::from(&b"partial"[..]);
        let size = pool.grow(&mut rbuf, 7, 200_000, FRESH).unwrap();
        assert_eq!(&rbuf[..], b"partial");
        assert!(rbuf.capacity() >= 200_007);
        assert!(size >= 200_007);
    }

    #[test]
    fn a_buffer_whose_frames_are_dropped_is_reused() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let mut size = filled(&mut pool, &mut rbuf, 0, 100_000);
        let frame = rbuf.split().freeze();
        let first = frame.as_ptr() as usize;
        // The frame is alive: the next large read needs another buffer.
        size = filled(&mut pool, &mut rbuf, size, 100_000);
        let second = rbuf.split().freeze();
        assert_ne!(second.as_ptr() as usize, first);
        assert!(frame.iter().all(|&b| b == 0xAB));
        drop(frame);
        // The first buffer's frame is gone: it comes back from the pool.
        filled(&mut pool, &mut rbuf, size, 100_000);
        assert_eq!(rbuf.as_ptr() as usize, first);
        assert!(second.iter().all(|&b| b == 0xAB));
    }

    /// A large body gets a buffer of exactly its size, whose memory is not touched (so not
    /// committed) until read into; a size no allocator can give is an error, not an abort.
    #[test]
    fn exact_fallible_reservation() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::from(&b"header"[..]);
        let size = pool.grow(&mut rbuf, 6, 256 << 20, FRESH).unwrap();
        assert_eq!(size, 6 + (256 << 20));
        assert_eq!(rbuf.capacity(), size);
        assert_eq!(&rbuf[..], b"header");
        let mut rbuf = BytesMut::new();
        assert_eq!(
            pool.grow(&mut rbuf, 0, usize::MAX / 2, FRESH),
            Err(Error::NoMem)
        );
        assert_eq!(
            pool.grow(&mut BytesMut::from(&b"x"[..]), 1, usize::MAX, FRESH),
            Err(Error::NoMem)
        );
    }

    /// Once a large body is split off its own buffer, the engine's handle moves to a small
    /// buffer (with the pending bytes of the next header) and the body owns the large one
    /// alone; a buffer small enough to keep is left as it is.
    #[test]
    fn a_large_body_is_the_only_holder_of_its_buffer() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let n = 2 * MAX_KEPT;
        let size = pool.grow(&mut rbuf, 0, n + 3, FRESH).unwrap();
        rbuf.extend_from_slice(&vec![0xAB; n]);
        rbuf.extend_from_slice(b"hdr");
        let body = rbuf.split_to(n).freeze();
        assert!(!body.is_unique());
        let size = pool.release_large(&mut rbuf, size, FRESH).unwrap();
        assert!(body.is_unique());
        assert_eq!(&rbuf[..], b"hdr");
        assert_eq!(size, FRESH);
        assert!(rbuf.capacity() >= FRESH - 3);
        assert!(body.iter().all(|&b| b == 0xAB));

        let small = rbuf.as_ptr() as usize;
        let again = pool.release_large(&mut rbuf, size, FRESH).unwrap();
        assert_eq!((again, rbuf.as_ptr() as usize), (size, small));
    }

    #[test]
    fn oversized_buffers_are_not_kept() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let size = filled(&mut pool, &mut rbuf, 0, 2 * MAX_KEPT);
        let _frame = rbuf.split().freeze();
        filled(&mut pool, &mut rbuf, size, 100);
        assert!(pool.spares.is_empty());
    }

    #[test]
    fn the_pool_stays_bounded() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let mut size = 0;
        let mut frames = Vec::new();
        for _ in 0..3 * SPARES {
            size = filled(&mut pool, &mut rbuf, size, FRESH);
            frames.push(rbuf.split().freeze());
        }
        assert_eq!(pool.spares.len(), SPARES);
        assert!(frames.iter().all(|f| f.iter().all(|&b| b == 0xAB)));
    }
}
