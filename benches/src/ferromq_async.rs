//! ferromq through its async API ([`ferromq::AsyncSocket`]) for the `--async` columns.
//!
//! A throughput run's sender and receiver each run their whole loop as one future
//! ([`Backend::send_burst`], [`Backend::recv_burst`]), as a task that streams messages does.
//! Two runtimes, one column each. `ferromq async` is what a tokio service does: one
//! multi-thread runtime with two workers (the blocking column uses two threads), each loop
//! `tokio::spawn`ed as a task that owns its socket, and the harness thread waiting on the
//! task's `JoinHandle`; so the loops and their wake-ups run on the runtime's workers, and the
//! harness thread only starts and joins them. `ferromq async ct` gives each socket its own
//! current-thread runtime (`#[tokio::main(flavor = "current_thread")]` in a program) and runs
//! the loop under its `block_on`, so the thread that waits is the one polling the reactor.
//! Latency's echo and timing loops run the same way ([`Backend::echo`], [`Backend::ping`]):
//! each a task that owns its socket, the timing task reading the clock around each round trip.
//! The other calls (set-up, PUB/SUB's latency, whose warm-up the harness drives) are one
//! `block_on` each on the socket's runtime. The sockets and their options are ferromq's
//! own; only the waiting goes through tokio. No poll (the async API has none), so
//! ROUTER_ROUTER_POLL is skipped ([`FerromqAsync::supports`]).

use std::future::Future;
use std::time::{Duration, Instant};

use ferromq::{AsyncSocket, Context, Error, SendFlags, Socket, SocketType};
use tokio::runtime::{Builder, Handle, Runtime};

use crate::backend::{Backend, BenchError, BenchResult, Kind};
use crate::matrix::Pattern;

/// ferromq's async API on tokio; one I/O thread, as the blocking column. `CURRENT_THREAD`:
/// a current-thread runtime per socket, else one shared multi-thread runtime whose tasks run
/// the throughput loops.
pub struct FerromqAsync<const CURRENT_THREAD: bool> {
    ctx: Context,
    runtime: Runtime,
}

impl<const C: bool> FerromqAsync<C> {
    /// Every cell but the polling one.
    pub fn supports(pattern: Pattern) -> bool {
        pattern != Pattern::RouterRouterPoll
    }
}

/// Which runtime runs a socket's calls.
enum Driver {
    Shared(Handle),
    Own(Runtime),
}

/// One async socket and the runtime that drives it.
pub struct FerromqAsyncSocket {
    /// Declared before `driver`, so it is dropped (and deregistered) while its runtime lives.
    /// `None` only while a burst's task owns it (or after that task failed).
    socket: Option<AsyncSocket>,
    driver: Driver,
}

fn err(what: &str, e: Error) -> BenchError {
    BenchError(format!("ferromq async {what}: {e}"))
}

fn timed_out() -> BenchError {
    BenchError("ferromq async: timed out".into())
}

fn gone() -> BenchError {
    BenchError("ferromq async: the socket was lost with a failed burst".into())
}

fn runtime(current_thread: bool) -> BenchResult<Runtime> {
    let mut builder = if current_thread {
        Builder::new_current_thread()
    } else {
        let mut b = Builder::new_multi_thread();
        // The blocking column's sender and receiver are two threads.
        b.worker_threads(2);
        b
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| BenchError(format!("ferromq async runtime: {e}")))
}

impl FerromqAsyncSocket {
    fn sync(&mut self) -> BenchResult<&mut Socket> {
        Ok(self.socket.as_mut().ok_or_else(gone)?.get_mut())
    }
}

/// Runs `$call` (an expression on `$socket`) to completion on the socket's runtime, under the
/// harness's receive timeout.
macro_rules! drive {
    ($s:expr, $socket:ident => $call:expr) => {{
        let FerromqAsyncSocket { socket, driver } = $s;
        let $socket = socket.as_mut().ok_or_else(gone)?;
        match driver {
            Driver::Shared(h) => h.block_on(crate::bounded($call)),
            Driver::Own(rt) => rt.block_on(crate::bounded($call)),
        }
        .ok_or_else(timed_out)
    }};
}

impl<const C: bool> Backend for FerromqAsync<C> {
    const NAME: &'static str = if C {
        "ferromq async ct"
    } else {
        "ferromq async"
    };
    type Socket = FerromqAsyncSocket;

    fn new() -> BenchResult<Self> {
        Ok(FerromqAsync {
            ctx: Context::new(),
            // Unused by sockets on their own current-thread runtimes, but cheap.
            runtime: runtime(false)?,
        })
    }

    fn socket(&self, kind: Kind, hwm: i32) -> BenchResult<FerromqAsyncSocket> {
        let kind = match kind {
            Kind::Pair => SocketType::Pair,
            Kind::Pub => SocketType::Pub,
            Kind::Sub => SocketType::Sub,
            Kind::Dealer => SocketType::Dealer,
            Kind::Router => SocketType::Router,
            Kind::Req => SocketType::Req,
            Kind::Rep => SocketType::Rep,
            Kind::Push => SocketType::Push,
            Kind::Pull => SocketType::Pull,
        };
        let mut s = self.ctx.socket(kind).map_err(|e| err("socket", e))?;
        s.set_sndhwm(hwm).map_err(|e| err("sndhwm", e))?;
        s.set_rcvhwm(hwm).map_err(|e| err("rcvhwm", e))?;
        s.set_linger(0).map_err(|e| err("linger", e))?;
        let driver = if C {
            Driver::Own(runtime(true)?)
        } else {
            Driver::Shared(self.runtime.handle().clone())
        };
        // The fd is registered with the reactor of the runtime it is made in.
        let _in_runtime = match &driver {
            Driver::Shared(h) => h.enter(),
            Driver::Own(rt) => rt.enter(),
        };
        let socket = AsyncSocket::new(s).map_err(|e| err("async socket", e))?;
        drop(_in_runtime);
        Ok(FerromqAsyncSocket {
            socket: Some(socket),
            driver,
        })
    }

    fn set_routing_id(s: &mut FerromqAsyncSocket, id: &[u8]) -> BenchResult<()> {
        s.sync()?
            .set_routing_id(id)
            .map_err(|e| err("routing id", e))
    }

    fn set_router_mandatory(s: &mut FerromqAsyncSocket) -> BenchResult<()> {
        s.sync()?
            .set_router_mandatory(true)
            .map_err(|e| err("router mandatory", e))
    }

    fn subscribe_all(s: &mut FerromqAsyncSocket) -> BenchResult<()> {
        s.sync()?
            .set_subscribe(b"")
            .map_err(|e| err("subscribe", e))
    }

    fn set_heartbeat(s: &mut FerromqAsyncSocket, ivl_ms: i32) -> BenchResult<()> {
        s.sync()?
            .set_heartbeat_ivl(ivl_ms)
            .map_err(|e| err("heartbeat", e))
    }

    fn subscribe(s: &mut FerromqAsyncSocket, prefix: &[u8]) -> BenchResult<()> {
        s.sync()?
            .set_subscribe(prefix)
            .map_err(|e| err("subscribe", e))
    }

    fn bind(s: &mut FerromqAsyncSocket, endpoint: &str) -> BenchResult<String> {
        s.sync()?.bind(endpoint).map_err(|e| err("bind", e))?;
        s.sync()?
            .last_endpoint()
            .map_err(|e| err("last endpoint", e))
    }

    fn connect(s: &mut FerromqAsyncSocket, endpoint: &str) -> BenchResult<()> {
        s.sync()?.connect(endpoint).map_err(|e| err("connect", e))
    }

    fn send(s: &mut FerromqAsyncSocket, data: &[u8], more: bool) -> BenchResult<bool> {
        let flags = if more {
            SendFlags::SNDMORE
        } else {
            SendFlags::empty()
        };
        // A copy of the caller's bytes, as the blocking column's send_slice.
        match drive!(s, socket => socket.send_slice(data, flags))?.map_err(Error::from) {
            Ok(()) => Ok(true),
            Err(Error::HostUnreachable) => Ok(false),
            Err(e) => Err(err("send", e)),
        }
    }

    fn recv(s: &mut FerromqAsyncSocket) -> BenchResult<(usize, bool)> {
        let msg = drive!(s, socket => socket.recv())?.map_err(|e| err("recv", e))?;
        Ok((msg.data.len(), msg.more))
    }

    fn poll_in(_s: &mut FerromqAsyncSocket, _timeout_ms: i64) -> BenchResult<bool> {
        Err(BenchError("ferromq async: no poll".into()))
    }

    /// The whole loop is one task (multi-thread runtime) or one `block_on` (current-thread).
    fn send_burst(
        s: &mut FerromqAsyncSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        count: usize,
    ) -> BenchResult<()> {
        // The task owns what it sends: copies made once a burst, outside the loop.
        let envelope = envelope.map(<[u8]>::to_vec);
        let payload = payload.to_vec();
        burst(s, move |mut socket| async move {
            let sent = send_all(&mut socket, envelope.as_deref(), &payload, count).await;
            (socket, sent)
        })
    }

    fn recv_burst(s: &mut FerromqAsyncSocket, count: usize, poll: bool) -> BenchResult<()> {
        if poll {
            return Err(BenchError("ferromq async: no poll".into()));
        }
        burst(s, move |mut socket| async move {
            let received = recv_all(&mut socket, count).await;
            (socket, received)
        })
    }

    /// The echo's loop is one task (multi-thread runtime) or one `block_on` (current-thread),
    /// as a burst.
    fn echo(
        s: &mut FerromqAsyncSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<()> {
        if poll {
            return Err(BenchError("ferromq async: no poll".into()));
        }
        let envelope = envelope.map(<[u8]>::to_vec);
        let payload = payload.to_vec();
        burst(s, move |mut socket| async move {
            let echoed = async {
                for _ in 0..roundtrips {
                    recv_all(&mut socket, 1).await?;
                    send_all(&mut socket, envelope.as_deref(), &payload, 1).await?;
                }
                Ok(())
            }
            .await;
            (socket, echoed)
        })
    }

    /// The timing side's loop, likewise: the task reads the clock and hands the times back.
    fn ping(
        s: &mut FerromqAsyncSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<Vec<Duration>> {
        if poll {
            return Err(BenchError("ferromq async: no poll".into()));
        }
        let envelope = envelope.map(<[u8]>::to_vec);
        let payload = payload.to_vec();
        burst(s, move |mut socket| async move {
            let timed = async {
                let mut times = Vec::with_capacity(roundtrips);
                for _ in 0..roundtrips {
                    let start = Instant::now();
                    send_all(&mut socket, envelope.as_deref(), &payload, 1).await?;
                    recv_all(&mut socket, 1).await?;
                    times.push(start.elapsed());
                }
                Ok(times)
            }
            .await;
            (socket, timed)
        })
    }
}

/// Runs a burst (or latency's loop) as one future under one deadline (the receive timeout
/// for each of a burst's messages would arm and cancel a timer at every wait, a cost no blocking
/// call pays): four receive timeouts, as the harness gives a PUB/SUB receiver to finish. On the
/// multi-thread runtime the future is a spawned task, which owns the socket and hands it back.
fn burst<F, T>(s: &mut FerromqAsyncSocket, run: impl FnOnce(AsyncSocket) -> F) -> BenchResult<T>
where
    F: Future<Output = (AsyncSocket, BenchResult<T>)> + Send + 'static,
    T: Send + 'static,
{
    let limit = std::time::Duration::from_millis(crate::RECV_TIMEOUT_MS as u64 * 4);
    let task = run(s.socket.take().ok_or_else(gone)?);
    // The timer is made inside the runtime, whose clock it needs.
    let task = async move { tokio::time::timeout(limit, task).await };
    let done = match &s.driver {
        Driver::Shared(h) => h
            .block_on(h.spawn(task))
            .map_err(|e| BenchError(format!("ferromq async: burst task: {e}")))?,
        Driver::Own(rt) => rt.block_on(task),
    };
    let (socket, result) = done.map_err(|_| timed_out())?;
    s.socket = Some(socket);
    result
}

/// `count` messages in one task; a send the peer cannot take yet (EHOSTUNREACH on a mandatory
/// ROUTER) is retried after a millisecond, as the blocking harness does. The loop's body is
/// written out here rather than called, which kept the spawned inproc pair about a fifth faster
/// in the comparison bench (session 15).
async fn send_all(
    socket: &mut AsyncSocket,
    envelope: Option<&[u8]>,
    payload: &[u8],
    count: usize,
) -> BenchResult<()> {
    for _ in 0..count {
        let mut waited = 0;
        loop {
            let sent = match envelope {
                Some(id) => match socket.send_slice(id, SendFlags::SNDMORE).await {
                    Ok(()) => socket.send_slice(payload, SendFlags::empty()).await,
                    Err(e) => Err(e),
                },
                None => socket.send_slice(payload, SendFlags::empty()).await,
            };
            match sent.map_err(Error::from) {
                Ok(()) => break,
                Err(Error::HostUnreachable) if waited < crate::RECV_TIMEOUT_MS => {
                    waited += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
                Err(e) => return Err(err("send", e)),
            }
        }
    }
    Ok(())
}

/// `count` whole messages in one task.
async fn recv_all(socket: &mut AsyncSocket, count: usize) -> BenchResult<()> {
    for _ in 0..count {
        loop {
            let part = socket.recv().await.map_err(|e| err("recv", e))?;
            if !part.more {
                break;
            }
        }
    }
    Ok(())
}
