//! The PUB/XPUB side's subscriptions: which peers want which prefixes, so that a message goes
//! only to the peers subscribed to one of its prefixes (libzmq's `mtrie_t`).

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use crate::radix::Radix;
use crate::subscribers::{Entry, Slot, Subscribers};

#[derive(Debug)]
struct PeerState {
    /// Distinct prefixes the peer is subscribed to; its slot is freed at 0.
    prefixes: usize,
    /// Generation of the last match that visited the peer.
    visited: Cell<u64>,
}

/// Prefix subscriptions of many peers, with counted duplicates per (prefix, peer).
///
/// A lookup walks the message's prefixes once and calls back each subscribed peer once, with
/// no allocation: when more than one prefix on the path has subscribers, peers are marked
/// with the lookup's generation number as they are visited. The marks are interior state, so
/// the trie is `Send` but not `Sync`, like the socket that owns it.
pub struct MultiTrie<P> {
    radix: Radix<Subscribers<P>>,
    slots: HashMap<P, Slot>,
    peers: Vec<PeerState>,
    free_slots: Vec<Slot>,
    generation: Cell<u64>,
}

impl<P: Copy + Eq + Hash> MultiTrie<P> {
    pub fn new() -> Self {
        Self {
            radix: Radix::new(),
            slots: HashMap::new(),
            peers: Vec::new(),
            free_slots: Vec::new(),
            generation: Cell::new(0),
        }
    }

    /// Subscribes `peer` to `prefix`; true if no peer was subscribed to it before (XPUB then
    /// forwards the subscription upstream).
    pub fn add(&mut self, prefix: &[u8], peer: P) -> bool {
        let slot = self.slot_for(peer);
        let subscribers = self.radix.entry(prefix);
        let first = subscribers.entries().is_empty();
        match subscribers.find_mut(slot) {
            Some(entry) => entry.count = entry.count.saturating_add(1),
            None => {
                subscribers.push(Entry {
                    peer,
                    slot,
                    count: 1,
                });
                self.peers[slot as usize].prefixes += 1;
            }
        }
        first
    }

    /// Drops one subscription of `peer` to `prefix`; true if the prefix has no subscriber
    /// left at all (XPUB then forwards the unsubscription). Removing what was never added is
    /// a no-op returning false.
    pub fn remove(&mut self, prefix: &[u8], peer: P) -> bool {
        let Some(&slot) = self.slots.get(&peer) else {
            return false;
        };
        let Some(subscribers) = self.radix.get_mut(prefix) else {
            return false;
        };
        let Some(entry) = subscribers.find_mut(slot) else {
            return false;
        };
        entry.count -= 1;
        if entry.count > 0 {
            return false;
        }
        subscribers.remove(slot);
        let last = subscribers.entries().is_empty();
        self.forget_prefix(peer, slot);
        if last {
            self.radix.prune(prefix);
        }
        last
    }

    /// Removes every subscription of a departed peer and reports each prefix that has no
    /// subscriber left because of it. Walks the whole trie: peers leave far more rarely than
    /// messages arrive.
    pub fn remove_peer(&mut self, peer: P, mut on_removed: impl FnMut(&[u8])) {
        let Some(&slot) = self.slots.get(&peer) else {
            return;
        };
        let emptied = self
            .radix
            .retain(|subscribers| subscribers.retain(|e| e.slot != slot));
        for prefix in &emptied {
            on_removed(prefix);
            self.radix.prune(prefix);
        }
        self.slots.remove(&peer);
        self.peers[slot as usize].prefixes = 0;
        self.free_slots.push(slot);
    }

    /// Calls `f` once for each peer subscribed to some prefix of `data`. (A lookup started
    /// from inside `f` on the same trie renews the visit marks, after which the outer lookup
    /// may call `f` for a peer a second time.)
    pub fn for_each_match(&self, data: &[u8], mut f: impl FnMut(P)) {
        // The common case is one subscribed prefix on the path: its peers are called back as
        // they are, with no de-duplication. Only a second prefix marks the first's peers.
        let mut first: Option<&Subscribers<P>> = None;
        let mut generation = None;
        self.radix.for_each_prefix(data, |subscribers| {
            let Some(earlier) = first else {
                for entry in subscribers.entries() {
                    f(entry.peer);
                }
                first = Some(subscribers);
                return true;
            };
            let generation = *generation.get_or_insert_with(|| {
                let generation = self.generation.get() + 1;
                self.generation.set(generation);
                for entry in earlier.entries() {
                    self.peers[entry.slot as usize].visited.set(generation);
                }
                generation
            });
            for entry in subscribers.entries() {
                let visited = &self.peers[entry.slot as usize].visited;
                if visited.get() != generation {
                    visited.set(generation);
                    f(entry.peer);
                }
            }
            true
        });
    }

    pub fn is_empty(&self) -> bool {
        self.radix.is_empty()
    }

    /// The peer's slot, allocating one on its first subscription.
    fn slot_for(&mut self, peer: P) -> Slot {
        if let Some(&slot) = self.slots.get(&peer) {
            return slot;
        }
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                // 2^32 peers would need far more memory than any host has.
                let slot = Slot::try_from(self.peers.len()).expect("fewer than 2^32 peers");
                self.peers.push(PeerState {
                    prefixes: 0,
                    visited: Cell::new(0),
                });
                slot
            }
        };
        self.slots.insert(peer, slot);
        slot
    }

    /// The peer dropped its last subscription to one prefix; free its slot if that was all.
    fn forget_prefix(&mut self, peer: P, slot: Slot) {
        let state = &mut self.peers[slot as usize];
        state.prefixes -= 1;
        if state.prefixes == 0 {
            self.slots.remove(&peer);
            self.free_slots.push(slot);
        }
    }
}

impl<P: Copy + Eq + Hash> Default for MultiTrie<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P> fmt::Debug for MultiTrie<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiTrie")
            .field("radix", &self.radix)
            .field("peers", &self.slots.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn matches(t: &MultiTrie<u8>, data: &[u8]) -> Vec<u8> {
        let mut peers = Vec::new();
        t.for_each_match(data, |p| peers.push(p));
        peers.sort_unstable();
        peers
    }

    #[test]
    fn first_add_and_last_remove_are_reported() {
        let mut t = MultiTrie::new();
        assert!(t.add(b"a", 1));
        assert!(!t.add(b"a", 2));
        assert!(!t.add(b"a", 1));
        assert!(!t.remove(b"a", 1));
        assert!(!t.remove(b"a", 1), "peer 2 still subscribed");
        assert!(t.remove(b"a", 2));
        assert!(!t.remove(b"a", 2));
        assert!(t.is_empty());
        assert!(t.slots.is_empty());
    }

    #[test]
    fn each_peer_is_visited_once_per_message() {
        let mut t = MultiTrie::new();
        t.add(b"", 1);
        t.add(b"a", 1);
        t.add(b"ab", 1);
        t.add(b"ab", 2);
        t.add(b"abc", 3);
        t.add(b"x", 4);
        assert_eq!(matches(&t, b"abcd"), [1, 2, 3]);
        assert_eq!(matches(&t, b"ab"), [1, 2]);
        assert_eq!(matches(&t, b"x"), [1, 4]);
        assert_eq!(matches(&t, b"q"), [1]);
        assert_eq!(
            matches(&t, b"abcd"),
            [1, 2, 3],
            "marks from the last call don't leak"
        );
    }

    #[test]
    fn remove_peer_reports_orphaned_prefixes() {
        let mut t = MultiTrie::new();
        t.add(b"a", 1);
        t.add(b"ab", 1);
        t.add(b"ab", 2);
        t.add(b"abc", 1);
        t.add(b"abc", 1);
        let mut removed = Vec::new();
        t.remove_peer(1, |p| removed.push(p.to_vec()));
        removed.sort();
        assert_eq!(removed, [b"a".to_vec(), b"abc".to_vec()]);
        assert_eq!(matches(&t, b"abcd"), [2]);
        assert_eq!(t.radix.check_invariants(), 2);
        t.remove_peer(1, |_| panic!("nothing left"));
        t.remove_peer(2, |_| {});
        assert!(t.is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(Vec<u8>, u8),
        Remove(Vec<u8>, u8),
        RemovePeer(u8),
        Match(Vec<u8>),
    }

    fn key() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..3, 0..4)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (key(), 0u8..4).prop_map(|(k, p)| Op::Add(k, p)),
            3 => (key(), 0u8..4).prop_map(|(k, p)| Op::Remove(k, p)),
            1 => (0u8..4).prop_map(Op::RemovePeer),
            3 => proptest::collection::vec(0u8..3, 0..6).prop_map(Op::Match),
        ]
    }

    proptest! {
        #[test]
        fn matches_a_naive_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut t = MultiTrie::new();
            let mut model: BTreeMap<(Vec<u8>, u8), u32> = BTreeMap::new();
            let subscribed = |m: &BTreeMap<(Vec<u8>, u8), u32>, k: &[u8]| {
                m.keys().any(|(mk, _)| mk == k)
            };
            for op in ops {
                match op {
                    Op::Add(k, p) => {
                        let first = !subscribed(&model, &k);
                        *model.entry((k.clone(), p)).or_default() += 1;
                        prop_assert_eq!(t.add(&k, p), first);
                    }
                    Op::Remove(k, p) => {
                        let mut last = false;
                        if let Some(c) = model.get_mut(&(k.clone(), p)) {
                            *c -= 1;
                            if *c == 0 {
                                model.remove(&(k.clone(), p));
                                last = !subscribed(&model, &k);
                            }
                        }
                        prop_assert_eq!(t.remove(&k, p), last);
                    }
                    Op::RemovePeer(p) => {
                        let mine: Vec<Vec<u8>> = model.keys().filter(|(_, mp)| *mp == p).map(|(k, _)| k.clone()).collect();
                        model.retain(|(_, mp), _| *mp != p);
                        let expected: BTreeSet<Vec<u8>> = mine.into_iter().filter(|k| !subscribed(&model, k)).collect();
                        let mut reported = Vec::new();
                        t.remove_peer(p, |k| reported.push(k.to_vec()));
                        let reported_set: BTreeSet<Vec<u8>> = reported.iter().cloned().collect();
                        prop_assert_eq!(reported.len(), reported_set.len(), "prefix reported twice");
                        prop_assert_eq!(reported_set, expected);
                    }
                    Op::Match(data) => {
                        let expected: BTreeSet<u8> = model.keys().filter(|(k, _)| data.starts_with(k)).map(|(_, p)| *p).collect();
                        let got = matches(&t, &data);
                        let got_set: BTreeSet<u8> = got.iter().copied().collect();
                        prop_assert_eq!(got.len(), got_set.len(), "peer visited twice");
                        prop_assert_eq!(got_set, expected);
                    }
                }
                t.radix.check_invariants();
                prop_assert_eq!(t.is_empty(), model.is_empty());
                let peers: BTreeSet<u8> = model.keys().map(|(_, p)| *p).collect();
                prop_assert_eq!(t.slots.len(), peers.len());
            }
        }
    }
}
