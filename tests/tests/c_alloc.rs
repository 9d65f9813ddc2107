//! `tests/c/alloc_count.c`: the C ABI's message calls allocate nothing per message in steady
//! state beyond `zmq_msg_init_size`'s one body (issue 18), counted by malloc interposed in a C
//! program linked with the library, over inproc, tcp and ipc at 64 B-256 KiB. Counts, not
//! times, so the guard holds on a loaded machine.
//!
//! The same program built against real libzmq reports its counts instead of checking them:
//! libzmq's `zmq_send` allocates per message above 33 bytes, and the counter must see that,
//! or a check that passes for ferromq proves nothing.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn message_calls_allocate_nothing_per_message() {
    let scratch = harness::scratch_dir("c-alloc-ferromq");
    let program = scratch.join("alloc_count");
    harness::compile_against_ferromq(&harness::c_source("alloc_count.c"), &scratch, &program);
    let out = harness::run_args(&program, &[], LIMIT);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        harness::text(&out)
    );
}

#[test]
fn the_counter_sees_libzmqs_allocations() {
    let scratch = harness::scratch_dir("c-alloc-libzmq");
    let program = scratch.join("alloc_count");
    harness::compile_against_libzmq(&harness::c_source("alloc_count.c"), &program);
    let out = harness::run_args(&program, &["report"], LIMIT);
    let report = String::from_utf8_lossy(&out.stdout);
    // "<transport> <size> <call> most <n> total <n>"
    let total = |transport: &str, size: &str, call: &str| -> u64 {
        report
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.len() == 7 && w[0] == transport && w[1] == size && w[2] == call)
            .and_then(|w| w[6].parse().ok())
            .unwrap_or_else(|| panic!("no {transport} {size} {call} line in:\n{report}"))
    };
    for transport in ["inproc", "tcp", "ipc"] {
        // 100 windows of 4 messages: a body each.
        assert!(
            total(transport, "1024", "zmq_send") >= 400,
            "libzmq's zmq_send copies into a new body per message:\n{report}"
        );
        assert!(
            total(transport, "1024", "zmq_msg_init_size") >= 400,
            "{report}"
        );
    }
}
