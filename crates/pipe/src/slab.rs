//! Where chunks live: carved from 2 MiB slabs, each chunk size and kind (huge or small pages)
//! in slabs of its own. Slabs of the huge kind are advised for huge pages
//! (`madvise(MADV_HUGEPAGE)`), so that a thousand busy pipes' chunks sit on a few pages, not on
//! a thousand (issue 15).
//!
//! ```text
//!   slab (2 MiB, 2 MiB aligned)   | chunk | chunk | chunk | ... | chunk | (tail unused)
//!                                   ^ free chunks form a list threaded through their first word
//! ```
//!
//! Why: a socket with many peers (a ROUTER sending to a thousand DEALERs) writes each message
//! to a different pipe, so each send touches another pipe's chunk. With each chunk a heap
//! allocation of its own (10 KiB for `Bytes` frames) those sit on about one 4 KiB page per
//! pipe, more pages than the TLB holds, and on a virtual machine every TLB miss is a nested
//! page walk. Carved from slabs on huge pages, 204 chunks share one TLB entry.
//!
//! The price: a huge page is resident whole, so a chunk there costs all its 10 KiB where a
//! chunk on small pages costs only the pages written. Pipes therefore start on a small-page
//! chunk and take huge-page ones only once busy (`Chunk`), which keeps an idle connection as
//! small as with heap chunks. The small-page chunks come from slabs too, not from the heap:
//! freed there, a thousand 10 KiB holes took the application's small allocations and spread
//! them over as many pages (ROUTER send to 1,000 peers 110 ns with the first chunk in a slab,
//! 114-115 with it on the heap).
//!
//! Memory goes back: a slab whose chunks are all free is unmapped, except one empty slab per
//! chunk size and kind kept for the next pipe (so a socket that connects and disconnects in a
//! loop does not map and fault in a slab each time). What the pool holds is therefore at most
//! the slabs that still hold a live chunk, plus one empty slab per size and kind. A free chunk
//! is reused before a slab is carved further or mapped; the worst case, one live chunk left in
//! each of many slabs, holds 2 MiB per such huge-page slab (a small-page slab holds only the
//! pages its chunks ever touched), the usual price of a slab allocator.
//!
//! Off Linux, under loom and under miri the chunks come from the global allocator as before.

/// The size and alignment of a slab: one huge page on x86-64 and aarch64 with 4 KiB pages.
#[cfg(all(target_os = "linux", not(loom), not(miri)))]
const SLAB: usize = 2 << 20;

/// Allocates memory for one chunk of `layout` (on huge pages if `huge`); never null
/// (allocation failure aborts, as the global allocator's does).
#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
pub(crate) fn alloc(layout: std::alloc::Layout, _huge: bool) -> *mut u8 {
    heap_alloc(layout)
}

/// One chunk from the global allocator (off Linux, and where a slab cannot be had).
fn heap_alloc(layout: std::alloc::Layout) -> *mut u8 {
    // SAFETY: chunks are never zero-sized (they hold at least a link).
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p
}

/// Returns memory from [`alloc`].
///
/// # Safety
/// `p` came from [`alloc`] with the same `layout` and is not used again.
#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
pub(crate) unsafe fn free(p: *mut u8, layout: std::alloc::Layout) {
    // SAFETY: as the caller guarantees.
    unsafe { std::alloc::dealloc(p, layout) };
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
pub(crate) use huge::{alloc, free};

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod huge {
    use super::{heap_alloc, SLAB};
    use std::alloc::Layout;
    use std::collections::HashMap;
    use std::ptr;
    use std::sync::Mutex;

    /// One mapped slab of one chunk size.
    #[derive(Debug)]
    struct Slab {
        /// Chunks handed out and not yet returned.
        used: usize,
        /// Chunks carved so far (the ones past it were never handed out).
        carved: usize,
        /// A returned chunk, whose first word holds the next one (null ends the list).
        free: *mut u8,
    }

    /// The slabs of one chunk layout and kind.
    #[derive(Debug)]
    struct Class {
        layout: Layout,
        /// Slabs advised for huge pages, or left on small pages (resident where written).
        huge: bool,
        /// Chunks that fit in a slab.
        per_slab: usize,
        /// Every mapped slab, by base address.
        slabs: HashMap<usize, Slab>,
        /// Bases of the slabs with room, the last one first in line.
        with_room: Vec<usize>,
    }

    #[derive(Debug, Default)]
    struct Pool {
        classes: Vec<Class>,
    }

    // SAFETY: the raw pointers are addresses inside slabs this pool mapped; the pool is only
    // reached under its mutex.
    unsafe impl Send for Pool {}

    static POOL: Mutex<Pool> = Mutex::new(Pool {
        classes: Vec::new(),
    });

    fn pool() -> std::sync::MutexGuard<'static, Pool> {
        // A panic under the lock leaves the pool consistent (no step of it panics half way),
        // so a poisoned lock is still usable.
        POOL.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Allocates memory for one chunk of `layout`, in a slab advised for huge pages if `huge`;
    /// never null (a failed mapping falls back to the global allocator, whose failure aborts).
    pub(crate) fn alloc(layout: Layout, huge: bool) -> *mut u8 {
        let size = layout.pad_to_align().size();
        if size > SLAB / 4 || layout.align() > 4096 {
            return heap_alloc(layout);
        }
        let mut pool = pool();
        let i = match pool
            .classes
            .iter()
            .position(|c| c.layout == layout && c.huge == huge)
        {
            Some(i) => i,
            None => {
                pool.classes.push(Class {
                    layout,
                    huge,
                    per_slab: SLAB / size,
                    slabs: HashMap::new(),
                    with_room: Vec::new(),
                });
                pool.classes.len() - 1
            }
        };
        pool.classes[i].take().unwrap_or_else(|| heap_alloc(layout))
    }

    /// Returns memory from [`alloc`].
    ///
    /// # Safety
    /// `p` came from [`alloc`] with the same `layout` and is not used again.
    pub(crate) unsafe fn free(p: *mut u8, layout: Layout) {
        let base = p as usize & !(SLAB - 1);
        let mut pool = pool();
        let class = pool
            .classes
            .iter_mut()
            .find(|c| c.layout == layout && c.slabs.contains_key(&base));
        match class {
            // SAFETY: `p` lies in one of this class's slabs, so `alloc` carved it there.
            Some(class) => unsafe { class.give_back(p, base) },
            None => {
                drop(pool);
                // SAFETY: not from a slab, so `alloc` took it from the global allocator.
                unsafe { std::alloc::dealloc(p, layout) };
            }
        }
    }

    impl Class {
        /// A chunk from a slab with room, mapping a new slab if none has; `None` if the
        /// mapping failed.
        fn take(&mut self) -> Option<*mut u8> {
            let base = match self.with_room.last() {
                Some(&base) => base,
                None => {
                    let base = map_slab(self.huge)?;
                    self.slabs.insert(
                        base,
                        Slab {
                            used: 0,
                            carved: 0,
                            free: ptr::null_mut(),
                        },
                    );
                    self.with_room.push(base);
                    base
                }
            };
            let size = self.layout.pad_to_align().size();
            let slab = self.slabs.get_mut(&base)?;
            let p = if slab.free.is_null() {
                let p = (base + slab.carved * size) as *mut u8;
                slab.carved += 1;
                p
            } else {
                let p = slab.free;
                // SAFETY: a free chunk's first word holds the next free one (`give_back`), and
                // chunks are at least pointer-aligned and pointer-sized.
                slab.free = unsafe { p.cast::<*mut u8>().read() };
                p
            };
            slab.used += 1;
            if slab.free.is_null() && slab.carved == self.per_slab {
                self.with_room.pop();
            }
            Some(p)
        }

        /// Puts a chunk back on its slab's free list; unmaps the slab if it was the last
        /// chunk in use there and another empty slab is already kept.
        ///
        /// # Safety
        /// `p` was handed out by [`Class::take`] from the slab at `base` and is not used again.
        unsafe fn give_back(&mut self, p: *mut u8, base: usize) {
            let per_slab = self.per_slab;
            let Some(slab) = self.slabs.get_mut(&base) else {
                return;
            };
            let was_full = slab.free.is_null() && slab.carved == per_slab;
            // SAFETY: the chunk is ours again and at least pointer-sized and aligned.
            unsafe { p.cast::<*mut u8>().write(slab.free) };
            slab.free = p;
            slab.used -= 1;
            let empty = slab.used == 0;
            if was_full {
                self.with_room.push(base);
            }
            if !empty {
                return;
            }
            let other_empty = self.slabs.iter().any(|(&b, s)| b != base && s.used == 0);
            if other_empty {
                self.slabs.remove(&base);
                self.with_room.retain(|&b| b != base);
                // SAFETY: every chunk of the slab is free, so nothing points into it any more.
                unsafe { unmap_slab(base) };
            }
        }
    }

    /// Maps a slab aligned to its size (so that a chunk's slab is its address rounded down) and,
    /// if `huge`, asks for huge pages on it; `None` if the mapping failed.
    fn map_slab(huge: bool) -> Option<usize> {
        // Twice the size, so that an aligned slab lies inside; the rest is unmapped at once.
        let len = 2 * SLAB;
        // SAFETY: an anonymous private mapping at an address of the kernel's choice touches
        // no existing memory.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let start = p as usize;
        let base = (start + SLAB - 1) & !(SLAB - 1);
        let head = base - start;
        let tail = len - head - SLAB;
        // SAFETY: both ranges lie inside the mapping just made and outside the slab kept;
        // nothing refers to them.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((base + SLAB) as *mut libc::c_void, tail);
            }
            // Only advice: without transparent huge pages the slab works on small pages.
            if huge {
                libc::madvise(base as *mut libc::c_void, SLAB, libc::MADV_HUGEPAGE);
            }
        }
        Some(base)
    }

    /// # Safety
    /// `base` is a slab from [`map_slab`], not unmapped yet, with nothing pointing into it.
    unsafe fn unmap_slab(base: usize) {
        // SAFETY: as the caller guarantees.
        unsafe { libc::munmap(base as *mut libc::c_void, SLAB) };
    }

    #[cfg(test)]
    pub(crate) fn slabs_of(layout: Layout, huge: bool) -> (usize, usize) {
        let pool = pool();
        pool.classes
            .iter()
            .find(|c| c.layout == layout && c.huge == huge)
            .map_or((0, 0), |c| {
                (c.slabs.len(), c.slabs.values().map(|s| s.used).sum())
            })
    }
}

#[cfg(all(test, target_os = "linux", not(loom), not(miri)))]
mod tests {
    use super::*;
    use std::alloc::Layout;

    /// Chunks of an odd size pack into slabs of either kind, come back for reuse, and an
    /// emptied pool keeps one slab at most: the memory goes back.
    #[test]
    fn chunks_pack_into_slabs_and_slabs_go_back() {
        for (extra, huge) in [(24, true), (32, false)] {
            // A layout of its own, so that the pipes other tests build do not share the class.
            let layout = Layout::from_size_align(10_248 + extra, 8).unwrap();
            let per_slab = SLAB / layout.size();
            let n = per_slab * 3 + 5;
            let chunks: Vec<*mut u8> = (0..n).map(|_| alloc(layout, huge)).collect();
            let mut addrs: Vec<usize> = chunks.iter().map(|&p| p as usize).collect();
            addrs.sort_unstable();
            addrs.dedup();
            assert_eq!(addrs.len(), n, "a chunk handed out twice");
            for w in addrs.windows(2) {
                assert!(w[1] - w[0] >= layout.size(), "chunks overlap");
            }
            for &p in &chunks {
                // SAFETY: the chunk is ours; writing all of it checks it lies in mapped memory.
                unsafe { std::ptr::write_bytes(p, 0xA5, layout.size()) };
            }
            assert_eq!(huge::slabs_of(layout, huge), (4, n));
            // Half back, then as many again: the returned ones are reused, no slab is added.
            for &p in chunks.iter().step_by(2) {
                // SAFETY: from `alloc` with this layout, not used again.
                unsafe { free(p, layout) };
            }
            let again: Vec<*mut u8> = (0..n.div_ceil(2)).map(|_| alloc(layout, huge)).collect();
            assert_eq!(huge::slabs_of(layout, huge), (4, n));
            for &p in chunks.iter().skip(1).step_by(2).chain(&again) {
                // SAFETY: as above.
                unsafe { free(p, layout) };
            }
            assert_eq!(huge::slabs_of(layout, huge), (1, 0));
        }
    }
}
