//! Arbitrary bytes, cut into arbitrary chunks, as a ZMTP 1.0 peer's frames (libzmq 2.x). Byte 0
//! seeds the chunk sizes, byte 1 picks ZMQ_MAXMSGSIZE (none, or 0..=254). Invariants checked:
//! - nothing panics; `decode` never grows the buffer;
//! - `NeedMore` leaves the buffer as it was; each frame consumed exactly its header and body:
//!   re-encoding the frames and appending what is left gives back the input fed (headers in
//!   the peer's form: libzmq's short form below 255, the long form otherwise);
//! - a frame above MAXMSGSIZE is never accepted; a refusal is final.
#![no_main]

use bytes::BytesMut;
use ferromq_zmtp::{put_v1_header, Decoded, V1Decoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let max = (data[1] != 0xff).then_some(u64::from(data[1]));
    let mut decoder = V1Decoder::new(max);
    let input = &data[2..];
    let mut seed = u32::from(data[0]) | 0x100;
    let mut fed = 0;
    let mut buf = BytesMut::new();
    let mut again = BytesMut::new();
    while fed < input.len() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 16 + 1).min(input.len() - fed);
        buf.extend_from_slice(&input[fed..fed + take]);
        fed += take;
        loop {
            let before = buf.len();
            let start = fed - before;
            match decoder.decode(&mut buf) {
                Err(_) => return,
                Ok(Decoded::NeedMore(n)) => {
                    assert!(n >= 1);
                    assert_eq!(buf.len(), before, "NeedMore consumed bytes");
                    break;
                }
                Ok(Decoded::Frame(frame)) => {
                    assert!(buf.len() < before, "a frame consumed nothing");
                    if let Some(max) = max {
                        assert!(frame.body.len() as u64 <= max, "frame above MAXMSGSIZE");
                    }
                    let consumed = &input[start..start + (before - buf.len())];
                    // Re-encode in the peer's header form (it may use the long form for a
                    // short frame) and its flags octet (the decoder reads only bit 0).
                    let long = consumed[0] == 0xff;
                    let header = if long { 10 } else { 2 };
                    let mut h = BytesMut::new();
                    if long && frame.body.len() + 1 < 255 {
                        h.extend_from_slice(&[0xff]);
                        h.extend_from_slice(&(frame.body.len() as u64 + 1).to_be_bytes());
                        h.extend_from_slice(&[0]);
                    } else {
                        put_v1_header(&mut h, frame.body.len(), frame.more);
                    }
                    h[header - 1] = consumed[header - 1];
                    again.clear();
                    again.extend_from_slice(&h);
                    again.extend_from_slice(&frame.body);
                    assert_eq!(&again[..], consumed, "frame bytes differ from what was consumed");
                }
            }
        }
    }
}
