//! ferromq through its async API ([`ferromq::AsyncSocket`]) for the `--async` columns.
//!
//! Two ways a program may run it, one column each. `ferromq async` is driven the way a caller
//! of zmq.rs is driven in [`crate::zeromq`], so those two columns compare like with like: one
//! multi-thread tokio runtime with one worker, whose reactor waits on the sockets' fds, and
//! each harness thread runs every call to completion with `Handle::block_on` on it, so every
//! wait is woken through that worker. `ferromq async ct` gives each socket its own
//! current-thread runtime (`#[tokio::main(flavor = "current_thread")]` in a program) and runs
//! each call with `Runtime::block_on`, so the thread that waits is the one polling the reactor.
//! The sockets and their options are ferromq's own; only the waiting goes through tokio. No poll
//! (the async API has none), so ROUTER_ROUTER_POLL is skipped ([`FerromqAsync::supports`]).

use ferromq::{AsyncSocket, Context, Error, SendFlags, Socket, SocketType};
use tokio::runtime::{Builder, Handle, Runtime};

use crate::backend::{Backend, BenchError, BenchResult, Kind};
use crate::matrix::Pattern;

/// ferromq's async API on tokio; one I/O thread, as the blocking column. `CURRENT_THREAD`:
/// a current-thread runtime per socket, else one shared multi-thread runtime.
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
    socket: AsyncSocket,
    driver: Driver,
}

fn err(what: &str, e: Error) -> BenchError {
    BenchError(format!("ferromq async {what}: {e}"))
}

fn timed_out() -> BenchError {
    BenchError("ferromq async: timed out".into())
}

fn runtime(current_thread: bool) -> BenchResult<Runtime> {
    let mut builder = if current_thread {
        Builder::new_current_thread()
    } else {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(1);
        b
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| BenchError(format!("ferromq async runtime: {e}")))
}

impl FerromqAsyncSocket {
    fn sync(&mut self) -> &mut Socket {
        self.socket.get_mut()
    }
}

/// Runs `$call` (an expression on `$socket`) to completion on the socket's runtime, under the
/// harness's receive timeout.
macro_rules! drive {
    ($s:expr, $socket:ident => $call:expr) => {{
        let FerromqAsyncSocket {
            socket: $socket,
            driver,
        } = $s;
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
        Ok(FerromqAsyncSocket { socket, driver })
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
}
