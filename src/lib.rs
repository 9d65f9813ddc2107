//! ferromq: the ZeroMQ messaging core in Rust, wire-compatible with libzmq (ZMTP 3.1).
//!
//! ```text
//!  application thread             management (tokio, 1 thread)        I/O thread(s) (mio)
//!  Socket ── Pattern ── pipes ─┐  bind/accept, connect, reconnect,   ┌─ Engine per connection:
//!     ▲  eventfd (ZMQ_FD)      │  greeting + NULL handshake under    │  read 8-64 KiB, decode all
//!     └── wake on empty->ready │  HANDSHAKE_IVL, then hand the       │  frames (zero copy), push
//!                              │  stream to an I/O thread ─────────> │  to the pipe, flush once;
//!                              └──────── lock-free SPSC pipes ──────>│  drain pipe -> Encoder ->
//!                                                                     │  writev
//! ```
//!
//! # Threads and wake-ups
//!
//! A [`Context`] owns N I/O threads, each a mio `Poll` loop over established connections
//! (the hot path), and one small tokio runtime for everything that is not hot: binding and
//! accepting, connecting and reconnecting with back-off, and the handshake. When a
//! handshake completes, the stream leaves tokio (`into_std`), becomes a mio stream on an I/O
//! thread, and the socket gets the connection's pipes (a command on its queue) and the
//! peer's metadata. When the connection dies the engine hands the pipes back to its tokio
//! task, which reconnects; a connecting socket's pipes live from `connect()` to
//! `disconnect()`, so messages sent while disconnected wait in them.
//!
//! Wake-ups happen only on the empty -> non-empty edge (and on a refused writer getting
//! room), which the pipes (`ferromq-pipe`) decide lock-free. Toward a socket they write its
//! one eventfd, which is also its ZMQ_FD; toward an engine they append the engine's token to
//! its I/O thread's ready list and wake the `mio::Waker` if the list was empty. Commands for
//! a socket (a pipe attached, a peer identified) go through a channel plus the same eventfd
//! and are processed on each send/recv/events call, like libzmq's `process_commands`.
//!
//! `inproc://` connects two sockets' pipes directly; no thread is involved, and connecting
//! before binding works. The runtime and I/O threads start on first tcp/ipc use.
//!
//! Socket types are thin state machines ([`SocketType::Pair`], `Pub`, `Sub`, `XPub`, `XSub`,
//! `Req`, `Rep`, `Dealer`, `Router`, `Push`, `Pull`) over a shared load balancer and fair queue.
//! `Stream` speaks no ZMTP at all: raw tcp/ipc peers, each chunk read arriving as
//! `[routing id, data]`.
//!
//! # Sending without copying, and copying cheaply
//!
//! [`Socket::send`] takes the body as a [`Bytes`] and never copies it. For borrowed bytes,
//! [`Socket::send_slice`] copies them, as `zmq_send` does, but into buffers the socket recycles
//! (small bodies are cut from a shared slab, large ones reuse buffers whose messages are gone)
//! rather than one allocation per message that another thread then frees.

#![deny(missing_docs)]
#![deny(unreachable_pub)]

mod api;
mod connect;
mod context;
mod error;
mod io;
mod msg;
pub mod option;
mod pattern;
mod runtime;
mod transport;

pub use api::async_socket::AsyncSocket;
pub use api::flags::{Events, RecvFlags, SendFlags, POLLERR, POLLIN, POLLOUT, POLLPRI};
pub use api::multipart::Multipart;
pub use api::poll::{poll, PollItem};
pub use api::proxy::{proxy, proxy_steerable, proxy_steerable_loopback, SocketStats};
pub use api::send_error::SendError;
pub use api::socket::{SendResult, Socket};
pub use bytes::Bytes;
pub use connect::connection_props;
pub use context::Context;
pub use error::{Error, Result, EFSM, EMTHREAD, ENOCOMPATPROTO, ETERM, ZMQ_HAUSNUMERO};
pub use ferromq_zmtp::curve_keys::KeyPair as CurveKeyPair;
pub use ferromq_zmtp::{z85, SocketType};
/// Pooled memory for large bodies, shared with the C ABI crate (`zmq_msg_init_size` bodies).
#[doc(hidden)]
pub use io::body_pool;
pub use io::monitor;
/// Recycled send buffers, shared with the C ABI crate (`zmq_msg_init_size` bodies).
#[doc(hidden)]
pub use io::send_buffers;
/// Narrow reads of a pattern's answer, shared with the C ABI crate (`zmq_msg_recv`).
#[doc(hidden)]
pub use msg::settled;
pub use msg::{Metadata, Msg};

/// Whether this build implements a socket type (the others fail with `EINVAL`).
///
/// ```
/// use ferromq::{has_socket_type, SocketType};
/// assert!(has_socket_type(SocketType::Router));
/// assert!(has_socket_type(SocketType::Stream));
/// ```
pub fn has_socket_type(kind: SocketType) -> bool {
    pattern::is_supported(kind)
}
