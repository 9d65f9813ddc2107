//! What a connection's handshake needs of ZAP (RFC 27): whether a handler is bound at
//! `inproc://zeromq.zap.01` in the socket's context, and one request-reply exchange with it.
//! The socket layer implements it (src/api/zap_client.rs), since talking to the handler takes
//! a socket; this layer only calls it, as it calls the monitor's `EventSink`.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::error::Result;

/// The request id a handshake sends and expects back: each request has its own socket, so one
/// id is enough (libzmq sends "1" too).
pub(crate) const ZAP_REQUEST_ID: &[u8] = b"1";

/// A reply on its way.
pub(crate) type ZapReplyFuture = Pin<Box<dyn Future<Output = Result<Vec<Bytes>>> + Send>>;

/// The context's ZAP handler, as the connection tasks see it.
pub(crate) trait ZapAsker: Send + Sync + std::fmt::Debug {
    /// Whether a handler is bound now.
    fn bound(&self) -> bool;
    /// Sends the request's frames (envelope delimiter first) and waits for the reply's.
    fn ask(&self, request: Vec<Bytes>) -> ZapReplyFuture;
}
