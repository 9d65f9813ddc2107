//! Routing id -> the peer holding it (ROUTER, STREAM), laid out so that a send to a peer whose
//! state has gone cold reads one line of the map (issue 15).
//!
//! ```text
//!   tags      [t t 0 t 0 ...]       a byte per bucket: 0 empty, else 7 bits of the hash (hot)
//!   entries   | id (<= 22 inline) | pipe id | slot | moves | front | next slot |  64 bytes
//! ```
//!
//! A routing id of up to [`INLINE`] bytes (libzmq's generated ids are 5, typical names and
//! UUIDs 10-16) is kept in the entry itself, so comparing it with the frame reads no further
//! memory; a longer one stays behind a box. The entry also holds the slot its peer was last
//! found at and the peer set's move count at that time: while no peer has left since, the slot
//! is still right and the send goes straight to the peer (`PeerSet::route`). And it holds the
//! address of the peer's pipe's front line, the one the writer reads through its own state,
//! and of the ring slot the next message to the peer will be written to (noted by the send
//! before): the send prefetches both from here, so those lines and the writer's load side by
//! side, where the slot's address would otherwise come from the writer, one load later.
//! With a thousand peers each of those lines is cold, and the send is a chain of them.

use std::cell::Cell;
use std::hash::BuildHasher;

use bytes::Bytes;

use crate::io::peer::PipeId;

use super::id_hash::{u32_at, u64_at, IdHashState};

/// Routing ids up to this many bytes live inside their map entry (a UUID's 16 fit; 22 leaves
/// the entry room for the next slot's address).
const INLINE: usize = 22;

// `Key::matches` covers an inline id with at most three words.
const _: () = assert!(INLINE <= 24);

/// A routing id as the map keeps it.
#[derive(Debug)]
enum Key {
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    /// Boxed: a thin pointer keeps the key at 24 bytes.
    Long(Box<Bytes>),
}

impl Key {
    fn new(rid: &Bytes) -> Key {
        match u8::try_from(rid.len()) {
            Ok(len) if rid.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..rid.len()].copy_from_slice(rid);
                Key::Inline { len, bytes }
            }
            _ => Key::Long(Box::new(rid.clone())),
        }
    }

    /// Whether this is the key of `rid`. An inline key is compared a word at a time, in loads
    /// of lengths known at compile time, overlapping as the id's hash reads it: the slices'
    /// `==` called `memcmp` on every send (issue 15: a call and about 18 instructions of a
    /// ROUTER send's 700, in a path whose length shows at a thousand peers).
    #[inline]
    fn matches(&self, rid: &[u8]) -> bool {
        let Key::Inline { len, bytes } = self else {
            return self.as_slice() == rid;
        };
        let n = rid.len();
        if usize::from(*len) != n {
            return false;
        }
        // `n` is at most INLINE here, so every read below lies within both.
        let k = &bytes[..];
        match n {
            0 => true,
            1..=3 => k[0] == rid[0] && k[n / 2] == rid[n / 2] && k[n - 1] == rid[n - 1],
            4..=7 => u32_at(k, 0) == u32_at(rid, 0) && u32_at(k, n - 4) == u32_at(rid, n - 4),
            8..=16 => u64_at(k, 0) == u64_at(rid, 0) && u64_at(k, n - 8) == u64_at(rid, n - 8),
            _ => {
                u64_at(k, 0) == u64_at(rid, 0)
                    && u64_at(k, 8) == u64_at(rid, 8)
                    && u64_at(k, n - 8) == u64_at(rid, n - 8)
            }
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Long(b) => b,
        }
    }
}

/// Where a routing id leads: the pipe id, which never changes, the slot it was last found at,
/// valid while the peer set's move count is still `moves`, the address of the outbound
/// pipe's front line (`Writer::front_line`), a hint for `ferromq_pipe::prefetch` only, and the
/// address of the slot the next message will be written to (`Writer::slot_after_next`, as
/// the last send found it; 0 when unknown), a hint for `Writer::prefetch_slot` only.
#[derive(Debug)]
pub(crate) struct Route {
    pub(crate) id: PipeId,
    pub(super) slot: Cell<usize>,
    pub(super) moves: Cell<u64>,
    pub(crate) front_line: usize,
    pub(crate) next_slot: Cell<usize>,
}

/// One map entry: a cache line.
#[derive(Debug)]
#[repr(align(64))]
struct Entry {
    key: Key,
    route: Route,
}

const _: () = assert!(std::mem::size_of::<Key>() == 24);
const _: () = assert!(std::mem::size_of::<Entry>() == 64);

/// Routing id -> the peer holding it. Every identified peer has exactly one entry.
///
/// Open addressing with linear probing, kept at most half full: an id's bucket is its hash's
/// low bits or one of the few after it. Beside the entries a byte per bucket, its tag (0 for
/// empty, else the hash's top seven bits and the high bit), as hashbrown's control bytes; but
/// a lookup starts loading the entry of the id's own bucket and the next before it reads the
/// tags, so with a thousand peers, where the entry is cold, its load no longer waits for the
/// tags' (most ids sit in their own bucket or the next; one further on costs a load after the
/// tags). Removal shifts the entries after the hole back, so no bucket is ever a tombstone.
#[derive(Debug)]
pub(crate) struct RoutingIds {
    tags: Vec<u8>,
    /// As many as `tags`, a power of two (or none before the first insert).
    entries: Vec<Option<Entry>>,
    len: usize,
    hasher: IdHashState,
}

const _: () = assert!(std::mem::size_of::<Option<Entry>>() == 64);

/// The tag of an id whose hash is `hash`: never 0, which marks an empty bucket.
#[inline]
fn tag_of(hash: u64) -> u8 {
    0x80 | (hash >> 57) as u8
}

impl RoutingIds {
    pub(crate) fn new() -> RoutingIds {
        RoutingIds {
            tags: Vec::new(),
            entries: Vec::new(),
            len: 0,
            hasher: IdHashState::new(),
        }
    }

    #[inline]
    fn hash(&self, rid: &[u8]) -> u64 {
        self.hasher.hash_one(rid)
    }

    /// The bucket holding `rid`, if any.
    #[inline]
    fn find(&self, rid: &[u8]) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mask = self.entries.len() - 1;
        let hash = self.hash(rid);
        let mut at = hash as usize & mask;
        let home = std::ptr::from_ref(&self.entries[at]) as usize;
        // The entry's bucket or the next (the following line): started before the tags are
        // read, so a cold entry and the tags load side by side.
        ferromq_pipe::prefetch(home);
        ferromq_pipe::prefetch(home.wrapping_add(std::mem::size_of::<Option<Entry>>()));
        let tag = tag_of(hash);
        loop {
            let t = self.tags[at];
            if t == 0 {
                return None;
            }
            if t == tag
                && self.entries[at]
                    .as_ref()
                    .is_some_and(|e| e.key.matches(rid))
            {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Where `rid` leads, if a peer holds it.
    #[inline]
    pub(crate) fn get(&self, rid: &[u8]) -> Option<&Route> {
        let at = self.find(rid)?;
        self.entries[at].as_ref().map(|e| &e.route)
    }

    pub(crate) fn contains_key(&self, rid: &[u8]) -> bool {
        self.find(rid).is_some()
    }

    /// Files `rid` under the pipe `id`, whose outbound front line is at `front_line`,
    /// replacing whoever held it.
    pub(crate) fn insert(&mut self, rid: &Bytes, id: PipeId, front_line: usize) {
        let entry = Entry {
            key: Key::new(rid),
            route: Route {
                id,
                slot: Cell::new(usize::MAX),
                // No move count matches: the first use looks the slot up.
                moves: Cell::new(u64::MAX),
                front_line,
                next_slot: Cell::new(0),
            },
        };
        if let Some(at) = self.find(rid) {
            self.entries[at] = Some(entry);
            return;
        }
        if 2 * (self.len + 1) > self.entries.len() {
            self.grow();
        }
        let hash = self.hash(rid);
        self.place(hash, entry);
        self.len += 1;
    }

    /// Puts an entry whose id is not in the map into the first free bucket from its own.
    fn place(&mut self, hash: u64, entry: Entry) {
        let mask = self.entries.len() - 1;
        let mut at = hash as usize & mask;
        while self.tags[at] != 0 {
            at = (at + 1) & mask;
        }
        self.tags[at] = tag_of(hash);
        self.entries[at] = Some(entry);
    }

    /// Doubles the buckets (eight at first) and files every entry again.
    fn grow(&mut self) {
        let buckets = (2 * self.entries.len()).max(8);
        self.tags = vec![0; buckets];
        let old = std::mem::replace(
            &mut self.entries,
            std::iter::repeat_with(|| None).take(buckets).collect(),
        );
        for entry in old.into_iter().flatten() {
            let hash = self.hash(entry.key.as_slice());
            self.place(hash, entry);
        }
    }

    /// Removes `rid` if the peer `id` holds it.
    pub(crate) fn unmap(&mut self, id: PipeId, rid: &[u8]) {
        let Some(mut hole) = self.find(rid) else {
            return;
        };
        if self.entries[hole].as_ref().is_none_or(|e| e.route.id != id) {
            return;
        }
        self.entries[hole] = None;
        self.tags[hole] = 0;
        self.len -= 1;
        // Each entry after the hole, up to the next empty bucket, moves into the hole if its
        // own bucket does not lie between the hole and where it is, so that every entry stays
        // reachable from its own bucket without crossing an empty one.
        let mask = self.entries.len() - 1;
        let mut at = (hole + 1) & mask;
        while self.tags[at] != 0 {
            let own = self.entries[at]
                .as_ref()
                .map_or(at, |e| self.hash(e.key.as_slice()) as usize & mask);
            if at.wrapping_sub(own) & mask >= at.wrapping_sub(hole) & mask {
                self.tags[hole] = std::mem::replace(&mut self.tags[at], 0);
                self.entries[hole] = self.entries[at].take();
                hole = at;
            }
            at = (at + 1) & mask;
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], &Route)> {
        self.entries
            .iter()
            .flatten()
            .map(|e| (e.key.as_slice(), &e.route))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_matches_its_id_and_no_other_at_every_length() {
        for n in 0..=INLINE + 2 {
            let rid: Vec<u8> = (1..=n as u8).collect();
            let key = Key::new(&Bytes::from(rid.clone()));
            assert!(key.matches(&rid), "length {n}");
            // Any one byte changed, the id one byte shorter or longer.
            for i in 0..n {
                let mut other = rid.clone();
                other[i] ^= 0x80;
                assert!(!key.matches(&other), "length {n}, byte {i}");
            }
            assert!(n == 0 || !key.matches(&rid[..n - 1]), "length {n}, shorter");
            let mut longer = rid.clone();
            longer.push(0);
            assert!(!key.matches(&longer), "length {n}, longer");
        }
    }

    #[test]
    fn short_and_long_ids_are_found_and_told_apart() {
        let mut ids = RoutingIds::new();
        let long = Bytes::from(vec![7u8; 200]);
        let edge = Bytes::from(vec![9u8; INLINE]);
        let past = Bytes::from(vec![9u8; INLINE + 1]);
        for (i, rid) in [
            Bytes::new(),
            Bytes::from_static(b"\0\0\0\0\x01"),
            Bytes::from_static(b"ab"),
            Bytes::from_static(b"ab\0"),
            long.clone(),
            edge.clone(),
            past.clone(),
        ]
        .iter()
        .enumerate()
        {
            ids.insert(rid, i as PipeId, 0);
        }
        assert_eq!(ids.len(), 7);
        assert_eq!(ids.get(b"").map(|r| r.id), Some(0));
        assert_eq!(ids.get(b"ab").map(|r| r.id), Some(2));
        assert_eq!(ids.get(b"ab\0").map(|r| r.id), Some(3));
        assert_eq!(ids.get(&long).map(|r| r.id), Some(4));
        assert_eq!(ids.get(&edge).map(|r| r.id), Some(5));
        assert_eq!(ids.get(&past).map(|r| r.id), Some(6));
        assert!(ids.get(&long[1..]).is_none());
        assert!(ids.get(b"a").is_none());
        // Only the holder's own id is removed.
        ids.unmap(99, b"ab");
        assert!(ids.contains_key(b"ab"));
        ids.unmap(2, b"ab");
        assert!(!ids.contains_key(b"ab"));
        // A second insert hands the id over.
        ids.insert(&long, 8, 0);
        assert_eq!(ids.get(&long).map(|r| r.id), Some(8));
        assert_eq!(ids.len(), 6);
    }

    /// Every entry lies within the run of full buckets that starts at its own bucket, its tag
    /// is its hash's, the count is right and the table is at most half full.
    fn check(ids: &RoutingIds) {
        let buckets = ids.entries.len();
        assert_eq!(ids.tags.len(), buckets);
        assert!(2 * ids.len <= buckets, "{} in {buckets}", ids.len);
        let mut full = 0;
        for (at, entry) in ids.entries.iter().enumerate() {
            let Some(e) = entry else {
                assert_eq!(ids.tags[at], 0);
                continue;
            };
            full += 1;
            let hash = ids.hash(e.key.as_slice());
            assert_eq!(ids.tags[at], tag_of(hash));
            let mut probe = hash as usize & (buckets - 1);
            while probe != at {
                assert!(ids.entries[probe].is_some(), "an empty bucket before {at}");
                probe = (probe + 1) & (buckets - 1);
            }
        }
        assert_eq!(full, ids.len);
    }

    mod model {
        use super::*;
        use proptest::prelude::*;
        use std::collections::HashMap;

        proptest! {
            /// Inserts, hand-overs and removals of ids drawn from a small set (so that buckets
            /// collide, runs wrap around the table's end and removals shift entries back)
            /// leave the map agreeing with a `HashMap` on every id.
            #[test]
            fn agrees_with_a_hash_map(
                ops in proptest::collection::vec((0u8..3, 0usize..48, 0u64..4), 1..300),
            ) {
                let id = |k: usize| Bytes::from(if k.is_multiple_of(5) {
                    vec![k as u8; INLINE + 1 + k]
                } else {
                    format!("peer-{k}").into_bytes()
                });
                let mut ids = RoutingIds::new();
                let mut model: HashMap<usize, PipeId> = HashMap::new();
                for (op, k, pipe) in ops {
                    match op {
                        0 | 1 => {
                            ids.insert(&id(k), pipe, 0);
                            model.insert(k, pipe);
                        }
                        _ => {
                            ids.unmap(pipe, &id(k));
                            if model.get(&k) == Some(&pipe) {
                                model.remove(&k);
                            }
                        }
                    }
                    check(&ids);
                    for k in 0..48 {
                        prop_assert_eq!(ids.get(&id(k)).map(|r| r.id), model.get(&k).copied());
                    }
                    prop_assert_eq!(ids.len(), model.len());
                }
            }
        }
    }
}
