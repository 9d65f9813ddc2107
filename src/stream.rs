//! A connected byte stream of either transport, in its two lives: a tokio stream while the
//! management layer connects and handshakes, then a mio stream on an I/O thread.

use std::io::{self, IoSlice, Read, Write};
use std::mem::MaybeUninit;

use mio::event::Source;
use mio::{Interest, Registry, Token};

/// A stream during connection management.
#[derive(Debug)]
pub(crate) enum AsyncStream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl AsyncStream {
    pub(crate) async fn read_buf(&mut self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        use tokio::io::AsyncReadExt;
        match self {
            AsyncStream::Tcp(s) => s.read_buf(buf).await,
            AsyncStream::Unix(s) => s.read_buf(buf).await,
        }
    }

    pub(crate) async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        use tokio::io::AsyncWriteExt;
        match self {
            AsyncStream::Tcp(s) => s.write_all(data).await,
            AsyncStream::Unix(s) => s.write_all(data).await,
        }
    }

    /// Moves the stream out of tokio, keeping it non-blocking, for an I/O thread.
    pub(crate) fn into_mio(self) -> io::Result<Stream> {
        match self {
            AsyncStream::Tcp(s) => {
                let std = s.into_std()?;
                std.set_nonblocking(true)?;
                Ok(Stream::Tcp(mio::net::TcpStream::from_std(std)))
            }
            AsyncStream::Unix(s) => {
                let std = s.into_std()?;
                std.set_nonblocking(true)?;
                Ok(Stream::Unix(mio::net::UnixStream::from_std(std)))
            }
        }
    }
}

/// A stream on an I/O thread.
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Stream {
    /// Reads into memory that need not be initialised (the spare capacity of the engine's
    /// buffer); returns how many leading bytes of `buf` the kernel filled. Through `Read`
    /// the room would have to be zeroed first, which for a large frame read in several
    /// pieces cost more than the copy out of the kernel.
    pub(crate) fn read_uninit(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let filled = match self {
            Stream::Tcp(s) => rustix::io::read(&*s, buf),
            Stream::Unix(s) => rustix::io::read(&*s, buf),
        };
        filled.map(|(init, _)| init.len()).map_err(io::Error::from)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Unix(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Source for Stream {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(registry, token, interests),
            Stream::Unix(s) => s.register(registry, token, interests),
        }
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(registry, token, interests),
            Stream::Unix(s) => s.reregister(registry, token, interests),
        }
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(registry),
            Stream::Unix(s) => s.deregister(registry),
        }
    }
}
