//! Sans-IO ZMTP 3.1: the ZeroMQ wire protocol as plain data transformations.
//!
//! ```text
//!   bytes in ──► Handshake ──────────────► PeerInfo
//!               │ GreetingDecoder (64 B)
//!               │ FrameDecoder ─► Command::decode ─► NULL (READY / ERROR) or PLAIN
//!               │                                     (HELLO / WELCOME / INITIATE / READY)
//!               ▼
//!   bytes in ──► FrameDecoder ─► Frame { body, more, command } ─► Command (PING, SUBSCRIBE, ...)
//!   Frame / Command ─► Encoder ─► IoSlice[] ─► bytes out
//! ```
//!
//! Why sans-IO: nothing here owns a socket, a thread or a clock, so the same code drives the
//! blocking and the async runtime, unit tests can pump two peers into each other byte by byte,
//! and fuzzers reach every parser directly. Input comes in through `decode`/`handle_input`
//! on a caller-owned `BytesMut`, output goes out through `poll_output` or the [`Encoder`]'s
//! vectored slices; decoded bodies are zero-copy slices of the receive buffer.
//!
//! Acceptance follows libzmq 4.3.5 where it matters for interoperability (reserved frame flag
//! bits ignored, unknown future versions spoken to as 3.1, long PING contexts accepted); no
//! input, however malformed, panics — every refusal is a typed error classified by [`Fault`].
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod command;
pub mod curve;
pub mod curve_error;
pub mod curve_keys;
pub mod curve_message;
pub mod decoder;
pub mod encoder;
pub mod error;
pub mod frame;
pub mod greeting;
pub mod handshake;
pub mod handshake_error;
pub mod metadata;
mod null;
pub mod plain;
pub mod secret;
pub mod security;
pub mod socket_type;
pub mod socks;
pub mod v1;
pub mod v2;
pub mod z85;
pub mod zap;

pub use command::{Command, PING_CONTEXT_MAX};
pub use curve::CurveClientKeys;
pub use curve_error::CurveError;
pub use curve_keys::KeyPair;
pub use curve_message::{CurveCodec, CurveReceiver, CurveSender, Unboxed};
pub use decoder::{Decoded, FrameDecoder};
pub use encoder::{Encoder, DEFAULT_COPY_THRESHOLD};
pub use error::{protocol_error, CommandError, Fault, FrameError, MetadataError};
pub use frame::{Frame, COMMAND, LONG, MORE, SHORT_MAX};
pub use greeting::{
    Greeting, GreetingDecoder, GreetingError, Mechanism, GREETING_LEN, ZMTP2_REVISION,
};
pub use handshake::{
    Handshake, HandshakeConfig, PeerInfo, MAX_HANDSHAKE_FRAME, MAX_HANDSHAKE_INPUT,
};
pub use handshake_error::HandshakeError;
pub use metadata::Metadata;
pub use plain::PlainCredentials;
pub use secret::Secret;
pub use security::Security;
pub use socket_type::SocketType;
pub use socks::{SocksClient, SocksError};
pub use v1::{put_v1_header, V1Decoder};
pub use v2::{V2Tail, V2TailDecoder};
pub use zap::{ZapContext, ZapReply, ZapReplyError, ZapRequest, ZAP_ENDPOINT};
