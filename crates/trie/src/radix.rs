//! A path-compressed prefix trie over byte strings, generic over what a node stores. Both
//! subscription tries are this structure with a different value per node.
//!
//! ```text
//!   root ""            a node's label is the bytes from its parent to it; a chain with no
//!    ├─ "abc" (v)      value and one child is folded into its child, so a 20-byte topic
//!    │   └─ "de" (v)   costs one node, not twenty
//!    └─ "x" ─┬─ "y" (v)
//!            └─ "z" (v)
//! ```
//!
//! Nodes live in one arena and name their children by index (no pointer per node), short
//! labels sit inside the node, and dropping a deep trie recurses nowhere.

use std::fmt;

use crate::children::{Children, NodeId, NO_CHILD};
use crate::label::Label;

/// What a node holds; the default value means "nothing subscribed here".
pub(crate) trait Value: Default {
    fn is_empty(&self) -> bool;
}

const ROOT: NodeId = 0;

/// 64 bytes. A `Range` table inside it (16 ids) took it to 120, and with 10,000 random topics
/// the larger arena made hits 5-10% slower (`benches/benches/trie.rs`), for about 1 ns a step
/// on the digit topics of issue 15; the table stays boxed.
struct Node<V> {
    /// Bytes from the parent to this node; empty only for the root.
    label: Label,
    value: V,
    children: Children,
}

impl<V: Value> Node<V> {
    fn new(label: &[u8]) -> Self {
        Self {
            label: Label::new(label),
            value: V::default(),
            children: Children::None,
        }
    }
}

/// The trie. Invariant: every node but the root has a value or at least two children.
pub(crate) struct Radix<V> {
    nodes: Vec<Node<V>>,
    free: Vec<NodeId>,
}

impl<V: Value> Radix<V> {
    pub(crate) fn new() -> Self {
        let root = Node {
            children: Children::index(),
            ..Node::new(&[])
        };
        Self {
            nodes: vec![root],
            free: Vec::new(),
        }
    }

    fn node(&self, id: NodeId) -> &Node<V> {
        &self.nodes[id as usize]
    }

    fn node_mut(&mut self, id: NodeId) -> &mut Node<V> {
        &mut self.nodes[id as usize]
    }

    fn alloc(&mut self, node: Node<V>) -> NodeId {
        if let Some(id) = self.free.pop() {
            self.nodes[id as usize] = node;
            return id;
        }
        // 2^32 nodes would take hundreds of GiB: the allocator gives out long before.
        let id = NodeId::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id != NO_CHILD)
            .expect("fewer than 2^32 - 1 trie nodes");
        self.nodes.push(node);
        id
    }

    fn release(&mut self, id: NodeId) {
        // Drop the label, value and child list now; the slot is reused by the next alloc.
        self.nodes[id as usize] = Node::new(&[]);
        self.free.push(id);
    }

    /// Whether no node holds a value (the root is then alone).
    pub(crate) fn is_empty(&self) -> bool {
        self.node(ROOT).value.is_empty() && self.node(ROOT).children.len() == 0
    }

    /// The value at exactly `key`, if that node exists.
    pub(crate) fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let mut id = ROOT;
        let mut rest = key;
        while let Some(&first) = rest.first() {
            let child = self.node(id).children.get(first)?;
            let label: &[u8] = &self.node(child).label;
            if !continues_with(rest, label) {
                return None;
            }
            rest = &rest[label.len()..];
            id = child;
        }
        Some(&mut self.node_mut(id).value)
    }

    /// The value at exactly `key`, creating the node (and splitting a label) if needed.
    pub(crate) fn entry(&mut self, key: &[u8]) -> &mut V {
        let mut id = ROOT;
        let mut rest = key;
        while let Some(&first) = rest.first() {
            let Some(child) = self.node(id).children.get(first) else {
                let leaf = self.alloc(Node::new(rest));
                self.node_mut(id).children.set(first, leaf);
                return &mut self.node_mut(leaf).value;
            };
            let label: &[u8] = &self.node(child).label;
            let common = label.iter().zip(rest).take_while(|(a, b)| a == b).count();
            if common == label.len() {
                rest = &rest[common..];
                id = child;
                continue;
            }
            // Split the child's label: a new node takes the common part and the child keeps
            // the remainder below it.
            let remainder = Label::new(&label[common..]);
            let split = self.alloc(Node::new(&rest[..common]));
            let remainder_first = remainder[0];
            self.node_mut(child).label = remainder;
            self.node_mut(split).children.set(remainder_first, child);
            self.node_mut(id).children.set(first, split);
            rest = &rest[common..];
            id = split;
        }
        &mut self.node_mut(id).value
    }

    /// Restores the compactness invariant after the value at `key` became empty: removes the
    /// node if it is a leaf, folds it into its only child, and tidies its parent the same way.
    pub(crate) fn prune(&mut self, key: &[u8]) {
        // (node, first byte of its label) from the root down to the node at `key`.
        let mut path: Vec<(NodeId, u8)> = Vec::new();
        let mut id = ROOT;
        let mut rest = key;
        while let Some(&first) = rest.first() {
            let Some(child) = self.node(id).children.get(first) else {
                return;
            };
            let label: &[u8] = &self.node(child).label;
            if !continues_with(rest, label) {
                return;
            }
            rest = &rest[label.len()..];
            path.push((child, first));
            id = child;
        }
        let Some(&(target, target_key)) = path.last() else {
            return; // the root always stays
        };
        if !self.node(target).value.is_empty() {
            return;
        }
        let parent = path.len().checked_sub(2).map_or(ROOT, |i| path[i].0);
        match self.node(target).children.len() {
            0 => {
                self.node_mut(parent).children.remove(target_key);
                self.release(target);
                if parent != ROOT {
                    self.fold_into_child(parent);
                }
            }
            1 => self.fold_into_child(target),
            _ => {}
        }
    }

    /// A valueless node with a single child absorbs it (labels concatenated), keeping its
    /// own id so that its parent's link stays valid.
    fn fold_into_child(&mut self, id: NodeId) {
        let node = self.node(id);
        if !node.value.is_empty() {
            return;
        }
        let Some(child) = node.children.single() else {
            return;
        };
        let absorbed = std::mem::replace(self.node_mut(child), Node::new(&[]));
        self.free.push(child);
        let node = self.node_mut(id);
        node.label = node.label.concat(&absorbed.label);
        node.value = absorbed.value;
        node.children = absorbed.children;
    }

    /// Calls `f` with the value of each node whose key is a prefix of `data`, shortest first,
    /// until `f` returns false. One loop whose state stays in registers: every message a PUB
    /// sends walks it, once per node on the path (issue 15: topics that branch at every digit
    /// make that path one node longer per decade of subscribers). A step is the child's id
    /// (`NO_CHILD` when there is none, which the arena's bounds check turns away), the child,
    /// and for a label longer than the byte that found it, a compare.
    #[inline]
    pub(crate) fn for_each_prefix<'a>(&'a self, data: &[u8], mut f: impl FnMut(&'a V) -> bool) {
        let nodes = &self.nodes[..];
        let Some(mut node) = nodes.get(ROOT as usize) else {
            return;
        };
        let mut rest = data;
        loop {
            if !node.value.is_empty() && !f(&node.value) {
                return;
            }
            let Some((&first, tail)) = rest.split_first() else {
                return;
            };
            let Some(child) = nodes.get(node.children.child(first) as usize) else {
                return;
            };
            // The child was found by its label's first byte; the rest must follow in `data`.
            // Labels are short (one byte near the root), so a byte loop beats a memcmp call.
            if child.label.len() <= 1 {
                rest = tail;
            } else {
                let label = child.label.get(1..).unwrap_or_default();
                match tail.split_at_checked(label.len()) {
                    Some((head, after)) if head.iter().zip(label).all(|(a, b)| a == b) => {
                        rest = after;
                    }
                    _ => return,
                }
            }
            node = child;
        }
    }

    /// Visits every node with a value, in key order, with its full key. The walk keeps its
    /// own stack: a chain of nested subscriptions must not overflow the call stack.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&[u8], &V)) {
        let mut key = Vec::new();
        // (node, key length before its label)
        let mut stack = vec![(ROOT, 0usize)];
        while let Some((id, depth)) = stack.pop() {
            let node = self.node(id);
            key.truncate(depth);
            key.extend_from_slice(&node.label);
            if !node.value.is_empty() {
                f(&key, &node.value);
            }
            let depth = key.len();
            stack.extend(node.children.ids().into_iter().rev().map(|c| (c, depth)));
        }
    }

    /// Mutable walk: `f` may empty values; the keys of the nodes it emptied are returned so
    /// the caller can report and prune them.
    pub(crate) fn retain(&mut self, mut f: impl FnMut(&mut V)) -> Vec<Vec<u8>> {
        let mut emptied = Vec::new();
        let mut key = Vec::new();
        let mut stack = vec![(ROOT, 0usize)];
        while let Some((id, depth)) = stack.pop() {
            key.truncate(depth);
            let node = self.node_mut(id);
            key.extend_from_slice(&node.label);
            if !node.value.is_empty() {
                f(&mut node.value);
                if node.value.is_empty() {
                    emptied.push(key.clone());
                }
            }
            let depth = key.len();
            let children = self.node(id).children.ids();
            stack.extend(children.into_iter().rev().map(|c| (c, depth)));
        }
        emptied
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) -> usize {
        let mut live = 0;
        let mut stack = vec![ROOT];
        while let Some(id) = stack.pop() {
            live += 1;
            let node = self.node(id);
            if id != ROOT {
                assert!(!node.label.is_empty(), "empty label below the root");
                assert!(
                    !node.value.is_empty() || node.children.len() >= 2,
                    "valueless node with fewer than two children"
                );
            }
            for child in node.children.ids() {
                let first = self.node(child).label[0];
                assert_eq!(
                    node.children.get(first),
                    Some(child),
                    "child under wrong key"
                );
                stack.push(child);
            }
        }
        assert_eq!(live + self.free.len(), self.nodes.len(), "leaked nodes");
        live
    }
}

impl<V> fmt::Debug for Radix<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Radix")
            .field("nodes", &(self.nodes.len() - self.free.len()))
            .finish_non_exhaustive()
    }
}

/// Whether `rest` starts with a child's `label`, given that their first bytes are already
/// known to match (the child was found by it). Labels of one byte, the norm near the root,
/// then need no comparison at all.
#[inline]
fn continues_with(rest: &[u8], label: &[u8]) -> bool {
    label.len() == 1 || (rest.len() >= label.len() && rest[1..label.len()] == label[1..])
}
