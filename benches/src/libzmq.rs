//! The reference: libzmq 4.3.4 as bundled and statically linked by the `zmq` crate.

use crate::backend::{Backend, BenchError, BenchResult, Kind};

/// libzmq through the `zmq` crate.
pub struct Libzmq {
    ctx: zmq::Context,
}

/// A libzmq socket and the message it receives into, reused across receives.
pub struct LibzmqSocket {
    socket: zmq::Socket,
    msg: zmq::Message,
}

fn err(what: &str, e: zmq::Error) -> BenchError {
    BenchError(format!("libzmq {what}: {e}"))
}

impl Backend for Libzmq {
    const NAME: &'static str = "libzmq";
    type Socket = LibzmqSocket;

    fn new() -> BenchResult<Self> {
        Ok(Libzmq {
            ctx: zmq::Context::new(),
        })
    }

    fn socket(&self, kind: Kind, hwm: i32) -> BenchResult<LibzmqSocket> {
        let kind = match kind {
            Kind::Pair => zmq::PAIR,
            Kind::Pub => zmq::PUB,
            Kind::Sub => zmq::SUB,
            Kind::Dealer => zmq::DEALER,
            Kind::Router => zmq::ROUTER,
            Kind::Req => zmq::REQ,
            Kind::Rep => zmq::REP,
            Kind::Push => zmq::PUSH,
            Kind::Pull => zmq::PULL,
        };
        let socket = self.ctx.socket(kind).map_err(|e| err("socket", e))?;
        socket.set_sndhwm(hwm).map_err(|e| err("sndhwm", e))?;
        socket.set_rcvhwm(hwm).map_err(|e| err("rcvhwm", e))?;
        socket.set_linger(0).map_err(|e| err("linger", e))?;
        socket
            .set_rcvtimeo(crate::RECV_TIMEOUT_MS)
            .map_err(|e| err("rcvtimeo", e))?;
        Ok(LibzmqSocket {
            socket,
            msg: zmq::Message::new(),
        })
    }

    fn set_routing_id(s: &mut LibzmqSocket, id: &[u8]) -> BenchResult<()> {
        s.socket.set_identity(id).map_err(|e| err("routing id", e))
    }

    fn set_router_mandatory(s: &mut LibzmqSocket) -> BenchResult<()> {
        s.socket
            .set_router_mandatory(true)
            .map_err(|e| err("router mandatory", e))
    }

    fn subscribe_all(s: &mut LibzmqSocket) -> BenchResult<()> {
        s.socket.set_subscribe(b"").map_err(|e| err("subscribe", e))
    }

    fn set_heartbeat(s: &mut LibzmqSocket, ivl_ms: i32) -> BenchResult<()> {
        s.socket
            .set_heartbeat_ivl(ivl_ms)
            .map_err(|e| err("heartbeat", e))
    }

    fn subscribe(s: &mut LibzmqSocket, prefix: &[u8]) -> BenchResult<()> {
        s.socket
            .set_subscribe(prefix)
            .map_err(|e| err("subscribe", e))
    }

    fn bind(s: &mut LibzmqSocket, endpoint: &str) -> BenchResult<String> {
        s.socket.bind(endpoint).map_err(|e| err("bind", e))?;
        match s.socket.get_last_endpoint() {
            Ok(Ok(ep)) => Ok(ep),
            Ok(Err(_)) => Err(BenchError("libzmq last endpoint is not UTF-8".into())),
            Err(e) => Err(err("last endpoint", e)),
        }
    }

    fn connect(s: &mut LibzmqSocket, endpoint: &str) -> BenchResult<()> {
        s.socket.connect(endpoint).map_err(|e| err("connect", e))
    }

    fn send(s: &mut LibzmqSocket, data: &[u8], more: bool) -> BenchResult<bool> {
        let flags = if more { zmq::SNDMORE } else { 0 };
        match s.socket.send(data, flags) {
            Ok(()) => Ok(true),
            Err(zmq::Error::EHOSTUNREACH) => Ok(false),
            Err(e) => Err(err("send", e)),
        }
    }

    fn recv(s: &mut LibzmqSocket) -> BenchResult<(usize, bool)> {
        s.socket.recv(&mut s.msg, 0).map_err(|e| err("recv", e))?;
        Ok((s.msg.len(), s.msg.get_more()))
    }

    fn poll_in(s: &mut LibzmqSocket, timeout_ms: i64) -> BenchResult<bool> {
        let n = s
            .socket
            .poll(zmq::POLLIN, timeout_ms)
            .map_err(|e| err("poll", e))?;
        Ok(n > 0)
    }
}
