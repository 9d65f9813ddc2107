//! libzmq's own subscription tries (4.3.4, bundled by zmq-sys), behind a safe face, so a
//! bench can time them beside ferromq's on the same workload.
//!
//! [`LibzmqTrie`] is `zmq::trie_t`, what a SUB socket matches incoming messages against; its
//! code is linked from zmq-sys's libzmq.a. [`LibzmqMultiTrie`] is `zmq::generic_mtrie_t`, what a
//! PUB socket finds subscribers with, instantiated in benches/shim/libzmq_trie.cpp from libzmq's
//! generic_mtrie_impl.hpp. The shim's functions are `noexcept`: nothing unwinds across them.

use std::ffi::c_void;
use std::ptr::NonNull;

#[repr(C)]
struct RawTrie {
    _opaque: [u8; 0],
}

#[repr(C)]
struct RawMultiTrie {
    _opaque: [u8; 0],
}

type PeerFn = unsafe extern "C" fn(peer: *mut c_void, arg: *mut c_void);

extern "C" {
    fn ferromq_libzmq_trie_new() -> *mut RawTrie;
    fn ferromq_libzmq_trie_free(trie: *mut RawTrie);
    fn ferromq_libzmq_trie_add(trie: *mut RawTrie, prefix: *const u8, size: usize) -> bool;
    fn ferromq_libzmq_trie_check(trie: *const RawTrie, data: *const u8, size: usize) -> bool;
    fn ferromq_libzmq_mtrie_new() -> *mut RawMultiTrie;
    fn ferromq_libzmq_mtrie_free(trie: *mut RawMultiTrie);
    fn ferromq_libzmq_mtrie_add(
        trie: *mut RawMultiTrie,
        prefix: *const u8,
        size: usize,
        peer: *mut c_void,
    ) -> bool;
    fn ferromq_libzmq_mtrie_match(
        trie: *mut RawMultiTrie,
        data: *const u8,
        size: usize,
        f: PeerFn,
        arg: *mut c_void,
    );
}

/// libzmq's SUB-side trie: does some subscribed prefix start the message?
#[derive(Debug)]
pub struct LibzmqTrie {
    raw: NonNull<RawTrie>,
}

impl LibzmqTrie {
    /// # Panics
    /// When the allocation of the root node fails.
    pub fn new() -> Self {
        // SAFETY: the shim's constructor takes no arguments and returns a new trie or null.
        let raw = unsafe { ferromq_libzmq_trie_new() };
        let raw = NonNull::new(raw).unwrap_or_else(|| panic!("libzmq trie_t allocation failed"));
        Self { raw }
    }

    /// Subscribes `prefix`; true when it was not subscribed before.
    pub fn add(&mut self, prefix: &[u8]) -> bool {
        // SAFETY: `raw` is a live trie owned by `self` (exclusive through `&mut`); the pointer
        // and length describe `prefix`, which trie_t::add only reads during the call.
        unsafe { ferromq_libzmq_trie_add(self.raw.as_ptr(), prefix.as_ptr(), prefix.len()) }
    }

    /// Whether some subscribed prefix starts `data` (libzmq's xsub match).
    pub fn matches(&self, data: &[u8]) -> bool {
        // SAFETY: `raw` is a live trie; trie_t::check is const and only reads `data`, which
        // the pointer and length describe.
        unsafe { ferromq_libzmq_trie_check(self.raw.as_ptr(), data.as_ptr(), data.len()) }
    }
}

impl Default for LibzmqTrie {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for LibzmqTrie {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ferromq_libzmq_trie_new and is freed only here, once.
        unsafe { ferromq_libzmq_trie_free(self.raw.as_ptr()) }
    }
}

/// libzmq's PUB-side trie: which peers subscribed to some prefix of the message? Peers are
/// plain numbers, stored by libzmq as opaque pointer values (it never dereferences them).
#[derive(Debug)]
pub struct LibzmqMultiTrie {
    raw: NonNull<RawMultiTrie>,
}

impl LibzmqMultiTrie {
    /// # Panics
    /// When the allocation of the root node fails.
    pub fn new() -> Self {
        // SAFETY: the shim's constructor takes no arguments and returns a new trie or null.
        let raw = unsafe { ferromq_libzmq_mtrie_new() };
        let raw = NonNull::new(raw).unwrap_or_else(|| panic!("libzmq mtrie allocation failed"));
        Self { raw }
    }

    /// Subscribes `peer` to `prefix`; true when no peer had subscribed to it before.
    pub fn add(&mut self, prefix: &[u8], peer: usize) -> bool {
        // The peer number travels as a pointer-sized token that libzmq only stores and compares.
        let token = peer as *mut c_void;
        // SAFETY: `raw` is a live trie owned by `self` (exclusive through `&mut`); the pointer
        // and length describe `prefix`, which generic_mtrie_t::add copies what it needs from.
        unsafe { ferromq_libzmq_mtrie_add(self.raw.as_ptr(), prefix.as_ptr(), prefix.len(), token) }
    }

    /// Calls `f` for each subscription (prefix, peer) whose prefix starts `data`: a peer
    /// subscribed to two such prefixes comes twice, as in libzmq, whose xpub leaves the
    /// de-duplication to dist_t::match.
    pub fn for_each_match<F: FnMut(usize)>(&self, data: &[u8], mut f: F) {
        unsafe extern "C" fn forward<F: FnMut(usize)>(peer: *mut c_void, arg: *mut c_void) {
            // SAFETY: `arg` is the `&mut F` that for_each_match passed below, alive and not
            // otherwise borrowed for the whole match call, which is the only caller.
            let f = unsafe { &mut *arg.cast::<F>() };
            f(peer as usize);
        }
        let arg = (&mut f as *mut F).cast::<c_void>();
        // SAFETY: `raw` is a live trie; match does not change it (libzmq declares it non-const
        // only for its iteration helpers), and `&self` keeps add/drop away meanwhile. `data`
        // is described by the pointer and length and only read. `forward::<F>` gets `arg`
        // back, which points to `f`, alive until this call returns; a panic in `f` cannot
        // unwind through the C++ frames, `forward` being extern "C" (it aborts instead).
        unsafe {
            ferromq_libzmq_mtrie_match(
                self.raw.as_ptr(),
                data.as_ptr(),
                data.len(),
                forward::<F>,
                arg,
            )
        }
    }
}

impl Default for LibzmqMultiTrie {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for LibzmqMultiTrie {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ferromq_libzmq_mtrie_new and is freed only here, once.
        unsafe { ferromq_libzmq_mtrie_free(self.raw.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trie_matches_subscribed_prefixes_only() {
        let mut trie = LibzmqTrie::new();
        assert!(!trie.matches(b"abc"));
        assert!(trie.add(b"ab"));
        assert!(!trie.add(b"ab"));
        assert!(trie.matches(b"abc"));
        assert!(trie.matches(b"ab"));
        assert!(!trie.matches(b"a"));
        assert!(!trie.matches(b"xbc"));
        assert!(trie.add(b""));
        assert!(trie.matches(b"xbc"));
    }

    #[test]
    fn multi_trie_reports_each_matching_subscription() {
        let mut trie = LibzmqMultiTrie::new();
        assert!(trie.add(b"ab", 1));
        assert!(!trie.add(b"ab", 2));
        assert!(trie.add(b"abc", 1));
        assert!(trie.add(b"x", 3));
        let mut peers = Vec::new();
        trie.for_each_match(b"abcd", |peer| peers.push(peer));
        peers.sort_unstable();
        assert_eq!(peers, [1, 1, 2]);
        peers.clear();
        trie.for_each_match(b"zzz", |peer| peers.push(peer));
        assert!(peers.is_empty());
    }
}
