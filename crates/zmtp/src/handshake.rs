//! The connection handshake: greetings both ways, then the security mechanism (NULL or
//! PLAIN); or, with a ZMTP 2.0 peer, the 2.0 greeting tail (socket type and identity frame);
//! or, with a ZMTP 1.0 peer, identity frames in 1.0 framing.
//!
//! ```text
//!  new ──> Greeting ──peer greeting 3.x ok──> Mechanism ──peer metadata ok──> Complete
//!           │ (signature queued; our major     │ (NULL: our READY queued, then the peer's
//!           │  once the peer's signature is    │  READY; PLAIN: see crate::plain)
//!           │  versioned, the other 53 bytes   │
//!           │  once its major says 3.x)        │
//!           ├──peer revision 1 (2.0)──> V2 ──peer tail ok──> Complete (major 2)
//!           │   (our type byte and identity frame queued)
//!           ├──peer revision 0, or no signature (1.0)──> V1 ──identity──> Complete (major 1)
//!           │   (our identity queued: a type byte and a 1.0 frame, or, to an unversioned
//!           │    peer, only its body, since our signature was its header)
//!           └──────────── any refusal ──────┴──> Failed (ERROR queued on a socket-type mismatch)
//! ```
//!
//! The greeting goes out in three steps as libzmq's does (src/zmtp_engine.cpp
//! `receive_greeting`): the 10-byte signature at once, our major version once the peer's
//! signature shows a versioned peer, the rest only once the peer's major byte shows 3.x, since
//! a 1.0 or 2.0 peer would read more of a 3.x greeting as frames.
//!
//! Sans-IO like the rest of the crate: the driver feeds received bytes to
//! [`Handshake::handle_input`], sends what [`Handshake::poll_output`] appends, and owns the
//! handshake timeout. Input is consumed only up to the end of the peer's READY, so what is left
//! in the buffer afterwards is the connection's first traffic.

use bytes::{Bytes, BytesMut};

use crate::command::Command;
use crate::curve::{Curve, CurveStep};
use crate::curve_message::CurveCodec;
use crate::decoder::{Decoded, FrameDecoder};
use crate::error::FrameError;
use crate::frame::{header_len, put_header};
use crate::greeting::{Greeting, GreetingDecoder, ZMTP2_REVISION};
use crate::handshake_error::HandshakeError;
use crate::metadata::Metadata;
use crate::null::{self, Refusal};
use crate::plain::{Local, Plain, Step};
use crate::security::Security;
use crate::socket_type::SocketType;
use crate::v1::{put_v1_header, V1Decoder};
use crate::v2::{self, V2TailDecoder};
use crate::zap::{ZapReply, ZapReplyError, ZapRequest};

/// Bytes of our greeting sent before seeing the peer's: the signature.
const GREETING_FIRST: usize = 10;
/// Our greeting up to and with the major version.
const GREETING_MAJOR: usize = 11;

pub use crate::null::PeerInfo;

/// Largest frame accepted during the handshake. NULL exchanges one READY each way, whose
/// metadata may carry application properties (ZMQ_METADATA), and at most one ERROR (a reason of
/// up to 255 bytes); 64 KiB leaves room for generous metadata while an unauthenticated peer's
/// header alone can no longer make us buffer without end (issue 14: a READY header announcing
/// 2^62 bytes was buffered until the handshake timeout). `ZMQ_MAXMSGSIZE`, when smaller, wins.
pub const MAX_HANDSHAKE_FRAME: u64 = 64 * 1024;

/// Most bytes a driver ever needs to hold before the handshake completes: the peer's greeting
/// plus one long frame header and the largest handshake frame. A driver that reads no more
/// than this into its handshake buffer bounds each unauthenticated connection's memory.
pub const MAX_HANDSHAKE_INPUT: usize =
    crate::greeting::GREETING_LEN + 9 + MAX_HANDSHAKE_FRAME as usize;

/// What we announce and accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeConfig {
    /// Our socket type (READY `Socket-Type`).
    pub socket_type: SocketType,
    /// Our routing id (READY `Identity`, sent only by REQ, DEALER and ROUTER; may be empty).
    pub routing_id: Bytes,
    /// The greeting's as-server flag for NULL (whose RFC says it must be 0); the PLAIN and
    /// CURVE roles set it from `security`.
    pub as_server: bool,
    /// The security mechanism and our role in it; the peer's greeting must name the same
    /// mechanism.
    pub security: Security,
    /// Largest frame accepted during the handshake (libzmq applies `ZMQ_MAXMSGSIZE` from the
    /// first frame on).
    pub max_msg_size: Option<u64>,
    /// Extra READY properties (e.g. `X-` application metadata), sent after the basic ones.
    pub properties: Vec<(String, Bytes)>,
    /// `ZMQ_ZAP_DOMAIN` is set: a NULL server asks the ZAP handler before sending READY (and
    /// sends ERROR instead if it refuses), as libzmq does.
    pub zap_domain: bool,
    /// `ZMQ_ZAP_ENFORCE_DOMAIN` (libzmq draft): with `zap_domain`, a NULL or CURVE server
    /// with no handler bound fails the handshake instead of admitting; without it, a CURVE
    /// server asks no handler at all (libzmq's "Stonehouse": encryption, no authentication).
    /// PLAIN always needs a handler, either way.
    pub zap_enforce_domain: bool,
}

impl HandshakeConfig {
    /// NULL client defaults: empty routing id, no size limit, no extra properties.
    pub fn new(socket_type: SocketType) -> Self {
        Self {
            socket_type,
            routing_id: Bytes::new(),
            as_server: false,
            security: Security::Null,
            max_msg_size: None,
            properties: Vec::new(),
            zap_domain: false,
            zap_enforce_domain: false,
        }
    }
}

/// The verdict a server gives itself when it asks no handler: 200, no User-Id (`finish_zap`
/// with `asked` false).
fn admitted() -> ZapReply {
    ZapReply {
        status: 200,
        user_id: Bytes::new(),
        metadata: Metadata::new(),
    }
}

#[derive(Debug)]
enum State {
    /// Waiting for (the rest of) the peer's greeting.
    Greeting(GreetingDecoder),
    /// Greetings exchanged; the mechanism's commands until the peer's metadata is accepted.
    Mechanism {
        minor: u8,
        frames: FrameDecoder,
        mechanism: MechanismState,
    },
    /// A ZMTP 2.0 peer: waiting for its socket-type byte and identity frame.
    V2(V2TailDecoder),
    /// A ZMTP 1.0 peer: waiting for its socket-type byte (versioned only) and identity frame.
    V1 {
        versioned: bool,
        socket_type: Option<SocketType>,
        frames: V1Decoder,
    },
    /// Done.
    Complete(PeerInfo),
    /// Refused; the same error is returned again on further input.
    Failed(HandshakeError),
}

/// Where the security mechanism stands.
#[derive(Debug)]
enum MechanismState {
    /// NULL: our READY sent, waiting for the peer's.
    Null,
    /// NULL with ZAP: READY held back until the handler's verdict; `asked` once the driver took
    /// the request; the peer's READY, if it came first, waits in `peer`.
    NullZap { asked: bool, peer: Option<PeerInfo> },
    /// PLAIN, either role.
    Plain(Plain),
    /// CURVE, either role (boxed: its keys make it the largest state).
    Curve(Box<Curve>),
}

/// Puts an admitting ZAP reply's properties (User-Id, then its metadata) ahead of what the peer
/// announced, so that a lookup (`zmq_msg_gets`) finds the handler's value where both name a
/// property: libzmq compiles a connection's properties into a map that keeps the first
/// insertion, the ZAP properties inserted before the ZMTP ones
/// (stream_engine_base_t::mechanism_ready). The routing id is another matter: libzmq sets it
/// from each `Identity` as it parses it, so the handler's names the peer only where the reply
/// was parsed after the peer's own properties (`zap_parsed_last`), or the peer named none.
fn zap_first(
    peer: &mut PeerInfo,
    zap: Metadata,
    zap_parsed_last: bool,
) -> Result<(), HandshakeError> {
    if let Some(id) = null::identity_of(&zap) {
        if zap_parsed_last || null::identity_of(&peer.metadata).is_none() {
            peer.routing_id = id;
        }
    }
    let mut merged = zap;
    for (name, value) in peer.metadata.iter() {
        merged.insert(name, value.clone())?;
    }
    peer.metadata = merged;
    Ok(())
}

/// One connection's ZMTP 3.x handshake.
#[derive(Debug)]
pub struct Handshake {
    state: State,
    /// Our metadata (NULL's READY, PLAIN's INITIATE or READY), built up front so that a bad
    /// local property fails before anything is sent.
    metadata: Metadata,
    security: Security,
    socket_type: SocketType,
    routing_id: Bytes,
    max_msg_size: Option<u64>,
    /// Our whole greeting, of which `sent` bytes are queued.
    greeting: [u8; crate::greeting::GREETING_LEN],
    sent: usize,
    /// Bytes to send, handed out by `poll_output`.
    out: BytesMut,
    /// What an admitting ZAP reply adds to the peer's metadata: User-Id and its properties.
    zap_metadata: Option<Metadata>,
    /// CURVE: the MESSAGE codec, once complete.
    curve_codec: Option<CurveCodec>,
    /// `HandshakeConfig::zap_domain`: NULL asks ZAP before its READY.
    zap_domain: bool,
    /// `HandshakeConfig::zap_enforce_domain`.
    zap_enforce_domain: bool,
}

impl Handshake {
    /// Starts a handshake; our greeting is ready to send at once. If `config.properties` holds
    /// an invalid name, nothing is sent and `handle_input` reports
    /// [`HandshakeError::InvalidLocalProperty`].
    pub fn new(config: HandshakeConfig) -> Self {
        let greeting = Greeting::new(
            config.security.mechanism(),
            config.as_server || config.security.is_server(),
        );
        // libzmq puts routing-id length + 1 in the padding so a ZMTP 1.0 peer reads the
        // signature as the start of an identity frame (src/zmtp_engine.cpp `plug_internal`).
        let padding = config.routing_id.len() as u64 + 1;
        let mut out = BytesMut::new();
        let whole = greeting.encode_with_padding(padding);
        let (state, metadata) =
            match null::our_ready(config.socket_type, &config.routing_id, &config.properties) {
                Ok(Command::Ready(metadata)) => {
                    out.extend_from_slice(&whole[..GREETING_FIRST]);
                    (State::Greeting(GreetingDecoder::new()), metadata)
                }
                Ok(_) => (
                    State::Failed(HandshakeError::MissingSocketType),
                    Metadata::new(),
                ),
                Err(e) => (
                    State::Failed(HandshakeError::InvalidLocalProperty(e)),
                    Metadata::new(),
                ),
            };
        Self {
            state,
            metadata,
            security: config.security,
            socket_type: config.socket_type,
            routing_id: config.routing_id,
            max_msg_size: config.max_msg_size,
            greeting: whole,
            sent: GREETING_FIRST,
            out,
            zap_metadata: None,
            curve_codec: None,
            zap_domain: config.zap_domain,
            zap_enforce_domain: config.zap_enforce_domain,
        }
    }

    /// The request for the ZAP handler, once, when the mechanism's server has the client's
    /// credentials (PLAIN HELLO, CURVE INITIATE). The driver asks the handler bound at
    /// [`crate::zap::ZAP_ENDPOINT`] and hands the reply to [`Handshake::handle_zap_reply`],
    /// or calls [`Handshake::handle_no_zap_handler`] when none is bound.
    pub fn take_zap_request(&mut self) -> Option<ZapRequest> {
        let State::Mechanism { mechanism, .. } = &mut self.state else {
            return None;
        };
        match mechanism {
            MechanismState::Plain(Plain::ServerZap(pending)) => {
                let credentials = pending.take()?;
                Some(ZapRequest {
                    mechanism: crate::greeting::Mechanism::Plain,
                    // The handler's frames are the user's to keep: plain `Bytes` from here.
                    credentials: vec![
                        Bytes::copy_from_slice(&credentials.username),
                        Bytes::copy_from_slice(&credentials.password),
                    ],
                })
            }
            MechanismState::NullZap { asked, .. } if !*asked => {
                *asked = true;
                Some(ZapRequest {
                    mechanism: crate::greeting::Mechanism::Null,
                    credentials: Vec::new(),
                })
            }
            MechanismState::Curve(curve) => Some(ZapRequest {
                mechanism: crate::greeting::Mechanism::Curve,
                credentials: vec![Bytes::copy_from_slice(&curve.take_zap_key()?)],
            }),
            _ => None,
        }
    }

    /// No ZAP handler is bound: libzmq 4.3 admits a CURVE client (the keys authenticated it)
    /// and a NULL one, unless `zap_enforce_domain` is set, and refuses a PLAIN one always
    /// ([`HandshakeError::NoZapHandler`], reported with EFAULT and no detail).
    pub fn handle_no_zap_handler(&mut self) -> Result<(), HandshakeError> {
        if !self.zap_enforce_domain
            && matches!(
                self.state,
                State::Mechanism {
                    mechanism: MechanismState::Curve(_) | MechanismState::NullZap { .. },
                    ..
                }
            )
        {
            return self.finish_zap(Ok(admitted()), false);
        }
        let e = HandshakeError::NoZapHandler;
        self.state = State::Failed(e.clone());
        Err(e)
    }

    /// The ZAP handler's verdict (or why its reply was refused): 200 goes on (PLAIN: WELCOME;
    /// CURVE: READY, and the handshake is complete); any other status sends ERROR with it and
    /// fails with [`HandshakeError::ZapRefused`].
    pub fn handle_zap_reply(
        &mut self,
        reply: Result<ZapReply, ZapReplyError>,
    ) -> Result<(), HandshakeError> {
        self.finish_zap(reply, true)
    }

    /// A handler's verdict (`asked`) or the one a server gives itself when it asks none.
    fn finish_zap(
        &mut self,
        reply: Result<ZapReply, ZapReplyError>,
        asked: bool,
    ) -> Result<(), HandshakeError> {
        let result = self.zap_step(reply, asked);
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
        }
        result
    }

    /// libzmq's CURVE server with `ZAP_ENFORCE_DOMAIN` and no `ZAP_DOMAIN` asks no handler:
    /// once INITIATE checks out, the client is in (the key the request would carry is taken).
    fn curve_skips_zap(&mut self) -> bool {
        if !self.zap_enforce_domain || self.zap_domain {
            return false;
        }
        match &mut self.state {
            State::Mechanism {
                mechanism: MechanismState::Curve(curve),
                ..
            } => curve.take_zap_key().is_some(),
            _ => false,
        }
    }

    fn zap_step(
        &mut self,
        reply: Result<ZapReply, ZapReplyError>,
        asked: bool,
    ) -> Result<(), HandshakeError> {
        let awaiting = match &self.state {
            State::Mechanism {
                mechanism: MechanismState::Plain(Plain::ServerZap(None)),
                ..
            } => true,
            State::Mechanism {
                mechanism: MechanismState::Curve(c),
                ..
            } => c.awaits_zap(),
            State::Mechanism {
                mechanism: MechanismState::NullZap { asked, .. },
                ..
            } => *asked,
            State::Failed(e) => return Err(e.clone()),
            _ => false,
        };
        if !awaiting {
            return Err(HandshakeError::UnexpectedZapReply);
        }
        let reply = reply.map_err(HandshakeError::ZapReply)?;
        // libzmq parses the reply's metadata as it parses the peer's properties, before it
        // looks at the status: a `Socket-Type` there must name a type that can talk to ours,
        // else the handshake fails with ZAP_INVALID_METADATA and the client is dropped, no
        // ERROR sent (zap_client_t::receive_and_process_zap_reply).
        let wrong_type = reply.metadata.iter().any(|(name, value)| {
            name == null::SOCKET_TYPE
                && !SocketType::from_name(value).is_some_and(|t| self.socket_type.is_compatible(t))
        });
        if wrong_type {
            return Err(HandshakeError::ZapReply(ZapReplyError::InvalidMetadata));
        }
        if reply.status != 200 {
            let status = reply.status;
            if status == 300 {
                // libzmq's servers, NULL, PLAIN and CURVE alike, send no ERROR for a
                // temporary failure: the client is dropped silently, as the CurveZMQ RFC asks
                // (zap_client_common_handshake_t::handle_zap_status_code), and may try again.
            } else if matches!(self.security, Security::PlainServer) {
                self.queue_body(&crate::plain::libzmq_error_body(status));
            } else {
                self.queue_command(&Command::Error(Bytes::from(status.to_string())));
            }
            return Err(HandshakeError::ZapRefused { status });
        }
        // libzmq's mechanism_t::set_user_id records a handler's user id, empty or not, ahead
        // of the metadata frame, whose own User-Id it therefore shadows. A server that asked
        // no handler records none.
        let mut extra = Metadata::new();
        if asked {
            extra.insert(crate::null::USER_ID, reply.user_id)?;
        }
        for (name, value) in reply.metadata.iter() {
            extra.insert(name, value.clone())?;
        }
        let State::Mechanism {
            minor, mechanism, ..
        } = &mut self.state
        else {
            return Err(HandshakeError::UnexpectedZapReply);
        };
        match mechanism {
            MechanismState::Curve(curve) => {
                let local = Local {
                    socket_type: self.socket_type,
                    minor: *minor,
                    metadata: &self.metadata,
                };
                let (ready, mut peer) = curve
                    .admit(&local)
                    .ok_or(HandshakeError::UnexpectedZapReply)?;
                self.curve_codec = curve.take_codec();
                zap_first(&mut peer, extra, true)?;
                self.queue_body(&ready);
                self.state = State::Complete(peer);
            }
            MechanismState::Plain(plain) => {
                *plain = Plain::ServerInitiate;
                self.zap_metadata = Some(extra);
                self.queue_command(&crate::plain::welcome());
            }
            MechanismState::NullZap { peer, .. } => {
                let early = peer.take();
                *mechanism = MechanismState::Null;
                let ready = Command::Ready(self.metadata.clone());
                self.queue_command(&ready);
                match early {
                    Some(mut peer) => {
                        zap_first(&mut peer, extra, true)?;
                        self.state = State::Complete(peer);
                    }
                    None => self.zap_metadata = Some(extra),
                }
            }
            MechanismState::Null => return Err(HandshakeError::UnexpectedZapReply),
        }
        Ok(())
    }

    /// The CURVE MESSAGE codec for the connection, once the handshake is complete (`None`
    /// for NULL and PLAIN, whose frames go as they are).
    pub fn take_curve_codec(&mut self) -> Option<CurveCodec> {
        self.curve_codec.take()
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
                    // libzmq's test for an unversioned 1.0 peer: no 0xFF first, or byte 9
                    // (the flags of a 1.0 identity frame with a long length) without bit 0.
                    if buf.first().is_some_and(|&b| b != 0xFF)
                        || buf.get(GREETING_FIRST - 1).is_some_and(|&b| b & 0x01 == 0)
                    {
                        self.refuse_downgrade()?;
                        // Our signature was the header of our identity frame; its body follows.
                        self.sent = self.greeting.len();
                        self.out.extend_from_slice(&self.routing_id);
                        self.state = self.v1_state(false);
                        continue;
                    }
                    if buf.len() >= GREETING_FIRST && self.sent == GREETING_FIRST {
                        self.out
                            .extend_from_slice(&self.greeting[GREETING_FIRST..GREETING_MAJOR]);
                        self.sent = GREETING_MAJOR;
                    }
                    match buf.get(GREETING_MAJOR - 1).copied() {
                        Some(0) => {
                            self.refuse_downgrade()?;
                            // Versioned 1.0: our type byte and identity in 1.0 framing.
                            bytes::Buf::advance(buf, GREETING_MAJOR);
                            self.sent = self.greeting.len();
                            self.out
                                .extend_from_slice(&[socket_type_byte(self.socket_type)]);
                            put_v1_header(&mut self.out, self.routing_id.len(), false);
                            self.out.extend_from_slice(&self.routing_id);
                            self.state = self.v1_state(true);
                            continue;
                        }
                        // A 3.x peer (or one the decoder refuses, to whom it is harmless).
                        Some(m) if m != ZMTP2_REVISION && self.sent == GREETING_MAJOR => {
                            self.out.extend_from_slice(&self.greeting[GREETING_MAJOR..]);
                            self.sent = self.greeting.len();
                        }
                        _ => {}
                    }
                    let Some(greeting) = decoder.decode(buf)? else {
                        return Ok(());
                    };
                    if greeting.major == ZMTP2_REVISION {
                        self.refuse_downgrade()?;
                        self.sent = self.greeting.len();
                        v2::encode_tail(self.socket_type, &self.routing_id, &mut self.out);
                        self.state = State::V2(V2TailDecoder::new(self.max_msg_size));
                        continue;
                    }
                    let ours = self.security.mechanism();
                    if greeting.mechanism != ours {
                        return Err(HandshakeError::MechanismMismatch {
                            ours,
                            peer: greeting.mechanism,
                        });
                    }
                    // libzmq: 3.0 when the peer says 3.0, 3.1 for every newer version.
                    let minor = u8::from(!(greeting.major == 3 && greeting.minor == 0));
                    let mechanism = match &self.security {
                        Security::Null if self.zap_domain => MechanismState::NullZap {
                            asked: false,
                            peer: None,
                        },
                        Security::Null => {
                            self.queue_command(&Command::Ready(self.metadata.clone()));
                            MechanismState::Null
                        }
                        Security::PlainClient(credentials) => {
                            let (plain, hello) = Plain::client(credentials);
                            self.queue_command(&hello);
                            MechanismState::Plain(plain)
                        }
                        Security::PlainServer => MechanismState::Plain(Plain::server()),
                        Security::CurveClient(keys) => {
                            let (curve, hello) = Curve::client(keys.clone())?;
                            self.queue_body(&hello);
                            MechanismState::Curve(Box::new(curve))
                        }
                        Security::CurveServer(ours) => {
                            MechanismState::Curve(Box::new(Curve::server(ours.clone())))
                        }
                    };
                    let limit = self.handshake_frame_limit();
                    self.state = State::Mechanism {
                        minor,
                        frames: FrameDecoder::new(Some(limit)),
                        mechanism,
                    };
                }
                State::Mechanism {
                    minor,
                    frames,
                    mechanism,
                } => {
                    let frame = match frames.decode(buf) {
                        Ok(Decoded::Frame(f)) => f,
                        Ok(Decoded::NeedMore(_)) => return Ok(()),
                        // Above the handshake's own cap (rather than the user's MAXMSGSIZE):
                        // refused at the header, before any of the body is buffered.
                        Err(FrameError::TooLarge { size, max }) if max == MAX_HANDSHAKE_FRAME => {
                            return Err(HandshakeError::FrameTooLarge { size, max })
                        }
                        Err(e) => return Err(e.into()),
                    };
                    let step = match mechanism {
                        MechanismState::NullZap { peer, .. } => {
                            if peer.is_some() {
                                return Err(HandshakeError::UnexpectedCommand {
                                    name: Bytes::from_static(b"READY"),
                                });
                            }
                            *peer = Some(
                                null::accept_ready(self.socket_type, *minor, frame)
                                    .map_err(|r| r.error)?,
                            );
                            return Ok(());
                        }
                        MechanismState::Null => null::accept_ready(self.socket_type, *minor, frame)
                            .map(|peer| Step::Done(peer, None)),
                        MechanismState::Plain(plain) => {
                            let local = Local {
                                socket_type: self.socket_type,
                                minor: *minor,
                                metadata: &self.metadata,
                            };
                            plain.handle(frame, &local)
                        }
                        MechanismState::Curve(curve) => {
                            let local = Local {
                                socket_type: self.socket_type,
                                minor: *minor,
                                metadata: &self.metadata,
                            };
                            match curve.handle(frame, &local) {
                                Ok(CurveStep::Continue(body)) => {
                                    if let Some(body) = body {
                                        self.queue_body(&body);
                                    }
                                    if self.curve_skips_zap() {
                                        return self.finish_zap(Ok(admitted()), false);
                                    }
                                    continue;
                                }
                                Ok(CurveStep::Done(peer, codec, body)) => {
                                    if let Some(body) = body {
                                        self.queue_body(&body);
                                    }
                                    self.curve_codec = Some(codec);
                                    Ok(Step::Done(*peer, None))
                                }
                                Err(refusal) => Err(refusal),
                            }
                        }
                    };
                    match step {
                        Ok(Step::Continue(reply)) => {
                            if let Some(reply) = reply {
                                self.queue_command(&reply);
                            }
                        }
                        Ok(Step::Done(mut peer, reply)) => {
                            if let Some(reply) = reply {
                                self.queue_command(&reply);
                            }
                            if let Some(extra) = self.zap_metadata.take() {
                                zap_first(&mut peer, extra, false)?;
                            }
                            self.state = State::Complete(peer);
                            return Ok(());
                        }
                        Err(Refusal { error, reply }) => {
                            if let Some(reply) = reply {
                                self.queue_command(&reply);
                            }
                            return Err(error);
                        }
                    }
                }
                State::V2(decoder) => {
                    let Some(tail) = decoder.decode(buf)? else {
                        return Ok(());
                    };
                    let mut metadata = Metadata::new();
                    let _ = metadata.insert("Socket-Type", tail.socket_type.name().as_bytes());
                    let routing_id = (!tail.identity.is_empty()).then_some(tail.identity);
                    if let Some(id) = &routing_id {
                        let _ = metadata.insert(null::IDENTITY, id.clone());
                    }
                    self.state = State::Complete(PeerInfo {
                        minor: 0,
                        major: 2,
                        socket_type: Some(tail.socket_type),
                        routing_id,
                        metadata,
                    });
                    return Ok(());
                }
                State::V1 {
                    versioned,
                    socket_type,
                    frames,
                } => {
                    if *versioned && socket_type.is_none() {
                        let Some(&byte) = buf.first() else {
                            return Ok(());
                        };
                        let t = SocketType::from_raw(i32::from(byte)).ok_or_else(|| {
                            HandshakeError::UnknownSocketType {
                                name: Bytes::copy_from_slice(&[byte]),
                            }
                        })?;
                        bytes::Buf::advance(buf, 1);
                        *socket_type = Some(t);
                    }
                    let identity = match frames.decode(buf) {
                        Ok(Decoded::Frame(f)) => f.body,
                        Ok(Decoded::NeedMore(_)) => return Ok(()),
                        Err(FrameError::TooLarge { size, max }) if max == MAX_HANDSHAKE_FRAME => {
                            return Err(HandshakeError::FrameTooLarge { size, max })
                        }
                        Err(e) => return Err(e.into()),
                    };
                    let mut metadata = Metadata::new();
                    if let Some(t) = socket_type {
                        let _ = metadata.insert("Socket-Type", t.name().as_bytes());
                    }
                    let routing_id = (!identity.is_empty()).then_some(identity);
                    if let Some(id) = &routing_id {
                        let _ = metadata.insert(null::IDENTITY, id.clone());
                    }
                    self.state = State::Complete(PeerInfo {
                        minor: 0,
                        major: 1,
                        socket_type: *socket_type,
                        routing_id,
                        metadata,
                    });
                    return Ok(());
                }
                State::Complete(_) => return Ok(()),
                State::Failed(e) => return Err(e.clone()),
            }
        }
    }

    /// Waiting for a 1.0 peer's identity (after its socket-type byte when `versioned`).
    fn v1_state(&self, versioned: bool) -> State {
        State::V1 {
            versioned,
            socket_type: None,
            frames: V1Decoder::new(Some(self.handshake_frame_limit())),
        }
    }

    /// MAX_HANDSHAKE_FRAME, or MAXMSGSIZE when smaller.
    fn handshake_frame_limit(&self) -> u64 {
        self.max_msg_size
            .map_or(MAX_HANDSHAKE_FRAME, |m| m.min(MAX_HANDSHAKE_FRAME))
    }

    /// ZMTP 1.0 and 2.0 have no security mechanism and no ZAP: with PLAIN or CURVE
    /// configured, or NULL with a ZAP domain, such a peer would get in without the
    /// authentication asked for, so it is refused, as libzmq refuses it when ZAP is enabled
    /// (src/zmtp_engine.cpp `handshake_v1_0*`, `handshake_v2_0`; `zap_enabled` is "mechanism
    /// not NULL or ZAP_DOMAIN set", whether or not a handler is bound).
    fn refuse_downgrade(&self) -> Result<(), HandshakeError> {
        match self.security {
            Security::Null if !self.zap_domain => Ok(()),
            _ => Err(HandshakeError::SecurityNeedsZmtp3),
        }
    }

    /// Queues a command frame with this body as it is (libzmq's PLAIN ERROR).
    fn queue_body(&mut self, body: &[u8]) {
        self.out.reserve(header_len(body.len()) + body.len());
        put_header(&mut self.out, body.len(), false, true);
        self.out.extend_from_slice(body);
    }

    fn queue_command(&mut self, cmd: &Command) {
        let len = cmd.encoded_len();
        self.out.reserve(header_len(len) + len);
        put_header(&mut self.out, len, false, true);
        cmd.encode(&mut self.out);
    }
}

/// The socket-type octet of a 1.0/2.0 greeting: libzmq's `ZMQ_*` number.
fn socket_type_byte(t: SocketType) -> u8 {
    u8::try_from(t.to_raw()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Fault;
    use crate::greeting::{Mechanism, GREETING_LEN};
    use crate::metadata::Metadata;
    use proptest::prelude::*;

    fn out(h: &mut Handshake) -> BytesMut {
        let mut o = BytesMut::new();
        h.poll_output(&mut o);
        o
    }

    /// Pumps bytes between two handshakes, `chunk` bytes at a time, until both are done or one
    /// fails. Returns each side's result and the bytes each side left unconsumed.
    fn pump(
        a: &mut Handshake,
        b: &mut Handshake,
        chunk: usize,
    ) -> (Result<(), HandshakeError>, Result<(), HandshakeError>) {
        pump_zap(a, b, chunk, 200)
    }

    /// [`pump`] with a ZAP handler answering every request with `status` (user id "alice").
    fn pump_zap(
        a: &mut Handshake,
        b: &mut Handshake,
        chunk: usize,
        status: u16,
    ) -> (Result<(), HandshakeError>, Result<(), HandshakeError>) {
        let mut metadata = Metadata::new();
        metadata.insert("X-Zap", Bytes::from_static(b"z")).unwrap();
        let reply = ZapReply {
            status,
            user_id: Bytes::from_static(b"alice"),
            metadata,
        };
        pump_reply(a, b, chunk, &reply)
    }

    /// [`pump`] with a ZAP handler answering every request with `reply`.
    fn pump_reply(
        a: &mut Handshake,
        b: &mut Handshake,
        chunk: usize,
        reply: &ZapReply,
    ) -> (Result<(), HandshakeError>, Result<(), HandshakeError>) {
        let zap = |h: &mut Handshake, r: &mut Result<(), HandshakeError>| {
            if let (Some(req), Ok(())) = (h.take_zap_request(), &r) {
                let n = match req.mechanism {
                    Mechanism::Null => 0,
                    Mechanism::Curve => 1,
                    _ => 2,
                };
                assert_eq!(req.credentials.len(), n);
                *r = h.handle_zap_reply(Ok(reply.clone()));
            }
        };
        let (mut a_to_b, mut b_to_a) = (BytesMut::new(), BytesMut::new());
        let (mut a_in, mut b_in) = (BytesMut::new(), BytesMut::new());
        let (mut ra, mut rb) = (Ok(()), Ok(()));
        for _ in 0..10_000 {
            a.poll_output(&mut a_to_b);
            b.poll_output(&mut b_to_a);
            if a_to_b.is_empty() && b_to_a.is_empty() {
                break;
            }
            let n = chunk.min(a_to_b.len());
            b_in.extend_from_slice(&a_to_b.split_to(n));
            let n = chunk.min(b_to_a.len());
            a_in.extend_from_slice(&b_to_a.split_to(n));
            if ra.is_ok() {
                ra = a.handle_input(&mut a_in);
            }
            if rb.is_ok() {
                rb = b.handle_input(&mut b_in);
            }
            zap(a, &mut ra);
            zap(b, &mut rb);
        }
        (ra, rb)
    }

    #[test]
    fn dealer_router_byte_by_byte_and_at_once() {
        for chunk in [1, 7, 64, 1000] {
            let mut cfg = HandshakeConfig::new(SocketType::Dealer);
            cfg.routing_id = Bytes::from_static(b"client-1");
            cfg.properties
                .push(("X-App".into(), Bytes::from_static(b"demo")));
            let mut client = Handshake::new(cfg);
            let mut server = Handshake::new(HandshakeConfig::new(SocketType::Router));
            let (rc, rs) = pump(&mut client, &mut server, chunk);
            assert_eq!((rc, rs), (Ok(()), Ok(())), "chunk {chunk}");
            assert!(client.is_complete() && server.is_complete());
            let seen_by_server = server.peer().unwrap();
            assert_eq!(seen_by_server.socket_type, Some(SocketType::Dealer));
            assert_eq!(seen_by_server.minor, 1);
            assert_eq!(seen_by_server.routing_id.as_deref(), Some(&b"client-1"[..]));
            assert_eq!(seen_by_server.metadata.get("X-App").unwrap(), &b"demo"[..]);
            let seen_by_client = client.into_peer().unwrap();
            assert_eq!(seen_by_client.socket_type, Some(SocketType::Router));
            // ROUTER sends an empty Identity: no routing id.
            assert_eq!(seen_by_client.routing_id, None);
        }
    }

    #[test]
    fn wire_bytes_match_libzmq() {
        let mut client = Handshake::new(HandshakeConfig::new(SocketType::Dealer));
        let greeting = out(&mut client);
        let mut expected = [0u8; 64];
        expected[0] = 0xFF;
        expected[8] = 1; // routing id length 0, plus 1 (libzmq's 1.0-detection padding)
        expected[9] = 0x7F;
        expected[10] = 3;
        expected[11] = 1;
        expected[12..16].copy_from_slice(b"NULL");
        // The signature alone, as libzmq.
        assert_eq!(&greeting[..], &expected[..10]);
        assert!(out(&mut client).is_empty());
        // The major once the peer's signature is versioned, the rest once its major is 3.
        let peer_greeting = Greeting::new(Mechanism::Null, false).encode();
        let mut peer = BytesMut::from(&peer_greeting[..10]);
        client.handle_input(&mut peer).unwrap();
        assert_eq!(&out(&mut client)[..], &expected[10..11]);
        peer.extend_from_slice(&peer_greeting[10..11]);
        client.handle_input(&mut peer).unwrap();
        assert_eq!(&out(&mut client)[..], &expected[11..]);
        peer.extend_from_slice(&peer_greeting[11..]);
        client.handle_input(&mut peer).unwrap();
        assert_eq!(
            &out(&mut client)[..],
            b"\x04\x29\x05READY\x0bSocket-Type\0\0\0\x06DEALER\x08Identity\0\0\0\0"
        );
        // RFC 37's example ROUTER reply (size 28) has no Identity; libzmq's ROUTER sends an
        // empty one (src/mechanism.cpp), and so do we.
        let mut server = Handshake::new(HandshakeConfig::new(SocketType::Router));
        out(&mut server);
        server
            .handle_input(&mut BytesMut::from(&expected[..]))
            .unwrap();
        assert_eq!(
            &out(&mut server)[54..],
            b"\x04\x29\x05READY\x0bSocket-Type\0\0\0\x06ROUTER\x08Identity\0\0\0\0"
        );
    }

    /// What JeroMQ 0.6.0 and go-zeromq/zmq4 v0.17.0 put on the wire as the connecting side
    /// (captured through a relay by tests/tests/foreign_peers.rs' cells), fed to our accepting
    /// side whole, in 7-byte pieces and byte by byte: both greet as ZMTP 3.0; JeroMQ sends its
    /// signature with libzmq's padding (routing-id length + 1) and its major only after ours,
    /// go-zeromq sends all 64 bytes at once with zero padding, lists Identity before
    /// Socket-Type, and gives a SUB a random Identity; each connection's first data follows
    /// its READY in the same read.
    #[test]
    fn jeromq_and_go_zeromq_connections_as_captured() {
        let null_rest = |minor: u8| {
            let mut rest = vec![minor];
            rest.extend_from_slice(b"NULL");
            rest.resize(53, 0);
            rest
        };
        let jeromq_greeting = |padding: u8| {
            let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, padding, 0x7F, 3];
            g.extend(null_rest(0));
            g
        };
        let mut go_greeting = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3];
        go_greeting.extend(null_rest(0));
        let first_message = &b"\x01\x02A0\x01\x00\x00\x06body-0"[..];
        let subscribe = &b"\x00\x02\x01A"[..];
        let uuid = &b"81d22aa0-cb38-405e-bb59-2ba38c75c828"[..];
        /// One connection: who, our socket type, the handshake bytes, the data after them,
        /// the peer's type and Identity.
        struct Captured<'a> {
            who: &'a str,
            ours: SocketType,
            handshake: Vec<u8>,
            first: &'a [u8],
            peer_type: SocketType,
            peer_id: Option<&'a [u8]>,
        }
        let cases = [
            Captured {
                who: "JeroMQ DEALER",
                ours: SocketType::Router,
                handshake: [
                    &jeromq_greeting(15)[..],
                    b"\x04\x37\x05READY\x0bSocket-Type\0\0\0\x06DEALER",
                    b"\x08Identity\0\0\0\x0eforeign-dealer",
                ]
                .concat(),
                first: first_message,
                peer_type: SocketType::Dealer,
                peer_id: Some(b"foreign-dealer"),
            },
            Captured {
                who: "go-zeromq DEALER",
                ours: SocketType::Router,
                handshake: [
                    &go_greeting[..],
                    b"\x04\x37\x05READY\x08Identity\0\0\0\x0eforeign-dealer",
                    b"\x0bSocket-Type\0\0\0\x06DEALER",
                ]
                .concat(),
                first: first_message,
                peer_type: SocketType::Dealer,
                peer_id: Some(b"foreign-dealer"),
            },
            Captured {
                who: "JeroMQ SUB",
                ours: SocketType::XPub,
                handshake: [
                    &jeromq_greeting(1)[..],
                    b"\x04\x19\x05READY\x0bSocket-Type\0\0\0\x03SUB",
                ]
                .concat(),
                first: subscribe,
                peer_type: SocketType::Sub,
                peer_id: None,
            },
            Captured {
                who: "go-zeromq SUB",
                ours: SocketType::XPub,
                handshake: [
                    &go_greeting[..],
                    b"\x04\x4a\x05READY\x0bSocket-Type\0\0\0\x03SUB\x08Identity\0\0\0\x24",
                    uuid,
                ]
                .concat(),
                first: subscribe,
                peer_type: SocketType::Sub,
                peer_id: Some(uuid),
            },
        ];
        for Captured {
            who,
            ours,
            handshake,
            first,
            peer_type,
            peer_id,
        } in cases
        {
            let wire = [&handshake[..], first].concat();
            for chunk in [1, 7, wire.len()] {
                let mut h = Handshake::new(HandshakeConfig::new(ours));
                out(&mut h);
                let mut input = BytesMut::new();
                for piece in wire.chunks(chunk) {
                    input.extend_from_slice(piece);
                    h.handle_input(&mut input)
                        .unwrap_or_else(|e| panic!("{who}, {chunk}-byte pieces: {e:?}"));
                    out(&mut h);
                }
                let peer = h.peer().unwrap_or_else(|| panic!("{who}: incomplete"));
                assert_eq!(peer.minor, 0, "{who}: a ZMTP 3.0 peer");
                assert_eq!(peer.socket_type, Some(peer_type), "{who}");
                assert_eq!(peer.routing_id.as_deref(), peer_id, "{who}");
                assert_eq!(
                    &input[..],
                    first,
                    "{who}: its first data is left to the engine"
                );
            }
        }
    }

    #[test]
    fn leftover_bytes_are_first_frames() {
        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Pull));
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        let mut ready = Metadata::new();
        ready
            .insert("Socket-Type", Bytes::from_static(b"PUSH"))
            .unwrap();
        let mut enc_out = BytesMut::new();
        let cmd = Command::Ready(ready);
        put_header(&mut enc_out, cmd.encoded_len(), false, true);
        cmd.encode(&mut enc_out);
        input.extend_from_slice(&enc_out);
        input.extend_from_slice(b"\x00\x05hello\x04\x06\x04PING");
        h.handle_input(&mut input).unwrap();
        assert!(h.is_complete());
        assert_eq!(&input[..], b"\x00\x05hello\x04\x06\x04PING");
        // Further input is not consumed.
        h.handle_input(&mut input).unwrap();
        assert_eq!(input.len(), 7 + 7);
    }

    #[test]
    fn socket_type_mismatch_sends_error() {
        let mut a = Handshake::new(HandshakeConfig::new(SocketType::Push));
        let mut b = Handshake::new(HandshakeConfig::new(SocketType::Push));
        let (ra, rb) = pump(&mut a, &mut b, 1000);
        let e = ra.unwrap_err();
        assert_eq!(
            e,
            HandshakeError::IncompatibleSocketType {
                ours: SocketType::Push,
                peer: SocketType::Push
            }
        );
        assert_eq!(e.fault(), Fault::PeerIncompatible);
        // Each side got the other's ERROR queued after its READY; b saw a's ERROR or failed
        // on its own check first — either way it failed.
        assert!(rb.is_err());
        let mut tail = BytesMut::new();
        let mut c = Handshake::new(HandshakeConfig::new(SocketType::Pub));
        out(&mut c);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        input.extend_from_slice(b"\x04\x19\x05READY\x0bSocket-Type\0\0\0\x03PUB");
        assert!(c.handle_input(&mut input).is_err());
        c.poll_output(&mut tail);
        assert!(tail[54..].starts_with(b"\x04\x19\x05READY"));
        assert!(tail.ends_with(b"\x04\x1f\x05ERROR\x18Incompatible Socket-Type"));
        // A failed handshake keeps failing and sends nothing more.
        assert!(c.handle_input(&mut BytesMut::new()).is_err());
        assert!(out(&mut c).is_empty());
    }

    #[test]
    fn zmtp_2_0_peer_gets_the_2_0_tail_and_no_3_x_rest() {
        let mut config = HandshakeConfig::new(SocketType::Dealer);
        config.routing_id = Bytes::from_static(b"me");
        let mut h = Handshake::new(config);
        assert_eq!(out(&mut h).len(), 10);
        // A libzmq 3.x ROUTER: signature, revision 1, type 6, identity "peer", then a frame.
        let mut input = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x7f\x01"[..]);
        h.handle_input(&mut input).unwrap();
        assert_eq!(&out(&mut h)[..], b"\x03\x05\x00\x02me");
        input.extend_from_slice(b"\x06\x00\x04peer\x01\x00\x00\x03abc");
        h.handle_input(&mut input).unwrap();
        assert!(out(&mut h).is_empty());
        let peer = h.into_peer().unwrap();
        assert_eq!((peer.major, peer.minor), (2, 0));
        assert_eq!(peer.socket_type, Some(SocketType::Router));
        assert_eq!(peer.routing_id.as_deref(), Some(&b"peer"[..]));
        assert_eq!(
            peer.metadata.get("Identity").map(|v| &v[..]),
            Some(&b"peer"[..])
        );
        assert_eq!(&input[..], b"\x01\x00\x00\x03abc");
    }

    /// A libzmq 2.x peer sends no signature: its identity frame in 1.0 framing comes first.
    /// We answer with the body of our identity, whose header our signature already was.
    #[test]
    fn unversioned_zmtp_1_0_peer_exchanges_identities() {
        let mut config = HandshakeConfig::new(SocketType::Dealer);
        config.routing_id = Bytes::from_static(b"me");
        let mut h = Handshake::new(config);
        let signature = out(&mut h);
        assert_eq!(&signature[..], b"\xff\0\0\0\0\0\0\0\x03\x7f");
        // Identity "peer" (length 5 = flags + 4), then a message "abc".
        let mut input = BytesMut::from(&b"\x05\x00peer\x04\x00abc"[..]);
        h.handle_input(&mut input).unwrap();
        assert_eq!(&out(&mut h)[..], b"me");
        let peer = h.into_peer().unwrap();
        assert_eq!((peer.major, peer.socket_type), (1, None));
        assert_eq!(peer.routing_id.as_deref(), Some(&b"peer"[..]));
        assert_eq!(&input[..], b"\x04\x00abc");
        // What a 1.0 peer reads from us: one identity frame, "me".
        let mut wire = signature;
        wire.extend_from_slice(b"me");
        let f = match V1Decoder::new(None).decode(&mut wire).unwrap() {
            Decoded::Frame(f) => f,
            Decoded::NeedMore(n) => panic!("needs {n}"),
        };
        assert_eq!(&f.body[..], b"me");
        assert!(wire.is_empty());

        // A long identity makes byte 9 the flags of a long header: bit 0 clear, also 1.0.
        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Pull));
        out(&mut h);
        let mut input = BytesMut::new();
        put_v1_header(&mut input, 300, false);
        input.extend_from_slice(&[7u8; 300]);
        h.handle_input(&mut input).unwrap();
        let peer = h.into_peer().unwrap();
        assert_eq!(peer.routing_id.map(|id| id.len()), Some(300));
    }

    /// Revision 0 ("versioned 1.0"): signature, revision, socket type, then 1.0 frames.
    #[test]
    fn versioned_zmtp_1_0_peer_exchanges_types_and_identities() {
        let mut config = HandshakeConfig::new(SocketType::Sub);
        config.routing_id = Bytes::from_static(b"s");
        let mut h = Handshake::new(config);
        assert_eq!(out(&mut h).len(), 10);
        let mut input = BytesMut::from(&b"\xff\0\0\0\0\0\0\0\x01\x7f\x00\x01\x01\x00"[..]);
        h.handle_input(&mut input).unwrap();
        // Our major, type (SUB = 2), identity frame "s" in 1.0 framing; no 3.x rest.
        assert_eq!(&out(&mut h)[..], b"\x03\x02\x02\x00s");
        let peer = h.into_peer().unwrap();
        assert_eq!((peer.major, peer.socket_type), (1, Some(SocketType::Pub)));
        assert_eq!(peer.routing_id, None);
        assert!(input.is_empty());
    }

    #[test]
    fn peer_error_and_wrong_mechanism() {
        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Req));
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        input.extend_from_slice(b"\x04\x0a\x05ERROR\x03400");
        let e = h.handle_input(&mut input).unwrap_err();
        assert!(e.is_peer_error());
        assert_eq!(
            e,
            HandshakeError::PeerError {
                reason: Bytes::from_static(b"400")
            }
        );

        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Req));
        out(&mut h);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Curve, true).encode()[..]);
        let e = h.handle_input(&mut input).unwrap_err();
        assert_eq!(
            e,
            HandshakeError::MechanismMismatch {
                ours: Mechanism::Null,
                peer: Mechanism::Curve
            }
        );
        assert_eq!(e.protocol_error_code(), 0x1100_0002);
        // The rest of our greeting, and no READY to a peer we refused.
        assert_eq!(out(&mut h).len(), GREETING_LEN - GREETING_FIRST);
    }

    #[test]
    fn other_refusals() {
        let run = |tail: &[u8]| {
            let mut h = Handshake::new(HandshakeConfig::new(SocketType::Sub));
            let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
            input.extend_from_slice(tail);
            h.handle_input(&mut input)
        };
        assert_eq!(run(b"\x00\x01x"), Err(HandshakeError::UnexpectedMessage));
        assert_eq!(
            run(b"\x04\x07\x04PING\0\0"),
            Err(HandshakeError::UnexpectedCommand {
                name: Bytes::from_static(b"PING")
            })
        );
        assert_eq!(
            run(b"\x04\x06\x05READY"),
            Err(HandshakeError::MissingSocketType)
        );
        assert_eq!(run(b"\x04\x01\x05").unwrap_err().fault(), Fault::Malformed);
        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Sub));
        let e = h.handle_input(&mut BytesMut::from(&b"\x00\x00"[..]));
        assert_eq!(e, Err(HandshakeError::Frame(FrameError::ZeroLength)));

        let mut cfg = HandshakeConfig::new(SocketType::Sub);
        cfg.max_msg_size = Some(10);
        let mut h = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        input.extend_from_slice(b"\x04\x18");
        assert!(matches!(
            h.handle_input(&mut input),
            Err(HandshakeError::Frame(_))
        ));
    }

    /// A READY header announcing 2^62 bytes (issue 14) is refused at the header, with the
    /// default MAXMSGSIZE (none) and with one larger than the cap; a READY of exactly the cap
    /// is waited for.
    #[test]
    fn oversize_handshake_frame_refused_at_the_header() {
        for max_msg_size in [None, Some(1 << 40)] {
            let mut cfg = HandshakeConfig::new(SocketType::Pull);
            cfg.max_msg_size = max_msg_size;
            let mut h = Handshake::new(cfg);
            let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
            input.extend_from_slice(&[0x06]);
            input.extend_from_slice(&(1u64 << 62).to_be_bytes());
            let e = h.handle_input(&mut input).unwrap_err();
            assert_eq!(
                e,
                HandshakeError::FrameTooLarge {
                    size: 1 << 62,
                    max: MAX_HANDSHAKE_FRAME
                }
            );
            assert_eq!(e.fault(), Fault::PeerMisbehaved);
            assert_eq!(
                e.protocol_error_code(),
                crate::error::protocol_error::ZMTP_UNSPECIFIED
            );
        }
        let mut h = Handshake::new(HandshakeConfig::new(SocketType::Pull));
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        input.extend_from_slice(&[0x06]);
        input.extend_from_slice(&MAX_HANDSHAKE_FRAME.to_be_bytes());
        assert_eq!(h.handle_input(&mut input), Ok(()));
        assert!(!h.is_complete());
        assert!(input.len() + MAX_HANDSHAKE_FRAME as usize <= MAX_HANDSHAKE_INPUT);
    }

    fn plain_client(user: &'static [u8], pass: &'static [u8]) -> Security {
        Security::PlainClient(crate::plain::PlainCredentials {
            username: crate::Secret::from(user),
            password: crate::Secret::from(pass),
        })
    }

    #[test]
    fn plain_client_and_server_any_chunking() {
        for chunk in [1, 5, 64, 1000] {
            let mut cfg = HandshakeConfig::new(SocketType::Req);
            cfg.routing_id = Bytes::from_static(b"me");
            cfg.security = plain_client(b"admin", b"secret");
            let mut client = Handshake::new(cfg);
            let mut cfg = HandshakeConfig::new(SocketType::Rep);
            cfg.security = Security::PlainServer;
            let mut server = Handshake::new(cfg);
            let (rc, rs) = pump(&mut client, &mut server, chunk);
            assert_eq!((rc, rs), (Ok(()), Ok(())), "chunk {chunk}");
            let seen_by_server = server.peer().unwrap();
            assert_eq!(seen_by_server.socket_type, Some(SocketType::Req));
            assert_eq!(seen_by_server.routing_id.as_deref(), Some(&b"me"[..]));
            assert_eq!(
                seen_by_server.metadata.get("User-Id").unwrap(),
                &b"alice"[..]
            );
            assert_eq!(seen_by_server.metadata.get("X-Zap").unwrap(), &b"z"[..]);
            assert_eq!(client.peer().unwrap().socket_type, Some(SocketType::Rep));
        }
    }

    /// A refusing ZAP handler: the server sends ERROR with the status, both sides fail with it
    /// as an authentication failure; for 300 (temporary) the server sends nothing, as libzmq's
    /// (test_security_zap's temporary_failure cases expect no event on the client).
    #[test]
    fn plain_zap_refusal_reaches_both_sides() {
        for status in [300, 400, 500] {
            let mut cfg = HandshakeConfig::new(SocketType::Dealer);
            cfg.security = plain_client(b"admin", b"wrong");
            let mut client = Handshake::new(cfg);
            let mut cfg = HandshakeConfig::new(SocketType::Router);
            cfg.security = Security::PlainServer;
            let mut server = Handshake::new(cfg);
            let (rc, rs) = pump_zap(&mut client, &mut server, 16, status);
            if status == 300 {
                assert_eq!(rc, Ok(()), "no ERROR for a temporary failure");
                assert!(!client.is_complete());
            } else {
                assert_eq!(rc.unwrap_err().auth_status(), Some(u32::from(status)));
            }
            assert_eq!(rs.unwrap_err().auth_status(), Some(u32::from(status)));
        }
        let mut cfg = HandshakeConfig::new(SocketType::Router);
        cfg.security = Security::PlainServer;
        let mut server = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Plain, false).encode()[..]);
        input.extend_from_slice(b"\x04\x08\x05HELLO\x00\x00");
        server.handle_input(&mut input).unwrap();
        assert!(server.take_zap_request().is_some());
        assert!(server.take_zap_request().is_none(), "asked once");
        let e = server
            .handle_zap_reply(Err(crate::zap::ZapReplyError::BadVersion))
            .unwrap_err();
        assert_eq!(e.protocol_error_code(), 0x2000_0003);
        let mut null = Handshake::new(HandshakeConfig::new(SocketType::Router));
        assert_eq!(
            null.handle_zap_reply(Err(crate::zap::ZapReplyError::BadVersion)),
            Err(HandshakeError::UnexpectedZapReply)
        );
    }

    /// The bytes libzmq 4.3's PLAIN client and server put on the wire (src/plain_client.cpp,
    /// src/plain_server.cpp): greeting with "PLAIN" and the as-server flag, HELLO, WELCOME,
    /// INITIATE and READY as command frames.
    #[test]
    fn plain_wire_bytes() {
        let mut cfg = HandshakeConfig::new(SocketType::Dealer);
        cfg.security = plain_client(b"u", b"pw");
        let mut client = Handshake::new(cfg);
        let mut o = out(&mut client);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Plain, true).encode()[..]);
        client.handle_input(&mut input).unwrap();
        o.extend_from_slice(&out(&mut client));
        let g = &o[..GREETING_LEN];
        assert_eq!(&g[12..17], b"PLAIN");
        assert_eq!(g[32], 0, "a client's as-server flag is 0");
        assert_eq!(&o[GREETING_LEN..], b"\x04\x0b\x05HELLO\x01u\x02pw");
        client
            .handle_input(&mut BytesMut::from(&b"\x04\x08\x07WELCOME"[..]))
            .unwrap();
        assert_eq!(
            &out(&mut client)[..],
            b"\x04\x2c\x08INITIATE\x0bSocket-Type\0\0\0\x06DEALER\x08Identity\0\0\0\0"
        );
        assert!(!client.is_complete());
        client
            .handle_input(&mut BytesMut::from(
                &b"\x04\x1c\x05READY\x0bSocket-Type\0\0\0\x06ROUTER"[..],
            ))
            .unwrap();
        assert!(client.is_complete());

        let mut cfg = HandshakeConfig::new(SocketType::Router);
        cfg.security = Security::PlainServer;
        let mut server = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Plain, false).encode()[..]);
        input.extend_from_slice(b"\x04\x0b\x05HELLO\x01u\x02pw");
        server.handle_input(&mut input).unwrap();
        let o = out(&mut server);
        assert_eq!(o[32], 1, "a server's as-server flag is 1");
        assert_eq!(o.len(), GREETING_LEN, "nothing before the ZAP verdict");
        let req = server.take_zap_request().unwrap();
        assert_eq!(req.credentials, [&b"u"[..], &b"pw"[..]]);
        server
            .handle_zap_reply(Ok(ZapReply {
                status: 200,
                user_id: Bytes::new(),
                metadata: Metadata::new(),
            }))
            .unwrap();
        assert_eq!(&out(&mut server)[..], b"\x04\x08\x07WELCOME");
    }

    #[test]
    fn mechanism_mismatches_fail_at_the_greeting() {
        for (ours, theirs) in [
            (Security::Null, Mechanism::Plain),
            (Security::PlainServer, Mechanism::Null),
            (plain_client(b"", b""), Mechanism::Curve),
        ] {
            let mut cfg = HandshakeConfig::new(SocketType::Pair);
            cfg.security = ours.clone();
            let mut h = Handshake::new(cfg);
            let mut input = BytesMut::from(&Greeting::new(theirs, false).encode()[..]);
            let e = h.handle_input(&mut input).unwrap_err();
            assert_eq!(
                e,
                HandshakeError::MechanismMismatch {
                    ours: ours.mechanism(),
                    peer: theirs
                }
            );
            assert_eq!(
                e.protocol_error_code(),
                crate::error::protocol_error::ZMTP_MECHANISM_MISMATCH
            );
        }
        // Two PLAIN clients: each refuses the other's HELLO.
        let mk = || {
            let mut cfg = HandshakeConfig::new(SocketType::Pair);
            cfg.security = plain_client(b"a", b"b");
            Handshake::new(cfg)
        };
        let (mut a, mut b) = (mk(), mk());
        let (ra, _) = pump(&mut a, &mut b, 1000);
        assert_eq!(
            ra.unwrap_err().protocol_error_code(),
            crate::error::protocol_error::ZMTP_UNEXPECTED_COMMAND
        );
    }

    /// A server refusing the credentials answers ERROR "400"; the client reports it as an
    /// authentication failure with that status, as libzmq does.
    #[test]
    fn plain_error_is_an_auth_failure() {
        let mut cfg = HandshakeConfig::new(SocketType::Dealer);
        cfg.security = plain_client(b"u", b"bad");
        let mut client = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Plain, true).encode()[..]);
        input.extend_from_slice(b"\x04\x0a\x05ERROR\x03400");
        let e = client.handle_input(&mut input).unwrap_err();
        assert_eq!(e.auth_status(), Some(400));
    }

    fn curve_pair(
        server_keys: &crate::curve_keys::KeyPair,
        server_public_known: [u8; 32],
    ) -> (Handshake, Handshake) {
        let mut cfg = HandshakeConfig::new(SocketType::Dealer);
        cfg.routing_id = Bytes::from_static(b"dealer-1");
        cfg.security = Security::CurveClient(crate::curve::CurveClientKeys {
            ours: crate::curve_keys::KeyPair::generate().unwrap(),
            server: server_public_known,
        });
        let client = Handshake::new(cfg);
        let mut cfg = HandshakeConfig::new(SocketType::Router);
        cfg.security = Security::CurveServer(server_keys.clone());
        (client, Handshake::new(cfg))
    }

    #[test]
    fn curve_handshake_then_messages_any_chunking() {
        let server_keys = crate::curve_keys::KeyPair::generate().unwrap();
        for chunk in [1, 13, 200, 4096] {
            let (mut client, mut server) = curve_pair(&server_keys, server_keys.public);
            let (rc, rs) = pump(&mut client, &mut server, chunk);
            assert_eq!((rc, rs), (Ok(()), Ok(())), "chunk {chunk}");
            let seen = server.peer().unwrap();
            assert_eq!(seen.socket_type, Some(SocketType::Dealer));
            assert_eq!(seen.routing_id.as_deref(), Some(&b"dealer-1"[..]));
            assert_eq!(seen.metadata.get("User-Id").unwrap(), &b"alice"[..]);
            assert_eq!(client.peer().unwrap().socket_type, Some(SocketType::Router));
            let mut c = client.take_curve_codec().unwrap();
            let mut s = server.take_curve_codec().unwrap();
            assert!(client.take_curve_codec().is_none(), "taken once");
            let boxed = c.encode(b"request", true, false);
            let got = s.decode(&boxed).unwrap();
            assert_eq!((&got.body[..], got.more), (&b"request"[..], true));
            let back = s.encode(b"reply", false, false);
            assert_eq!(&c.decode(&back).unwrap().body[..], b"reply");
        }
    }

    /// A server that set only its secret key (pyzmq's examples do): libzmq needs no more, since
    /// its vouch check compares the client's short-term key only.
    #[test]
    fn curve_server_with_only_its_secret_key() {
        let real = crate::curve_keys::KeyPair::generate().unwrap();
        let secret_only = crate::curve_keys::KeyPair::from_parts([0; 32], real.secret_bytes());
        let (mut client, mut server) = curve_pair(&secret_only, real.public);
        assert_eq!(pump(&mut client, &mut server, 64), (Ok(()), Ok(())));
    }

    /// The client has the wrong server key: its HELLO box does not open at the server, which
    /// refuses with ZMTP_CRYPTOGRAPHIC; nothing else is exchanged.
    #[test]
    fn curve_wrong_server_key_fails_at_hello() {
        let server_keys = crate::curve_keys::KeyPair::generate().unwrap();
        let other = crate::curve_keys::KeyPair::generate().unwrap();
        let (mut client, mut server) = curve_pair(&server_keys, other.public);
        let (rc, rs) = pump(&mut client, &mut server, 64);
        assert_eq!(
            rc,
            Ok(()),
            "the client waits for a WELCOME that never comes"
        );
        assert!(!client.is_complete());
        let e = rs.unwrap_err();
        assert_eq!(
            e.protocol_error_code(),
            crate::error::protocol_error::ZMTP_CRYPTOGRAPHIC
        );
    }

    #[test]
    fn curve_zap_refusal_and_no_handler() {
        let server_keys = crate::curve_keys::KeyPair::generate().unwrap();
        let (mut client, mut server) = curve_pair(&server_keys, server_keys.public);
        let (rc, rs) = pump_zap(&mut client, &mut server, 64, 400);
        assert_eq!(rc.unwrap_err().auth_status(), Some(400));
        assert_eq!(rs.unwrap_err().auth_status(), Some(400));
        // No handler: libzmq admits a CURVE client.
        let (mut client, mut server) = curve_pair(&server_keys, server_keys.public);
        let mut a_to_b = BytesMut::new();
        let mut b_to_a = BytesMut::new();
        for _ in 0..10 {
            client.poll_output(&mut a_to_b);
            server.handle_input(&mut a_to_b).unwrap();
            if server.take_zap_request().is_some() {
                server.handle_no_zap_handler().unwrap();
            }
            server.poll_output(&mut b_to_a);
            client.handle_input(&mut b_to_a).unwrap();
        }
        assert!(client.is_complete() && server.is_complete());
        // No handler asked, no User-Id (libzmq calls set_user_id on a reply only).
        assert!(server.peer().unwrap().metadata.get("User-Id").is_none());
        // PLAIN without a handler is refused.
        plain_server_refused_without_handler(false);
    }

    /// A PLAIN server takes a HELLO, asks ZAP, and finds no handler: refused, with or without
    /// `zap_enforce_domain`.
    fn plain_server_refused_without_handler(enforce: bool) {
        let mut cfg = HandshakeConfig::new(SocketType::Router);
        cfg.security = Security::PlainServer;
        cfg.zap_enforce_domain = enforce;
        let mut plain = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Plain, false).encode()[..]);
        input.extend_from_slice(b"\x04\x08\x05HELLO\x00\x00");
        plain.handle_input(&mut input).unwrap();
        assert!(plain.take_zap_request().is_some());
        assert_eq!(
            plain.handle_no_zap_handler(),
            Err(HandshakeError::NoZapHandler)
        );
    }

    /// Drives a CURVE pair with no ZAP handler bound; how many requests the server made, and
    /// the server's result.
    fn curve_without_handler(
        server: &mut Handshake,
        client: &mut Handshake,
    ) -> (usize, Result<(), HandshakeError>) {
        let (mut a_to_b, mut b_to_a, mut asked) = (BytesMut::new(), BytesMut::new(), 0);
        for _ in 0..10 {
            client.poll_output(&mut a_to_b);
            let mut result = server.handle_input(&mut a_to_b);
            if result.is_ok() && server.take_zap_request().is_some() {
                asked += 1;
                result = server.handle_no_zap_handler();
            }
            if result.is_err() {
                return (asked, result);
            }
            server.poll_output(&mut b_to_a);
            client.handle_input(&mut b_to_a).unwrap();
        }
        (asked, Ok(()))
    }

    /// ZMQ_ZAP_ENFORCE_DOMAIN as libzmq 4.3 (curve_server.cpp, null_mechanism.cpp): with a
    /// domain and no handler, CURVE and NULL fail (EFAULT, no detail); with no domain, CURVE
    /// asks no handler at all; PLAIN needs a handler either way.
    #[test]
    fn zap_enforce_domain() {
        let server_keys = crate::curve_keys::KeyPair::generate().unwrap();
        for (domain, enforce, asked, admitted) in [
            (false, false, 1, true),
            (true, false, 1, true),
            (true, true, 1, false),
            (false, true, 0, true),
        ] {
            let (mut client, _) = curve_pair(&server_keys, server_keys.public);
            let mut cfg = HandshakeConfig::new(SocketType::Router);
            cfg.security = Security::CurveServer(server_keys.clone());
            cfg.zap_domain = domain;
            cfg.zap_enforce_domain = enforce;
            let mut server = Handshake::new(cfg);
            let (n, result) = curve_without_handler(&mut server, &mut client);
            let case = format!("domain {domain}, enforce {enforce}");
            assert_eq!(n, asked, "{case}");
            if admitted {
                assert_eq!(result, Ok(()), "{case}");
                assert!(client.is_complete() && server.is_complete(), "{case}");
            } else {
                assert_eq!(result, Err(HandshakeError::NoZapHandler), "{case}");
                assert!(!client.is_complete(), "{case}: nothing admitted");
            }
        }
        // With a domain and a handler, enforcing changes nothing: the handler decides.
        let (mut client, _) = curve_pair(&server_keys, server_keys.public);
        let mut cfg = HandshakeConfig::new(SocketType::Router);
        cfg.security = Security::CurveServer(server_keys.clone());
        cfg.zap_domain = true;
        cfg.zap_enforce_domain = true;
        let mut server = Handshake::new(cfg);
        let (rc, rs) = pump_zap(&mut client, &mut server, 64, 400);
        assert_eq!(rs.unwrap_err().auth_status(), Some(400));
        assert_eq!(rc.unwrap_err().auth_status(), Some(400));
        // NULL with a domain, enforced, no handler: refused, no READY sent.
        let mut cfg = HandshakeConfig::new(SocketType::Pair);
        cfg.zap_domain = true;
        cfg.zap_enforce_domain = true;
        let mut h = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        h.handle_input(&mut input).unwrap();
        assert!(h.take_zap_request().is_some());
        assert_eq!(h.handle_no_zap_handler(), Err(HandshakeError::NoZapHandler));
        assert_eq!(out(&mut h).len(), GREETING_LEN, "no READY");
        // PLAIN enforced without a domain still asks, and still needs a handler.
        plain_server_refused_without_handler(true);
    }

    /// A ZMTP 1.0 (unversioned or versioned) or 2.0 peer would skip PLAIN and CURVE: refused
    /// (found by the plain_handshake and curve_handshake fuzz targets).
    #[test]
    fn security_refuses_pre_3_peers() {
        let keys = crate::curve_keys::KeyPair::from_secret([3; 32]);
        for security in [Security::PlainServer, Security::CurveServer(keys)] {
            for peer in [
                &b"\x01\x00"[..],
                b"\xff\0\0\0\0\0\0\0\x01\x7f\x00",
                b"\xff\0\0\0\0\0\0\0\x01\x7f\x01\x05",
            ] {
                let mut cfg = HandshakeConfig::new(SocketType::Router);
                cfg.security = security.clone();
                let mut h = Handshake::new(cfg);
                let e = h.handle_input(&mut BytesMut::from(peer)).unwrap_err();
                assert_eq!(e, HandshakeError::SecurityNeedsZmtp3, "{peer:?}");
            }
        }
        // NULL with a ZAP domain too, as libzmq's test_security_null test_vanilla_socket
        // expects; NULL without one still talks to them.
        for zap_domain in [true, false] {
            let mut cfg = HandshakeConfig::new(SocketType::Dealer);
            cfg.zap_domain = zap_domain;
            let mut h = Handshake::new(cfg);
            let r = h.handle_input(&mut BytesMut::from(&b"\x01\x00"[..]));
            assert_eq!(r.is_err(), zap_domain, "{r:?}");
        }
    }

    /// NULL with a ZAP domain asks the handler before its READY: 200 completes with the
    /// handler's User-Id, 400 refuses (ERROR sent, auth failure), whichever side asks.
    #[test]
    fn null_with_zap_domain() {
        for (status, chunk) in [(200, 1), (200, 4096), (400, 16)] {
            let mut cfg = HandshakeConfig::new(SocketType::Router);
            cfg.zap_domain = true;
            let mut server = Handshake::new(cfg);
            let mut client = Handshake::new(HandshakeConfig::new(SocketType::Dealer));
            let (rc, rs) = pump_zap(&mut client, &mut server, chunk, status);
            if status == 200 {
                assert_eq!((rc, rs), (Ok(()), Ok(())));
                let seen = server.peer().unwrap();
                assert_eq!(seen.metadata.get("User-Id").unwrap(), &b"alice"[..]);
                assert!(client.peer().unwrap().metadata.get("User-Id").is_none());
            } else {
                assert_eq!(rs.unwrap_err().auth_status(), Some(400));
                assert_eq!(rc.unwrap_err().auth_status(), Some(400));
            }
        }
        // No handler bound: plain NULL.
        let mut cfg = HandshakeConfig::new(SocketType::Pair);
        cfg.zap_domain = true;
        let mut h = Handshake::new(cfg);
        let mut input = BytesMut::from(&Greeting::new(Mechanism::Null, false).encode()[..]);
        h.handle_input(&mut input).unwrap();
        assert_eq!(out(&mut h).len(), GREETING_LEN, "READY held back");
        assert!(h.take_zap_request().is_some());
        h.handle_no_zap_handler().unwrap();
        assert!(out(&mut h).ends_with(b"\x04PAIR"));
    }

    /// Where the ZAP handler and the peer name the same property, the handler's value is the
    /// one a lookup finds (libzmq inserts the ZAP properties into its map before the ZMTP
    /// ones); the reply's user id is recorded even when empty, shadowing a User-Id in its
    /// metadata. pebbe/zmq4's TestAuthStart has its handler return "Identity".
    #[test]
    fn zap_properties_take_precedence_over_the_peers() {
        let server_keys = crate::curve_keys::KeyPair::generate().unwrap();
        let mut metadata = Metadata::new();
        for (name, value) in [
            ("Identity", "from-zap"),
            ("User-Id", "shadowed"),
            ("Foo", "Bar"),
        ] {
            metadata.insert(name, value.as_bytes().to_vec()).unwrap();
        }
        let reply = ZapReply {
            status: 200,
            user_id: Bytes::new(),
            metadata,
        };
        for mechanism in ["NULL", "PLAIN", "CURVE"] {
            let mut ccfg = HandshakeConfig::new(SocketType::Dealer);
            ccfg.routing_id = Bytes::from_static(b"client-1");
            let mut scfg = HandshakeConfig::new(SocketType::Dealer);
            match mechanism {
                "NULL" => scfg.zap_domain = true,
                "PLAIN" => {
                    ccfg.security = plain_client(b"admin", b"secret");
                    scfg.security = Security::PlainServer;
                }
                _ => {
                    ccfg.security = Security::CurveClient(crate::curve::CurveClientKeys {
                        ours: crate::curve_keys::KeyPair::generate().unwrap(),
                        server: server_keys.public,
                    });
                    scfg.security = Security::CurveServer(server_keys.clone());
                }
            }
            let (mut client, mut server) = (Handshake::new(ccfg), Handshake::new(scfg));
            let (rc, rs) = pump_reply(&mut client, &mut server, 64, &reply);
            assert_eq!((rc, rs), (Ok(()), Ok(())), "{mechanism}");
            let seen = &server.peer().unwrap().metadata;
            let get = |name| seen.get(name).map(|v| v.to_vec());
            assert_eq!(get("Identity"), Some(b"from-zap".to_vec()), "{mechanism}");
            assert_eq!(get("User-Id"), Some(Vec::new()), "{mechanism}");
            assert_eq!(get("Foo"), Some(b"Bar".to_vec()), "{mechanism}");
            assert_eq!(get("Socket-Type"), Some(b"DEALER".to_vec()), "{mechanism}");
            // The peer's own announcement is still there, after the handler's.
            let identities: Vec<_> = seen.iter().filter(|(n, _)| *n == "Identity").collect();
            assert_eq!(identities.len(), 2, "{mechanism}");
            assert_eq!(&identities[1].1[..], b"client-1", "{mechanism}");
            // The routing id is the Identity parsed last: the handler's reply comes before the
            // client's INITIATE (PLAIN) or, in this pump, its READY (NULL); after CURVE's
            // INITIATE.
            let parsed_last: &[u8] = match mechanism {
                "CURVE" => b"from-zap",
                _ => b"client-1",
            };
            let peer = server.peer().unwrap();
            assert_eq!(peer.routing_id.as_deref(), Some(parsed_last), "{mechanism}");
        }
    }

    /// The handler's reply, `metadata` as its properties, to a PLAIN DEALER client (routing id
    /// `client_id`) of a ROUTER server: each side's result and the server.
    fn plain_router_with_zap(
        client_id: &'static [u8],
        metadata: &[(&str, &str)],
    ) -> (
        Result<(), HandshakeError>,
        Result<(), HandshakeError>,
        Handshake,
    ) {
        let mut props = Metadata::new();
        for (name, value) in metadata {
            props.insert(*name, value.as_bytes().to_vec()).unwrap();
        }
        let reply = ZapReply {
            status: 200,
            user_id: Bytes::from_static(b"user"),
            metadata: props,
        };
        let mut ccfg = HandshakeConfig::new(SocketType::Dealer);
        ccfg.routing_id = Bytes::from_static(client_id);
        ccfg.security = plain_client(b"admin", b"secret");
        let mut scfg = HandshakeConfig::new(SocketType::Router);
        scfg.security = Security::PlainServer;
        let (mut client, mut server) = (Handshake::new(ccfg), Handshake::new(scfg));
        let (rc, rs) = pump_reply(&mut client, &mut server, 64, &reply);
        (rc, rs, server)
    }

    /// A DEALER announces Identity even without a routing id: empty, parsed after the
    /// handler's (PLAIN), it leaves the ROUTER to generate one, as libzmq's does, while a
    /// lookup still finds the handler's.
    #[test]
    fn plain_clients_empty_identity_overrides_the_handlers() {
        let (rc, rs, server) = plain_router_with_zap(b"", &[("Identity", "from-zap")]);
        assert_eq!((rc, rs), (Ok(()), Ok(())));
        let peer = server.peer().unwrap();
        assert_eq!(peer.routing_id, None);
        assert_eq!(
            peer.metadata.get("Identity").map(|v| &v[..]),
            Some(&b"from-zap"[..])
        );
    }

    /// A `Socket-Type` in the handler's metadata is checked as the peer's own would be (libzmq
    /// parses both with `parse_metadata`): one that cannot talk to the server fails the
    /// handshake as ZAP_INVALID_METADATA, with nothing sent to the client; one that can passes
    /// and is what a lookup finds.
    #[test]
    fn zap_socket_type_must_pair_with_ours() {
        for wrong in ["PUB", "FOO", "router"] {
            let (rc, rs, _) = plain_router_with_zap(b"c", &[("Socket-Type", wrong)]);
            // No ERROR reached the client: it still waits for WELCOME.
            assert_eq!(rc, Ok(()), "{wrong}");
            let e = rs.unwrap_err();
            assert_eq!(
                e,
                HandshakeError::ZapReply(ZapReplyError::InvalidMetadata),
                "{wrong}"
            );
            assert_eq!(
                e.protocol_error_code(),
                crate::zap::zap_error::INVALID_METADATA
            );
        }
        let (rc, rs, server) = plain_router_with_zap(b"c", &[("Socket-Type", "REQ")]);
        assert_eq!((rc, rs), (Ok(()), Ok(())));
        let peer = server.peer().unwrap();
        assert_eq!(
            peer.metadata.get("Socket-Type").map(|v| &v[..]),
            Some(&b"REQ"[..])
        );
        assert_eq!(peer.socket_type, Some(SocketType::Dealer));
    }

    #[test]
    fn minor_version_recorded_as_libzmq() {
        for ((major, minor), effective) in [((3, 0), 0), ((3, 1), 1), ((3, 5), 1), ((4, 0), 1)] {
            let mut h = Handshake::new(HandshakeConfig::new(SocketType::Pair));
            let mut g = Greeting::new(Mechanism::Null, false);
            g.major = major;
            g.minor = minor;
            let mut input = BytesMut::from(&g.encode()[..]);
            input.extend_from_slice(b"\x04\x1a\x05READY\x0bSocket-Type\0\0\0\x04PAIR");
            h.handle_input(&mut input).unwrap();
            assert_eq!(h.peer().unwrap().minor, effective);
        }
    }

    #[test]
    fn invalid_local_property() {
        let mut cfg = HandshakeConfig::new(SocketType::Pair);
        cfg.properties.push(("no spaces".into(), Bytes::new()));
        let mut h = Handshake::new(cfg);
        assert!(out(&mut h).is_empty());
        let e = h.handle_input(&mut BytesMut::new()).unwrap_err();
        assert!(matches!(e, HandshakeError::InvalidLocalProperty(_)));
    }

    /// Drives a CURVE client and server (no ZAP handler) with one byte of the client's stream
    /// (`to_server`) or the server's flipped by `mask` at offset `at`; each side's result.
    fn curve_pump_flipping(
        at: usize,
        mask: u8,
        to_server: bool,
    ) -> (
        Handshake,
        Handshake,
        Result<(), HandshakeError>,
        Result<(), HandshakeError>,
    ) {
        let keys = crate::curve_keys::KeyPair::generate().unwrap();
        let (mut client, mut server) = curve_pair(&keys, keys.public);
        let (mut c_out, mut s_out) = (BytesMut::new(), BytesMut::new());
        let (mut c_in, mut s_in) = (BytesMut::new(), BytesMut::new());
        let (mut sent_c, mut sent_s) = (0, 0);
        let (mut rc, mut rs) = (Ok(()), Ok(()));
        for _ in 0..20 {
            client.poll_output(&mut c_out);
            server.poll_output(&mut s_out);
            if c_out.is_empty() && s_out.is_empty() {
                break;
            }
            let flip = |out: &mut BytesMut, sent: &mut usize, mine: bool| {
                if mine && (*sent..*sent + out.len()).contains(&at) {
                    out[at - *sent] ^= mask;
                }
                *sent += out.len();
                out.split()
            };
            s_in.extend_from_slice(&flip(&mut c_out, &mut sent_c, to_server));
            c_in.extend_from_slice(&flip(&mut s_out, &mut sent_s, !to_server));
            if rs.is_ok() {
                rs = server.handle_input(&mut s_in);
                if rs.is_ok() && server.take_zap_request().is_some() {
                    rs = server.handle_no_zap_handler();
                }
            }
            if rc.is_ok() {
                rc = client.handle_input(&mut c_in);
            }
        }
        (client, server, rc, rs)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Any CURVE command, well named or not, with an arbitrary body, to either role after
        /// a CURVE greeting: an error or a wait for more, never a panic or a completed
        /// handshake.
        #[test]
        fn curve_arbitrary_commands_never_panic_or_admit(
            name in prop::sample::select(vec![
                &b"HELLO"[..], b"WELCOME", b"INITIATE", b"READY", b"ERROR", b"MESSAGE", b"X",
            ]),
            body in proptest::collection::vec(any::<u8>(), 0..400),
            server_role in any::<bool>(),
        ) {
            let keys = crate::curve_keys::KeyPair::generate().unwrap();
            let (client, server) = curve_pair(&keys, keys.public);
            let mut h = if server_role { server } else { client };
            let mut input =
                BytesMut::from(&Greeting::new(Mechanism::Curve, !server_role).encode()[..]);
            let len = 1 + name.len() + body.len();
            if len <= 255 {
                input.extend_from_slice(&[0x04, u8::try_from(len).unwrap()]);
            } else {
                input.extend_from_slice(&[0x06]);
                input.extend_from_slice(&(len as u64).to_be_bytes());
            }
            input.extend_from_slice(&[u8::try_from(name.len()).unwrap()]);
            input.extend_from_slice(name);
            input.extend_from_slice(&body);
            let _ = h.handle_input(&mut input);
            prop_assert!(!h.is_complete(), "admitted on forged input");
        }

        /// One byte of a genuine CURVE handshake flipped, in either direction: the side that
        /// reads it fails or waits (a length grown past what was sent), or, for a byte the
        /// mechanism does not authenticate such as the greeting's filler, both complete and
        /// their boxes still open at the other side. Never a panic, never a completed
        /// handshake whose keys disagree.
        #[test]
        fn curve_flipped_byte_fails_or_is_harmless(
            at in 0usize..700,
            mask in 1u8..=255,
            to_server in any::<bool>(),
        ) {
            let (mut client, mut server, rc, rs) = curve_pump_flipping(at, mask, to_server);
            if client.is_complete() && server.is_complete() {
                prop_assert!(rc.is_ok() && rs.is_ok());
                let mut c = client.take_curve_codec().unwrap();
                let mut s = server.take_curve_codec().unwrap();
                let boxed = c.encode(b"request", false, false);
                prop_assert_eq!(&s.decode(&boxed).unwrap().body[..], b"request");
                let back = s.encode(b"reply", false, false);
                prop_assert_eq!(&c.decode(&back).unwrap().body[..], b"reply");
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(
            data in proptest::collection::vec(any::<u8>(), 0..200),
            with_greeting in any::<bool>(),
        ) {
            let mut h = Handshake::new(HandshakeConfig::new(SocketType::Dealer));
            let mut input = BytesMut::new();
            if with_greeting {
                input.extend_from_slice(&Greeting::new(Mechanism::Null, false).encode());
            }
            input.extend_from_slice(&data);
            let _ = h.handle_input(&mut input);
            let mut o = BytesMut::new();
            h.poll_output(&mut o);
            prop_assert!(o.len() >= GREETING_FIRST);
        }
    }
}
