//! Arbitrary bytes, cut into arbitrary chunks, as the peer's side of a PLAIN handshake, with
//! our side a PLAIN client or server. Byte 0: bit 0 picks the server role, bit 1 has the ZAP
//! handler admit (200) rather than refuse (400), bit 2 puts a valid PLAIN greeting in front of
//! the peer's bytes; byte 1 seeds the chunk sizes; the rest is what the peer sends.
//! Invariants checked:
//! - nothing panics; `handle_input` never grows the buffer;
//! - the output stays bounded (greeting, HELLO or WELCOME, INITIATE or READY, one ERROR);
//! - a server asks ZAP at most once, and completes only if the handler admitted;
//! - a refused client never completes.
#![no_main]

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    Greeting, Handshake, HandshakeConfig, Mechanism, Metadata, PlainCredentials, Secret, Security,
    SocketType, ZapReply, GREETING_LEN,
};
use libfuzzer_sys::fuzz_target;

const MAX_OUTPUT: usize = GREETING_LEN + 600 + 300;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let server = data[0] & 1 != 0;
    let admit = data[0] & 2 != 0;
    let mut config = HandshakeConfig::new(SocketType::Dealer);
    config.security = if server {
        Security::PlainServer
    } else {
        Security::PlainClient(PlainCredentials {
            username: Secret::from(b"admin"),
            password: Secret::from(b"secret"),
        })
    };
    let mut handshake = Handshake::new(config);
    let mut peer = Vec::new();
    if data[0] & 4 != 0 {
        peer.extend_from_slice(&Greeting::new(Mechanism::Plain, !server).encode());
    }
    peer.extend_from_slice(&data[2..]);

    let mut out = BytesMut::new();
    let mut seed = u32::from(data[1]) | 0x100;
    let mut stream = &peer[..];
    let mut buf = BytesMut::new();
    let mut asked = 0;
    let mut refused = false;
    while !stream.is_empty() && !handshake.is_complete() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 48 + 1).min(stream.len());
        buf.extend_from_slice(&stream[..take]);
        stream = &stream[take..];
        let before = buf.len();
        let mut result = handshake.handle_input(&mut buf);
        assert!(buf.len() <= before, "handle_input grew the buffer");
        if result.is_ok() {
            if let Some(request) = handshake.take_zap_request() {
                asked += 1;
                assert!(server, "a client never asks ZAP");
                assert_eq!(request.credentials.len(), 2);
                result = handshake.handle_zap_reply(Ok(ZapReply {
                    status: if admit { 200 } else { 400 },
                    user_id: Bytes::new(),
                    metadata: Metadata::new(),
                }));
                refused |= !admit;
            }
        }
        handshake.poll_output(&mut out);
        assert!(out.len() <= MAX_OUTPUT, "output grew to {} bytes", out.len());
        if result.is_err() {
            break;
        }
    }
    assert!(asked <= 1, "ZAP asked {asked} times");
    if handshake.is_complete() {
        assert!(!refused, "completed after a ZAP refusal");
        assert!(!server || asked == 1, "a server completed without asking ZAP");
    }
}
