//! The unit of allocation: a fixed block of slots, linked into a list that the writer extends
//! at the tail and the reader retires at the head (libzmq's `yqueue_t` chunk).

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::ptr;

use crate::sync::{AtomicPtr, UnsafeCell};
use std::sync::atomic::Ordering;

/// Slots per chunk. Large enough that allocation is rare even without recycling; tiny under
/// loom so that a model run crosses chunk boundaries and exercises the recycling handshake.
pub(crate) const CHUNK_SIZE: usize = if cfg!(loom) { 2 } else { 256 };

/// Slots of a pipe's first chunk that are used: positions `0..FIRST_CHUNK_SLOTS` go to it,
/// and the writer moves on to a chunk on huge pages at `FIRST_CHUNK_SLOTS`, which that chunk
/// holds in its slot of the same index (its slots before it stay unused until its next round).
/// A busy pipe therefore leaves its small pages after 64 messages rather than 256 (with a
/// thousand peers, a quarter of a million sends into one fresh 4 KiB page per peer, each
/// first touch a page fault), and a first chunk touches at most 2.5 KiB of its pages.
pub(crate) const FIRST_CHUNK_SLOTS: usize = if cfg!(loom) { 1 } else { 64 };

/// One frame as it travels: the item and whether more frames of its message follow.
#[derive(Debug)]
pub(crate) struct Slot<T> {
    pub(crate) item: T,
    pub(crate) more: bool,
}

/// A block of [`CHUNK_SIZE`] slots. Whether a slot holds a value is not recorded here: it
/// follows from the pipe's positions (a slot is full between its write and its read).
///
/// A pipe's first chunk comes from a slab on small pages, whose pages become resident only
/// where written, so an idle pipe holds the page or two its few messages touched. The chunks
/// after it come from slabs on huge pages, where a thousand busy pipes' chunks share a few TLB
/// entries but every chunk is resident whole; the first one is freed, not recycled, once the
/// reader is done with it (`Shared::recycle`), so a busy pipe soon runs on huge pages only
/// (issue 15; `crate::slab`).
///
/// `repr(C)` with the link first: a first chunk uses only the memory from its start to its
/// slot [`FIRST_CHUNK_SLOTS`], so the link written when it fills lies in the same pages.
#[repr(C)]
pub(crate) struct Chunk<T> {
    pub(crate) next: AtomicPtr<Chunk<T>>,
    /// From [`Chunk::alloc_huge`], not [`Chunk::alloc`].
    huge: bool,
    slots: [UnsafeCell<MaybeUninit<Slot<T>>>; CHUNK_SIZE],
}

impl<T> Chunk<T> {
    /// Allocates an empty, unlinked chunk on small pages and leaks it as a raw pointer;
    /// ownership is tracked by the pipe's protocol and ended with [`Chunk::free`].
    pub(crate) fn alloc() -> *mut Chunk<T> {
        Chunk::alloc_in(false)
    }

    /// As [`Chunk::alloc`], but on huge pages.
    pub(crate) fn alloc_huge() -> *mut Chunk<T> {
        Chunk::alloc_in(true)
    }

    fn alloc_in(huge: bool) -> *mut Chunk<T> {
        let chunk = crate::slab::alloc(Layout::new::<Chunk<T>>(), huge).cast::<Chunk<T>>();
        // SAFETY: the memory is fresh, sized and aligned for a `Chunk<T>`, and nobody else
        // has it.
        unsafe {
            ptr::write(
                chunk,
                Chunk {
                    next: AtomicPtr::new(ptr::null_mut()),
                    huge,
                    slots: std::array::from_fn(|_| UnsafeCell::new(MaybeUninit::uninit())),
                },
            );
        }
        chunk
    }

    /// Whether the chunk is on huge pages ([`Chunk::alloc_huge`]).
    pub(crate) fn is_huge(&self) -> bool {
        self.huge
    }

    /// Releases a chunk's memory without touching its slots.
    ///
    /// # Safety
    /// `chunk` came from [`Chunk::alloc`] or [`Chunk::alloc_huge`], is not freed yet, nobody
    /// else can reach it any more, and every slot in it is vacant (values still in it are
    /// leaked, not dropped).
    pub(crate) unsafe fn free(chunk: *mut Chunk<T>) {
        // SAFETY: dropping the chunk in place runs the drop glue of its link and slot cells,
        // which drop no values (a `MaybeUninit` drops nothing).
        unsafe { ptr::drop_in_place(chunk) };
        // SAFETY: the memory came from the slab pool with this layout and is not used again.
        unsafe { crate::slab::free(chunk.cast(), Layout::new::<Chunk<T>>()) };
    }

    /// Makes a recycled chunk look freshly allocated.
    pub(crate) fn reset(&self) {
        self.next.store(ptr::null_mut(), Ordering::Relaxed);
    }

    /// Moves a value into slot `index`.
    ///
    /// # Safety
    /// The slot is vacant and no other thread accesses it until the write is published.
    pub(crate) unsafe fn write(&self, index: usize, slot: Slot<T>) {
        self.slots[index].with_mut(|cell| {
            // SAFETY: the caller has exclusive access to this vacant slot.
            unsafe { (*cell).write(slot) };
        });
    }

    /// Starts loading the cache lines of slot `index` (one or two: a slot need not be aligned
    /// to them), so that a write that follows soon does not wait for them.
    #[inline]
    pub(crate) fn prefetch(&self, index: usize) {
        prefetch_slot::<T>(self.slot_address(index));
    }

    /// The address of slot `index`, for [`prefetch_slot`].
    #[inline]
    pub(crate) fn slot_address(&self, index: usize) -> usize {
        std::ptr::from_ref(&self.slots[index]) as usize
    }

    /// Moves the value out of slot `index`, leaving it vacant.
    ///
    /// # Safety
    /// The slot holds a value whose write happens-before this call, and no other thread
    /// accesses the slot until it is vacant again.
    pub(crate) unsafe fn take(&self, index: usize) -> Slot<T> {
        self.slots[index].with_mut(|cell| {
            // SAFETY: the caller guarantees the slot is initialised and exclusively ours; after
            // the read it is treated as vacant, so the value is never read twice.
            unsafe { (*cell).assume_init_read() }
        })
    }
}

/// Starts loading the lines of the slot at `address` (one or two: a slot need not be
/// aligned to them). Any address will do, as for [`crate::prefetch`].
#[inline]
pub(crate) fn prefetch_slot<T>(address: usize) {
    crate::prefetch(address);
    crate::prefetch(address.wrapping_add(std::mem::size_of::<Slot<T>>() - 1));
}

/// Index of a position inside its chunk.
pub(crate) fn slot_index(position: u64) -> usize {
    // The remainder is below CHUNK_SIZE, so the narrowing cannot lose bits.
    (position % CHUNK_SIZE as u64) as usize
}

/// Whether `position` is the first slot of a chunk, i.e. the previous slot ended one: every
/// multiple of [`CHUNK_SIZE`], and [`FIRST_CHUNK_SLOTS`], where the first chunk ends.
#[inline]
pub(crate) fn starts_chunk(position: u64) -> bool {
    // Both are multiples of FIRST_CHUNK_SLOTS: one test of the low bits on nearly every frame.
    position.is_multiple_of(FIRST_CHUNK_SLOTS as u64)
        && (position.is_multiple_of(CHUNK_SIZE as u64) || position == FIRST_CHUNK_SLOTS as u64)
}

const _: () =
    assert!(CHUNK_SIZE.is_multiple_of(FIRST_CHUNK_SLOTS) && FIRST_CHUNK_SLOTS < CHUNK_SIZE);
