//! When `zmq_connect` refuses a tcp address itself and when the connecter finds out,
//! ferromq against libzmq (Debian's libzmq3-dev where installed, else the bundled 4.3.4):
//! `tests/c/connect_resolve.c`, built against each, prints `zmq_connect`'s answer for
//! addresses that are malformed, unresolvable or unconnectable, then the monitor events of a
//! connect to a name that does not resolve and to port 0.
//!
//! libzmq checks only the syntax in `zmq_connect` and resolves on each attempt: a name that
//! does not resolve is CONNECT_RETRIED again and again (no socket was made, so no
//! CONNECT_DELAYED or CLOSED); port 0 is connected to, refused by the kernel, and closed
//! (CONNECT_DELAYED, CLOSED, CONNECT_RETRIED). ferromq refused port 0 in `zmq_connect`
//! (EINVAL) and reported no CLOSED for a refused connect before session 23.
//!
//! `nonexistent.invalid` (RFC 2606's reserved top-level name) never resolves; where the
//! machine's DNS server does not answer, each lookup waits out the resolver's timeout, which
//! the program's 20 s a event allows for.

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

const EXPECTED: &str = "\
connect tcp://nonexistent.invalid:5555 0
connect tcp://256.1.1.1:5555 0
connect tcp://[::1]:5555 0
connect tcp://nonexistent.invalid;127.0.0.1:5555 0
connect tcp://a_b:5555 0
connect tcp://127.0.0.1:0 0
connect tcp://*:5555 -1 EINVAL
connect tcp://127.0.0.1:* -1 EINVAL
connect tcp://local host:5555 -1 EINVAL
connect tcp://localhost -1 EINVAL
connect tcp://-x:5555 -1 EINVAL
events tcp://nonexistent.invalid:5555 CONNECT_RETRIED CONNECT_RETRIED CONNECT_RETRIED
events tcp://127.0.0.1:0 CONNECT_DELAYED CLOSED CONNECT_RETRIED
";

#[test]
fn connect_fails_synchronously_on_syntax_only_and_lookups_fail_as_attempts() {
    let (ours, theirs) =
        harness::build_both("c-connect-resolve", "connect_resolve.c", "connect-resolve");
    for (lib, program) in [("libzmq", theirs), ("ferromq", ours)] {
        let out = harness::run_args(&program, &[], Duration::from_secs(120));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            EXPECTED,
            "{lib}: {}",
            harness::text(&out)
        );
    }
}
