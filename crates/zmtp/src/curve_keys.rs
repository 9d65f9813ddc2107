//! Curve25519 keys and the NaCl boxes CurveZMQ (RFC 26) is built from, on `dryoc` (pure Rust,
//! libsodium-compatible `classic` API, X25519 + XSalsa20-Poly1305 with runtime-detected AVX2
//! keystream kernels). It was taken over RustCrypto's `crypto_box` by measurement: a seal plus
//! an open costs about a quarter of `crypto_box` 0.9's instructions and is level with or ahead
//! of libsodium's (docs/performance.md, "CURVE crypto").
//!
//! On the wire a box is NaCl's "box minus its zero bytes": the 16-byte Poly1305 tag, then the
//! ciphertext (what libzmq sends after stripping `crypto_box_BOXZEROBYTES`). Nonces are 24
//! bytes: a 16- or 8-byte ASCII prefix naming the command, then a counter or random bytes.
//! A [`SharedKey`] is X25519 + HSalsa20 done once (libsodium's `beforenm`), so a connection
//! pays the scalar multiplication once, not per message. Boxes are sealed and opened in place,
//! so a frame costs no buffer beyond the one it is sent or delivered in. Secret, shared and
//! cookie keys are zeroized on drop (`Zeroizing`).

use dryoc::classic::crypto_box::{
    crypto_box_beforenm, crypto_box_detached_afternm_inplace,
    crypto_box_open_detached_afternm_inplace,
};
use dryoc::classic::crypto_core::crypto_scalarmult_base;
use zeroize::Zeroizing;

/// Bytes of a Curve25519 key.
pub const KEY_LEN: usize = 32;
/// Bytes a box adds to its plaintext (the Poly1305 tag).
pub const BOX_OVERHEAD: usize = 16;

/// A box that does not open (wrong key, wrong nonce, or altered bytes), or a peer key of low
/// order, with which no shared key exists (libsodium's `crypto_box_beforenm` refuses it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxError;

/// A long-term or short-term key pair.
pub struct KeyPair {
    /// The public key.
    pub public: [u8; KEY_LEN],
    secret: Zeroizing<[u8; KEY_LEN]>,
}

impl std::fmt::Debug for KeyPair {
    /// Never prints the secret key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl Clone for KeyPair {
    fn clone(&self) -> Self {
        KeyPair {
            public: self.public,
            secret: self.secret.clone(),
        }
    }
}

impl KeyPair {
    /// A fresh pair from the OS's randomness; `None` if the OS has none to give.
    pub fn generate() -> Option<KeyPair> {
        let bytes = Zeroizing::new(random::<KEY_LEN>()?);
        Some(KeyPair::from_secret(*bytes))
    }

    /// The pair of a known secret key (`zmq_curve_public`).
    pub fn from_secret(secret: [u8; KEY_LEN]) -> KeyPair {
        let secret = Zeroizing::new(secret);
        let mut public = [0u8; KEY_LEN];
        crypto_scalarmult_base(&mut public, &secret);
        KeyPair { public, secret }
    }

    /// A pair as the user gave it (`ZMQ_CURVE_PUBLICKEY` and `SECRETKEY`), not checked against
    /// each other: as with libzmq, keys that do not belong together fail at the peer.
    pub fn from_parts(public: [u8; KEY_LEN], secret: [u8; KEY_LEN]) -> KeyPair {
        KeyPair {
            public,
            secret: Zeroizing::new(secret),
        }
    }

    /// The secret key's bytes; the caller zeroizes them.
    pub fn secret_bytes(&self) -> [u8; KEY_LEN] {
        *self.secret
    }

    /// The key shared with `peer` (our secret, their public), computed once; refused for a
    /// low-order `peer`, whose shared secret would be all zeros.
    pub fn shared(&self, peer: &[u8; KEY_LEN]) -> Result<SharedKey, BoxError> {
        crypto_box_beforenm(peer, &self.secret)
            .map(|key| SharedKey(Zeroizing::new(key)))
            .map_err(|_| BoxError)
    }
}

impl PartialEq for KeyPair {
    fn eq(&self, other: &Self) -> bool {
        self.public == other.public
    }
}

impl Eq for KeyPair {}

/// A precomputed `crypto_box` key between two Curve25519 keys (`crypto_box_beforenm`).
pub struct SharedKey(Zeroizing<[u8; KEY_LEN]>);

impl std::fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedKey(..)")
    }
}

impl SharedKey {
    /// Seals `buf[BOX_OVERHEAD..]` in place and writes its tag into `buf[..BOX_OVERHEAD]`,
    /// so `buf` becomes `tag | ciphertext`; a `buf` shorter than the tag is left as it is.
    pub fn seal_in_place(&self, nonce: &[u8; 24], buf: &mut [u8]) {
        seal_in_place(&self.0, nonce, buf);
    }

    /// Appends `tag | ciphertext` of `plaintext` to `out`.
    pub fn seal_into(&self, nonce: &[u8; 24], plaintext: &[u8], out: &mut Vec<u8>) {
        seal_into(&self.0, nonce, plaintext, out);
    }

    /// The box of `plaintext`: `tag | ciphertext`.
    pub fn seal(&self, nonce: &[u8; 24], plaintext: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(BOX_OVERHEAD + plaintext.len());
        self.seal_into(nonce, plaintext, &mut out);
        out
    }

    /// Opens `tag | ciphertext` whose ciphertext is `body`, in place: `body` becomes the
    /// plaintext, or is left undefined when the box does not open.
    pub fn open_in_place(
        &self,
        nonce: &[u8; 24],
        tag: &[u8; BOX_OVERHEAD],
        body: &mut [u8],
    ) -> Result<(), BoxError> {
        crypto_box_open_detached_afternm_inplace(body, tag, nonce, &self.0).map_err(|_| BoxError)
    }

    /// Opens `tag | ciphertext`.
    pub fn open(&self, nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
        open(&self.0, nonce, boxed)
    }
}

/// A `crypto_secretbox` key (the server's cookie key), random per connection.
pub struct CookieKey(Zeroizing<[u8; KEY_LEN]>);

impl std::fmt::Debug for CookieKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieKey(..)")
    }
}

impl CookieKey {
    /// A fresh key from the OS's randomness.
    pub fn generate() -> Option<CookieKey> {
        Some(CookieKey(Zeroizing::new(random::<KEY_LEN>()?)))
    }

    /// The secret box of `plaintext`: `tag | ciphertext`.
    pub fn seal(&self, nonce: &[u8; 24], plaintext: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(BOX_OVERHEAD + plaintext.len());
        seal_into(&self.0, nonce, plaintext, &mut out);
        out
    }

    /// Opens `tag | ciphertext`.
    pub fn open(&self, nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
        open(&self.0, nonce, boxed)
    }
}

// `crypto_box_afternm` is `crypto_secretbox` under the precomputed key (libsodium defines it
// so), so one pair of functions serves shared keys and cookie keys alike.

fn seal_in_place(key: &[u8; KEY_LEN], nonce: &[u8; 24], buf: &mut [u8]) {
    if buf.len() < BOX_OVERHEAD {
        return;
    }
    let (tag_slot, body) = buf.split_at_mut(BOX_OVERHEAD);
    let mut tag = [0u8; BOX_OVERHEAD];
    crypto_box_detached_afternm_inplace(body, &mut tag, nonce, key);
    tag_slot.copy_from_slice(&tag);
}

fn seal_into(key: &[u8; KEY_LEN], nonce: &[u8; 24], plaintext: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.reserve(BOX_OVERHEAD + plaintext.len());
    out.extend_from_slice(&[0; BOX_OVERHEAD]);
    out.extend_from_slice(plaintext);
    seal_in_place(key, nonce, &mut out[start..]);
}

fn open(key: &[u8; KEY_LEN], nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
    let (tag, body) = split_tag(boxed)?;
    let mut plain = body.to_vec();
    crypto_box_open_detached_afternm_inplace(&mut plain, tag, nonce, key).map_err(|_| BoxError)?;
    Ok(plain)
}

/// `tag | ciphertext` split; too short for a tag is a box that does not open.
pub(crate) fn split_tag(boxed: &[u8]) -> Result<(&[u8; BOX_OVERHEAD], &[u8]), BoxError> {
    let (tag, body) = boxed.split_first_chunk::<BOX_OVERHEAD>().ok_or(BoxError)?;
    Ok((tag, body))
}

/// `N` bytes from the OS.
pub(crate) fn random<const N: usize>() -> Option<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes)
}

/// A 24-byte nonce: `prefix` then `tail` (together 24 bytes).
pub(crate) fn nonce(prefix: &[u8], tail: &[u8]) -> [u8; 24] {
    let mut n = [0u8; 24];
    let p = prefix.len().min(24);
    n[..p].copy_from_slice(&prefix[..p]);
    let t = tail.len().min(24 - p);
    n[p..p + t].copy_from_slice(&tail[..t]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NaCl's own `crypto_box` test vector (tests/box.c and box2.c of the NaCl distribution:
    /// Alice's secret, Bob's public, the nonce, the message and the box less its 16 zero
    /// bytes), so the wire layout is NaCl's and libsodium's.
    #[test]
    fn nacl_box_vector() {
        let alice_sk: [u8; 32] =
            hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        let bob_sk: [u8; 32] =
            hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        let nonce: [u8; 24] = hex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37");
        let alice = KeyPair::from_secret(alice_sk);
        let bob = KeyPair::from_secret(bob_sk);
        assert_eq!(
            alice.public,
            hex::<32>("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        );
        let m = hex::<131>(concat!(
            "be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a",
            "1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057",
            "e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040",
            "e082f937763848645e0705"
        ));
        let c = alice.shared(&bob.public).unwrap().seal(&nonce, &m);
        assert_eq!(
            &c[..16],
            &hex::<16>("f3ffc7703f9400e52a7dfb4b3d3305d9")[..],
            "the tag first"
        );
        assert_eq!(
            &c[16..24],
            &hex::<8>("8e993b9f48681273")[..],
            "then the ciphertext"
        );
        assert_eq!(
            bob.shared(&alice.public).unwrap().open(&nonce, &c).unwrap(),
            m
        );
        let mut bad = c.clone();
        bad[20] ^= 1;
        assert_eq!(
            bob.shared(&alice.public).unwrap().open(&nonce, &bad),
            Err(BoxError)
        );
        assert_eq!(
            bob.shared(&alice.public).unwrap().open(&nonce, &c[..15]),
            Err(BoxError)
        );
    }

    /// A low-order peer key (here the all-zero point) has no shared key, as in libsodium.
    #[test]
    fn low_order_peer_key_refused() {
        let ours = KeyPair::generate().unwrap();
        assert_eq!(ours.shared(&[0; 32]).err(), Some(BoxError));
        let mut one = [0u8; 32];
        one[0] = 1;
        assert_eq!(ours.shared(&one).err(), Some(BoxError));
    }

    #[test]
    fn in_place_matches_copying_boxes() {
        let (a, b) = (KeyPair::generate().unwrap(), KeyPair::generate().unwrap());
        let (ka, kb) = (a.shared(&b.public).unwrap(), b.shared(&a.public).unwrap());
        let n = nonce(b"CurveZMQMESSAGEC", &[0, 0, 0, 0, 0, 0, 0, 9]);
        for len in [0usize, 1, 63, 64, 65, 1000, 4097] {
            let plain: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut buf = vec![0u8; BOX_OVERHEAD];
            buf.extend_from_slice(&plain);
            ka.seal_in_place(&n, &mut buf);
            assert_eq!(buf, ka.seal(&n, &plain), "{len} B");
            let (tag, body) = buf.split_at_mut(BOX_OVERHEAD);
            let tag: [u8; BOX_OVERHEAD] = tag.try_into().unwrap();
            kb.open_in_place(&n, &tag, body).unwrap();
            assert_eq!(body, &plain[..]);
        }
    }

    #[test]
    fn cookie_round_trip_and_fresh_keys() {
        let k = CookieKey::generate().unwrap();
        let n = nonce(b"COOKIE--", &[7; 16]);
        let b = k.seal(&n, b"hello");
        assert_eq!(k.open(&n, &b).unwrap(), b"hello");
        assert_eq!(CookieKey::generate().unwrap().open(&n, &b), Err(BoxError));
        let (a, b) = (KeyPair::generate().unwrap(), KeyPair::generate().unwrap());
        assert_ne!(a.public, b.public);
        assert_eq!(KeyPair::from_secret(a.secret_bytes()).public, a.public);
        assert!(!format!("{a:?}").contains(&format!("{:?}", a.secret_bytes())));
    }

    fn hex<const N: usize>(s: &str) -> [u8; N] {
        let mut out = [0u8; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        out
    }
}
