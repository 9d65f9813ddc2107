//! The socket layer's side of ZAP (RFC 27): asks the context's handler on behalf of a
//! handshake that holds the peer's credentials, with one short-lived DEALER connected to
//! `inproc://zeromq.zap.01`, one request, one reply. The frames and the reply's checks are the
//! codec's (`ferromq_zmtp::zap`); the handshake's use of it is src/connect/connection.rs.
//!
//! libzmq keeps one pipe per session to the handler; a socket per request costs more but
//! happens once per handshake and keeps the handler's view the same (an envelope delimiter,
//! then the RFC 27 frames), so a REP or a ROUTER handler works unchanged.

use std::sync::{Arc, Weak};

use bytes::Bytes;
use ferromq_zmtp::{SocketType, ZAP_ENDPOINT};

use crate::api::async_socket::AsyncSocket;
use crate::api::flags::SendFlags;
use crate::api::socket::Socket;
use crate::connect::zap::{ZapAsker, ZapReplyFuture};
use crate::error::Error;
use crate::runtime::CtxInner;

/// The ZAP handler of one context (which owns this: hence the weak reference).
#[derive(Debug)]
pub(crate) struct ContextZap {
    ctx: Weak<CtxInner>,
}

impl ContextZap {
    pub(crate) fn new(ctx: Weak<CtxInner>) -> Arc<ContextZap> {
        Arc::new(ContextZap { ctx })
    }
}

impl ZapAsker for ContextZap {
    fn bound(&self) -> bool {
        let Some(ctx) = self.ctx.upgrade() else {
            return false;
        };
        ZAP_ENDPOINT
            .strip_prefix("inproc://")
            .is_some_and(|name| ctx.inproc.is_bound(name))
    }

    fn ask(&self, request: Vec<Bytes>) -> ZapReplyFuture {
        let ctx = self.ctx.upgrade();
        Box::pin(async move {
            let ctx = ctx.ok_or(Error::Term)?;
            let mut socket = Socket::new(ctx, SocketType::Dealer)?;
            socket.set_linger(0)?;
            socket.connect(ZAP_ENDPOINT)?;
            let mut socket = AsyncSocket::new(socket)?;
            socket.send_multipart(request, SendFlags::empty()).await?;
            Ok(socket.recv_multipart().await?.into_iter().collect())
        })
    }
}
