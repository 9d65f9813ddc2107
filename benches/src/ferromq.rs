//! ferromq through its public Rust API.

use ferromq::{Context, Error, RecvFlags, SendFlags, Socket, SocketType};

use crate::backend::{Backend, BenchError, BenchResult, Kind};

/// ferromq with one I/O thread, as libzmq's default.
pub struct Ferromq {
    ctx: Context,
}

fn err(what: &str, e: Error) -> BenchError {
    BenchError(format!("ferromq {what}: {e}"))
}

impl Backend for Ferromq {
    const NAME: &'static str = "ferromq";
    type Socket = Socket;

    fn new() -> BenchResult<Self> {
        Ok(Ferromq {
            ctx: Context::new(),
        })
    }

    fn socket(&self, kind: Kind, hwm: i32) -> BenchResult<Socket> {
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
        s.set_rcvtimeo(crate::RECV_TIMEOUT_MS)
            .map_err(|e| err("rcvtimeo", e))?;
        Ok(s)
    }

    fn set_routing_id(s: &mut Socket, id: &[u8]) -> BenchResult<()> {
        s.set_routing_id(id).map_err(|e| err("routing id", e))
    }

    fn set_router_mandatory(s: &mut Socket) -> BenchResult<()> {
        s.set_router_mandatory(true)
            .map_err(|e| err("router mandatory", e))
    }

    fn subscribe_all(s: &mut Socket) -> BenchResult<()> {
        s.set_subscribe(b"").map_err(|e| err("subscribe", e))
    }

    fn set_heartbeat(s: &mut Socket, ivl_ms: i32) -> BenchResult<()> {
        s.set_heartbeat_ivl(ivl_ms).map_err(|e| err("heartbeat", e))
    }

    fn subscribe(s: &mut Socket, prefix: &[u8]) -> BenchResult<()> {
        s.set_subscribe(prefix).map_err(|e| err("subscribe", e))
    }

    fn bind(s: &mut Socket, endpoint: &str) -> BenchResult<String> {
        s.bind(endpoint).map_err(|e| err("bind", e))?;
        s.last_endpoint().map_err(|e| err("last endpoint", e))
    }

    fn connect(s: &mut Socket, endpoint: &str) -> BenchResult<()> {
        s.connect(endpoint).map_err(|e| err("connect", e))
    }

    fn send(s: &mut Socket, data: &[u8], more: bool) -> BenchResult<bool> {
        let flags = if more {
            SendFlags::SNDMORE
        } else {
            SendFlags::empty()
        };
        // A copy of the caller's bytes, as zmq_send makes on the libzmq side.
        match s.send_slice(data, flags).map_err(Error::from) {
            Ok(()) => Ok(true),
            Err(Error::HostUnreachable) => Ok(false),
            Err(e) => Err(err("send", e)),
        }
    }

    fn recv(s: &mut Socket) -> BenchResult<(usize, bool)> {
        let msg = s.recv(RecvFlags::empty()).map_err(|e| err("recv", e))?;
        Ok((msg.data.len(), msg.more))
    }

    fn poll_in(s: &mut Socket, timeout_ms: i64) -> BenchResult<bool> {
        let mut items = [ferromq::PollItem::socket_mut(s, ferromq::POLLIN)];
        let n = ferromq::poll(&mut items, timeout_ms).map_err(|e| err("poll", e))?;
        Ok(n > 0)
    }
}
