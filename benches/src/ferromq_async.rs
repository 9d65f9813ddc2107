//! ferromq through its async API ([`ferromq::AsyncSocket`]) for the `--async` column.
//!
//! Driven the way a caller of zmq.rs is driven in [`crate::zeromq`], so the two async columns
//! compare like with like: one multi-thread tokio runtime with one worker (its reactor waits on
//! the sockets' fds), and each harness thread runs every operation to completion with
//! `Handle::block_on`, under the harness's receive timeout. The sockets and their options are
//! ferromq's own; only the waiting goes through tokio. No poll (the async API has none), so
//! ROUTER_ROUTER_POLL is skipped ([`FerromqAsync::supports`]).

use ferromq::{AsyncSocket, Context, Error, SendFlags, Socket, SocketType};
use tokio::runtime::{Handle, Runtime};

use crate::backend::{Backend, BenchError, BenchResult, Kind};
use crate::matrix::Pattern;

/// ferromq's async API on a tokio runtime; one I/O thread, as the blocking column.
pub struct FerromqAsync {
    ctx: Context,
    runtime: Runtime,
}

impl FerromqAsync {
    /// Every cell but the polling one.
    pub fn supports(pattern: Pattern) -> bool {
        pattern != Pattern::RouterRouterPoll
    }
}

/// One async socket and the runtime that drives it.
pub struct FerromqAsyncSocket {
    runtime: Handle,
    socket: AsyncSocket,
}

fn err(what: &str, e: Error) -> BenchError {
    BenchError(format!("ferromq async {what}: {e}"))
}

/// Runs `f` to completion on `runtime`, or gives up after the harness's receive timeout.
fn within<F: std::future::Future>(runtime: &Handle, f: F) -> BenchResult<F::Output> {
    crate::block_on_within(runtime, f).ok_or_else(|| BenchError("ferromq async: timed out".into()))
}

impl FerromqAsyncSocket {
    fn sync(&mut self) -> &mut Socket {
        self.socket.get_mut()
    }
}

impl Backend for FerromqAsync {
    const NAME: &'static str = "ferromq async";
    type Socket = FerromqAsyncSocket;

    fn new() -> BenchResult<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| BenchError(format!("ferromq async runtime: {e}")))?;
        Ok(FerromqAsync {
            ctx: Context::new(),
            runtime,
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
        // The fd is registered with the reactor of the runtime it is made in.
        let _in_runtime = self.runtime.enter();
        let socket = AsyncSocket::new(s).map_err(|e| err("async socket", e))?;
        Ok(FerromqAsyncSocket {
            runtime: self.runtime.handle().clone(),
            socket,
        })
    }

    fn set_routing_id(s: &mut FerromqAsyncSocket, id: &[u8]) -> BenchResult<()> {
        s.sync()
            .set_routing_id(id)
            .map_err(|e| err("routing id", e))
    }

    fn set_router_mandatory(s: &mut FerromqAsyncSocket) -> BenchResult<()> {
        s.sync()
            .set_router_mandatory(true)
            .map_err(|e| err("router mandatory", e))
    }

    fn subscribe_all(s: &mut FerromqAsyncSocket) -> BenchResult<()> {
        s.sync().set_subscribe(b"").map_err(|e| err("subscribe", e))
    }

    fn set_heartbeat(s: &mut FerromqAsyncSocket, ivl_ms: i32) -> BenchResult<()> {
        s.sync()
            .set_heartbeat_ivl(ivl_ms)
            .map_err(|e| err("heartbeat", e))
    }

    fn subscribe(s: &mut FerromqAsyncSocket, prefix: &[u8]) -> BenchResult<()> {
        s.sync()
            .set_subscribe(prefix)
            .map_err(|e| err("subscribe", e))
    }

    fn bind(s: &mut FerromqAsyncSocket, endpoint: &str) -> BenchResult<String> {
        s.sync().bind(endpoint).map_err(|e| err("bind", e))?;
        s.sync()
            .last_endpoint()
            .map_err(|e| err("last endpoint", e))
    }

    fn connect(s: &mut FerromqAsyncSocket, endpoint: &str) -> BenchResult<()> {
        s.sync().connect(endpoint).map_err(|e| err("connect", e))
    }

    fn send(s: &mut FerromqAsyncSocket, data: &[u8], more: bool) -> BenchResult<bool> {
        let flags = if more {
            SendFlags::SNDMORE
        } else {
            SendFlags::empty()
        };
        let FerromqAsyncSocket { runtime, socket } = s;
        // A copy of the caller's bytes, as the blocking column's send_slice.
        match within(runtime, socket.send_slice(data, flags))?.map_err(Error::from) {
            Ok(()) => Ok(true),
            Err(Error::HostUnreachable) => Ok(false),
            Err(e) => Err(err("send", e)),
        }
    }

    fn recv(s: &mut FerromqAsyncSocket) -> BenchResult<(usize, bool)> {
        let FerromqAsyncSocket { runtime, socket } = s;
        let msg = within(runtime, socket.recv())?.map_err(|e| err("recv", e))?;
        Ok((msg.data.len(), msg.more))
    }

    fn poll_in(_s: &mut FerromqAsyncSocket, _timeout_ms: i64) -> BenchResult<bool> {
        Err(BenchError("ferromq async: no poll".into()))
    }
}
