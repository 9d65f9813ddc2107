//! The PLAIN security mechanism (RFC 24): a username and password in clear text, checked by
//! the server (through ZAP when a handler is bound; libzmq admits anyone otherwise).
//!
//! ```text
//!  client                                   server
//!  HELLO (username, password) ───────────▶  ServerHello
//!  ClientWelcome ◀───────────────── WELCOME  (or ERROR "400" after a ZAP refusal)
//!  INITIATE (metadata) ──────────────────▶  ServerInitiate
//!  ClientReady  ◀─────────── READY (metadata)
//! ```
//!
//! libzmq's PLAIN writes its ERROR command with the C literal `"\x05ERROR"`, whose hex
//! escape swallows the `E`: the body goes out as `0x5E "RROR" reason_len reason`, and its
//! PLAIN client recognises only that form (a well-formed ERROR is an UNEXPECTED_COMMAND to it,
//! tried against Debian's 4.3.4). So a PLAIN server here sends libzmq's form, and a PLAIN
//! client takes both.
//!
//! Every step follows libzmq 4.3 (src/plain_client.cpp, src/plain_server.cpp) including the
//! protocol error each refusal reports: a command out of turn is UNEXPECTED_COMMAND, a bad
//! HELLO or WELCOME body is MALFORMED_COMMAND_HELLO/_WELCOME, bad metadata INVALID_METADATA.

use bytes::{BufMut, Bytes, BytesMut};

use crate::command::Command;
use crate::frame::Frame;
use crate::handshake_error::HandshakeError;
use crate::metadata::Metadata;
use crate::null::{self, PeerInfo, Refusal};
use crate::secret::Secret;
use crate::socket_type::SocketType;

const HELLO: &[u8] = b"HELLO";
const WELCOME: &[u8] = b"WELCOME";
const INITIATE: &[u8] = b"INITIATE";
/// The first five bytes of libzmq's PLAIN ERROR body (see the module comment).
const LIBZMQ_ERROR: &[u8] = b"\x5eRROR";

/// libzmq's PLAIN ERROR body for a ZAP status: `0x5E "RROR" 3 "400"`.
pub(crate) fn libzmq_error_body(status: u16) -> Vec<u8> {
    let reason = status.to_string();
    let mut body = LIBZMQ_ERROR.to_vec();
    body.push(u8::try_from(reason.len()).unwrap_or(u8::MAX));
    body.extend_from_slice(reason.as_bytes());
    body
}

/// The reason of an ERROR in libzmq's PLAIN form, if `body` is one.
fn libzmq_error_reason(body: &Bytes) -> Option<Result<Bytes, HandshakeError>> {
    let rest = body.strip_prefix(LIBZMQ_ERROR)?;
    let malformed = Err(crate::error::CommandError::MalformedError.into());
    let Some((&len, reason)) = rest.split_first() else {
        return Some(malformed);
    };
    if reason.len() < usize::from(len) {
        return Some(malformed);
    }
    let start = LIBZMQ_ERROR.len() + 1;
    Some(Ok(body.slice(start..start + usize::from(len))))
}

/// What a PLAIN client sends in its HELLO (and a server receives, for its ZAP request).
#[derive(Clone, PartialEq, Eq)]
pub struct PlainCredentials {
    /// At most 255 bytes (`ZMQ_PLAIN_USERNAME`); wiped on drop.
    pub username: Secret,
    /// At most 255 bytes (`ZMQ_PLAIN_PASSWORD`); wiped on drop.
    pub password: Secret,
}

impl std::fmt::Debug for PlainCredentials {
    /// Never prints the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainCredentials")
            .field("username", &String::from_utf8_lossy(&self.username))
            .finish_non_exhaustive()
    }
}

/// HELLO's data: `username_len (1) | username | password_len (1) | password`, exactly.
pub(crate) fn encode_hello(credentials: &PlainCredentials) -> Command {
    let user = &credentials.username[..credentials.username.len().min(255)];
    let pass = &credentials.password[..credentials.password.len().min(255)];
    let mut data = BytesMut::with_capacity(2 + user.len() + pass.len());
    data.put_u8(u8::try_from(user.len()).unwrap_or(u8::MAX));
    data.put_slice(user);
    data.put_u8(u8::try_from(pass.len()).unwrap_or(u8::MAX));
    data.put_slice(pass);
    Command::Unknown {
        name: Bytes::from_static(HELLO),
        data: data.freeze(),
    }
}

/// Parses HELLO's data; libzmq refuses a length past the end and any trailing byte.
pub(crate) fn decode_hello(data: &Bytes) -> Result<PlainCredentials, HandshakeError> {
    let field = |at: usize| -> Result<(Secret, usize), HandshakeError> {
        let len = usize::from(*data.get(at).ok_or(HandshakeError::MalformedHello)?);
        let end = at + 1 + len;
        if end > data.len() {
            return Err(HandshakeError::MalformedHello);
        }
        let bytes = data
            .get(at + 1..end)
            .ok_or(HandshakeError::MalformedHello)?;
        Ok((Secret::from(bytes), end))
    };
    let (username, at) = field(0)?;
    let (password, end) = field(at)?;
    if end != data.len() {
        return Err(HandshakeError::MalformedHello);
    }
    Ok(PlainCredentials { username, password })
}

/// Where one side of a PLAIN handshake stands.
#[derive(Debug)]
pub(crate) enum Plain {
    /// Client: HELLO sent, waiting for WELCOME.
    ClientWelcome,
    /// Client: INITIATE sent, waiting for READY.
    ClientReady,
    /// Server: waiting for HELLO.
    ServerHello,
    /// Server: HELLO received; the driver asks the ZAP handler (`Handshake::take_zap_request`)
    /// and hands its verdict to `Handshake::handle_zap_reply`. `None` once asked.
    ServerZap(Option<PlainCredentials>),
    /// Server: WELCOME sent, waiting for INITIATE.
    ServerInitiate,
}

/// What our side announces, shared by every mechanism.
#[derive(Debug)]
pub(crate) struct Local<'a> {
    pub(crate) socket_type: SocketType,
    pub(crate) minor: u8,
    pub(crate) metadata: &'a Metadata,
}

/// The outcome of one accepted handshake command.
#[derive(Debug)]
pub(crate) enum Step {
    /// Send this (if any) and wait for the next command.
    Continue(Option<Command>),
    /// The handshake is complete once this (if any) is sent.
    Done(PeerInfo, Option<Command>),
}

impl Plain {
    /// A client, and the HELLO it sends as soon as the greetings are exchanged.
    pub(crate) fn client(credentials: &PlainCredentials) -> (Plain, Command) {
        (Plain::ClientWelcome, encode_hello(credentials))
    }

    /// A server, which speaks only after the client's HELLO.
    pub(crate) fn server() -> Plain {
        Plain::ServerHello
    }

    /// Takes the peer's next handshake frame.
    pub(crate) fn handle(&mut self, frame: Frame, local: &Local<'_>) -> Result<Step, Refusal> {
        if !frame.command {
            return Err(HandshakeError::UnexpectedMessage.into());
        }
        if matches!(self, Plain::ClientWelcome | Plain::ClientReady) {
            if let Some(reason) = libzmq_error_reason(&frame.body) {
                return Err(HandshakeError::PeerError { reason: reason? }.into());
            }
        }
        let command = Command::decode(frame.body).map_err(HandshakeError::from)?;
        let unexpected = |c: &Command| -> Refusal {
            HandshakeError::UnexpectedCommand {
                name: Bytes::copy_from_slice(c.name()),
            }
            .into()
        };
        match (&*self, command) {
            (Plain::ClientWelcome | Plain::ClientReady, Command::Error(reason)) => {
                Err(HandshakeError::PeerError { reason }.into())
            }
            (Plain::ClientWelcome, Command::Unknown { name, data }) if name == WELCOME => {
                if !data.is_empty() {
                    return Err(HandshakeError::MalformedWelcome.into());
                }
                *self = Plain::ClientReady;
                Ok(Step::Continue(Some(Command::Unknown {
                    name: Bytes::from_static(INITIATE),
                    data: encode_metadata(local.metadata),
                })))
            }
            (Plain::ClientReady, Command::Ready(metadata)) => {
                let peer = null::accept_metadata(local.socket_type, local.minor, metadata)?;
                Ok(Step::Done(peer, None))
            }
            (Plain::ServerHello, Command::Unknown { name, data }) if name == HELLO => {
                *self = Plain::ServerZap(Some(decode_hello(&data)?));
                Ok(Step::Continue(None))
            }
            (Plain::ServerInitiate, Command::Unknown { name, data }) if name == INITIATE => {
                let metadata = Metadata::decode(data).map_err(HandshakeError::from)?;
                let peer = null::accept_metadata(local.socket_type, local.minor, metadata)?;
                Ok(Step::Done(
                    peer,
                    Some(Command::Ready(local.metadata.clone())),
                ))
            }
            (_, other) => Err(unexpected(&other)),
        }
    }
}

/// The server's WELCOME, sent once the ZAP handler admitted the client.
pub(crate) fn welcome() -> Command {
    Command::Unknown {
        name: Bytes::from_static(WELCOME),
        data: Bytes::new(),
    }
}

fn encode_metadata(metadata: &Metadata) -> Bytes {
    let mut out = BytesMut::with_capacity(metadata.encoded_len());
    metadata.encode(&mut out);
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn creds(u: &'static [u8], p: &'static [u8]) -> PlainCredentials {
        PlainCredentials {
            username: Secret::from(u),
            password: Secret::from(p),
        }
    }

    fn body(c: &Command) -> Vec<u8> {
        let mut out = BytesMut::new();
        c.encode(&mut out);
        out.to_vec()
    }

    #[test]
    fn hello_vectors() {
        assert_eq!(
            body(&encode_hello(&creds(b"admin", b"secret"))),
            b"\x05HELLO\x05admin\x06secret"
        );
        assert_eq!(body(&encode_hello(&creds(b"", b""))), b"\x05HELLO\x00\x00");
        let h = decode_hello(&Bytes::from_static(b"\x05admin\x06secret")).unwrap();
        assert_eq!(
            (&h.username[..], &h.password[..]),
            (&b"admin"[..], &b"secret"[..])
        );
        assert!(!format!("{h:?}").contains("secret"));
        for bad in [
            &b""[..],
            b"\x05admin",
            b"\x05admin\x07secret",
            b"\x05admin\x06secretX",
            b"\x06admin",
        ] {
            assert_eq!(
                decode_hello(&Bytes::copy_from_slice(bad)),
                Err(HandshakeError::MalformedHello),
                "{bad:?}"
            );
        }
    }

    fn local(metadata: &Metadata) -> Local<'_> {
        Local {
            socket_type: SocketType::Dealer,
            minor: 1,
            metadata,
        }
    }

    fn cmd(wire: &'static [u8]) -> Frame {
        Frame::command(Bytes::from_static(wire))
    }

    #[test]
    fn out_of_turn_and_malformed() {
        let m = Metadata::new();
        let err = |mut p: Plain, f: Frame| p.handle(f, &local(&m)).err().unwrap().error;
        assert_eq!(
            err(Plain::server(), cmd(b"\x05READY")),
            HandshakeError::UnexpectedCommand {
                name: Bytes::from_static(b"READY")
            }
        );
        assert_eq!(
            err(Plain::server(), cmd(b"\x05ERROR\x03400")),
            HandshakeError::UnexpectedCommand {
                name: Bytes::from_static(b"ERROR")
            }
        );
        assert_eq!(
            err(Plain::ClientWelcome, cmd(b"\x07WELCOMEx")),
            HandshakeError::MalformedWelcome
        );
        assert_eq!(
            err(Plain::ClientWelcome, cmd(b"\x05READY")),
            HandshakeError::UnexpectedCommand {
                name: Bytes::from_static(b"READY")
            }
        );
        assert_eq!(
            err(Plain::ClientReady, cmd(b"\x05ERROR\x03400")),
            HandshakeError::PeerError {
                reason: Bytes::from_static(b"400")
            }
        );
        // libzmq's own form, and a truncated one.
        assert_eq!(libzmq_error_body(400), b"\x5eRROR\x03400");
        assert_eq!(
            err(Plain::ClientWelcome, cmd(b"\x5eRROR\x03400")),
            HandshakeError::PeerError {
                reason: Bytes::from_static(b"400")
            }
        );
        assert_eq!(
            err(Plain::ClientWelcome, cmd(b"\x5eRROR\x0340")),
            HandshakeError::Command(crate::error::CommandError::MalformedError)
        );
        assert_eq!(
            err(Plain::server(), Frame::message(Bytes::new(), false)),
            HandshakeError::UnexpectedMessage
        );
        assert_eq!(
            err(Plain::server(), cmd(b"\x05HELLO\x01")),
            HandshakeError::MalformedHello
        );
        let e = err(Plain::ServerInitiate, cmd(b"\x08INITIATE\x01"));
        assert_eq!(
            e.protocol_error_code(),
            crate::error::protocol_error::ZMTP_INVALID_METADATA
        );
    }

    proptest! {
        #[test]
        fn hello_round_trips(
            user in proptest::collection::vec(any::<u8>(), 0..256),
            pass in proptest::collection::vec(any::<u8>(), 0..256),
        ) {
            let c = PlainCredentials { username: Secret::from(user), password: Secret::from(pass) };
            let Command::Unknown { data, .. } = encode_hello(&c) else {
                panic!("HELLO is not a known command");
            };
            let h = decode_hello(&data).unwrap();
            prop_assert_eq!(h.username, c.username);
            prop_assert_eq!(h.password, c.password);
        }

        #[test]
        fn arbitrary_frames_never_panic(
            data in proptest::collection::vec(any::<u8>(), 0..120),
            role in 0u8..4,
        ) {
            let m = Metadata::new();
            let mut p = match role {
                0 => Plain::ClientWelcome,
                1 => Plain::ClientReady,
                2 => Plain::ServerHello,
                _ => Plain::ServerInitiate,
            };
            let _ = p.handle(Frame::command(Bytes::from(data)), &local(&m));
        }
    }
}
