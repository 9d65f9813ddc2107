//! The tokio ecosystem's traits on [`AsyncSocket`]: a `Stream` of the messages it receives
//! and a `Sink` of those it sends, so `StreamExt`/`SinkExt`, `forward`, `select` and
//! `tokio_stream` combinators work on sockets.
//!
//! Both are thin over the socket's cancel-safe `poll_*` functions. The `Sink` buffers one
//! message, in the socket rather than in a future: `start_send` parks it there and
//! `poll_ready`/`poll_flush` hand it over, so a message the `Sink` accepted is sent even if
//! the future that would have flushed it is dropped (the next send or flush finishes it).
//! Both spend tokio's task budget, each message one operation (see the `async_socket`
//! module), so a `forward` between two busy sockets still lets the other tasks on its worker
//! run.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_sink::Sink;

use crate::api::async_socket::AsyncSocket;
use crate::api::multipart::Multipart;
use crate::error::{Error, Result};

impl Stream for AsyncSocket {
    /// A whole message, or the error that ended a receive.
    type Item = Result<Multipart>;

    /// Ends (`None`) once the context is shut down (`ETERM`), the one error after which no
    /// message can ever arrive.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Multipart>>> {
        match self.get_mut().poll_recv_multipart(cx) {
            Poll::Ready(Err(Error::Term)) => Poll::Ready(None),
            Poll::Ready(r) => Poll::Ready(Some(r)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Sink<Multipart> for AsyncSocket {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_flush_queued(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: Multipart) -> Result<()> {
        self.get_mut().queue_outbound(item)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_flush_queued(cx)
    }

    /// Flushes; the socket stays open (drop it, or call `into_inner`, to close it).
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_flush_queued(cx)
    }
}
