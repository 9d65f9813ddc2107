//! A socket's peers and the two round-robin sets the patterns work over, so that the cost of
//! one message does not grow with the number of peers (libzmq's fq.cpp and lb.cpp).
//!
//! ```text
//!   peers:    [ p0 p1 p2 p3 p4 ]        dense; removal swaps the last peer into the hole
//!   slot_of:  id -> slot                 O(1) lookup by pipe id (a hash)
//!   by_key:   key -> slot                O(1) lookup by a stable small key (an index)
//!   readers:  [ 3 0 ]  cursor -> 3       slots that may have a message
//!   writers:  [ 1 4 2 ] cursor -> 4      slots that may have room
//! ```
//!
//! A peer leaves `readers` when a read finds its pipe empty (the pipe then wakes the socket on
//! its next flush) and `writers` when its pipe refuses a write (the pipe wakes the socket once
//! it has room again); the wake-up names the peer (`crate::io::ready`) and [`PeerSet::activate`]
//! puts it back. Leaving a set swaps the set's last member into the hole, and the cursor
//! follows the member whose turn it is, as libzmq's `_pipes.swap (_current, _active)`.

use std::collections::HashMap;
use std::ops::{Index, IndexMut};

use bytes::Bytes;

use crate::io::peer::{Peer, PipeId};

use super::id_hash::IdHashState;
use super::routing_ids::{Route, RoutingIds};

const NONE: usize = usize::MAX;

/// A peer's stable small key: given when the peer joins, freed (and reusable) when it
/// leaves, unchanged while other peers come and go. XPUB files its subscribers under it so
/// that each matched peer's slot is an array index, where the pipe id needs a hash lookup
/// (issue 15: PUB to all at N = 1,000 paid one per delivery).
pub(crate) type PeerKey = u32;

/// The fair queue's state (`fq.rs`), one word: idle, in the middle of the message of the
/// pipe it names (its later frames are all in that pipe), or holding a frame that `has_in`
/// took, which the fair queue keeps. A pipe id never reaches the two values kept for the
/// other states (ids count up from 0 in a `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading(u64);

impl Reading {
    pub(crate) const IDLE: Reading = Reading(u64::MAX);
    pub(crate) const HELD: Reading = Reading(u64::MAX - 1);

    #[inline]
    pub(crate) fn message(id: PipeId) -> Reading {
        debug_assert!(id < Reading::HELD.0);
        Reading(id)
    }

    /// The pipe whose message is being read, if one is.
    #[inline]
    pub(crate) fn in_message(self) -> Option<PipeId> {
        (self.0 < Reading::HELD.0).then_some(self.0)
    }
}

/// Slots taking part in one direction's round robin.
///
/// `repr(C)`, what a message reads first: the slot whose turn it is is kept beside the
/// cursor, so that finding it reads the set's own line rather than `members`' memory too (a
/// socket whose state has gone cold paid one more line per message for it, issue 15), and a
/// set of one member never reads `members` at all.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Active {
    /// `members[cursor]`, or `NONE` when there are no members.
    turn: usize,
    /// Member slots in turn order.
    members: Vec<usize>,
    /// Position in `members` of the member whose turn it is (read only where `members` is).
    cursor: usize,
    /// Per slot: its position in `members`, or `NONE`.
    position: Vec<usize>,
}

impl Default for Active {
    fn default() -> Active {
        Active {
            turn: NONE,
            cursor: 0,
            members: Vec::new(),
            position: Vec::new(),
        }
    }
}

impl Active {
    /// The slot whose turn it is.
    #[inline]
    pub(crate) fn current(&self) -> Option<usize> {
        (self.turn != NONE).then_some(self.turn)
    }

    /// The turn passes to the next member.
    #[inline]
    pub(crate) fn advance(&mut self) {
        let len = self.members.len();
        if len > 1 {
            self.cursor += 1;
            if self.cursor >= len {
                self.cursor = 0;
            }
            self.turn = self.members[self.cursor];
        }
    }

    /// `turn` follows a change of `members` or `cursor`.
    fn settle(&mut self) {
        self.turn = self.members.get(self.cursor).copied().unwrap_or(NONE);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, slot: usize) -> bool {
        self.position.get(slot).is_some_and(|&p| p != NONE)
    }

    /// Adds a slot at the end of the turn order (no-op for a member).
    pub(crate) fn insert(&mut self, slot: usize) {
        if self.position[slot] == NONE {
            self.position[slot] = self.members.len();
            self.members.push(slot);
            if self.turn == NONE {
                self.settle();
            }
        }
    }

    /// Takes a slot out of the turn order in O(1) (no-op for a non-member).
    pub(crate) fn remove(&mut self, slot: usize) {
        let at = self.position[slot];
        if at == NONE {
            return;
        }
        let last = self.members.len() - 1;
        self.members.swap_remove(at);
        self.position[slot] = NONE;
        if at < last {
            self.position[self.members[at]] = at;
        }
        if self.cursor == last {
            // The member whose turn it was moved into the hole.
            self.cursor = at;
        }
        if self.cursor >= self.members.len() {
            self.cursor = 0;
        }
        self.settle();
    }

    fn add_slot(&mut self) {
        self.position.push(NONE);
    }

    /// The last slot moved to `to` (whose own entry already left): relabel it.
    fn relabel_last(&mut self, to: usize) {
        let from = self.position.len() - 1;
        if from != to {
            let at = self.position[from];
            if at != NONE {
                self.members[at] = to;
            }
            if self.turn == from {
                self.turn = to;
            }
            self.position[to] = at;
        }
        self.position.pop();
    }
}

/// The peers of one socket.
///
/// `repr(C)`: a received message reads the fair queue's word, `peers` and the readers' turn
/// and member count, which fill the set's first 64 bytes (issue 15), and a routed send `peers`
/// and `moves`.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct PeerSet {
    /// The fair queue's state, here so that a receive finds it on the line it reads anyway.
    pub(crate) reading: Reading,
    peers: Vec<Peer>,
    /// Peers that may have a message (the fair queue's set).
    pub(crate) readers: Active,
    /// How many times a peer has left (and so a slot changed hands): a slot found at one
    /// count is still right while the count stays, with no need to look at the peer.
    moves: u64,
    /// Peers that may have room (the load balancer's set).
    pub(crate) writers: Active,
    slot_of: HashMap<PipeId, usize, IdHashState>,
    /// Per key: the slot of the peer holding it, or `NONE` (a free key).
    by_key: Vec<usize>,
    /// Per slot: the peer's key (parallel to `peers`).
    key_at: Vec<PeerKey>,
    free_keys: Vec<PeerKey>,
    /// (pipe, routing id) of identified peers removed because their far end closed, for the
    /// owner's routing-id map (ROUTER, STREAM); drained with [`PeerSet::forget_departed`].
    departed: Vec<(PipeId, Bytes)>,
}

impl Default for PeerSet {
    fn default() -> PeerSet {
        PeerSet {
            reading: Reading::IDLE,
            peers: Vec::new(),
            slot_of: HashMap::with_hasher(IdHashState::new()),
            by_key: Vec::new(),
            key_at: Vec::new(),
            free_keys: Vec::new(),
            readers: Active::default(),
            writers: Active::default(),
            departed: Vec::new(),
            moves: 0,
        }
    }
}

impl PeerSet {
    pub(crate) fn len(&self) -> usize {
        self.peers.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.peers.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Peer> {
        self.peers.iter()
    }

    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Peer> {
        self.peers.iter_mut()
    }

    /// Adds a peer, ready both ways; its slot.
    pub(crate) fn push(&mut self, peer: Peer) -> usize {
        let slot = self.peers.len();
        let key = match self.free_keys.pop() {
            Some(key) => {
                self.by_key[key as usize] = slot;
                key
            }
            None => {
                // A key per live peer: fewer than 2^32 (each holds descriptors or pipes).
                let key = PeerKey::try_from(self.by_key.len()).expect("fewer than 2^32 peers");
                self.by_key.push(slot);
                key
            }
        };
        self.key_at.push(key);
        self.slot_of.insert(peer.id, slot);
        self.peers.push(peer);
        self.readers.add_slot();
        self.writers.add_slot();
        self.readers.insert(slot);
        self.writers.insert(slot);
        slot
    }

    /// The stable key of the peer at `slot`.
    #[inline]
    pub(crate) fn key(&self, slot: usize) -> PeerKey {
        self.key_at[slot]
    }

    /// The slot of the peer holding `key`, if one does.
    #[inline]
    pub(crate) fn slot_by_key(&self, key: PeerKey) -> Option<usize> {
        self.by_key
            .get(key as usize)
            .copied()
            .filter(|&slot| slot != NONE)
    }

    #[inline]
    pub(crate) fn slot(&self, id: PipeId) -> Option<usize> {
        self.slot_of.get(&id).copied()
    }

    /// The slot of the peer at `hint` if it is still the pipe `id`, else looked up.
    #[inline]
    pub(crate) fn find(&self, hint: usize, id: PipeId) -> Option<usize> {
        match self.peers.get(hint) {
            Some(p) if p.id == id => Some(hint),
            _ => self.slot(id),
        }
    }

    /// The slot a routing id leads to, remembered with the move count for next time: while no
    /// peer has left, the route alone gives it (the peer's own lines stay unread until the
    /// send writes to its pipe).
    #[inline]
    pub(crate) fn route(&self, route: &Route) -> Option<usize> {
        if route.moves.get() == self.moves {
            return Some(route.slot.get());
        }
        let slot = self.slot(route.id)?;
        route.slot.set(slot);
        route.moves.set(self.moves);
        Some(slot)
    }

    /// The move count now, to check a slot against later with [`PeerSet::still`].
    #[inline]
    pub(crate) fn moves(&self) -> u64 {
        self.moves
    }

    /// The slot of the pipe `id`, found at `slot` when the move count was `moves`.
    #[inline]
    pub(crate) fn still(&self, slot: usize, id: PipeId, moves: u64) -> Option<usize> {
        if moves == self.moves {
            return Some(slot);
        }
        self.find(slot, id)
    }

    pub(crate) fn get(&self, id: PipeId) -> Option<&Peer> {
        self.slot(id).map(|s| &self.peers[s])
    }

    pub(crate) fn get_mut(&mut self, id: PipeId) -> Option<&mut Peer> {
        self.slot(id).map(|s| &mut self.peers[s])
    }

    /// A wake-up named this peer: it may have a message and room again.
    pub(crate) fn activate(&mut self, id: PipeId) {
        if let Some(slot) = self.slot(id) {
            self.readers.insert(slot);
            self.writers.insert(slot);
        }
    }

    /// Every peer may have room again (its HWM grew).
    pub(crate) fn activate_all_writers(&mut self) {
        for slot in 0..self.peers.len() {
            self.writers.insert(slot);
        }
    }

    /// The peer may be read again (it became eligible: a ROUTER peer got its routing id).
    pub(crate) fn activate_reader(&mut self, id: PipeId) {
        if let Some(slot) = self.slot(id) {
            self.readers.insert(slot);
        }
    }

    /// Removes a peer in O(1); dropping it closes its pipes.
    pub(crate) fn remove(&mut self, id: PipeId) -> Option<Peer> {
        let slot = self.slot(id)?;
        Some(self.remove_slot(slot))
    }

    /// Removes the peer at `slot`: the last peer moves into it.
    pub(crate) fn remove_slot(&mut self, slot: usize) -> Peer {
        self.moves += 1;
        self.readers.remove(slot);
        self.writers.remove(slot);
        self.readers.relabel_last(slot);
        self.writers.relabel_last(slot);
        let gone = self.peers.swap_remove(slot);
        let gone_key = self.key_at.swap_remove(slot);
        self.by_key[gone_key as usize] = NONE;
        self.free_keys.push(gone_key);
        self.slot_of.remove(&gone.id);
        if let Some(moved) = self.peers.get(slot) {
            self.slot_of.insert(moved.id, slot);
            self.by_key[self.key_at[slot] as usize] = slot;
        }
        gone
    }

    /// Removes a peer whose far end closed, keeping its routing id for the owner's map.
    pub(crate) fn remove_closed(&mut self, slot: usize) {
        let gone = self.remove_slot(slot);
        if let Some(rid) = gone.routing_id.clone() {
            self.departed.push((gone.id, rid));
        }
    }

    /// Drops from `by_id` the routing ids of peers removed by [`PeerSet::remove_closed`].
    #[inline]
    pub(crate) fn forget_departed(&mut self, by_id: &mut RoutingIds) {
        if self.departed.is_empty() {
            return;
        }
        for (id, rid) in self.departed.drain(..) {
            by_id.unmap(id, &rid);
        }
    }
}

impl Index<usize> for PeerSet {
    type Output = Peer;

    #[inline]
    fn index(&self, slot: usize) -> &Peer {
        &self.peers[slot]
    }
}

impl IndexMut<usize> for PeerSet {
    #[inline]
    fn index_mut(&mut self, slot: usize) -> &mut Peer {
        &mut self.peers[slot]
    }
}

/// Pipes wired to a ready list as a socket's are, for the patterns' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;

    use crate::io::peer::{pipe_pair, Peer, PipeId, SessionPipes};
    use crate::io::ready::{PeerWake, ReadyList};
    use crate::io::signaler::Signaler;
    use crate::pattern::Pattern;

    use super::PeerSet;

    #[derive(Debug)]
    pub(crate) struct Wakes {
        ready: Arc<ReadyList>,
        signal: Arc<Signaler>,
    }

    impl Wakes {
        pub(crate) fn new() -> Wakes {
            Wakes {
                ready: ReadyList::new(),
                signal: Arc::new(Signaler::new().unwrap()),
            }
        }

        /// A peer's pipes whose socket-side wake-ups note `id`.
        pub(crate) fn pipes(
            &self,
            id: PipeId,
            out_hwm: usize,
            in_hwm: usize,
        ) -> (Peer, SessionPipes) {
            let wake = PeerWake::new(id, Arc::clone(&self.ready), Arc::clone(&self.signal));
            pipe_pair(id, wake, out_hwm, in_hwm)
        }

        /// What the socket does before each call: activate the peers that woke it.
        pub(crate) fn deliver(&self, set: &mut PeerSet) {
            let mut ids = Vec::new();
            self.ready.take(&mut ids);
            for id in ids {
                set.activate(id);
            }
        }

        pub(crate) fn deliver_to(&self, pattern: &mut dyn Pattern) {
            let mut ids = Vec::new();
            self.ready.take(&mut ids);
            for id in ids {
                pattern.activate(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Wakes;
    use super::*;
    use proptest::prelude::*;

    fn check(set: &PeerSet) {
        assert_eq!(set.slot_of.len(), set.peers.len());
        assert_eq!(set.key_at.len(), set.peers.len());
        for (slot, p) in set.peers.iter().enumerate() {
            assert_eq!(set.slot_of[&p.id], slot);
            assert_eq!(set.slot_by_key(set.key(slot)), Some(slot));
        }
        let held = set.by_key.iter().filter(|&&s| s != NONE).count();
        assert_eq!(held, set.peers.len(), "a freed key still leads somewhere");
        assert_eq!(held + set.free_keys.len(), set.by_key.len(), "a key leaked");
        for &key in &set.free_keys {
            assert_eq!(set.slot_by_key(key), None);
        }
        for active in [&set.readers, &set.writers] {
            assert_eq!(active.position.len(), set.peers.len());
            for (at, &slot) in active.members.iter().enumerate() {
                assert_eq!(active.position[slot], at);
            }
            let listed = active.position.iter().filter(|&&p| p != NONE).count();
            assert_eq!(listed, active.members.len());
            assert!(active.cursor < active.members.len().max(1));
            assert_eq!(active.current(), active.members.get(active.cursor).copied());
        }
    }

    /// A receive reads the fair queue's word, `peers`, and the readers' turn and members
    /// (their count): all in the set's first 64 bytes (issue 15).
    #[test]
    fn what_a_receive_reads_fits_the_first_line() {
        use std::mem::{offset_of, size_of};
        let readers = offset_of!(PeerSet, readers);
        assert_eq!(offset_of!(PeerSet, reading), 0);
        assert!(offset_of!(PeerSet, peers) + size_of::<Vec<Peer>>() <= 64);
        assert!(readers + offset_of!(Active, turn) + size_of::<usize>() <= 64);
        assert!(readers + offset_of!(Active, members) + size_of::<Vec<usize>>() <= 64);
    }

    proptest! {
        /// Random pushes, removals, deactivations and activations keep every index right.
        #[test]
        fn indices_stay_consistent(ops in proptest::collection::vec((0u8..5, 0u64..12), 0..200)) {
            let wakes = Wakes::new();
            let mut set = PeerSet::default();
            let mut far = Vec::new();
            let mut next = 0;
            // The key each live peer got when it joined: it must never change under it.
            let mut keys: HashMap<PipeId, PeerKey> = HashMap::new();
            for (op, k) in ops {
                let ids: Vec<PipeId> = set.iter().map(|p| p.id).collect();
                let pick = (!ids.is_empty()).then(|| ids[k as usize % ids.len()]);
                match (op, pick) {
                    (0, _) => {
                        let (p, f) = wakes.pipes(next, 0, 0);
                        next += 1;
                        let id = p.id;
                        let slot = set.push(p);
                        keys.insert(id, set.key(slot));
                        far.push(f);
                    }
                    (1, Some(id)) => {
                        prop_assert_eq!(set.remove(id).map(|p| p.id), Some(id));
                        keys.remove(&id);
                        prop_assert!(set.get(id).is_none());
                    }
                    (2, Some(id)) => {
                        let s = set.slot(id).unwrap();
                        set.readers.remove(s);
                        prop_assert!(!set.readers.contains(s));
                    }
                    (3, Some(id)) => {
                        let s = set.slot(id).unwrap();
                        set.writers.remove(s);
                        set.readers.advance();
                    }
                    (4, Some(id)) => {
                        set.activate(id);
                        let s = set.slot(id).unwrap();
                        prop_assert!(set.readers.contains(s) && set.writers.contains(s));
                    }
                    _ => {}
                }
                check(&set);
                for (id, &key) in &keys {
                    prop_assert_eq!(set.slot(*id).map(|s| set.key(s)), Some(key));
                }
            }
        }
    }
}
