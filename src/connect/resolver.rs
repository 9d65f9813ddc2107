//! A tcp connect's addresses, resolved where a slow DNS server cannot stall the context.
//!
//! Connection management (connects, accepts, handshakes of every socket of a context) runs
//! on one current-thread tokio runtime (src/runtime.rs). getaddrinfo blocks for as long as
//! the DNS server takes, up to its timeouts and retries (5 s a try by default): called there,
//! one unresolvable name would hold up every other connection's progress. So a host name is
//! looked up on tokio's blocking pool and the connect task waits for the answer; IP literals
//! and `*` need no lookup and are parsed where they are.
//!
//! What libzmq does, kept here: `zmq_connect` checks only the address's syntax and resolves
//! nothing (socket_base_t::connect_internal), so an unresolvable name is no error there; the
//! connecter resolves on each attempt (tcp_connecter_t::open), so a reconnect looks the name
//! up again, and a failed lookup is a failed attempt: no CONNECT_DELAYED (no connect was
//! started), CONNECT_RETRIED with the interval, and a retry after it (none when RECONNECT_IVL
//! is -1 or 0). libzmq resolves on its I/O thread, so there a slow lookup stalls that
//! thread's connections; that is the part not kept.
//!
//! One consequence: connects to host names reach the kernel in the order their lookups end,
//! which may not be the order of the `connect` calls (libzmq's one I/O thread resolves them
//! in turn). Connects to IP literals keep their order (src/connect/attach_order.rs).

use std::net::SocketAddr;

use crate::connect::endpoint::TcpAddr;
use crate::error::{Error, Result};

/// The destination and the optional source address of a tcp connect.
pub(crate) async fn connect_addrs(
    addr: &TcpAddr,
    ipv6: bool,
) -> Result<(SocketAddr, Option<SocketAddr>)> {
    let both = move |addr: &TcpAddr| Ok((addr.connect_addr(ipv6)?, addr.source_addr(ipv6)?));
    if !addr.names_a_host() {
        return both(addr);
    }
    let addr = addr.clone();
    // A lookup still running when the connect is abandoned (the socket closed) finishes on
    // its pool thread and is dropped there.
    tokio::task::spawn_blocking(move || both(&addr))
        .await
        .map_err(|_| Error::Fault)?
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::connect::test_names::StalledName;
    use crate::monitor::{MonitorEvent, EVENT_CONNECT_RETRIED};
    use crate::{Context, RecvFlags, SendFlags, Socket, SocketType};

    const LIMIT: Duration = Duration::from_secs(10);

    /// A PULL bound on loopback receiving for at most [`LIMIT`], its endpoint and its port.
    fn bound_pull(ctx: &Context) -> (Socket, String, String) {
        let mut pull = ctx.socket(SocketType::Pull).unwrap();
        pull.bind("tcp://127.0.0.1:*").unwrap();
        pull.set_rcvtimeo(i32::try_from(LIMIT.as_millis()).unwrap())
            .unwrap();
        let endpoint = pull.last_endpoint().unwrap();
        let port = endpoint.rsplit_once(':').unwrap().1.to_owned();
        (pull, endpoint, port)
    }

    /// A lookup that does not return (a DNS server that never answers) holds up only its own
    /// connect: another socket of the same context still connects, is accepted, completes
    /// its handshake and delivers. Before the lookup moved to the blocking pool it ran on the
    /// management thread, and the second socket's message never came (the receive below timed
    /// out, 2 of 2 runs). Once the name answers, the stalled connect goes on to the address.
    #[test]
    fn a_stalled_lookup_does_not_hold_up_other_connections() {
        let ctx = Context::new();
        let (mut pull, endpoint, port) = bound_pull(&ctx);
        // Declared after the context, so dropped (opened) before it even when a check fails.
        let name = StalledName::new("stalled.resolver.test", Some(([127, 0, 0, 1], 0).into()));

        let mut slow = ctx.socket(SocketType::Push).unwrap();
        slow.connect(&format!("tcp://stalled.resolver.test:{port}"))
            .unwrap();
        assert!(
            name.wait_entered(1, LIMIT),
            "the connect never looked the name up"
        );

        let mut fast = ctx.socket(SocketType::Push).unwrap();
        fast.connect(&endpoint).unwrap();
        fast.send("fast", SendFlags::empty()).unwrap();
        let got = pull.recv_multipart(RecvFlags::empty());
        assert!(
            got.is_ok(),
            "no message within {LIMIT:?} while a lookup was stalled: {got:?}"
        );
        assert_eq!(&got.unwrap()[0][..], b"fast");

        name.open();
        slow.send("slow", SendFlags::empty()).unwrap();
        let got = pull.recv_multipart(RecvFlags::empty()).unwrap();
        assert_eq!(&got[0][..], b"slow");
    }

    /// As libzmq's connecter: a name that does not resolve is a failed attempt, reported as
    /// CONNECT_RETRIED with no CONNECT_DELAYED before it (no connect was started), and each
    /// retry looks the name up again, so a name that starts resolving is connected to.
    #[test]
    fn a_failed_lookup_is_retried_and_looked_up_again() {
        let ctx = Context::new();
        let (mut pull, _, port) = bound_pull(&ctx);
        let name = StalledName::new("unknown.resolver.test", None);
        name.open();

        let mut push = ctx.socket(SocketType::Push).unwrap();
        push.set_reconnect_ivl(20).unwrap();
        push.monitor("inproc://resolver-retries", u16::MAX).unwrap();
        let mut events = ctx.socket(SocketType::Pair).unwrap();
        events
            .set_rcvtimeo(i32::try_from(LIMIT.as_millis()).unwrap())
            .unwrap();
        events.connect("inproc://resolver-retries").unwrap();
        push.connect(&format!("tcp://unknown.resolver.test:{port}"))
            .unwrap();
        for n in 0..2 {
            let frames = events.recv_multipart(RecvFlags::empty());
            assert!(frames.is_ok(), "event {n} never came: {frames:?}");
            let event = MonitorEvent::parse(&frames.unwrap()).unwrap();
            assert_eq!(event.event, EVENT_CONNECT_RETRIED, "event {n}");
            // RECONNECT_IVL plus libzmq's jitter below it.
            assert!(
                (20..40).contains(&event.value),
                "event {n}: {}",
                event.value
            );
        }
        assert!(name.wait_entered(2, LIMIT), "the retry did not look again");

        name.set_answer(Some(([127, 0, 0, 1], 0).into()));
        push.send("x", SendFlags::empty()).unwrap();
        let got = pull.recv_multipart(RecvFlags::empty());
        assert!(got.is_ok(), "the name resolved but nothing came: {got:?}");
        assert_eq!(&got.unwrap()[0][..], b"x");
    }
}
