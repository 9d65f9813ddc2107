//! The tcp socket options libzmq applies on Linux, observed from outside the library by C
//! programs built against ferromq and against libzmq (Debian's libzmq3-dev when installed,
//! else the `zmq` dev-dependency's bundled 4.3.4): tests/c/tcp_tuning.c reads IP_TOS,
//! TCP_USER_TIMEOUT and SO_BINDTODEVICE off the process's own sockets (ZMQ_TOS, ZMQ_TCP_MAXRT,
//! ZMQ_BINDTODEVICE); tests/c/connect_timeout.c watches ZMQ_CONNECT_TIMEOUT abandon and retry
//! a connect to a listener that never completes it. Both libraries must print "ok".

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn tcp_tuning_on_both() {
    let (ours, theirs) = harness::build_both("c-tcp-tuning", "tcp_tuning.c", "tcp_tuning");
    harness::assert_ok(&harness::run_args(&ours, &[], LIMIT));
    // The bundled libzmq is built without ZMQ_HAVE_SO_BINDTODEVICE (its platform.hpp is a
    // shim), so it cannot be the control for the device checks.
    let args: &[&str] = if harness::system_libzmq() {
        &[]
    } else {
        &["--no-device"]
    };
    harness::assert_ok(&harness::run_args(&theirs, args, LIMIT));
}

#[test]
fn connect_timeout_on_both() {
    let (ours, theirs) =
        harness::build_both("c-connect-timeout", "connect_timeout.c", "connect_timeout");
    harness::assert_ok(&harness::run_args(&ours, &[], LIMIT));
    harness::assert_ok(&harness::run_args(&theirs, &[], LIMIT));
}
