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
//!
//! Where a buffer's bytes sit matters for large bodies: on the AMD EPYC the project measures
//! on, the kernel's receive copy (`rep movsb` in `_copy_to_iter`) runs about 16x slower when
//! its destination is 1-23 bytes past its source modulo 4 KiB (`docs/perf/rep_movsb_alias.c`).
//! A buffer from glibc's mmap starts 16 bytes into a page, so a body read into it landed 25
//! bytes into a page, in that range, and 256 KiB round trips took twice libzmq's time. So
//! whenever the pending bytes are a frame's start and move, or a large body is about to be
//! read after them, they go where a long frame's body starts half a page in ([`place`]).

use bytes::{Buf, Bytes, BytesMut};

use crate::error::Error;

/// Buffers kept for reuse.
const SPARES: usize = 4;

/// Largest buffer kept: bigger ones (frames up to the engine's exact-read limit) go back to
/// the allocator.
const MAX_KEPT: usize = 1024 * 1024;

/// Pending bytes up to this many are at most one frame header (ZMTP 1.0's is the longest), and
/// moving them is cheap: they are placed (see [`place`]).
const HEADER: usize = 10;
/// Pending bytes up to this many ahead of a large body (its header and first bytes, read
/// together after a large frame: see the engine's `HEAD_READ`) are placed too: moving them
/// costs less than the read they save.
pub(crate) const HEAD_READ: usize = 64;
/// A ZMTP 3 long frame header (flags, 8 size octets): the body follows at this distance.
const LONG_HEADER: usize = 9;
/// The distance the kernel's copy is sensitive to, and the room reserved to place a header.
const PAGE: usize = 4096;
/// Where in a page a large body's first byte goes: as far as can be from the page starts
/// the kernel's copies of it seem to be near. Measured on the EPYC, 256 KiB round trips
/// (`local_lat`/`remote_lat`, pinned) were slow with the body 0-25 bytes into a page and fast
/// from 32 to 4090, whichever library sent it.
const BODY_AT: usize = PAGE / 2;

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
    /// With `body`, for the large body of the frame that starts `rbuf`: when its pending bytes
    /// (header and part of the body) must move, they are placed (see [`place`]), not put at
    /// the front of a buffer.
    pub(crate) fn grow(
        &mut self,
        rbuf: &mut BytesMut,
        size: usize,
        additional: usize,
        fresh: usize,
        body: bool,
    ) -> Result<usize, Error> {
        let len = rbuf.len();
        let mut head = [0u8; HEAD_READ];
        let short = len <= HEADER || (body && len <= HEAD_READ);
        let placed = short || body;
        let need = if short {
            if rbuf.capacity() - len >= additional && is_placed(rbuf) {
                return Ok(size);
            }
            // The buffer itself when it has the room, further on, or when none of its frames
            // are alive any more (`try_reclaim` then moves the header to its front), placed.
            head[..len].copy_from_slice(rbuf);
            rbuf.clear();
            let need = len
                .checked_add(additional)
                .and_then(|n| n.checked_add(PAGE))
                .ok_or(Error::NoMem)?;
            if rbuf.try_reclaim(need) {
                place(rbuf, &head[..len]);
                return Ok(size);
            }
            need
        } else if body {
            if rbuf.capacity() - len >= additional {
                return Ok(size);
            }
            // `try_reclaim` would move the pending bytes to the buffer's front; a copy to a
            // placed spare or new buffer costs the same.
            len.checked_add(additional)
                .and_then(|n| n.checked_add(PAGE))
                .ok_or(Error::NoMem)?
        } else {
            // The buffer itself, when it has the room or none of its frames are alive any more.
            if rbuf.try_reclaim(additional) {
                return Ok(size);
            }
            len.checked_add(additional).ok_or(Error::NoMem)?
        };
        let pending = if short { &head[..len] } else { &rbuf[..] };
        let (next, next_size) = self.take(pending, placed, need, fresh)?;
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
        let placed = rbuf.len() <= HEADER;
        let need = if placed {
            rbuf.len() + PAGE
        } else {
            rbuf.len()
        };
        let (next, next_size) = self.take(&rbuf[..], placed, need, fresh)?;
        *rbuf = next;
        Ok(next_size)
    }

    /// A buffer with room for `need` bytes (a spare whose frames are all dropped, or a new one
    /// of at least `fresh`), holding a copy of `pending` (placed when `placed`; `need` then
    /// includes the `PAGE` that may cost); and its size.
    fn take(
        &mut self,
        pending: &[u8],
        placed: bool,
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
        if placed {
            place(&mut next, pending);
        } else {
            next.extend_from_slice(pending);
        }
        Ok((next, next_size))
    }
}

/// Whether the engine should have `rbuf` placed (through [`RecvBuffers::grow`]) before it
/// reads a large body into it: it holds only the frame's header and at most the body's first
/// few bytes (`HEAD_READ` in all), and not where [`place`] puts them (after a body whose
/// buffer had room for the next, the next header sits wherever the last body ended).
pub(crate) fn misplaced(rbuf: &BytesMut) -> bool {
    rbuf.len() <= HEAD_READ && !is_placed(rbuf)
}

fn is_placed(buf: &BytesMut) -> bool {
    (buf.as_ptr() as usize + LONG_HEADER) % PAGE == BODY_AT
}

/// Puts `head` (the start of a frame, with room for `PAGE` more bytes after it) into the
/// empty `buf` where a long frame's body starts `BODY_AT` into a page, out of the slow range
/// of distances from the kernel's copy of it. The skipped bytes are written once (less than a
/// page, a small part of a body that is worth placing) so that no uninitialised memory is
/// exposed, and `advance` keeps them out of the frames. A ZMTP 1.0 long header is a byte
/// longer, and its body lands a byte further: still far from the slow range.
fn place(buf: &mut BytesMut, head: &[u8]) {
    debug_assert!(buf.is_empty() && buf.capacity() >= head.len() + PAGE);
    let body = buf.as_ptr() as usize + LONG_HEADER;
    let skip = BODY_AT.wrapping_sub(body) % PAGE;
    buf.resize(skip, 0);
    buf.advance(skip);
    buf.extend_from_slice(head);
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
        let size = pool.grow(rbuf, size, n, FRESH, false).unwrap();
        rbuf.extend_from_slice(&vec![0xAB; n]);
        size
    }

    #[test]
    fn pending_bytes_move_to_the_new_buffer() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::from(&b"partial"[..]);
        let size = pool.grow(&mut rbuf, 7, 200_000, FRESH, false).unwrap();
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
        let size = pool.grow(&mut rbuf, 6, 256 << 20, FRESH, false).unwrap();
        assert_eq!(size, 6 + (256 << 20) + PAGE);
        assert!(rbuf.capacity() >= 6 + (256 << 20));
        assert!(rbuf.capacity() <= size);
        assert_eq!(&rbuf[..], b"header");
        let mut rbuf = BytesMut::new();
        assert_eq!(
            pool.grow(&mut rbuf, 0, usize::MAX / 2, FRESH, false),
            Err(Error::NoMem)
        );
        assert_eq!(
            pool.grow(&mut BytesMut::from(&b"x"[..]), 1, usize::MAX, FRESH, false),
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
        let size = pool.grow(&mut rbuf, 0, n + 3, FRESH, false).unwrap();
        rbuf.extend_from_slice(&vec![0xAB; n]);
        rbuf.extend_from_slice(b"hdr");
        let body = rbuf.split_to(n).freeze();
        assert!(!body.is_unique());
        let size = pool.release_large(&mut rbuf, size, FRESH).unwrap();
        assert!(body.is_unique());
        assert_eq!(&rbuf[..], b"hdr");
        assert_eq!(size, FRESH);
        assert!(rbuf.capacity() >= FRESH - PAGE - 3);
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

    /// A large body's first byte is placed: in a fresh buffer, in one whose frames are
    /// dropped (where `try_reclaim` moves the header to the front), and further on in one
    /// whose frames are alive; the header itself is kept.
    #[test]
    fn a_large_body_is_placed() {
        let body_at = |rbuf: &BytesMut| (rbuf.as_ptr() as usize + LONG_HEADER) % PAGE;
        let header = [0x02, 0, 0, 0, 0, 0, 4, 0, 0];
        let n = 4 * PAGE;
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        rbuf.extend_from_slice(&header[..8]);
        let size = pool
            .grow(&mut rbuf, 8, 2 * (n + HEADER), FRESH, false)
            .unwrap();
        assert_eq!((&rbuf[..], body_at(&rbuf)), (&header[..8], BODY_AT));
        let base = rbuf.as_ptr() as usize;

        // A body read, then the start of the next header: nothing to place until a large
        // body is to be read.
        rbuf.extend_from_slice(&header[8..]);
        rbuf.advance(LONG_HEADER);
        rbuf.extend_from_slice(&vec![0xAB; n]);
        let body = rbuf.split_to(n).freeze();
        rbuf.extend_from_slice(&header[..3]);
        assert!(misplaced(&rbuf));
        assert_eq!(pool.grow(&mut rbuf, size, n, FRESH, false).unwrap(), size);
        assert!(!misplaced(&rbuf));
        assert_eq!((&rbuf[..], body_at(&rbuf)), (&header[..3], BODY_AT));
        // The first body is alive: placed further on in the same buffer.
        let at = rbuf.as_ptr() as usize;
        assert!(at > body.as_ptr() as usize + n && at < base + size);
        assert!(rbuf.capacity() >= n);

        // All dropped: back to the front of the same buffer, placed again.
        drop(body);
        rbuf.extend_from_slice(&header[3..]);
        let rest = rbuf.capacity() - rbuf.len();
        assert_eq!(
            pool.grow(&mut rbuf, size, rest + 1, FRESH, false).unwrap(),
            size
        );
        assert_eq!((&rbuf[..], rbuf.as_ptr() as usize), (&header[..], base));
        assert!(!misplaced(&rbuf));

        // More than a header pending: left where it is.
        rbuf.extend_from_slice(&[0xCD; 2]);
        assert!(!misplaced(&rbuf));
    }

    /// The read after a large frame brings the next header with the first bytes of its body
    /// (`HEAD_READ` at most): wherever they landed, they are placed before the body is read,
    /// in the same buffer when it has the room; more than that is left where it is.
    #[test]
    fn a_header_read_with_the_first_bytes_of_its_body_is_placed() {
        let body_at = |rbuf: &BytesMut| (rbuf.as_ptr() as usize + LONG_HEADER) % PAGE;
        let mut frame = vec![0x02, 0, 0, 0, 0, 0, 4, 0, 0];
        frame.extend((0..=255u8).cycle().take(4 * PAGE));
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let size = pool.grow(&mut rbuf, 0, 8 * PAGE, FRESH, false).unwrap();
        // Off its place by one byte, as after a 1-byte frame.
        rbuf.extend_from_slice(&[0]);
        rbuf.advance(1);
        rbuf.extend_from_slice(&frame[..HEAD_READ]);
        assert!(misplaced(&rbuf));
        assert_eq!(
            pool.grow(&mut rbuf, size, frame.len(), FRESH, true)
                .unwrap(),
            size
        );
        assert_eq!((&rbuf[..], body_at(&rbuf)), (&frame[..HEAD_READ], BODY_AT));
        assert!(!misplaced(&rbuf));
        assert!(rbuf.capacity() - rbuf.len() >= frame.len());

        rbuf.advance(1);
        rbuf.extend_from_slice(&[0xCD; HEAD_READ]);
        assert!(rbuf.len() > HEAD_READ);
        assert!(!misplaced(&rbuf));
    }

    /// A large body whose header and first bytes must move to another buffer (the buffer read
    /// into before the header was complete had no room for the body) is still placed.
    #[test]
    fn a_body_moved_with_its_first_bytes_is_placed() {
        let mut pool = RecvBuffers::default();
        let mut rbuf = BytesMut::new();
        let size = pool.grow(&mut rbuf, 0, 100, FRESH, false).unwrap();
        let mut frame = vec![0x02, 0, 0, 0, 0, 0, 4, 0, 0];
        frame.extend((0..50u8).cycle().take(FRESH));
        rbuf.extend_from_slice(&frame[..50]);
        let size = pool
            .grow(&mut rbuf, size, frame.len(), FRESH, true)
            .unwrap();
        assert_eq!(&rbuf[..], &frame[..50]);
        assert_eq!((rbuf.as_ptr() as usize + LONG_HEADER) % PAGE, BODY_AT);
        assert!(rbuf.capacity() - rbuf.len() >= frame.len());
        assert!(size >= 50 + frame.len());
    }
}
