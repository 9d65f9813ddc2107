//! A C program links ferromq's `libzmq.so.5` and exercises the socket-free API (tests/c/msg.c):
//! zero-copy messages freed exactly once, Z85 (RFC 32 vector), atomic counters, timers, threads,
//! errno for NULL pointers, zmq_version.

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn c_program_uses_messages_z85_counters_timers() {
    let scratch = harness::scratch_dir("c-msg");
    let program = scratch.join("msg");
    harness::compile_against_ferromq(&harness::c_source("msg.c"), &scratch, &program);
    let out = harness::run(&program);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        harness::text(&out)
    );
}
