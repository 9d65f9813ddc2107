//! Why a handshake failed, whichever step refused it: the greeting, a frame, a command, the
//! security mechanism (NULL, PLAIN, CURVE), ZAP or the ZMTP 1.0/2.0 fallback. It has its own file
//! because every mechanism raises it and `handshake.rs` drives the mechanisms, so the mechanisms
//! import it from here rather than from the file that imports them.

use std::fmt;

use bytes::Bytes;

use crate::curve_error::CurveError;
use crate::error::{protocol_error, CommandError, Fault, FrameError, MetadataError};
use crate::greeting::{GreetingError, Mechanism};
use crate::socket_type::SocketType;
use crate::zap::ZapReplyError;

/// Why a handshake failed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    /// The peer's greeting was refused.
    Greeting(GreetingError),
    /// A frame header was refused.
    Frame(FrameError),
    /// A command body was malformed.
    Command(CommandError),
    /// The peer's greeting names another security mechanism than ours.
    MechanismMismatch {
        /// Our mechanism.
        ours: Mechanism,
        /// The peer's mechanism.
        peer: Mechanism,
    },
    /// A message frame arrived before the peer's READY.
    UnexpectedMessage,
    /// A command other than READY or ERROR arrived before the peer's READY.
    UnexpectedCommand {
        /// The command's name.
        name: Bytes,
    },
    /// The peer's READY has no Socket-Type property.
    MissingSocketType,
    /// The peer's Socket-Type is not a name we know.
    UnknownSocketType {
        /// The value received.
        name: Bytes,
    },
    /// The peer's socket type cannot talk to ours (RFC 23 pairing table); we sent ERROR.
    IncompatibleSocketType {
        /// Our socket type.
        ours: SocketType,
        /// The peer's socket type.
        peer: SocketType,
    },
    /// The peer sent ERROR: it refuses this connection and it must not be retried as is.
    PeerError {
        /// The reason text the peer gave.
        reason: Bytes,
    },
    /// One of our own properties has an invalid name (HandshakeConfig::properties).
    InvalidLocalProperty(MetadataError),
    /// A frame header during the handshake announced more than the handshake accepts
    /// ([`crate::MAX_HANDSHAKE_FRAME`]), before the peer is known.
    FrameTooLarge {
        /// Size announced by the frame header.
        size: u64,
        /// The handshake's limit.
        max: u64,
    },
    /// A PLAIN HELLO whose username or password length points past the end, or with bytes
    /// after the password (RFC 24).
    MalformedHello,
    /// A PLAIN WELCOME with data (RFC 24: it has none).
    MalformedWelcome,
    /// Our ZAP handler refused the client with this status (300, 400 or 500); ERROR sent.
    ZapRefused {
        /// The handler's status code.
        status: u16,
    },
    /// Our ZAP handler's reply was not one libzmq accepts.
    ZapReply(ZapReplyError),
    /// A ZAP reply was handed to a handshake that asked for none.
    UnexpectedZapReply,
    /// A PLAIN server with no ZAP handler bound: libzmq 4.3 refuses every client (EFAULT).
    NoZapHandler,
    /// A CURVE command or box refused.
    Curve(CurveError),
    /// A ZMTP 1.0 or 2.0 peer while PLAIN or CURVE is configured: those versions have no
    /// mechanism, so the peer could only get in unauthenticated.
    SecurityNeedsZmtp3,
}

impl HandshakeError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            Self::Greeting(e) => e.fault(),
            Self::Frame(e) => e.fault(),
            Self::Command(e) => e.fault(),
            Self::UnexpectedMessage
            | Self::UnexpectedCommand { .. }
            | Self::FrameTooLarge { .. } => Fault::PeerMisbehaved,
            Self::MissingSocketType
            | Self::UnknownSocketType { .. }
            | Self::MalformedHello
            | Self::MalformedWelcome => Fault::Malformed,
            Self::ZapRefused { .. } => Fault::PeerIncompatible,
            Self::ZapReply(_) | Self::UnexpectedZapReply | Self::NoZapHandler => Fault::ApiMisuse,
            Self::Curve(CurveError::NoRandomness) => Fault::ApiMisuse,
            Self::Curve(_) => Fault::PeerMisbehaved,
            Self::SecurityNeedsZmtp3 => Fault::PeerIncompatible,
            Self::MechanismMismatch { .. }
            | Self::IncompatibleSocketType { .. }
            | Self::PeerError { .. } => Fault::PeerIncompatible,
            Self::InvalidLocalProperty(_) => Fault::ApiMisuse,
        }
    }

    /// The `ZMQ_PROTOCOL_ERROR_ZMTP_*` value libzmq would report for this failure.
    ///
    /// Bad peer metadata (including a Socket-Type that cannot talk to ours) is INVALID_METADATA,
    /// the code libzmq's PLAIN and CURVE clients report for it (its NULL mechanism and its
    /// servers report no event at all: the socket layer decides whether to report);
    /// anything but READY or ERROR from a NULL peer is UNEXPECTED_COMMAND and a short ERROR is
    /// MALFORMED_COMMAND_ERROR (src/null_mechanism.cpp).
    pub fn protocol_error_code(&self) -> u32 {
        use protocol_error as p;
        match self {
            // libzmq does not check the name's characters; it just finds that it differs
            // from its own mechanism.
            Self::MechanismMismatch { .. }
            | Self::Greeting(GreetingError::InvalidMechanism { .. }) => p::ZMTP_MECHANISM_MISMATCH,
            Self::Greeting(_)
            | Self::Frame(_)
            | Self::PeerError { .. }
            | Self::FrameTooLarge { .. } => p::ZMTP_UNSPECIFIED,
            Self::InvalidLocalProperty(_) => p::ZMTP_UNSPECIFIED,
            Self::Command(CommandError::Metadata(_)) => p::ZMTP_INVALID_METADATA,
            Self::Command(CommandError::MalformedError) => p::ZMTP_MALFORMED_COMMAND_ERROR,
            Self::Command(_) => p::ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
            Self::UnexpectedMessage | Self::UnexpectedCommand { .. } => p::ZMTP_UNEXPECTED_COMMAND,
            Self::MissingSocketType
            | Self::UnknownSocketType { .. }
            | Self::IncompatibleSocketType { .. } => p::ZMTP_INVALID_METADATA,
            Self::MalformedHello => p::ZMTP_MALFORMED_COMMAND_HELLO,
            Self::MalformedWelcome => p::ZMTP_MALFORMED_COMMAND_WELCOME,
            Self::ZapReply(e) => e.protocol_error_code(),
            Self::ZapRefused { .. } | Self::UnexpectedZapReply | Self::NoZapHandler => {
                p::ZMTP_UNSPECIFIED
            }
            Self::Curve(e) => e.protocol_error_code(),
            Self::SecurityNeedsZmtp3 => p::ZMTP_UNSPECIFIED,
        }
    }

    /// The ZAP status code (300, 400 or 500) when the peer refused us with an ERROR whose
    /// reason is one: libzmq then reports `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH` with that code
    /// rather than a protocol error (src/mechanism_base.cpp `handle_error_reason`).
    pub fn auth_status(&self) -> Option<u32> {
        let reason = match self {
            Self::ZapRefused { status } => return Some(u32::from(*status)),
            Self::PeerError { reason } => reason,
            _ => return None,
        };
        match &reason[..] {
            [d @ b'3'..=b'5', b'0', b'0'] => Some(u32::from(d - b'0') * 100),
            _ => None,
        }
    }

    /// Whether the peer itself refused us with an ERROR command (RFC 37: do not retry with the
    /// same credentials).
    pub fn is_peer_error(&self) -> bool {
        matches!(self, Self::PeerError { .. })
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Greeting(e) => write!(f, "greeting refused: {e}"),
            Self::Frame(e) => write!(f, "frame refused: {e}"),
            Self::Command(e) => write!(f, "command refused: {e}"),
            Self::MechanismMismatch { ours, peer } => write!(
                f,
                "security mechanism mismatch: we use {:?}, peer uses {:?}",
                Bytes::copy_from_slice(ours.name()),
                Bytes::copy_from_slice(peer.name())
            ),
            Self::UnexpectedMessage => f.write_str("message frame received before READY"),
            Self::UnexpectedCommand { name } => {
                write!(f, "unexpected command {name:?} during the handshake")
            }
            Self::MissingSocketType => f.write_str("peer READY lacks the Socket-Type property"),
            Self::UnknownSocketType { name } => write!(f, "unknown peer socket type {name:?}"),
            Self::IncompatibleSocketType { ours, peer } => write!(
                f,
                "socket type {} cannot talk to a {} peer",
                ours.name(),
                peer.name()
            ),
            Self::PeerError { reason } => write!(f, "peer refused the connection: {reason:?}"),
            Self::InvalidLocalProperty(e) => write!(f, "invalid local property: {e}"),
            Self::FrameTooLarge { size, max } => write!(
                f,
                "handshake frame of {size} bytes exceeds the handshake limit of {max}"
            ),
            Self::MalformedHello => f.write_str("malformed PLAIN HELLO"),
            Self::MalformedWelcome => f.write_str("malformed PLAIN WELCOME"),
            Self::ZapRefused { status } => write!(f, "ZAP handler refused the peer ({status})"),
            Self::ZapReply(e) => write!(f, "{e}"),
            Self::UnexpectedZapReply => f.write_str("ZAP reply without a ZAP request"),
            Self::NoZapHandler => f.write_str("no ZAP handler bound for a PLAIN server"),
            Self::Curve(e) => write!(f, "{e}"),
            Self::SecurityNeedsZmtp3 => {
                f.write_str("a ZMTP 1.0/2.0 peer cannot use the configured security mechanism")
            }
        }
    }
}

impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Greeting(e) => Some(e),
            Self::Frame(e) => Some(e),
            Self::Command(e) => Some(e),
            Self::InvalidLocalProperty(e) => Some(e),
            _ => None,
        }
    }
}

impl From<GreetingError> for HandshakeError {
    fn from(e: GreetingError) -> Self {
        Self::Greeting(e)
    }
}

impl From<FrameError> for HandshakeError {
    fn from(e: FrameError) -> Self {
        Self::Frame(e)
    }
}

impl From<CommandError> for HandshakeError {
    fn from(e: CommandError) -> Self {
        Self::Command(e)
    }
}

impl From<MetadataError> for HandshakeError {
    fn from(e: MetadataError) -> Self {
        Self::Command(CommandError::Metadata(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_zmq_h() {
        assert_eq!(
            HandshakeError::UnexpectedCommand {
                name: Bytes::from_static(b"PING")
            }
            .protocol_error_code(),
            0x1000_0001
        );
        assert_eq!(
            HandshakeError::Command(CommandError::MalformedError).protocol_error_code(),
            0x1000_0015
        );
        assert_eq!(
            HandshakeError::from(MetadataError::Truncated).protocol_error_code(),
            0x1000_0018
        );
        let mm = HandshakeError::MechanismMismatch {
            ours: Mechanism::Null,
            peer: Mechanism::Curve,
        };
        assert_eq!(mm.protocol_error_code(), 0x1100_0002);
        assert_eq!(mm.fault(), Fault::PeerIncompatible);
        assert!(!mm.is_peer_error());
        let pe = HandshakeError::PeerError {
            reason: Bytes::from_static(b"400"),
        };
        assert!(pe.is_peer_error());
        assert_eq!(pe.auth_status(), Some(400));
        for (reason, status) in [
            (&b"300"[..], Some(300)),
            (b"500", Some(500)),
            (b"200", None),
        ] {
            let e = HandshakeError::PeerError {
                reason: Bytes::copy_from_slice(reason),
            };
            assert_eq!(e.auth_status(), status);
        }
        assert_eq!(mm.auth_status(), None);
        assert!(pe.to_string().contains("400"));
    }
}
