//! Commands that reach a socket from other threads while its own thread is leaving a call.
//!
//! A socket's thread takes its core without a locked instruction; a command that arrives
//! while it is inside a call is left to it, and it applies the command on its way out
//! (`pattern/mailbox.rs`). Here a SUB's thread calls as fast as it can while an XPUB connects
//! to it, stops calling right after, and sleeps: the new peer's Attach must still be applied,
//! or the SUB's subscription never reaches the XPUB. The calls are receives, and (issue 18)
//! `events()` and `poll` on a `PollItem::socket_mut` item, which take the core as its owner
//! too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use ferromq::{poll, Context, Error, Events, PollItem, RecvFlags, Socket, SocketType, POLLIN};

/// One call of the SUB's loop, which finds nothing to read.
fn receive(sub: &mut Socket) {
    assert_eq!(sub.recv(RecvFlags::DONTWAIT), Err(Error::Again));
}

fn events(sub: &mut Socket) {
    assert!(!sub.events().contains(Events::POLLIN));
}

fn poll_owned(sub: &mut Socket) {
    assert_eq!(poll(&mut [PollItem::socket_mut(sub, POLLIN)], 0), Ok(0));
}

/// Rounds of: a SUB bound and subscribed, its thread in a loop of calls; an XPUB connects;
/// the SUB's thread stops calling as soon as it sees that the connect returned, and waits,
/// outside any call, for the XPUB to see the subscription.
fn subscription_reaches_an_xpub_while_the_sub_sleeps(
    transport: &str,
    rounds: usize,
    call: fn(&mut Socket),
) {
    let ctx = Context::new();
    for round in 0..rounds {
        let mut sub = ctx.socket(SocketType::Sub).unwrap();
        let endpoint = if transport == "inproc" {
            format!("inproc://commands-{round}")
        } else {
            "tcp://127.0.0.1:*".to_owned()
        };
        sub.bind(&endpoint).unwrap();
        let endpoint = sub.last_endpoint().unwrap();
        sub.set_subscribe(b"topic").unwrap();
        let connected = Arc::new(AtomicBool::new(false));
        let (calling_tx, calling) = mpsc::channel();
        let (seen, seen_rx) = mpsc::channel::<()>();
        let sub_thread = {
            let connected = Arc::clone(&connected);
            std::thread::spawn(move || {
                let mut first = true;
                loop {
                    call(&mut sub);
                    if first {
                        calling_tx.send(()).unwrap();
                        first = false;
                    }
                    if connected.load(Ordering::Acquire) {
                        break;
                    }
                }
                // Outside any call until the XPUB has the subscription (or the test gives up).
                let _ = seen_rx.recv_timeout(Duration::from_secs(10));
                sub
            })
        };
        calling.recv().unwrap();
        let mut xpub = ctx.socket(SocketType::XPub).unwrap();
        xpub.set_rcvtimeo(5_000).unwrap();
        xpub.connect(&endpoint).unwrap();
        connected.store(true, Ordering::Release);
        let started = Instant::now();
        let got = xpub.recv(RecvFlags::empty());
        seen.send(()).unwrap();
        let sub = sub_thread.join().unwrap();
        assert_eq!(
            got.map(|m| m.data.to_vec()),
            Ok(b"\x01topic".to_vec()),
            "{transport} round {round}: no subscription after {:?}",
            started.elapsed()
        );
        drop(sub);
    }
}

#[test]
fn inproc_subscription_arrives_as_the_sub_leaves_a_call() {
    subscription_reaches_an_xpub_while_the_sub_sleeps("inproc", 300, receive);
}

#[test]
fn tcp_subscription_arrives_as_the_sub_leaves_a_call() {
    subscription_reaches_an_xpub_while_the_sub_sleeps("tcp", 100, receive);
}

#[test]
fn inproc_subscription_arrives_as_the_sub_leaves_events() {
    subscription_reaches_an_xpub_while_the_sub_sleeps("inproc", 300, events);
}

#[test]
fn inproc_subscription_arrives_as_the_sub_leaves_a_poll() {
    subscription_reaches_an_xpub_while_the_sub_sleeps("inproc", 300, poll_owned);
}

#[test]
fn tcp_subscription_arrives_as_the_sub_leaves_a_poll() {
    subscription_reaches_an_xpub_while_the_sub_sleeps("tcp", 100, poll_owned);
}
