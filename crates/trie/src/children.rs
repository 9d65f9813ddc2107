//! A trie node's child links, keyed by the first byte of each child's label, in the shape
//! that suits the node's width: none (leaves, most nodes), a short table indexed by the byte
//! when the keys lie close together, a small sorted array searched without branches, or a
//! 256-slot table.

/// Index of a node in the trie's arena.
pub(crate) type NodeId = u32;

/// An empty slot; never a node's id (the arena stops short of it), so a walk can hand it
/// to the arena's bounds check instead of testing for it.
pub(crate) const NO_CHILD: NodeId = NodeId::MAX;

/// Most children a sparse node holds before it turns dense; back to sparse below
/// `SPARSE_BELOW`, and the gap keeps a node hovering at the limit from converting each time.
/// Sixteen keys are one vector compare; past that a direct index measured faster (10k random
/// topics: a miss 14 -> 10 ns, a hit 27 -> 23 ns) for 1 KiB per wide node.
const SPARSE_MAX: usize = 16;
const SPARSE_BELOW: usize = 8;

/// Pads the unused key slots: no byte is below it, so padding never counts in a search.
const PAD: u8 = u8::MAX;

/// Span of bytes a `Range` node covers: an aligned block of sixteen (digits `0x30..=0x3F`).
const RANGE: usize = 16;
const RANGE_MASK: u8 = RANGE as u8 - 1;

pub(crate) enum Children {
    None,
    /// Every key in the aligned block `base..base + RANGE` (`base` a multiple of RANGE): the
    /// child of `byte` is `ids[byte % RANGE]`, as libzmq's mtrie indexes its table
    /// (`next.table[c - min]`). The slot follows from the byte alone, so the table's pointer
    /// and the id are the only loads of a step; whether `byte` is in the block is a compare
    /// beside them. With an unaligned base the slot waited on loading the base first (issue
    /// 15: `t00000`..`t00999` branch at three digits, a step of the walk each).
    Range {
        base: u8,
        len: u8,
        ids: Box<[NodeId; RANGE]>,
    },
    Sparse(Box<Sparse>),
    Dense(Box<Dense>),
}

/// Keys sorted, then padding; ids parallel to the keys. Keys and ids share one allocation,
/// so a lookup follows one pointer.
pub(crate) struct Sparse {
    keys: [u8; SPARSE_MAX],
    len: u8,
    ids: [NodeId; SPARSE_MAX],
}

pub(crate) struct Dense {
    ids: [NodeId; 256],
    len: u16,
    /// Stays dense whatever its count (the root's table, see [`Children::index`]).
    pinned: bool,
}

impl Sparse {
    fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Where `byte` is or would go. Counting the smaller keys over the fixed-size array
    /// compiles to a few vector compares; a binary search over a few dozen random keys
    /// would mispredict at nearly every step.
    #[inline]
    fn lower_bound(&self, byte: u8) -> usize {
        let mut below = 0u8;
        for &key in &self.keys {
            below += u8::from(key < byte);
        }
        usize::from(below)
    }

    /// The child of `byte`, or `NO_CHILD`. Out of line: inlined into a match walk, the search's
    /// three 64-bit constants took registers that the walk's own state then spilled to the
    /// stack, the current node among it, putting a store and a reload on every step's chain
    /// of loads (issue 15); a walk through `Range` and `Dense` nodes now keeps its state in
    /// registers, and a sparse step pays a call.
    #[inline(never)]
    fn child(&self, byte: u8) -> NodeId {
        self.position(byte).map_or(NO_CHILD, |at| self.ids[at])
    }

    /// Where `byte` is, found as a zero byte in `keys ^ byte`, eight keys at a time taken as
    /// one `u64` (the "has a zero byte" bit trick): a few instructions and no branch per key,
    /// where counting the smaller keys took about forty (issue 15: a PUB's topics that branch
    /// at every digit pay this at each node of their path). The lowest flagged byte of a word
    /// is exact (a false flag can only sit above a true one) and keys are unique, so it is the
    /// match; padding can equal `byte` only at or past `len`.
    #[inline]
    fn position(&self, byte: u8) -> Option<usize> {
        const ONES: u64 = u64::MAX / 255;
        const HIGHS: u64 = ONES << 7;
        let pattern = ONES * u64::from(byte);
        let zero_bytes = |keys: &[u8]| {
            let mut word = [PAD; 8];
            word.copy_from_slice(keys);
            let x = u64::from_le_bytes(word) ^ pattern;
            x.wrapping_sub(ONES) & !x & HIGHS
        };
        let (low_keys, high_keys) = self.keys.split_at(8);
        let low = zero_bytes(low_keys);
        let at = if low != 0 {
            (low.trailing_zeros() / 8) as usize
        } else {
            8 + (zero_bytes(high_keys).trailing_zeros() / 8) as usize
        };
        (at < self.len()).then_some(at)
    }
}

impl Children {
    /// A 256-slot table that stays one when keys leave: the root's, a first-byte index.
    /// Every message starts its walk there, and with two or three first bytes spread wider
    /// than a `Range` (`a` and `t`, say) a `Sparse` root cost each message a key search and
    /// one more dependent load; 1 KiB per trie buys a single load (issue 15).
    pub(crate) fn index() -> Self {
        Children::Dense(Box::new(Dense {
            ids: [NO_CHILD; 256],
            len: 0,
            pinned: true,
        }))
    }

    #[inline]
    pub(crate) fn get(&self, byte: u8) -> Option<NodeId> {
        let id = self.child(byte);
        (id != NO_CHILD).then_some(id)
    }

    /// The child of `byte`, or `NO_CHILD`: the match walk's form, a value and no flag.
    #[inline]
    pub(crate) fn child(&self, byte: u8) -> NodeId {
        match self {
            Children::Range { base, ids, .. } => {
                if byte & !RANGE_MASK == *base {
                    ids[usize::from(byte & RANGE_MASK)]
                } else {
                    NO_CHILD
                }
            }
            Children::None => NO_CHILD,
            Children::Sparse(sparse) => sparse.child(byte),
            Children::Dense(dense) => dense.ids[usize::from(byte)],
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Children::None => 0,
            Children::Range { len, .. } => usize::from(*len),
            Children::Sparse(sparse) => sparse.len(),
            Children::Dense(dense) => usize::from(dense.len),
        }
    }

    /// Adds or replaces the child for `byte`.
    pub(crate) fn set(&mut self, byte: u8, id: NodeId) {
        match self {
            Children::None => {
                let mut ids = Box::new([NO_CHILD; RANGE]);
                ids[usize::from(byte & RANGE_MASK)] = id;
                *self = Children::Range {
                    base: byte & !RANGE_MASK,
                    len: 1,
                    ids,
                };
            }
            Children::Range { base, len, ids } => {
                if byte & !RANGE_MASK == *base {
                    let slot = &mut ids[usize::from(byte & RANGE_MASK)];
                    if *slot == NO_CHILD {
                        *len += 1;
                    }
                    *slot = id;
                    return;
                }
                // Too far apart for one table: the keys go to a sorted array (or a full table).
                let pairs: Vec<(u8, NodeId)> = self.pairs();
                *self = Children::None;
                for (key, child) in pairs {
                    self.set_spread(key, child);
                }
                self.set_spread(byte, id);
            }
            _ => self.set_spread(byte, id),
        }
    }

    /// `set` for the shapes that hold keys of any spread (`None` becomes `Sparse`).
    fn set_spread(&mut self, byte: u8, id: NodeId) {
        match self {
            Children::None => {
                let mut sparse = Box::new(Sparse {
                    keys: [PAD; SPARSE_MAX],
                    len: 1,
                    ids: [NO_CHILD; SPARSE_MAX],
                });
                sparse.keys[0] = byte;
                sparse.ids[0] = id;
                *self = Children::Sparse(sparse);
            }
            Children::Range { .. } => unreachable!("set_spread on a Range node"),
            Children::Sparse(sparse) => {
                let at = sparse.lower_bound(byte);
                let len = sparse.len();
                if at < len && sparse.keys[at] == byte {
                    sparse.ids[at] = id;
                } else if len < SPARSE_MAX {
                    sparse.keys.copy_within(at..len, at + 1);
                    sparse.ids.copy_within(at..len, at + 1);
                    sparse.keys[at] = byte;
                    sparse.ids[at] = id;
                    sparse.len += 1;
                } else {
                    let mut dense = Box::new(Dense {
                        ids: [NO_CHILD; 256],
                        len: 0,
                        pinned: false,
                    });
                    for (&key, &child) in sparse.keys[..len].iter().zip(&sparse.ids[..len]) {
                        dense.ids[usize::from(key)] = child;
                    }
                    dense.len = len as u16;
                    *self = Children::Dense(dense);
                    self.set_spread(byte, id);
                }
            }
            Children::Dense(dense) => {
                let slot = &mut dense.ids[usize::from(byte)];
                if *slot == NO_CHILD {
                    dense.len += 1;
                }
                *slot = id;
            }
        }
    }

    pub(crate) fn remove(&mut self, byte: u8) {
        match self {
            Children::None => {}
            Children::Range { base, len, ids } => {
                let slot = &mut ids[usize::from(byte & RANGE_MASK)];
                if byte & !RANGE_MASK == *base && *slot != NO_CHILD {
                    *slot = NO_CHILD;
                    *len -= 1;
                    if *len == 0 {
                        *self = Children::None;
                    }
                }
            }
            Children::Sparse(sparse) => {
                let Some(at) = sparse.position(byte) else {
                    return;
                };
                let len = sparse.len();
                sparse.keys.copy_within(at + 1..len, at);
                sparse.ids.copy_within(at + 1..len, at);
                sparse.keys[len - 1] = PAD;
                sparse.ids[len - 1] = NO_CHILD;
                sparse.len -= 1;
                if sparse.len == 0 {
                    *self = Children::None;
                }
            }
            Children::Dense(dense) => {
                let slot = &mut dense.ids[usize::from(byte)];
                if *slot == NO_CHILD {
                    return;
                }
                *slot = NO_CHILD;
                dense.len -= 1;
                if !dense.pinned && usize::from(dense.len) < SPARSE_BELOW {
                    let mut sparse = Box::new(Sparse {
                        keys: [PAD; SPARSE_MAX],
                        len: 0,
                        ids: [NO_CHILD; SPARSE_MAX],
                    });
                    for key in 0..=255u8 {
                        let child = dense.ids[usize::from(key)];
                        if child != NO_CHILD {
                            let at = sparse.len();
                            sparse.keys[at] = key;
                            sparse.ids[at] = child;
                            sparse.len += 1;
                        }
                    }
                    *self = Children::Sparse(sparse);
                }
            }
        }
    }

    /// The only child, when there is exactly one.
    pub(crate) fn single(&self) -> Option<NodeId> {
        match self {
            Children::Range { len: 1, ids, .. } => ids.iter().copied().find(|&i| i != NO_CHILD),
            Children::Sparse(sparse) if sparse.len == 1 => Some(sparse.ids[0]),
            _ => None,
        }
    }

    /// (key, child) in key order.
    fn pairs(&self) -> Vec<(u8, NodeId)> {
        match self {
            Children::Range { base, ids, .. } => ids
                .iter()
                .enumerate()
                .filter(|&(_, &i)| i != NO_CHILD)
                .map(|(at, &i)| (base | at as u8, i))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Child ids in key order.
    pub(crate) fn ids(&self) -> Vec<NodeId> {
        match self {
            Children::None => Vec::new(),
            Children::Range { ids, .. } => ids.iter().copied().filter(|&i| i != NO_CHILD).collect(),
            Children::Sparse(sparse) => sparse.ids[..sparse.len()].to_vec(),
            Children::Dense(dense) => dense
                .ids
                .iter()
                .copied()
                .filter(|&i| i != NO_CHILD)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_dense_and_shrinks_back_keeping_every_child() {
        let mut children = Children::None;
        let keys: Vec<u8> = (0..=255u8).rev().step_by(3).collect();
        for (i, &key) in keys.iter().enumerate() {
            children.set(key, i as NodeId);
            assert_eq!(children.len(), i + 1);
        }
        assert!(matches!(children, Children::Dense(_)));
        for (i, &key) in keys.iter().enumerate() {
            assert_eq!(children.get(key), Some(i as NodeId));
        }
        for byte in (0..=255u8).filter(|b| !keys.contains(b)) {
            assert_eq!(children.get(byte), None);
        }
        for &key in &keys[..keys.len() - 1] {
            children.remove(key);
        }
        assert_eq!(children.single(), Some(keys.len() as NodeId - 1));
        children.remove(keys[keys.len() - 1]);
        assert!(matches!(children, Children::None));
    }

    #[test]
    fn sparse_lookup_finds_exactly_the_keys() {
        // Sets of up to SPARSE_MAX keys, including neighbours (a false flag of the bit trick
        // sits one byte above a true match) and the ends 0 and 255: every byte is looked up.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..400 {
            let mut children = Children::None;
            let mut keys = Vec::new();
            let want = 1 + round % SPARSE_MAX;
            // Even rounds: random keys. Odd rounds: a run of consecutive keys (wrapping from
            // 255 to 0) from one of the awkward starts.
            let start = [0u8, 1, 127, 128, 240, 250, 255][round % 7];
            while keys.len() < want {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let key = if round % 2 == 0 {
                    (seed >> 8) as u8
                } else {
                    start.wrapping_add(keys.len() as u8)
                };
                if !keys.contains(&key) {
                    children.set(key, NodeId::from(key) + 1000);
                    keys.push(key);
                }
            }
            assert!(matches!(
                children,
                Children::Sparse(_) | Children::Range { .. }
            ));
            for byte in 0..=255u8 {
                let expect = keys.contains(&byte).then(|| NodeId::from(byte) + 1000);
                assert_eq!(children.get(byte), expect, "byte {byte} in {keys:?}");
            }
        }
    }

    /// Every byte looked up in `children` against the model `keys` (byte -> id).
    fn agrees(children: &Children, keys: &std::collections::BTreeMap<u8, NodeId>) {
        for byte in 0..=255u8 {
            assert_eq!(children.get(byte), keys.get(&byte).copied(), "byte {byte}");
        }
        assert_eq!(children.len(), keys.len());
        assert_eq!(children.ids(), keys.values().copied().collect::<Vec<_>>());
    }

    #[test]
    fn range_takes_its_block_in_any_order_and_spreads_out_when_keys_leave_it() {
        let mut keys = std::collections::BTreeMap::new();
        let mut children = Children::None;
        // Digits in any order: one table, the block 0x30..=0x3F.
        for (n, digit) in b"5739018246".iter().enumerate() {
            children.set(*digit, n as NodeId);
            keys.insert(*digit, n as NodeId);
            assert!(matches!(children, Children::Range { .. }));
            agrees(&children, &keys);
        }
        // A key RANGE above '0' is in the next block: the keys spread out.
        children.set(b'0' + RANGE as u8, 100);
        keys.insert(b'0' + RANGE as u8, 100);
        assert!(matches!(children, Children::Sparse(_)));
        agrees(&children, &keys);
        for digit in b"0123456789" {
            children.remove(*digit);
            keys.remove(digit);
            agrees(&children, &keys);
        }
        assert_eq!(children.single(), Some(100));
    }

    #[test]
    fn range_near_255_never_wraps_to_low_bytes() {
        let mut keys = std::collections::BTreeMap::new();
        let mut children = Children::None;
        for (n, byte) in [250u8, 255, 245, 241].into_iter().enumerate() {
            children.set(byte, n as NodeId);
            keys.insert(byte, n as NodeId);
            assert!(matches!(children, Children::Range { .. }));
            agrees(&children, &keys);
        }
        // Byte 3 has the slot of 243 but not its block: not found, not removed.
        children.remove(3);
        agrees(&children, &keys);
        // A low byte cannot join the table: it spreads out, every key kept.
        children.set(2, 9);
        keys.insert(2, 9);
        assert!(matches!(children, Children::Sparse(_)));
        agrees(&children, &keys);
        for byte in [250u8, 255, 245, 241, 2] {
            children.remove(byte);
            keys.remove(&byte);
            agrees(&children, &keys);
        }
        assert!(matches!(children, Children::None));
    }

    #[test]
    fn the_index_stays_dense_when_keys_leave() {
        let mut keys = std::collections::BTreeMap::new();
        let mut children = Children::index();
        for (n, byte) in [b'a', b't', 0, 255].into_iter().enumerate() {
            children.set(byte, n as NodeId);
            keys.insert(byte, n as NodeId);
            agrees(&children, &keys);
        }
        for byte in [b'a', 0, 255, b't'] {
            children.remove(byte);
            keys.remove(&byte);
            assert!(matches!(children, Children::Dense(_)));
            agrees(&children, &keys);
        }
        assert_eq!(children.single(), None);
    }

    #[test]
    fn range_single_and_empty() {
        let mut children = Children::None;
        children.set(b'x', 4);
        assert_eq!(children.single(), Some(4));
        children.set(b'y', 5);
        assert_eq!(children.single(), None);
        children.remove(b'x');
        assert_eq!(children.single(), Some(5));
        children.remove(b'y');
        assert!(matches!(children, Children::None));
    }

    #[test]
    fn padding_never_matches_byte_255() {
        let mut children = Children::None;
        children.set(1, 7);
        assert_eq!(children.get(PAD), None);
        children.set(PAD, 9);
        assert_eq!(children.get(PAD), Some(9));
        assert_eq!(children.ids(), [7, 9]);
    }
}
