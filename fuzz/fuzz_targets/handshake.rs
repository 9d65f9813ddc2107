//! Arbitrary bytes, cut into arbitrary chunks, as the peer's side of a NULL handshake.
//!
//! Input layout: byte 0 picks our role (bit 0: as server) and socket type (bits 1..=5); bit 6
//! puts a valid NULL 3.1 greeting in front of the peer's bytes, and bit 7 (with bit 6) also
//! wraps the rest of the input as the body of a READY command frame, so the fuzzer spends its
//! time in the READY metadata instead of rediscovering the greeting; byte 1 seeds the chunk
//! sizes, the rest is what the peer sends. Invariants checked:
//! - nothing panics; `handle_input` never grows the buffer;
//! - the output stays bounded: our greeting, our READY and at most one ERROR, and a second
//!   `poll_output` with no input in between adds nothing;
//! - a completed 3.x handshake has a peer whose socket type is compatible with ours (1.0 and
//!   2.0 peers, which libzmq does not check, complete with any type or none);
//! - whatever follows the peer's READY goes through `Command::decode` and `Metadata::decode`.
#![no_main]

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    Command, Greeting, Handshake, HandshakeConfig, Mechanism, Metadata, SocketType, GREETING_LEN,
    SHORT_MAX,
};
use libfuzzer_sys::fuzz_target;

/// Greeting + READY (Socket-Type and an empty Identity) + ERROR (with a 255-byte reason)
/// with generous headroom; our side never has more to say during a NULL handshake.
const MAX_OUTPUT: usize = GREETING_LEN + 128 + 300;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let types = SocketType::all();
    let ours = types[usize::from(data[0] >> 1) % types.len()];
    let mut config = HandshakeConfig::new(ours);
    config.as_server = data[0] & 1 != 0;
    let mut handshake = Handshake::new(config);

    let mut out = BytesMut::new();
    handshake.poll_output(&mut out);
    assert_eq!(out.len(), 10, "the signature goes out at once");

    let mut seed = u32::from(data[1]) | 0x100;
    let peer_bytes = peer_stream(data[0], &data[2..]);
    let mut stream = &peer_bytes[..];
    let mut buf = BytesMut::new();
    while !stream.is_empty() && !handshake.is_complete() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 32 + 1).min(stream.len());
        buf.extend_from_slice(&stream[..take]);
        stream = &stream[take..];

        let before = buf.len();
        let result = handshake.handle_input(&mut buf);
        assert!(buf.len() <= before, "handle_input grew the buffer");
        poll_bounded(&mut handshake, &mut out);
        if result.is_err() {
            return;
        }
    }
    if !handshake.is_complete() {
        return;
    }
    let peer = handshake.peer().expect("a complete handshake has a peer");
    // ZMTP 1.0 and 2.0 peers are not checked, as libzmq 4.3 does not (src/zmtp_engine.cpp).
    assert!(
        peer.major < 3 || peer.socket_type.is_some_and(|t| ours.is_compatible(t)),
        "{ours:?} accepted {:?}",
        peer.socket_type
    );

    buf.extend_from_slice(stream);
    let tail: Bytes = buf.freeze();
    let _ = Command::decode(tail.clone());
    let _ = Metadata::decode(tail);
}

/// What the peer sends: the fuzzed bytes, behind a valid greeting and READY header if asked.
fn peer_stream(selector: u8, fuzzed: &[u8]) -> Vec<u8> {
    let mut stream = Vec::with_capacity(GREETING_LEN + 15 + fuzzed.len());
    if selector & 0x40 != 0 {
        stream.extend_from_slice(&Greeting::new(Mechanism::Null, false).encode());
        if selector & 0x80 != 0 {
            // RFC 23 framing: flags COMMAND (| LONG above 255 bytes), size, "\x05READY", data
            let size = 6 + fuzzed.len();
            if size <= SHORT_MAX {
                stream.extend_from_slice(&[0x04, size as u8]);
            } else {
                stream.push(0x06);
                stream.extend_from_slice(&(size as u64).to_be_bytes());
            }
            stream.extend_from_slice(b"\x05READY");
        }
    }
    stream.extend_from_slice(fuzzed);
    stream
}

fn poll_bounded(handshake: &mut Handshake, out: &mut BytesMut) {
    handshake.poll_output(out);
    assert!(
        out.len() <= MAX_OUTPUT,
        "output grew to {} bytes",
        out.len()
    );
    let settled = out.len();
    handshake.poll_output(out);
    assert_eq!(out.len(), settled, "poll_output produced output twice");
}
