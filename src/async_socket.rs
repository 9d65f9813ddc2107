//! The async API: a [`Socket`] driven from tokio by its readiness fd.
//!
//! No thread per socket: the socket's eventfd (its ZMQ_FD) is registered with the tokio
//! reactor, and an operation that would block awaits that fd. The eventfd only says "look
//! again" (edge-triggered, as libzmq's ZMQ_FD), so each wait clears tokio's readiness and
//! drains the eventfd *before* retrying: a wake-up arriving after that retry re-arms the
//! fd, and one that arrived before it is seen by the retry itself, so none is lost.

use std::os::fd::OwnedFd;

use bytes::Bytes;
use tokio::io::unix::AsyncFd;

use crate::error::{Error, Result};
use crate::flags::{RecvFlags, SendFlags};
use crate::msg::Msg;
use crate::socket::Socket;

/// A socket for async code on tokio. Create it inside a runtime with I/O enabled.
#[derive(Debug)]
pub struct AsyncSocket {
    /// A duplicate of the socket's eventfd (same counter, same readiness), owned here so
    /// the registration can never outlive the descriptor it names.
    ready: AsyncFd<OwnedFd>,
    socket: Socket,
}

impl AsyncSocket {
    /// Wraps `socket`; must be called inside a tokio runtime with I/O enabled (`EINVAL`
    /// outside any runtime).
    pub fn new(socket: Socket) -> Result<AsyncSocket> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::Invalid);
        }
        let fd = socket.signaler().borrowed().try_clone_to_owned()?;
        // Deprecated because a bare `AsRawFd` may close under the reactor; an `OwnedFd`
        // held by the `AsyncFd` itself cannot, which is the I/O safety the new API wants.
        #[allow(deprecated)]
        let ready = AsyncFd::with_interest(fd, tokio::io::Interest::READABLE)?;
        Ok(AsyncSocket { ready, socket })
    }

    /// The socket, for options, bind and connect.
    pub fn get_ref(&self) -> &Socket {
        &self.socket
    }

    /// The socket, mutably (bind, connect, options).
    pub fn get_mut(&mut self) -> &mut Socket {
        &mut self.socket
    }

    /// Gives the socket back.
    pub fn into_inner(self) -> Socket {
        let AsyncSocket { ready, socket } = self;
        drop(ready);
        socket
    }

    /// Waits for the next wake-up of the socket.
    async fn changed(&self) -> Result<()> {
        let mut guard = self.ready.readable().await?;
        guard.clear_ready();
        self.socket.signaler().drain();
        Ok(())
    }

    /// Sends one message part (`more`: others follow), waiting while the socket cannot take
    /// it (HWM reached, no peer yet).
    pub async fn send(&mut self, msg: impl Into<Msg>, more: bool) -> Result<()> {
        let data: Bytes = msg.into().data;
        let flags = if more {
            SendFlags::SNDMORE | SendFlags::DONTWAIT
        } else {
            SendFlags::DONTWAIT
        };
        loop {
            // A refused part is handed back only inside `send`; retry with a cheap clone.
            match self.socket.send(data.clone(), flags) {
                Err(Error::Again) => self.changed().await?,
                done => return done,
            }
        }
    }

    /// Sends a copy of `data` as one message part, like [`Socket::send_slice`].
    pub async fn send_slice(&mut self, data: &[u8], more: bool) -> Result<()> {
        let body = self.socket.copy_to_send(data);
        self.send(body, more).await
    }

    /// Receives one message part, waiting until one arrives.
    pub async fn recv(&mut self) -> Result<Msg> {
        loop {
            match self.socket.recv(RecvFlags::DONTWAIT) {
                Err(Error::Again) => self.changed().await?,
                done => return done,
            }
        }
    }

    /// Sends every part of a message.
    pub async fn send_multipart<I, T>(&mut self, parts: I) -> Result<()>
    where
        I: IntoIterator<Item = T>,
        T: Into<Msg>,
    {
        let mut iter = parts.into_iter().peekable();
        while let Some(part) = iter.next() {
            let more = iter.peek().is_some();
            self.send(part, more).await?;
        }
        Ok(())
    }

    /// Receives every part of a message.
    pub async fn recv_multipart(&mut self) -> Result<Vec<Bytes>> {
        let mut parts = Vec::new();
        loop {
            let msg = self.recv().await?;
            parts.push(msg.data);
            if !msg.more {
                return Ok(parts);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, SocketType};

    #[test]
    fn outside_a_runtime_is_einval() {
        let ctx = Context::new();
        let s = ctx.socket(SocketType::Pair).unwrap();
        assert_eq!(AsyncSocket::new(s).err(), Some(Error::Invalid));
    }

    #[test]
    fn inproc_round_trip_waits_without_a_thread() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let ctx = Context::new();
            let mut a = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
            let mut b = AsyncSocket::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
            a.get_mut().bind("inproc://unit-async").unwrap();
            b.get_mut().connect("inproc://unit-async").unwrap();
            // The receiver waits first; the sender runs on the same (only) thread.
            let recv = async { a.recv_multipart().await.unwrap() };
            let send = async {
                tokio::task::yield_now().await;
                b.send_multipart(["x", "y"]).await.unwrap();
            };
            let (got, ()) = tokio::join!(recv, send);
            assert_eq!(got, vec![Bytes::from("x"), Bytes::from("y")]);
        });
    }
}
