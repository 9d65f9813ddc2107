//! The CURVE security mechanism (RFC 26, CurveZMQ, as libzmq 4.3 speaks it): the client
//! knows the server's long-term public key; both make short-term keys for the connection.
//!
//! ```text
//!  client (C, c; knows S)                              server (S, s)
//!  HELLO  C' | nonce 1 | box[C'->S](64 zeros) ──────▶  ServerHello
//!  ClientWelcome ◀── WELCOME nonce | box[S->C'](S' | cookie)
//!                    cookie = nonce | secretbox[K](C' | s'), K random per connection
//!  INITIATE cookie | nonce 2 |
//!    box[C'->S'](C | vouch | metadata) ───────────────▶  ServerInitiate (then ZAP: C)
//!    vouch = nonce | box[C->S'](C' | S)
//!  ClientReady ◀── READY nonce 1 | box[S'->C'](metadata)
//! ```
//!
//! Then every frame is a MESSAGE ([`crate::curve_message`]) under the short-term keys, whose
//! shared key was computed once here. Short nonces are big-endian counters from 1, each side
//! its own; the long nonces (WELCOME, cookie, vouch) are random. Sizes and refusals follow
//! src/curve_client.cpp and src/curve_server.cpp.

use bytes::Bytes;

use crate::curve_error::CurveError;
use crate::curve_keys::{nonce, random, CookieKey, KeyPair, SharedKey, KEY_LEN};
use crate::curve_message::CurveCodec;
use crate::frame::Frame;
use crate::handshake_error::HandshakeError;
use crate::metadata::Metadata;
use crate::null::{self, PeerInfo, Refusal};
use crate::plain::Local;

const HELLO: &[u8] = b"\x05HELLO";
const WELCOME: &[u8] = b"\x07WELCOME";
const INITIATE: &[u8] = b"\x08INITIATE";
const READY: &[u8] = b"\x05READY";
const ERROR: &[u8] = b"\x05ERROR";

const HELLO_LEN: usize = 200;
const WELCOME_LEN: usize = 168;
/// INITIATE without metadata: name, cookie, short nonce, box of C | vouch.
const INITIATE_MIN: usize = 9 + 96 + 8 + 16 + 32 + 16 + 80;
/// READY without metadata: name, short nonce, tag.
const READY_MIN: usize = 6 + 8 + 16;

/// A CURVE client's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurveClientKeys {
    /// Our long-term pair (`ZMQ_CURVE_PUBLICKEY`/`SECRETKEY`).
    pub ours: KeyPair,
    /// The server's long-term public key (`ZMQ_CURVE_SERVERKEY`).
    pub server: [u8; KEY_LEN],
}

/// Where one side of a CURVE handshake stands.
#[derive(Debug)]
pub(crate) enum Curve {
    /// Client: HELLO sent.
    ClientWelcome {
        keys: CurveClientKeys,
        short: KeyPair,
    },
    /// Client: INITIATE sent.
    ClientReady { precom: SharedKey },
    /// Server: waiting for HELLO.
    ServerHello { ours: KeyPair },
    /// Server: WELCOME sent.
    ServerInitiate {
        cookie: CookieKey,
        short: KeyPair,
        client_short: [u8; KEY_LEN],
        peer_nonce: u64,
    },
    /// Server: INITIATE accepted; the ZAP handler decides. `client` is taken by the request.
    ServerZap {
        client: Option<[u8; KEY_LEN]>,
        precom: SharedKey,
        peer: Box<PeerInfo>,
        peer_nonce: u64,
    },
    /// Done: the codec for the connection's MESSAGEs.
    Done(Option<CurveCodec>),
}

/// Splits a command body into its name (with the length octet) and data.
fn name_of(body: &[u8]) -> &[u8] {
    let n = body.first().map_or(0, |&n| usize::from(n));
    &body[..body.len().min(1 + n)]
}

fn crypto<T>(r: Result<T, crate::curve_keys::BoxError>) -> Result<T, Refusal> {
    r.map_err(|_| HandshakeError::Curve(CurveError::Cryptographic).into())
}

fn curve(e: CurveError) -> Refusal {
    HandshakeError::Curve(e).into()
}

impl Curve {
    /// A client, and its HELLO (short nonce 1).
    pub(crate) fn client(keys: CurveClientKeys) -> Result<(Curve, Vec<u8>), HandshakeError> {
        let short = KeyPair::generate().ok_or(HandshakeError::Curve(CurveError::NoRandomness))?;
        let n = 1u64.to_be_bytes();
        let mut hello = Vec::with_capacity(HELLO_LEN);
        hello.extend_from_slice(HELLO);
        hello.extend_from_slice(&[1, 0]);
        hello.extend_from_slice(&[0; 72]);
        hello.extend_from_slice(&short.public);
        hello.extend_from_slice(&n);
        short
            .shared(&keys.server)
            .map_err(|_| HandshakeError::Curve(CurveError::Cryptographic))?
            .seal_into(&nonce(b"CurveZMQHELLO---", &n), &[0; 64], &mut hello);
        Ok((Curve::ClientWelcome { keys, short }, hello))
    }

    /// A server, which speaks only after the client's HELLO.
    pub(crate) fn server(ours: KeyPair) -> Curve {
        Curve::ServerHello { ours }
    }

    /// Takes the peer's next handshake frame; replies are raw command bodies.
    pub(crate) fn handle(&mut self, frame: Frame, local: &Local<'_>) -> Result<CurveStep, Refusal> {
        if !frame.command {
            return Err(HandshakeError::UnexpectedMessage.into());
        }
        let body = frame.body;
        let name = name_of(&body);
        let state = std::mem::replace(self, Curve::Done(None));
        match (state, name) {
            (Curve::ClientWelcome { .. } | Curve::ClientReady { .. }, ERROR) => {
                let reason = crate::command::Command::decode(body)
                    .map_err(HandshakeError::from)
                    .and_then(|c| match c {
                        crate::command::Command::Error(r) => Ok(r),
                        _ => Err(HandshakeError::Curve(CurveError::MalformedMessage)),
                    })?;
                Err(HandshakeError::PeerError { reason }.into())
            }
            (Curve::ClientWelcome { keys, short }, WELCOME) => {
                if body.len() != WELCOME_LEN {
                    return Err(curve(CurveError::MalformedWelcome));
                }
                let n = nonce(b"WELCOME-", &body[8..24]);
                let plain = crypto(crypto(short.shared(&keys.server))?.open(&n, &body[24..]))?;
                let (server_short, cookie) = plain.split_at(KEY_LEN);
                let server_short: [u8; KEY_LEN] = server_short
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedWelcome))?;
                let precom = crypto(short.shared(&server_short))?;
                // The vouch: C' | S under our long-term key and the server's short-term one.
                let vouch_tail = random::<16>().ok_or_else(|| curve(CurveError::NoRandomness))?;
                let mut vouch_plain = short.public.to_vec();
                vouch_plain.extend_from_slice(&keys.server);
                let vouch = crypto(keys.ours.shared(&server_short))?
                    .seal(&nonce(b"VOUCH---", &vouch_tail), &vouch_plain);
                let mut plain = keys.ours.public.to_vec();
                plain.extend_from_slice(&vouch_tail);
                plain.extend_from_slice(&vouch);
                plain.extend_from_slice(&metadata_bytes(local.metadata));
                let n = 2u64.to_be_bytes();
                let mut initiate = INITIATE.to_vec();
                initiate.extend_from_slice(cookie);
                initiate.extend_from_slice(&n);
                precom.seal_into(&nonce(b"CurveZMQINITIATE", &n), &plain, &mut initiate);
                *self = Curve::ClientReady { precom };
                Ok(CurveStep::Continue(Some(initiate)))
            }
            (Curve::ClientReady { precom }, READY) => {
                if body.len() < READY_MIN {
                    return Err(curve(CurveError::MalformedReady));
                }
                let short: [u8; 8] = body[6..14]
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedReady))?;
                let plain = crypto(precom.open(&nonce(b"CurveZMQREADY---", &short), &body[14..]))?;
                let metadata =
                    Metadata::decode(Bytes::from(plain)).map_err(HandshakeError::from)?;
                let peer = null::accept_metadata(local.socket_type, local.minor, metadata)?;
                let codec = CurveCodec::new(precom, true, 3, u64::from_be_bytes(short));
                Ok(CurveStep::Done(Box::new(peer), codec, None))
            }
            (Curve::ServerHello { ours }, HELLO) => {
                if body.len() != HELLO_LEN || body[6..8] != [1, 0] {
                    return Err(curve(CurveError::MalformedHello));
                }
                let client_short: [u8; KEY_LEN] = body[80..112]
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedHello))?;
                let short_nonce: [u8; 8] = body[112..120]
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedHello))?;
                let n = nonce(b"CurveZMQHELLO---", &short_nonce);
                let zeros = crypto(crypto(ours.shared(&client_short))?.open(&n, &body[120..]))?;
                if zeros != [0; 64] {
                    return Err(curve(CurveError::Cryptographic));
                }
                let short = KeyPair::generate().ok_or_else(|| curve(CurveError::NoRandomness))?;
                let cookie =
                    CookieKey::generate().ok_or_else(|| curve(CurveError::NoRandomness))?;
                let cookie_tail = random::<16>().ok_or_else(|| curve(CurveError::NoRandomness))?;
                let mut cookie_plain = client_short.to_vec();
                cookie_plain.extend_from_slice(&short.secret_bytes());
                let cookie_box = cookie.seal(&nonce(b"COOKIE--", &cookie_tail), &cookie_plain);
                zeroize::Zeroize::zeroize(&mut cookie_plain);
                let mut plain = short.public.to_vec();
                plain.extend_from_slice(&cookie_tail);
                plain.extend_from_slice(&cookie_box);
                let welcome_tail = random::<16>().ok_or_else(|| curve(CurveError::NoRandomness))?;
                let mut welcome = WELCOME.to_vec();
                welcome.extend_from_slice(&welcome_tail);
                crypto(ours.shared(&client_short))?.seal_into(
                    &nonce(b"WELCOME-", &welcome_tail),
                    &plain,
                    &mut welcome,
                );
                *self = Curve::ServerInitiate {
                    cookie,
                    short,
                    client_short,
                    peer_nonce: u64::from_be_bytes(short_nonce),
                };
                Ok(CurveStep::Continue(Some(welcome)))
            }
            (
                Curve::ServerInitiate {
                    cookie,
                    short,
                    client_short,
                    peer_nonce,
                },
                INITIATE,
            ) => {
                if body.len() < INITIATE_MIN {
                    return Err(curve(CurveError::MalformedInitiate));
                }
                // Our cookie must hold this connection's C' and s'.
                let kept = crypto(cookie.open(&nonce(b"COOKIE--", &body[9..25]), &body[25..105]))?;
                let mut expected = client_short.to_vec();
                expected.extend_from_slice(&short.secret_bytes());
                let same = kept == expected;
                zeroize::Zeroize::zeroize(&mut expected);
                if !same {
                    return Err(curve(CurveError::Cryptographic));
                }
                let short_nonce: [u8; 8] = body[105..113]
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedInitiate))?;
                let n = u64::from_be_bytes(short_nonce);
                if n <= peer_nonce {
                    return Err(curve(CurveError::InvalidSequence));
                }
                let precom = crypto(short.shared(&client_short))?;
                let plain =
                    crypto(precom.open(&nonce(b"CurveZMQINITIATE", &short_nonce), &body[113..]))?;
                let client: [u8; KEY_LEN] = plain[..KEY_LEN]
                    .try_into()
                    .map_err(|_| curve(CurveError::MalformedInitiate))?;
                let vouch = crypto(
                    crypto(short.shared(&client))?
                        .open(&nonce(b"VOUCH---", &plain[32..48]), &plain[48..128]),
                )?;
                // libzmq checks the vouch's C' only (src/curve_server.cpp), so a server that set
                // only its secret key (pyzmq's examples do) works: S is not compared.
                if vouch.get(..KEY_LEN) != Some(&client_short[..]) {
                    return Err(curve(CurveError::KeyExchange));
                }
                let metadata = Metadata::decode(Bytes::copy_from_slice(&plain[128..]))
                    .map_err(HandshakeError::from)?;
                let peer = null::accept_metadata(local.socket_type, local.minor, metadata)?;
                *self = Curve::ServerZap {
                    client: Some(client),
                    precom,
                    peer: Box::new(peer),
                    peer_nonce: n,
                };
                Ok(CurveStep::Continue(None))
            }
            (_, name) => Err(HandshakeError::UnexpectedCommand {
                name: Bytes::copy_from_slice(name.get(1..).unwrap_or_default()),
            }
            .into()),
        }
    }

    /// The client's long-term key for the ZAP request, once.
    pub(crate) fn take_zap_key(&mut self) -> Option<[u8; KEY_LEN]> {
        match self {
            Curve::ServerZap { client, .. } => client.take(),
            _ => None,
        }
    }

    /// Whether the server waits for the ZAP verdict (asked already).
    pub(crate) fn awaits_zap(&self) -> bool {
        matches!(self, Curve::ServerZap { client: None, .. })
    }

    /// Admitted: our READY (short nonce 1) and the completed peer.
    pub(crate) fn admit(&mut self, local: &Local<'_>) -> Option<(Vec<u8>, PeerInfo)> {
        let Curve::ServerZap {
            precom,
            peer,
            peer_nonce,
            ..
        } = std::mem::replace(self, Curve::Done(None))
        else {
            return None;
        };
        let plain = metadata_bytes(local.metadata);
        let n = 1u64.to_be_bytes();
        let mut ready = READY.to_vec();
        ready.extend_from_slice(&n);
        precom.seal_into(&nonce(b"CurveZMQREADY---", &n), &plain, &mut ready);
        *self = Curve::Done(Some(CurveCodec::new(precom, false, 2, peer_nonce)));
        Some((ready, *peer))
    }

    /// The MESSAGE codec, once the handshake is complete.
    pub(crate) fn take_codec(&mut self) -> Option<CurveCodec> {
        match self {
            Curve::Done(codec) => codec.take(),
            _ => None,
        }
    }
}

/// The outcome of one accepted CURVE command.
#[derive(Debug)]
pub(crate) enum CurveStep {
    /// Send this command body (if any) and wait.
    Continue(Option<Vec<u8>>),
    /// Complete: the peer, the codec, and a last body to send.
    Done(Box<PeerInfo>, CurveCodec, Option<Vec<u8>>),
}

/// The metadata's wire form.
fn metadata_bytes(metadata: &Metadata) -> Vec<u8> {
    let mut out = bytes::BytesMut::with_capacity(metadata.encoded_len());
    metadata.encode(&mut out);
    out.to_vec()
}
