//! `tests/c/errors.c`: every errno the socket API sets. Built against ferromq and against real
//! libzmq 4.3.4 (static, from the `zmq` dev-dependency); both must print "ok", so each expected
//! errno is checked against libzmq's own behaviour, not only against our reading of it.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn errno_cases_against_ferromq() {
    let scratch = harness::scratch_dir("c-errors-ferromq");
    let program = scratch.join("errors");
    harness::compile_against_ferromq(&harness::c_source("errors.c"), &scratch, &program);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(30)));
}

#[test]
fn errno_cases_against_libzmq() {
    let scratch = harness::scratch_dir("c-errors-libzmq");
    let program = scratch.join("errors");
    harness::compile_against_libzmq_with(
        &harness::c_source("errors.c"),
        &program,
        &["-DREAL_LIBZMQ"],
    );
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(30)));
}
