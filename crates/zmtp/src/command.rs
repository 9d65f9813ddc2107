//! ZMTP 3.1 commands: the body of a command frame is `name_len (1) | name | data`
//! (RFC 37 §Commands; the prose's "null octet separator" is a spec bug, the grammar and every
//! implementation use the length prefix).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::CommandError;
use crate::metadata::Metadata;

const READY: &[u8] = b"READY";
const ERROR: &[u8] = b"ERROR";
const PING: &[u8] = b"PING";
const PONG: &[u8] = b"PONG";
const SUBSCRIBE: &[u8] = b"SUBSCRIBE";
const CANCEL: &[u8] = b"CANCEL";

/// RFC 37: a PING context is at most 16 octets. libzmq truncates a longer one when building
/// the PONG (src/zmtp_engine.cpp `process_heartbeat_message`), so decode accepts any length and
/// encode writes at most this many.
pub const PING_CONTEXT_MAX: usize = 16;

/// A command. Payloads are zero-copy slices of the frame body.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// READY with the sender's connection metadata.
    Ready(Metadata),
    /// ERROR with its reason (at most 255 bytes on the wire).
    Error(Bytes),
    /// PING (3.1 heartbeat): `ttl` in deciseconds, `context` echoed in the PONG.
    Ping {
        /// Time to live in deciseconds (0 = none).
        ttl: u16,
        /// Opaque context the peer must echo.
        context: Bytes,
    },
    /// PONG echoing a PING's context.
    Pong {
        /// The echoed context.
        context: Bytes,
    },
    /// SUBSCRIBE (3.1) with its topic prefix.
    Subscribe(Bytes),
    /// CANCEL (3.1) with its topic prefix.
    Cancel(Bytes),
    /// Any other command (JOIN, LEAVE, mechanism commands...), passed through.
    Unknown {
        /// The command name.
        name: Bytes,
        /// Everything after the name.
        data: Bytes,
    },
}

impl Command {
    /// Parses a command-frame body. Never reads past the end; names compare byte for byte,
    /// as libzmq does.
    pub fn decode(body: Bytes) -> Result<Command, CommandError> {
        let name_len = match body.first() {
            None | Some(0) => return Err(CommandError::EmptyName),
            Some(&n) => n,
        };
        let end = 1 + usize::from(name_len);
        if body.len() < end {
            return Err(CommandError::TruncatedName {
                name_len,
                available: body.len() - 1,
            });
        }
        let data = body.slice(end..);
        Ok(match &body[1..end] {
            READY => Command::Ready(Metadata::decode(data)?),
            ERROR => Command::Error(decode_error_reason(&data)?),
            PING => {
                if data.len() < 2 {
                    return Err(CommandError::MalformedPing);
                }
                Command::Ping {
                    ttl: u16::from_be_bytes([data[0], data[1]]),
                    context: data.slice(2..),
                }
            }
            PONG => Command::Pong { context: data },
            SUBSCRIBE => Command::Subscribe(data),
            CANCEL => Command::Cancel(data),
            _ => Command::Unknown {
                name: body.slice(1..end),
                data,
            },
        })
    }

    /// The command's name as sent on the wire.
    pub fn name(&self) -> &[u8] {
        match self {
            Self::Ready(_) => READY,
            Self::Error(_) => ERROR,
            Self::Ping { .. } => PING,
            Self::Pong { .. } => PONG,
            Self::Subscribe(_) => SUBSCRIBE,
            Self::Cancel(_) => CANCEL,
            Self::Unknown { name, .. } => &name[..name.len().min(255)],
        }
    }

    /// Appends the command-frame body (not the frame header) to `out`.
    ///
    /// Fields longer than the wire allows are truncated: an ERROR reason to 255 bytes, a
    /// PING/PONG context to [`PING_CONTEXT_MAX`], an unknown name to 255 bytes.
    pub fn encode(&self, out: &mut BytesMut) {
        out.reserve(self.encoded_len());
        let name = self.name();
        // name() is at most 255 bytes.
        out.put_u8(u8::try_from(name.len()).unwrap_or(u8::MAX));
        out.put_slice(name);
        match self {
            Self::Ready(m) => m.encode(out),
            Self::Error(reason) => {
                let reason = &reason[..reason.len().min(255)];
                out.put_u8(u8::try_from(reason.len()).unwrap_or(u8::MAX));
                out.put_slice(reason);
            }
            Self::Ping { ttl, context } => {
                out.put_u16(*ttl);
                out.put_slice(&context[..context.len().min(PING_CONTEXT_MAX)]);
            }
            Self::Pong { context } => {
                out.put_slice(&context[..context.len().min(PING_CONTEXT_MAX)]);
            }
            Self::Subscribe(topic) | Self::Cancel(topic) => out.put_slice(topic),
            Self::Unknown { data, .. } => out.put_slice(data),
        }
    }

    /// Length of what [`Command::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        1 + self.name().len()
            + match self {
                Self::Ready(m) => m.encoded_len(),
                Self::Error(reason) => 1 + reason.len().min(255),
                Self::Ping { context, .. } => 2 + context.len().min(PING_CONTEXT_MAX),
                Self::Pong { context } => context.len().min(PING_CONTEXT_MAX),
                Self::Subscribe(topic) | Self::Cancel(topic) => topic.len(),
                Self::Unknown { data, .. } => data.len(),
            }
    }
}

/// ERROR data: `reason_len (1) | reason`. Like libzmq (src/null_mechanism.cpp
/// `process_error`) a length past the end is refused and trailing bytes are ignored.
fn decode_error_reason(data: &Bytes) -> Result<Bytes, CommandError> {
    let len = usize::from(*data.first().ok_or(CommandError::MalformedError)?);
    if data.len() - 1 < len {
        return Err(CommandError::MalformedError);
    }
    Ok(data.slice(1..1 + len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MetadataError;
    use proptest::prelude::*;

    fn enc(c: &Command) -> Vec<u8> {
        let mut out = BytesMut::new();
        c.encode(&mut out);
        assert_eq!(out.len(), c.encoded_len());
        out.to_vec()
    }

    fn round_trip(c: &Command, wire: &[u8]) {
        assert_eq!(enc(c), wire);
        assert_eq!(&Command::decode(Bytes::copy_from_slice(wire)).unwrap(), c);
    }

    #[test]
    fn vectors() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", Bytes::from_static(b"ROUTER"))
            .unwrap();
        round_trip(
            &Command::Ready(m),
            b"\x05READY\x0bSocket-Type\0\0\0\x06ROUTER",
        );
        round_trip(&Command::Ready(Metadata::new()), b"\x05READY");
        round_trip(
            &Command::Error(Bytes::from_static(b"400")),
            b"\x05ERROR\x03400",
        );
        round_trip(&Command::Error(Bytes::new()), b"\x05ERROR\x00");
        round_trip(
            &Command::Ping {
                ttl: 0x0102,
                context: Bytes::from_static(b"ctx"),
            },
            b"\x04PING\x01\x02ctx",
        );
        round_trip(
            &Command::Pong {
                context: Bytes::from_static(b"ctx"),
            },
            b"\x04PONGctx",
        );
        round_trip(
            &Command::Subscribe(Bytes::from_static(b"A")),
            b"\x09SUBSCRIBEA",
        );
        round_trip(&Command::Subscribe(Bytes::new()), b"\x09SUBSCRIBE");
        round_trip(&Command::Cancel(Bytes::from_static(b"AB")), b"\x06CANCELAB");
        round_trip(
            &Command::Unknown {
                name: Bytes::from_static(b"JOIN"),
                data: Bytes::from_static(b"grp"),
            },
            b"\x04JOINgrp",
        );
    }

    #[test]
    fn long_ping_context_accepted_and_truncated_on_encode() {
        let wire = Bytes::from_static(b"\x04PING\x00\x0a0123456789abcdefXYZ");
        let Command::Ping { ttl, context } = Command::decode(wire).unwrap() else {
            panic!("not a PING");
        };
        assert_eq!(ttl, 10);
        assert_eq!(context.len(), 19);
        let pong = Command::Pong { context };
        assert_eq!(enc(&pong), b"\x04PONG0123456789abcdef");
    }

    /// The frame_decoder fuzz target's finding of 2026-11-26 (session 21): a PING frame whose
    /// 86-byte context decodes whole but re-encodes cut to 16 bytes. That is the contract
    /// (libzmq's PONG carries at most 16), so the target now checks for a prefix there.
    #[test]
    fn fuzz_ping_context_past_max_reencodes_as_a_prefix() {
        let mut wire = b"\x04PING\x00\x00".to_vec();
        wire.extend_from_slice(&[0x94; 86]);
        let cmd = Command::decode(Bytes::copy_from_slice(&wire)).unwrap();
        let Command::Ping { ttl: 0, context } = &cmd else {
            panic!("not a PING with TTL 0: {cmd:?}");
        };
        assert_eq!(context.len(), 86);
        let again = enc(&cmd);
        assert_eq!(again.len(), 1 + 4 + 2 + PING_CONTEXT_MAX);
        assert!(wire.starts_with(&again));
    }

    /// Bytes after an ERROR's reason are ignored (as libzmq does), so they do not come back
    /// on encode: the re-encoding is a prefix of what was decoded.
    #[test]
    fn error_trailing_bytes_ignored_and_not_reencoded() {
        let wire = b"\x05ERROR\x03badXYZ";
        let cmd = Command::decode(Bytes::from_static(wire)).unwrap();
        assert_eq!(cmd, Command::Error(Bytes::from_static(b"bad")));
        assert_eq!(enc(&cmd), b"\x05ERROR\x03bad");
    }

    #[test]
    fn refuses_malformed() {
        let d = |b: &'static [u8]| Command::decode(Bytes::from_static(b));
        assert_eq!(d(b""), Err(CommandError::EmptyName));
        assert_eq!(d(b"\x00"), Err(CommandError::EmptyName));
        assert_eq!(
            d(b"\x05REA"),
            Err(CommandError::TruncatedName {
                name_len: 5,
                available: 3
            })
        );
        assert_eq!(d(b"\x05ERROR"), Err(CommandError::MalformedError));
        assert_eq!(d(b"\x05ERROR\x04abc"), Err(CommandError::MalformedError));
        // libzmq ignores bytes after the reason.
        assert_eq!(
            d(b"\x05ERROR\x01ab"),
            Ok(Command::Error(Bytes::from_static(b"a")))
        );
        assert_eq!(d(b"\x04PING\x00"), Err(CommandError::MalformedPing));
        assert_eq!(
            d(b"\x05READY\x01"),
            Err(CommandError::Metadata(MetadataError::Truncated))
        );
        // Names are case-sensitive: "ready" is just an unknown command.
        assert!(matches!(d(b"\x05ready"), Ok(Command::Unknown { .. })));
    }

    #[test]
    fn decode_is_zero_copy() {
        let wire = Bytes::from_static(b"\x09SUBSCRIBEtopic");
        let Ok(Command::Subscribe(t)) = Command::decode(wire.clone()) else {
            panic!("not SUBSCRIBE");
        };
        assert_eq!(t.as_ptr(), wire[10..].as_ptr());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(c) = Command::decode(Bytes::from(data)) {
                // Whatever decodes re-encodes to something that decodes the same.
                let mut out = BytesMut::new();
                c.encode(&mut out);
                prop_assert_eq!(out.len(), c.encoded_len());
                if let Ok(again) = Command::decode(out.freeze()) {
                    if !matches!(c, Command::Ping { .. } | Command::Pong { .. }) {
                        prop_assert_eq!(again, c);
                    }
                }
            }
        }

        #[test]
        fn named_commands_with_any_payload(
            data in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            // Known names reach each command's own data parser with arbitrary data.
            for name in [READY, ERROR, PING, PONG, SUBSCRIBE, CANCEL] {
                let mut body = vec![u8::try_from(name.len()).unwrap()];
                body.extend_from_slice(name);
                body.extend_from_slice(&data);
                if let Ok(c) = Command::decode(Bytes::from(body)) {
                    prop_assert_eq!(c.name(), name);
                }
            }
        }
    }
}
