//! One ZMTP 3.x frame: a flags octet, a 1- or 8-byte size, then the body (RFC 23/37 §Framing).

use bytes::Bytes;

/// Flag bit: another frame of the same message follows.
pub const MORE: u8 = 0x01;
/// Flag bit: the size field is a u64 (big-endian) instead of one octet.
pub const LONG: u8 = 0x02;
/// Flag bit: the frame carries a command, not message data.
pub const COMMAND: u8 = 0x04;

/// Largest body that travels with the one-octet size field. libzmq sets LONG exactly when the
/// body is bigger than this (src/v2_encoder.cpp), so we do the same to stay byte-identical.
pub const SHORT_MAX: usize = 255;

/// A decoded frame. The body is a zero-copy slice of the receive buffer.
///
/// `more` is reported as it came off the wire even on a command frame: libzmq's decoder
/// (src/v2_decoder.cpp `flags_ready`) accepts MORE on commands, so we do not reject it either;
/// the runtime decides what a command with MORE means (libzmq ignores the flag for commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The frame body (for a command: name length, name, data).
    pub body: Bytes,
    /// Whether another frame of the same message follows.
    pub more: bool,
    /// Whether this is a command frame.
    pub command: bool,
}

impl Frame {
    /// A message-data frame.
    pub fn message(body: Bytes, more: bool) -> Self {
        Self {
            body,
            more,
            command: false,
        }
    }

    /// A command frame (never with MORE).
    pub fn command(body: Bytes) -> Self {
        Self {
            body,
            more: false,
            command: true,
        }
    }

    /// The flags octet this frame is sent with.
    pub fn flags(&self) -> u8 {
        flags_for(self.body.len(), self.more, self.command)
    }
}

/// The flags octet for a frame of `len` body bytes.
pub(crate) fn flags_for(len: usize, more: bool, command: bool) -> u8 {
    let mut flags = 0;
    if more {
        flags |= MORE;
    }
    if command {
        flags |= COMMAND;
    }
    if len > SHORT_MAX {
        flags |= LONG;
    }
    flags
}

/// Length of the frame header (flags + size) for a body of `len` bytes.
pub(crate) fn header_len(len: usize) -> usize {
    if len > SHORT_MAX {
        9
    } else {
        2
    }
}

/// Appends the header (flags + size) to `out`.
pub(crate) fn put_header(out: &mut bytes::BytesMut, len: usize, more: bool, command: bool) {
    use bytes::BufMut;
    out.put_u8(flags_for(len, more, command));
    match u8::try_from(len) {
        Ok(short) => out.put_u8(short),
        // usize -> u64 never loses bits on any platform Rust supports.
        Err(_) => out.put_u64(len as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;

    #[test]
    fn flags_follow_libzmq() {
        assert_eq!(
            Frame::message(Bytes::from_static(b"x"), false).flags(),
            0x00
        );
        assert_eq!(Frame::message(Bytes::from_static(b"x"), true).flags(), 0x01);
        assert_eq!(
            Frame::message(Bytes::from(vec![0; 256]), false).flags(),
            0x02
        );
        assert_eq!(
            Frame::message(Bytes::from(vec![0; 256]), true).flags(),
            0x03
        );
        assert_eq!(
            Frame::command(Bytes::from_static(b"\x04PING")).flags(),
            0x04
        );
        assert_eq!(Frame::command(Bytes::from(vec![0; 300])).flags(), 0x06);
    }

    #[test]
    fn header_short_and_long() {
        let mut out = BytesMut::new();
        put_header(&mut out, 255, true, false);
        assert_eq!(&out[..], &[0x01, 0xFF]);
        out.clear();
        put_header(&mut out, 256, false, false);
        assert_eq!(&out[..], &[0x02, 0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(header_len(255), 2);
        assert_eq!(header_len(256), 9);
    }
}
