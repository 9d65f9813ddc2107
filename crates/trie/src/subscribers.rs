//! The peers subscribed to one prefix, counted. Most prefixes have a single subscriber, so
//! that one is stored inside the trie node and a lookup follows no further pointer.

use crate::radix::Value;

/// Index of a peer in the multi-trie's peer table, kept next to the peer for de-duplication.
pub(crate) type Slot = u32;

/// One peer's subscription to a prefix, with how many times it subscribed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<P> {
    pub(crate) peer: P,
    pub(crate) slot: Slot,
    pub(crate) count: u32,
}

#[derive(Debug, Default)]
pub(crate) enum Subscribers<P> {
    #[default]
    None,
    One(Entry<P>),
    Many(Vec<Entry<P>>),
}

impl<P> Value for Subscribers<P> {
    fn is_empty(&self) -> bool {
        matches!(self, Subscribers::None)
    }
}

impl<P: Copy> Subscribers<P> {
    #[inline]
    pub(crate) fn entries(&self) -> &[Entry<P>] {
        match self {
            Subscribers::None => &[],
            Subscribers::One(entry) => std::slice::from_ref(entry),
            Subscribers::Many(entries) => entries,
        }
    }

    pub(crate) fn find_mut(&mut self, slot: Slot) -> Option<&mut Entry<P>> {
        let entries = match self {
            Subscribers::None => return None,
            Subscribers::One(entry) => std::slice::from_mut(entry),
            Subscribers::Many(entries) => entries.as_mut_slice(),
        };
        entries.iter_mut().find(|e| e.slot == slot)
    }

    pub(crate) fn push(&mut self, entry: Entry<P>) {
        *self = match std::mem::take(self) {
            Subscribers::None => Subscribers::One(entry),
            Subscribers::One(first) => Subscribers::Many(vec![first, entry]),
            Subscribers::Many(mut entries) => {
                entries.push(entry);
                Subscribers::Many(entries)
            }
        };
    }

    /// Drops the peer's entry whatever its count; true if it was there.
    pub(crate) fn remove(&mut self, slot: Slot) -> bool {
        let before = self.entries().len();
        self.retain(|e| e.slot != slot);
        self.entries().len() != before
    }

    pub(crate) fn retain(&mut self, keep: impl FnMut(&Entry<P>) -> bool) {
        let mut entries = match std::mem::take(self) {
            Subscribers::None => return,
            Subscribers::One(entry) => vec![entry],
            Subscribers::Many(entries) => entries,
        };
        entries.retain(keep);
        *self = match entries.len() {
            0 => Subscribers::None,
            1 => Subscribers::One(entries[0]),
            _ => Subscribers::Many(entries),
        };
    }
}
