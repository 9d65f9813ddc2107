//! Curve25519 keys and the NaCl boxes CurveZMQ (RFC 26) is built from, on RustCrypto's
//! `crypto_box` (X25519 + XSalsa20-Poly1305, NaCl's `crypto_box`) and `crypto_secretbox`.
//!
//! On the wire a box is NaCl's "box minus its zero bytes": the 16-byte Poly1305 tag, then the
//! ciphertext (what libzmq sends after stripping `crypto_box_BOXZEROBYTES`). Nonces are 24
//! bytes: a 16- or 8-byte ASCII prefix naming the command, then a counter or random bytes.
//! A [`SharedKey`] is X25519 + HSalsa20 done once (libsodium's `beforenm`), so a connection
//! pays the scalar multiplication once, not per message. Secret keys and shared keys are
//! zeroized on drop (the crates' own `Drop`; ours through `Zeroizing`).

use crypto_box::aead::consts::{U16, U24};
use crypto_box::aead::{AeadCore, AeadInPlace};
use crypto_box::{PublicKey, SalsaBox, SecretKey};
use crypto_secretbox::{KeyInit, XSalsa20Poly1305};
use zeroize::Zeroizing;

/// Bytes of a Curve25519 key.
pub const KEY_LEN: usize = 32;
/// Bytes a box adds to its plaintext (the Poly1305 tag).
pub const BOX_OVERHEAD: usize = 16;

/// A box that does not open: wrong key, wrong nonce, or altered bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxError;

/// A long-term or short-term key pair.
pub struct KeyPair {
    /// The public key.
    pub public: [u8; KEY_LEN],
    secret: SecretKey,
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
        let secret = Zeroizing::new(self.secret_bytes());
        KeyPair::from_parts(self.public, *secret)
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
        let secret = SecretKey::from_bytes(secret);
        KeyPair {
            public: secret.public_key().to_bytes(),
            secret,
        }
    }

    /// A pair as the user gave it (`ZMQ_CURVE_PUBLICKEY` and `SECRETKEY`), not checked against
    /// each other: as with libzmq, keys that do not belong together fail at the peer.
    pub fn from_parts(public: [u8; KEY_LEN], secret: [u8; KEY_LEN]) -> KeyPair {
        KeyPair {
            public,
            secret: SecretKey::from_bytes(secret),
        }
    }

    /// The secret key's bytes; the caller zeroizes them.
    pub fn secret_bytes(&self) -> [u8; KEY_LEN] {
        self.secret.to_bytes()
    }

    /// The key shared with `peer` (our secret, their public), computed once.
    pub fn shared(&self, peer: &[u8; KEY_LEN]) -> SharedKey {
        SharedKey(SalsaBox::new(&PublicKey::from(*peer), &self.secret))
    }
}

impl PartialEq for KeyPair {
    fn eq(&self, other: &Self) -> bool {
        self.public == other.public
    }
}

impl Eq for KeyPair {}

/// A precomputed `crypto_box` key between two Curve25519 keys (`crypto_box_beforenm`).
pub struct SharedKey(SalsaBox);

impl std::fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedKey(..)")
    }
}

impl SharedKey {
    /// Appends `tag | ciphertext` of `plaintext` to `out`.
    pub fn seal_into(&self, nonce: &[u8; 24], plaintext: &[u8], out: &mut Vec<u8>) {
        seal(&self.0, nonce, plaintext, out);
    }

    /// The box of `plaintext`: `tag | ciphertext`.
    pub fn seal(&self, nonce: &[u8; 24], plaintext: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(BOX_OVERHEAD + plaintext.len());
        self.seal_into(nonce, plaintext, &mut out);
        out
    }

    /// Opens `tag | ciphertext`.
    pub fn open(&self, nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
        open(&self.0, nonce, boxed)
    }
}

/// A `crypto_secretbox` key (the server's cookie key), random per connection.
pub struct CookieKey(XSalsa20Poly1305);

impl std::fmt::Debug for CookieKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieKey(..)")
    }
}

impl CookieKey {
    /// A fresh key from the OS's randomness.
    pub fn generate() -> Option<CookieKey> {
        let key = Zeroizing::new(random::<32>()?);
        Some(CookieKey(XSalsa20Poly1305::new((&*key).into())))
    }

    /// The secret box of `plaintext`: `tag | ciphertext`.
    pub fn seal(&self, nonce: &[u8; 24], plaintext: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(BOX_OVERHEAD + plaintext.len());
        seal(&self.0, nonce, plaintext, &mut out);
        out
    }

    /// Opens `tag | ciphertext`.
    pub fn open(&self, nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
        open(&self.0, nonce, boxed)
    }
}

/// The NaCl constructions: 24-byte nonces, 16-byte tags.
trait NaclBox: AeadInPlace + AeadCore<NonceSize = U24, TagSize = U16> {}
impl<C: AeadInPlace + AeadCore<NonceSize = U24, TagSize = U16>> NaclBox for C {}

fn seal(cipher: &impl NaclBox, nonce: &[u8; 24], plaintext: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; BOX_OVERHEAD]);
    out.extend_from_slice(plaintext);
    let (tag_slot, body) = out[start..].split_at_mut(BOX_OVERHEAD);
    // Fails only for associated data or a message above 2^38 bytes; a frame never is one,
    // and a box that is not sealed is caught by the peer as one that does not open.
    if let Ok(tag) = cipher.encrypt_in_place_detached(nonce.into(), b"", body) {
        tag_slot.copy_from_slice(&tag);
    }
}

fn open(cipher: &impl NaclBox, nonce: &[u8; 24], boxed: &[u8]) -> Result<Vec<u8>, BoxError> {
    if boxed.len() < BOX_OVERHEAD {
        return Err(BoxError);
    }
    let (tag, body) = boxed.split_at(BOX_OVERHEAD);
    let mut plain = body.to_vec();
    cipher
        .decrypt_in_place_detached(nonce.into(), b"", &mut plain, tag.into())
        .map_err(|_| BoxError)?;
    Ok(plain)
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
        let c = alice.shared(&bob.public).seal(&nonce, &m);
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
        assert_eq!(bob.shared(&alice.public).open(&nonce, &c).unwrap(), m);
        let mut bad = c.clone();
        bad[20] ^= 1;
        assert_eq!(bob.shared(&alice.public).open(&nonce, &bad), Err(BoxError));
        assert_eq!(
            bob.shared(&alice.public).open(&nonce, &c[..15]),
            Err(BoxError)
        );
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
