//! Local tcp addresses as libzmq resolves them (interface names, no DNS, a bind's source
//! part) and unbind's and disconnect's first check: tests/c/bind_local.c, built against
//! ferromq and against Debian's libzmq3-dev, must print "ok" on both. The `zmq`
//! dev-dependency's bundled libzmq cannot be the control: its build leaves out
//! ZMQ_HAVE_IFADDRS, so it knows no interface names; without libzmq3-dev only ferromq's half
//! runs.

#[path = "../c/harness.rs"]
mod harness;

#[test]
fn local_addresses_as_libzmq() {
    harness::assert_ok_beside_system_libzmq(
        "c-bind-local",
        "bind_local.c",
        "bind_local",
        "the bundled build knows no interface names",
    );
}
