//! Socket-type state machines. Each type is a page over two shared strategies, the
//! [`lb::LoadBalancer`] (outgoing, round robin over peers with room) and the
//! [`fq::FairQueue`] (incoming, round robin over peers with a message), as libzmq's
//! src/lb.cpp and src/fq.cpp. A pattern owns its peers' socket-side pipe ends and never
//! blocks: it answers `Again` and the socket waits on its eventfd.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::{Metadata, SocketType};

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::io::send_buffers::SendBuffers;
use crate::msg::Msg;
use crate::option::Options;
use peer_set::PeerSet;

mod dealer;
mod fq;
mod id_hash;
mod lb;
pub(crate) mod mailbox;
mod pair;
mod peer_set;
mod pub_;
mod pull;
mod push;
mod rep;
mod req;
mod router;
mod routing_ids;
mod stream;
mod sub;
mod xpub;
mod xsub;

/// A refused send gives the frame back so the caller can retry it.
pub(crate) type SendResult = std::result::Result<(), (Error, Bytes)>;

/// A frame on its way into a pattern: one the caller made (`Bytes`), or bytes it lends
/// ([`Lent`]) that are copied only if the pattern keeps them.
pub(crate) trait OutFrame {
    /// The frame's bytes, to look at.
    fn bytes(&self) -> &[u8];
    /// The frame itself, to keep or pass on.
    fn into_bytes(self) -> Bytes;
}

impl OutFrame for Bytes {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn into_bytes(self) -> Bytes {
        self
    }
}

/// The caller's bytes (`zmq_send`, `Socket::send_slice`), copied into the socket's send
/// buffers only when a pattern keeps them. ROUTER only looks up a routing id frame, and PUB
/// drops a frame nobody subscribed to: for those the copy, and the count its buffer keeps of
/// its messages (+1 when cut, -1 when dropped, two atomic read-modify-writes), are not made
/// at all (issue 18).
pub(crate) struct Lent<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) buffers: &'a mut SendBuffers,
}

impl OutFrame for Lent<'_> {
    fn bytes(&self) -> &[u8] {
        self.data
    }
    fn into_bytes(self) -> Bytes {
        self.buffers.copy(self.data)
    }
}

/// The behaviour of one socket type.
pub(crate) trait Pattern: Send {
    /// A peer's pipes arrived.
    fn attach(&mut self, peer: Peer, options: &Options);
    /// A peer's handshake finished; `metadata` holds what it announced.
    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, options: &Options);
    /// Drops a peer (disconnect / unbind).
    fn detach(&mut self, id: PipeId);
    /// The peer's pipes woke the socket (a message arrived in an empty pipe, a full one has
    /// room, or the far end closed): it takes part in the round robins again.
    fn activate(&mut self, id: PipeId);
    /// The HWMs changed (ZMQ_SNDHWM after connect): a peer refused before may have room now
    /// without its pipe saying so. Patterns that load-balance put every peer back among their
    /// writers; the others never set a peer aside for being full.
    fn hwm_changed(&mut self) {}
    /// Sends one frame; `more` says the message goes on.
    fn send(&mut self, frame: Bytes, more: bool, options: &Options) -> SendResult;
    /// [`Pattern::send`] of lent bytes; a refused frame comes back copied. Patterns that keep
    /// every frame they take need not say more than this.
    fn send_lent(&mut self, frame: Lent<'_>, more: bool, options: &Options) -> SendResult {
        self.send(frame.into_bytes(), more, options)
    }
    /// Receives one frame, `Again` when none is ready. The frame's metadata goes to
    /// `metadata`, not into the returned message (whose `metadata` is `None`): `metadata`
    /// holds the previous frame's, and a frame from the same connection leaves it as it is
    /// (see [`note_metadata`]).
    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg>;
    /// [`Pattern::recv_frame`] with the metadata in the message, for the patterns' tests.
    #[cfg(test)]
    fn recv(&mut self) -> Result<Msg> {
        let mut metadata = None;
        let mut msg = self.recv_frame(&mut metadata)?;
        msg.metadata = metadata;
        Ok(msg)
    }
    /// Whether `recv` would succeed now.
    fn has_in(&mut self) -> bool;
    /// Whether `send` would succeed now.
    fn has_out(&mut self) -> bool;
    /// Sets an option only this socket type knows (ZMQ_SUBSCRIBE, XPUB_*, REQ_*);
    /// `None` hands it on to the common options.
    fn set_option(&mut self, _option: i32, _value: &[u8]) -> Option<Result<()>> {
        None
    }
    /// Reads an option only this socket type answers (STREAM's generated routing id);
    /// `None` hands it to the option table.
    fn get_option(&self, _option: i32, _out: &mut [u8]) -> Option<Result<usize>> {
        None
    }
}

/// The pattern for a socket type, or `Invalid` for types not built yet.
pub(crate) fn for_type(kind: SocketType) -> Result<Box<dyn Pattern>> {
    Ok(match kind {
        SocketType::Pair => Box::new(pair::Pair::default()),
        SocketType::Dealer => Box::new(dealer::Dealer::default()),
        SocketType::Router => Box::new(router::Router::new()),
        SocketType::Push => Box::new(push::Push::default()),
        SocketType::Pull => Box::new(pull::Pull::default()),
        SocketType::Pub => Box::new(pub_::new()),
        SocketType::XPub => Box::new(xpub::Xpub::new(xpub::Role::Xpub)),
        SocketType::Sub => Box::new(sub::new()),
        SocketType::XSub => Box::new(xsub::Xsub::new(xsub::Role::Xsub)),
        SocketType::Req => Box::new(req::Req::new()),
        SocketType::Rep => Box::new(rep::Rep::default()),
        SocketType::Stream => Box::new(stream::Stream::new()),
        _ => return Err(Error::Invalid),
    })
}

/// Whether a socket type is implemented.
pub(crate) fn is_supported(kind: SocketType) -> bool {
    matches!(
        kind,
        SocketType::Pair
            | SocketType::Dealer
            | SocketType::Router
            | SocketType::Push
            | SocketType::Pull
            | SocketType::Pub
            | SocketType::XPub
            | SocketType::Sub
            | SocketType::XSub
            | SocketType::Req
            | SocketType::Rep
            | SocketType::Stream
    )
}

/// What a peer announced when it joined, and whether its messages carry it.
#[derive(Debug, Clone)]
pub(crate) struct PeerMetadata {
    /// Socket-Type, Identity and, over tcp and ipc, the connection's own properties
    /// (Peer-Address, ZAP's User-Id and metadata, ...).
    pub announced: Arc<Metadata>,
    /// What a ROUTER knows the peer by, unless it assigns one (`None`: generate one). Not
    /// always `announced`'s `Identity`: where a ZAP handler names one too, a lookup finds the
    /// handler's while the routing id is the one libzmq parsed last (`PeerInfo::routing_id`).
    pub routing_id: Option<Bytes>,
    /// Whether the peer's messages carry `announced` as their properties (`Msg::metadata`,
    /// `zmq_msg_gets`). tcp and ipc messages do. inproc messages do not: libzmq attaches no
    /// metadata to them (`zmq_msg_gets (&m, "Socket-Type")` is NULL, EINVAL), and a shared
    /// `Arc` on every message costs two atomic read-modify-writes (clone and drop), each a
    /// locked instruction on x86 (issue 15).
    pub on_messages: bool,
}

impl PeerMetadata {
    /// A tcp or ipc peer's: its messages carry it.
    pub(crate) fn of_connection(announced: Arc<Metadata>, routing_id: Option<Bytes>) -> Self {
        PeerMetadata {
            announced,
            routing_id,
            on_messages: true,
        }
    }

    /// An inproc peer's: for the patterns only.
    pub(crate) fn of_inproc(announced: Arc<Metadata>, routing_id: Option<Bytes>) -> Self {
        PeerMetadata {
            announced,
            routing_id,
            on_messages: false,
        }
    }

    /// What the peer's messages carry.
    pub(crate) fn properties(self) -> Option<Arc<Metadata>> {
        self.on_messages.then_some(self.announced)
    }
}

/// Leaves `of`, the metadata of the peer a frame came from, in `slot`, which holds the
/// previous frame's: a new count only when they differ. Counting every frame (an atomic
/// increment here, its decrement when the C layer's message moves on) cost a fifth of a tcp
/// receive through `zmq_msg_recv` (issue 18): each locked instruction waits for the stores
/// before it, some of them to lines the I/O thread had just written.
#[inline]
pub(crate) fn note_metadata(slot: &mut Option<Arc<Metadata>>, of: &Option<Arc<Metadata>>) {
    if slot.as_ref().map(Arc::as_ptr) != of.as_ref().map(Arc::as_ptr) {
        *slot = of.clone();
    }
}

/// Stores what a peer's messages carry (every pattern but ROUTER and XSUB needs nothing
/// more).
pub(crate) fn set_metadata(peers: &mut PeerSet, id: PipeId, metadata: PeerMetadata) {
    if let Some(p) = peers.get_mut(id) {
        p.metadata = metadata.properties();
    }
}
