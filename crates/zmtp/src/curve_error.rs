//! Why a CURVE handshake or a CURVE MESSAGE was refused, with the protocol error libzmq 4.3
//! reports for each (src/curve_client.cpp, src/curve_server.cpp,
//! src/curve_mechanism_base.cpp).

use std::fmt;

use crate::error::protocol_error as p;

/// A CURVE refusal.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CurveError {
    /// HELLO of the wrong size or version.
    MalformedHello,
    /// WELCOME of the wrong size.
    MalformedWelcome,
    /// INITIATE shorter than its fixed part.
    MalformedInitiate,
    /// READY shorter than its fixed part.
    MalformedReady,
    /// MESSAGE shorter than its fixed part, or not a MESSAGE.
    MalformedMessage,
    /// A box that does not open, or a cookie that is not ours.
    Cryptographic,
    /// The vouch names other keys than the connection's.
    KeyExchange,
    /// A short nonce that is not above the previous one (a replay or a reorder).
    InvalidSequence,
    /// The OS gave no randomness for a key or a nonce.
    NoRandomness,
}

impl CurveError {
    /// libzmq's `ZMQ_PROTOCOL_ERROR_ZMTP_*` for this refusal.
    pub fn protocol_error_code(self) -> u32 {
        match self {
            Self::MalformedHello => p::ZMTP_MALFORMED_COMMAND_HELLO,
            Self::MalformedWelcome => p::ZMTP_MALFORMED_COMMAND_WELCOME,
            Self::MalformedInitiate => p::ZMTP_MALFORMED_COMMAND_INITIATE,
            Self::MalformedReady => p::ZMTP_MALFORMED_COMMAND_READY,
            Self::MalformedMessage => p::ZMTP_MALFORMED_COMMAND_MESSAGE,
            Self::Cryptographic => p::ZMTP_CRYPTOGRAPHIC,
            Self::KeyExchange => p::ZMTP_KEY_EXCHANGE,
            Self::InvalidSequence => p::ZMTP_INVALID_SEQUENCE,
            Self::NoRandomness => p::ZMTP_UNSPECIFIED,
        }
    }
}

impl fmt::Display for CurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MalformedHello => "malformed CURVE HELLO",
            Self::MalformedWelcome => "malformed CURVE WELCOME",
            Self::MalformedInitiate => "malformed CURVE INITIATE",
            Self::MalformedReady => "malformed CURVE READY",
            Self::MalformedMessage => "malformed CURVE MESSAGE",
            Self::Cryptographic => "CURVE box does not open",
            Self::KeyExchange => "CURVE vouch does not match the connection's keys",
            Self::InvalidSequence => "CURVE nonce not above the previous one",
            Self::NoRandomness => "no randomness from the OS for CURVE",
        })
    }
}

impl std::error::Error for CurveError {}
