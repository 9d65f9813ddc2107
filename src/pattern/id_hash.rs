//! The routing-id hash: a folded multiply (the wyhash/foldhash construction) keyed with 128
//! random bits per socket, about 16-20 ns a lookup of a `peer-<i>` id among 1,000 where std's
//! SipHash-1-3 takes 24-35 ns (on the 2-vCPU VM, in a loop of lookups alone; measured before
//! the hash read whole words, which took another 14 ns off a ROUTER send). Routing ids are
//! chosen by peers, so the key matters: unkeyed (FxHash), ids could be picked to land in one
//! bucket and turn every lookup into a long probe (HashDoS). The key comes from std's
//! `RandomState` (seeded by the OS) and no hash value ever leaves the socket; that is weaker
//! than SipHash's guarantee, the same as foldhash's (hashbrown's default hasher) or ahash's
//! fallback. No dependency: the hash is these few lines.
//!
//! XPUB keys its pipe-id index with it too: a lookup per matched peer per message, where
//! SipHash showed in the PUB/inproc profile.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

#[derive(Debug, Clone, Copy)]
pub(crate) struct IdHashState {
    seed: u64,
    multiplier: u64,
}

impl IdHashState {
    pub(crate) fn new() -> IdHashState {
        let keys = RandomState::new();
        IdHashState {
            seed: keys.hash_one(0u64),
            // Odd, so never zero: a zero multiplier would give every id the same hash.
            multiplier: keys.hash_one(1u64) | 1,
        }
    }
}

impl BuildHasher for IdHashState {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher {
            state: self.seed,
            multiplier: self.multiplier,
        }
    }
}

pub(crate) struct IdHasher {
    state: u64,
    multiplier: u64,
}

impl IdHasher {
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.state ^ word) * u128::from(self.multiplier);
        self.state = (product as u64) ^ ((product >> 64) as u64);
    }
}

/// The four bytes of `bytes` at `at` (which leaves room for them), little-endian.
#[inline]
pub(super) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// The eight bytes of `bytes` at `at` (which leaves room for them), little-endian.
#[inline]
pub(super) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `[u8]`'s Hash writes the length first, so words that overlap or repeat bytes are
        // unambiguous. Every read is of a length known at compile time (a load, where copying
        // a chunk of variable length into a padded word called `memcpy`: two calls per
        // 10-byte id, about 40 instructions of a ROUTER send's 690).
        let len = bytes.len();
        match len {
            0 => {}
            1..=3 => {
                let word = u64::from(bytes[0])
                    | u64::from(bytes[len / 2]) << 8
                    | u64::from(bytes[len - 1]) << 16;
                self.mix(word);
            }
            4..=7 => {
                let word = u64::from(u32_at(bytes, 0)) | u64::from(u32_at(bytes, len - 4)) << 32;
                self.mix(word);
            }
            _ => {
                let mut words = bytes.chunks_exact(8);
                for word in &mut words {
                    self.mix(u64_at(word, 0));
                }
                if !words.remainder().is_empty() {
                    // The last eight bytes, overlapping the word before.
                    self.mix(u64_at(bytes, len - 8));
                }
            }
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn finish(&self) -> u64 {
        let mut last = IdHasher {
            state: self.state,
            multiplier: self.multiplier.rotate_left(32) | 1,
        };
        last.mix(self.multiplier);
        last.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::collections::HashSet;

    fn name(i: u64) -> Bytes {
        Bytes::from(format!("peer-{i}"))
    }

    #[test]
    fn keyed_and_tells_ids_apart() {
        let (a, b) = (IdHashState::new(), IdHashState::new());
        let ids: Vec<Bytes> = (0..1000u64)
            .map(name)
            .chain([Bytes::from_static(b"ab"), Bytes::from_static(b"ab\0")])
            .collect();
        let hashes: HashSet<u64> = ids.iter().map(|id| a.hash_one(id)).collect();
        assert_eq!(hashes.len(), ids.len());
        assert_eq!(a.hash_one(&ids[7]), a.hash_one(name(7)));
        // Two sockets do not share a key.
        assert!(ids.iter().any(|id| a.hash_one(id) != b.hash_one(id)));
    }

    /// Ids of every length up to 40 bytes, and each of them with any one byte changed, hash
    /// apart: every byte reaches the hash, whichever of the length's reads covers it.
    #[test]
    fn every_byte_of_every_length_counts() {
        let a = IdHashState::new();
        let mut hashes = HashSet::new();
        let mut ids = 0;
        for len in 0..=40usize {
            let id: Vec<u8> = (0..len).map(|i| i as u8).collect();
            hashes.insert(a.hash_one(&id[..]));
            ids += 1;
            for at in 0..len {
                let mut other = id.clone();
                other[at] ^= 0x80;
                hashes.insert(a.hash_one(&other[..]));
                ids += 1;
            }
        }
        assert_eq!(hashes.len(), ids);
    }

    #[test]
    fn tells_pipe_ids_apart() {
        let a = IdHashState::new();
        let hashes: HashSet<u64> = (0..10_000u64).map(|id| a.hash_one(id)).collect();
        assert_eq!(hashes.len(), 10_000);
    }
}
