//! The properties libzmq adds to every message from a tcp or ipc connection, ahead of what the
//! peer announced: `Peer-Address` (the peer's numeric IP; `localhost` for ipc, as getnameinfo
//! names a Unix socket) and the private `__fd` behind `zmq_msg_get (msg, ZMQ_SRCFD)`. Ours come
//! first, so a peer announcing a property of the same name cannot override them (libzmq's map
//! keeps the first insertion too).
//!
//! ```
//! use ferromq::connection_props::PEER_ADDRESS_PROPERTY;
//! use ferromq::{Context, RecvFlags, SendFlags, SocketType};
//! let ctx = Context::new();
//! let mut pull = ctx.socket(SocketType::Pull)?;
//! pull.bind("tcp://127.0.0.1:*")?;
//! let mut push = ctx.socket(SocketType::Push)?;
//! push.connect(&pull.last_endpoint()?)?;
//! push.send("x", SendFlags::empty())?;
//! let msg = pull.recv_multipart(RecvFlags::empty())?;
//! let address = msg.metadata().and_then(|m| m.get(PEER_ADDRESS_PROPERTY));
//! assert_eq!(address.map(|a| &a[..]), Some(&b"127.0.0.1"[..]));
//! # Ok::<(), ferromq::Error>(())
//! ```

use std::sync::Arc;

use ferromq_zmtp::Metadata;

use crate::connect::connection::stream_fd;
use crate::io::stream::AsyncStream;

/// The name `zmq_msg_get (ZMQ_SRCFD)` looks up, as in libzmq.
pub const SRCFD_PROPERTY: &str = "__fd";
/// The peer's address, a documented `zmq_msg_gets` property.
pub const PEER_ADDRESS_PROPERTY: &str = "Peer-Address";

/// The metadata messages from this connection carry: ours, then the peer's.
pub(crate) fn connection_metadata(peer: Metadata, stream: &AsyncStream) -> Arc<Metadata> {
    let address = match stream {
        AsyncStream::Tcp(s) => s.peer_addr().ok().map(|a| a.ip().to_string()),
        AsyncStream::Unix(_) => Some("localhost".to_owned()),
    };
    // libzmq adds neither property when it cannot name the peer.
    let Some(address) = address else {
        return Arc::new(peer);
    };
    let mut metadata = Metadata::new();
    let ours = metadata
        .insert(PEER_ADDRESS_PROPERTY, address)
        .and_then(|()| metadata.insert(SRCFD_PROPERTY, stream_fd(stream).to_string()));
    if ours.is_err() {
        return Arc::new(peer);
    }
    for (name, value) in peer.iter() {
        // Names were validated when the peer's READY was decoded; the insert cannot fail.
        let _ = metadata.insert(name, value.clone());
    }
    Arc::new(metadata)
}
