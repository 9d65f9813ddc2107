//! Drop-in behaviour a C program observes (issue 13, defects 1-4): each program in tests/c
//! is built against ferromq and against real libzmq 4.3.4 (static, from the `zmq`
//! dev-dependency), and both builds must print "ok". Every program failed against ferromq
//! before the fix it checks.
//!
//! - `sigpipe.c`: raw peers that disconnect mid-stream, or while their request is answered
//!   (an answer ferromq writes from the calling thread), never raise SIGPIPE (default
//!   disposition);
//! - `subscribe.c`: connect, subscribe, sleep, publish once, receive (tcp, ipc, inproc), and
//!   an XPUB blocked in recv sees the subscription;
//! - `term.c`: zmq_ctx_term ends zmq_proxy, zmq_poll and zmq_recv in other threads with
//!   ETERM; the steerable proxy answers a REP control socket; term in a forked child;
//! - `eintr.c`: SIGALRM ends blocking zmq_recv, zmq_send, zmq_poll and zmq_ctx_term with EINTR,
//!   including a REQ's wait for its answer over inproc, tcp and ipc (where ferromq polls the
//!   connection it borrowed), and the answer still arrives afterwards;
//! - `hwm.c`: an inproc binder's RCVHWM joins a pipe made by an earlier connect, and SNDHWM
//!   set after connect reaches existing pipes (defect 6);
//! - `probe.c`: ZMQ_PROBE_ROUTER sends the empty probe at attach (tcp, ipc, inproc).

use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

fn run_both(name: &str) {
    let source = harness::c_source(&format!("{name}.c"));
    let scratch = harness::scratch_dir(&format!("c-{name}"));
    let ours = scratch.join(format!("{name}-ferromq"));
    harness::compile_against_ferromq(&source, &scratch, &ours);
    let theirs = scratch.join(format!("{name}-libzmq"));
    harness::compile_against_libzmq_with(&source, &theirs, &["-DREAL_LIBZMQ"]);
    for program in [&theirs, &ours] {
        let out = harness::run_args(program, &[], Duration::from_secs(40));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok\n",
            "{}: {}",
            program.display(),
            harness::text(&out)
        );
    }
}

#[test]
fn no_sigpipe_from_a_peer_that_disconnects() {
    run_both("sigpipe");
}

#[test]
fn subscriptions_reach_publishers_without_another_call() {
    run_both("subscribe");
}

#[test]
fn term_ends_proxy_poll_and_forked_children() {
    run_both("term");
}

#[test]
fn signals_interrupt_blocking_calls() {
    run_both("eintr");
}

#[test]
fn hwms_reach_existing_pipes() {
    run_both("hwm");
}

#[test]
fn probe_router_at_attach() {
    run_both("probe");
}
