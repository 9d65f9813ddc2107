//! What a connection's handshake needs of ZAP (RFC 27): whether a handler is bound at
//! `inproc://zeromq.zap.01` in the socket's context, and one request-reply exchange with it.
//! The socket layer implements it (src/api/zap_client.rs), since talking to the handler takes
//! a socket; this layer only calls it, as it calls the monitor's `EventSink`.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::error::Result;

/// A reply on its way.
pub(crate) type ZapReplyFuture = Pin<Box<dyn Future<Output = Result<Vec<Bytes>>> + Send>>;

/// The context's ZAP handler, as the connection tasks see it.
pub(crate) trait ZapAsker: Send + Sync + std::fmt::Debug {
    /// Whether a handler is bound now.
    fn bound(&self) -> bool;
    /// An id for the next request: no other request of the context in flight has it.
    fn request_id(&self) -> Bytes;
    /// Sends the request's frames (envelope delimiter first, carrying `id`) and waits for the
    /// reply to it.
    fn ask(&self, id: Bytes, request: Vec<Bytes>) -> ZapReplyFuture;
}
