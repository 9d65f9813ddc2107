//! The rest of a ZMTP 2.0 greeting (RFC 15), after the signature and the revision byte 0x01
//! that [`crate::GreetingDecoder`] reads: one socket-type byte, then an identity frame.
//!
//! ```text
//!   signature (10) | revision 0x01 | socket type (1) | identity frame: flags | size (1) | id
//! ```
//!
//! After it both sides use ZMTP 2.0 framing, which is 3.x framing without commands: the same
//! flags (MORE, LONG) and sizes, so [`crate::FrameDecoder`] and [`crate::Encoder`] serve for
//! data. There is no security handshake and no READY; subscriptions travel as 0x01/0x00
//! messages. RFC 15 lists types 0..=8; libzmq sends its numeric `ZMQ_*` value, so XPUB (9) and
//! XSUB (10) appear too, and libzmq 4.3 checks neither the type nor whether it pairs with its
//! own (src/zmtp_engine.cpp `handshake_v2_0`). The identity frame is a message frame whose body
//! (0..=255 bytes) is the sender's routing id; libzmq sends it with flags 0.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::decoder::{Decoded, FrameDecoder};
use crate::frame::put_header;
use crate::handshake_error::HandshakeError;
use crate::socket_type::SocketType;

/// What a ZMTP 2.0 peer sends after its revision byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Tail {
    /// The peer's socket type.
    pub socket_type: SocketType,
    /// The body of its identity frame (empty: anonymous).
    pub identity: Bytes,
}

/// Appends our tail: the socket-type byte and the identity frame.
pub fn encode_tail(socket_type: SocketType, identity: &[u8], out: &mut BytesMut) {
    out.put_u8(u8::try_from(socket_type.to_raw()).unwrap_or(0));
    put_header(out, identity.len(), false, false);
    out.put_slice(identity);
}

/// Incremental decoder of a ZMTP 2.0 peer's tail.
#[derive(Debug, Clone)]
pub struct V2TailDecoder {
    socket_type: Option<SocketType>,
    frames: FrameDecoder,
}

impl V2TailDecoder {
    /// A decoder expecting the socket-type byte; identity frames above `max_msg_size` (libzmq's
    /// ZMQ_MAXMSGSIZE, which applies to it) are refused.
    pub fn new(max_msg_size: Option<u64>) -> Self {
        Self {
            socket_type: None,
            frames: FrameDecoder::new(max_msg_size),
        }
    }

    /// Consumes what it can of `buf`: `Ok(None)` while incomplete, `Ok(Some)` right after the
    /// identity frame (what follows in `buf` is the connection's first traffic).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<V2Tail>, HandshakeError> {
        let socket_type = match self.socket_type {
            Some(t) => t,
            None => {
                let Some(&byte) = buf.first() else {
                    return Ok(None);
                };
                let t = SocketType::from_raw(i32::from(byte)).ok_or_else(|| {
                    HandshakeError::UnknownSocketType {
                        name: Bytes::copy_from_slice(&[byte]),
                    }
                })?;
                buf.advance(1);
                self.socket_type = Some(t);
                t
            }
        };
        match self.frames.decode(buf) {
            Ok(Decoded::Frame(frame)) => Ok(Some(V2Tail {
                socket_type,
                identity: frame.body,
            })),
            Ok(Decoded::NeedMore(_)) => Ok(None),
            Err(e) => Err(HandshakeError::Frame(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_type_byte_and_identity_frame() {
        let mut out = BytesMut::new();
        encode_tail(SocketType::Dealer, b"abc", &mut out);
        assert_eq!(&out[..], b"\x05\x00\x03abc");
        out.clear();
        encode_tail(SocketType::XSub, b"", &mut out);
        assert_eq!(&out[..], b"\x0a\x00\x00");
    }

    #[test]
    fn decodes_and_leaves_the_first_frames() {
        let mut buf = BytesMut::from(&b"\x06\x00\x02id\x00\x05hello"[..]);
        let tail = V2TailDecoder::new(None).decode(&mut buf).unwrap().unwrap();
        assert_eq!(tail.socket_type, SocketType::Router);
        assert_eq!(&tail.identity[..], b"id");
        assert_eq!(&buf[..], b"\x00\x05hello");
    }

    #[test]
    fn refuses_unknown_types_and_oversized_identities() {
        let mut buf = BytesMut::from(&b"\x63\x00\x00"[..]);
        assert!(matches!(
            V2TailDecoder::new(None).decode(&mut buf),
            Err(HandshakeError::UnknownSocketType { .. })
        ));
        let mut buf = BytesMut::from(&b"\x05\x00\x05hello"[..]);
        assert!(matches!(
            V2TailDecoder::new(Some(4)).decode(&mut buf),
            Err(HandshakeError::Frame(_))
        ));
    }

    proptest! {
        /// Any chunking gives the same result as the whole input at once.
        #[test]
        fn chunking_does_not_matter(
            kind in 0u8..=10,
            identity in proptest::collection::vec(any::<u8>(), 0..=255),
            rest in proptest::collection::vec(any::<u8>(), 0..16),
            chunk in 1usize..8,
        ) {
            let socket_type = SocketType::from_raw(i32::from(kind)).unwrap();
            let mut wire = BytesMut::new();
            encode_tail(socket_type, &identity, &mut wire);
            wire.extend_from_slice(&rest);
            let mut dec = V2TailDecoder::new(None);
            let mut buf = BytesMut::new();
            let mut got = None;
            for piece in wire.chunks(chunk) {
                buf.extend_from_slice(piece);
                if got.is_none() {
                    got = dec.decode(&mut buf).unwrap();
                }
            }
            let tail = got.expect("complete");
            prop_assert_eq!(tail.socket_type, socket_type);
            prop_assert_eq!(&tail.identity[..], &identity[..]);
            prop_assert_eq!(&buf[..], &rest[..]);
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut buf = BytesMut::from(&data[..]);
            let _ = V2TailDecoder::new(Some(1000)).decode(&mut buf);
        }
    }
}
