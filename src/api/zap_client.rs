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
    /// The next request id (ids are this counter in decimal, so any id below it was ours).
    next_id: Arc<AtomicU64>,
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
            next_id: Arc::new(AtomicU64::new(1)),
            link: Mutex::new(None),
        })
    }

    /// The link to the handler bound now: the last one while it reaches the same handler and
    /// its task runs, else a new DEALER and task. Runs inside the asking handshake's runtime.
    fn link(&self, ctx: Arc<CtxInner>) -> Result<Link> {
        let name = ZAP_ENDPOINT.strip_prefix("inproc://").ok_or(Error::Fault)?;
        let handler = ctx.inproc.bound_socket(name).ok_or(Error::Fault)?;
        let mut slot = self.link.lock().map_err(|_| Error::Fault)?;
        if let Some(link) = slot.as_ref()
            && link.handler == handler
            && !link.requests.is_closed()
        {
            return Ok(link.clone());
        }
        let mut socket = Socket::new(ctx, SocketType::Dealer)?;
        socket.set_linger(0)?;
        socket.connect(ZAP_ENDPOINT)?;
        let socket = AsyncSocket::new(socket)?;
        let (requests, queue) = mpsc::unbounded_channel();
        let waiting = Arc::new(Waiting::default());
        tokio::spawn(carry(
            socket,
            queue,
            Arc::clone(&waiting),
            Arc::clone(&self.next_id),
        ));
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
    next_id: Arc<AtomicU64>,
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
                Poll::Ready(Ok(reply)) => {
                    deliver(&waiting, &next_id, reply.into_iter().collect());
                }
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
/// the version). A late reply to a request that stopped waiting (an id we issued) is dropped.
/// A reply with no id, or one we never issued, goes to the only request in flight if there is
/// exactly one, whose handshake then refuses it as libzmq does (ZAP_MALFORMED_REPLY or
/// ZAP_BAD_REQUEST_ID); with several it cannot be told whose it is and is dropped, and those
/// handshakes run into their HANDSHAKE_IVL.
fn deliver(waiting: &Waiting, next_id: &AtomicU64, reply: Vec<Bytes>) {
    let Ok(mut w) = waiting.lock() else {
        return;
    };
    let id = match reply.get(2) {
        Some(id) if w.contains_key(id) => Some(id.clone()),
        Some(id) if issued(id, next_id) => None,
        _ if w.len() == 1 => w.keys().next().cloned(),
        _ => None,
    };
    if let Some(tx) = id.and_then(|id| w.remove(&id)) {
        let _ = tx.send(reply);
    }
}

/// Whether `id` is one this context gave a request (a number below the counter).
fn issued(id: &[u8], next_id: &AtomicU64) -> bool {
    std::str::from_utf8(id)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .is_some_and(|n| n >= 1 && n < next_id.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(id: &str) -> Vec<Bytes> {
        ["", "1.0", id, "200", "OK", "", ""]
            .into_iter()
            .map(|f| Bytes::copy_from_slice(f.as_bytes()))
            .collect()
    }

    /// Each reply reaches the request its id names; a late reply to a request that stopped
    /// waiting reaches no other; a foreign id reaches the only request in flight (which then
    /// refuses it as libzmq does), and nobody when there are several.
    #[test]
    fn replies_go_by_request_id() {
        let waiting = Waiting::default();
        let next_id = AtomicU64::new(4);
        let mut rx = HashMap::new();
        for id in ["1", "2", "3"] {
            let (tx, r) = oneshot::channel();
            waiting.lock().unwrap().insert(Bytes::from(id), tx);
            rx.insert(id, r);
        }
        deliver(&waiting, &next_id, reply("2"));
        assert_eq!(rx.get_mut("2").unwrap().try_recv().unwrap()[2], "2");
        deliver(&waiting, &next_id, reply("2"));
        deliver(&waiting, &next_id, reply("bogus"));
        assert_eq!(waiting.lock().unwrap().len(), 2, "neither reached 1 or 3");
        waiting.lock().unwrap().remove(&Bytes::from("3"));
        deliver(&waiting, &next_id, reply("2"));
        assert!(
            rx.get_mut("1").unwrap().try_recv().is_err(),
            "a late reply to 2"
        );
        deliver(&waiting, &next_id, reply("bogus"));
        assert_eq!(rx.get_mut("1").unwrap().try_recv().unwrap()[2], "bogus");
        assert!(waiting.lock().unwrap().is_empty());
    }
}
