//! The SUB side's subscriptions: counted prefixes, matched against each incoming message
//! (libzmq's `trie_t`).

use std::fmt;

use crate::radix::{Radix, Value};

/// How many times a prefix was subscribed; 0 = not subscribed.
#[derive(Debug, Default, Clone, Copy)]
struct Count(u32);

impl Value for Count {
    fn is_empty(&self) -> bool {
        self.0 == 0
    }
}

/// Prefix subscriptions with counted duplicates: subscribing twice needs two unsubscribes,
/// and only the first subscribe and the last unsubscribe change what matches (and so are the
/// ones worth telling the publisher about).
pub struct SubscriptionTrie {
    radix: Radix<Count>,
}

impl SubscriptionTrie {
    pub fn new() -> Self {
        Self {
            radix: Radix::new(),
        }
    }

    /// Subscribes to `prefix`; true if it was not subscribed before (count went 0 -> 1).
    pub fn add(&mut self, prefix: &[u8]) -> bool {
        let count = self.radix.entry(prefix);
        // Saturating: a prefix subscribed 2^32 times stays subscribed for good rather than
        // wrapping to "not subscribed".
        count.0 = count.0.saturating_add(1);
        count.0 == 1
    }

    /// Drops one subscription to `prefix`; true if that was the last one (count reached 0).
    /// Unsubscribing from something never subscribed is a no-op returning false.
    pub fn remove(&mut self, prefix: &[u8]) -> bool {
        let Some(count) = self.radix.get_mut(prefix) else {
            return false;
        };
        if count.0 == 0 {
            return false;
        }
        count.0 -= 1;
        if count.0 > 0 {
            return false;
        }
        self.radix.prune(prefix);
        true
    }

    /// Whether some subscribed prefix starts `data` (the empty subscription matches all).
    pub fn matches(&self, data: &[u8]) -> bool {
        let mut hit = false;
        self.radix.for_each_prefix(data, |_| {
            hit = true;
            false
        });
        hit
    }

    pub fn is_empty(&self) -> bool {
        self.radix.is_empty()
    }

    /// The subscribed prefixes, each once whatever its count, in byte order (to resend the
    /// subscriptions on reconnect).
    pub fn iter(&self) -> impl Iterator<Item = Vec<u8>> {
        let mut prefixes = Vec::new();
        self.radix.for_each(|key, _| prefixes.push(key.to_vec()));
        prefixes.into_iter()
    }
}

impl Default for SubscriptionTrie {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SubscriptionTrie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn counted_duplicates() {
        let mut t = SubscriptionTrie::new();
        assert!(t.is_empty());
        assert!(t.add(b"topic"));
        assert!(!t.add(b"topic"));
        assert!(t.matches(b"topic/1"));
        assert!(!t.remove(b"topic"));
        assert!(t.matches(b"topic/1"));
        assert!(t.remove(b"topic"));
        assert!(!t.matches(b"topic/1"));
        assert!(!t.remove(b"topic"), "unsubscribing again is a no-op");
        assert!(t.is_empty());
        assert_eq!(t.radix.check_invariants(), 1);
    }

    #[test]
    fn prefix_semantics() {
        let mut t = SubscriptionTrie::new();
        t.add(b"abc");
        assert!(t.matches(b"abc"));
        assert!(t.matches(b"abcdef"));
        assert!(!t.matches(b"ab"));
        assert!(!t.matches(b"abd"));
        assert!(!t.matches(b""));
        assert!(
            !t.remove(b"ab"),
            "a prefix of a subscription is not subscribed"
        );
        assert!(!t.remove(b"abcd"));
        t.add(b"");
        assert!(t.matches(b""));
        assert!(t.matches(b"zzz"));
    }

    #[test]
    fn splitting_and_folding_keep_the_trie_compact() {
        let mut t = SubscriptionTrie::new();
        for key in [&b"abcdef"[..], b"abcxyz", b"abc", b"ab", b"abcdeg"] {
            assert!(t.add(key));
        }
        t.radix.check_invariants();
        for key in [&b"abc"[..], b"abcxyz", b"ab"] {
            assert!(t.remove(key));
            t.radix.check_invariants();
        }
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            [b"abcdef".to_vec(), b"abcdeg".to_vec()]
        );
        // root, "abcde" (split point), "f", "g"
        assert_eq!(t.radix.check_invariants(), 4);
    }

    #[test]
    fn dense_nodes_convert_both_ways() {
        let mut t = SubscriptionTrie::new();
        for b in 0..=255u8 {
            t.add(&[b, 1]);
        }
        t.radix.check_invariants();
        assert!(t.matches(&[200, 1, 9]));
        assert!(!t.matches(&[200, 2]));
        for b in 0..=250u8 {
            t.remove(&[b, 1]);
        }
        t.radix.check_invariants();
        assert!(t.matches(&[255, 1]));
        assert_eq!(t.iter().count(), 5);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let mut t = SubscriptionTrie::new();
        let long = vec![b'a'; 3000];
        for len in 0..long.len() {
            t.add(&long[..len]);
        }
        assert_eq!(t.iter().count(), long.len());
        drop(t);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(Vec<u8>),
        Remove(Vec<u8>),
        Match(Vec<u8>),
    }

    /// Mostly a tiny alphabet (deep sharing, splits and folds), sometimes any byte (wide
    /// nodes that turn dense and back).
    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            3 => proptest::collection::vec(0u8..3, 0..5),
            2 => proptest::collection::vec(any::<u8>(), 1..3),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => key().prop_map(Op::Add),
            2 => key().prop_map(Op::Remove),
            2 => key().prop_map(Op::Match),
        ]
    }

    proptest! {
        #[test]
        fn matches_a_naive_model(ops in proptest::collection::vec(op(), 0..400)) {
            let mut t = SubscriptionTrie::new();
            let mut model: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Add(k) => {
                        let c = model.entry(k.clone()).or_default();
                        *c += 1;
                        prop_assert_eq!(t.add(&k), *c == 1);
                    }
                    Op::Remove(k) => {
                        let expected = match model.get_mut(&k) {
                            Some(c) => {
                                *c -= 1;
                                *c == 0
                            }
                            None => false,
                        };
                        if expected {
                            model.remove(&k);
                        }
                        prop_assert_eq!(t.remove(&k), expected);
                    }
                    Op::Match(data) => {
                        let expected = model.keys().any(|k| data.starts_with(k));
                        prop_assert_eq!(t.matches(&data), expected);
                    }
                }
                t.radix.check_invariants();
                prop_assert_eq!(t.is_empty(), model.is_empty());
                prop_assert_eq!(t.iter().collect::<Vec<_>>(), model.keys().cloned().collect::<Vec<_>>());
            }
        }
    }
}
