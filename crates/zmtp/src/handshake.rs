//! The connection handshake: greetings both ways, then the security mechanism (NULL).
//!
//! ```text
//!  new ──> Greeting ──peer greeting ok──> Ready ──peer READY ok──> Complete
//!           │  (our greeting queued)        │ (our READY queued)
//!           └──────────── any refusal ──────┴──> Failed (ERROR queued on a socket-type mismatch)
//! ```
//!
//! Sans-IO like the rest of the crate: the driver feeds received bytes to
//! [`Handshake::handle_input`], sends what [`Handshake::poll_output`] appends, and owns the
//! handshake timeout. Input is consumed only up to the end of the peer's READY, so what is left
//! in the buffer afterwards is the connection's first traffic.

use bytes::{Bytes, BytesMut};

use crate::command::Command;
use crate::decoder::{Decoded, FrameDecoder};
use crate::error::HandshakeError;
use crate::frame::{header_len, put_header};
use crate::greeting::{Greeting, GreetingDecoder, Mechanism};
use crate::null;
use crate::socket_type::SocketType;

pub use crate::null::PeerInfo;

/// What we announce and accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeConfig {
    /// Our socket type (READY `Socket-Type`).
    pub socket_type: SocketType,
    /// Our routing id (READY `Identity`, sent only by REQ, DEALER and ROUTER; may be empty).
    pub routing_id: Bytes,
    /// The greeting's as-server flag (false for NULL, whose RFC says it must be 0).
    pub as_server: bool,
    /// Largest frame accepted during the handshake (libzmq applies `ZMQ_MAXMSGSIZE` from the
    /// first frame on).
    pub max_msg_size: Option<u64>,
    /// Extra READY properties (e.g. `X-` application metadata), sent after the basic ones.
    pub properties: Vec<(String, Bytes)>,
}

impl HandshakeConfig {
    /// NULL client defaults: empty routing id, no size limit, no extra properties.
    pub fn new(socket_type: SocketType) -> Self {
        Self {
            socket_type,
            routing_id: Bytes::new(),
            as_server: false,
            max_msg_size: None,
            properties: Vec::new(),
        }
    }
}

#[derive(Debug)]
enum State {
    /// Waiting for (the rest of) the peer's greeting.
    Greeting(GreetingDecoder),
    /// Greetings exchanged; waiting for the peer's READY.
    Ready { minor: u8, frames: FrameDecoder },
    /// Done.
    Complete(PeerInfo),
    /// Refused; the same error is returned again on further input.
    Failed(HandshakeError),
}

/// One connection's ZMTP 3.x handshake with the NULL mechanism.
#[derive(Debug)]
pub struct Handshake {
    state: State,
    /// Our READY, built up front so that a bad local property fails before anything is sent.
    ready: Command,
    socket_type: SocketType,
    max_msg_size: Option<u64>,
    /// Bytes to send, handed out by `poll_output`.
    out: BytesMut,
}

impl Handshake {
    /// Starts a handshake; our greeting is ready to send at once. If `config.properties` holds
    /// an invalid name, nothing is sent and `handle_input` reports
    /// [`HandshakeError::InvalidLocalProperty`].
    pub fn new(config: HandshakeConfig) -> Self {
        let greeting = Greeting::new(Mechanism::Null, config.as_server);
        // libzmq puts routing-id length + 1 in the padding so a ZMTP 1.0 peer reads the
        // signature as the start of an identity frame (src/zmtp_engine.cpp `plug_internal`).
        let padding = config.routing_id.len() as u64 + 1;
        let mut out = BytesMut::new();
        let (state, ready) =
            match null::our_ready(config.socket_type, &config.routing_id, &config.properties) {
                Ok(ready) => {
                    out.extend_from_slice(&greeting.encode_with_padding(padding));
                    (State::Greeting(GreetingDecoder::new()), ready)
                }
                Err(e) => (
                    State::Failed(HandshakeError::InvalidLocalProperty(e)),
                    Command::Ready(crate::metadata::Metadata::new()),
                ),
            };
        Self {
            state,
            ready,
            socket_type: config.socket_type,
            max_msg_size: config.max_msg_size,
            out,
        }
    }

    /// Consumes as much of `buf` as the handshake needs, stopping right after the peer's READY.
    /// On an error, whatever should reach the peer first (an ERROR command) is already queued
    /// for [`Handshake::poll_output`].
    pub fn handle_input(&mut self, buf: &mut BytesMut) -> Result<(), HandshakeError> {
        let result = self.step(buf);
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
        }
        result
    }

    /// Appends the bytes to send now (possibly none).
    pub fn poll_output(&mut self, out: &mut BytesMut) {
        out.extend_from_slice(&self.out);
        self.out.clear();
    }

    /// Whether the peer's READY has been accepted. Our own bytes may still be pending in
    /// `poll_output`.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete(_))
    }

    /// What the peer announced, once complete.
    pub fn peer(&self) -> Option<&PeerInfo> {
        match &self.state {
            State::Complete(p) => Some(p),
            _ => None,
        }
    }

    /// Takes what the peer announced, once complete.
    pub fn into_peer(self) -> Option<PeerInfo> {
        match self.state {
            State::Complete(p) => Some(p),
            _ => None,
        }
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<(), HandshakeError> {
        loop {
            match &mut self.state {
                State::Greeting(decoder) => {
                    let Some(greeting) = decoder.decode(buf)? else {
                        return Ok(());
                    };
                    if greeting.mechanism != Mechanism::Null {
                        return Err(HandshakeError::MechanismMismatch {
                            ours: Mechanism::Null,
                            peer: greeting.mechanism,
                        });
                    }
                    // libzmq: 3.0 when the peer says 3.0, 3.1 for every newer version.
                    let minor = u8::from(!(greeting.major == 3 && greeting.minor == 0));
                    self.queue_command(&self.ready.clone());
                    self.state = State::Ready {
                        minor,
                        frames: FrameDecoder::new(self.max_msg_size),
                    };
                }
                State::Ready { minor, frames } => {
                    let frame = match frames.decode(buf)? {
                        Decoded::Frame(f) => f,
                        Decoded::NeedMore(_) => return Ok(()),
                    };
                    match null::accept_ready(self.socket_type, *minor, frame) {
                        Ok(peer) => {
                            self.state = State::Complete(peer);
                            return Ok(());
                        }
                        Err(refusal) => {
                            if let Some(reply) = refusal.reply {
                                self.queue_command(&reply);
                            }
                            return Err(refusal.error);
                        }
                    }
                }
                State::Complete(_) => return Ok(()),
                State::Failed(e) => return Err(e.clone()),
            }
        }
    }

    fn queue_command(&mut self, cmd: &Command) {
        let len = cmd.encoded_len();
        self.out.reserve(header_len(len) + len);
        put_header(&mut self.out, len, false, true);
        cmd.encode(&mut self.out);
    }
}
