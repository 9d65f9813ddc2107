//! Arbitrary bytes, cut into arbitrary chunks, as what a SOCKS5 proxy answers a
//! ZMQ_SOCKS_PROXY connect (method choice, authentication status, CONNECT reply, and whatever
//! follows). Byte 0: bit 0 offers username/password, the other bits seed the chunk sizes
//! (1..=16 bytes). Invariants checked:
//! - nothing panics; `handle_input` never grows the buffer and takes nothing once done;
//! - a refusal is final: the same error again on the next call;
//! - once done, exactly the answers were taken (2-byte choice, 2-byte status with
//!   authentication, and the reply, whose length is worked out here from its address type),
//!   so the destination's bytes are intact; a call stops inside an answer only when the input
//!   runs out;
//! - the output is the greeting, the authentication request and the CONNECT request, each once.
#![no_main]

use bytes::BytesMut;
use ferromq_zmtp::socks::{SocksClient, MAX_REPLY};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    let Some((&head, input)) = data.split_first() else {
        return;
    };
    let auth = head & 1 == 1;
    let creds: Option<(&[u8], &[u8])> = auth.then_some((b"user", b"secret"));
    let Ok(mut client) = SocksClient::new("example.org", 5555, creds) else {
        panic!("a valid destination was refused");
    };
    // Greeting 3, authentication 1 + 1 + 4 + 1 + 6, request 5 + 11 + 2.
    let max_out = 3 + if auth { 13 } else { 0 } + 18;
    let mut out = BytesMut::new();
    let mut seed = u32::from(head >> 1) | 0x100;
    let mut pending = BytesMut::new();
    let mut fed = 0;
    let mut taken = 0;
    loop {
        client.poll_output(&mut out);
        let len = out.len();
        client.poll_output(&mut out);
        assert_eq!(out.len(), len, "output repeated");
        assert!(out.len() <= max_out, "more output than the three messages");
        if pending.is_empty() {
            if fed == input.len() {
                return;
            }
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let n = (seed as usize % 16 + 1).min(input.len() - fed);
            pending.extend_from_slice(&input[fed..fed + n]);
            fed += n;
        }
        let before = pending.len();
        let result = client.handle_input(&mut pending);
        assert!(pending.len() <= before, "handle_input grew the buffer");
        let took = before - pending.len();
        taken += took;
        if result.is_ok() {
            assert!(took > 0, "stalled with input waiting");
            assert!(took <= MAX_REPLY, "took {took} at once");
            // It stops only at the end of an answer (output is due before the next one) or
            // when the input runs out.
            assert!(
                pending.is_empty() || client.needed() == 0,
                "stopped inside an answer with input waiting"
            );
        }
        match result {
            Err(e) => {
                let mut more = BytesMut::from(&b"x"[..]);
                assert_eq!(client.handle_input(&mut more), Err(e), "a refusal is final");
                return;
            }
            Ok(()) if client.is_done() => {
                let reply_at = if auth { 4 } else { 2 };
                let reply = &input[reply_at..];
                let reply_len = match reply[3] {
                    1 => 10,
                    4 => 22,
                    3 => 4 + 1 + usize::from(reply[4]) + 2,
                    other => panic!("done after address type {other}"),
                };
                assert!(reply_len <= MAX_REPLY);
                assert_eq!(
                    taken,
                    reply_at + reply_len,
                    "took more or less than the answers"
                );
                assert_eq!(reply[1], 0, "done after a refusal");
                assert_eq!(client.needed(), 0);
                let mut rest = pending.clone();
                client.handle_input(&mut rest).expect("done stays done");
                assert_eq!(rest, pending, "took bytes after it was done");
                return;
            }
            Ok(()) => {}
        }
    }
}
