//! What lives inside the caller's 64-byte `zmq_msg_t`.
//!
//! libzmq's `msg_t` is a union tagged by a type byte, and every `zmq_msg_*` call checks the tag
//! before trusting the rest, so a zeroed, closed or garbage message yields `EFAULT` rather than
//! a crash. [`MsgCell`] does the same with a word-sized magic tag in front of the message body;
//! closing writes a dead tag, so a double close is `EFAULT` too.
//!
//! libzmq's copy semantics are kept: a "very small message" (the body would fit inside
//! `zmq_msg_t`) is copied by value, a long one is shared and both copies report `ZMQ_SHARED`, a
//! constant one (`zmq_msg_init_data` without a free function) is always shared.

use core::mem::MaybeUninit;
use std::cell::OnceCell;
use std::sync::Arc;

use bytes::Bytes;
use ferromq::Metadata;

use crate::boundary::Errno;
use crate::errno::EFAULT;
#[cfg(test)]
use crate::errno::ENOMEM;
use crate::msg::props::Props;

const LIVE: usize = 0x7a6d_7367_6f6b_2121_u64 as usize;
const DEAD: usize = 0;

/// Bodies up to this size are "very small messages" in libzmq (stored inside `zmq_msg_t`),
/// which `zmq_msg_copy` duplicates instead of sharing: 33 bytes on 64-bit targets.
pub const MAX_VSM_SIZE: usize = 64 - (core::mem::size_of::<*const u8>() + 3 + 16 + 4);

/// How a message body is owned, which decides what a copy does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Up to [`MAX_VSM_SIZE`] bytes from `zmq_msg_init`/`zmq_msg_init_size`: copied by value.
    Small,
    /// Reference counted: copies share the body.
    Long,
    /// Caller memory with no free function: never released, always reported shared.
    Constant,
}

/// A live message: the tag, the body, its flags, and for a received message the peer's
/// metadata (shared by every message of the connection) with the C strings `zmq_msg_gets`
/// hands out, built on the first lookup and owned by the message, as libzmq's are.
#[derive(Debug)]
#[repr(C)]
pub struct MsgCell {
    tag: usize,
    pub body: Bytes,
    pub metadata: Option<Arc<Metadata>>,
    pub props: OnceCell<Box<Props>>,
    pub kind: Kind,
    pub more: bool,
    pub shared: bool,
}

impl MsgCell {
    pub fn new(body: Bytes, kind: Kind) -> Self {
        Self {
            tag: LIVE,
            body,
            metadata: None,
            props: OnceCell::new(),
            kind,
            more: false,
            shared: false,
        }
    }

    /// An empty message, what `zmq_msg_init` makes.
    pub fn empty() -> Self {
        Self::new(Bytes::new(), Kind::Small)
    }

    /// What [`put_sized`] places, as a value (for tests): a body of `size` bytes (see
    /// `bodies`); `ENOMEM` when it cannot be allocated (libzmq's answer, where Rust would
    /// abort).
    #[cfg(test)]
    pub fn with_size(size: usize) -> Result<Self, Errno> {
        let body = crate::msg::bodies::body(size)?;
        let kind = if size <= MAX_VSM_SIZE {
            Kind::Small
        } else {
            Kind::Long
        };
        Ok(Self::new(body, kind))
    }

    /// `zmq_msg_copy`'s copy: the flags travel, the body is duplicated or shared per [`Kind`].
    pub fn copy(&mut self) -> Self {
        let body = match self.kind {
            Kind::Small => Bytes::copy_from_slice(&self.body),
            Kind::Long => {
                self.shared = true;
                self.body.clone()
            }
            Kind::Constant => self.body.clone(),
        };
        Self {
            tag: LIVE,
            body,
            metadata: self.metadata.clone(),
            props: OnceCell::new(),
            kind: self.kind,
            more: self.more,
            shared: self.shared,
        }
    }

    /// Replaces the content in place with a received frame: its body is the runtime's
    /// `Bytes`, shared on copy like libzmq's long messages unless it is very small. (In place,
    /// not through `take` + `put`: this runs once per received message.)
    /// `metadata` is the frame's (the socket keeps it); the cell takes a count of it only when
    /// it holds another connection's, so frames from one peer received into one message in
    /// turn count nothing.
    pub fn set_received(&mut self, msg: ferromq::Msg, metadata: Option<&Arc<Metadata>>) {
        self.kind = if msg.data.len() <= MAX_VSM_SIZE {
            Kind::Small
        } else {
            Kind::Long
        };
        let data = core::mem::ManuallyDrop::new(msg.data);
        // SAFETY: `data` is not dropped; its copy is the body from here on.
        let old = core::mem::replace(&mut self.body, unsafe { ferromq::settled::body(&data) });
        self.more = msg.more;
        self.shared = false;
        let old_metadata = if self.metadata.as_ref().map(Arc::as_ptr) == metadata.map(Arc::as_ptr) {
            None
        } else {
            core::mem::replace(&mut self.metadata, metadata.cloned())
        };
        if self.props.get().is_some() {
            self.drop_props();
        }
        // The old content goes last: dropping it is a call, across which the new body would
        // otherwise wait on the stack and be read back with wide loads (see `ferromq::settled`).
        drop(old);
        drop(old_metadata);
    }

    /// Drops the strings `zmq_msg_gets` made (out of line: most messages have none).
    #[cold]
    #[inline(never)]
    fn drop_props(&mut self) {
        self.props = OnceCell::new();
    }

    /// Moves the body out, leaving an empty one: what `zmq_msg_send` sends. The body is read
    /// a word at a time. `zmq_msg_init_size` has just stored it a word at a time (see
    /// `put_sized`), and the wider loads of a plain move wait for those stores to complete
    /// (no store forwarding across them): a third of `zmq_msg_send`'s own samples in
    /// `inproc_thr 64` (issue 18, session 15).
    #[inline(always)]
    pub fn take_body(&mut self) -> Bytes {
        const WORDS: usize = core::mem::size_of::<Bytes>() / core::mem::size_of::<usize>();
        const _: () =
            assert!(core::mem::size_of::<Bytes>() == WORDS * core::mem::size_of::<usize>());
        let at = core::ptr::addr_of_mut!(self.body);
        let from = at.cast::<MaybeUninit<usize>>();
        let mut words = [MaybeUninit::<usize>::uninit(); WORDS];
        for (i, word) in words.iter_mut().enumerate() {
            // SAFETY: `from` points to the body's `WORDS` words (the sizes are asserted
            // equal), readable as possibly uninitialised words (padding, were there any).
            // Volatile keeps the compiler from merging them into wider loads.
            *word = unsafe { from.add(i).read_volatile() };
        }
        // SAFETY: `words` holds the bytes of the body, which is moved out: the slot gets a
        // fresh empty body without the old one being dropped, so it is owned once, by the
        // value returned, which is made of exactly its bytes (same size, asserted).
        unsafe {
            at.write(Bytes::new());
            core::mem::transmute::<[MaybeUninit<usize>; WORDS], Bytes>(words)
        }
    }

    /// Makes this an empty message again, in place (after a successful send).
    pub fn clear(&mut self) {
        self.body = Bytes::new();
        self.kind = Kind::Small;
        self.more = false;
        self.shared = false;
        self.metadata = None;
        if self.props.get().is_some() {
            self.drop_props();
        }
    }

    /// `ZMQ_SHARED`.
    pub fn is_shared(&self) -> bool {
        self.shared || self.kind == Kind::Constant
    }
}

/// The opaque 64-byte, pointer-aligned storage a C caller declares as `zmq_msg_t`.
///
/// The header spells it as libzmq does (`unsigned char _[64]` with pointer alignment), written in
/// `cbindgen.toml`; this is its Rust twin.
/// cbindgen:ignore
#[repr(C)]
#[derive(Debug)]
pub struct zmq_msg_t {
    bytes: [u8; 64],
    _align: [*mut u8; 0],
}

const _: () = assert!(core::mem::size_of::<zmq_msg_t>() == 64);
const _: () = assert!(core::mem::align_of::<zmq_msg_t>() == core::mem::align_of::<*mut u8>());
const _: () = assert!(core::mem::size_of::<MsgCell>() <= core::mem::size_of::<zmq_msg_t>());
const _: () = assert!(core::mem::align_of::<MsgCell>() <= core::mem::align_of::<zmq_msg_t>());

/// The slot a message pointer designates, if the pointer is usable at all.
fn slot(msg: *mut zmq_msg_t) -> Result<*mut MsgCell, Errno> {
    if msg.is_null() || !msg.is_aligned() {
        return Err(Errno(EFAULT));
    }
    Ok(msg.cast())
}

/// Whether the slot holds a live message.
///
/// # Safety
/// `cell` points to 64 readable bytes, pointer-aligned.
unsafe fn is_live(cell: *const MsgCell) -> bool {
    // SAFETY: `tag` is the first field of a repr(C) struct, so it is the first word of the slot,
    // which the caller guarantees readable and aligned. Any bit pattern is a valid usize, so
    // this read is sound even for a slot that was never initialised by us.
    unsafe { cell.cast::<usize>().read() == LIVE }
}

/// `zmq_msg_init_size`: a message of a fresh body of `size` bytes (see
/// [`crate::msg::bodies::body_into`]) placed in `msg`, field by field, overwriting whatever was
/// there without dropping it; `ENOMEM` when the body cannot be had, with `msg` left as it was
/// but for its body field.
///
/// # Safety
/// `msg` is NULL or points to a writable `zmq_msg_t`.
#[inline(always)]
pub unsafe fn put_sized(msg: *mut zmq_msg_t, size: usize) -> Result<(), Errno> {
    let slot = slot(msg)?;
    // SAFETY: non-NULL, aligned, 64 writable bytes per the contract; MsgCell fits (asserted).
    unsafe { crate::msg::bodies::body_into(core::ptr::addr_of_mut!((*slot).body), size) }?;
    let kind = if size <= MAX_VSM_SIZE {
        Kind::Small
    } else {
        Kind::Long
    };
    // SAFETY: as above; with the body, every field is written once, the tag last, so the
    // slot holds a whole MsgCell afterwards.
    unsafe {
        core::ptr::addr_of_mut!((*slot).metadata).write(None);
        core::ptr::addr_of_mut!((*slot).props).write(OnceCell::new());
        core::ptr::addr_of_mut!((*slot).kind).write(kind);
        core::ptr::addr_of_mut!((*slot).more).write(false);
        core::ptr::addr_of_mut!((*slot).shared).write(false);
        core::ptr::addr_of_mut!((*slot).tag).write(LIVE);
    }
    Ok(())
}

/// Places `cell` in `msg`, overwriting whatever was there without dropping it (as libzmq's
/// `init` functions do: the storage is presumed uninitialised).
///
/// # Safety
/// `msg` is NULL or points to a writable `zmq_msg_t`.
#[inline(always)]
pub unsafe fn put(msg: *mut zmq_msg_t, cell: MsgCell) -> Result<(), Errno> {
    let slot = slot(msg)?;
    // Field by field: a whole-struct write copied the cell through the stack with wide loads of
    // what had just been stored in pieces, which wait for those stores (as moving the message
    // out did in `zmq_msg_close`; see `release`). About 4 ns of `zmq_msg_init_size`.
    let MsgCell {
        tag,
        body,
        metadata,
        props,
        kind,
        more,
        shared,
    } = cell;
    // SAFETY: non-NULL, aligned, 64 writable bytes per the contract; MsgCell fits (asserted).
    // Every field is written once, so the slot holds a whole MsgCell afterwards.
    unsafe {
        core::ptr::addr_of_mut!((*slot).body).write(body);
        core::ptr::addr_of_mut!((*slot).metadata).write(metadata);
        core::ptr::addr_of_mut!((*slot).props).write(props);
        core::ptr::addr_of_mut!((*slot).kind).write(kind);
        core::ptr::addr_of_mut!((*slot).more).write(more);
        core::ptr::addr_of_mut!((*slot).shared).write(shared);
        core::ptr::addr_of_mut!((*slot).tag).write(tag);
    }
    Ok(())
}

/// A shared view of the live message in `msg`; `EFAULT` for NULL or a message that is not live.
///
/// # Safety
/// `msg` is NULL or points to a readable `zmq_msg_t` not mutated during `'a`.
pub unsafe fn get<'a>(msg: *const zmq_msg_t) -> Result<&'a MsgCell, Errno> {
    let slot = slot(msg.cast_mut())?;
    // SAFETY: the contract makes the slot readable; a live tag means we wrote a MsgCell there.
    unsafe {
        if !is_live(slot) {
            return Err(Errno(EFAULT));
        }
        Ok(&*slot)
    }
}

/// A mutable view of the live message in `msg`.
///
/// # Safety
/// `msg` is NULL or points to a writable `zmq_msg_t` not otherwise accessed during `'a`.
pub unsafe fn get_mut<'a>(msg: *mut zmq_msg_t) -> Result<&'a mut MsgCell, Errno> {
    let slot = slot(msg)?;
    // SAFETY: as in `get`, with exclusive access per the contract.
    unsafe {
        if !is_live(slot) {
            return Err(Errno(EFAULT));
        }
        Ok(&mut *slot)
    }
}

/// Moves the live message out of `msg` and marks the slot dead.
///
/// # Safety
/// As for [`get_mut`].
pub unsafe fn take(msg: *mut zmq_msg_t) -> Result<MsgCell, Errno> {
    let slot = slot(msg)?;
    // SAFETY: as in `get_mut`; after the read the slot's copy is dead (tag overwritten), so the
    // body is owned exactly once, by the returned value.
    unsafe {
        if !is_live(slot) {
            return Err(Errno(EFAULT));
        }
        let cell = slot.read();
        slot.cast::<usize>().write(DEAD);
        Ok(cell)
    }
}

/// Releases the live message in `msg` where it lies and marks the slot dead: `take` and a drop,
/// without moving the message out of the slot first. Moved out, the 64 bytes were read back
/// with wide loads just after `zmq_msg_recv` had stored them in pieces, and such loads wait for
/// the stores to complete: `zmq_msg_close` in place took scale.c's pull-fan-in from 115 to
/// 99.5 ns per message (issue 18).
///
/// # Safety
/// As for [`get_mut`].
pub unsafe fn release(msg: *mut zmq_msg_t) -> Result<(), Errno> {
    let slot = slot(msg)?;
    // SAFETY: as in `take`: a live tag means a MsgCell we wrote, owned by the slot. The tag is
    // written dead first, so should a drop panic (it does not: bodies and metadata only lower
    // counts) the slot is not released twice.
    unsafe {
        if !is_live(slot) {
            return Err(Errno(EFAULT));
        }
        slot.cast::<usize>().write(DEAD);
        // Field by field, so that the check for `zmq_msg_gets` strings is inline and their
        // drop is not (most messages have none).
        core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).body));
        core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).metadata));
        if (*slot).props.get().is_some() {
            drop_props_in_place(core::ptr::addr_of_mut!((*slot).props));
        }
    }
    Ok(())
}

/// Drops a released message's `zmq_msg_gets` strings.
///
/// # Safety
/// `props` is a live `OnceCell` that is not used again.
#[cold]
#[inline(never)]
unsafe fn drop_props_in_place(props: *mut OnceCell<Box<Props>>) {
    // SAFETY: per the contract.
    unsafe { core::ptr::drop_in_place(props) }
}

/// Places an empty message in `msg` (`zmq_msg_init`), field by field, overwriting whatever
/// was there without dropping it. Built as a value and then placed, the message was written
/// to the stack in pieces and copied with wide loads, which wait for those stores (see
/// `release`).
///
/// # Safety
/// `msg` is NULL or points to a writable `zmq_msg_t`.
#[inline(always)]
pub unsafe fn put_empty(msg: *mut zmq_msg_t) -> Result<(), Errno> {
    let slot = slot(msg)?;
    // SAFETY: non-NULL, aligned, 64 writable bytes per the contract; MsgCell fits (asserted).
    // Every field is written once, the tag last, so the slot holds a whole MsgCell afterwards.
    unsafe {
        core::ptr::addr_of_mut!((*slot).body).write(Bytes::new());
        core::ptr::addr_of_mut!((*slot).metadata).write(None);
        core::ptr::addr_of_mut!((*slot).props).write(OnceCell::new());
        core::ptr::addr_of_mut!((*slot).kind).write(Kind::Small);
        core::ptr::addr_of_mut!((*slot).more).write(false);
        core::ptr::addr_of_mut!((*slot).shared).write(false);
        core::ptr::addr_of_mut!((*slot).tag).write(LIVE);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage() -> zmq_msg_t {
        zmq_msg_t {
            bytes: [0; 64],
            _align: [],
        }
    }

    #[test]
    fn vsm_threshold_matches_libzmq_on_64_bit() {
        if cfg!(target_pointer_width = "64") {
            assert_eq!(MAX_VSM_SIZE, 33);
        }
    }

    #[test]
    fn zeroed_and_garbage_are_efault() {
        let mut m = storage();
        // SAFETY: m is a valid, aligned zmq_msg_t.
        unsafe {
            assert_eq!(get(&m).err(), Some(Errno(EFAULT)));
            m.bytes = [0xA5; 64];
            assert_eq!(take(&mut m).err(), Some(Errno(EFAULT)));
            assert_eq!(get(core::ptr::null()).err(), Some(Errno(EFAULT)));
        }
    }

    #[test]
    fn put_get_take_then_dead() {
        let mut m = storage();
        // SAFETY: m is a valid, aligned zmq_msg_t.
        unsafe {
            put(&mut m, MsgCell::new(Bytes::from_static(b"abc"), Kind::Long)).unwrap();
            assert_eq!(&get(&m).unwrap().body[..], b"abc");
            let cell = take(&mut m).unwrap();
            assert_eq!(&cell.body[..], b"abc");
            assert_eq!(take(&mut m).err(), Some(Errno(EFAULT)), "double close");
        }
    }

    #[test]
    fn misaligned_is_efault() {
        let mut raw = [0u64; 10];
        let p = raw
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<zmq_msg_t>();
        // SAFETY: put rejects the misaligned pointer before writing.
        assert_eq!(unsafe { put(p, MsgCell::empty()) }, Err(Errno(EFAULT)));
    }

    #[test]
    fn copy_semantics() {
        let mut small = MsgCell::with_size(4).unwrap();
        small.more = true;
        let c = small.copy();
        assert_ne!(
            c.body.as_ptr(),
            small.body.as_ptr(),
            "small messages copy by value"
        );
        assert!(c.more && !c.is_shared() && !small.is_shared());

        let mut long = MsgCell::with_size(MAX_VSM_SIZE + 1).unwrap();
        assert!(!long.is_shared());
        let c = long.copy();
        assert_eq!(c.body.as_ptr(), long.body.as_ptr(), "long messages share");
        assert!(c.is_shared() && long.is_shared());

        let constant = MsgCell::new(Bytes::from_static(b"k"), Kind::Constant);
        assert!(constant.is_shared());
    }

    #[test]
    fn with_size_has_its_size_and_huge_is_enomem() {
        let m = MsgCell::with_size(100).unwrap();
        assert_eq!(m.body.len(), 100);
        assert_eq!(MsgCell::with_size(usize::MAX).err(), Some(Errno(ENOMEM)));
    }

    #[test]
    fn put_sized_places_a_whole_message_or_nothing_live() {
        let mut m = core::mem::MaybeUninit::<zmq_msg_t>::uninit();
        for size in [0, MAX_VSM_SIZE, MAX_VSM_SIZE + 1, 5000] {
            // SAFETY: `m` is writable and read only after a successful `put_sized`.
            unsafe {
                put_sized(m.as_mut_ptr(), size).unwrap();
                let cell = get_mut(m.as_mut_ptr()).unwrap();
                assert_eq!(cell.body.len(), size);
                let small = size <= MAX_VSM_SIZE;
                assert_eq!(cell.kind, if small { Kind::Small } else { Kind::Long });
                assert!(!cell.more && !cell.shared && cell.metadata.is_none());
                release(m.as_mut_ptr()).unwrap();
            }
        }
        // SAFETY: as above; a failed `put_sized` leaves the slot not live.
        unsafe {
            assert_eq!(put_sized(m.as_mut_ptr(), usize::MAX), Err(Errno(ENOMEM)));
            assert!(get_mut(m.as_mut_ptr()).is_err());
            assert_eq!(put_sized(core::ptr::null_mut(), 1), Err(Errno(EFAULT)));
        }
    }

    #[test]
    fn take_body_moves_the_body_out_and_leaves_an_empty_one() {
        let mut cell = MsgCell::new(Bytes::from(vec![7u8; 100]), Kind::Long);
        let at = cell.body.as_ptr();
        let body = cell.take_body();
        assert_eq!((body.as_ptr(), body.len()), (at, 100));
        assert!(body.iter().all(|&b| b == 7));
        assert!(cell.body.is_empty());
        drop(cell);
        assert_eq!(body.len(), 100, "owned once, by the value taken");
    }
}
