//! The socket layer's side of ZAP (RFC 27): asks the context's handler on behalf of a
//! handshake that holds the peer's credentials. The frames and the reply's checks are the
//! codec's (`ferromq_zmtp::zap`); the handshake's use of it is src/connect/connection.rs.
//!
//! One long-lived DEALER per context, connected to `inproc://zeromq.zap.01`, carries every
//! request, each with its own request id, and a task that owns the socket hands each reply to
//! the handshake whose id it carries. libzmq keeps one pipe per session instead; the handler's
//! view is the same (an envelope delimiter, then the RFC 27 frames), so a REP or a ROUTER
//! handler works unchanged, and a handler that answers requests out of order (a ROUTER) is
//! answered out of order here too: a slow request holds back only what the handler itself
//! holds back, as with libzmq. A handler bound anew (another socket at the endpoint) gets a
//! new DEALER; requests still waiting on the old one fail, as libzmq's do when the handler's
//! pipe goes.

use std::collections::HashMap;
use std::future::poll_fn;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;

use bytes::Bytes;
use ferromq_zmtp::{SocketType, ZAP_ENDPOINT};
use tokio::sync::{mpsc, oneshot};

use crate::api::async_socket::AsyncSocket;
use crate::api::multipart::Multipart;
use crate::api::socket::Socket;
use crate::connect::zap::{ZapAsker, ZapReplyFuture};
use crate::error::{Error, Result};
use crate::runtime::CtxInner;

/// Requests in flight, by request id: where each one's reply goes.
type Waiting = Mutex<HashMap<Bytes, oneshot::Sender<Vec<Bytes>>>>;

/// The ZAP handler of one context (which owns this: hence the weak reference).
#[derive(Debug)]
pub(crate) struct ContextZap {
    ctx: Weak<CtxInner>,
    next_id: AtomicU64,
    link: Mutex<Option<Link>>,
}

/// The DEALER to one bound handler, as the asking side sees it.
#[derive(Debug, Clone)]
struct Link {
    /// The handler socket it reached.
    handler: u64,
    /// Requests for the task that owns the DEALER.
    requests: mpsc::UnboundedSender<Vec<Bytes>>,
    waiting: Arc<Waiting>,
}

impl ContextZap {
    pub(crate) fn new(ctx: Weak<CtxInner>) -> Arc<ContextZap> {
        Arc::new(ContextZap {
            ctx,
            next_id: AtomicU64::new(1),
            link: Mutex::new(None),
        })
    }

    /// The link to the handler bound now: the last one while it reaches the same handler and
    /// its task runs, else a new DEALER and task. Runs inside the asking handshake's runtime.
    fn link(&self, ctx: Arc<CtxInner>) -> Result<Link> {
        let name = ZAP_ENDPOINT.strip_prefix("inproc://").ok_or(Error::Fault)?;
        let handler = ctx.inproc.bound_socket(name).ok_or(Error::Fault)?;
        let mut slot = self.link.lock().map_err(|_| Error::Fault)?;
        if let Some(link) = slot.as_ref() {
            if link.handler == handler && !link.requests.is_closed() {
                return Ok(link.clone());
            }
        }
        let mut socket = Socket::new(ctx, SocketType::Dealer)?;
        socket.set_linger(0)?;
        socket.connect(ZAP_ENDPOINT)?;
        let socket = AsyncSocket::new(socket)?;
        let (requests, queue) = mpsc::unbounded_channel();
        let waiting = Arc::new(Waiting::default());
        tokio::spawn(carry(socket, queue, Arc::clone(&waiting)));
        let link = Link {
            handler,
            requests,
            waiting,
        };
        *slot = Some(link.clone());
        Ok(link)
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

    fn request_id(&self) -> Bytes {
        Bytes::from(self.next_id.fetch_add(1, Ordering::Relaxed).to_string())
    }

    fn ask(&self, id: Bytes, request: Vec<Bytes>) -> ZapReplyFuture {
        let link = self
            .ctx
            .upgrade()
            .ok_or(Error::Term)
            .and_then(|ctx| self.link(ctx));
        Box::pin(async move {
            let link = link?;
            let (tx, rx) = oneshot::channel();
            link.waiting
                .lock()
                .map_err(|_| Error::Fault)?
                .insert(id.clone(), tx);
            // Dropped with this future (HANDSHAKE_IVL ran out): the id is forgotten, and a
            // late reply to it is dropped.
            let _forget = Forget {
                waiting: Arc::clone(&link.waiting),
                id,
            };
            link.requests.send(request).map_err(|_| Error::Term)?;
            rx.await.map_err(|_| Error::Term)
        })
    }
}

/// Removes a request's entry when its asker stops waiting.
struct Forget {
    waiting: Arc<Waiting>,
    id: Bytes,
}

impl Drop for Forget {
    fn drop(&mut self) {
        if let Ok(mut w) = self.waiting.lock() {
            w.remove(&self.id);
        }
    }
}

/// The task that owns the DEALER: sends the requests as they come and hands each reply to the
/// request its id names. Ends when the context terminates (ETERM), the link is replaced or
/// dropped (no sender left), or the socket fails; requests still waiting then fail.
async fn carry(
    mut socket: AsyncSocket,
    mut queue: mpsc::UnboundedReceiver<Vec<Bytes>>,
    waiting: Arc<Waiting>,
) {
    poll_fn(|cx| {
        loop {
            match socket.poll_flush_outbound(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => break,
            }
            match queue.poll_recv(cx) {
                Poll::Ready(Some(request)) => {
                    if socket.queue_outbound(Multipart::from(request)).is_err() {
                        return Poll::Ready(());
                    }
                }
                Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending => break,
            }
        }
        loop {
            match socket.poll_recv_multipart(cx) {
                Poll::Ready(Ok(reply)) => deliver(&waiting, reply.into_iter().collect()),
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    })
    .await;
    if let Ok(mut w) = waiting.lock() {
        w.clear();
    }
}

/// Hands `reply` to the request whose id it carries (the third frame, after the delimiter and
/// the version). A reply naming no request in flight goes to the only one there is, if there
/// is exactly one, whose handshake then refuses it as libzmq does (ZAP_BAD_REQUEST_ID or
/// ZAP_MALFORMED_REPLY); otherwise it is dropped, and the handshakes waiting run into their
/// HANDSHAKE_IVL.
fn deliver(waiting: &Waiting, reply: Vec<Bytes>) {
    let Ok(mut w) = waiting.lock() else {
        return;
    };
    let id = reply.get(2).filter(|id| w.contains_key(*id)).cloned();
    let id = id.or_else(|| (w.len() == 1).then(|| w.keys().next().cloned()).flatten());
    if let Some(tx) = id.and_then(|id| w.remove(&id)) {
        let _ = tx.send(reply);
    }
}
