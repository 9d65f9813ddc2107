//! `tests/c/poll_race.c`: a peer's connection reaches a socket while the socket's thread polls
//! it (zmq_poll or ZMQ_EVENTS in a loop, then a blocking zmq_poll or a sleep outside any call):
//! the connection's Attach is applied either way, and the blocking poll wakes for the message
//! that follows (issue 18: the poll paths take the core as its owner). Built against ferromq
//! and against real libzmq 4.3.4, where the sleeping case is skipped (libzmq applies a bound
//! socket's commands only inside its next call).

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn connect_while_polling_against_ferromq() {
    harness::assert_prints_ok("poll_race", false, Duration::from_secs(120));
}

#[test]
fn connect_while_polling_against_libzmq() {
    harness::assert_prints_ok("poll_race", true, Duration::from_secs(120));
}
