//! The codec's shared error vocabulary: who is at fault ([`Fault`]), libzmq's protocol error
//! codes, and the errors of the lowest layers (frame headers, metadata, command bodies).
//!
//! The classification drives what the runtime does next: a malformed or misbehaving peer is
//! dropped and may reconnect, an incompatible one (version, mechanism, socket type, or a peer
//! that sent ERROR) will fail the same way again. `protocol_error_code` gives the value libzmq
//! reports in a `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL` monitor event (include/zmq.h).
//!
//! This file imports nothing from the crate: errors of higher layers live beside what raises
//! them (`GreetingError` in greeting.rs, `CurveError` in curve_error.rs, `HandshakeError` in
//! handshake_error.rs) and build on these, so the crate's imports run one way.

use std::fmt;

use bytes::Bytes;

/// Who caused a failure.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The bytes do not follow the grammar.
    Malformed,
    /// Well-formed, but not allowed at this point or above a limit.
    PeerMisbehaved,
    /// The peer speaks something we do not (version, mechanism, socket type) or refused us.
    PeerIncompatible,
    /// Our own configuration is unusable (e.g. an invalid property name).
    ApiMisuse,
}

/// libzmq's `ZMQ_PROTOCOL_ERROR_*` values (include/zmq.h).
pub mod protocol_error {
    /// ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED
    pub const ZMTP_UNSPECIFIED: u32 = 0x1000_0000;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND
    pub const ZMTP_UNEXPECTED_COMMAND: u32 = 0x1000_0001;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE
    pub const ZMTP_INVALID_SEQUENCE: u32 = 0x1000_0002;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE
    pub const ZMTP_KEY_EXCHANGE: u32 = 0x1000_0003;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED
    pub const ZMTP_MALFORMED_COMMAND_UNSPECIFIED: u32 = 0x1000_0011;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE
    pub const ZMTP_MALFORMED_COMMAND_MESSAGE: u32 = 0x1000_0012;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO
    pub const ZMTP_MALFORMED_COMMAND_HELLO: u32 = 0x1000_0013;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE
    pub const ZMTP_MALFORMED_COMMAND_INITIATE: u32 = 0x1000_0014;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR
    pub const ZMTP_MALFORMED_COMMAND_ERROR: u32 = 0x1000_0015;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY
    pub const ZMTP_MALFORMED_COMMAND_READY: u32 = 0x1000_0016;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME
    pub const ZMTP_MALFORMED_COMMAND_WELCOME: u32 = 0x1000_0017;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA
    pub const ZMTP_INVALID_METADATA: u32 = 0x1000_0018;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
    pub const ZMTP_CRYPTOGRAPHIC: u32 = 0x1100_0001;
    /// ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
    pub const ZMTP_MECHANISM_MISMATCH: u32 = 0x1100_0002;
}

/// A frame header the decoder refuses.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The body is larger than the configured maximum (libzmq: EMSGSIZE).
    TooLarge {
        /// Size announced by the frame header.
        size: u64,
        /// The configured maximum.
        max: u64,
    },
    /// A long size above `i64::MAX` or above what this platform can address.
    SizeOverflow {
        /// Size announced by the frame header.
        size: u64,
    },
    /// A ZMTP 1.0 frame whose length (which counts its flags octet) is 0.
    ZeroLength,
}

impl FrameError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            Self::TooLarge { .. } => Fault::PeerMisbehaved,
            Self::SizeOverflow { .. } | Self::ZeroLength => Fault::Malformed,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { size, max } => {
                write!(
                    f,
                    "frame of {size} bytes exceeds the maximum message size {max}"
                )
            }
            Self::SizeOverflow { size } => {
                write!(f, "frame size {size} is not representable on this platform")
            }
            Self::ZeroLength => f.write_str("ZMTP 1.0 frame of length 0 (no flags octet)"),
        }
    }
}

impl std::error::Error for FrameError {}

/// A metadata (property list) encoding we refuse.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataError {
    /// The property list ends in the middle of a property.
    Truncated,
    /// A property name that is empty, longer than 255 bytes or has a byte outside
    /// `[A-Za-z0-9-_.+]`.
    InvalidName {
        /// The offending name.
        name: Bytes,
    },
    /// A value length above `i32::MAX` (RFC 37: `4OCTET` with the top bit clear).
    ValueTooLong {
        /// The announced length.
        len: u32,
    },
}

impl MetadataError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        Fault::Malformed
    }
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("metadata ends inside a property"),
            Self::InvalidName { name } => write!(f, "invalid metadata property name {name:?}"),
            Self::ValueTooLong { len } => {
                write!(f, "metadata value length {len} exceeds 2^31-1")
            }
        }
    }
}

impl std::error::Error for MetadataError {}

/// A command body we refuse.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// The body is empty or its name length is 0.
    EmptyName,
    /// The name length points past the end of the body.
    TruncatedName {
        /// The announced name length.
        name_len: u8,
        /// The bytes available after the length octet.
        available: usize,
    },
    /// READY (or another property-carrying command) with bad metadata.
    Metadata(MetadataError),
    /// ERROR whose reason length is missing or points past the end.
    MalformedError,
    /// PING without its two TTL bytes.
    MalformedPing,
}

impl CommandError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        Fault::Malformed
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyName => f.write_str("command without a name"),
            Self::TruncatedName {
                name_len,
                available,
            } => write!(
                f,
                "command name length {name_len} exceeds the {available} bytes available"
            ),
            Self::Metadata(e) => write!(f, "malformed READY: {e}"),
            Self::MalformedError => f.write_str("malformed ERROR command"),
            Self::MalformedPing => f.write_str("PING command shorter than its TTL field"),
        }
    }
}

impl std::error::Error for CommandError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Metadata(e) => Some(e),
            _ => None,
        }
    }
}

impl From<MetadataError> for CommandError {
    fn from(e: MetadataError) -> Self {
        Self::Metadata(e)
    }
}
