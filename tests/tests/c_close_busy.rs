//! `tests/c/close_busy.c`: `zmq_close` from another thread while a thread is blocked in
//! `zmq_recv` or `zmq_poll` on the socket is EBUSY in ferromq, never a free under the blocked
//! call (issue 14). Built against ferromq and against real libzmq 4.3.4, where the misuse
//! itself is skipped (libzmq aborts on it) and the rest must behave the same.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn close_while_blocked_against_ferromq() {
    harness::assert_prints_ok("close_busy", false, Duration::from_secs(30));
}

#[test]
fn close_while_blocked_against_libzmq() {
    harness::assert_prints_ok("close_busy", true, Duration::from_secs(30));
}
