//! A connected byte stream of either transport, in its two lives: a tokio stream while the
//! management layer connects and handshakes, then a mio stream on an I/O thread.

use std::io::{self, IoSlice, Read, Write};
use std::mem::MaybeUninit;

use std::os::fd::AsFd;

use mio::event::Source;
use mio::{Interest, Registry, Token};
use socket2::SockRef;

/// A stream during connection management.
#[derive(Debug)]
pub(crate) enum AsyncStream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl AsyncStream {
    pub(crate) async fn read_buf<B: bytes::BufMut + Send>(
        &mut self,
        buf: &mut B,
    ) -> io::Result<usize> {
        use tokio::io::AsyncReadExt;
        match self {
            AsyncStream::Tcp(s) => s.read_buf(buf).await,
            AsyncStream::Unix(s) => s.read_buf(buf).await,
        }
    }

    /// Writes all of `data` with `MSG_NOSIGNAL` (see [`send_nosignal`]): tokio's own write
    /// on a Unix stream is a plain `write(2)`, which raises SIGPIPE on a closed peer.
    pub(crate) async fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        use tokio::io::Interest;
        while !data.is_empty() {
            let n = match self {
                AsyncStream::Tcp(s) => {
                    s.writable().await?;
                    s.try_io(Interest::WRITABLE, || send_nosignal(&*s, data))
                }
                AsyncStream::Unix(s) => {
                    s.writable().await?;
                    s.try_io(Interest::WRITABLE, || send_nosignal(&*s, data))
                }
            };
            match n {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
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

    /// Shuts both directions down (the fd stays open until the stream is dropped); an error
    /// (already shut down, or disconnected) leaves nothing to do.
    pub(crate) fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// The stream's fd, for a thread that waits on it in `poll(2)` (see `lend.rs`).
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Tcp(s) => std::os::fd::AsRawFd::as_raw_fd(s),
            Stream::Unix(s) => std::os::fd::AsRawFd::as_raw_fd(s),
        }
    }

    /// A tcp stream's (local, peer) addresses; `None` for ipc, or if either is unknown.
    pub(crate) fn tcp_ends(&self) -> Option<crate::io::loopback_pairs::Ends> {
        match self {
            Stream::Tcp(s) => Some((s.local_addr().ok()?, s.peer_addr().ok()?)),
            Stream::Unix(_) => None,
        }
    }
}

impl Stream {
    /// Polls the stream, without sleeping, until it is readable (writable with `out`), in
    /// error or closed, or `spin` has passed; true when it is. `poll(2)` takes no socket
    /// lock, so polling does not hold up the peer's writes.
    ///
    /// It does not yield between polls: a thread that yields to a busy process on its CPU
    /// waits out that process's time slice, where one that sleeps and is woken preempts it.
    /// With a busy loop beside each pinned process, yielding made the 256 KiB tcp round trip
    /// 3,286 us against 424 before polling and 372 polling without it (medians of 5).
    pub(crate) fn ready_within(&self, out: bool, spin: std::time::Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let flags = if out { PollFlags::OUT } else { PollFlags::IN };
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let fd = match self {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
        };
        let failed = std::cell::Cell::new(false);
        let ready = crate::io::spin_backoff::spin_until(std::time::Instant::now() + spin, || {
            match rustix::event::poll(&mut [PollFd::new(&fd, flags)], Some(&now)) {
                Ok(0) => false,
                Ok(_) => true,
                Err(_) => {
                    failed.set(true);
                    true
                }
            }
        });
        ready && !failed.get()
    }

    /// Asks for an ipc stream's send buffer of `bytes` (`SO_SNDBUF`; Linux caps the request at
    /// `net.core.wmem_max` and doubles it). A tcp stream is left alone (`Ok(false)`): its
    /// buffer autotunes, and setting one would fix it.
    pub(crate) fn set_ipc_send_buffer(&self, bytes: usize) -> io::Result<bool> {
        let Stream::Unix(s) = self else {
            return Ok(false);
        };
        SockRef::from(s).set_send_buffer_size(bytes).map(|()| true)
    }

    /// Sets `SO_RCVLOWAT` on a tcp stream: the kernel then signals readability (wakes the I/O
    /// thread's `epoll_wait`) only once `bytes` are queued, or the peer closed, or the receive
    /// window or memory is nearly exhausted (Linux's `tcp_data_ready`, since 4.18), and it
    /// signals at once if they already are. Reads are not affected: a non-blocking read still
    /// returns whatever is queued. A Unix stream socket wakes its reader on every write
    /// whatever the mark, so it is left alone there (`Ok(false)`).
    pub(crate) fn set_recv_lowat(&self, bytes: usize) -> io::Result<bool> {
        let Stream::Tcp(s) = self else {
            return Ok(false);
        };
        let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        let fd = std::os::fd::AsRawFd::as_raw_fd(s);
        // SAFETY: `fd` is this stream's open socket; `value` is a live c_int and the length
        // passed is its size, as setsockopt(2) requires for SO_RCVLOWAT. (Neither socket2 nor
        // rustix exposes this option.)
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&raw const value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            Ok(true)
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Sends with `MSG_NOSIGNAL`, so a peer that has gone away gives `EPIPE` instead of a
/// SIGPIPE that kills a C or Python program with the default disposition (libzmq never
/// raises it either). `write(2)`/`writev(2)` have no such flag, so every write to a peer
/// goes through here.
pub(crate) fn send_nosignal(fd: &impl AsFd, buf: &[u8]) -> io::Result<usize> {
    SockRef::from(fd).send_with_flags(buf, libc::MSG_NOSIGNAL)
}

/// The vectored form of [`send_nosignal`] (`sendmsg(2)` with `MSG_NOSIGNAL`).
pub(crate) fn send_vectored_nosignal(fd: &impl AsFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    SockRef::from(fd).send_vectored_with_flags(bufs, libc::MSG_NOSIGNAL)
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => send_nosignal(s, buf),
            Stream::Unix(s) => send_nosignal(s, buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => send_vectored_nosignal(s, bufs),
            Stream::Unix(s) => send_vectored_nosignal(s, bufs),
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

#[cfg(test)]
mod tests {
    use super::Stream;
    use socket2::SockRef;

    fn recv_buffer(stream: &Stream) -> usize {
        let Stream::Tcp(s) = stream else {
            unreachable!()
        };
        SockRef::from(s).recv_buffer_size().unwrap()
    }

    /// What the engine's `WINDOW_MARK` relies on: a mark raises an unlocked tcp receive
    /// buffer to hold that many bytes (up to half of `tcp_rmem`'s maximum), and a lower mark
    /// set afterwards leaves it raised.
    #[test]
    fn a_high_mark_leaves_the_receive_buffer_raised() {
        let rmem_max = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem")
            .ok()
            .and_then(|s| s.split_whitespace().nth(2)?.parse::<usize>().ok())
            .expect("tcp_rmem");
        let mark = crate::io::engine::WINDOW_MARK.min(rmem_max / 2);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let stream = Stream::Tcp(mio::net::TcpStream::from_std(accepted));
        let before = recv_buffer(&stream);
        assert!(
            before < mark,
            "the default receive buffer is already {before}"
        );
        assert!(stream
            .set_recv_lowat(crate::io::engine::WINDOW_MARK)
            .unwrap());
        let raised = recv_buffer(&stream);
        assert!(raised >= mark, "receive buffer {raised} < {mark}");
        assert!(stream.set_recv_lowat(256 * 1024).unwrap());
        assert_eq!(recv_buffer(&stream), raised);
        assert!(stream.set_recv_lowat(1).unwrap());
        assert_eq!(recv_buffer(&stream), raised);
    }
}
