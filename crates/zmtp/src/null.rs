//! The NULL security mechanism (RFC 37 §The NULL Security Mechanism): each side sends READY
//! with its metadata and checks the peer's. libzmq sends its READY without waiting for the
//! peer's (src/null_mechanism.cpp), and so do we.

use bytes::Bytes;

use crate::command::Command;
use crate::error::MetadataError;
use crate::frame::Frame;
use crate::handshake_error::HandshakeError;
use crate::metadata::Metadata;
use crate::socket_type::SocketType;

/// READY property carrying the sender's socket type.
pub(crate) const SOCKET_TYPE: &str = "Socket-Type";
/// READY property carrying the sender's routing id (RFC 37 "Identity").
pub(crate) const IDENTITY: &str = "Identity";
/// The property a ZAP handler's user id reaches messages under (`zmq_msg_gets`).
pub(crate) const USER_ID: &str = "User-Id";
/// Reason we give in the ERROR sent to a peer whose socket type cannot talk to ours.
pub(crate) const INCOMPATIBLE_REASON: &[u8] = b"Incompatible Socket-Type";

/// What the peer announced in its READY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// Effective protocol minor version: 0 for a ZMTP 3.0 peer, 1 for 3.1 and anything newer
    /// (libzmq `select_handshake_fun`).
    pub minor: u8,
    /// ZMTP major version spoken with the peer: 3, or 2 for a ZMTP 2.0 peer (libzmq 3.x),
    /// which has no commands (no PING, subscriptions as messages) and sent no READY.
    pub major: u8,
    /// The peer's socket type; `None` for an unversioned ZMTP 1.0 peer, which never says.
    pub socket_type: Option<SocketType>,
    /// The routing id the peer's `Identity` property names, `None` when absent or empty. Where
    /// an admitting ZAP reply's metadata names one too, the one parsed last wins, as in
    /// libzmq, which parses both lists with one function (`mechanism_t::parse_metadata`): the
    /// client's under PLAIN (its INITIATE follows the ZAP exchange), the handler's under CURVE
    /// (the reply follows INITIATE), under NULL whichever of READY and the reply came last.
    pub routing_id: Option<Bytes>,
    /// Every property of the peer's READY, in wire order.
    pub metadata: Metadata,
}

/// Why the peer's READY (or what came instead) was refused, and whether to answer with ERROR.
pub(crate) struct Refusal {
    pub(crate) error: HandshakeError,
    pub(crate) reply: Option<Command>,
}

impl From<HandshakeError> for Refusal {
    fn from(error: HandshakeError) -> Self {
        Self { error, reply: None }
    }
}

/// Our READY: Socket-Type always, Identity only for REQ, DEALER and ROUTER (as libzmq's
/// src/mechanism.cpp `make_command_with_basic_properties`), then the user properties.
pub(crate) fn our_ready(
    socket_type: SocketType,
    routing_id: &Bytes,
    properties: &[(String, Bytes)],
) -> Result<Command, MetadataError> {
    let mut m = Metadata::new();
    m.insert(
        SOCKET_TYPE,
        Bytes::from_static(socket_type.name().as_bytes()),
    )?;
    if matches!(
        socket_type,
        SocketType::Req | SocketType::Dealer | SocketType::Router
    ) {
        m.insert(IDENTITY, routing_id.clone())?;
    }
    for (name, value) in properties {
        m.insert(name.clone(), value.clone())?;
    }
    Ok(Command::Ready(m))
}

/// Judges the first frame after the greetings: it must be the peer's READY (or an ERROR).
pub(crate) fn accept_ready(ours: SocketType, minor: u8, frame: Frame) -> Result<PeerInfo, Refusal> {
    if !frame.command {
        return Err(HandshakeError::UnexpectedMessage.into());
    }
    let metadata = match Command::decode(frame.body).map_err(HandshakeError::from)? {
        Command::Ready(m) => m,
        Command::Error(reason) => return Err(HandshakeError::PeerError { reason }.into()),
        other => {
            return Err(HandshakeError::UnexpectedCommand {
                name: Bytes::copy_from_slice(other.name()),
            }
            .into())
        }
    };
    accept_metadata(ours, minor, metadata)
}

/// The routing id a property list names, as libzmq's `mechanism_t::parse_metadata` takes it:
/// every property named exactly `Identity` sets it, so the last one wins; `Some(None)` for an
/// empty one (a ROUTER then generates an id), `None` where the list names none.
pub(crate) fn identity_of(metadata: &Metadata) -> Option<Option<Bytes>> {
    metadata
        .iter()
        .filter(|(name, _)| *name == IDENTITY)
        .last()
        .map(|(_, id)| (!id.is_empty()).then(|| id.clone()))
}

/// Judges the peer's connection metadata (NULL's READY, PLAIN's INITIATE and READY): its
/// Socket-Type must be one that can talk to ours (RFC 23 pairing table).
///
/// The Socket-Type is found ignoring case, as RFC 37 asks ("Metadata names SHALL be
/// case-insensitive"; "The peer SHOULD enforce that the other peer is using a valid socket
/// type"): a `socket-type` is judged too. libzmq judges only a property named exactly
/// `Socket-Type` and admits a peer that names none (docs/compatibility.md lists both as ours
/// being stricter); what a lookup finds afterwards is libzmq's exact-name answer either way.
pub(crate) fn accept_metadata(
    ours: SocketType,
    minor: u8,
    metadata: Metadata,
) -> Result<PeerInfo, Refusal> {
    let Some(name) = metadata.get_ignore_case(SOCKET_TYPE) else {
        return Err(HandshakeError::MissingSocketType.into());
    };
    let refuse = |error| Refusal {
        error,
        reply: Some(Command::Error(Bytes::from_static(INCOMPATIBLE_REASON))),
    };
    let Some(peer) = SocketType::from_name(name) else {
        return Err(refuse(HandshakeError::UnknownSocketType {
            name: name.clone(),
        }));
    };
    if !ours.is_compatible(peer) {
        return Err(refuse(HandshakeError::IncompatibleSocketType {
            ours,
            peer,
        }));
    }
    let routing_id = identity_of(&metadata).flatten();
    Ok(PeerInfo {
        minor,
        major: 3,
        socket_type: Some(peer),
        routing_id,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CommandError;

    fn ready(props: &[(&str, &[u8])]) -> Frame {
        let mut m = Metadata::new();
        for (n, v) in props {
            m.insert(*n, Bytes::copy_from_slice(v)).unwrap();
        }
        let mut body = bytes::BytesMut::new();
        Command::Ready(m).encode(&mut body);
        Frame::command(body.freeze())
    }

    #[test]
    fn identity_only_for_routing_types() {
        let id = Bytes::from_static(b"me");
        for t in SocketType::all() {
            let Command::Ready(m) = our_ready(*t, &id, &[]).unwrap() else {
                panic!("not READY");
            };
            assert_eq!(m.get("Socket-Type").unwrap(), t.name().as_bytes());
            let routing = matches!(t, SocketType::Req | SocketType::Dealer | SocketType::Router);
            assert_eq!(m.get("Identity").is_some(), routing, "{t:?}");
        }
        let props = [("X-Who".to_string(), Bytes::from_static(b"v"))];
        let Command::Ready(m) = our_ready(SocketType::Push, &id, &props).unwrap() else {
            panic!("not READY");
        };
        assert_eq!(
            m.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            ["Socket-Type", "X-Who"]
        );
        let bad = [("bad name".to_string(), Bytes::new())];
        assert!(our_ready(SocketType::Push, &id, &bad).is_err());
    }

    #[test]
    fn accepts_and_records_peer() {
        let p = accept_ready(
            SocketType::Router,
            1,
            ready(&[
                ("Socket-Type", b"DEALER"),
                ("Identity", b"abc"),
                ("X-k", b"v"),
            ]),
        )
        .ok()
        .unwrap();
        assert_eq!(p.socket_type, Some(SocketType::Dealer));
        assert_eq!(p.routing_id.as_deref(), Some(&b"abc"[..]));
        assert_eq!(p.metadata.get("X-k").unwrap(), &b"v"[..]);
        assert!(p.metadata.get("x-K").is_none());
        let p = accept_ready(
            SocketType::Router,
            0,
            ready(&[("socket-type", b"REQ"), ("Identity", b"")]),
        )
        .ok()
        .unwrap();
        assert_eq!((p.minor, p.routing_id), (0, None));
    }

    #[test]
    fn refusals() {
        let err = |r: Result<PeerInfo, Refusal>| {
            let r = r.err().unwrap();
            (r.error, r.reply.is_some())
        };
        let t = SocketType::Push;
        assert_eq!(
            err(accept_ready(t, 1, Frame::message(Bytes::new(), false))),
            (HandshakeError::UnexpectedMessage, false)
        );
        assert_eq!(
            err(accept_ready(t, 1, ready(&[("Identity", b"x")]))),
            (HandshakeError::MissingSocketType, false)
        );
        assert_eq!(
            err(accept_ready(t, 1, ready(&[("Socket-Type", b"PUSH")]))),
            (
                HandshakeError::IncompatibleSocketType {
                    ours: t,
                    peer: SocketType::Push
                },
                true
            )
        );
        assert_eq!(
            err(accept_ready(t, 1, ready(&[("Socket-Type", b"pull")]))),
            (
                HandshakeError::UnknownSocketType {
                    name: Bytes::from_static(b"pull")
                },
                true
            )
        );
        assert_eq!(
            err(accept_ready(
                t,
                1,
                Frame::command(Bytes::from_static(b"\x05ERROR\x03400"))
            )),
            (
                HandshakeError::PeerError {
                    reason: Bytes::from_static(b"400")
                },
                false
            )
        );
        assert_eq!(
            err(accept_ready(
                t,
                1,
                Frame::command(Bytes::from_static(b"\x04PING\0\0"))
            )),
            (
                HandshakeError::UnexpectedCommand {
                    name: Bytes::from_static(b"PING")
                },
                false
            )
        );
        assert_eq!(
            err(accept_ready(
                t,
                1,
                Frame::command(Bytes::from_static(b"\x05ERROR"))
            )),
            (HandshakeError::Command(CommandError::MalformedError), false)
        );
    }
}
