//! How an engine cuts the bytes it reads into frames and puts frames on the wire: ZMTP 2.0/3.x
//! framing (flags, size, body), ZMTP 1.0 framing (size, flags, body) for libzmq 2.x peers, or
//! none at all for a STREAM socket's raw connections
//! (libzmq raw_decoder.cpp / raw_encoder.cpp), where each read is one frame and each frame's
//! body is written as it is.

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    put_v1_header, CurveError, CurveReceiver, Decoded, Encoder, Frame, FrameDecoder, FrameError,
    V1Decoder,
};

/// An engine's framing.
#[derive(Debug)]
pub(crate) enum Framing {
    /// ZMTP frames (2.0 and 3.x share the layout).
    Zmtp(FrameDecoder),
    /// ZMTP 1.0 frames.
    V1(V1Decoder),
    /// ZMTP frames, each a CURVE MESSAGE to unbox (the encoder boxes the other way).
    Curve(FrameDecoder, CurveReceiver),
    /// No framing: a STREAM socket's peer.
    Raw,
}

/// Why an engine could not take the next frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FramingError {
    /// The frame header was refused (size).
    Frame(FrameError),
    /// A CURVE MESSAGE was malformed, replayed, reordered or forged.
    Curve(CurveError),
}

impl Framing {
    /// The next frame in `buf`, as [`FrameDecoder::decode`]. Raw: everything buffered, as one
    /// message frame (libzmq hands each read to the application the same way).
    pub(crate) fn decode(&mut self, buf: &mut BytesMut) -> Result<Decoded, FramingError> {
        match self {
            Framing::Zmtp(decoder) => decoder.decode(buf).map_err(FramingError::Frame),
            Framing::V1(decoder) => decoder.decode(buf).map_err(FramingError::Frame),
            Framing::Curve(decoder, curve) => match decoder.decode(buf) {
                Ok(Decoded::Frame(frame)) => {
                    let u = curve.decode(&frame.body).map_err(FramingError::Curve)?;
                    Ok(Decoded::Frame(Frame {
                        body: u.body,
                        more: u.more,
                        command: u.command,
                    }))
                }
                other => other.map_err(FramingError::Frame),
            },
            Framing::Raw if buf.is_empty() => Ok(Decoded::NeedMore(1)),
            Framing::Raw => Ok(Decoded::Frame(Frame::message(buf.split().freeze(), false))),
        }
    }

    /// Whether this is a STREAM socket's raw connection.
    pub(crate) fn is_raw(&self) -> bool {
        matches!(self, Framing::Raw)
    }

    /// Queues one outbound frame.
    pub(crate) fn encode(&self, encoder: &mut Encoder, body: &Bytes, more: bool) {
        match self {
            Framing::Zmtp(_) | Framing::Curve(..) => encoder.push_frame(body, more),
            Framing::V1(_) => {
                let mut header = [0u8; 10];
                let mut room = &mut header[..];
                put_v1_header(&mut room, body.len(), more);
                let used = 10 - room.len();
                encoder.push_raw(&header[..used]);
                encoder.push_body(body);
            }
            Framing::Raw => encoder.push_body(body),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_takes_each_read_whole_and_writes_bodies_bare() {
        let mut raw = Framing::Raw;
        let mut buf = BytesMut::new();
        assert_eq!(raw.decode(&mut buf), Ok(Decoded::NeedMore(1)));
        buf.extend_from_slice(b"\x01\x02GET /");
        match raw.decode(&mut buf) {
            Ok(Decoded::Frame(f)) => {
                assert_eq!(&f.body[..], b"\x01\x02GET /");
                assert!(!f.more && !f.command);
            }
            other => panic!("{other:?}"),
        }
        assert!(buf.is_empty());
        let mut enc = Encoder::new();
        raw.encode(&mut enc, &Bytes::from_static(b"ok"), true);
        Framing::Zmtp(FrameDecoder::new(None)).encode(&mut enc, &Bytes::from_static(b"z"), true);
        assert_eq!(enc.len(), 5);
    }
}
