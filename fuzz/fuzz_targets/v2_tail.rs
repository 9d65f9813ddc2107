//! Arbitrary bytes, cut into arbitrary chunks, as a ZMTP 2.0 peer's greeting tail (socket-type
//! byte and identity frame). Byte 0 seeds the chunk sizes, byte 1 picks ZMQ_MAXMSGSIZE (none,
//! or 0..=254). Invariants checked:
//! - nothing panics; `decode` never grows the buffer;
//! - a refusal is final for the input that caused it, and a result, once given, consumed
//!   exactly one type byte and one frame: re-encoding it and appending what is left gives
//!   back the input that was fed;
//! - an identity above MAXMSGSIZE is never accepted.
#![no_main]

use bytes::BytesMut;
use ferromq_zmtp::v2::encode_tail;
use ferromq_zmtp::V2TailDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let max = (data[1] != 0xff).then_some(u64::from(data[1]));
    let mut decoder = V2TailDecoder::new(max);
    let input = &data[2..];
    let mut seed = u32::from(data[0]) | 0x100;
    let mut fed = 0;
    let mut buf = BytesMut::new();
    while fed < input.len() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let take = (seed as usize % 16 + 1).min(input.len() - fed);
        buf.extend_from_slice(&input[fed..fed + take]);
        fed += take;
        let before = buf.len();
        let result = decoder.decode(&mut buf);
        assert!(buf.len() <= before, "decode grew the buffer");
        match result {
            Err(_) => return,
            Ok(None) => {}
            Ok(Some(tail)) => {
                if let Some(max) = max {
                    assert!(tail.identity.len() as u64 <= max, "identity above MAXMSGSIZE");
                }
                // A long-form size header (flags 0x02) re-encodes short: compare only when the
                // peer used the short form, as libzmq does for bodies up to 255 bytes.
                if input[1] & 0x02 == 0 {
                    let mut again = BytesMut::new();
                    encode_tail(tail.socket_type, &tail.identity, &mut again);
                    // The decoder ignores the flags byte beyond LONG; keep the peer's.
                    again[1] = input[1];
                    again.extend_from_slice(&buf);
                    assert_eq!(&again[..], &input[..fed], "consumed more or less than the tail");
                }
                return;
            }
        }
    }
}
