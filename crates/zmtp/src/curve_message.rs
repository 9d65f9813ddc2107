//! CURVE MESSAGE (RFC 26): after the handshake every frame, data or command, travels boxed.
//!
//! ```text
//!  body: "\x07MESSAGE" | short nonce (8, big-endian) | box[flags (1) | payload]
//!  box nonce: "CurveZMQMESSAGE" + 'C' (client sends) or 'S' (server sends) | short nonce
//!  flags: 0x01 MORE, 0x02 COMMAND
//! ```
//!
//! As libzmq 4.3 sends it, the outer ZMTP frame carries no flags: MORE and COMMAND travel
//! inside the box. Each side counts its short nonces up from where its handshake left them;
//! a nonce not above the last one received (a replay, a reorder) refuses the frame, and the
//! driver closes that connection. The shared key is the handshake's precomputed one.

use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::curve_error::CurveError;
use crate::curve_keys::{split_tag, SharedKey, BOX_OVERHEAD};

const MESSAGE: &[u8] = b"\x07MESSAGE";
const FLAG_MORE: u8 = 0x01;
const FLAG_COMMAND: u8 = 0x02;
/// Bytes a MESSAGE adds to a frame's payload: name, short nonce, tag, flags.
pub const MESSAGE_OVERHEAD: usize = 8 + 8 + BOX_OVERHEAD + 1;

/// One unboxed frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unboxed {
    /// The payload.
    pub body: Bytes,
    /// More frames of the same message follow.
    pub more: bool,
    /// A ZMTP command (PING, SUBSCRIBE...), not message data.
    pub command: bool,
}

/// One connection's MESSAGE boxing after a completed CURVE handshake: a sender and a
/// receiver sharing the precomputed key, which [`CurveCodec::split`] hands to the encoder and
/// the decoder.
#[derive(Debug)]
pub struct CurveCodec {
    tx: CurveSender,
    rx: CurveReceiver,
}

/// Boxes our frames, counting our short nonces.
#[derive(Debug)]
pub struct CurveSender {
    key: Arc<SharedKey>,
    /// 'C' when we are the client, 'S' when the server: the last byte of our nonce prefix.
    ours: u8,
    /// The short nonce our next MESSAGE uses.
    next_nonce: u64,
}

/// Unboxes the peer's frames, refusing any short nonce not above the last one.
#[derive(Debug)]
pub struct CurveReceiver {
    key: Arc<SharedKey>,
    /// The peer's nonce prefix letter.
    theirs: u8,
    /// The highest short nonce received so far.
    peer_nonce: u64,
}

impl CurveCodec {
    /// A codec over `key` (the short-term keys' shared key); `next_nonce` is our next short nonce
    /// and `peer_nonce` the last one received (after a handshake: 3 and 1 for a client, 2 and 2
    /// for a server).
    pub fn new(key: SharedKey, client: bool, next_nonce: u64, peer_nonce: u64) -> Self {
        let key = Arc::new(key);
        let (ours, theirs) = if client { (b'C', b'S') } else { (b'S', b'C') };
        CurveCodec {
            tx: CurveSender {
                key: Arc::clone(&key),
                ours,
                next_nonce,
            },
            rx: CurveReceiver {
                key,
                theirs,
                peer_nonce,
            },
        }
    }

    /// The two directions, for an encoder and a decoder.
    pub fn split(self) -> (CurveSender, CurveReceiver) {
        (self.tx, self.rx)
    }

    /// [`CurveSender::encode`].
    pub fn encode(&mut self, payload: &[u8], more: bool, command: bool) -> Bytes {
        self.tx.encode(payload, more, command)
    }

    /// [`CurveReceiver::decode`].
    pub fn decode(&mut self, body: &[u8]) -> Result<Unboxed, CurveError> {
        self.rx.decode(body)
    }
}

impl CurveSender {
    /// The MESSAGE body boxing one frame; the caller sends it as a frame without flags.
    pub fn encode(&mut self, payload: &[u8], more: bool, command: bool) -> Bytes {
        let mut out = BytesMut::with_capacity(MESSAGE_OVERHEAD + payload.len());
        self.encode_into(payload, more, command, &mut out);
        out.freeze()
    }

    /// Appends the MESSAGE body boxing one frame to `out` (`MESSAGE_OVERHEAD` + the payload's
    /// bytes): the box is sealed where it is sent from, so a frame costs one copy of its
    /// payload and, for a small frame written into the encoder's batch, no allocation.
    pub fn encode_into(&mut self, payload: &[u8], more: bool, command: bool, out: &mut BytesMut) {
        let short = self.next_nonce.to_be_bytes();
        self.next_nonce = self.next_nonce.wrapping_add(1);
        out.reserve(MESSAGE_OVERHEAD + payload.len());
        let start = out.len();
        out.put_slice(MESSAGE);
        out.put_slice(&short);
        out.put_bytes(0, BOX_OVERHEAD);
        out.put_u8((u8::from(more) * FLAG_MORE) | (u8::from(command) * FLAG_COMMAND));
        out.put_slice(payload);
        self.key
            .seal_in_place(&message_nonce(self.ours, short), &mut out[start + 16..]);
    }
}

/// "CurveZMQMESSAGE" + the sender's letter + the short nonce.
fn message_nonce(letter: u8, short: [u8; 8]) -> [u8; 24] {
    let mut n = *b"CurveZMQMESSAGE?\0\0\0\0\0\0\0\0";
    n[15] = letter;
    n[16..].copy_from_slice(&short);
    n
}

impl CurveReceiver {
    /// Unboxes a received MESSAGE body.
    pub fn decode(&mut self, body: &[u8]) -> Result<Unboxed, CurveError> {
        if body.len() < MESSAGE_OVERHEAD || !body.starts_with(MESSAGE) {
            return Err(CurveError::MalformedMessage);
        }
        let short: [u8; 8] = body[8..16]
            .try_into()
            .map_err(|_| CurveError::MalformedMessage)?;
        let n = u64::from_be_bytes(short);
        if n <= self.peer_nonce {
            return Err(CurveError::InvalidSequence);
        }
        let (tag, boxed) = split_tag(&body[16..]).map_err(|_| CurveError::MalformedMessage)?;
        // One copy, into the buffer the payload is delivered in, opened there.
        let mut plain = BytesMut::from(boxed);
        self.key
            .open_in_place(&message_nonce(self.theirs, short), tag, &mut plain)
            .map_err(|_| CurveError::Cryptographic)?;
        self.peer_nonce = n;
        // The length check above leaves at least the flags byte; advancing past it (not
        // slicing the frozen buffer) keeps the payload in its one allocation.
        let flags = plain.first().copied().unwrap_or(0);
        plain.advance(plain.len().min(1));
        let payload = plain.freeze();
        Ok(Unboxed {
            body: payload,
            more: flags & FLAG_MORE != 0,
            command: flags & FLAG_COMMAND != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve_keys::KeyPair;
    use proptest::prelude::*;

    fn pair() -> (CurveCodec, CurveCodec) {
        let (c, s) = (KeyPair::generate().unwrap(), KeyPair::generate().unwrap());
        (
            CurveCodec::new(c.shared(&s.public).unwrap(), true, 3, 1),
            CurveCodec::new(s.shared(&c.public).unwrap(), false, 2, 2),
        )
    }

    #[test]
    fn round_trip_flags_and_sizes() {
        let (mut client, mut server) = pair();
        for (payload, more, command) in [
            (&b"hello"[..], true, false),
            (b"", false, false),
            (b"\x04PING\0\0", false, true),
        ] {
            let boxed = client.encode(payload, more, command);
            assert_eq!(boxed.len(), MESSAGE_OVERHEAD + payload.len());
            assert_eq!(&boxed[..8], MESSAGE);
            let u = server.decode(&boxed).unwrap();
            assert_eq!((&u.body[..], u.more, u.command), (payload, more, command));
        }
        // Appended after what the buffer holds, as the encoder's batch does.
        let mut batch = BytesMut::from(&b"head"[..]);
        server.tx.encode_into(b"abc", true, false, &mut batch);
        assert_eq!(&batch[..4], b"head");
        let u = client.decode(&batch[4..]).unwrap();
        assert_eq!((&u.body[..], u.more, u.command), (&b"abc"[..], true, false));
        let back = server.encode(&[0xAB; 65536], false, false);
        assert_eq!(client.decode(&back).unwrap().body.len(), 65536);
    }

    #[test]
    fn replayed_reordered_forged_truncated_refused() {
        let (mut client, mut server) = pair();
        let first = client.encode(b"1", false, false);
        let second = client.encode(b"2", false, false);
        assert_eq!(server.decode(&second).unwrap().body, &b"2"[..]);
        assert_eq!(server.decode(&first), Err(CurveError::InvalidSequence));
        assert_eq!(server.decode(&second), Err(CurveError::InvalidSequence));
        let mut forged = client.encode(b"3", false, false).to_vec();
        let last = forged.len() - 1;
        forged[last] ^= 0x80;
        assert_eq!(server.decode(&forged), Err(CurveError::Cryptographic));
        let ok = client.encode(b"4", false, false);
        assert_eq!(
            server.decode(&ok[..MESSAGE_OVERHEAD - 1]),
            Err(CurveError::MalformedMessage)
        );
        // A failed box leaves the counter where it was: the genuine next one still opens.
        assert_eq!(server.decode(&ok).unwrap().body, &b"4"[..]);
        // Our own direction's nonce prefix is not the peer's: a reflected frame fails.
        let (mut client, _) = pair();
        let own = client.encode(b"x", false, false);
        assert_eq!(client.decode(&own), Err(CurveError::Cryptographic));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn arbitrary_bodies_never_panic(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            let (_, mut server) = pair();
            let mut body = MESSAGE.to_vec();
            body.extend_from_slice(&data);
            prop_assert!(server.decode(&body).is_err());
            prop_assert!(server.decode(&data).is_err());
        }
    }
}
