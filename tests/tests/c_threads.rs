//! The ZMQ_THREAD_* context options seen from outside the library: tests/c/threads.c, built
//! against ferromq and against Debian's libzmq3-dev, reads its I/O thread's name and CPU
//! affinity from /proc. Both libraries must print "ok". The `zmq` dev-dependency's bundled
//! libzmq cannot be the control: its shim platform.hpp leaves out ZMQ_HAVE_PTHREAD_SETNAME_*
//! and ZMQ_HAVE_PTHREAD_SET_AFFINITY, so it neither names nor pins its threads; without
//! libzmq3-dev only ferromq's half runs.

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn thread_names_and_affinity_on_both() {
    harness::assert_ok_beside_system_libzmq(
        "c-threads",
        "threads.c",
        "threads",
        "the bundled build names no threads",
    );
}
