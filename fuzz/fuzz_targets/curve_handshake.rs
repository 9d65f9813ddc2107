//! Arbitrary bytes, cut into arbitrary chunks, as the peer's side of a CURVE handshake, with
//! our side a CURVE server or client (fixed long-term keys). Byte 0: bit 0 picks the server
//! role, bit 1 puts a valid CURVE greeting in front, bit 2 wraps the rest as the body of one
//! command frame (so the fuzzer reaches the HELLO/WELCOME parsers at once); byte 1 seeds the
//! chunk sizes. Invariants checked:
//! - nothing panics; `handle_input` never grows the buffer; the output stays bounded;
//! - bytes that were not made with the keys never complete a handshake (a forged HELLO,
//!   WELCOME, INITIATE or READY does not open), so the codec is never handed out.
#![no_main]

use bytes::BytesMut;
use ferromq_zmtp::{
    CurveClientKeys, Greeting, Handshake, HandshakeConfig, KeyPair, Mechanism, Security,
    SocketType, GREETING_LEN, SHORT_MAX,
};
use libfuzzer_sys::fuzz_target;

const MAX_OUTPUT: usize = GREETING_LEN + 200 + 200 + 300;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let server = data[0] & 1 != 0;
    let ours = KeyPair::from_secret([7; 32]);
    let mut config = HandshakeConfig::new(SocketType::Router);
    config.security = if server {
        Security::CurveServer(ours)
    } else {
        Security::CurveClient(CurveClientKeys {
            ours,
            server: KeyPair::from_secret([9; 32]).public,
        })
    };
    let mut handshake = Handshake::new(config);
    let mut peer = Vec::new();
    if data[0] & 2 != 0 {
        peer.extend_from_slice(&Greeting::new(Mechanism::Curve, !server).encode());
    }
    let fuzzed = &data[2..];
    if data[0] & 4 != 0 {
        if fuzzed.len() <= SHORT_MAX {
            peer.extend_from_slice(&[0x04, fuzzed.len() as u8]);
        } else {
            peer.push(0x06);
            peer.extend_from_slice(&(fuzzed.len() as u64).to_be_bytes());
        }
    }
    peer.extend_from_slice(fuzzed);

    let mut out = BytesMut::new();
    let mut seed = u32::from(data[1]) | 0x100;
    let mut stream = &peer[..];
    let mut buf = BytesMut::new();
    while !stream.is_empty() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 64 + 1).min(stream.len());
        buf.extend_from_slice(&stream[..take]);
        stream = &stream[take..];
        let before = buf.len();
        let result = handshake.handle_input(&mut buf);
        assert!(buf.len() <= before, "handle_input grew the buffer");
        assert!(handshake.take_zap_request().is_none(), "a forged INITIATE opened");
        handshake.poll_output(&mut out);
        assert!(out.len() <= MAX_OUTPUT, "output grew to {} bytes", out.len());
        if result.is_err() {
            break;
        }
    }
    assert!(!handshake.is_complete(), "forged bytes completed a CURVE handshake");
    assert!(handshake.take_curve_codec().is_none());
}
