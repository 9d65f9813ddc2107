//! The two pipes between a socket and one peer (a connection's engine or an inproc socket).
//!
//! ```text
//!   socket side (Peer)                      engine side (SessionPipes)
//!   out: Writer ───── pipe, SNDHWM ─────>   from_socket: Reader
//!   inp: Reader <──── pipe, RCVHWM ──────   to_socket:   Writer
//! ```
//! The socket-side ends wake the socket's eventfd; the engine-side ends wake a [`WakeSlot`]
//! that points at whichever thread owns them now.
//!
//! With ZMQ_CONFLATE (on the socket types libzmq honours it on) a data direction is a
//! conflating pipe instead: no HWM, only the newest message waits.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_pipe::{pipe, pipe_conflate, Notify, Reader, Writer};
use ferromq_zmtp::{Metadata, SocketType};

use crate::io::peer_hwm::{Boost, PeerHwms};
use crate::io::wake::{RoomWake, WakeSlot};
use crate::option::{hwm, Options};

/// Identifies one pipe pair for the lifetime of a context.
pub(crate) type PipeId = u64;

/// The socket's ends of a peer's pipes.
///
/// Laid out so that a message in either direction reads one line of the peer when its state
/// has gone cold (a ROUTER sending to a thousand peers, a thousand DEALERs drained in turn:
/// issue 15): the outbound writer first, which keeps the fields every message touches in its
/// first 64 bytes, and the inbound reader (56 bytes) with the metadata each received message
/// carries on the third line, padded to its start.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Peer {
    pub out: Writer<Bytes>,
    pub id: PipeId,
    /// A routing id chosen locally (ZMQ_CONNECT_ROUTING_ID at connect time).
    pub assigned_id: Option<Bytes>,
    /// Puts `inp` at the start of a line.
    _to_line: u64,
    pub inp: Reader<Bytes>,
    /// What the peer announced in its handshake; `None` until it is known.
    pub metadata: Option<Arc<Metadata>>,
    /// The routing id a ROUTER knows this peer by; `None` until identified.
    pub routing_id: Option<Bytes>,
    /// Handles on both pipes' HWMs, for options set after the peer attached.
    pub hwms: PeerHwms,
}

/// The far ends of a peer's pipes, driven by an engine or an inproc socket.
#[derive(Debug)]
pub(crate) struct SessionPipes {
    pub to_socket: Writer<Bytes>,
    pub from_socket: Reader<Bytes>,
    /// Wakes whoever drives these ends now.
    pub wake: Arc<WakeSlot>,
}

/// How one direction of a peer's pipes holds messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// A queue of at most this many messages (0 = unlimited).
    Queue(usize),
    /// ZMQ_CONFLATE: only the newest message, no HWM.
    Conflate,
}

impl Flow {
    fn pipe(
        self,
        reader_wake: Arc<dyn Notify>,
        writer_wake: Arc<dyn Notify>,
    ) -> (Writer<Bytes>, Reader<Bytes>) {
        match self {
            Flow::Queue(hwm) => pipe(hwm, reader_wake, writer_wake),
            Flow::Conflate => pipe_conflate(reader_wake, writer_wake),
        }
    }
}

/// The (outbound, inbound) flows of a socket's peer pipes.
pub(crate) fn flows(kind: SocketType, options: &Options) -> (Flow, Flow) {
    options
        .conflate
        .then(|| conflate_flows(kind))
        .flatten()
        .unwrap_or((
            Flow::Queue(hwm(options.sndhwm)),
            Flow::Queue(hwm(options.rcvhwm)),
        ))
}

/// The (outbound, inbound) flows of a socket with ZMQ_CONFLATE set; `None` where the option
/// has no effect.
///
/// libzmq (`get_effective_conflate_option`) honours ZMQ_CONFLATE on DEALER, PULL, PUSH, PUB and
/// SUB only, and then conflates both directions with no HWM. Here the direction that carries
/// subscriptions (SUB -> PUB) stays a queue, unlimited as libzmq's conflated HWM is: conflating
/// it would keep only the last of several subscriptions sent together (a resubscription after
/// a reconnect sends them all at once), which libzmq does and no application wants.
pub(crate) fn conflate_flows(kind: SocketType) -> Option<(Flow, Flow)> {
    match kind {
        SocketType::Dealer | SocketType::Pull | SocketType::Push => {
            Some((Flow::Conflate, Flow::Conflate))
        }
        SocketType::Pub => Some((Flow::Conflate, Flow::Queue(0))),
        SocketType::Sub => Some((Flow::Queue(0), Flow::Conflate)),
        _ => None,
    }
}

/// Creates the pipes for one peer of a socket of type `kind`, as its options say.
pub(crate) fn socket_pipes(
    id: PipeId,
    socket_wake: Arc<dyn Notify>,
    kind: SocketType,
    options: &Options,
) -> (Peer, SessionPipes) {
    let (out, inp) = flows(kind, options);
    peer_pipes(id, socket_wake, out, inp)
}

/// Creates the queue pipes for one peer.
pub(crate) fn pipe_pair(
    id: PipeId,
    socket_wake: Arc<dyn Notify>,
    out_hwm: usize,
    in_hwm: usize,
) -> (Peer, SessionPipes) {
    peer_pipes(id, socket_wake, Flow::Queue(out_hwm), Flow::Queue(in_hwm))
}

/// Creates the pipes for one peer, each direction as given.
pub(crate) fn peer_pipes(
    id: PipeId,
    socket_wake: Arc<dyn Notify>,
    out_flow: Flow,
    in_flow: Flow,
) -> (Peer, SessionPipes) {
    let wake = WakeSlot::new();
    let far: Arc<dyn Notify> = wake.clone();
    let far_room: Arc<dyn Notify> = Arc::new(RoomWake(Arc::clone(&wake)));
    let (out, from_socket) = out_flow.pipe(far, Arc::clone(&socket_wake));
    let (to_socket, inp) = in_flow.pipe(socket_wake, far_room);
    let hwms = PeerHwms {
        out: out.hwm(),
        inp: inp.hwm(),
        boost: None,
    };
    let peer = Peer {
        id,
        out,
        inp,
        metadata: None,
        assigned_id: None,
        _to_line: 0,
        routing_id: None,
        hwms,
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
    /// Turns the far ends into a peer of another socket (inproc); `boost` holds the
    /// connecting socket's share of the pipes' HWMs.
    pub(crate) fn into_peer(self, id: PipeId, boost: Arc<Boost>) -> (Peer, Arc<WakeSlot>) {
        let hwms = PeerHwms {
            out: self.to_socket.hwm(),
            inp: self.from_socket.hwm(),
            boost: Some(boost),
        };
        (
            Peer {
                id,
                out: self.to_socket,
                inp: self.from_socket,
                metadata: None,
                assigned_id: None,
                _to_line: 0,
                routing_id: None,
                hwms,
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
    use crate::io::signaler::Signaler;
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
    fn conflate_applies_to_the_types_libzmq_applies_it_to() {
        let mut options = Options {
            sndhwm: 7,
            rcvhwm: 9,
            ..Options::default()
        };
        let queues = (Flow::Queue(7), Flow::Queue(9));
        assert_eq!(flows(SocketType::Push, &options), queues);
        options.conflate = true;
        for kind in [SocketType::Dealer, SocketType::Pull, SocketType::Push] {
            assert_eq!(flows(kind, &options), (Flow::Conflate, Flow::Conflate));
        }
        assert_eq!(
            flows(SocketType::Pub, &options),
            (Flow::Conflate, Flow::Queue(0))
        );
        assert_eq!(
            flows(SocketType::Sub, &options),
            (Flow::Queue(0), Flow::Conflate)
        );
        for kind in [
            SocketType::Pair,
            SocketType::Req,
            SocketType::Rep,
            SocketType::Router,
            SocketType::XPub,
            SocketType::XSub,
        ] {
            assert_eq!(flows(kind, &options), queues, "{kind:?}");
        }
    }

    #[test]
    fn conflating_pipes_keep_the_newest_both_ways() {
        let sig = Arc::new(Signaler::new().unwrap());
        let (mut peer, mut far) = peer_pipes(1, sig, Flow::Conflate, Flow::Conflate);
        for body in [&b"old"[..], b"new"] {
            peer.out.try_write(Bytes::from(body), false).unwrap();
            peer.out.flush();
            far.to_socket.try_write(Bytes::from(body), false).unwrap();
            far.to_socket.flush();
        }
        for read in [far.from_socket.read(), peer.inp.read()] {
            assert_eq!(
                read,
                Read::Item {
                    item: Bytes::from_static(b"new"),
                    more: false
                }
            );
        }
        assert_eq!(peer.inp.read(), Read::Empty);
    }

    /// A receive reads the reader and the metadata, a send the writer's first 64 bytes: one
    /// line each (issue 15).
    #[test]
    fn each_direction_reads_one_line_of_a_peer() {
        use std::mem::{offset_of, size_of};
        assert_eq!(offset_of!(Peer, out), 0);
        assert_eq!(offset_of!(Peer, inp), 128);
        assert!(offset_of!(Peer, metadata) + size_of::<Option<Arc<Metadata>>>() <= 192);
        // No bigger than before the padding (idle connections' memory).
        assert_eq!(size_of::<Peer>(), 256);
    }

    #[test]
    fn inproc_hwm_adds_when_both_set() {
        assert_eq!(inproc_hwm(10, 20), 30);
        assert_eq!(inproc_hwm(0, 20), 0);
    }
}
