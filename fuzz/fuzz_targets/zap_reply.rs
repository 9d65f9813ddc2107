//! What a ZAP handler answers (the application's code, any C program bound to
//! inproc://zeromq.zap.01), through `zap::parse_reply` and `Handshake::handle_zap_reply`, in
//! a server handshake with a genuine client (a second `Handshake`, in memory).
//!
//! Byte 0: bits 0..=1 the mechanism (NULL with a ZAP domain, PLAIN server, CURVE server; 3 is
//! CURVE too), bits 2..=7 our socket type (an index into `SocketType::all()`). Byte 1: bit 0
//! a well-formed reply (bits 6..=7 its status: 200, 200, 400, 300) whose user id and metadata
//! come from the rest, else seven (sometimes not seven) raw frames cut from the rest; bit 1
//! (NULL) answers only once the client's READY is in, so the handler's properties are parsed
//! last; bit 2 the client's routing id is empty; bit 3 the client adds one more `Identity`
//! property; bits 4..=5 which of the types that pair with ours the client is.
//!
//! Invariants:
//! - nothing panics; the server asks ZAP once; its output stays bounded;
//! - the handshake completes (on both sides) exactly when the reply parsed, said 200, and
//!   every `Socket-Type` in its metadata names a type that pairs with ours;
//! - otherwise the server's error is the typed one for what was wrong (the parse error, the
//!   metadata refusal, or the refusal status), and stays its answer to later input;
//! - a completed peer's routing id is the last `Identity` parsed: the handler's under CURVE
//!   (its reply follows INITIATE), the client's under PLAIN (INITIATE follows the reply),
//!   under NULL whichever came last; the one that came first only where the other names none;
//! - the handler's user id and properties shadow the client's, and a lookup finds the first
//!   property of exactly that name (libzmq's `metadata_t::get`; case matters).
#![no_main]

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    zap::parse_reply, CurveClientKeys, Handshake, HandshakeConfig, HandshakeError, KeyPair,
    Metadata, PlainCredentials, Secret, Security, SocketType, ZapReplyError, GREETING_LEN,
};
use libfuzzer_sys::fuzz_target;

/// Greeting, the mechanism's commands (CURVE's largest), our READY, one ERROR.
const MAX_OUTPUT: usize = GREETING_LEN + 200 + 200 + 300;
const REQUEST_ID: &[u8] = b"1";
const CLIENT_ID: &[u8] = b"client-id";
const EXTRA_ID: &[u8] = b"extra-id";

/// Names the well-formed mode draws from: the ones the handshake looks at, a case variant it
/// must not take for them, and one it only passes on.
const NAMES: [&str; 6] = [
    "Socket-Type",
    "Identity",
    "User-Id",
    "socket-type",
    "identity",
    "X-Tag",
];

fuzz_target!(|data: &[u8]| run(data));

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mech {
    Null,
    Plain,
    Curve,
}

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let mech = match data[0] & 3 {
        0 => Mech::Null,
        1 => Mech::Plain,
        _ => Mech::Curve,
    };
    let all = SocketType::all();
    let ours = all[usize::from(data[0] >> 2) % all.len()];
    let pairs: Vec<SocketType> = all
        .iter()
        .copied()
        .filter(|&t| ours.is_compatible(t) && t.is_compatible(ours))
        .collect();
    let Some(&theirs) = pairs.get(usize::from((data[1] >> 4) & 3) % pairs.len().max(1)) else {
        return;
    };
    let defer = data[1] & 2 != 0;
    let client_id: &[u8] = if data[1] & 4 != 0 { b"" } else { CLIENT_ID };
    let extra_identity = data[1] & 8 != 0;
    let frames = reply_frames(data[1], &data[2..]);
    let parsed = parse_reply(&frames, REQUEST_ID);

    let (server_config, client_config) = configs(mech, ours, theirs, client_id, extra_identity);
    let mut server = Handshake::new(server_config);
    let mut client = Handshake::new(client_config);

    let mut to_server = BytesMut::new();
    let mut to_client = BytesMut::new();
    let mut delivered_to_server = 0usize;
    let mut server_out = 0usize;
    let mut asked = 0;
    let mut pending = false;
    let mut answer: Option<Result<(), HandshakeError>> = None;
    // Whether the client's metadata (NULL's READY) was parsed before the reply.
    let mut client_meta_first = false;
    let mut server_err: Option<HandshakeError> = None;
    let mut client_err: Option<HandshakeError> = None;
    for _ in 0..32 {
        let mut progressed = false;
        let mut out = BytesMut::new();
        client.poll_output(&mut out);
        if !out.is_empty() && server_err.is_none() {
            progressed = true;
            delivered_to_server += out.len();
            to_server.extend_from_slice(&out);
            let before = to_server.len();
            if let Err(e) = server.handle_input(&mut to_server) {
                server_err = Some(e);
            }
            assert!(to_server.len() <= before, "handle_input grew the buffer");
        }
        if server_err.is_none() {
            if let Some(request) = server.take_zap_request() {
                asked += 1;
                assert_eq!(asked, 1, "ZAP asked twice");
                assert_eq!(
                    request.credentials.len(),
                    match mech {
                        Mech::Null => 0,
                        Mech::Plain => 2,
                        Mech::Curve => 1,
                    }
                );
                pending = true;
            }
        }
        // NULL with bit 1: the reply waits until nothing else moves (the client's READY in).
        if pending && server_err.is_none() && (!defer || !progressed) {
            pending = false;
            progressed = true;
            client_meta_first = match mech {
                Mech::Null => delivered_to_server > GREETING_LEN && to_server.is_empty(),
                Mech::Plain => false,
                Mech::Curve => true,
            };
            let result = server.handle_zap_reply(parsed.clone());
            if let Err(e) = &result {
                server_err = Some(e.clone());
            }
            answer = Some(result);
        }
        let mut out = BytesMut::new();
        server.poll_output(&mut out);
        server_out += out.len();
        assert!(
            server_out <= MAX_OUTPUT,
            "output grew to {server_out} bytes"
        );
        if !out.is_empty() && client_err.is_none() {
            progressed = true;
            to_client.extend_from_slice(&out);
            if let Err(e) = client.handle_input(&mut to_client) {
                client_err = Some(e);
            }
        }
        if !progressed {
            break;
        }
    }
    assert_eq!(asked, 1, "the server never asked ZAP");
    let Some(answer) = answer else {
        panic!("the reply was never handed over");
    };

    // What the reply should have done, worked out from the frames alone.
    let verdict = parsed.as_ref().map_err(|e| *e).and_then(|reply| {
        let pairs_with_ours = reply.metadata.iter().all(|(name, value)| {
            name != "Socket-Type"
                || SocketType::from_name(value).is_some_and(|t| ours.is_compatible(t))
        });
        if pairs_with_ours {
            Ok(reply.status)
        } else {
            Err(ZapReplyError::InvalidMetadata)
        }
    });
    match verdict {
        Ok(200) => {
            assert_eq!(answer, Ok(()));
            assert!(server_err.is_none(), "{server_err:?}");
            assert!(client_err.is_none(), "{client_err:?}");
            assert!(server.is_complete(), "an admitted client did not complete");
            assert!(client.is_complete(), "the client did not complete");
        }
        Ok(status) => {
            assert_eq!(answer, Err(HandshakeError::ZapRefused { status }));
            assert!(!server.is_complete() && !client.is_complete());
        }
        Err(e) => {
            assert_eq!(answer, Err(HandshakeError::ZapReply(e)));
            assert!(!server.is_complete() && !client.is_complete());
        }
    }
    if let Err(e) = answer {
        // A refusal is final: more input gets the same error.
        let mut more = BytesMut::from(&b"\x04\x05\x05READY"[..]);
        assert_eq!(server.handle_input(&mut more), Err(e));
        assert!(server.take_zap_request().is_none());
        return;
    }
    let Ok(reply) = parsed else {
        unreachable!("a completed handshake had a parsed reply");
    };
    let peer = server.peer().expect("a complete handshake has a peer");
    assert_eq!(peer.socket_type, Some(theirs));

    let mut client_ids: Vec<Option<Bytes>> = Vec::new();
    if matches!(
        theirs,
        SocketType::Req | SocketType::Dealer | SocketType::Router
    ) {
        client_ids.push(nonempty(client_id));
    }
    if extra_identity {
        client_ids.push(nonempty(EXTRA_ID));
    }
    let client_last = client_ids.last().cloned();
    let zap_last = reply
        .metadata
        .iter()
        .filter(|(name, _)| *name == "Identity")
        .last()
        .map(|(_, v)| (!v.is_empty()).then(|| v.clone()));
    let want = if client_meta_first {
        zap_last.or(client_last)
    } else {
        client_last.or(zap_last)
    }
    .flatten();
    assert_eq!(
        peer.routing_id, want,
        "routing id (handler's parsed last: {client_meta_first})"
    );

    // The handler's user id, then its properties, ahead of the client's: a lookup is libzmq's
    // (the exact name, the first inserted), so the model is the first exact match in that
    // order, and a name differing only in case is another property.
    let mut handler = Metadata::new();
    handler
        .insert("User-Id", reply.user_id.clone())
        .expect("a valid name");
    for (name, value) in reply.metadata.iter() {
        handler.insert(name, value.clone()).expect("a parsed name");
    }
    let mut client_props: Vec<(&str, Bytes)> =
        vec![("Socket-Type", Bytes::from_static(theirs.name().as_bytes()))];
    if matches!(
        theirs,
        SocketType::Req | SocketType::Dealer | SocketType::Router
    ) {
        client_props.push(("Identity", Bytes::copy_from_slice(client_id)));
    }
    if extra_identity {
        client_props.push(("Identity", Bytes::from_static(EXTRA_ID)));
    }
    let lookups = NAMES
        .iter()
        .map(|n| n.to_string())
        .chain(NAMES.iter().map(|n| n.to_ascii_uppercase()))
        .chain(handler.iter().map(|(n, _)| n.to_owned()));
    for name in lookups {
        let model = handler
            .iter()
            .chain(client_props.iter().map(|(n, v)| (*n, v)))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v);
        assert_eq!(
            peer.metadata.get(&name),
            model,
            "{name}: not the first exact match, the handler's ahead of the client's"
        );
    }
    assert_eq!(peer.metadata.len(), handler.len() + client_props.len());
    if mech == Mech::Curve {
        assert!(server.take_curve_codec().is_some());
    }
}

fn nonempty(id: &[u8]) -> Option<Bytes> {
    (!id.is_empty()).then(|| Bytes::copy_from_slice(id))
}

/// Our side as the server of `mech`, the client of the same mechanism with matching
/// credentials (the handler decides, not the keys).
fn configs(
    mech: Mech,
    ours: SocketType,
    theirs: SocketType,
    client_id: &[u8],
    extra_identity: bool,
) -> (HandshakeConfig, HandshakeConfig) {
    let mut server = HandshakeConfig::new(ours);
    let mut client = HandshakeConfig::new(theirs);
    client.routing_id = Bytes::copy_from_slice(client_id);
    if extra_identity {
        client
            .properties
            .push(("Identity".into(), Bytes::from_static(EXTRA_ID)));
    }
    match mech {
        Mech::Null => {
            server.zap_domain = true;
        }
        Mech::Plain => {
            server.security = Security::PlainServer;
            client.security = Security::PlainClient(PlainCredentials {
                username: Secret::from(b"admin"),
                password: Secret::from(b"secret"),
            });
        }
        Mech::Curve => {
            let keys = KeyPair::from_secret([7; 32]);
            client.security = Security::CurveClient(CurveClientKeys {
                ours: KeyPair::from_secret([9; 32]),
                server: keys.public,
            });
            server.security = Security::CurveServer(keys);
        }
    }
    (server, client)
}

/// Takes a length byte and that many bytes (fewer where the input ends).
fn take<'a>(rest: &mut &'a [u8]) -> &'a [u8] {
    let Some((&len, tail)) = rest.split_first() else {
        return &[];
    };
    let n = usize::from(len).min(tail.len());
    *rest = &tail[n..];
    &tail[..n]
}

/// The reply's frames: well-formed (byte 1 bit 0) with fuzzed user id and properties, or raw.
fn reply_frames(mode: u8, mut rest: &[u8]) -> Vec<Bytes> {
    if mode & 1 != 0 {
        let status: &'static [u8] = match mode >> 6 {
            0 | 1 => b"200",
            2 => b"400",
            _ => b"300",
        };
        let user_id = Bytes::copy_from_slice(take(&mut rest));
        // Properties: a selector byte (bits 0..=2 the name, bit 3 a valid socket type name
        // chosen by bits 4..=7 as the value), then a length-prefixed value.
        let mut metadata = Metadata::new();
        while let Some((&selector, tail)) = rest.split_first() {
            rest = tail;
            let name = NAMES[usize::from(selector & 7) % NAMES.len()];
            let value = if selector & 8 != 0 {
                let all = SocketType::all();
                Bytes::from_static(
                    all[usize::from(selector >> 4) % all.len()]
                        .name()
                        .as_bytes(),
                )
            } else {
                Bytes::copy_from_slice(take(&mut rest))
            };
            metadata.insert(name, value).expect("a valid name");
        }
        let mut body = BytesMut::new();
        metadata.encode(&mut body);
        return vec![
            Bytes::new(),
            Bytes::from_static(b"1.0"),
            Bytes::from_static(REQUEST_ID),
            Bytes::from_static(status),
            Bytes::from_static(b"OK"),
            user_id,
            body.freeze(),
        ];
    }
    // Raw: byte 2 >= 0xF0 sets the frame count (its low nibble), else seven; each frame but
    // the last is length-prefixed, the last takes what is left.
    let count = match rest.split_first() {
        Some((&n, tail)) if n >= 0xF0 => {
            rest = tail;
            usize::from(n & 0x0F)
        }
        _ => 7,
    };
    let mut frames = Vec::with_capacity(count);
    for i in 0..count {
        if i + 1 == count {
            frames.push(Bytes::copy_from_slice(rest));
        } else {
            frames.push(Bytes::copy_from_slice(take(&mut rest)));
        }
    }
    frames
}
