//! The unit of allocation: a fixed block of slots, linked into a list that the writer extends
//! at the tail and the reader retires at the head (libzmq's `yqueue_t` chunk).

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::ptr;

use crate::sync::{AtomicPtr, AtomicU64, UnsafeCell};
use std::sync::atomic::Ordering;

/// Slots per chunk. Large enough that allocation is rare even without recycling; tiny under
/// loom so that a model run crosses chunk boundaries and exercises the recycling handshake.
pub(crate) const CHUNK_SIZE: usize = if cfg!(loom) { 2 } else { 256 };

/// Slots of a pipe's first chunk that are used: positions `0..FIRST_CHUNK_SLOTS` go to it,
/// and the writer moves on to a chunk on huge pages at `FIRST_CHUNK_SLOTS`, which that chunk
/// holds in its slot of the same index (its slots before it stay unused until its next round).
/// A busy pipe therefore leaves its small pages after 64 messages rather than 256 (with a
/// thousand peers, a quarter of a million sends into one fresh 4 KiB page per peer, each
/// first touch a page fault), and a first chunk touches at most 2.1 KiB of its pages.
pub(crate) const FIRST_CHUNK_SLOTS: usize = if cfg!(loom) { 1 } else { 64 };

/// Words of [`Head::more`]: a bit per slot.
const MORE_WORDS: usize = CHUNK_SIZE.div_ceil(64);

/// A chunk's first cache line: its link and the slots' `more` flags.
#[repr(C, align(64))]
struct Head<T> {
    next: AtomicPtr<Chunk<T>>,
    /// From [`Chunk::alloc_huge`], not [`Chunk::alloc`].
    huge: bool,
    /// Bit `i % 64` of word `i / 64`: the frame in slot `i` has more frames after it. Written
    /// by the writer before it publishes the slot (set only, for frames with `more`) and
    /// cleared while nobody else can see the slot: when the chunk is retired (`reset`) or a
    /// frame rolled back.
    more: [AtomicU64; MORE_WORDS],
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
/// The link comes first, on a line of its own with the `more` flags: a first chunk uses only
/// the memory from its start to its slot [`FIRST_CHUNK_SLOTS`], so the link written when it
/// fills lies in the same pages. A slot holds the item alone, with its flag in the head: a
/// `Bytes` is 32 bytes, so two slots fill a line and none straddles two, where a 40-byte
/// slot (the item and a `bool`) straddled two lines every other time, and a cold write or
/// read touched 1.5 lines of slots rather than one (issue 15: a ROUTER sending to a thousand
/// peers, each of which a DEALER drains in turn). The reader rarely needs the head for it:
/// the last frame published is the end of a message, so its flag is known to be clear, and
/// until the writer first writes a frame with `more` (`Front::multipart`) every flag is.
#[repr(C)]
pub(crate) struct Chunk<T> {
    head: Head<T>,
    slots: [UnsafeCell<MaybeUninit<T>>; CHUNK_SIZE],
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
                    head: Head {
                        next: AtomicPtr::new(ptr::null_mut()),
                        huge,
                        more: std::array::from_fn(|_| AtomicU64::new(0)),
                    },
                    slots: std::array::from_fn(|_| UnsafeCell::new(MaybeUninit::uninit())),
                },
            );
        }
        chunk
    }

    /// Whether the chunk is on huge pages ([`Chunk::alloc_huge`]).
    pub(crate) fn is_huge(&self) -> bool {
        self.head.huge
    }

    /// The link to the next chunk.
    pub(crate) fn next(&self) -> &AtomicPtr<Chunk<T>> {
        &self.head.next
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

    /// Makes a recycled chunk look freshly allocated. The caller owns it exclusively (its
    /// hand-over to the other end orders these stores before that end's first look).
    pub(crate) fn reset(&self) {
        self.head.next.store(ptr::null_mut(), Ordering::Relaxed);
        for word in &self.head.more {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// Moves a value into slot `index`, and marks it in the head when `more` frames follow.
    ///
    /// # Safety
    /// The slot is vacant and no other thread accesses it until the write is published, and
    /// its `more` flag is clear (every vacant slot's is: see [`Head::more`]).
    pub(crate) unsafe fn write(&self, index: usize, item: T, more: bool) {
        self.slots[index].with_mut(|cell| {
            // SAFETY: the caller has exclusive access to this vacant slot.
            unsafe { (*cell).write(item) };
        });
        if more {
            // Only the writer changes a word while the chunk is in use, so a load and a store
            // make the change; the reader reads the bit only once the publication that
            // follows has made it visible.
            let word = &self.head.more[index / 64];
            let bits = word.load(Ordering::Relaxed);
            word.store(bits | 1 << (index % 64), Ordering::Relaxed);
        }
    }

    /// Whether the frame in slot `index` has more frames after it.
    ///
    /// # Safety
    /// As for [`Chunk::take`]: the slot's write happens-before this call.
    pub(crate) unsafe fn more(&self, index: usize) -> bool {
        self.head.more[index / 64].load(Ordering::Relaxed) >> (index % 64) & 1 != 0
    }

    /// Clears the `more` flag of slot `index`, whose frame the writer took back unpublished.
    pub(crate) fn clear_more(&self, index: usize) {
        let word = &self.head.more[index / 64];
        let bits = word.load(Ordering::Relaxed);
        word.store(bits & !(1 << (index % 64)), Ordering::Relaxed);
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

    /// Moves the value out of slot `index`, leaving it vacant (its `more` flag, if set, is
    /// the caller's to read first and to clear or have cleared: [`Head::more`]).
    ///
    /// # Safety
    /// The slot holds a value whose write happens-before this call, and no other thread
    /// accesses the slot until it is vacant again.
    pub(crate) unsafe fn take(&self, index: usize) -> T {
        self.slots[index].with_mut(|cell| {
            // SAFETY: the caller guarantees the slot is initialised and exclusively ours; after
            // the read it is treated as vacant, so the value is never read twice.
            unsafe { (*cell).assume_init_read() }
        })
    }
}

/// Starts loading the lines of the slot at `address` (one, or two for an item whose size
/// does not divide a line: the slots start on a line boundary). Any address will do, as for
/// [`crate::prefetch`].
#[inline]
pub(crate) fn prefetch_slot<T>(address: usize) {
    crate::prefetch(address);
    let size = std::mem::size_of::<T>();
    if size > 0 && !64usize.is_multiple_of(size) {
        crate::prefetch(address.wrapping_add(size - 1));
    }
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
