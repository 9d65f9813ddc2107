//! `tests/c/stream.c`: a ZMQ_STREAM socket serving and dialling plain TCP peers (BSD sockets in
//! the same C program). Built against ferromq and against real libzmq 4.3.4 (static, from the
//! `zmq` dev-dependency); both must print "ok", so every expectation is libzmq's behaviour.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn stream_serves_raw_tcp_against_ferromq() {
    let scratch = harness::scratch_dir("c-stream-ferromq");
    let program = scratch.join("stream");
    harness::compile_against_ferromq(&harness::c_source("stream.c"), &scratch, &program);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(60)));
}

#[test]
fn stream_serves_raw_tcp_against_libzmq() {
    let scratch = harness::scratch_dir("c-stream-libzmq");
    let program = scratch.join("stream");
    harness::compile_against_libzmq_with(&harness::c_source("stream.c"), &program, &[]);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(60)));
}
