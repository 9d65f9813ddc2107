//! `tests/c/patterns.c` linked against ferromq's `libzmq.so.5`: REQ/REP hello world, PUB/SUB
//! topics, a PUSH/PULL pipeline ended by `zmq_ctx_shutdown`, a ROUTER/DEALER broker on
//! `zmq_poll`, over inproc, tcp and ipc; `zmq_poll` over sockets and a pipe fd; ZMQ_FD and
//! ZMQ_EVENTS edge-triggered; `zmq_msg_gets` metadata.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn c_program_runs_the_guide_patterns() {
    let scratch = harness::scratch_dir("c-patterns");
    let program = scratch.join("patterns");
    harness::compile_against_ferromq(&harness::c_source("patterns.c"), &scratch, &program);
    let ipc = scratch.join("ipc");
    std::fs::create_dir_all(&ipc).expect("ipc dir");
    let out = harness::run_args(
        &program,
        &[ipc.to_str().expect("utf-8 temp path")],
        Duration::from_secs(60),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        harness::text(&out)
    );
}
