//! Arbitrary bytes, cut into arbitrary chunks, as the peer's side of a CURVE handshake, with
//! our side a CURVE server or client (fixed long-term keys). Byte 0: bit 0 picks the server
//! role, bit 1 puts a valid CURVE greeting in front, bit 2 wraps the rest as the body of one
//! command frame (so the fuzzer reaches the HELLO/WELCOME parsers at once); byte 1 seeds the
//! chunk sizes. Invariants checked:
//! - nothing panics; `handle_input` never grows the buffer; the output stays bounded;
//! - bytes that were not made with the keys never complete a handshake (a forged HELLO,
//!   WELCOME, INITIATE or READY does not open), so the codec is never handed out.
//!
//! Random bytes never get past the first box, so byte 0 bit 3 plays a genuine peer instead
//! (a real `Handshake` with the matching keys, answering what we send, in memory) and lets
//! the fuzzer spoil its bytes: bit 4 clear flips them (the rest is triples: a big-endian u16
//! offset into the peer's byte stream and an XOR mask), bit 4 set cuts the stream (the
//! rest is a big-endian u16 cut offset, then what the peer sends from there on). This reaches
//! the WELCOME, INITIATE, READY and cookie checks with one field wrong at a time. Invariants:
//! - the untouched exchange completes on both sides;
//! - whatever was spoiled, if our side completes, the keys agree: each side's codec opens a
//!   MESSAGE the other made (so a spoiled byte was one the protocol does not authenticate,
//!   such as padding, never a key, a cookie or metadata).
#![no_main]

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    CurveClientKeys, Greeting, Handshake, HandshakeConfig, KeyPair, Mechanism, Metadata, Security,
    SocketType, ZapReply, GREETING_LEN, SHORT_MAX,
};
use libfuzzer_sys::fuzz_target;

const MAX_OUTPUT: usize = GREETING_LEN + 200 + 200 + 300;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    if data[0] & 8 != 0 {
        return genuine(data);
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
        assert!(
            handshake.take_zap_request().is_none(),
            "a forged INITIATE opened"
        );
        handshake.poll_output(&mut out);
        assert!(
            out.len() <= MAX_OUTPUT,
            "output grew to {} bytes",
            out.len()
        );
        if result.is_err() {
            break;
        }
    }
    assert!(
        !handshake.is_complete(),
        "forged bytes completed a CURVE handshake"
    );
    assert!(handshake.take_curve_codec().is_none());
}

/// Both sides' configs: ours as the byte 0 bit 0 role, the peer the other role, long-term
/// keys that match (the server's public key is the one the client expects).
fn configs(server: bool) -> (HandshakeConfig, HandshakeConfig) {
    let server_keys = KeyPair::from_secret([7; 32]);
    let client_keys = KeyPair::from_secret([9; 32]);
    let mut as_server = HandshakeConfig::new(SocketType::Router);
    as_server.security = Security::CurveServer(server_keys.clone());
    let mut as_client = HandshakeConfig::new(SocketType::Dealer);
    as_client.security = Security::CurveClient(CurveClientKeys {
        ours: client_keys,
        server: server_keys.public,
    });
    if server {
        (as_server, as_client)
    } else {
        (as_client, as_server)
    }
}

/// A server side asks ZAP once it has the client's INITIATE; the handler admits.
fn admit(handshake: &mut Handshake) -> Result<(), ferromq_zmtp::HandshakeError> {
    if handshake.take_zap_request().is_some() {
        handshake.handle_zap_reply(Ok(ZapReply {
            status: 200,
            user_id: Bytes::new(),
            metadata: Metadata::new(),
        }))
    } else {
        Ok(())
    }
}

fn genuine(data: &[u8]) {
    let server = data[0] & 1 != 0;
    let cut_mode = data[0] & 16 != 0;
    let rest = &data[2..];
    let (cut, tail, flips): (Option<usize>, &[u8], Vec<(usize, u8)>) = if cut_mode {
        if rest.len() < 2 {
            return;
        }
        let at = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        (Some(at), &rest[2..], Vec::new())
    } else {
        let flips = rest
            .chunks_exact(3)
            .map(|t| (usize::from(u16::from_be_bytes([t[0], t[1]])), t[2]))
            .filter(|&(_, mask)| mask != 0)
            .collect();
        (None, &[], flips)
    };
    let spoiled = cut.is_some() || !flips.is_empty();

    let (our_config, peer_config) = configs(server);
    let mut ours = Handshake::new(our_config);
    let mut peer = Handshake::new(peer_config);
    let mut seed = u32::from(data[1]) | 0x100;
    // The peer's bytes as sent (after spoiling) and not yet fed to us.
    let mut wire = Vec::new();
    let mut sent = 0usize;
    let mut tail_sent = false;
    let mut our_buf = BytesMut::new();
    let mut peer_buf = BytesMut::new();
    let mut our_out_total = 0usize;
    let mut our_failed = false;
    let mut peer_failed = false;
    for _ in 0..32 {
        let mut progressed = false;
        // The peer's output, spoiled where asked, onto the wire.
        let mut out = BytesMut::new();
        peer.poll_output(&mut out);
        for &byte in out.iter() {
            let at = sent;
            sent += 1;
            match cut {
                Some(c) if at >= c => continue,
                _ => {}
            }
            let mask = flips
                .iter()
                .filter(|&&(o, _)| o == at)
                .fold(0u8, |m, &(_, x)| m ^ x);
            wire.push(byte ^ mask);
        }
        if let Some(c) = cut {
            if sent >= c && !tail_sent {
                wire.extend_from_slice(tail);
                tail_sent = true;
            }
        }
        // Our output to the peer, whole and untouched.
        let mut out = BytesMut::new();
        ours.poll_output(&mut out);
        our_out_total += out.len();
        assert!(
            our_out_total <= MAX_OUTPUT,
            "output grew to {our_out_total} bytes"
        );
        if !out.is_empty() && !peer_failed {
            progressed = true;
            peer_buf.extend_from_slice(&out);
            let before = peer_buf.len();
            peer_failed = peer
                .handle_input(&mut peer_buf)
                .and_then(|()| admit(&mut peer))
                .is_err();
            assert!(peer_buf.len() <= before, "handle_input grew the buffer");
        }
        // The wire to us, in chunks.
        while !wire.is_empty() && !our_failed {
            progressed = true;
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let take = (seed as usize % 64 + 1).min(wire.len());
            our_buf.extend_from_slice(&wire[..take]);
            wire.drain(..take);
            let before = our_buf.len();
            our_failed = ours
                .handle_input(&mut our_buf)
                .and_then(|()| admit(&mut ours))
                .is_err();
            assert!(our_buf.len() <= before, "handle_input grew the buffer");
        }
        if !progressed || our_failed {
            break;
        }
    }
    if !spoiled {
        assert!(
            ours.is_complete() && peer.is_complete(),
            "a genuine exchange did not complete"
        );
    }
    if ours.is_complete() {
        let mut mine = ours
            .take_curve_codec()
            .expect("a complete CURVE handshake has a codec");
        assert!(
            ours.take_curve_codec().is_none(),
            "the codec is handed out once"
        );
        if let Some(mut theirs) = peer.take_curve_codec() {
            let to_us = theirs.encode(b"from the peer", true, false);
            let got = mine
                .decode(&to_us)
                .expect("the peer's MESSAGE opens: the keys agree");
            assert_eq!((&got.body[..], got.more), (&b"from the peer"[..], true));
            let to_them = mine.encode(b"from us", false, false);
            let got = theirs
                .decode(&to_them)
                .expect("our MESSAGE opens on the peer");
            assert_eq!(&got.body[..], b"from us");
        } else {
            // Our side accepted a READY (or WELCOME + READY) the peer never completed with:
            // only possible if the spoiled bytes still carried what the keys made.
            assert!(spoiled, "our side completed alone on a genuine exchange");
            let to_them = mine.encode(b"x", false, false);
            assert!(!to_them.is_empty());
        }
    }
}
