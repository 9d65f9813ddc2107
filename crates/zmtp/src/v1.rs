//! ZMTP 1.0 framing (RFC 13), spoken by libzmq 2.x, which libzmq 4.3 still talks to.
//!
//! ```text
//!   length (1 octet, 1..=254) | flags (1) | body          length counts flags + body
//!   0xFF | length (8 octets, big-endian) | flags (1) | body
//! ```
//!
//! Flags bit 0 is MORE; libzmq's `v1_decoder_t` ignores the other bits, and so do we. A 1.0
//! peer has no greeting: its first frame is its identity. libzmq's 10-byte signature
//! (0xFF, length = routing-id size + 1, flags 0x7F) is crafted to read, to such a peer, as the
//! header of our identity frame, whose body we send once we see the peer is 1.0
//! (src/zmtp_engine.cpp `handshake_v1_0_unversioned`). A peer that sends a signature with
//! revision 0 ("versioned 1.0") sends a socket-type octet and then the same framing.

use bytes::{BufMut, BytesMut};

use crate::decoder::{body_len, Decoded};
use crate::error::FrameError;
use crate::frame::Frame;

/// The flags bit that marks a frame followed by more of its message.
const MORE: u8 = 0x01;
/// Length octet that announces an 8-octet length.
const LONG: u8 = 0xFF;

/// Appends a 1.0 frame header for a body of `body_len` bytes.
pub fn put_v1_header(out: &mut impl BufMut, body_len: usize, more: bool) {
    let len = body_len as u64 + 1;
    if len < u64::from(LONG) {
        out.put_u8(len as u8);
    } else {
        out.put_u8(LONG);
        out.put_u64(len);
    }
    out.put_u8(if more { MORE } else { 0 });
}

/// Splits a 1.0 byte stream into frames, with the same contract as [`crate::FrameDecoder`]:
/// the buffer is untouched until a whole frame is there, and once the header is complete
/// [`Decoded::NeedMore`] is exactly what is missing.
#[derive(Debug, Clone, Default)]
pub struct V1Decoder {
    max_msg_size: Option<u64>,
}

impl V1Decoder {
    /// A decoder refusing bodies above `max_msg_size` (ZMQ_MAXMSGSIZE; `None` = no limit besides
    /// what the platform can address).
    pub fn new(max_msg_size: Option<u64>) -> Self {
        Self { max_msg_size }
    }

    /// Takes one frame off the front of `buf`, or says how many more bytes are needed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Decoded, FrameError> {
        let Some(&first) = buf.first() else {
            return Ok(Decoded::NeedMore(2));
        };
        let (len, size_len) = if first == LONG {
            let Some(field) = buf.get(1..9) else {
                return Ok(Decoded::NeedMore(10 - buf.len()));
            };
            (
                field.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
                9usize,
            )
        } else {
            (u64::from(first), 1usize)
        };
        let size = len.checked_sub(1).ok_or(FrameError::ZeroLength)?;
        let body_len = body_len(size, self.max_msg_size)?;
        let total = (size_len + 1)
            .checked_add(body_len)
            .ok_or(FrameError::SizeOverflow { size })?;
        if buf.len() < total {
            return Ok(Decoded::NeedMore(total - buf.len()));
        }
        let flags = buf[size_len];
        let body = crate::decoder::take_body(buf, size_len + 1, body_len);
        Ok(Decoded::Frame(Frame::message(body, flags & MORE != 0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use proptest::prelude::*;

    fn frame(d: Decoded) -> Frame {
        match d {
            Decoded::Frame(f) => f,
            Decoded::NeedMore(n) => panic!("needs {n} more"),
        }
    }

    #[test]
    fn short_and_long_vectors() {
        let mut out = BytesMut::new();
        put_v1_header(&mut out, 3, true);
        assert_eq!(&out[..], b"\x04\x01");
        out.clear();
        put_v1_header(&mut out, 253, false);
        assert_eq!(&out[..], b"\xfe\x00");
        out.clear();
        put_v1_header(&mut out, 254, false);
        assert_eq!(&out[..], b"\xff\x00\x00\x00\x00\x00\x00\x00\xff\x00");

        let mut dec = V1Decoder::new(None);
        let mut buf = BytesMut::from(&b"\x04\x01abc\x01\x00"[..]);
        assert_eq!(
            frame(dec.decode(&mut buf).unwrap()),
            Frame::message(Bytes::from_static(b"abc"), true)
        );
        assert_eq!(
            frame(dec.decode(&mut buf).unwrap()),
            Frame::message(Bytes::new(), false)
        );
        assert_eq!(dec.decode(&mut buf).unwrap(), Decoded::NeedMore(2));
    }

    #[test]
    fn libzmq_signature_reads_as_an_identity_header() {
        // libzmq's signature for a 3-byte routing id, then the id: a 1.0 frame with MORE set
        // (0x7F has bit 0), which a 1.0 peer takes as the identity.
        let mut buf = BytesMut::from(&b"\xff\x00\x00\x00\x00\x00\x00\x00\x04\x7fabc"[..]);
        let f = frame(V1Decoder::new(None).decode(&mut buf).unwrap());
        assert_eq!(&f.body[..], b"abc");
        assert!(buf.is_empty());
    }

    #[test]
    fn refuses_zero_length_and_oversize() {
        let mut buf = BytesMut::from(&b"\x00\x00"[..]);
        assert_eq!(
            V1Decoder::new(None).decode(&mut buf),
            Err(FrameError::ZeroLength)
        );
        let mut buf = BytesMut::from(&b"\x06\x00"[..]);
        assert_eq!(
            V1Decoder::new(Some(4)).decode(&mut buf),
            Err(FrameError::TooLarge { size: 5, max: 4 })
        );
        let mut buf = BytesMut::from(&b"\xff\x80\x00\x00\x00\x00\x00\x00\x01"[..]);
        assert!(matches!(
            V1Decoder::new(None).decode(&mut buf),
            Err(FrameError::SizeOverflow { .. })
        ));
    }

    proptest! {
        /// Encoding then decoding any frames in any chunking gives them back.
        #[test]
        fn round_trip_in_any_chunking(
            frames in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..400), any::<bool>()), 0..8),
            chunk in 1usize..64,
        ) {
            let mut wire = BytesMut::new();
            for (body, more) in &frames {
                put_v1_header(&mut wire, body.len(), *more);
                wire.extend_from_slice(body);
            }
            let mut dec = V1Decoder::new(None);
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for piece in wire.chunks(chunk) {
                buf.extend_from_slice(piece);
                while let Decoded::Frame(f) = dec.decode(&mut buf).unwrap() {
                    got.push((f.body.to_vec(), f.more));
                }
            }
            prop_assert_eq!(got, frames);
            prop_assert!(buf.is_empty());
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut buf = BytesMut::from(&data[..]);
            let mut dec = V1Decoder::new(Some(1000));
            while let Ok(Decoded::Frame(_)) = dec.decode(&mut buf) {}
        }
    }
}
