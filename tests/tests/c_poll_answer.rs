//! `tests/c/poll_answer.c`: round trips through `zmq_poll`, with answers that come at once,
//! late (past the 20 us a poll of sockets alone waits awake) or in two parts, and sets with a
//! pipe's fd beside the socket (which never wait awake): every answer is seen, against ferromq
//! and against real libzmq 4.3.4.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn every_answer_through_zmq_poll_against_ferromq() {
    harness::assert_prints_ok("poll_answer", false, Duration::from_secs(120));
}

#[test]
fn every_answer_through_zmq_poll_against_libzmq() {
    harness::assert_prints_ok("poll_answer", true, Duration::from_secs(120));
}
