//! zmq.rs (the pure-Rust `zeromq` crate) for the optional third column (`--zeromq`).
//!
//! zmq.rs is async only. It has no PAIR socket, no inproc transport, no HWM, linger or
//! receive-timeout options and no poll, and a socket's routing id is fixed when the socket is
//! made. So this adapter makes the socket at bind or connect time, drives each call with
//! `block_on` on one shared tokio runtime (what a blocking caller of zmq.rs has to do), gathers
//! frames into the whole messages its API sends and receives, and applies the harness's receive
//! timeout itself. A throughput run's send and receive loops, and latency's echo and timing
//! loops, are `tokio::spawn`ed tasks on that runtime (two workers), as ferromq's async column
//! runs them, so the two are compared in the
//! way a tokio service would use them. The cells it cannot run are skipped ([`Zeromq::supports`],
//! [`Zeromq::measures_throughput`]).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::runtime::{Handle, Runtime};
use zeromq::prelude::*;
use zeromq::util::PeerIdentity;
use zeromq::{
    DealerSocket, PubSocket, RepSocket, ReqSocket, RouterSocket, SocketOptions, SubSocket,
    ZmqError, ZmqMessage,
};

use crate::backend::{Backend, BenchError, BenchResult, Kind};
use crate::matrix::{Pattern, Transport};

/// The zmq.rs library with its tokio runtime.
pub struct Zeromq {
    runtime: Runtime,
}

impl Zeromq {
    /// Whether zmq.rs can run a cell: no PAIR, no poll, no inproc.
    pub fn supports(pattern: Pattern, transport: Transport) -> bool {
        !matches!(pattern, Pattern::Pair | Pattern::RouterRouterPoll)
            && transport != Transport::Inproc
    }

    /// Whether its throughput can be measured: a zmq.rs PUB drops what a subscriber's full
    /// queue cannot take and has no HWM option to make that queue unbounded, so a run that
    /// counts every message never ends.
    pub fn measures_throughput(pattern: Pattern) -> bool {
        pattern != Pattern::PubSub
    }
}

enum Inner {
    Pub(PubSocket),
    Sub(SubSocket),
    Dealer(DealerSocket),
    Router(RouterSocket),
    Req(ReqSocket),
    Rep(RepSocket),
}

/// One zmq.rs socket, made on first bind or connect.
pub struct ZeromqSocket {
    runtime: Handle,
    kind: Kind,
    routing_id: Option<Vec<u8>>,
    subscribe_all: bool,
    inner: Option<Inner>,
    /// Frames of the message being sent, until the last one.
    outgoing: Vec<Bytes>,
    /// Frames of the last message received, handed out one by one.
    incoming: VecDeque<Bytes>,
}

/// Runs `f` to completion on `runtime`, or gives up after the harness's receive timeout.
fn within<F: std::future::Future>(runtime: &Handle, f: F) -> Option<F::Output> {
    runtime.block_on(crate::bounded(f))
}

fn err(what: &str, e: impl std::fmt::Display) -> BenchError {
    BenchError(format!("zmq.rs {what}: {e}"))
}

/// Runs `$body` with `$s` bound to the socket whatever its type.
macro_rules! each {
    ($inner:expr, $s:ident => $body:expr) => {
        match $inner {
            Inner::Pub($s) => $body,
            Inner::Sub($s) => $body,
            Inner::Dealer($s) => $body,
            Inner::Router($s) => $body,
            Inner::Req($s) => $body,
            Inner::Rep($s) => $body,
        }
    };
}

impl ZeromqSocket {
    /// The socket, made now if this is its first bind or connect.
    fn made(&mut self) -> BenchResult<&mut Inner> {
        if self.inner.is_none() {
            let mut options = SocketOptions::default();
            if let Some(id) = self.routing_id.clone() {
                options.peer_identity(PeerIdentity::try_from(id).map_err(|e| err("id", e))?);
            }
            // zmq.rs sockets start their tasks on the runtime they are made in.
            let _in_runtime = self.runtime.enter();
            let inner = match self.kind {
                Kind::Pub => Inner::Pub(PubSocket::with_options(options)),
                Kind::Sub => {
                    let mut s = SubSocket::with_options(options);
                    if self.subscribe_all {
                        self.runtime
                            .block_on(s.subscribe(""))
                            .map_err(|e| err("subscribe", e))?;
                    }
                    Inner::Sub(s)
                }
                Kind::Dealer => Inner::Dealer(DealerSocket::with_options(options)),
                Kind::Router => Inner::Router(RouterSocket::with_options(options)),
                Kind::Req => Inner::Req(ReqSocket::with_options(options)),
                Kind::Rep => Inner::Rep(RepSocket::with_options(options)),
                Kind::Pair | Kind::Push | Kind::Pull => {
                    return Err(err("socket", "not used with zmq.rs"))
                }
            };
            self.inner = Some(inner);
        }
        self.inner.as_mut().ok_or_else(|| err("socket", "not made"))
    }
}

impl Drop for ZeromqSocket {
    fn drop(&mut self) {
        // Closing stops the socket's tasks, which needs the runtime.
        let _in_runtime = self.runtime.enter();
        self.inner = None;
    }
}

impl Backend for Zeromq {
    const NAME: &'static str = "zmq.rs";
    type Socket = ZeromqSocket;

    fn new() -> BenchResult<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            // Two, as ferromq's async column and the blocking columns' two threads.
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| err("runtime", e))?;
        Ok(Zeromq { runtime })
    }

    fn socket(&self, kind: Kind, _hwm: i32) -> BenchResult<ZeromqSocket> {
        if matches!(kind, Kind::Pair | Kind::Push | Kind::Pull) {
            return Err(err("socket", "not used with zmq.rs"));
        }
        Ok(ZeromqSocket {
            runtime: self.runtime.handle().clone(),
            kind,
            routing_id: None,
            subscribe_all: false,
            inner: None,
            outgoing: Vec::new(),
            incoming: VecDeque::new(),
        })
    }

    fn set_routing_id(s: &mut ZeromqSocket, id: &[u8]) -> BenchResult<()> {
        s.routing_id = Some(id.to_vec());
        Ok(())
    }

    fn set_router_mandatory(_s: &mut ZeromqSocket) -> BenchResult<()> {
        // A zmq.rs ROUTER always refuses a message for an unknown peer with an error.
        Ok(())
    }

    fn subscribe_all(s: &mut ZeromqSocket) -> BenchResult<()> {
        s.subscribe_all = true;
        Ok(())
    }

    fn set_heartbeat(_s: &mut ZeromqSocket, _ivl_ms: i32) -> BenchResult<()> {
        Err(err("heartbeat", "not used with zmq.rs"))
    }

    fn subscribe(s: &mut ZeromqSocket, prefix: &[u8]) -> BenchResult<()> {
        if prefix.is_empty() {
            s.subscribe_all = true;
            return Ok(());
        }
        Err(err("subscribe", "only to everything with zmq.rs"))
    }

    fn bind(s: &mut ZeromqSocket, endpoint: &str) -> BenchResult<String> {
        let endpoint = endpoint.replace(":*", ":0");
        let runtime = s.runtime.clone();
        let bound = each!(s.made()?, x => runtime.block_on(x.bind(&endpoint)))
            .map_err(|e| err("bind", e))?;
        Ok(bound.to_string())
    }

    fn connect(s: &mut ZeromqSocket, endpoint: &str) -> BenchResult<()> {
        let runtime = s.runtime.clone();
        each!(s.made()?, x => runtime.block_on(x.connect(endpoint))).map_err(|e| err("connect", e))
    }

    fn send(s: &mut ZeromqSocket, data: &[u8], more: bool) -> BenchResult<bool> {
        s.outgoing.push(Bytes::copy_from_slice(data));
        if more {
            return Ok(true);
        }
        let frames = std::mem::take(&mut s.outgoing);
        let msg = ZmqMessage::try_from(frames).map_err(|e| err("message", e))?;
        let runtime = s.runtime.clone();
        let sent = match s.made()? {
            Inner::Pub(x) => within(&runtime, x.send(msg)),
            Inner::Dealer(x) => within(&runtime, x.send(msg)),
            Inner::Router(x) => within(&runtime, x.send(msg)),
            Inner::Req(x) => within(&runtime, x.send(msg)),
            Inner::Rep(x) => within(&runtime, x.send(msg)),
            Inner::Sub(_) => return Err(err("send", "SUB cannot send")),
        };
        match sent.ok_or_else(|| err("send", "timed out"))? {
            Ok(()) => Ok(true),
            // A peer not connected yet, as EHOSTUNREACH on a mandatory ROUTER.
            Err(ZmqError::Other(_)) => Ok(false),
            Err(e) => Err(err("send", e)),
        }
    }

    fn recv(s: &mut ZeromqSocket) -> BenchResult<(usize, bool)> {
        if s.incoming.is_empty() {
            let runtime = s.runtime.clone();
            let received = match s.made()? {
                Inner::Sub(x) => within(&runtime, x.recv()),
                Inner::Dealer(x) => within(&runtime, x.recv()),
                Inner::Router(x) => within(&runtime, x.recv()),
                Inner::Req(x) => within(&runtime, x.recv()),
                Inner::Rep(x) => within(&runtime, x.recv()),
                Inner::Pub(_) => return Err(err("recv", "PUB cannot receive")),
            };
            let msg = received
                .ok_or_else(|| err("recv", "timed out"))?
                .map_err(|e| err("recv", e))?;
            s.incoming = msg.into_vecdeque();
        }
        let frame = s.incoming.pop_front().ok_or_else(|| err("recv", "empty"))?;
        Ok((frame.len(), !s.incoming.is_empty()))
    }

    fn poll_in(_s: &mut ZeromqSocket, _timeout_ms: i64) -> BenchResult<bool> {
        Err(err("poll", "not supported"))
    }

    /// The loop is a task that owns the socket.
    fn send_burst(
        s: &mut ZeromqSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        count: usize,
    ) -> BenchResult<()> {
        if !s.outgoing.is_empty() {
            return Err(err("send", "a burst after a partial message"));
        }
        let envelope = envelope.map(Bytes::copy_from_slice);
        let payload = payload.to_vec();
        burst(s, move |mut inner| async move {
            let sent = async {
                for _ in 0..count {
                    send_one(&mut inner, envelope.as_ref(), &payload).await?;
                }
                Ok(())
            }
            .await;
            (inner, sent)
        })
    }

    fn recv_burst(s: &mut ZeromqSocket, count: usize, poll: bool) -> BenchResult<()> {
        if poll {
            return Err(err("poll", "not supported"));
        }
        if !s.incoming.is_empty() {
            return Err(err("recv", "a burst after a partial message"));
        }
        burst(s, move |mut inner| async move {
            let received = async {
                for _ in 0..count {
                    recv_one(&mut inner).await?;
                }
                Ok(())
            }
            .await;
            (inner, received)
        })
    }

    /// Latency's echo loop is a task too, as ferromq's async column runs it.
    fn echo(
        s: &mut ZeromqSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<()> {
        if poll {
            return Err(err("poll", "not supported"));
        }
        if !s.outgoing.is_empty() || !s.incoming.is_empty() {
            return Err(err("echo", "a loop after a partial message"));
        }
        let envelope = envelope.map(Bytes::copy_from_slice);
        let payload = payload.to_vec();
        burst(s, move |mut inner| async move {
            let echoed = async {
                for _ in 0..roundtrips {
                    recv_one(&mut inner).await?;
                    send_one(&mut inner, envelope.as_ref(), &payload).await?;
                }
                Ok(())
            }
            .await;
            (inner, echoed)
        })
    }

    /// The timing side's loop, likewise: the task reads the clock and hands the times back.
    fn ping(
        s: &mut ZeromqSocket,
        envelope: Option<&[u8]>,
        payload: &[u8],
        roundtrips: usize,
        poll: bool,
    ) -> BenchResult<Vec<Duration>> {
        if poll {
            return Err(err("poll", "not supported"));
        }
        if !s.outgoing.is_empty() || !s.incoming.is_empty() {
            return Err(err("ping", "a loop after a partial message"));
        }
        let envelope = envelope.map(Bytes::copy_from_slice);
        let payload = payload.to_vec();
        burst(s, move |mut inner| async move {
            let timed = async {
                let mut times = Vec::with_capacity(roundtrips);
                for _ in 0..roundtrips {
                    let start = Instant::now();
                    send_one(&mut inner, envelope.as_ref(), &payload).await?;
                    recv_one(&mut inner).await?;
                    times.push(start.elapsed());
                }
                Ok(times)
            }
            .await;
            (inner, timed)
        })
    }
}

/// One message, `envelope` (if any) then a fresh copy of `payload` (as `send` makes); a peer
/// not connected yet is retried after a millisecond, as the blocking harness does.
async fn send_one(inner: &mut Inner, envelope: Option<&Bytes>, payload: &[u8]) -> BenchResult<()> {
    let mut waited = 0;
    loop {
        let mut frames: Vec<Bytes> = envelope.into_iter().cloned().collect();
        frames.push(Bytes::copy_from_slice(payload));
        let msg = ZmqMessage::try_from(frames).map_err(|e| err("message", e))?;
        let sent = match inner {
            Inner::Pub(x) => x.send(msg).await,
            Inner::Dealer(x) => x.send(msg).await,
            Inner::Router(x) => x.send(msg).await,
            Inner::Req(x) => x.send(msg).await,
            Inner::Rep(x) => x.send(msg).await,
            Inner::Sub(_) => return Err(err("send", "SUB cannot send")),
        };
        match sent {
            Ok(()) => return Ok(()),
            Err(ZmqError::Other(_)) if waited < crate::RECV_TIMEOUT_MS => {
                waited += 1;
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            Err(e) => return Err(err("send", e)),
        }
    }
}

/// One whole message.
async fn recv_one(inner: &mut Inner) -> BenchResult<()> {
    match inner {
        Inner::Sub(x) => x.recv().await,
        Inner::Dealer(x) => x.recv().await,
        Inner::Router(x) => x.recv().await,
        Inner::Req(x) => x.recv().await,
        Inner::Rep(x) => x.recv().await,
        Inner::Pub(_) => return Err(err("recv", "PUB cannot receive")),
    }
    .map(drop)
    .map_err(|e| err("recv", e))
}

/// Runs a burst as a task that owns the socket and hands it back, under one deadline of four
/// receive timeouts (as the harness gives a PUB/SUB receiver to finish).
fn burst<F, T>(s: &mut ZeromqSocket, run: impl FnOnce(Inner) -> F) -> BenchResult<T>
where
    F: std::future::Future<Output = (Inner, BenchResult<T>)> + Send + 'static,
    T: Send + 'static,
{
    s.made()?;
    let inner = s.inner.take().ok_or_else(|| err("socket", "not made"))?;
    let limit = std::time::Duration::from_millis(crate::RECV_TIMEOUT_MS as u64 * 4);
    let task = run(inner);
    let handle = s
        .runtime
        .spawn(async move { tokio::time::timeout(limit, task).await });
    let (inner, result) = s
        .runtime
        .block_on(handle)
        .map_err(|e| err("burst task", e))?
        .map_err(|_| err("burst", "timed out"))?;
    s.inner = Some(inner);
    result
}
