//! CURVE MESSAGE decoding against arbitrary bodies. A client and a server codec share real
//! short-term keys; byte 0 picks which byte of a genuine MESSAGE to flip, the rest is both a
//! forged body and a genuine payload. Invariants checked:
//! - nothing panics;
//! - a body not made by the peer's sender never decodes (forged, flipped or truncated);
//! - a genuine MESSAGE decodes to exactly its payload and flags, once: its replay is refused;
//! - a refused body does not move the receiver's nonce (the next genuine one still opens).
#![no_main]

use ferromq_zmtp::{CurveCodec, CurveError, KeyPair};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    let Some((&flip, rest)) = data.split_first() else {
        return;
    };
    let client = KeyPair::from_secret([1; 32]);
    let server = KeyPair::from_secret([2; 32]);
    let c2s = client.shared(&server.public).expect("fixed keys of full order");
    let s2c = server.shared(&client.public).expect("fixed keys of full order");
    let mut tx = CurveCodec::new(c2s, true, 3, 1);
    let mut rx = CurveCodec::new(s2c, false, 2, 2);

    assert!(rx.decode(rest).is_err(), "a forged body decoded");

    let more = flip & 1 != 0;
    let genuine = tx.encode(rest, more, flip & 2 != 0);
    let mut flipped = genuine.to_vec();
    let at = usize::from(flip) % flipped.len();
    flipped[at] ^= 1 << (flip % 8);
    assert!(rx.decode(&flipped).is_err(), "a flipped body decoded");
    assert!(rx.decode(&genuine[..genuine.len() - 1]).is_err(), "a truncated body decoded");

    let got = rx.decode(&genuine).expect("the genuine body");
    assert_eq!(&got.body[..], rest);
    assert_eq!((got.more, got.command), (more, flip & 2 != 0));
    assert_eq!(rx.decode(&genuine), Err(CurveError::InvalidSequence));
}
