//! Routing id -> the peer holding it (ROUTER, STREAM), laid out so that a send to a peer whose
//! state has gone cold reads one line of the map (issue 15).
//!
//! ```text
//!   ctrl bytes   [h h h h ...]        hashbrown's control bytes (1 byte per entry, hot)
//!   entries      | id (<= 22 inline) | pipe id | slot | moves | front | next slot |  64 bytes
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

use std::borrow::Borrow;
use std::cell::Cell;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use bytes::Bytes;

use crate::io::peer::PipeId;

use super::id_hash::IdHashState;

/// Routing ids up to this many bytes live inside their map entry (a UUID's 16 fit; 22 leaves
/// the entry room for the next slot's address).
const INLINE: usize = 22;

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

impl Borrow<[u8]> for Entry {
    fn borrow(&self) -> &[u8] {
        self.key.as_slice()
    }
}

impl Hash for Entry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `[u8]` hashes, which `Borrow<[u8]>` requires.
        self.key.as_slice().hash(state);
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.key.as_slice() == other.key.as_slice()
    }
}

impl Eq for Entry {}

/// Routing id -> the peer holding it. Every identified peer has exactly one entry.
#[derive(Debug)]
pub(crate) struct RoutingIds {
    entries: HashSet<Entry, IdHashState>,
}

impl RoutingIds {
    pub(crate) fn new() -> RoutingIds {
        RoutingIds {
            entries: HashSet::with_hasher(IdHashState::new()),
        }
    }

    /// Where `rid` leads, if a peer holds it.
    #[inline]
    pub(crate) fn get(&self, rid: &[u8]) -> Option<&Route> {
        self.entries.get(rid).map(|e| &e.route)
    }

    pub(crate) fn contains_key(&self, rid: &[u8]) -> bool {
        self.entries.contains(rid)
    }

    /// Files `rid` under the pipe `id`, whose outbound front line is at `front_line`,
    /// replacing whoever held it.
    pub(crate) fn insert(&mut self, rid: &Bytes, id: PipeId, front_line: usize) {
        self.entries.replace(Entry {
            key: Key::new(rid),
            route: Route {
                id,
                slot: Cell::new(usize::MAX),
                // No move count matches: the first use looks the slot up.
                moves: Cell::new(u64::MAX),
                front_line,
                next_slot: Cell::new(0),
            },
        });
    }

    /// Removes `rid` if the peer `id` holds it.
    pub(crate) fn unmap(&mut self, id: PipeId, rid: &[u8]) {
        if self.get(rid).is_some_and(|r| r.id == id) {
            self.entries.remove(rid);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], &Route)> {
        self.entries.iter().map(|e| (e.key.as_slice(), &e.route))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
