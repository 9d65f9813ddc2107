//! One interface over the libraries under comparison.
//!
//! Every measurement in the comparison matrix is written once, generically over [`Backend`], so
//! ferromq and libzmq run exactly the same code path around their sockets: both copy the caller's
//! buffer into a fresh message on send (what `zmq_send` does) and receive into a reused message.

use std::fmt;
use std::time::{Duration, Instant};

/// The socket kinds the matrix uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pair,
    Pub,
    Sub,
    Dealer,
    Router,
    Req,
    Rep,
    Push,
    Pull,
}

/// A failure inside a benchmark run (a timeout or an error from the library).
#[derive(Debug)]
pub struct BenchError(pub String);

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

pub type BenchResult<T> = Result<T, BenchError>;

/// A messaging library seen through the operations the benchmarks need.
pub trait Backend: Send + Sync + Sized + 'static {
    /// The label in tables and plots.
    const NAME: &'static str;
    /// One socket; it moves to the thread that drives it.
    type Socket: Send;

    /// A fresh context.
    fn new() -> BenchResult<Self>;
    /// A socket of `kind` with the options every run shares: receive timeout, HWM, linger 0.
    fn socket(&self, kind: Kind, hwm: i32) -> BenchResult<Self::Socket>;
    /// Sets ZMQ_ROUTING_ID (before connect or bind).
    fn set_routing_id(socket: &mut Self::Socket, id: &[u8]) -> BenchResult<()>;
    /// Sets ZMQ_ROUTER_MANDATORY so an unknown peer is EHOSTUNREACH, not a silent drop.
    fn set_router_mandatory(socket: &mut Self::Socket) -> BenchResult<()>;
    /// Subscribes a SUB socket to everything.
    fn subscribe_all(socket: &mut Self::Socket) -> BenchResult<()>;
    /// Sets ZMQ_HEARTBEAT_IVL (ms) before connect or bind.
    fn set_heartbeat(socket: &mut Self::Socket, ivl_ms: i32) -> BenchResult<()>;
    /// Subscribes a SUB socket to one prefix.
    fn subscribe(socket: &mut Self::Socket, prefix: &[u8]) -> BenchResult<()>;
    /// Binds and returns the resolved endpoint (ZMQ_LAST_ENDPOINT).
    fn bind(socket: &mut Self::Socket, endpoint: &str) -> BenchResult<String>;
    fn connect(socket: &mut Self::Socket, endpoint: &str) -> BenchResult<()>;
    /// Sends one frame, copying `data` into a new message. `Ok(false)` means the peer is not
    /// routable yet (EHOSTUNREACH on a mandatory ROUTER).
    fn send(socket: &mut Self::Socket, data: &[u8], more: bool) -> BenchResult<bool>;
    /// Receives one frame and returns its size and MORE flag; errors after the receive timeout.
    fn recv(socket: &mut Self::Socket) -> BenchResult<(usize, bool)>;
    /// Waits until the socket is readable, as zmq_poll does; false on timeout.
    fn poll_in(socket: &mut Self::Socket, timeout_ms: i64) -> BenchResult<bool>;

    /// Sends `count` messages, each `envelope` (if any) then `payload`, retrying while the
    /// peer is not routable yet: the throughput sender's loop. An async library overrides it to
    /// run the loop as one future, as its users would, rather than one `block_on` per call.
    fn send_burst(
        socket: &mut Self::Socket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        count: usize,
    ) -> BenchResult<()> {
        for _ in 0..count {
            crate::matrix::send_msg::<Self>(socket, envelope, payload)?;
        }
        Ok(())
    }

    /// Receives `count` whole messages (polling before each with `poll`): the throughput
    /// receiver's loop, overridden as [`Backend::send_burst`] is.
    fn recv_burst(socket: &mut Self::Socket, count: usize, poll: bool) -> BenchResult<()> {
        for _ in 0..count {
            crate::matrix::recv_msg::<Self>(socket, poll)?;
        }
        Ok(())
    }

    /// Latency's echoing side: `roundtrips` times, receives a whole message (polling before
    /// with `poll`) and sends `envelope` (if any) then `payload` back. An async library
    /// overrides it to run the loop as one task, as [`Backend::send_burst`].
    fn echo(
        socket: &mut Self::Socket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<()> {
        for _ in 0..roundtrips {
            crate::matrix::recv_msg::<Self>(socket, poll)?;
            crate::matrix::send_msg::<Self>(socket, envelope, payload)?;
        }
        Ok(())
    }

    /// Latency's timing side: `roundtrips` times, sends `envelope` (if any) then `payload`
    /// and receives the whole reply; returns each round trip's time. Overridden as
    /// [`Backend::echo`] is.
    fn ping(
        socket: &mut Self::Socket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<Vec<Duration>> {
        let mut times = Vec::with_capacity(roundtrips);
        for _ in 0..roundtrips {
            let start = Instant::now();
            crate::matrix::send_msg::<Self>(socket, envelope, payload)?;
            crate::matrix::recv_msg::<Self>(socket, poll)?;
            times.push(start.elapsed());
        }
        Ok(times)
    }
}
