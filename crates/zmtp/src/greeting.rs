//! The 64-byte ZMTP 3.x greeting (RFC 23/37 §Greeting) and its incremental decoder.
//!
//! ```text
//! 0      1..=8    9     10     11     12..32      32         33..64
//! 0xFF | padding | 0x7F | major | minor | mechanism | as-server | filler
//! ```
//!
//! The decoder judges each byte as soon as it arrives, so a ZMTP 1.0 peer is refused after one
//! byte and a 2.0 peer after eleven, without waiting for a greeting it will never send.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

use crate::error::Fault;

/// Length of a ZMTP 3.x greeting.
pub const GREETING_LEN: usize = 64;

const SIGNATURE_START: u8 = 0xFF;
const SIGNATURE_END: u8 = 0x7F;
const MAJOR_POS: usize = 10;
const MINOR_POS: usize = 11;
const MECHANISM_POS: usize = 12;
const MECHANISM_LEN: usize = 20;
const AS_SERVER_POS: usize = 32;

/// A security mechanism named in the greeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// RFC 37 NULL.
    Null,
    /// RFC 24 PLAIN.
    Plain,
    /// RFC 25 CURVE.
    Curve,
    /// Any other valid name (e.g. GSSAPI), zero-padded to 20 bytes.
    Other([u8; 20]),
}

impl Mechanism {
    /// The name without its zero padding.
    pub fn name(&self) -> &[u8] {
        match self {
            Self::Null => b"NULL",
            Self::Plain => b"PLAIN",
            Self::Curve => b"CURVE",
            Self::Other(raw) => {
                let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                &raw[..end]
            }
        }
    }

    /// The mechanism for a validated, zero-padded 20-byte field.
    fn from_field(raw: [u8; MECHANISM_LEN]) -> Self {
        let m = Self::Other(raw);
        match m.name() {
            b"NULL" => Self::Null,
            b"PLAIN" => Self::Plain,
            b"CURVE" => Self::Curve,
            _ => m,
        }
    }

    /// The zero-padded 20-byte field.
    fn to_field(self) -> [u8; MECHANISM_LEN] {
        let mut raw = [0; MECHANISM_LEN];
        let name = self.name();
        let n = name.len().min(MECHANISM_LEN);
        raw[..n].copy_from_slice(&name[..n]);
        raw
    }
}

/// RFC 23: `mechanism-char = "A"-"Z" | DIGIT | "-" | "_" | "." | "+" | %x0`.
fn is_mechanism_char(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'+')
}

/// Checks the part of the mechanism field seen so far: a non-empty name, then zeros only.
fn check_mechanism_prefix(field: &[u8]) -> bool {
    match field.iter().position(|&b| b == 0) {
        Some(0) => false,
        Some(end) => {
            field[..end].iter().copied().all(is_mechanism_char)
                && field[end..].iter().all(|&b| b == 0)
        }
        None => field.iter().copied().all(is_mechanism_char),
    }
}

/// A ZMTP 3.x greeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Greeting {
    /// Major version (3).
    pub major: u8,
    /// Minor version (0 or 1).
    pub minor: u8,
    /// Security mechanism.
    pub mechanism: Mechanism,
    /// Whether the sender is the mechanism's server (always false for NULL).
    pub as_server: bool,
}

impl Greeting {
    /// A ZMTP 3.1 greeting.
    pub fn new(mechanism: Mechanism, as_server: bool) -> Self {
        Self {
            major: 3,
            minor: 1,
            mechanism,
            as_server,
        }
    }

    /// The wire form with zero padding in bytes 1..=8 (RFC 23 lets peers ignore them).
    pub fn encode(&self) -> [u8; GREETING_LEN] {
        self.encode_with_padding(0)
    }

    /// The wire form with `padding` as u64 BE in bytes 1..=8. libzmq writes
    /// `routing_id_len + 1` there so that a ZMTP 1.0 peer reads the signature as the start of
    /// an identity frame (src/zmtp_engine.cpp `plug_internal`); [`crate::Handshake`] does the
    /// same to be byte-identical on the wire.
    pub fn encode_with_padding(&self, padding: u64) -> [u8; GREETING_LEN] {
        let mut out = [0; GREETING_LEN];
        out[0] = SIGNATURE_START;
        out[1..9].copy_from_slice(&padding.to_be_bytes());
        out[9] = SIGNATURE_END;
        out[MAJOR_POS] = self.major;
        out[MINOR_POS] = self.minor;
        out[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN]
            .copy_from_slice(&self.mechanism.to_field());
        out[AS_SERVER_POS] = u8::from(self.as_server);
        out
    }
}

/// The revision byte (offset 10) of a ZMTP 2.0 peer (RFC 15), where 3.x has its major version.
pub const ZMTP2_REVISION: u8 = 0x01;

/// Incremental greeting decoder.
///
/// Acceptance follows libzmq 4.3.5 (src/zmtp_engine.cpp `receive_greeting`,
/// `select_handshake_fun`): major 0 is a versioned ZMTP 1.0 peer, refused; major 1 is a
/// ZMTP 2.0 peer, whose greeting ends after this byte (its socket-type byte and identity
/// frame follow, read by [`crate::V2TailDecoder`]): the decoder then returns `major: 1` after consuming 11
/// bytes. Any major above 3 is spoken to as 3.1. Major 2, which no protocol defines, is
/// refused as pre-3.0 (libzmq would try 3.1 with it; no real peer sends it). The mechanism
/// field is checked against the RFC 23 grammar, which libzmq does not do; a peer with an
/// invalid name could not match our mechanism anyway.
#[derive(Debug, Clone, Default)]
pub struct GreetingDecoder {
    _private: (),
}

impl GreetingDecoder {
    /// A decoder waiting for byte 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Judges the bytes in `buf`. Returns `Ok(None)` (buffer untouched) while the greeting is
    /// incomplete and every byte so far is acceptable; `Ok(Some)` after consuming exactly
    /// [`GREETING_LEN`] bytes (11 for a ZMTP 2.0 peer, `major == 1`); an error as soon as a
    /// deciding byte is wrong.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Greeting>, GreetingError> {
        let have = &buf[..buf.len().min(GREETING_LEN)];
        if have.first().is_some_and(|&b| b != SIGNATURE_START) {
            return Err(GreetingError::Zmtp1Peer);
        }
        if have.get(9).is_some_and(|&b| b & 0x01 == 0) {
            return Err(GreetingError::Zmtp1Peer);
        }
        if let Some(&major) = have.get(MAJOR_POS) {
            if major == ZMTP2_REVISION {
                buf.advance(MAJOR_POS + 1);
                return Ok(Some(Greeting {
                    major,
                    minor: 0,
                    mechanism: Mechanism::Null,
                    as_server: false,
                }));
            }
            if major < 3 {
                return Err(GreetingError::UnsupportedVersion { major });
            }
        }
        if have.len() > MECHANISM_POS {
            let end = have.len().min(MECHANISM_POS + MECHANISM_LEN);
            if !check_mechanism_prefix(&have[MECHANISM_POS..end]) {
                let mut raw = [0; MECHANISM_LEN];
                raw[..end - MECHANISM_POS].copy_from_slice(&have[MECHANISM_POS..end]);
                return Err(GreetingError::InvalidMechanism { raw });
            }
        }
        if have.len() < GREETING_LEN {
            return Ok(None);
        }
        let mut raw = [0; MECHANISM_LEN];
        raw.copy_from_slice(&have[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN]);
        let greeting = Greeting {
            major: have[MAJOR_POS],
            minor: have[MINOR_POS],
            mechanism: Mechanism::from_field(raw),
            as_server: have[AS_SERVER_POS] != 0,
        };
        buf.advance(GREETING_LEN);
        Ok(Some(greeting))
    }
}

/// A peer greeting we refuse.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GreetingError {
    /// First byte not 0xFF, or bit 0 of byte 9 clear: an unversioned ZMTP 1.0 peer (or not
    /// ZMTP at all).
    Zmtp1Peer,
    /// A versioned peer this crate cannot speak to: major 0 (versioned ZMTP 1.0) or 2 (defined
    /// by no protocol).
    UnsupportedVersion {
        /// The peer's major version byte.
        major: u8,
    },
    /// The mechanism field is not `[A-Z0-9-_.+]{1,20}` followed by zero padding.
    InvalidMechanism {
        /// The raw 20-byte field.
        raw: [u8; 20],
    },
}

impl GreetingError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            Self::Zmtp1Peer | Self::UnsupportedVersion { .. } => Fault::PeerIncompatible,
            Self::InvalidMechanism { .. } => Fault::Malformed,
        }
    }
}

impl fmt::Display for GreetingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Zmtp1Peer => f.write_str("peer is not a ZMTP 3.x peer (ZMTP 1.0 signature)"),
            Self::UnsupportedVersion { major } => {
                write!(f, "peer speaks ZMTP revision {major}, older than 3.0")
            }
            Self::InvalidMechanism { raw } => {
                write!(
                    f,
                    "invalid mechanism name in greeting: {:?}",
                    Bytes::copy_from_slice(raw)
                )
            }
        }
    }
}

impl std::error::Error for GreetingError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn null_client_vector() -> [u8; 64] {
        let mut v = [0u8; 64];
        v[0] = 0xFF;
        v[9] = 0x7F;
        v[10] = 3;
        v[11] = 1;
        v[12..16].copy_from_slice(b"NULL");
        v
    }

    #[test]
    fn encodes_rfc_layout() {
        assert_eq!(
            Greeting::new(Mechanism::Null, false).encode(),
            null_client_vector()
        );
        let g = Greeting::new(Mechanism::Curve, true).encode_with_padding(1);
        assert_eq!(&g[..12], b"\xff\0\0\0\0\0\0\0\x01\x7f\x03\x01");
        assert_eq!(&g[12..32], b"CURVE\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(g[32], 1);
        assert!(g[33..].iter().all(|&b| b == 0));
    }

    #[test]
    fn decodes_byte_by_byte() {
        let wire = Greeting::new(Mechanism::Plain, true).encode_with_padding(7);
        let mut dec = GreetingDecoder::new();
        let mut buf = BytesMut::new();
        for (i, &b) in wire.iter().enumerate() {
            buf.extend_from_slice(&[b]);
            let r = dec.decode(&mut buf).unwrap();
            if i + 1 < GREETING_LEN {
                assert_eq!(r, None);
                assert_eq!(buf.len(), i + 1);
            } else {
                assert_eq!(r, Some(Greeting::new(Mechanism::Plain, true)));
            }
        }
        assert!(buf.is_empty());
    }

    #[test]
    fn leaves_following_bytes() {
        let mut buf = BytesMut::from(&null_client_vector()[..]);
        buf.extend_from_slice(b"\x04\x05");
        let g = GreetingDecoder::new().decode(&mut buf).unwrap().unwrap();
        assert_eq!(g.mechanism, Mechanism::Null);
        assert_eq!(&buf[..], b"\x04\x05");
    }

    #[test]
    fn refuses_old_peers_early() {
        let mut dec = GreetingDecoder::new();
        // ZMTP 1.0: a short identity frame length as first byte.
        let mut b = BytesMut::from(&b"\x01"[..]);
        assert_eq!(dec.decode(&mut b), Err(GreetingError::Zmtp1Peer));
        // ZMTP 1.0 with a long length: byte 9 has bit 0 clear.
        let mut b = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x00"[..]);
        assert_eq!(dec.decode(&mut b), Err(GreetingError::Zmtp1Peer));
        // Versioned 1.0 (revision 0) and the undefined major 2, refused at byte 10.
        let mut b = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x7f\x00"[..]);
        assert_eq!(
            dec.decode(&mut b),
            Err(GreetingError::UnsupportedVersion { major: 0 })
        );
        let mut b = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x7f\x02"[..]);
        assert_eq!(
            dec.decode(&mut b),
            Err(GreetingError::UnsupportedVersion { major: 2 })
        );
    }

    #[test]
    fn a_zmtp_2_0_greeting_ends_at_its_revision_byte() {
        let mut dec = GreetingDecoder::new();
        let mut b = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x7f"[..]);
        assert_eq!(dec.decode(&mut b), Ok(None));
        b.extend_from_slice(b"\x01\x05\x00\x00");
        let g = dec.decode(&mut b).unwrap().unwrap();
        assert_eq!((g.major, g.minor, g.mechanism), (1, 0, Mechanism::Null));
        // The socket-type byte and the identity frame are left for the v2 decoder.
        assert_eq!(&b[..], b"\x05\x00\x00");
    }

    #[test]
    fn accepts_3_0_and_future_versions() {
        for (major, minor) in [(3, 0), (3, 1), (3, 7), (4, 0), (255, 255)] {
            let mut v = null_client_vector();
            v[10] = major;
            v[11] = minor;
            let g = GreetingDecoder::new()
                .decode(&mut BytesMut::from(&v[..]))
                .unwrap()
                .unwrap();
            assert_eq!((g.major, g.minor), (major, minor));
        }
    }

    #[test]
    fn checks_mechanism_name() {
        let mut v = null_client_vector();
        v[12..17].copy_from_slice(b"GSS\0I");
        let e = GreetingDecoder::new().decode(&mut BytesMut::from(&v[..]));
        assert!(matches!(e, Err(GreetingError::InvalidMechanism { .. })));
        // Refused at the first bad byte, before the greeting is complete.
        let e = GreetingDecoder::new().decode(&mut BytesMut::from(&v[..17]));
        assert!(matches!(e, Err(GreetingError::InvalidMechanism { .. })));
        v[12..17].copy_from_slice(b"null\0");
        let e = GreetingDecoder::new().decode(&mut BytesMut::from(&v[..]));
        assert!(matches!(e, Err(GreetingError::InvalidMechanism { .. })));
        v[12..32].copy_from_slice(b"GSSAPI\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        let g = GreetingDecoder::new()
            .decode(&mut BytesMut::from(&v[..]))
            .unwrap()
            .unwrap();
        assert_eq!(g.mechanism.name(), b"GSSAPI");
        assert!(matches!(g.mechanism, Mechanism::Other(_)));
        v[12..32].copy_from_slice(b"ABCDEFGHIJKLMNOPQRS+");
        let g = GreetingDecoder::new()
            .decode(&mut BytesMut::from(&v[..]))
            .unwrap()
            .unwrap();
        assert_eq!(g.mechanism.name(), b"ABCDEFGHIJKLMNOPQRS+");
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut buf = BytesMut::from(&data[..]);
            let before = buf.len();
            match GreetingDecoder::new().decode(&mut buf) {
                Ok(Some(_)) => prop_assert_eq!(buf.len(), before - GREETING_LEN),
                _ => prop_assert_eq!(buf.len(), before),
            }
        }
    }
}
