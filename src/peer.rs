//! The two pipes between a socket and one peer (a connection's engine or an inproc socket).
//!
//! ```text
//!   socket side (Peer)                      engine side (SessionPipes)
//!   out: Writer ───── pipe, SNDHWM ─────>   from_socket: Reader
//!   inp: Reader <──── pipe, RCVHWM ──────   to_socket:   Writer
//! ```
//! The socket-side ends wake the socket's eventfd; the engine-side ends wake a [`WakeSlot`]
//! that points at whichever thread owns them now.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_pipe::{pipe, Notify, Reader, Writer};
use ferromq_zmtp::Metadata;

use crate::wake::WakeSlot;

/// Identifies one pipe pair for the lifetime of a context.
pub(crate) type PipeId = u64;

/// The socket's ends of a peer's pipes.
#[derive(Debug)]
pub(crate) struct Peer {
    pub id: PipeId,
    pub out: Writer<Bytes>,
    pub inp: Reader<Bytes>,
    /// What the peer announced in its handshake; `None` until it is known.
    pub metadata: Option<Arc<Metadata>>,
    /// A routing id chosen locally (ZMQ_CONNECT_ROUTING_ID at connect time).
    pub assigned_id: Option<Bytes>,
    /// The routing id a ROUTER knows this peer by; `None` until identified.
    pub routing_id: Option<Bytes>,
}

/// The far ends of a peer's pipes, driven by an engine or an inproc socket.
#[derive(Debug)]
pub(crate) struct SessionPipes {
    pub to_socket: Writer<Bytes>,
    pub from_socket: Reader<Bytes>,
    /// Wakes whoever drives these ends now.
    pub wake: Arc<WakeSlot>,
}

/// Creates the pipes for one peer.
pub(crate) fn pipe_pair(
    id: PipeId,
    socket_wake: Arc<dyn Notify>,
    out_hwm: usize,
    in_hwm: usize,
) -> (Peer, SessionPipes) {
    let wake = WakeSlot::new();
    let far: Arc<dyn Notify> = wake.clone();
    let (out, from_socket) = pipe(out_hwm, Arc::clone(&far), Arc::clone(&socket_wake));
    let (to_socket, inp) = pipe(in_hwm, socket_wake, far);
    let peer = Peer {
        id,
        out,
        inp,
        metadata: None,
        assigned_id: None,
        routing_id: None,
    };
    (
        peer,
        SessionPipes {
            to_socket,
            from_socket,
            wake,
        },
    )
}

impl SessionPipes {
    /// Turns the far ends into a peer of another socket (inproc).
    pub(crate) fn into_peer(self, id: PipeId) -> (Peer, Arc<WakeSlot>) {
        (
            Peer {
                id,
                out: self.to_socket,
                inp: self.from_socket,
                metadata: None,
                assigned_id: None,
                routing_id: None,
            },
            self.wake,
        )
    }
}

/// libzmq adds the two HWMs of an inproc pair when both are set.
pub(crate) fn inproc_hwm(sender_sndhwm: i32, receiver_rcvhwm: i32) -> usize {
    if sender_sndhwm <= 0 || receiver_rcvhwm <= 0 {
        0
    } else {
        usize::try_from(sender_sndhwm)
            .unwrap_or(0)
            .saturating_add(usize::try_from(receiver_rcvhwm).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signaler::Signaler;
    use ferromq_pipe::Read;

    #[test]
    fn frames_cross_both_ways() {
        let sig = Arc::new(Signaler::new().unwrap());
        let (mut peer, mut far) = pipe_pair(1, sig, 10, 10);
        peer.out.try_write(Bytes::from_static(b"a"), false).unwrap();
        peer.out.flush();
        assert!(matches!(far.from_socket.read(), Read::Item { .. }));
        far.to_socket
            .try_write(Bytes::from_static(b"b"), false)
            .unwrap();
        far.to_socket.flush();
        assert!(matches!(peer.inp.read(), Read::Item { .. }));
    }

    #[test]
    fn inproc_hwm_adds_when_both_set() {
        assert_eq!(inproc_hwm(10, 20), 30);
        assert_eq!(inproc_hwm(0, 20), 0);
    }
}
