//! Arbitrary bytes, cut into arbitrary chunks, through `FrameDecoder`.
//!
//! Input layout: byte 0 picks the size limit (bit 7 clear: none; set: bytes 1..=2 as a u16),
//! byte 3 seeds the chunk sizes, the rest is the stream. Invariants checked:
//! - `NeedMore(n)`: n >= 1, the buffer is untouched, and once the header is complete n is
//!   exactly what the frame still lacks;
//! - `Frame`: it consumed exactly one frame, the body is the tail of the consumed bytes, it
//!   respects the size limit, and re-encoding it gives the consumed bytes back (modulo the
//!   reserved flag bits, which the decoder ignores as libzmq does, and modulo a long size field
//!   used for a short body, which the decoder accepts but the encoder never writes); a command
//!   frame that `Command::decode` accepts re-encodes through `Encoder::push_command`, except
//!   where encoding drops bytes on purpose (a PING/PONG context past `PING_CONTEXT_MAX`, which
//!   libzmq truncates in its PONG; bytes after an ERROR reason, which decode ignores as libzmq
//!   does): then the re-encoded body is a prefix of the consumed one;
//! - an error ends the stream (the connection would be closed); nothing panics.
#![no_main]

use bytes::{Bytes, BytesMut};
use ferromq_zmtp::{
    Command, Decoded, Encoder, FrameDecoder, FrameError, COMMAND, LONG, MORE, PING_CONTEXT_MAX,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let max = (data[0] & 0x80 != 0).then(|| u64::from(u16::from_be_bytes([data[1], data[2]])));
    let mut seed = u32::from(data[3]) | 0x100;
    let mut stream = &data[4..];
    let mut decoder = FrameDecoder::new(max);
    let mut buf = BytesMut::new();
    while !stream.is_empty() {
        // xorshift: chunk sizes 1..=64, reproducible from the input alone
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 64 + 1).min(stream.len());
        buf.extend_from_slice(&stream[..take]);
        stream = &stream[take..];
        if !drain(&mut decoder, &mut buf, max) {
            return;
        }
    }
}

/// Decodes every complete frame in `buf`; false once the decoder has refused the stream.
fn drain(decoder: &mut FrameDecoder, buf: &mut BytesMut, max: Option<u64>) -> bool {
    loop {
        let before = Bytes::copy_from_slice(buf);
        match decoder.decode(buf) {
            Ok(Decoded::NeedMore(n)) => {
                assert!(n >= 1, "NeedMore(0)");
                assert_eq!(&buf[..], &before[..], "NeedMore touched the buffer");
                if let Some(total) = frame_len(&before) {
                    assert_eq!(n as u64, total - before.len() as u64, "NeedMore amount");
                }
                return true;
            }
            Ok(Decoded::Frame(frame)) => {
                let consumed = before.len() - buf.len();
                check_frame(&before[..consumed], &frame.body, frame.more, frame.command);
                if let Some(max) = max {
                    assert!(frame.body.len() as u64 <= max, "frame above the limit");
                }
                assert_eq!(
                    &buf[..],
                    &before[consumed..],
                    "decode consumed more than a frame"
                );
            }
            Err(err) => {
                if let FrameError::TooLarge { size, max: limit } = err {
                    assert!(size > limit);
                }
                return false;
            }
        }
    }
}

/// The whole length of the frame at the start of `buf`, once its header is complete.
fn frame_len(buf: &[u8]) -> Option<u64> {
    let flags = *buf.first()?;
    if flags & LONG != 0 {
        let size: [u8; 8] = buf.get(1..9)?.try_into().ok()?;
        u64::from_be_bytes(size).checked_add(9)
    } else {
        Some(u64::from(*buf.get(1)?) + 2)
    }
}

fn check_frame(consumed: &[u8], body: &Bytes, more: bool, command: bool) {
    let flags = consumed[0];
    assert_eq!(more, flags & MORE != 0);
    assert_eq!(command, flags & COMMAND != 0);
    let header = if flags & LONG != 0 { 9 } else { 2 };
    assert_eq!(consumed.len(), header + body.len());
    assert_eq!(&consumed[header..], &body[..]);

    let canonical = (flags & LONG != 0) == (body.len() > 255);
    if !canonical {
        return;
    }
    let mut expected = consumed.to_vec();
    expected[0] &= MORE | LONG | COMMAND;
    let mut encoder = Encoder::new();
    if command {
        // A command frame re-encodes through `Command` when it parses: decode and encode
        // must round-trip byte for byte. MORE on a command is accepted (libzmq does) but
        // never produced, so such frames are only checked structurally above.
        if more {
            return;
        }
        let Ok(cmd) = Command::decode(body.clone()) else {
            return;
        };
        let mut again = BytesMut::new();
        cmd.encode(&mut again);
        let lossy = match &cmd {
            Command::Ping { context, .. } | Command::Pong { context } => {
                context.len() > PING_CONTEXT_MAX
            }
            Command::Error(_) => again.len() < body.len(),
            _ => false,
        };
        if lossy {
            assert!(
                body.starts_with(&again),
                "a truncating re-encoding is not a prefix of the body"
            );
            return;
        }
        encoder.push_command(&cmd);
    } else {
        encoder.push_frame(body, more);
    }
    assert_eq!(
        drain_encoder(&mut encoder),
        expected,
        "re-encoding differs from the consumed bytes"
    );
}

fn drain_encoder(encoder: &mut Encoder) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoder.len());
    while !encoder.is_empty() {
        let mut slices = [std::io::IoSlice::new(&[]); 4];
        let n = encoder.io_slices(&mut slices);
        let mut written = 0;
        for slice in &slices[..n] {
            out.extend_from_slice(slice);
            written += slice.len();
        }
        assert!(written > 0, "encoder not empty but gave no bytes");
        encoder.advance(written);
    }
    out
}
