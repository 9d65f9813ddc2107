//! A trie node's label, stored inside the node when short. With random 20-byte topics nearly
//! every leaf label fits, which saves the lookup one dependent cache miss per message.

use std::ops::Deref;

/// Longest label kept inline: the size of the heap variant (a boxed slice plus the tag)
/// leaves room for this many bytes and a length.
const INLINE: usize = 22;

#[derive(Clone)]
pub(crate) enum Label {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Label {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        if bytes.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            // The length is at most INLINE, so it fits a u8.
            Label::Inline {
                len: bytes.len() as u8,
                bytes: inline,
            }
        } else {
            Label::Heap(bytes.into())
        }
    }

    /// The length, read without forming the slice (no bounds check on the inline bytes): a
    /// match step only needs to know whether the label is more than the byte that found it.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            Label::Inline { len, .. } => usize::from(*len),
            Label::Heap(bytes) => bytes.len(),
        }
    }

    /// `self` followed by `tail` (folding a node into its only child).
    pub(crate) fn concat(&self, tail: &[u8]) -> Self {
        let mut joined = Vec::with_capacity(self.len() + tail.len());
        joined.extend_from_slice(self);
        joined.extend_from_slice(tail);
        Label::new(&joined)
    }
}

impl Deref for Label {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Label::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Label::Heap(bytes) => bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_short_and_long() {
        for len in [0, 1, 21, 22, 23, 100] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let label = Label::new(&bytes);
            assert_eq!(&*label, &bytes[..]);
            assert_eq!(matches!(label, Label::Inline { .. }), len <= INLINE);
            assert_eq!(&*label.concat(b"xy"), [&bytes[..], b"xy"].concat());
        }
        assert_eq!(std::mem::size_of::<Label>(), 24);
    }
}
