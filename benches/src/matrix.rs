//! The measurements of the comparison matrix, written once for every [`Backend`].
//!
//! Throughput follows libzmq's local_thr/remote_thr: the bound side receives, the connected side
//! sends N messages, and the clock runs from the first message received to the last, so connection
//! set-up is not counted; a reply (or, for PUB/SUB, a signal) then tells the sender it may close.
//! Latency follows local_lat/remote_lat: the connected side sends, the bound side echoes, and every
//! round trip is timed so that percentiles can be reported beside the mean.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use crate::backend::{Backend, BenchError, BenchResult, Kind};

/// Socket patterns of the matrix (the names the zlink project used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Pair,
    PubSub,
    DealerDealer,
    DealerRouter,
    RouterRouter,
    /// ROUTER to ROUTER with a poll before each receive, as event-loop programs do.
    RouterRouterPoll,
    /// REQ to REP: strictly alternating, so "throughput" is round trips per second.
    ReqRep,
}

impl Pattern {
    pub const ALL: [Pattern; 7] = [
        Pattern::Pair,
        Pattern::PubSub,
        Pattern::DealerDealer,
        Pattern::DealerRouter,
        Pattern::RouterRouter,
        Pattern::RouterRouterPoll,
        Pattern::ReqRep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Pair => "PAIR",
            Pattern::PubSub => "PUBSUB",
            Pattern::DealerDealer => "DEALER_DEALER",
            Pattern::DealerRouter => "DEALER_ROUTER",
            Pattern::RouterRouter => "ROUTER_ROUTER",
            Pattern::RouterRouterPoll => "ROUTER_ROUTER_POLL",
            Pattern::ReqRep => "REQ_REP",
        }
    }

    /// (bound side, connected side).
    fn kinds(self) -> (Kind, Kind) {
        match self {
            Pattern::Pair => (Kind::Pair, Kind::Pair),
            Pattern::PubSub => (Kind::Sub, Kind::Pub),
            Pattern::DealerDealer => (Kind::Dealer, Kind::Dealer),
            Pattern::DealerRouter => (Kind::Router, Kind::Dealer),
            Pattern::RouterRouter | Pattern::RouterRouterPoll => (Kind::Router, Kind::Router),
            Pattern::ReqRep => (Kind::Rep, Kind::Req),
        }
    }

    fn polls(self) -> bool {
        self == Pattern::RouterRouterPoll
    }
}

/// Transports of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Ipc,
    Inproc,
}

impl Transport {
    pub const ALL: [Transport; 3] = [Transport::Tcp, Transport::Ipc, Transport::Inproc];

    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Ipc => "ipc",
            Transport::Inproc => "inproc",
        }
    }

    /// A fresh endpoint to bind; tcp lets the OS pick the port.
    fn endpoint(self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        match self {
            Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
            Transport::Ipc => {
                let dir = std::env::temp_dir();
                format!("ipc://{}/ferromq-bench-{pid}-{n}.sock", dir.display())
            }
            Transport::Inproc => format!("inproc://bench-{pid}-{n}"),
        }
    }
}

/// Routing ids of the two sides, so ROUTERs can address each other.
const BOUND_ID: &[u8] = b"L";
const CONNECTED_ID: &[u8] = b"R";
/// Size of the PUB/SUB warm-up frames; payloads are never this small.
const WARMUP_SIZE: usize = 1;

/// One throughput result.
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub msgs_per_sec: f64,
    pub mb_per_sec: f64,
}

/// One latency result, one way (round trip / 2), in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Latency {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// A connected pair of sockets, plus the PUB/SUB back channel latency needs.
struct Link<S> {
    bound: S,
    connected: S,
}

/// Creates and connects the two sides of `pattern`; the bound side is `bound_kind`.
fn link<B: Backend>(
    ctx: &B,
    kinds: (Kind, Kind),
    transport: Transport,
    hwm: i32,
) -> BenchResult<Link<B::Socket>> {
    let mut bound = ctx.socket(kinds.0, hwm)?;
    let mut connected = ctx.socket(kinds.1, hwm)?;
    for (socket, kind, id) in [
        (&mut bound, kinds.0, BOUND_ID),
        (&mut connected, kinds.1, CONNECTED_ID),
    ] {
        match kind {
            Kind::Router => {
                B::set_routing_id(socket, id)?;
                B::set_router_mandatory(socket)?;
            }
            Kind::Dealer => B::set_routing_id(socket, id)?,
            Kind::Sub => B::subscribe_all(socket)?,
            Kind::Pair | Kind::Pub | Kind::Req | Kind::Rep | Kind::Push | Kind::Pull => {}
        }
    }
    let endpoint = B::bind(&mut bound, &transport.endpoint())?;
    B::connect(&mut connected, &endpoint)?;
    Ok(Link { bound, connected })
}

/// Sends one message: the routing envelope a ROUTER needs, then the payload. Retries while a
/// mandatory ROUTER does not know the peer yet (its handshake is still running).
pub(crate) fn send_msg<B: Backend>(
    socket: &mut B::Socket,
    envelope: Option<&[u8]>,
    payload: &[u8],
) -> BenchResult<()> {
    // The clock is read only once a send was refused: per message it would cost both
    // libraries a clock_gettime that is no part of what they do.
    let mut deadline = None;
    loop {
        let sent = match envelope {
            Some(id) => B::send(socket, id, true)? && B::send(socket, payload, false)?,
            None => B::send(socket, payload, false)?,
        };
        if sent {
            return Ok(());
        }
        let deadline = *deadline.get_or_insert_with(|| {
            Instant::now() + Duration::from_millis(crate::RECV_TIMEOUT_MS as u64)
        });
        if Instant::now() > deadline {
            return Err(BenchError("peer never became routable".into()));
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// Receives one whole message and returns the size of its last frame (the payload).
pub(crate) fn recv_msg<B: Backend>(socket: &mut B::Socket, poll: bool) -> BenchResult<usize> {
    if poll && !B::poll_in(socket, crate::RECV_TIMEOUT_MS.into())? {
        return Err(BenchError("poll timed out".into()));
    }
    loop {
        let (size, more) = B::recv(socket)?;
        if !more {
            return Ok(size);
        }
    }
}

fn envelope(kind: Kind, peer_id: &'static [u8]) -> Option<&'static [u8]> {
    (kind == Kind::Router).then_some(peer_id)
}

/// Publishes warm-up frames until the subscriber has seen one, so no payload is lost to a
/// subscription still in flight.
fn warm_up<B: Backend>(publisher: &mut B::Socket, seen: &AtomicBool) -> BenchResult<()> {
    let deadline = Instant::now() + Duration::from_millis(crate::RECV_TIMEOUT_MS as u64);
    let warm = [0u8; WARMUP_SIZE];
    while !seen.load(Ordering::Acquire) {
        if Instant::now() > deadline {
            return Err(BenchError("subscription never arrived".into()));
        }
        B::send(publisher, &warm, false)?;
        thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Receives until a non-warm-up message, flagging the first warm-up seen.
fn skip_warm_up<B: Backend>(socket: &mut B::Socket, seen: &AtomicBool) -> BenchResult<usize> {
    loop {
        let size = recv_msg::<B>(socket, false)?;
        if size != WARMUP_SIZE {
            return Ok(size);
        }
        seen.store(true, Ordering::Release);
    }
}

fn join<T>(handle: thread::JoinHandle<BenchResult<T>>) -> BenchResult<T> {
    handle
        .join()
        .map_err(|_| BenchError("benchmark thread panicked".into()))?
}

/// N messages one way, then a synchronising reply.
pub fn throughput<B: Backend>(
    ctx: &B,
    pattern: Pattern,
    transport: Transport,
    size: usize,
    count: usize,
) -> BenchResult<Throughput> {
    if pattern == Pattern::ReqRep {
        // REQ cannot stream: its throughput is the rate of request/reply round trips, taken
        // from the mean round trip so that connection set-up is left out as elsewhere.
        let lat = latency(ctx, pattern, transport, size, count)?;
        let msgs_per_sec = 1e6 / (2.0 * lat.mean_us).max(1e-9);
        return Ok(Throughput {
            msgs_per_sec,
            mb_per_sec: msgs_per_sec * size as f64 / 1e6,
        });
    }
    let kinds = pattern.kinds();
    // PUB drops at its HWM: let it queue everything so every message is counted.
    let hwm = if pattern == Pattern::PubSub { 0 } else { 1000 };
    let Link {
        mut bound,
        mut connected,
    } = link(ctx, kinds, transport, hwm)?;
    let seen = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<()>();

    let sender = {
        let seen = Arc::clone(&seen);
        thread::spawn(move || -> BenchResult<()> {
            let payload = vec![0u8; size];
            let to_bound = envelope(kinds.1, BOUND_ID);
            if pattern == Pattern::PubSub {
                warm_up::<B>(&mut connected, &seen)?;
            }
            B::send_burst(&mut connected, to_bound, &payload, count)?;
            if pattern == Pattern::PubSub {
                done_rx
                    .recv_timeout(Duration::from_millis(crate::RECV_TIMEOUT_MS as u64 * 4))
                    .map_err(|_| BenchError("receiver never finished".into()))?;
            } else {
                recv_msg::<B>(&mut connected, pattern.polls())?;
            }
            drop(connected);
            Ok(())
        })
    };

    let receiver = (|| -> BenchResult<Duration> {
        let first = if pattern == Pattern::PubSub {
            skip_warm_up::<B>(&mut bound, &seen)?
        } else {
            recv_msg::<B>(&mut bound, pattern.polls())?
        };
        if first != size {
            return Err(BenchError(format!("expected {size} bytes, got {first}")));
        }
        let start = Instant::now();
        B::recv_burst(&mut bound, count - 1, pattern.polls())?;
        let elapsed = start.elapsed();
        if pattern == Pattern::PubSub {
            let _ = done_tx.send(());
        } else {
            send_msg::<B>(&mut bound, envelope(kinds.0, CONNECTED_ID), b"done")?;
        }
        Ok(elapsed)
    })();
    let sent = join(sender);
    let elapsed = receiver?;
    sent?;
    drop(bound);
    // The first message starts the clock, so `count - 1` messages were timed.
    let secs = elapsed.as_secs_f64().max(1e-9);
    let msgs_per_sec = (count.saturating_sub(1)) as f64 / secs;
    Ok(Throughput {
        msgs_per_sec,
        mb_per_sec: msgs_per_sec * size as f64 / 1e6,
    })
}

/// Ping-pong round trips; the connected side times each one.
pub fn latency<B: Backend>(
    ctx: &B,
    pattern: Pattern,
    transport: Transport,
    size: usize,
    roundtrips: usize,
) -> BenchResult<Latency> {
    let kinds = pattern.kinds();
    let forward = link(ctx, kinds, transport, 1000)?;
    // PUB/SUB is one-way: the echo travels on a second PUB/SUB link the other way round.
    let back = if pattern == Pattern::PubSub {
        Some(link(ctx, (Kind::Sub, Kind::Pub), transport, 1000)?)
    } else {
        None
    };
    let Link {
        bound: mut fwd_bound,
        connected: mut fwd_connected,
    } = forward;
    let (mut echo_out, mut ping_in) = match back {
        // The echoing side publishes on the back link's PUB; the pinging side reads its SUB.
        Some(Link { bound, connected }) => (Some(connected), Some(bound)),
        None => (None, None),
    };
    let seen_fwd = Arc::new(AtomicBool::new(false));
    let seen_back = Arc::new(AtomicBool::new(false));

    let echo = {
        let (seen_fwd, seen_back) = (Arc::clone(&seen_fwd), Arc::clone(&seen_back));
        // The echo's sockets go back to the caller and close only after the pinger has its
        // last reply: closing at linger 0 right after the last send may discard that reply
        // (libzmq does, now and then, for large messages), which would stall the pinger.
        thread::spawn(move || -> BenchResult<_> {
            let payload = vec![0u8; size];
            let reply_to = envelope(kinds.0, CONNECTED_ID);
            let Some(publisher) = echo_out.as_mut() else {
                // The whole loop in one call, which an async library runs as one task.
                B::echo(
                    &mut fwd_bound,
                    reply_to,
                    &payload,
                    roundtrips,
                    pattern.polls(),
                )?;
                return Ok((fwd_bound, echo_out));
            };
            // PUB/SUB: the echo goes out on the back link, once its warm-up has arrived.
            for i in 0..roundtrips {
                if i == 0 {
                    skip_warm_up::<B>(&mut fwd_bound, &seen_fwd)?;
                    warm_up::<B>(publisher, &seen_back)?;
                } else {
                    recv_msg::<B>(&mut fwd_bound, false)?;
                }
                B::send(publisher, &payload, false)?;
            }
            Ok((fwd_bound, echo_out))
        })
    };

    let pinger = (|| -> BenchResult<Vec<Duration>> {
        let payload = vec![0u8; size];
        let to_bound = envelope(kinds.1, BOUND_ID);
        let Some(subscriber) = ping_in.as_mut() else {
            return B::ping(
                &mut fwd_connected,
                to_bound,
                &payload,
                roundtrips,
                pattern.polls(),
            );
        };
        // PUB/SUB: the reply comes on the back link, after its warm-up frames.
        let mut times = Vec::with_capacity(roundtrips);
        warm_up::<B>(&mut fwd_connected, &seen_fwd)?;
        for _ in 0..roundtrips {
            let start = Instant::now();
            send_msg::<B>(&mut fwd_connected, to_bound, &payload)?;
            skip_warm_up::<B>(subscriber, &seen_back)?;
            times.push(start.elapsed());
        }
        Ok(times)
    })();
    let echoed = join(echo);
    let mut times = pinger?;
    let echo_sockets = echoed?;
    drop(echo_sockets);
    // The first round trips include connection set-up and warm-up; leave out the first 1%.
    let skip = (times.len() / 100)
        .max(1)
        .min(times.len().saturating_sub(1));
    times.drain(..skip);
    times.sort_unstable();
    let one_way = |d: Duration| d.as_secs_f64() * 1e6 / 2.0;
    let mean = times.iter().map(|d| one_way(*d)).sum::<f64>() / times.len().max(1) as f64;
    let pct = |p: f64| {
        let i = ((times.len() as f64 - 1.0) * p).round() as usize;
        times.get(i).map(|d| one_way(*d)).unwrap_or(f64::NAN)
    };
    Ok(Latency {
        mean_us: mean,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::libzmq::Libzmq;

    /// Every cell `cell` allows (`Some(measure_throughput)`) completes a short run, so the
    /// matrix cannot rot unseen.
    fn smoke<B: Backend>(patterns: &[Pattern], cell: impl Fn(Pattern, Transport) -> Option<bool>) {
        let ctx = B::new().unwrap();
        for &pattern in patterns {
            for transport in Transport::ALL {
                let Some(measure_throughput) = cell(pattern, transport) else {
                    continue;
                };
                if measure_throughput {
                    let t = throughput(&ctx, pattern, transport, 64, 2_000)
                        .unwrap_or_else(|e| panic!("{} {pattern:?} {transport:?}: {e}", B::NAME));
                    assert!(t.msgs_per_sec > 0.0);
                }
                let l = latency(&ctx, pattern, transport, 64, 50)
                    .unwrap_or_else(|e| panic!("{} {pattern:?} {transport:?}: {e}", B::NAME));
                assert!(l.p50_us > 0.0 && l.p50_us <= l.p99_us);
            }
        }
    }

    #[test]
    fn libzmq_runs_every_cell() {
        smoke::<Libzmq>(&Pattern::ALL, |_, _| Some(true));
    }

    #[test]
    fn ferromq_runs_every_cell_it_supports() {
        use ferromq::{has_socket_type, SocketType};
        let supported: Vec<Pattern> = Pattern::ALL
            .into_iter()
            .filter(|p| p.name() != "PUBSUB" || has_socket_type(SocketType::Pub))
            .filter(|p| p.name() != "REQ_REP" || has_socket_type(SocketType::Req))
            .collect();
        smoke::<crate::ferromq::Ferromq>(&supported, |_, _| Some(true));
    }

    #[test]
    fn ferromq_async_runs_every_cell_it_supports() {
        use crate::ferromq_async::FerromqAsync;
        use ferromq::{has_socket_type, SocketType};
        let supported: Vec<Pattern> = Pattern::ALL
            .into_iter()
            .filter(|p| p.name() != "PUBSUB" || has_socket_type(SocketType::Pub))
            .filter(|p| p.name() != "REQ_REP" || has_socket_type(SocketType::Req))
            .filter(|&p| FerromqAsync::<false>::supports(p))
            .collect();
        assert!(supported.contains(&Pattern::DealerDealer));
        smoke::<FerromqAsync<false>>(&supported, |_, _| Some(true));
        smoke::<FerromqAsync<true>>(&supported, |_, _| Some(true));
    }

    #[test]
    fn zeromq_runs_every_cell_it_supports() {
        use crate::zeromq::Zeromq;
        smoke::<Zeromq>(&Pattern::ALL, |p, t| {
            Zeromq::supports(p, t).then(|| Zeromq::measures_throughput(p))
        });
    }
}
