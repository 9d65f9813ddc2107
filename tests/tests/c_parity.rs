//! C programs for libzmq features beyond the core socket API (tests/c/iov.c: zmq_sendiov and
//! zmq_recviov; tests/c/srcfd.c: ZMQ_SRCFD and Peer-Address; tests/c/proxy_single_socket.c:
//! zmq_proxy with one socket as frontend and backend; tests/c/source_address.c: two connects
//! from one fixed source port, SO_REUSEADDR; tests/c/threadstart.c: signals blocked in a
//! zmq_threadstart thread; tests/c/bind_failed.c: the monitor's CLOSED and BIND_FAILED when a
//! bind fails; tests/c/type_mismatch.c: the monitor's events when socket types cannot talk),
//! each built against ferromq and
//! against real libzmq 4.3.4 (static, from the `zmq` dev-dependency). Both must print "ok",
//! so every expectation is libzmq's own behaviour.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

fn against_ferromq(name: &str) {
    let scratch = harness::scratch_dir(&format!("c-parity-{name}-ferromq"));
    let program = scratch.join(name);
    harness::compile_against_ferromq(&harness::c_source(&format!("{name}.c")), &scratch, &program);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(30)));
}

fn against_libzmq(name: &str) {
    let scratch = harness::scratch_dir(&format!("c-parity-{name}-libzmq"));
    let program = scratch.join(name);
    harness::compile_against_libzmq(&harness::c_source(&format!("{name}.c")), &program);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(30)));
}

#[test]
fn iov_against_ferromq() {
    against_ferromq("iov");
}

#[test]
fn iov_against_libzmq() {
    against_libzmq("iov");
}

#[test]
fn srcfd_against_ferromq() {
    against_ferromq("srcfd");
}

#[test]
fn srcfd_against_libzmq() {
    against_libzmq("srcfd");
}

#[test]
fn proxy_single_socket_against_ferromq() {
    against_ferromq("proxy_single_socket");
}

#[test]
fn proxy_single_socket_against_libzmq() {
    against_libzmq("proxy_single_socket");
}

#[test]
fn source_address_against_ferromq() {
    against_ferromq("source_address");
}

#[test]
fn source_address_against_libzmq() {
    against_libzmq("source_address");
}

#[test]
fn threadstart_against_ferromq() {
    against_ferromq("threadstart");
}

#[test]
fn threadstart_against_libzmq() {
    against_libzmq("threadstart");
}

#[test]
fn bind_failed_against_ferromq() {
    against_ferromq("bind_failed");
}

#[test]
fn bind_failed_against_libzmq() {
    against_libzmq("bind_failed");
}

#[test]
fn type_mismatch_against_ferromq() {
    against_ferromq("type_mismatch");
}

#[test]
fn type_mismatch_against_libzmq() {
    against_libzmq("type_mismatch");
}
