//! A STREAM socket's connections (libzmq raw_engine.cpp): no greeting, no handshake, no
//! framing. What the connection layer does differently for them lives here; the engine's
//! side is [`crate::io::framing::Framing::Raw`].

use bytes::Bytes;
use ferromq_zmtp::{Metadata, PeerInfo, SocketType};

use crate::io::peer::SessionPipes;

/// What a raw peer "announced": nothing.
pub(crate) fn peer() -> PeerInfo {
    PeerInfo {
        minor: 0,
        major: 0,
        socket_type: Some(SocketType::Stream),
        routing_id: None,
        metadata: Metadata::new(),
    }
}

/// ZMQ_STREAM_NOTIFY: an empty message tells the socket that the connection came up (written
/// before the engine starts) or went down (written after it ended because of the peer or the
/// network; not when the application closed it). Dropped, as libzmq's would be, when the
/// socket's inbound pipe is at RCVHWM.
pub(crate) fn notify(pipes: &mut SessionPipes) {
    if pipes.to_socket.try_write(Bytes::new(), false).is_ok() {
        pipes.to_socket.flush();
    }
}
