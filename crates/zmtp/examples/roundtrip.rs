//! Two peers meet and exchange messages entirely in memory through the sans-IO codec.
//!
//! A DEALER (client) and a ROUTER (server) run the ZMTP 3.1 greeting and NULL handshake by
//! pumping bytes into each other, then the DEALER sends a batch of multipart messages through the
//! batching [`Encoder`] and the ROUTER decodes them back with the [`FrameDecoder`]. Nothing here
//! touches a socket: the byte buffers are the "wire".
//!
//! Run: `cargo run -p ferromq-zmtp --example roundtrip`

use std::io::IoSlice;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    Decoded, Encoder, FrameDecoder, Handshake, HandshakeConfig, HandshakeError, SocketType,
};

/// Moves whatever `from` wants to send into `wire`, then lets `to` consume it.
fn pump(
    from: &mut Handshake,
    wire: &mut BytesMut,
    to: &mut Handshake,
) -> Result<(), HandshakeError> {
    from.poll_output(wire);
    to.handle_input(wire)
}

/// Drains an encoder into a contiguous buffer, the way a vectored write would.
fn drain(encoder: &mut Encoder, wire: &mut BytesMut) {
    while !encoder.is_empty() {
        let mut slices = [IoSlice::new(&[]); 64];
        let n = encoder.io_slices(&mut slices);
        let written: usize = slices[..n].iter().map(|s| s.len()).sum();
        for s in &slices[..n] {
            wire.extend_from_slice(s);
        }
        encoder.advance(written);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut client_cfg = HandshakeConfig::new(SocketType::Dealer);
    client_cfg.routing_id = Bytes::from_static(b"client-1");
    let mut server_cfg = HandshakeConfig::new(SocketType::Router);
    server_cfg.as_server = true;
    let mut client = Handshake::new(client_cfg);
    let mut server = Handshake::new(server_cfg);

    // Greeting + READY in both directions; a few rounds suffice.
    let (mut c2s, mut s2c) = (BytesMut::new(), BytesMut::new());
    for _ in 0..4 {
        pump(&mut client, &mut c2s, &mut server)?;
        pump(&mut server, &mut s2c, &mut client)?;
    }
    let (Some(seen_by_server), Some(seen_by_client)) = (server.peer(), client.peer()) else {
        return Err("handshake did not complete".into());
    };
    println!(
        "handshake done: server sees a {} with routing id {:?}; client sees a {} (ZMTP 3.{})",
        seen_by_server.socket_type.map_or("unknown", |t| t.name()),
        seen_by_server.routing_id,
        seen_by_client.socket_type.map_or("unknown", |t| t.name()),
        seen_by_client.minor
    );

    // A batch of two-frame messages, one of them larger than the copy threshold.
    let messages = 10_000;
    let small = Bytes::from(vec![7u8; 64]);
    let large = Bytes::from(vec![9u8; 64 * 1024]);
    let mut encoder = Encoder::new();
    let mut wire = c2s; // anything left after READY already belongs to the frame stream
    let started = Instant::now();
    for i in 0..messages {
        encoder.push_frame(&Bytes::from_static(b"header"), true);
        encoder.push_frame(if i % 1000 == 0 { &large } else { &small }, false);
    }
    drain(&mut encoder, &mut wire);
    let encoded_bytes = wire.len();

    let mut decoder = FrameDecoder::new(None);
    let (mut frames, mut complete, mut body_bytes) = (0usize, 0usize, 0usize);
    while let Decoded::Frame(frame) = decoder.decode(&mut wire)? {
        frames += 1;
        body_bytes += frame.body.len();
        if !frame.more {
            complete += 1;
        }
    }
    let elapsed = started.elapsed();
    if complete != messages || !wire.is_empty() {
        return Err(format!("decoded {complete} of {messages} messages").into());
    }
    println!(
        "round-tripped {messages} messages ({frames} frames, {body_bytes} body bytes, \
         {encoded_bytes} bytes on the wire) in {:.2} ms",
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}
